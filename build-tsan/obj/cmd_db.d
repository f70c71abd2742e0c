build-tsan/obj/cmd_db.o: src/cmd_db.c src/cmd.h include/kgate/kgate.h \
 include/kgate/opt.h include/kgate/runcopy.h include/kgate/store.h \
 include/kgate/verdict.h include/kgate/config.h include/kgate/util.h
src/cmd.h:
include/kgate/kgate.h:
include/kgate/opt.h:
include/kgate/runcopy.h:
include/kgate/store.h:
include/kgate/verdict.h:
include/kgate/config.h:
include/kgate/util.h:
