build-tsan/obj/runner.o: src/runner.c include/kgate/runner.h \
 include/kgate/config.h include/kgate/util.h include/kgate/kgate.h \
 include/kgate/records_format.h
include/kgate/runner.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/kgate.h:
include/kgate/records_format.h:
