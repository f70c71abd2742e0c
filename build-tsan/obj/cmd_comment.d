build-tsan/obj/cmd_comment.o: src/cmd_comment.c src/cmd.h \
 include/kgate/check.h include/kgate/config.h include/kgate/util.h \
 include/kgate/output.h include/kgate/gate.h include/kgate/kgate.h \
 include/kgate/store.h include/kgate/verdict.h include/kgate/ghevent.h \
 include/kgate/git.h include/kgate/github.h include/kgate/opt.h \
 include/kgate/report.h include/kgate/changepoint.h \
 include/kgate/explain.h
src/cmd.h:
include/kgate/check.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/output.h:
include/kgate/gate.h:
include/kgate/kgate.h:
include/kgate/store.h:
include/kgate/verdict.h:
include/kgate/ghevent.h:
include/kgate/git.h:
include/kgate/github.h:
include/kgate/opt.h:
include/kgate/report.h:
include/kgate/changepoint.h:
include/kgate/explain.h:
