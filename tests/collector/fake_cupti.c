/*
 * fake_cupti.c: a stand-in libcupti.so.13 for testing the collector without
 * a GPU (tests/e2e/collector.t).  It answers the callback, activity, Range
 * Profiler and host calls the collector makes; a driver program
 * (fake_app.c) makes CUPTI's callbacks and activity records happen through
 * fake_callback() and fake_kernel().  FAKE_* variables in the environment
 * select failures: FAKE_BUSY, FAKE_NOPRIV, FAKE_NOPROF, FAKE_NOHOST,
 * FAKE_HWBUSY, FAKE_EARLY, FAKE_DROPPED=N, FAKE_NOMODULE.
 *
 * It also stands in for the few driver functions the collector looks up in
 * the process for metrics mode's cache flush and CUDA events (a flush
 * kernel's launch fires the launch callbacks as the driver's would; each
 * launch of the program advances a clock that the events read).
 */
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static CUpti_CallbackFunc cb;
static CUpti_BuffersCallbackRequestFunc req;
static CUpti_BuffersCallbackCompleteFunc done;
static CUpti_ActivityKernel10 queue[64];
static size_t nqueue;
/* The Range Profiler: ranges made so far (kernel replay: one per start and
 * stop; user replay: one per kernel launched while started), the first
 * range of the counter data image, a session started, user replay set. */
static int ranges, img_base, started, user_replay;
/* User ranges (CUPTI_UserRange): ranges are made by PushRange/PopRange
 * only; depth is the pushed ranges now open. */
static int user_range, depth;
/* User replay of a set of npasses passes: the pass being collected (the
 * ranges are made in the first; later passes repeat them). */
static int npasses = 1, pass_idx;
/* The driver: flush kernels launched (while a user range was open), the
 * GPU's clock in units of 1/1024 ms (each kernel of the program takes one). */
static int flushes, flushes_in_range;
static long gpu_clock;
/* Kernel activity off (cuptiActivityDisable); the correlation ids of the
 * launches made while it was off, whose kernels get no activity record. */
static int act_off;
static uint32_t silent[64], rt_corr;
static size_t nsilent;

int fake_callback(CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data);
int fake_callback(CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
	const CUpti_CallbackData *c = data;
	if (!cb)
		return -1;
	cb(NULL, d, id, data);
	if (d == CUPTI_CB_DOMAIN_RUNTIME_API && id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
		rt_corr = c->callbackSite == CUPTI_API_ENTER ? c->correlationId : 0;
	/* the kernel is launched by the driver call: a range in a started
	 * user-replay session, and no activity record while activity is off */
	if (d == CUPTI_CB_DOMAIN_DRIVER_API && id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel &&
	    c->callbackSite == CUPTI_API_ENTER) {
		if (started && user_replay && !user_range && pass_idx == 0)
			ranges++;
		gpu_clock++;
		if (act_off && nsilent + 2 <= 64) {
			silent[nsilent++] = c->correlationId;
			silent[nsilent++] = rt_corr;
		}
	}
	return 0;
}

/* NVTX's entry point: says what the collector handed over. */
typedef const void *(*nvtx_get_fn)(uint32_t);
int InitializeInjectionNvtx2(nvtx_get_fn get);
int InitializeInjectionNvtx2(nvtx_get_fn get)
{
	const char *t = get ? (const char *)get(42) : NULL;
	printf("fake-cupti: NVTX handed over, table %s\n", t ? t : "missing");
	return 1;
}

void fake_kernel(const char *name, uint32_t corr, uint64_t start, uint64_t end, int gx, int bx);
void fake_kernel(const char *name, uint32_t corr, uint64_t start, uint64_t end, int gx, int bx)
{
	for (size_t i = 0; i < nsilent; i++)
		if (silent[i] == corr)
			return;
	CUpti_ActivityKernel10 *k = &queue[nqueue++];
	memset(k, 0, sizeof(*k));
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->name = name;
	k->correlationId = corr;
	k->start = start;
	k->end = end;
	k->gridX = gx; k->gridY = 2; k->gridZ = 1;
	k->blockX = bx; k->blockY = 1; k->blockZ = 1;
	k->registersPerThread = 16;
	k->staticSharedMemory = 1024;
	k->streamId = 7;
	k->contextId = 1;
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc f, void *u,
				       CUpti_SubscriberParams *p)
{
	(void)u;
	if (getenv("FAKE_BUSY")) {
		if (p && p->oldSubscriberName)
			strncpy(p->oldSubscriberName, "Nsight Compute", p->oldSubscriberSize - 1);
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	cb = f;
	*s = (CUpti_SubscriberHandle)&cb;
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t e, CUpti_SubscriberHandle s, CUpti_CallbackDomain d, CUpti_CallbackId i) { (void)e; (void)s; (void)d; (void)i; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t e, CUpti_SubscriberHandle s, CUpti_CallbackDomain d) { (void)e; (void)s; (void)d; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r, CUpti_BuffersCallbackCompleteFunc c) { req = r; done = c; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind k) { (void)k; act_off = 0; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind k) { (void)k; act_off = 1; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiGetContextId(CUcontext c, uint32_t *id) { (void)c; *id = 1; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext c, CUstream s, uint8_t pt, uint32_t *id) { (void)c; (void)s; (void)pt; *id = 7; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t t) { (void)t; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	uint8_t *buf; size_t size, max;
	(void)flag;
	if (!nqueue || !req || !done)
		return CUPTI_SUCCESS;
	req(&buf, &size, &max);
	if (!buf || size < nqueue * sizeof(queue[0]))
		return CUPTI_ERROR_OUT_OF_MEMORY;
	memcpy(buf, queue, nqueue * sizeof(queue[0]));
	size_t valid = nqueue * sizeof(queue[0]);
	nqueue = 0;
	done(NULL, 0, buf, size, valid);
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *b, size_t valid, CUpti_Activity **r)
{
	uint8_t *next = *r ? (uint8_t *)*r + sizeof(CUpti_ActivityKernel10) : b;
	if (next + sizeof(CUpti_ActivityKernel10) > b + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*r = (CUpti_Activity *)next;
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *d)
{
	(void)c; (void)s;
	*d = getenv("FAKE_DROPPED") ? (size_t)atoi(getenv("FAKE_DROPPED")) : 0;
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult r, const char **s) { *s = r == CUPTI_ERROR_NOT_SUPPORTED ? "CUPTI_ERROR_NOT_SUPPORTED" : "CUPTI_ERROR_FAKE"; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *v) { *v = 130001; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext c, uint32_t *d) { (void)c; *d = 0; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *p) { (void)p; return getenv("FAKE_NOPROF") ? CUPTI_ERROR_NOT_SUPPORTED : CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p) { p->pChipName = "FAKE1"; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiProfilerDeviceSupported(CUpti_Profiler_DeviceSupported_Params *p) { p->isSupported = CUPTI_PROFILER_CONFIGURATION_SUPPORTED; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params *p)
{
	if (getenv("FAKE_NOPRIV"))
		return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
	if (p->pCounterAvailabilityImage)
		memset(p->pCounterAvailabilityImage, 1, 16);
	p->counterAvailabilityImageSize = 16;
	return CUPTI_SUCCESS;
}
/* The host API: a metric is unknown when its name has "bogus"; a set with
 * a name holding "multi" takes 2 passes. */
static int host_obj, host_multi;
CUptiResult CUPTIAPI cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p)
{
	if (getenv("FAKE_NOHOST")) /* as libcupti does when it cannot load libnvperf_host.so */
		return CUPTI_ERROR_NOT_INITIALIZED;
	p->pHostObject = (CUpti_Profiler_Host_Object *)&host_obj;
	host_multi = 0;
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p) { (void)p; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiProfilerHostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params *p) { return strstr(p->pMetricName, "bogus") ? CUPTI_ERROR_INVALID_METRIC_NAME : CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p)
{
	for (size_t i = 0; i < p->numMetrics; i++)
		if (strstr(p->ppMetricNames[i], "multi"))
			host_multi = 1;
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p) { p->configImageSize = 8; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p) { memset(p->pConfigImage, host_multi, p->configImageSize); return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params *p) { p->numOfPasses = p->pConfigImage[0] ? 2 : 1; return CUPTI_SUCCESS; }
/* value of metric i in the k-th range (from 1): 100 k + i; the image holds
 * the ranges since its initialization */
CUptiResult CUPTIAPI cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p)
{
	for (size_t i = 0; i < p->numMetrics; i++)
		p->pMetricValues[i] = 100.0 * (double)(img_base + (int)p->rangeIndex + 1) + (double)i;
	return CUPTI_SUCCESS;
}
static int rp_obj;
CUptiResult CUPTIAPI cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params *p)
{
	if (getenv("FAKE_HWBUSY")) /* the counters are in use by another process */
		return CUPTI_ERROR_HARDWARE_BUSY;
	p->pRangeProfilerObject = (CUpti_RangeProfiler_Object *)&rp_obj;
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params *p) { (void)p; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params *p) { p->counterDataSize = 64; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiRangeProfilerCounterDataImageInitialize(CUpti_RangeProfiler_CounterDataImage_Initialize_Params *p) { memset(p->pCounterData, 0, p->counterDataSize); img_base = ranges; return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params *p)
{
	if (started) /* as CUPTI: not while a session runs */
		return CUPTI_ERROR_INVALID_OPERATION;
	user_replay = p->replayMode == CUPTI_UserReplay;
	user_range = p->range == CUPTI_UserRange;
	npasses = p->pConfig && p->configSize && p->pConfig[0] ? 2 : 1;
	pass_idx = 0;
	printf("fake-cupti: set config, %s replay, %s ranges\n", user_replay ? "user" : "kernel",
	       user_range ? "user" : "auto");
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params *p)
{
	(void)p;
	if (started)
		return CUPTI_ERROR_INVALID_OPERATION;
	started = 1;
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params *p)
{
	if (!started)
		return CUPTI_ERROR_INVALID_OPERATION;
	started = 0;
	p->isAllPassSubmitted = 1;
	if (user_replay) { /* one pass per start and stop */
		pass_idx++;
		p->isAllPassSubmitted = pass_idx >= npasses;
	}
	if (!user_replay)
		ranges++;
	if (getenv("FAKE_EARLY")) /* the activity record before the values */
		cuptiActivityFlushAll(0);
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params *p)
{
	if (started && user_replay) /* a session is decoded after its stop */
		return CUPTI_ERROR_INVALID_OPERATION;
	if (user_replay && pass_idx < npasses) /* and after its last pass */
		return CUPTI_ERROR_INVALID_OPERATION;
	p->numOfRangeDropped = 0;
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params *p) { p->numTotalRanges = (size_t)(ranges - img_base); return CUPTI_SUCCESS; }
#define NS(f, t) CUptiResult CUPTIAPI f(t *p) { (void)p; return CUPTI_ERROR_NOT_SUPPORTED; }
NS(cuptiProfilerHostGetBaseMetrics, CUpti_Profiler_Host_GetBaseMetrics_Params)

CUptiResult CUPTIAPI cuptiRangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params *p)
{
	if (!started || !user_range || !p->pRangeName)
		return CUPTI_ERROR_INVALID_OPERATION;
	depth++;
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiRangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params *p)
{
	(void)p;
	if (!started || depth == 0)
		return CUPTI_ERROR_INVALID_OPERATION;
	depth--;
	ranges++;
	return CUPTI_SUCCESS;
}

/* ---- the driver functions the collector looks up ---- */
static int fake_mod, fake_fn;
CUresult cuCtxGetDevice(CUdevice *d);
CUresult cuCtxGetDevice(CUdevice *d) { *d = 0; return CUDA_SUCCESS; }
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d);
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)d;
	*v = a == CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE ? 4 << 20 : 2;
	return CUDA_SUCCESS;
}
CUresult cuModuleLoadData(CUmodule *m, const void *image);
CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
	if (getenv("FAKE_NOMODULE") || !strstr(image, ".entry kgate_flush("))
		return CUDA_ERROR_INVALID_PTX;
	*m = (CUmodule)&fake_mod;
	return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name);
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	if (m != (CUmodule)&fake_mod || strcmp(name, "kgate_flush") != 0)
		return CUDA_ERROR_NOT_FOUND;
	*f = (CUfunction)&fake_fn;
	return CUDA_SUCCESS;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	*p = n >= (8u << 20) ? 0x10000 : 0; /* twice the L2 asked for */
	return *p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuStreamSynchronize(CUstream s);
CUresult cuStreamSynchronize(CUstream s) { (void)s; return CUDA_SUCCESS; }
/* The flush kernel: the driver's launch callbacks fire for it as for any
 * launch; in a started session with auto ranges it makes a range. */
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			unsigned by, unsigned bz, unsigned smem, CUstream st, void **args, void **extra);
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			unsigned by, unsigned bz, unsigned smem, CUstream st, void **args, void **extra)
{
	static uint32_t corr = 90000;
	cuLaunchKernel_params lp = { f, gx, gy, gz, bx, by, bz, smem, st, args, extra };
	CUresult ok = CUDA_SUCCESS;
	CUpti_CallbackData d = { .callbackSite = CUPTI_API_ENTER, .functionName = "cuLaunchKernel",
				 .symbolName = "kgate_flush", .context = (CUcontext)&fake_fn,
				 .correlationId = ++corr, .functionParams = &lp };
	if (f != (CUfunction)&fake_fn || !args || gx != 8 || bx != 512)
		return CUDA_ERROR_INVALID_VALUE;
	if (cb)
		cb(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &d);
	flushes++;
	if (!act_off) /* its activity record, as for any kernel */
		fake_kernel("kgate_flush", corr, 1, 2, (int)gx, (int)bx);
	if (depth)
		flushes_in_range++;
	if (started && user_replay && !user_range && pass_idx == 0)
		ranges++;
	d.callbackSite = CUPTI_API_EXIT;
	d.functionReturnValue = &ok;
	if (cb)
		cb(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &d);
	return CUDA_SUCCESS;
}
/* CUDA events: each records the clock */
static long ev_time[4096];
static size_t n_ev;
CUresult cuEventCreate(CUevent *e, unsigned flags);
CUresult cuEventCreate(CUevent *e, unsigned flags)
{
	(void)flags;
	if (n_ev == 4096)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*e = (CUevent)(uintptr_t)++n_ev;
	return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent e, CUstream s);
CUresult cuEventRecord(CUevent e, CUstream s)
{
	(void)s;
	ev_time[(uintptr_t)e - 1] = gpu_clock;
	return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent e);
CUresult cuEventSynchronize(CUevent e) { (void)e; return CUDA_SUCCESS; }
CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b);
CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
	*ms = (float)(ev_time[(uintptr_t)b - 1] - ev_time[(uintptr_t)a - 1]) / 1024.0f;
	return CUDA_SUCCESS;
}
__attribute__((destructor)) static void fake_report(void)
{
	if (flushes)
		printf("fake-cupti: %d flush kernels, %d inside a user range\n", flushes,
		       flushes_in_range);
}
