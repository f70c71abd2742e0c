build-tsan/obj/store_shared.o: src/store_shared.c src/store_shared.h \
 include/kgate/store.h include/kgate/kgate.h include/kgate/verdict.h \
 include/kgate/config.h include/kgate/util.h
src/store_shared.h:
include/kgate/store.h:
include/kgate/kgate.h:
include/kgate/verdict.h:
include/kgate/config.h:
include/kgate/util.h:
