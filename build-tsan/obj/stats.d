build-tsan/obj/stats.o: src/stats.c include/kgate/stats.h \
 include/kgate/util.h
include/kgate/stats.h:
include/kgate/util.h:
