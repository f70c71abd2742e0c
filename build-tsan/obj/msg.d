build-tsan/obj/msg.o: src/msg.c include/kgate/escape.h \
 include/kgate/util.h
include/kgate/escape.h:
include/kgate/util.h:
