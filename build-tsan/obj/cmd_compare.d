build-tsan/obj/cmd_compare.o: src/cmd_compare.c src/cmd.h \
 include/kgate/check.h include/kgate/config.h include/kgate/util.h \
 include/kgate/output.h include/kgate/gate.h include/kgate/kgate.h \
 include/kgate/store.h include/kgate/verdict.h include/kgate/confirm.h \
 include/kgate/ghevent.h include/kgate/git.h include/kgate/opt.h \
 include/kgate/runner.h include/kgate/suiterun.h include/kgate/gpustate.h
src/cmd.h:
include/kgate/check.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/output.h:
include/kgate/gate.h:
include/kgate/kgate.h:
include/kgate/store.h:
include/kgate/verdict.h:
include/kgate/confirm.h:
include/kgate/ghevent.h:
include/kgate/git.h:
include/kgate/opt.h:
include/kgate/runner.h:
include/kgate/suiterun.h:
include/kgate/gpustate.h:
