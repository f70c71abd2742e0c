build-tsan/obj/cmd_bisect.o: src/cmd_bisect.c src/cmd.h \
 include/kgate/escape.h include/kgate/check.h include/kgate/config.h \
 include/kgate/util.h include/kgate/output.h include/kgate/gate.h \
 include/kgate/kgate.h include/kgate/store.h include/kgate/verdict.h \
 include/kgate/git.h include/kgate/opt.h include/kgate/stats.h
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
include/kgate/git.h:
include/kgate/opt.h:
include/kgate/stats.h:
