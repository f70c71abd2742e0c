build-tsan/obj/runcopy.o: src/runcopy.c include/kgate/runcopy.h \
 include/kgate/store.h include/kgate/kgate.h include/kgate/verdict.h \
 include/kgate/config.h include/kgate/util.h
include/kgate/runcopy.h:
include/kgate/store.h:
include/kgate/kgate.h:
include/kgate/verdict.h:
include/kgate/config.h:
include/kgate/util.h:
