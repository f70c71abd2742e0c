build-tsan/obj/records.o: src/records.c include/kgate/records.h \
 include/kgate/import.h include/kgate/store.h include/kgate/kgate.h \
 include/kgate/verdict.h include/kgate/config.h include/kgate/util.h \
 include/kgate/demangle.h include/kgate/jtok.h \
 include/kgate/records_format.h include/kgate/metric.h
include/kgate/records.h:
include/kgate/import.h:
include/kgate/store.h:
include/kgate/kgate.h:
include/kgate/verdict.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/demangle.h:
include/kgate/jtok.h:
include/kgate/records_format.h:
include/kgate/metric.h:
