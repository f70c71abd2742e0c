build-tsan/obj/ghevent.o: src/ghevent.c include/kgate/ghevent.h \
 include/kgate/git.h include/kgate/util.h
include/kgate/ghevent.h:
include/kgate/git.h:
include/kgate/util.h:
