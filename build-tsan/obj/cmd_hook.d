build-tsan/obj/cmd_hook.o: src/cmd_hook.c src/cmd.h include/kgate/git.h \
 include/kgate/kgate.h include/kgate/opt.h include/kgate/util.h
src/cmd.h:
include/kgate/git.h:
include/kgate/kgate.h:
include/kgate/opt.h:
include/kgate/util.h:
