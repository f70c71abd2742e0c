build-tsan/obj/cmd_ingest.o: src/cmd_ingest.c src/cmd.h \
 include/kgate/ghevent.h include/kgate/git.h include/kgate/import.h \
 include/kgate/store.h include/kgate/kgate.h include/kgate/verdict.h \
 include/kgate/config.h include/kgate/util.h include/kgate/opt.h
src/cmd.h:
include/kgate/ghevent.h:
include/kgate/git.h:
include/kgate/import.h:
include/kgate/store.h:
include/kgate/kgate.h:
include/kgate/verdict.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/opt.h:
