build-tsan/obj/ranks.o: src/ranks.c include/kgate/ranks.h \
 include/kgate/gate.h include/kgate/config.h include/kgate/util.h \
 include/kgate/kgate.h include/kgate/store.h include/kgate/verdict.h
include/kgate/ranks.h:
include/kgate/gate.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/kgate.h:
include/kgate/store.h:
include/kgate/verdict.h:
