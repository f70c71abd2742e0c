build-tsan/obj/changepoint.o: src/changepoint.c \
 include/kgate/changepoint.h include/kgate/util.h
include/kgate/changepoint.h:
include/kgate/util.h:
