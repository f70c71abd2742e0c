build-tsan/obj/confirm.o: src/confirm.c include/kgate/confirm.h \
 include/kgate/config.h include/kgate/util.h include/kgate/gate.h \
 include/kgate/kgate.h include/kgate/store.h include/kgate/verdict.h
include/kgate/confirm.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/gate.h:
include/kgate/kgate.h:
include/kgate/store.h:
include/kgate/verdict.h:
