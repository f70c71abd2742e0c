build-tsan/obj/jtok.o: src/jtok.c include/kgate/jtok.h \
 include/kgate/util.h
include/kgate/jtok.h:
include/kgate/util.h:
