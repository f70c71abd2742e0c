build-tsan/obj/escape.o: src/escape.c include/kgate/escape.h \
 include/kgate/util.h
include/kgate/escape.h:
include/kgate/util.h:
