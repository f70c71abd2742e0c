build-tsan/obj/output.o: src/output.c include/kgate/escape.h \
 include/kgate/nccl.h include/kgate/ranks.h include/kgate/gate.h \
 include/kgate/config.h include/kgate/util.h include/kgate/kgate.h \
 include/kgate/store.h include/kgate/verdict.h include/kgate/explain.h \
 include/kgate/github.h include/kgate/metric.h include/kgate/output.h
include/kgate/escape.h:
include/kgate/nccl.h:
include/kgate/ranks.h:
include/kgate/gate.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/kgate.h:
include/kgate/store.h:
include/kgate/verdict.h:
include/kgate/explain.h:
include/kgate/github.h:
include/kgate/metric.h:
include/kgate/output.h:
