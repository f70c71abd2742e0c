build-tsan/obj/gate.o: src/gate.c include/kgate/gate.h \
 include/kgate/config.h include/kgate/util.h include/kgate/kgate.h \
 include/kgate/store.h include/kgate/verdict.h include/kgate/metric.h \
 include/kgate/stats.h
include/kgate/gate.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/kgate.h:
include/kgate/store.h:
include/kgate/verdict.h:
include/kgate/metric.h:
include/kgate/stats.h:
