build-tsan/obj/nccl.o: src/nccl.c include/kgate/nccl.h
include/kgate/nccl.h:
