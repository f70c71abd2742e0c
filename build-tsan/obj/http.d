build-tsan/obj/http.o: src/http.c include/kgate/escape.h \
 include/kgate/http.h include/kgate/kgate.h include/kgate/util.h
include/kgate/escape.h:
include/kgate/http.h:
include/kgate/kgate.h:
include/kgate/util.h:
