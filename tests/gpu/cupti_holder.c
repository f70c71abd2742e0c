/*
 * cupti_holder.c: a CUDA program that takes the CUPTI subscription itself
 * before CUDA starts, as a profiler would, then launches a kernel through
 * the driver API (a module built from PTX at run time).  Under
 * CUDA_INJECTION64_PATH=libkgate-collector.so the collector must find the
 * subscription taken, write an error record, and let the program exit 0.
 */
#include <cuda.h>
#include <cupti.h>
#include <stdio.h>

static void CUPTIAPI holder_cb(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *p)
{
	(void)u;
	(void)d;
	(void)id;
	(void)p;
}

static const char ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry noop_kernel(.param .u64 p)\n{\n ret;\n}\n";

int main(void)
{
	CUpti_SubscriberHandle sub;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	void *arg = NULL;
	void *args[] = { &arg };

	if (cuptiSubscribe(&sub, holder_cb, NULL) != CUPTI_SUCCESS) {
		fprintf(stderr, "cupti_holder: cannot subscribe\n");
		return 1;
	}
	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
	    cuModuleLoadData(&mod, ptx) != CUDA_SUCCESS ||
	    cuModuleGetFunction(&fn, mod, "noop_kernel") != CUDA_SUCCESS ||
	    cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL) != CUDA_SUCCESS ||
	    cuCtxSynchronize() != CUDA_SUCCESS) {
		fprintf(stderr, "cupti_holder: CUDA failed\n");
		return 1;
	}
	fprintf(stderr, "cupti_holder: done\n");
	return 0;
}
