build-tsan/obj/git.o: src/git.c include/kgate/git.h include/kgate/util.h
include/kgate/git.h:
include/kgate/util.h:
