build-tsan/obj/store_pg.o: src/store_pg.c src/store_backend.h \
 include/kgate/store.h include/kgate/kgate.h include/kgate/verdict.h \
 include/kgate/config.h include/kgate/util.h src/store_shared.h \
 include/kgate/metric.h include/kgate/points.h
src/store_backend.h:
include/kgate/store.h:
include/kgate/kgate.h:
include/kgate/verdict.h:
include/kgate/config.h:
include/kgate/util.h:
src/store_shared.h:
include/kgate/metric.h:
include/kgate/points.h:
