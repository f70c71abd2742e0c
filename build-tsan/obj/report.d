build-tsan/obj/report.o: src/report.c include/kgate/check.h \
 include/kgate/config.h include/kgate/util.h include/kgate/output.h \
 include/kgate/gate.h include/kgate/kgate.h include/kgate/store.h \
 include/kgate/verdict.h include/kgate/escape.h include/kgate/report.h \
 include/kgate/changepoint.h include/kgate/explain.h \
 include/kgate/github.h include/kgate/gpustate.h include/kgate/metric.h \
 include/kgate/points.h src/report_js.h
include/kgate/check.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/output.h:
include/kgate/gate.h:
include/kgate/kgate.h:
include/kgate/store.h:
include/kgate/verdict.h:
include/kgate/escape.h:
include/kgate/report.h:
include/kgate/changepoint.h:
include/kgate/explain.h:
include/kgate/github.h:
include/kgate/gpustate.h:
include/kgate/metric.h:
include/kgate/points.h:
src/report_js.h:
