build-tsan/obj/cmd_report.o: src/cmd_report.c src/cmd.h \
 include/kgate/config.h include/kgate/util.h include/kgate/http.h \
 include/kgate/kgate.h include/kgate/opt.h include/kgate/report.h \
 include/kgate/changepoint.h include/kgate/explain.h \
 include/kgate/store.h include/kgate/verdict.h
src/cmd.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/http.h:
include/kgate/kgate.h:
include/kgate/opt.h:
include/kgate/report.h:
include/kgate/changepoint.h:
include/kgate/explain.h:
include/kgate/store.h:
include/kgate/verdict.h:
