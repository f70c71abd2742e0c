build-tsan/obj/cmd_explain.o: src/cmd_explain.c src/cmd.h \
 include/kgate/escape.h include/kgate/check.h include/kgate/config.h \
 include/kgate/util.h include/kgate/output.h include/kgate/gate.h \
 include/kgate/kgate.h include/kgate/store.h include/kgate/verdict.h \
 include/kgate/records_format.h include/kgate/explain.h \
 include/kgate/opt.h include/kgate/runner.h include/kgate/suiterun.h \
 include/kgate/gpustate.h
src/cmd.h:
include/kgate/escape.h:
include/kgate/check.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/output.h:
include/kgate/gate.h:
include/kgate/kgate.h:
include/kgate/store.h:
include/kgate/verdict.h:
include/kgate/records_format.h:
include/kgate/explain.h:
include/kgate/opt.h:
include/kgate/runner.h:
include/kgate/suiterun.h:
include/kgate/gpustate.h:
