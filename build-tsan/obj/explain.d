build-tsan/obj/explain.o: src/explain.c include/kgate/escape.h \
 include/kgate/explain.h include/kgate/store.h include/kgate/kgate.h \
 include/kgate/verdict.h include/kgate/config.h include/kgate/util.h \
 include/kgate/gate.h include/kgate/metric.h include/kgate/stats.h
include/kgate/escape.h:
include/kgate/explain.h:
include/kgate/store.h:
include/kgate/kgate.h:
include/kgate/verdict.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/gate.h:
include/kgate/metric.h:
include/kgate/stats.h:
