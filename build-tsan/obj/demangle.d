build-tsan/obj/demangle.o: src/demangle.c include/kgate/demangle.h \
 include/kgate/util.h
include/kgate/demangle.h:
include/kgate/util.h:
