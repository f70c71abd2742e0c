build-tsan/obj/metric.o: src/metric.c include/kgate/metric.h \
 include/kgate/util.h
include/kgate/metric.h:
include/kgate/util.h:
