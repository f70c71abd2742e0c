build-tsan/obj/points.o: src/points.c include/kgate/points.h \
 include/kgate/util.h
include/kgate/points.h:
include/kgate/util.h:
