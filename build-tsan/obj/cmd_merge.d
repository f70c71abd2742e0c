build-tsan/obj/cmd_merge.o: src/cmd_merge.c src/cmd.h \
 include/kgate/config.h include/kgate/util.h include/kgate/ghevent.h \
 include/kgate/git.h include/kgate/kgate.h include/kgate/opt.h \
 include/kgate/shard.h include/kgate/store.h include/kgate/verdict.h
src/cmd.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/ghevent.h:
include/kgate/git.h:
include/kgate/kgate.h:
include/kgate/opt.h:
include/kgate/shard.h:
include/kgate/store.h:
include/kgate/verdict.h:
