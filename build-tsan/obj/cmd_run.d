build-tsan/obj/cmd_run.o: src/cmd_run.c src/cmd.h include/kgate/config.h \
 include/kgate/util.h include/kgate/ghevent.h include/kgate/git.h \
 include/kgate/kgate.h include/kgate/opt.h include/kgate/runner.h \
 include/kgate/shard.h include/kgate/store.h include/kgate/verdict.h \
 include/kgate/suiterun.h include/kgate/gpustate.h
src/cmd.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/ghevent.h:
include/kgate/git.h:
include/kgate/kgate.h:
include/kgate/opt.h:
include/kgate/runner.h:
include/kgate/shard.h:
include/kgate/store.h:
include/kgate/verdict.h:
include/kgate/suiterun.h:
include/kgate/gpustate.h:
