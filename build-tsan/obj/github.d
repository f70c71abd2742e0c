build-tsan/obj/github.o: src/github.c include/kgate/github.h \
 include/kgate/http.h include/kgate/util.h
include/kgate/github.h:
include/kgate/http.h:
include/kgate/util.h:
