build-tsan/obj/ncu_csv.o: src/ncu_csv.c include/kgate/ncu_csv.h \
 include/kgate/import.h include/kgate/store.h include/kgate/kgate.h \
 include/kgate/verdict.h include/kgate/config.h include/kgate/util.h \
 include/kgate/escape.h include/kgate/unit.h
include/kgate/ncu_csv.h:
include/kgate/import.h:
include/kgate/store.h:
include/kgate/kgate.h:
include/kgate/verdict.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/escape.h:
include/kgate/unit.h:
