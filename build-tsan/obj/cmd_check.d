build-tsan/obj/cmd_check.o: src/cmd_check.c src/cmd.h \
 include/kgate/check.h include/kgate/config.h include/kgate/util.h \
 include/kgate/output.h include/kgate/gate.h include/kgate/kgate.h \
 include/kgate/store.h include/kgate/verdict.h include/kgate/opt.h
src/cmd.h:
include/kgate/check.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/output.h:
include/kgate/gate.h:
include/kgate/kgate.h:
include/kgate/store.h:
include/kgate/verdict.h:
include/kgate/opt.h:
