build-tsan/obj/cmd_stats.o: src/cmd_stats.c src/cmd.h \
 include/kgate/escape.h include/kgate/ghevent.h include/kgate/gpustate.h \
 include/kgate/kgate.h include/kgate/nccl.h include/kgate/opt.h \
 include/kgate/stats.h include/kgate/check.h include/kgate/config.h \
 include/kgate/util.h include/kgate/output.h include/kgate/gate.h \
 include/kgate/store.h include/kgate/verdict.h
src/cmd.h:
include/kgate/escape.h:
include/kgate/ghevent.h:
include/kgate/gpustate.h:
include/kgate/kgate.h:
include/kgate/nccl.h:
include/kgate/opt.h:
include/kgate/stats.h:
include/kgate/check.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/output.h:
include/kgate/gate.h:
include/kgate/store.h:
include/kgate/verdict.h:
