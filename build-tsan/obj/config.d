build-tsan/obj/config.o: src/config.c include/kgate/config.h \
 include/kgate/util.h include/kgate/demangle.h include/kgate/kgate.h \
 include/kgate/metric.h include/kgate/metricinfo.h
include/kgate/config.h:
include/kgate/util.h:
include/kgate/demangle.h:
include/kgate/kgate.h:
include/kgate/metric.h:
include/kgate/metricinfo.h:
