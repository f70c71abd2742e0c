build-tsan/obj/check.o: src/check.c include/kgate/check.h \
 include/kgate/config.h include/kgate/util.h include/kgate/output.h \
 include/kgate/gate.h include/kgate/kgate.h include/kgate/store.h \
 include/kgate/verdict.h include/kgate/kname.h include/kgate/confirm.h \
 include/kgate/explain.h include/kgate/ghevent.h include/kgate/git.h \
 include/kgate/gpustate.h include/kgate/shard.h include/kgate/stats.h
include/kgate/check.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/output.h:
include/kgate/gate.h:
include/kgate/kgate.h:
include/kgate/store.h:
include/kgate/verdict.h:
include/kgate/kname.h:
include/kgate/confirm.h:
include/kgate/explain.h:
include/kgate/ghevent.h:
include/kgate/git.h:
include/kgate/gpustate.h:
include/kgate/shard.h:
include/kgate/stats.h:
