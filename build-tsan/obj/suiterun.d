build-tsan/obj/suiterun.o: src/suiterun.c include/kgate/escape.h \
 include/kgate/suiterun.h include/kgate/config.h include/kgate/util.h \
 include/kgate/gpustate.h include/kgate/store.h include/kgate/kgate.h \
 include/kgate/verdict.h include/kgate/import.h include/kgate/ranks.h \
 include/kgate/gate.h include/kgate/records_format.h \
 include/kgate/runner.h
include/kgate/escape.h:
include/kgate/suiterun.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/gpustate.h:
include/kgate/store.h:
include/kgate/kgate.h:
include/kgate/verdict.h:
include/kgate/import.h:
include/kgate/ranks.h:
include/kgate/gate.h:
include/kgate/records_format.h:
include/kgate/runner.h:
