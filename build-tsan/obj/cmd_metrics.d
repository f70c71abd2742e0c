build-tsan/obj/cmd_metrics.o: src/cmd_metrics.c src/cmd.h \
 include/kgate/kgate.h include/kgate/opt.h include/kgate/metric.h \
 include/kgate/metricinfo.h include/kgate/util.h include/kgate/store.h \
 include/kgate/verdict.h include/kgate/config.h
src/cmd.h:
include/kgate/kgate.h:
include/kgate/opt.h:
include/kgate/metric.h:
include/kgate/metricinfo.h:
include/kgate/util.h:
include/kgate/store.h:
include/kgate/verdict.h:
include/kgate/config.h:
