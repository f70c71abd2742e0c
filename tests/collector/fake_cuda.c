/*
 * fake_cuda.c: a stand-in libcuda.so.1 for testing the collector without a
 * GPU: the driver functions the collector looks up (the cache flush's
 * context, module, allocation and launch, CUDA events, the device's
 * attributes), each passing the call to the stand-in libcupti.so.13's
 * fkdrv_ function (fake_cupti.c), which keeps the scenario's state.  fake_app loads it with
 * RTLD_LOCAL before the collector, as the CUDA runtime loads the driver,
 * so that these names are not in the process's global scope: the collector
 * must look them up in the library, as it must on a GPU.
 */
#include <cuda.h>
#include <stddef.h>

CUresult fkdrv_cuCtxGetDevice(CUdevice *d);
CUresult fkdrv_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d);
CUresult fkdrv_cuModuleLoadData(CUmodule *m, const void *image);
CUresult fkdrv_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name);
CUresult fkdrv_cuMemAlloc_v2(CUdeviceptr *p, size_t n);
CUresult fkdrv_cuStreamSynchronize(CUstream s);
CUresult fkdrv_cuCtxCreate_v4(CUcontext *c, CUctxCreateParams *p, unsigned flags, CUdevice d);
CUresult fkdrv_cuCtxPushCurrent_v2(CUcontext c);
CUresult fkdrv_cuCtxPopCurrent_v2(CUcontext *c);
CUresult fkdrv_cuCtxSynchronize(void);
CUresult fkdrv_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			      unsigned by, unsigned bz, unsigned smem, CUstream st, void **args,
			      void **extra);
CUresult fkdrv_cuEventCreate(CUevent *e, unsigned flags);
CUresult fkdrv_cuEventRecord(CUevent e, CUstream s);
CUresult fkdrv_cuEventSynchronize(CUevent e);
CUresult fkdrv_cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b);

CUresult cuCtxGetDevice(CUdevice *d)
{
	return fkdrv_cuCtxGetDevice(d);
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	return fkdrv_cuDeviceGetAttribute(v, a, d);
}

CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
	return fkdrv_cuModuleLoadData(m, image);
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	return fkdrv_cuModuleGetFunction(f, m, name);
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	return fkdrv_cuMemAlloc_v2(p, n);
}

CUresult cuStreamSynchronize(CUstream s)
{
	return fkdrv_cuStreamSynchronize(s);
}

CUresult cuCtxCreate_v4(CUcontext *c, CUctxCreateParams *p, unsigned flags, CUdevice d)
{
	return fkdrv_cuCtxCreate_v4(c, p, flags, d);
}

CUresult cuCtxPushCurrent_v2(CUcontext c)
{
	return fkdrv_cuCtxPushCurrent_v2(c);
}

CUresult cuCtxPopCurrent_v2(CUcontext *c)
{
	return fkdrv_cuCtxPopCurrent_v2(c);
}

CUresult cuCtxSynchronize(void)
{
	return fkdrv_cuCtxSynchronize();
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			unsigned by, unsigned bz, unsigned smem, CUstream st, void **args, void **extra)
{
	return fkdrv_cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, st, args, extra);
}

CUresult cuEventCreate(CUevent *e, unsigned flags)
{
	return fkdrv_cuEventCreate(e, flags);
}

CUresult cuEventRecord(CUevent e, CUstream s)
{
	return fkdrv_cuEventRecord(e, s);
}

CUresult cuEventSynchronize(CUevent e)
{
	return fkdrv_cuEventSynchronize(e);
}

CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
	return fkdrv_cuEventElapsedTime_v2(ms, a, b);
}
