build-tsan/obj/shard.o: src/shard.c include/kgate/shard.h \
 include/kgate/store.h include/kgate/kgate.h include/kgate/verdict.h \
 include/kgate/config.h include/kgate/util.h include/kgate/runcopy.h
include/kgate/shard.h:
include/kgate/store.h:
include/kgate/kgate.h:
include/kgate/verdict.h:
include/kgate/config.h:
include/kgate/util.h:
include/kgate/runcopy.h:
