build-tsan/obj/gpustate.o: src/gpustate.c include/kgate/gpustate.h
include/kgate/gpustate.h:
