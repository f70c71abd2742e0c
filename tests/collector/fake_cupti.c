/*
 * fake_cupti.c: a stand-in libcupti.so.13 for testing the collector without
 * a GPU (tests/e2e/collector.t).  It answers the callback, activity, Range
 * Profiler and host calls the collector makes; a driver program
 * (fake_app.c) makes CUPTI's callbacks and activity records happen through
 * fake_callback() and fake_kernel().  FAKE_* variables in the environment
 * select failures: FAKE_BUSY, FAKE_NOPRIV, FAKE_NOPROF, FAKE_NOHOST,
 * FAKE_HWBUSY, FAKE_EARLY, FAKE_DROPPED=N, FAKE_NOMODULE, FAKE_RP_START_FAIL=K
 * (the K-th cuptiRangeProfilerStart fails).
 *
 * It also stands in for the few driver functions the collector looks up in
 * the process for metrics mode's cache flush and CUDA events (a flush
 * kernel's launch fires the launch callbacks as the driver's would; each
 * launch of the program advances a clock that the events read, unless PM
 * sampling was enabled: then the events read the host's clock, below).
 *
 * PM sampling (synthetic, on the host's clock): while sampling is started,
 * each driver launch runs a kernel from 1 us after the call for (corr % 3 +
 * 1) half intervals, doing 1000 + 7 * corr instructions (metric j of the
 * set counts (j + 1) times that), split over the samples it overlaps in
 * whole numbers; sample 0 has no values (NaN), as CUPTI's priming sample.
 * The samples live in the counter data image, laid out after the last
 * cuptiPmSamplingGetCounterDataSize call (as CUPTI does), and DecodeData
 * stops with COUNTER_DATA_FULL when the image is full, dropping the records
 * it had no room for (as an H100 showed: holes after roll-overs).  Once sampling was
 * enabled, cuEventRecord records the host's clock (or the last kernel's
 * end, when later), cuEventSynchronize and cuCtxSynchronize wait for the
 * last kernel's end, and cuEventElapsedTime_v2 is the difference.
 * FAKE_PM_OVERFLOW=K: the first decode after the K-th kernel (since the
 * start) ended finds the hardware buffer overflowed (the samples complete by
 * then are gone, overflow = 1); FAKE_PM_OOM=K: that decode fails with
 * CUPTI_ERROR_OUT_OF_MEMORY instead, and a start fails (CUPTI_ERROR_UNKNOWN)
 * until the object is disabled, as on an H100; FAKE_PM_HOLE=K: the sample in which the K-th
 * kernel starts is never delivered; FAKE_PM_HOLE_IDLE_MS=N: the first
 * sample that starts N ms or more after the last kernel's end (the program
 * paused) is never delivered; FAKE_PM_DECODE_US=N: decoding
 * takes N us a sample; FAKE_PM_NOTSUP: PM sampling not supported.
 */
#include <cupti_pmsampling.h>
#include <math.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
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
static int flushes, flushes_in_range, flushes_own;
static long gpu_clock;
/* Kernel activity off (cuptiActivityDisable); the correlation ids of the
 * launches made while it was off, whose kernels get no activity record. */
static int act_off;
static uint32_t silent[64], rt_corr;
static size_t nsilent;

/* ---- PM sampling ---- */
static uint64_t fk_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
#define FK_KMAX 65536
#define FK_MET 8
static struct { uint64_t t0, t1; double inst; } fk_k[FK_KMAX];
static size_t fk_nk, fk_k0;          /* kernels; the first that may still be sampled */
static int pm_started, pm_obj;
static int pm_clock; /* sampling was enabled: events read the host's clock */
static uint64_t pm_t0, pm_stop_t, pm_interval = 10000, pm_next; /* next sample index */
static uint32_t pm_layout_samples, pm_layout_metrics;
static int pm_decodes, pm_ov_done, pm_idle_hole_done;
static uint64_t fk_last_end;
struct fk_hdr { uint32_t magic, cap, nmet, completed; };
struct fk_sample { uint64_t t0, t1; double v[FK_MET]; };
#define FK_MAGIC 0x504d5331u

/* the kernels: appended by the launching thread, read by the decoder's */
static pthread_mutex_t fk_mu = PTHREAD_MUTEX_INITIALIZER;

static void fake_pm_launch(uint32_t corr)
{
	pthread_mutex_lock(&fk_mu);
	if (!pm_started || fk_nk == FK_KMAX) {
		pthread_mutex_unlock(&fk_mu);
		return;
	}
	uint64_t t0 = fk_now() + 1000;
	uint64_t t1 = t0 + (uint64_t)(corr % 3 + 1) * pm_interval / 2;
	fk_k[fk_nk].t0 = t0;
	fk_k[fk_nk].t1 = t1;
	fk_k[fk_nk++].inst = 1000.0 + 7.0 * corr;
	if (t1 > fk_last_end)
		fk_last_end = t1;
	pthread_mutex_unlock(&fk_mu);
}
/* Instructions kernel k does before time t (whole numbers). */
static double fk_before(size_t k, uint64_t t)
{
	if (t <= fk_k[k].t0)
		return 0;
	if (t >= fk_k[k].t1)
		return fk_k[k].inst;
	return floor(fk_k[k].inst * (double)(t - fk_k[k].t0) / (double)(fk_k[k].t1 - fk_k[k].t0));
}
static double fk_in(uint64_t a, uint64_t b)
{
	double s = 0;
	pthread_mutex_lock(&fk_mu);
	for (size_t k = fk_k0; k < fk_nk; k++)
		s += fk_before(k, b) - fk_before(k, a);
	while (fk_k0 < fk_nk && fk_k[fk_k0].t1 <= a)
		fk_k0++;
	pthread_mutex_unlock(&fk_mu);
	return s;
}
/* How long before a..b the last kernel ended, when no kernel runs in it
 * and one ran before (0 otherwise). */
static uint64_t fk_idle(uint64_t a, uint64_t b)
{
	uint64_t last = 0;
	pthread_mutex_lock(&fk_mu);
	for (size_t k = 0; k < fk_nk; k++) {
		if (fk_k[k].t0 < b && fk_k[k].t1 > a) {
			last = 0;
			break;
		}
		if (fk_k[k].t1 <= a && fk_k[k].t1 > last)
			last = fk_k[k].t1;
	}
	pthread_mutex_unlock(&fk_mu);
	return last ? a - last : 0;
}
/* kernel k (from 1): 1 and its times, or 0 when not launched yet */
static int fk_kernel(size_t k, uint64_t *t0, uint64_t *t1)
{
	int got = 0;
	pthread_mutex_lock(&fk_mu);
	if (k && fk_nk >= k) {
		*t0 = fk_k[k - 1].t0;
		*t1 = fk_k[k - 1].t1;
		got = 1;
	}
	pthread_mutex_unlock(&fk_mu);
	return got;
}
static void fk_wait(void)
{
	pthread_mutex_lock(&fk_mu);
	uint64_t end = fk_last_end;
	pthread_mutex_unlock(&fk_mu);
	while (fk_now() < end)
		;
}
CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *t) { *t = fk_now(); return CUPTI_SUCCESS; }
CUresult CUDAAPI cuCtxSynchronize(void) { fk_wait(); return CUDA_SUCCESS; }

/* A counter-availability image of 16 bytes, for both APIs that hand one out
 * (the Range Profiler's and PM sampling's); FAKE_NOPRIV: no permission. */
static CUptiResult fk_availability(uint8_t *image, size_t *size)
{
	if (getenv("FAKE_NOPRIV"))
		return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
	if (image)
		memset(image, 1, 16);
	*size = 16;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params *p)
{
	return fk_availability(p->pCounterAvailabilityImage, &p->counterAvailabilityImageSize);
}
CUptiResult CUPTIAPI cuptiPmSamplingEnable(CUpti_PmSampling_Enable_Params *p)
{
	if (getenv("FAKE_HWBUSY"))
		return CUPTI_ERROR_HARDWARE_BUSY;
	p->pPmSamplingObject = (CUpti_PmSampling_Object *)&pm_obj;
	pthread_mutex_lock(&fk_mu);
	pm_clock = 1;
	pthread_mutex_unlock(&fk_mu);
	return CUPTI_SUCCESS;
}
static int pm_oom; /* a decode failed out of memory: no start until the object is made anew */
CUptiResult CUPTIAPI cuptiPmSamplingDisable(CUpti_PmSampling_Disable_Params *p)
{
	(void)p;
	pm_oom = 0;
	printf("fake-cupti: PM sampling disabled\n");
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiPmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params *p)
{
	if (pm_started)
		return CUPTI_ERROR_INVALID_OPERATION;
	pm_interval = p->samplingInterval;
	printf("fake-cupti: PM sampling every %llu ns, hardware buffer %zu MB\n",
	       (unsigned long long)pm_interval, p->hardwareBufferSize >> 20);
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiPmSamplingStart(CUpti_PmSampling_Start_Params *p)
{
	(void)p;
	if (pm_started)
		return CUPTI_ERROR_INVALID_OPERATION;
	if (pm_oom) /* as an H100 answered */
		return CUPTI_ERROR_UNKNOWN;
	pm_started = 1;
	pm_t0 = fk_now();
	pm_stop_t = 0;
	pm_next = 0;
	return CUPTI_SUCCESS;
}
/* The CUDA runtime's exit handler has run (fake_app registers one, as the
 * runtime does, after the collector's start): on a GPU (an H100, CUDA 13.0)
 * cuptiPmSamplingStop then never returns; the stand-in says so (and stops). */
static int fk_torn_down;
void fake_runtime_teardown(void);
void fake_runtime_teardown(void)
{
	fk_torn_down = 1;
}

CUptiResult CUPTIAPI cuptiPmSamplingStop(CUpti_PmSampling_Stop_Params *p)
{
	(void)p;
	if (!pm_started)
		return CUPTI_ERROR_INVALID_OPERATION;
	/* FAKE_PM_STOP_FAIL=K: the K-th stop and those after it fail, and
	 * sampling goes on */
	static int stops;
	const char *sf = getenv("FAKE_PM_STOP_FAIL");
	if (sf && ++stops >= atoi(sf))
		return CUPTI_ERROR_UNKNOWN;
	if (fk_torn_down) /* said, and stopped all the same: a test must not hang */
		printf("fake-cupti: PM sampling stopped after the runtime's teardown (on a GPU this call never returns)\n");
	pm_started = 0;
	pm_stop_t = fk_now();
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiPmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params *p)
{
	if (p->numMetrics > FK_MET)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pm_layout_samples = p->maxSamples;
	pm_layout_metrics = (uint32_t)p->numMetrics;
	p->counterDataSize = sizeof(struct fk_hdr) + (size_t)p->maxSamples * sizeof(struct fk_sample);
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiPmSamplingCounterDataImageInitialize(CUpti_PmSampling_CounterDataImage_Initialize_Params *p)
{
	/* the layout of the last GetCounterDataSize call, whatever the size given */
	size_t need = sizeof(struct fk_hdr) + (size_t)pm_layout_samples * sizeof(struct fk_sample);
	if (!p->pCounterData || p->counterDataSize < need)
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct fk_hdr h = { FK_MAGIC, pm_layout_samples, pm_layout_metrics, 0 };
	memcpy(p->pCounterData, &h, sizeof(h));
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiPmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params *p)
{
	struct fk_hdr *h = (struct fk_hdr *)p->pCounterDataImage;
	struct fk_sample *s = (struct fk_sample *)(h + 1);
	uint64_t end = pm_started ? fk_now() : pm_stop_t;
	int n = ++pm_decodes;
	const char *ov = getenv("FAKE_PM_OVERFLOW"), *hole = getenv("FAKE_PM_HOLE");
	const char *slow = getenv("FAKE_PM_DECODE_US");
	p->overflow = 0;
	if (h->magic != FK_MAGIC)
		return CUPTI_ERROR_INVALID_PARAMETER;
	/* FAKE_PM_OVERFLOW=K: the first decode after the K-th kernel ended
	 * finds the buffer overflowed: the samples complete by then are gone */
	size_t k_ov = ov ? (size_t)atoi(ov) : 0;
	uint64_t kt0, kt1;
	if (k_ov && !pm_ov_done && fk_kernel(k_ov, &kt0, &kt1) && kt1 <= end) {
		pm_ov_done = 1;
		while (pm_t0 + (pm_next + 1) * pm_interval <= end)
			pm_next++;
		p->overflow = 1;
	}
	/* FAKE_PM_OOM=K: the same decode fails instead */
	const char *oom = getenv("FAKE_PM_OOM");
	size_t k_oom = oom ? (size_t)atoi(oom) : 0;
	if (k_oom && !pm_ov_done && fk_kernel(k_oom, &kt0, &kt1) && kt1 <= end) {
		pm_ov_done = 1;
		pm_oom = 1;
		while (pm_t0 + (pm_next + 1) * pm_interval <= end)
			pm_next++;
		return CUPTI_ERROR_OUT_OF_MEMORY;
	}
	(void)n;
	while (pm_t0 + (pm_next + 1) * pm_interval <= end) {
		if (h->completed == h->cap) {
			/* as an H100 behaved: the records the full image has no
			 * room for are gone (a hole after the roll-over) */
			while (pm_t0 + (pm_next + 1) * pm_interval <= end)
				pm_next++;
			p->decodeStopReason = CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
			return CUPTI_SUCCESS;
		}
		/* FAKE_PM_HOLE=K: the sample where the K-th kernel starts is
		 * never delivered */
		size_t k_h = hole ? (size_t)atoi(hole) : 0;
		uint64_t st = pm_t0 + pm_next * pm_interval;
		if (k_h && fk_kernel(k_h, &kt0, &kt1) && kt0 >= st && kt0 < st + pm_interval) {
			pm_next++;
			continue;
		}
		/* FAKE_PM_HOLE_IDLE_MS=N: one sample of a pause never delivered */
		const char *ih = getenv("FAKE_PM_HOLE_IDLE_MS");
		if (ih && !pm_idle_hole_done && fk_idle(st, st + pm_interval) >= 1000000ull * (uint64_t)atoi(ih)) {
			pm_idle_hole_done = 1;
			pm_next++;
			continue;
		}
		struct fk_sample *x = &s[h->completed++];
		x->t0 = pm_t0 + pm_next * pm_interval;
		x->t1 = x->t0 + pm_interval;
		double in = fk_in(x->t0, x->t1);
		for (uint32_t j = 0; j < FK_MET; j++)
			x->v[j] = pm_next == 0 ? NAN : in * (j + 1);
		pm_next++;
		if (slow) { /* busy: usleep's granularity is coarser */
			uint64_t until = fk_now() + 1000ull * (uint64_t)atoi(slow);
			while (fk_now() < until)
				;
		}
	}
	p->decodeStopReason = CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiPmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params *p)
{
	const struct fk_hdr *h = (const struct fk_hdr *)p->pCounterDataImage;
	if (h->magic != FK_MAGIC)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->numTotalSamples = h->cap;
	p->numPopulatedSamples = h->completed;
	p->numCompletedSamples = h->completed;
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiPmSamplingCounterDataGetSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params *p)
{
	const struct fk_hdr *h = (const struct fk_hdr *)p->pCounterDataImage;
	if (h->magic != FK_MAGIC || p->sampleIndex >= h->completed)
		return CUPTI_ERROR_INVALID_PARAMETER;
	const struct fk_sample *s = (const struct fk_sample *)(h + 1) + p->sampleIndex;
	p->startTimestamp = s->t0;
	p->endTimestamp = s->t1;
	return CUPTI_SUCCESS;
}

/* The driver's callback names the collector asks for: a memset, a copy and
 * a launch are enough to tell them apart. */
CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t id, const char **name)
{
	*name = NULL;
	if (d != CUPTI_CB_DOMAIN_DRIVER_API)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (id == CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async)
		*name = "cuMemsetD32Async";
	else if (id == CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2)
		*name = "cuMemcpyHtoDAsync_v2";
	else if (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)
		*name = "cuLaunchKernel";
	return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

int fake_callback(CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data);
int fake_callback(CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
	const CUpti_CallbackData *c = data;
	if (!cb)
		return -1;
	cb(NULL, d, id, data);
	if (d == CUPTI_CB_DOMAIN_RUNTIME_API && id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
		rt_corr = c->callbackSite == CUPTI_API_ENTER ? c->correlationId : 0;
	/* a memset runs on the GPU too (a kernel of the driver's): work that
	 * PM sampling counts, no range, no kernel record */
	if (d == CUPTI_CB_DOMAIN_DRIVER_API && id == CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async &&
	    c->callbackSite == CUPTI_API_ENTER)
		fake_pm_launch(c->correlationId);
	/* the kernel is launched by the driver call: a range in a started
	 * user-replay session, and no activity record while activity is off */
	if (d == CUPTI_CB_DOMAIN_DRIVER_API && id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel &&
	    c->callbackSite == CUPTI_API_ENTER) {
		if (started && user_replay && !user_range && pass_idx == 0)
			ranges++;
		gpu_clock++;
		fake_pm_launch(c->correlationId);
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
CUptiResult CUPTIAPI cuptiProfilerDeviceSupported(CUpti_Profiler_DeviceSupported_Params *p)
{
	p->isSupported = p->api == CUPTI_PROFILER_PM_SAMPLING && getenv("FAKE_PM_NOTSUP")
		? CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED : CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
	return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params *p)
{
	return fk_availability(p->pCounterAvailabilityImage, &p->counterAvailabilityImageSize);
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
	const struct fk_hdr *h = (const struct fk_hdr *)p->pCounterDataImage;
	if (p->counterDataImageSize >= sizeof(*h) && h->magic == FK_MAGIC) { /* a PM sample */
		if (p->rangeIndex >= h->completed || p->numMetrics > h->nmet)
			return CUPTI_ERROR_INVALID_PARAMETER;
		const struct fk_sample *x = (const struct fk_sample *)(h + 1) + p->rangeIndex;
		for (size_t i = 0; i < p->numMetrics; i++)
			p->pMetricValues[i] = x->v[i];
		return CUPTI_SUCCESS;
	}
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
	/* FAKE_RP_START_FAIL=K: the K-th start fails */
	static int starts;
	if (getenv("FAKE_RP_START_FAIL") && ++starts == atoi(getenv("FAKE_RP_START_FAIL")))
		return CUPTI_ERROR_UNKNOWN;
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

/* ---- the driver functions the collector looks up ----
 * Named fkdrv_*: the stand-in libcuda.so.1 (fake_cuda.c) exports them under
 * the driver's names, from a library loaded as the CUDA runtime loads the
 * driver (RTLD_LOCAL), so that they are not in the process's global scope. */
static int fake_mod, fake_fn;
CUresult fkdrv_cuCtxGetDevice(CUdevice *d);
CUresult fkdrv_cuCtxGetDevice(CUdevice *d) { *d = 0; return CUDA_SUCCESS; }
CUresult fkdrv_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d);
CUresult fkdrv_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)d;
	*v = a == CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE ? 4 << 20 : 2;
	return CUDA_SUCCESS;
}
CUresult fkdrv_cuModuleLoadData(CUmodule *m, const void *image);
CUresult fkdrv_cuModuleLoadData(CUmodule *m, const void *image)
{
	if (getenv("FAKE_NOMODULE") || !strstr(image, ".entry kgate_flush("))
		return CUDA_ERROR_INVALID_PTX;
	*m = (CUmodule)&fake_mod;
	return CUDA_SUCCESS;
}
CUresult fkdrv_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name);
CUresult fkdrv_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	if (m != (CUmodule)&fake_mod || strcmp(name, "kgate_flush") != 0)
		return CUDA_ERROR_NOT_FOUND;
	*f = (CUfunction)&fake_fn;
	return CUDA_SUCCESS;
}
CUresult fkdrv_cuMemAlloc_v2(CUdeviceptr *p, size_t n);
CUresult fkdrv_cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	*p = n >= (8u << 20) ? 0x10000 : 0; /* twice the L2 asked for */
	return *p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult fkdrv_cuStreamSynchronize(CUstream s);
CUresult fkdrv_cuStreamSynchronize(CUstream s) { (void)s; return CUDA_SUCCESS; }
/* Contexts: the collector's own for the flush (FAKE_NOCTX: cannot be
 * created); own_current while it is pushed */
static int fake_own, own_current;
CUresult fkdrv_cuCtxCreate_v4(CUcontext *c, CUctxCreateParams *p, unsigned flags, CUdevice d);
CUresult fkdrv_cuCtxCreate_v4(CUcontext *c, CUctxCreateParams *p, unsigned flags, CUdevice d)
{
	(void)p, (void)flags, (void)d;
	if (getenv("FAKE_NOCTX"))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*c = (CUcontext)&fake_own;
	own_current = 1;
	return CUDA_SUCCESS;
}
CUresult fkdrv_cuCtxPushCurrent_v2(CUcontext c);
CUresult fkdrv_cuCtxPushCurrent_v2(CUcontext c)
{
	own_current = c == (CUcontext)&fake_own;
	return CUDA_SUCCESS;
}
CUresult fkdrv_cuCtxPopCurrent_v2(CUcontext *c);
CUresult fkdrv_cuCtxPopCurrent_v2(CUcontext *c)
{
	*c = own_current ? (CUcontext)&fake_own : NULL;
	own_current = 0;
	return CUDA_SUCCESS;
}
CUresult fkdrv_cuCtxSynchronize(void);
CUresult fkdrv_cuCtxSynchronize(void) { fk_wait(); return CUDA_SUCCESS; }
/* The flush kernel: the driver's launch callbacks fire for it as for any
 * launch; in a started session with auto ranges it makes a range. */
CUresult fkdrv_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			unsigned by, unsigned bz, unsigned smem, CUstream st, void **args, void **extra);
CUresult fkdrv_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			unsigned by, unsigned bz, unsigned smem, CUstream st, void **args, void **extra)
{
	static uint32_t corr = 90000;
	cuLaunchKernel_params lp = { f, gx, gy, gz, bx, by, bz, smem, st, args, extra };
	CUresult ok = CUDA_SUCCESS;
	CUpti_CallbackData d = { .callbackSite = CUPTI_API_ENTER, .functionName = "cuLaunchKernel",
				 .symbolName = "kgate_flush",
				 .context = own_current ? (CUcontext)&fake_own : (CUcontext)&fake_fn,
				 .correlationId = ++corr, .functionParams = &lp };
	if (f != (CUfunction)&fake_fn || !args || gx != 8 || bx != 512)
		return CUDA_ERROR_INVALID_VALUE;
	if (cb)
		cb(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &d);
	flushes++;
	if (!act_off) /* its activity record, as for any kernel */
		fake_kernel("kgate_flush", corr, 1, 2, (int)gx, (int)bx);
	if (own_current) {
		flushes_own++; /* another context: the profiler never sees it */
	} else {
		if (depth)
			flushes_in_range++;
		if (started && user_replay && !user_range && pass_idx == 0)
			ranges++;
	}
	d.callbackSite = CUPTI_API_EXIT;
	d.functionReturnValue = &ok;
	if (cb)
		cb(NULL, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &d);
	return CUDA_SUCCESS;
}
/* CUDA events: each records the launch clock, or the host's clock once PM
 * sampling was enabled (pm_clock) */
static struct { long tick; uint64_t ns; } ev_time[4096];
static size_t n_ev;
CUresult fkdrv_cuEventCreate(CUevent *e, unsigned flags);
CUresult fkdrv_cuEventCreate(CUevent *e, unsigned flags)
{
	(void)flags;
	if (n_ev == 4096)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*e = (CUevent)(uintptr_t)++n_ev;
	return CUDA_SUCCESS;
}
CUresult fkdrv_cuEventRecord(CUevent e, CUstream s);
CUresult fkdrv_cuEventRecord(CUevent e, CUstream s)
{
	(void)s;
	uint64_t n = fk_now();
	pthread_mutex_lock(&fk_mu);
	ev_time[(uintptr_t)e - 1].tick = gpu_clock;
	ev_time[(uintptr_t)e - 1].ns = n > fk_last_end ? n : fk_last_end;
	pthread_mutex_unlock(&fk_mu);
	return CUDA_SUCCESS;
}
CUresult fkdrv_cuEventSynchronize(CUevent e);
CUresult fkdrv_cuEventSynchronize(CUevent e)
{
	(void)e;
	fk_wait();
	return CUDA_SUCCESS;
}
CUresult fkdrv_cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b);
CUresult fkdrv_cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
	size_t i = (uintptr_t)a - 1, j = (uintptr_t)b - 1;
	pthread_mutex_lock(&fk_mu);
	if (pm_clock)
		*ms = (float)((double)(ev_time[j].ns - ev_time[i].ns) / 1e6);
	else
		*ms = (float)(ev_time[j].tick - ev_time[i].tick) / 1024.0f;
	pthread_mutex_unlock(&fk_mu);
	return CUDA_SUCCESS;
}
__attribute__((destructor)) static void fake_report(void)
{
	if (flushes)
		printf("fake-cupti: %d flush kernels, %d inside a user range, %d in a context of "
		       "their own\n", flushes, flushes_in_range, flushes_own);
}
