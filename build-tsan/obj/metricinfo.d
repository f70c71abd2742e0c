build-tsan/obj/metricinfo.o: src/metricinfo.c include/kgate/metricinfo.h \
 include/kgate/util.h include/kgate/records_format.h
include/kgate/metricinfo.h:
include/kgate/util.h:
include/kgate/records_format.h:
