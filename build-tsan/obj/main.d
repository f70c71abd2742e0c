build-tsan/obj/main.o: src/main.c src/cmd.h include/kgate/kgate.h \
 include/kgate/metricinfo.h include/kgate/util.h include/kgate/opt.h
src/cmd.h:
include/kgate/kgate.h:
include/kgate/metricinfo.h:
include/kgate/util.h:
include/kgate/opt.h:
