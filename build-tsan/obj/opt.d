build-tsan/obj/opt.o: src/opt.c include/kgate/opt.h include/kgate/kgate.h \
 include/kgate/util.h
include/kgate/opt.h:
include/kgate/kgate.h:
include/kgate/util.h:
