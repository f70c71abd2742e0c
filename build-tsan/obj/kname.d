build-tsan/obj/kname.o: src/kname.c include/kgate/kname.h \
 include/kgate/store.h include/kgate/kgate.h include/kgate/verdict.h \
 include/kgate/config.h include/kgate/util.h include/kgate/demangle.h
include/kgate/kname.h:
include/kgate/store.h:
include/kgate/kgate.h:
include/kgate/verdict.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/demangle.h:
