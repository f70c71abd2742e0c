/*
 * pmsample.c: metrics mode's PM-sampling engine (KGATE_ENGINE=sampling).
 *
 * Owns CUPTI 13's PM sampling (cuptiPmSampling*) for every device the
 * process launches on: the host API's config image of the set (additive
 * counters only: a ".sum" summed over samples is the kernel's total), the
 * sampling object with its hardware buffer and counter data image, a decode
 * thread, and the attribution of samples to launches.
 *
 * Sampling is device-wide and blind to launches, so the launches are made
 * separable: every launch of the process is serialised (a ticket lock from
 * its API entry to its exit) and, at its exit, its stream is synchronised
 * and the collector waits two sampling intervals with the GPU idle.  The
 * midpoint of that idle gap is the launch's end boundary; a launch owns the
 * samples whose midpoint lies between the boundary before it and its own
 * (the probe: 400 of 400 launches exact).  Durations come from two CUDA
 * events around the launch on its stream (kernel activity records are off
 * while sampling: they add instructions to every kernel).
 *
 * Decoding is the cost: one sample takes 12-22 us to decode on an H200 at
 * a 10 us interval, so one thread falls behind a busy GPU.  The decode
 * thread runs all the time; a launch waits at its entry while the decoded
 * samples lag the clock by more than KGATE_PM_BACKLOG_MS (or too many
 * launches wait for their samples), so the hardware buffer never fills.
 * When samples are lost anyway (the buffer overflowed, a hole in the
 * sample times), the launches whose windows lost samples get no counters
 * (null), never a partial sum, and an error record says so (a loss in idle
 * time that cost no launch anything is only counted).  After an overflow
 * the next window makes the sampling object anew (pm_object_reopen).  The
 * counter data image is renewed before a decode could fill it (a decode
 * that fills it drops the records it has no room for;
 * pm_renew_for_backlog), and initialised with the layout of the last
 * cuptiPmSamplingGetCounterDataSize call on the object, so that call is
 * made once per object, with the real set.
 *
 * Counts include everything the GPU runs, so the engine refuses (an error
 * record, the process goes on as a trace) when NVML lists another process
 * computing on the device at set-up, and launches get no counters from the
 * moment one appears while sampling.
 */
#include "pmsample.h"

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll.h"
#include "kgate/records_format.h"
#include "launch.h"
#include "metrics.h"
#include "profiler.h"

#define PM_DEV_MAX 16
#define PM_QUEUE 1024     /* launches waiting for their samples, per device */
#define PM_MET_MAX 32
#define PM_ERR_MAX 20
#define PM_DECODE_OOM (-2) /* pm_decode_once: the hardware buffer overflowed */
#define PM_NVML_EVERY_NS 1000000000ull

/* The set sampled when KGATE_METRICS is not given (each is one pass for PM
 * sampling on GH100; the duration comes from events). */
static const char *const pm_default[] = { KG_M_DURATION, "smsp__inst_executed.sum",
					  "dram__bytes_read.sum", "dram__bytes_write.sum", NULL };

/* One launch's window: from the previous boundary to b1 (0: still open). */
struct pm_launch {
	int64_t ordinal;
	uint64_t b1;
	int kind; /* 1 selected, 0 not selected (duration only), -1 a graph: its samples dropped */
	int lost, failed;
	double dur_ns;
	double v[PM_MET_MAX];
};

struct pm_dev {
	int used, failed, started;
	int ever; /* sampling started once: a launch refused later misses its counters */
	atomic_int stopping; /* a window is ending: the decode thread keeps off */
	atomic_int oom; /* the hardware buffer overflowed: no decoding until a new window */
	CUcontext ctx;
	uint32_t dev;
	char chip[64];
	struct metrics_cfg mc;
	uint8_t *img;
	size_t img_size;
	CUpti_PmSampling_Object *obj;
	size_t harvested; /* completed samples of the image already taken */
	size_t populated; /* samples the image holds, completed or not */
	unsigned long long renewals; /* images renewed before a decode could fill them */
	pthread_mutex_t dec_mu; /* DecodeData, Stop, Disable */
	/* under pm_mu */
	struct pm_launch *q;
	size_t qh, qn;
	double pre[PM_MET_MAX]; /* samples after the last closed window */
	int pre_lost;
	const char *pre_why; /* why pre_lost, said when a launch inherits it */
	double pre_us;
	uint64_t b_first, seen_t1;
	unsigned long long samples, nan_samples, holes, overflows, rollovers, lost_launches, waits,
		windows, idle_windows;
	uint64_t wait_ns;
	/* where the decoding goes (the debug line at the stop) */
	uint64_t t_decode, t_info, t_eval, t_init;
	unsigned long long n_decode, n_eval;
	void *ev0, *ev1;
	uint64_t next_nvml;
};

/* driver entry points, looked up in the process */
typedef int (*pm_ev_create_fn)(void **, unsigned);
typedef int (*pm_ev_record_fn)(void *, CUstream);
typedef int (*pm_ev_sync_fn)(void *);
typedef int (*pm_ev_elapsed_fn)(float *, void *, void *);
typedef int (*pm_sync_fn)(void);
typedef int (*pm_uuid_fn)(CUuuid *, CUdevice);
static pm_ev_create_fn pm_ev_create;
static pm_ev_record_fn pm_ev_record;
static pm_ev_sync_fn pm_ev_sync;
static pm_ev_elapsed_fn pm_ev_elapsed;
static pm_sync_fn pm_ctx_sync;
static pm_uuid_fn pm_uuid;

static struct pm_dev pm_devs[PM_DEV_MAX];
static const char *pm_names[PM_MET_MAX]; /* the sampled metrics */
static size_t pm_n;
static int pm_map[PM_MET_MAX * 2]; /* coll_cfg.metrics[i] -> pm index, -1 the duration */
static int pm_off = 1;             /* until pmsample_init succeeds */
static int pm_shared;              /* another process computes: no counters */
static int pm_any_started;
static int pm_errs;
static uint64_t pm_interval_ns = 10000, pm_backlog_ns = 50000000ull;
static size_t pm_hwbuf = (size_t)256 << 20, pm_img_samples = 2000, pm_img_slack = 216;
/* Sampling is stopped at exit by a handler registered once it has started,
 * after the CUDA runtime's own, so that it runs before the runtime's
 * teardown: after that teardown cuptiPmSamplingStop never returns (measured
 * on an H100, CUDA 13.0), and the collector's own exit handler, registered
 * at its start, runs later. */
static int pm_exit_registered;
static pid_t pm_exit_pid; /* a forked child does not stop its parent's sampling */
static void pm_atexit(void);

static pthread_mutex_t pm_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pm_cv = PTHREAD_COND_INITIALIZER;
static pthread_t pm_thread;
static int pm_thread_on, pm_thread_stop;

/* the launch being made (under the ticket lock) */
static __thread struct pm_dev *pm_cur;
static __thread CUstream pm_cur_stream;
static __thread int pm_cur_ev; /* the start event is recorded */
static __thread int pm_cur_over; /* the filter can select no more launches */
static __thread int pm_cur_memop; /* the fenced call is a memory operation */

/* ------------------------------------------------------------------ */
/* The ticket lock: launches one at a time, in turn                    */

static pthread_mutex_t pm_tk_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pm_tk_cv = PTHREAD_COND_INITIALIZER;
static unsigned long pm_tk_next, pm_tk_serving;

static void pm_lock(void)
{
	pthread_mutex_lock(&pm_tk_mu);
	unsigned long me = pm_tk_next++;
	while (me != pm_tk_serving)
		pthread_cond_wait(&pm_tk_cv, &pm_tk_mu);
	pthread_mutex_unlock(&pm_tk_mu);
}

/* The lock if no launch holds it or waits for it; 0 otherwise. */
static int pm_trylock(void)
{
	int got = 0;
	pthread_mutex_lock(&pm_tk_mu);
	if (pm_tk_next == pm_tk_serving) {
		pm_tk_next++;
		got = 1;
	}
	pthread_mutex_unlock(&pm_tk_mu);
	return got;
}

static void pm_unlock(void)
{
	pthread_mutex_lock(&pm_tk_mu);
	pm_tk_serving++;
	pthread_cond_broadcast(&pm_tk_cv);
	pthread_mutex_unlock(&pm_tk_mu);
}

/* ------------------------------------------------------------------ */
/* Settings                                                            */

int pmsample_engine(void)
{
	static int done, on;
	if (!done) {
		const char *e = getenv("KGATE_ENGINE");
		done = 1;
		if (e && *e && strcmp(e, "range") != 0) {
			if (strcmp(e, "sampling") == 0)
				on = 1;
			else
				coll_error("bad_config", -1,
					   "KGATE_ENGINE='%s' is not range or sampling; using the Range "
					   "Profiler", e);
		}
	}
	return on;
}

static int pm_additive(const char *m)
{
	size_t n = strlen(m);
	return n > 4 && strcmp(m + n - 4, ".sum") == 0;
}

static int pm_set_metrics(void)
{
	const char *given = getenv(KG_ENV_METRICS);
	char **keep = calloc(coll_cfg.n_metrics + 2 + 4, sizeof(char *));
	size_t k = 0;
	int dur = 0;

	if (!keep)
		return -1;
	if (!given || !*given) {
		for (size_t i = 0; i < coll_cfg.n_metrics; i++)
			free(coll_cfg.metrics[i]);
		coll_cfg.n_metrics = 0;
		for (size_t i = 0; pm_default[i]; i++)
			keep[k++] = strdup(pm_default[i]);
	} else {
		char left[512] = "";
		for (size_t i = 0; i < coll_cfg.n_metrics; i++) {
			char *m = coll_cfg.metrics[i];
			if (strcmp(m, KG_M_DURATION) == 0 || pm_additive(m)) {
				keep[k++] = m;
				continue;
			}
			size_t l = strlen(left);
			snprintf(left + l, sizeof(left) - l, "%s%s", l ? ", " : "", m);
			free(m);
		}
		if (*left)
			coll_error("bad_config", -1,
				   "PM sampling sums counters over samples: %s %s not a sum and left "
				   "out (the Range Profiler collects it: KGATE_ENGINE=range)",
				   left, strchr(left, ',') ? "are" : "is");
	}
	free(coll_cfg.metrics);
	coll_cfg.metrics = keep;
	coll_cfg.n_metrics = k;
	pm_n = 0;
	for (size_t i = 0; i < k; i++) {
		if (!keep[i])
			return -1;
		if (strcmp(keep[i], KG_M_DURATION) == 0) {
			dur = 1;
			pm_map[i] = -1;
		} else if (pm_n < PM_MET_MAX && i < PM_MET_MAX * 2 - 1) {
			pm_map[i] = (int)pm_n;
			pm_names[pm_n++] = keep[i];
		} else {
			coll_error("bad_config", -1, "more than %d metrics for PM sampling", PM_MET_MAX);
			return -1;
		}
	}
	if (!dur) {
		keep[k] = strdup(KG_M_DURATION);
		if (!keep[k])
			return -1;
		pm_map[k] = -1;
		coll_cfg.n_metrics = ++k;
	}
	coll_cfg.duration_asked = 1;
	if (!pm_n) {
		coll_error("bad_config", -1, "no counter to sample (only %s); metrics mode is off",
			   KG_M_DURATION);
		return -1;
	}
	return 0;
}

int pmsample_init(void)
{
	if (coll_cfg.app_replay) {
		coll_error("bad_config", -1,
			   "PM sampling takes one-pass sets, not application replay; metrics mode is "
			   "off");
		return -1;
	}
	if (coll_cfg.step_replay) {
		coll_error("bad_config", -1,
			   "PM sampling takes one-pass sets, not step replay; metrics mode is off");
		return -1;
	}
	/* No cache flush: a flush kernel between two launches would fall in
	 * the sampled window of the launch after it.  The header says
	 * cache_control none; asking for all is an error that loses nothing. */
	const char *cc = getenv(KG_ENV_CACHE_CONTROL);
	if (cc && !strcmp(cc, "all"))
		coll_error("bad_config", -1,
			   "%s=all: PM sampling does not flush the cache (the flush's samples "
			   "would be the launch's); sampling without it (cache_control none)",
			   KG_ENV_CACHE_CONTROL);
	coll_cfg.cache_all = 0;
	pm_interval_ns = (uint64_t)coll_env_long("KGATE_PM_INTERVAL", 10, 1, 1000000) * 1000u;
	pm_backlog_ns = (uint64_t)coll_env_long("KGATE_PM_BACKLOG_MS", 50, 1, 60000) * 1000000u;
	pm_hwbuf = (size_t)coll_env_long("KGATE_PM_HWBUF_MB", 256, 16, 4096) << 20;
	pm_img_samples = (size_t)coll_env_long("KGATE_PM_SAMPLES", 2000, 16, 1000000);
	/* the backlog must fit an image with room to spare (pm_renew_for_backlog):
	 * at most half of what the slack (a tenth and 16 samples, at most a
	 * quarter) leaves */
	pm_img_slack = pm_img_samples / 10 + 16;
	if (pm_img_slack > pm_img_samples / 4)
		pm_img_slack = pm_img_samples / 4;
	uint64_t most = (uint64_t)(pm_img_samples - pm_img_slack) / 2 * pm_interval_ns;
	if (pm_backlog_ns > most) {
		COLL_DEBUG("PM sampling: backlog bound %.1f ms, the most an image of %zu samples "
			   "takes at a %llu ns interval", (double)most / 1e6, pm_img_samples,
			   (unsigned long long)pm_interval_ns);
		pm_backlog_ns = most;
	}
	if (pm_set_metrics() != 0)
		return -1;
	*(void **)&pm_ev_create = coll_cuda_sym("cuEventCreate");
	*(void **)&pm_ev_record = coll_cuda_sym("cuEventRecord");
	*(void **)&pm_ev_sync = coll_cuda_sym("cuEventSynchronize");
	*(void **)&pm_ev_elapsed = coll_cuda_sym("cuEventElapsedTime_v2");
	if (!pm_ev_elapsed)
		*(void **)&pm_ev_elapsed = coll_cuda_sym("cuEventElapsedTime");
	*(void **)&pm_ctx_sync = coll_cuda_sym("cuCtxSynchronize");
	*(void **)&pm_uuid = coll_cuda_sym("cuDeviceGetUuid_v2");
	pm_off = 0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Time                                                                */

/* CLOCK_MONOTONIC in ns: what the decoding's parts and the set-up cost,
 * and the bounds of the waits (pm_secs_since) */
static uint64_t pm_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t pm_ts(void)
{
	uint64_t t = 0;
	if (cuptiGetTimestamp(&t) != CUPTI_SUCCESS) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	return t;
}

/* Wait two sampling intervals (the GPU idle); the midpoint of the gap. */
static uint64_t pm_gap(void)
{
	uint64_t a = pm_ts(), b;
	while ((b = pm_ts()) < a + 2 * pm_interval_ns)
		;
	return a + (b - a) / 2;
}

/* ------------------------------------------------------------------ */
/* Other processes on the device (NVML, loaded on demand)              */

struct pm_nvml_proc {
	unsigned pid;
	unsigned long long used;
	unsigned gi, ci;
};
typedef int (*pm_nvml_init_fn)(void);
typedef int (*pm_nvml_idx_fn)(unsigned, void **);
typedef int (*pm_nvml_uuid_fn)(const char *, void **);
typedef int (*pm_nvml_procs_fn)(void *, unsigned *, struct pm_nvml_proc *);
static void *pm_nvml;
static int pm_nvml_tried;
static pm_nvml_idx_fn pm_nvml_idx;
static pm_nvml_uuid_fn pm_nvml_uuid;
static pm_nvml_procs_fn pm_nvml_procs;

/* Processes other than this one computing on dev: their count (the first
 * pid in *pid), or -1 when NVML cannot say (why in why). */
static int pm_others(uint32_t dev, unsigned *pid, char *why, size_t len)
{
	if (!pm_nvml_tried) {
		const char *path = getenv("KGATE_NVML_LIBRARY");
		pm_nvml_tried = 1;
		pm_nvml = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
		if (pm_nvml) {
			pm_nvml_init_fn init = (pm_nvml_init_fn)dlsym(pm_nvml, "nvmlInit_v2");
			*(void **)&pm_nvml_idx = dlsym(pm_nvml, "nvmlDeviceGetHandleByIndex_v2");
			*(void **)&pm_nvml_uuid = dlsym(pm_nvml, "nvmlDeviceGetHandleByUUID");
			*(void **)&pm_nvml_procs = dlsym(pm_nvml, "nvmlDeviceGetComputeRunningProcesses_v3");
			if (!pm_nvml_procs)
				*(void **)&pm_nvml_procs =
					dlsym(pm_nvml, "nvmlDeviceGetComputeRunningProcesses_v2");
			if (!init || init() != 0 || !pm_nvml_procs || !pm_nvml_idx)
				pm_nvml_procs = NULL;
		}
	}
	if (!pm_nvml || !pm_nvml_procs) {
		snprintf(why, len, "NVML is not available");
		return -1;
	}
	void *h = NULL;
	CUuuid u;
	if (pm_uuid && pm_nvml_uuid && pm_uuid(&u, (CUdevice)dev) == 0) {
		const unsigned char *b = (const unsigned char *)u.bytes;
		char s[64];
		snprintf(s, sizeof(s),
			 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
			 b[12], b[13], b[14], b[15]);
		if (pm_nvml_uuid(s, &h) != 0)
			h = NULL;
	}
	if (!h && pm_nvml_idx(dev, &h) != 0) {
		snprintf(why, len, "NVML does not know device %u", dev);
		return -1;
	}
	struct pm_nvml_proc p[64];
	unsigned n = 64;
	int r = pm_nvml_procs(h, &n, p);
	if (r != 0 && r != 7 /* NVML_ERROR_INSUFFICIENT_SIZE: more than 64 */) {
		snprintf(why, len, "NVML cannot list the device's processes (error %d)", r);
		return -1;
	}
	if (r == 7)
		n = 64;
	int others = 0;
	unsigned me = (unsigned)getpid();
	for (unsigned i = 0; i < n && i < 64; i++) {
		if (p[i].pid == me)
			continue;
		if (!others++)
			*pid = p[i].pid;
	}
	return others;
}

/* ------------------------------------------------------------------ */
/* Attribution (under pm_mu)                                           */

static struct pm_launch *pm_at(struct pm_dev *d, size_t i)
{
	return &d->q[(d->qh + i) % PM_QUEUE];
}

/* A window is complete: its values to launch.c. */
static void pm_emit_locked(struct pm_dev *d, struct pm_launch *L)
{
	double vals[PM_MET_MAX * 2];

	if (L->kind < 0)
		return;
	int none = L->lost || pm_shared;
	if (L->lost && !L->failed)
		d->lost_launches++;
	if (L->failed) {
		launch_set_values(L->ordinal, NULL);
		return;
	}
	for (size_t i = 0; i < coll_cfg.n_metrics && i < PM_MET_MAX * 2; i++)
		vals[i] = pm_map[i] < 0 ? L->dur_ns : none ? NAN : L->v[pm_map[i]];
	launch_set_values(L->ordinal, vals);
}

static void pm_pop_locked(struct pm_dev *d)
{
	pm_emit_locked(d, pm_at(d, 0));
	d->qh = (d->qh + 1) % PM_QUEUE;
	d->qn--;
}

static void pm_lost_report(const struct pm_dev *d, const char *why, double us)
{
	if (pm_errs++ < PM_ERR_MAX)
		coll_error("samples_lost", -1,
			   "PM sampling lost samples on device %u (%s, %.1f us of samples); the "
			   "launches whose windows held them have no counters", d->dev, why, us);
}

/*
 * Samples from..to are gone: every launch whose window held them has no
 * counters, and so has the next launch when they reach past the last
 * window (its window starts there).  An error record says so only when a
 * launch did lose its counters: a hole in idle time that a window's
 * restart leaves behind costs nothing (on an H100 the test program had 20
 * such holes and every launch its exact count), and a record for it would
 * be a warning about nothing.
 */
static void pm_lost_locked(struct pm_dev *d, uint64_t from, uint64_t to, const char *why)
{
	int any = 0;
	double us = (double)(to - from) / 1e3;
	for (size_t i = 0; i < d->qn; i++) {
		struct pm_launch *L = pm_at(d, i);
		if (L->b1 == 0 || L->b1 > from) {
			any |= !L->lost && L->kind > 0;
			L->lost = 1;
		}
	}
	struct pm_launch *t = d->qn ? pm_at(d, d->qn - 1) : NULL;
	int next = !t || (t->b1 && t->b1 < to);
	if (next) {
		d->pre_lost = 1;
		if (!any) {
			d->pre_why = why;
			d->pre_us = us;
		}
	}
	COLL_DEBUG("PM sampling, device %u: %s, %.1f us of samples lost: %s", d->dev, why, us,
		   any ? "launches lost their counters"
		   : next ? "past the last window (the next launch has no counters, unless a window starts first)"
			  : "no launch's window held them");
	if (any)
		pm_lost_report(d, why, us);
}

/* One decoded sample, in time order. */
static void pm_feed_locked(struct pm_dev *d, uint64_t t0, uint64_t t1, const double *v)
{
	for (size_t j = 0; j < pm_n; j++) {
		if (!isfinite(v[j])) { /* the priming sample at the start */
			d->nan_samples++;
			return;
		}
	}
	d->samples++;
	if (d->seen_t1 && t0 > d->seen_t1 + pm_interval_ns / 2) {
		d->holes++;
		pm_lost_locked(d, d->seen_t1, t0, "a hole in the sample times");
	}
	if (t1 > d->seen_t1)
		d->seen_t1 = t1;
	uint64_t mid = t0 + (t1 - t0) / 2;
	if (mid < d->b_first)
		return;
	while (d->qn) {
		struct pm_launch *L = pm_at(d, 0);
		if (L->b1 && mid >= L->b1) {
			pm_pop_locked(d);
			continue;
		}
		for (size_t j = 0; j < pm_n; j++)
			L->v[j] += v[j];
		return;
	}
	for (size_t j = 0; j < pm_n; j++)
		d->pre[j] += v[j];
}

/* Every closed window whose samples are all decoded gets its values; with
 * force, every closed window (the sampling has stopped). */
static void pm_complete_locked(struct pm_dev *d, int force)
{
	while (d->qn) {
		struct pm_launch *L = pm_at(d, 0);
		if (!L->b1 || (!force && d->seen_t1 < L->b1 + pm_interval_ns))
			break;
		pm_pop_locked(d);
	}
}

/* The sampling has stopped: a window no sample reached the end of
 * (still open, or past the last sample decoded) has lost its counters;
 * every window is completed. */
static void pm_complete_stopped_locked(struct pm_dev *d)
{
	for (size_t i = 0; i < d->qn; i++) {
		struct pm_launch *L = pm_at(d, i);
		if (!L->b1 || d->seen_t1 < L->b1)
			L->lost = 1;
	}
	pm_complete_locked(d, 1);
}

/* ------------------------------------------------------------------ */
/* Decoding                                                            */

static int pm_image_init(struct pm_dev *d)
{
	CUpti_PmSampling_CounterDataImage_Initialize_Params ci = { .structSize = CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE };
	ci.pPmSamplingObject = d->obj;
	ci.counterDataSize = d->img_size;
	ci.pCounterData = d->img;
	d->harvested = d->populated = 0;
	uint64_t t0 = pm_mono_ns();
	int r = coll_check(cuptiPmSamplingCounterDataImageInitialize(&ci),
			   "cuptiPmSamplingCounterDataImageInitialize", "no counters from here on");
	d->t_init += pm_mono_ns() - t0;
	return r;
}

static void pm_fail_dev(struct pm_dev *d);
static void pm_drain_locked_dec(struct pm_dev *d);

/* Take the completed samples of the image that are new. */
static int pm_harvest(struct pm_dev *d, size_t *populated)
{
	CUpti_PmSampling_GetCounterDataInfo_Params gi = { .structSize = CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE };
	gi.pCounterDataImage = d->img;
	gi.counterDataImageSize = d->img_size;
	if (coll_check(cuptiPmSamplingGetCounterDataInfo(&gi), "cuptiPmSamplingGetCounterDataInfo",
		       "no counters from here on"))
		return -1;
	if (populated)
		*populated = gi.numPopulatedSamples;
	double v[PM_MET_MAX];
	for (size_t k = d->harvested; k < gi.numCompletedSamples; k++) {
		CUpti_PmSampling_CounterData_GetSampleInfo_Params si = { .structSize = CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE };
		si.pPmSamplingObject = d->obj;
		si.pCounterDataImage = d->img;
		si.counterDataImageSize = d->img_size;
		si.sampleIndex = k;
		uint64_t t0 = pm_mono_ns();
		if (coll_check(cuptiPmSamplingCounterDataGetSampleInfo(&si),
			       "cuptiPmSamplingCounterDataGetSampleInfo", "no counters from here on"))
			return -1;
		uint64_t t1 = pm_mono_ns();
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = { .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE };
		ev.pHostObject = d->mc.host;
		ev.pCounterDataImage = d->img;
		ev.counterDataImageSize = d->img_size;
		ev.rangeIndex = k;
		ev.ppMetricNames = pm_names;
		ev.numMetrics = pm_n;
		ev.pMetricValues = v;
		if (coll_check(cuptiProfilerHostEvaluateToGpuValues(&ev),
			       "cuptiProfilerHostEvaluateToGpuValues", "no counters from here on"))
			return -1;
		uint64_t t2 = pm_mono_ns();
		d->t_info += t1 - t0;
		d->t_eval += t2 - t1;
		d->n_eval++;
		pthread_mutex_lock(&pm_mu);
		pm_feed_locked(d, si.startTimestamp, si.endTimestamp, v);
		pthread_mutex_unlock(&pm_mu);
	}
	if (gi.numCompletedSamples > d->harvested)
		d->harvested = gi.numCompletedSamples;
	d->populated = gi.numPopulatedSamples;
	return 0;
}

/* Samples the decoder is behind the clock, at most. */
static size_t pm_backlog_samples(struct pm_dev *d)
{
	pthread_mutex_lock(&pm_mu);
	uint64_t seen = d->seen_t1;
	pthread_mutex_unlock(&pm_mu);
	uint64_t now = pm_ts();
	return (size_t)((now > seen ? now - seen : 0) / pm_interval_ns) + 1;
}

/*
 * A roll-over must come between decodes, never inside one: DecodeData
 * takes every record the hardware buffer holds, and those the image has no
 * room for are gone (on an H100 a roll-over with a backlog left a hole of
 * 15-113 ms of samples, 11 holes in 21 roll-overs; with an image five times
 * larger, none).  So once every sample of the image is taken and the
 * backlog (bounded in pmsample_init) would not fit what is left, the image is
 * renewed first.  Under d->dec_mu; -1 when the renewal failed.
 */
static int pm_renew_for_backlog(struct pm_dev *d)
{
	if (!d->populated || d->harvested != d->populated)
		return 0; /* empty, or a sample in it is not complete yet */
	if (d->populated + pm_backlog_samples(d) + pm_img_slack <= pm_img_samples)
		return 0;
	d->renewals++;
	return pm_image_init(d);
}

/* One DecodeData and its samples; the stop reason, or -1 on failure.
 * Under d->dec_mu. */
static int pm_decode_once(struct pm_dev *d)
{
	CUpti_PmSampling_DecodeData_Params dd = { .structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE };
	dd.pPmSamplingObject = d->obj;
	dd.pCounterDataImage = d->img;
	dd.counterDataImageSize = d->img_size;
	if (pm_renew_for_backlog(d) != 0)
		return -1;
	uint64_t t0 = pm_mono_ns();
	CUptiResult r = cuptiPmSamplingDecodeData(&dd);
	d->t_decode += pm_mono_ns() - t0;
	d->n_decode++;
	if (r == CUPTI_ERROR_OUT_OF_MEMORY) {
		/* the hardware buffer overflowed: what it held is gone (every
		 * window it held, and the next launch's), and nothing more can
		 * be decoded from it; the next window, started by the next
		 * launch or by the decode thread when none is in flight, starts
		 * afresh (pm_window_restart) */
		pthread_mutex_lock(&pm_mu);
		d->overflows++;
		pm_lost_locked(d, d->seen_t1, pm_ts(), "the hardware buffer overflowed");
		if (pm_errs++ < PM_ERR_MAX)
			coll_error("samples_lost", -1,
				   "PM sampling on device %u: the hardware buffer overflowed "
				   "(cuptiPmSamplingDecodeData: out of memory); sampling starts again "
				   "with the next window", d->dev);
		pthread_mutex_unlock(&pm_mu);
		atomic_store(&d->oom, 1);
		return PM_DECODE_OOM;
	}
	if (coll_check(r, "cuptiPmSamplingDecodeData", "no counters from here on"))
		return -1;
	if (dd.overflow) {
		pthread_mutex_lock(&pm_mu);
		d->overflows++;
		pm_lost_locked(d, d->seen_t1, pm_ts(), "the hardware buffer overflowed");
		pthread_mutex_unlock(&pm_mu);
	}
	size_t populated = 0;
	if (pm_harvest(d, &populated) != 0)
		return -1;
	if (dd.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) {
		/* the image is full: a fresh one (a sample populated but not
		 * completed is lost with it; the hole in the times says so) */
		d->rollovers++;
		COLL_DEBUG("PM sampling, device %u: counter data image full (%zu samples), "
			   "re-initialised", d->dev, populated);
		if (pm_image_init(d) != 0)
			return -1;
	}
	return (int)dd.decodeStopReason;
}

static int pm_decode_dev(struct pm_dev *d, int calls)
{
	int r = 0;
	if (atomic_load(&d->oom))
		return PM_DECODE_OOM; /* nothing to decode until a new window */
	pthread_mutex_lock(&d->dec_mu);
	/* a full image: a fresh one and on at once, the hardware buffer
	 * holds more */
	for (int k = 0; k < calls && d->started && !d->failed; k++) {
		r = pm_decode_once(d);
		if (r != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL)
			break;
	}
	pthread_mutex_unlock(&d->dec_mu);
	if (r < 0 && r != PM_DECODE_OOM)
		pm_fail_dev(d);
	pthread_mutex_lock(&pm_mu);
	pm_complete_locked(d, 0);
	pthread_cond_broadcast(&pm_cv);
	pthread_mutex_unlock(&pm_mu);
	return r;
}

/* Another process appeared on the device while sampling. */
static void pm_check_others(struct pm_dev *d, uint64_t now)
{
	char why[128];
	unsigned pid = 0;

	if (now < d->next_nvml)
		return;
	d->next_nvml = now + PM_NVML_EVERY_NS;
	if (pm_shared || pm_others(d->dev, &pid, why, sizeof(why)) <= 0)
		return;
	pthread_mutex_lock(&pm_mu);
	pm_shared = 1;
	for (size_t i = 0; i < d->qn; i++)
		pm_at(d, i)->lost = 1;
	d->pre_lost = 1;
	pthread_mutex_unlock(&pm_mu);
	coll_error("gpu_shared", -1,
		   "another process (pid %u) computes on device %u: PM sampling counts the whole "
		   "device, so launches from here on have no counters", pid, d->dev);
}

static void pm_window_restart(struct pm_dev *d);
static int pm_object_reopen(struct pm_dev *d);
static int pm_behind(const struct pm_dev *d, uint64_t now, uint64_t bound, size_t qmax);

static void *pm_decoder(void *u)
{
	(void)u;
	for (;;) {
		pthread_mutex_lock(&pm_mu);
		int stop = pm_thread_stop;
		pthread_mutex_unlock(&pm_mu);
		if (stop)
			break;
		uint64_t now = pm_ts();
		int more = 0;
		for (size_t i = 0; i < PM_DEV_MAX; i++) {
			struct pm_dev *d = &pm_devs[i];
			/* a window ending: the launch thread decodes (one image at
			 * a time, so that it stops once it has its samples) */
			if (!d->used || !d->started || d->failed || atomic_load(&d->stopping))
				continue;
			more |= pm_decode_dev(d, 1) == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
			pm_check_others(d, now);
			/* the program launches nothing for a while: the samples of
			 * the idle time would fill the hardware buffer, so the window
			 * ends here too when no launch is being made */
			pthread_mutex_lock(&pm_mu);
			int behind = pm_behind(d, pm_ts(), pm_backlog_ns, PM_QUEUE - 1);
			pthread_mutex_unlock(&pm_mu);
			if ((behind || atomic_load(&d->oom)) && pm_trylock()) {
				if (d->started && !d->failed) {
					pm_window_restart(d);
					d->idle_windows++;
				}
				pm_unlock();
			}
		}
		if (!more)
			usleep(200);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Set-up and tear-down                                                */

static void pm_activity(int on)
{
	if (on)
		coll_check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
			   "cuptiActivityEnable(CONCURRENT_KERNEL)",
			   "kernels after PM sampling have no trace records");
	else
		coll_check(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
			   "cuptiActivityDisable(CONCURRENT_KERNEL)", NULL);
}

/* Whole seconds since t0 (pm_mono_ns): the bounds of the waits below. */
static long pm_secs_since(uint64_t t0)
{
	return (long)((pm_mono_ns() - t0) / 1000000000ull);
}

/* Decode until every closed window's samples are in (bounded: 30 s):
 * samples still in the hardware buffer at a stop are lost. */
static void pm_catch_up(struct pm_dev *d)
{
	atomic_store(&d->stopping, 1);
	pthread_mutex_lock(&pm_mu);
	uint64_t want = 0;
	for (size_t i = 0; i < d->qn; i++)
		if (pm_at(d, i)->b1 > want)
			want = pm_at(d, i)->b1;
	pthread_mutex_unlock(&pm_mu);
	uint64_t t0 = pm_mono_ns();
	COLL_DEBUG("PM sampling, device %u: catching up to %llu from %llu", d->dev,
		   (unsigned long long)want, (unsigned long long)d->seen_t1);
	while (!d->failed && d->started && !atomic_load(&d->oom)) {
		pthread_mutex_lock(&pm_mu);
		int done = d->seen_t1 >= want + pm_interval_ns;
		pthread_mutex_unlock(&pm_mu);
		if (done)
			break;
		if (pm_secs_since(t0) > 30) {
			pthread_mutex_lock(&pm_mu);
			COLL_DEBUG("PM sampling, device %u: catching up gave up after 30 s: samples "
				   "decoded up to %llu, the last window ends at %llu, now %llu", d->dev,
				   (unsigned long long)d->seen_t1, (unsigned long long)want,
				   (unsigned long long)pm_ts());
			pthread_mutex_unlock(&pm_mu);
			break;
		}
		if (pm_decode_dev(d, 1) == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS)
			usleep(100);
	}
}

/* Stop sampling on d: let the decoder catch up with the last window
 * (bounded), stop, drain what is left, give every launch its values or
 * none, disable.  Under the ticket lock. */
static void pm_stop_dev(struct pm_dev *d)
{
	if (!d->used || !d->started)
		return;
	COLL_DEBUG("PM sampling, device %u: stopping", d->dev);
	pm_catch_up(d);
	COLL_DEBUG("PM sampling, device %u: caught up", d->dev);
	pthread_mutex_lock(&d->dec_mu);
	if (!d->failed) {
		CUpti_PmSampling_Stop_Params sp = { .structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE };
		sp.pPmSamplingObject = d->obj;
		/* a failed stop leaves sampling on: the samples never stop coming,
		 * so there is nothing to drain (the launches not yet decoded get
		 * no counters) */
		if (coll_check(cuptiPmSamplingStop(&sp), "cuptiPmSamplingStop",
			       "launches whose samples were not yet decoded have no counters") == 0 &&
		    !atomic_load(&d->oom)) {
			COLL_DEBUG("PM sampling, device %u: sampling stopped; draining", d->dev);
			pm_drain_locked_dec(d);
		}
	}
	d->started = 0;
	pthread_mutex_unlock(&d->dec_mu);
	pthread_mutex_lock(&pm_mu);
	pm_complete_stopped_locked(d);
	pthread_mutex_unlock(&pm_mu);
	COLL_DEBUG("PM sampling, device %u stopped: %llu samples (%llu without values), %llu "
		   "holes, %llu overflows, %llu image roll-overs, %llu launches without counters, "
		   "%llu windows ended to let the decoder catch up (%.3f ms waited by launches), %llu more while idle, "
		   "%llu images renewed before a decode could fill them",
		   d->dev, d->samples, d->nan_samples, d->holes, d->overflows, d->rollovers,
		   d->lost_launches, d->waits, (double)d->wait_ns / 1e6, d->idle_windows, d->renewals);
	COLL_DEBUG("PM sampling, device %u: decoding took DecodeData %.1f ms in %llu calls, "
		   "sample info %.1f ms, evaluation %.1f ms (%.2f us a sample of %llu), image "
		   "initialisations %.1f ms",
		   d->dev, (double)d->t_decode / 1e6, d->n_decode, (double)d->t_info / 1e6,
		   (double)d->t_eval / 1e6,
		   d->n_eval ? (double)d->t_eval / 1e3 / (double)d->n_eval : 0.0, d->n_eval,
		   (double)d->t_init / 1e6);
	if (d->lost_launches)
		coll_error("samples_lost", -1,
			   "PM sampling on device %u: %llu launches have no counters because samples "
			   "were lost", d->dev, d->lost_launches);
	CUpti_PmSampling_Disable_Params dp = { .structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE };
	dp.pPmSamplingObject = d->obj;
	if (d->obj)
		coll_check(cuptiPmSamplingDisable(&dp), "cuptiPmSamplingDisable", NULL);
	d->obj = NULL;
	COLL_DEBUG("PM sampling, device %u: disabled", d->dev);
	d->failed = 1;
	if (--pm_any_started == 0)
		pm_activity(1);
}

/* Stop sampling on every device, for good.  Under the ticket lock. */
static void pm_stop_all(void)
{
	for (size_t i = 0; i < PM_DEV_MAX; i++)
		pm_stop_dev(&pm_devs[i]);
	pm_off = 1;
}

static void pm_fail_dev(struct pm_dev *d)
{
	pthread_mutex_lock(&pm_mu);
	if (d->failed) {
		pthread_mutex_unlock(&pm_mu);
		return;
	}
	d->failed = 1;
	for (size_t i = 0; i < d->qn; i++)
		pm_at(d, i)->lost = 1;
	pm_complete_locked(d, 1);
	pthread_cond_broadcast(&pm_cv);
	pthread_mutex_unlock(&pm_mu);
}

/* Stop sampling, decode everything (drain), give every closed window its
 * values, start again after an idle gap.  Under the ticket lock, with no
 * launch in flight. */
static void pm_drain_locked_dec(struct pm_dev *d)
{
	uint64_t t0 = pm_mono_ns();
	for (int k = 0, quiet = 0; k < 100000 && quiet < 2; k++) {
		/* bounded in time too (10 s): what is left is lost, and says so */
		if (pm_secs_since(t0) > 10) {
			COLL_DEBUG("PM sampling, device %u: draining gave up after 10 s", d->dev);
			break;
		}
		unsigned long long before = d->samples + d->nan_samples;
		int r = pm_decode_once(d);
		if (r < 0)
			break;
		quiet = r == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS &&
				d->samples + d->nan_samples == before
			? quiet + 1
			: 0;
		if (k == 1000)
			COLL_DEBUG("PM sampling, device %u: draining after its stop, 1000 decodes and "
				   "still going: %llu samples so far, stop reason %d", d->dev,
				   d->samples + d->nan_samples, r);
	}
}

static void pm_window_restart(struct pm_dev *d)
{
	int bad = 0;
	pm_catch_up(d);
	pthread_mutex_lock(&d->dec_mu);
	if (d->failed || !d->started) {
		pthread_mutex_unlock(&d->dec_mu);
		return;
	}
	/* what the buffer holds past the last window is idle time: dropped */
	CUpti_PmSampling_Stop_Params sp = { .structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE };
	sp.pPmSamplingObject = d->obj;
	bad = coll_check(cuptiPmSamplingStop(&sp), "cuptiPmSamplingStop", "no counters from here on");
	pthread_mutex_lock(&pm_mu);
	pm_complete_stopped_locked(d);
	memset(d->pre, 0, sizeof(d->pre));
	d->pre_lost = 0;
	d->pre_why = NULL;
	pthread_mutex_unlock(&pm_mu);
	d->windows++;
	/* after an overflow the object is made anew (a start failed otherwise) */
	if (!bad && atomic_load(&d->oom)) {
		COLL_DEBUG("PM sampling, device %u: the sampling object made anew after the overflow", d->dev);
		bad = pm_object_reopen(d) != 0;
	}
	/* a fresh image for the new start (decoding on into the old one after
	 * a stop and a start made the next decode report an overflow in every
	 * long run on an H100) */
	if (!bad)
		bad = pm_image_init(d) != 0;
	CUpti_PmSampling_Start_Params st = { .structSize = CUpti_PmSampling_Start_Params_STRUCT_SIZE };
	st.pPmSamplingObject = d->obj;
	if (!bad)
		bad = coll_check(cuptiPmSamplingStart(&st), "cuptiPmSamplingStart",
				 "no counters from here on");
	if (!bad) {
		uint64_t b = pm_gap();
		pthread_mutex_lock(&pm_mu);
		d->b_first = b;
		d->seen_t1 = b;
		pthread_mutex_unlock(&pm_mu);
		atomic_store(&d->oom, 0); /* a fresh buffer */
	}
	atomic_store(&d->stopping, 0);
	pthread_mutex_unlock(&d->dec_mu);
	if (bad)
		pm_fail_dev(d);
}

static CUpti_Profiler_Host_Object *pm_host(const char *chip, const uint8_t *avail)
{
	CUpti_Profiler_Host_Initialize_Params hi = { .structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE };
	hi.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
	hi.pChipName = chip;
	hi.pCounterAvailabilityImage = avail;
	if (coll_check(cuptiProfilerHostInitialize(&hi), "cuptiProfilerHostInitialize(PM sampling)",
		       "no metrics, trace only"))
		return NULL;
	return hi.pHostObject;
}

/*
 * The sampling object: enabled on the device, configured (the set, the
 * hardware buffer, the interval) and the counter data image's layout asked
 * for once (every initialisation of the image takes its layout from the
 * last such call on the object).  At set-up (first: an Enable refused for
 * want of privileges or because the counters are busy turns sampling off),
 * and again after the hardware buffer overflowed: on an H100 a start after
 * that failed (CUPTI_ERROR_UNKNOWN) until the object was made anew.
 */
static int pm_object_open(struct pm_dev *d, int first)
{
	const char *then = first ? "no metrics, trace only" : "no counters from here on";
	CUpti_PmSampling_Enable_Params en = { .structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE };
	en.deviceIndex = d->dev;
	CUptiResult r = cuptiPmSamplingEnable(&en);
	if (r != CUPTI_SUCCESS) {
		coll_check(r, "cuptiPmSamplingEnable", then);
		if (first)
			pm_off = r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || r == CUPTI_ERROR_HARDWARE_BUSY;
		return -1;
	}
	d->obj = en.pPmSamplingObject;
	CUpti_PmSampling_SetConfig_Params sc = { .structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE };
	sc.pPmSamplingObject = d->obj;
	sc.configSize = d->mc.config_size;
	sc.pConfig = d->mc.config;
	sc.hardwareBufferSize = pm_hwbuf;
	sc.samplingInterval = pm_interval_ns;
	sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
	sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
	if (coll_check(cuptiPmSamplingSetConfig(&sc), "cuptiPmSamplingSetConfig", then))
		return -1;
	CUpti_PmSampling_GetCounterDataSize_Params gs = { .structSize = CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE };
	gs.pPmSamplingObject = d->obj;
	gs.pMetricNames = pm_names;
	gs.numMetrics = pm_n;
	gs.maxSamples = (uint32_t)pm_img_samples;
	if (coll_check(cuptiPmSamplingGetCounterDataSize(&gs), "cuptiPmSamplingGetCounterDataSize", then))
		return -1;
	if (!first && gs.counterDataSize != d->img_size) {
		coll_error("cupti_error", -1,
			   "PM sampling on device %u: the counter data image changed size (%zu to %zu "
			   "bytes) when the sampling object was made anew; no counters from here on",
			   d->dev, d->img_size, gs.counterDataSize);
		return -1;
	}
	d->img_size = gs.counterDataSize;
	return 0;
}

/* The object made anew (after the hardware buffer overflowed). */
static int pm_object_reopen(struct pm_dev *d)
{
	CUpti_PmSampling_Disable_Params dp = { .structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE };
	dp.pPmSamplingObject = d->obj;
	if (coll_check(cuptiPmSamplingDisable(&dp), "cuptiPmSamplingDisable", "no counters from here on"))
		return -1;
	d->obj = NULL;
	return pm_object_open(d, 0);
}

/* Host and target set-up of d; 0 ok (then sampling has started). */
static int pm_setup(struct pm_dev *d)
{
	char err[512], why[128];
	unsigned pid = 0;
	int others = pm_others(d->dev, &pid, why, sizeof(why));

	if (others > 0) {
		coll_error("gpu_shared", -1,
			   "another process (pid %u%s) computes on device %u: PM sampling counts the "
			   "whole device, so it is refused; this process is traced without "
			   "counters", pid, others > 1 ? " and others" : "", d->dev);
		pm_off = 1;
		return -1;
	}
	if (others < 0)
		coll_error("gpu_unchecked", -1,
			   "%s: whether another process computes on device %u cannot be checked; "
			   "PM sampling counts the whole device", why, d->dev);
	CUpti_Profiler_DeviceSupported_Params ds = { .structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE };
	ds.cuDevice = (CUdevice)d->dev;
	ds.api = CUPTI_PROFILER_PM_SAMPLING;
	if (cuptiProfilerDeviceSupported(&ds) == CUPTI_SUCCESS &&
	    ds.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
		coll_error("not_supported", -1,
			   "device %u does not support PM sampling; no metrics, trace only", d->dev);
		pm_off = 1;
		return -1;
	}
	CUpti_Device_GetChipName_Params cp = { .structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE };
	cp.deviceIndex = d->dev;
	if (coll_check(cuptiDeviceGetChipName(&cp), "cuptiDeviceGetChipName", "no metrics") ||
	    !cp.pChipName)
		return -1;
	snprintf(d->chip, sizeof(d->chip), "%s", cp.pChipName);
	CUpti_PmSampling_GetCounterAvailability_Params ca = { .structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE };
	ca.deviceIndex = d->dev;
	CUptiResult r = cuptiPmSamplingGetCounterAvailability(&ca);
	if (r == CUPTI_SUCCESS && ca.counterAvailabilityImageSize) {
		d->mc.avail = malloc(ca.counterAvailabilityImageSize);
		ca.pCounterAvailabilityImage = d->mc.avail;
		if (d->mc.avail)
			r = cuptiPmSamplingGetCounterAvailability(&ca);
	}
	if (r != CUPTI_SUCCESS) {
		if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
			coll_error("insufficient_privileges", (int)r,
				   "GPU performance counters are not permitted for this user "
				   "(NVreg_RestrictProfilingToAdminUsers); no metrics, trace only");
			pm_off = 1;
		} else {
			coll_check(r, "cuptiPmSamplingGetCounterAvailability", "no metrics, trace only");
		}
		return -1;
	}
	d->mc.host = pm_host(d->chip, d->mc.avail);
	int passes = 0;
	if (!d->mc.host || metrics_config(d->mc.host, d->chip, pm_names, pm_n, &d->mc.config,
				       &d->mc.config_size, &passes, err, sizeof(err)) != 0) {
		if (d->mc.host)
			coll_error("invalid_metric", -1, "%s; no metrics, trace only", err);
		pm_off = 1;
		return -1;
	}
	if (passes != 1) {
		coll_error("bad_config", -1,
			   "the set is %d passes for PM sampling, which takes one-pass sets; no "
			   "metrics, trace only (the Range Profiler replays: KGATE_ENGINE=range)",
			   passes);
		pm_off = 1;
		return -1;
	}
	if (pm_object_open(d, 1) != 0)
		return -1;
	d->img = calloc(1, d->img_size);
	d->q = calloc(PM_QUEUE, sizeof(*d->q));
	if (!d->img || !d->q || pm_image_init(d) != 0)
		return -1;
	if (pm_ev_create && (pm_ev_create(&d->ev0, 0) != 0 || pm_ev_create(&d->ev1, 0) != 0))
		d->ev0 = d->ev1 = NULL;
	pthread_mutex_init(&d->dec_mu, NULL);
	/* kernel activity off first (it adds instructions to every kernel) */
	if (pm_any_started++ == 0)
		pm_activity(0);
	CUpti_PmSampling_Start_Params st = { .structSize = CUpti_PmSampling_Start_Params_STRUCT_SIZE };
	st.pPmSamplingObject = d->obj;
	if (coll_check(cuptiPmSamplingStart(&st), "cuptiPmSamplingStart", "no metrics, trace only")) {
		if (--pm_any_started == 0)
			pm_activity(1);
		return -1;
	}
	d->b_first = pm_gap();
	d->seen_t1 = d->b_first;
	d->next_nvml = d->b_first + PM_NVML_EVERY_NS;
	d->started = 1;
	d->ever = 1;
	if (!pm_thread_on && pthread_create(&pm_thread, NULL, pm_decoder, NULL) == 0)
		pm_thread_on = 1;
	if (!pm_exit_registered && atexit(pm_atexit) == 0) {
		pm_exit_registered = 1;
		pm_exit_pid = getpid();
	}
	return 0;
}

static struct pm_dev *pm_find(CUcontext ctx, int create)
{
	uint32_t dev = 0;
	if (cuptiGetDeviceId(ctx, &dev) != CUPTI_SUCCESS)
		return NULL;
	for (size_t i = 0; i < PM_DEV_MAX; i++)
		if (pm_devs[i].used && pm_devs[i].dev == dev)
			return &pm_devs[i];
	if (!create || pm_off)
		return NULL;
	for (size_t i = 0; i < PM_DEV_MAX; i++) {
		struct pm_dev *d = &pm_devs[i];
		if (d->used)
			continue;
		memset(d, 0, sizeof(*d));
		d->used = 1;
		d->dev = dev;
		d->ctx = ctx;
		uint64_t t0 = pm_mono_ns();
		if (pm_setup(d) != 0) {
			d->failed = 1;
			if (d->obj) {
				CUpti_PmSampling_Disable_Params dp = { .structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE };
				dp.pPmSamplingObject = d->obj;
				(void)cuptiPmSamplingDisable(&dp);
				d->obj = NULL;
			}
		}
		COLL_DEBUG("PM sampling, device %u (%s): set-up %s, %.3f ms (interval %llu ns, "
			   "hardware buffer %zu MB, image %zu samples, %zu B)", dev, d->chip,
			   d->failed ? "failed" : "done", (double)(pm_mono_ns() - t0) / 1e6,
			   (unsigned long long)pm_interval_ns, pm_hwbuf >> 20, pm_img_samples,
			   d->img_size);
		return d;
	}
	return NULL;
}

void pmsample_prepare(CUcontext ctx)
{
	if (!ctx)
		return;
	pm_lock();
	if (!pm_off)
		pm_find(ctx, 1);
	pm_unlock();
}

int pmsample_usable(void)
{
	int ok;
	pm_lock();
	ok = !pm_off;
	pm_unlock();
	return ok;
}

/* ------------------------------------------------------------------ */
/* Per launch                                                          */

/* Under pm_mu: the decoder lags the clock by more than bound, or more
 * than qmax launches wait for their samples. */
static int pm_behind(const struct pm_dev *d, uint64_t now, uint64_t bound, size_t qmax)
{
	return d->seen_t1 + bound < now || d->qn >= qmax;
}

int pmsample_launch_enter(CUcontext ctx, const char *symbol, int64_t ordinal, int graph)
{
	if (coll_cfg.mode != COLL_METRICS || !ctx)
		return PROF_NO;
	int sel = 0;
	pm_lock();
	if (pm_off || launch_capture_active())
		goto no;
	pm_cur_over = 0;
	pm_cur_memop = graph == 2;
	if (graph) {
		/* a graph's kernels are not sampled: their samples go to a
		 * window of their own, and their trace records are kept; a
		 * memory operation (graph 2) is fenced the same way, with no
		 * record to keep */
		if (!pm_any_started)
			goto no;
		pm_cur = NULL;
		for (size_t i = 0; i < PM_DEV_MAX; i++)
			if (pm_devs[i].used && pm_devs[i].ctx == ctx && pm_devs[i].started)
				pm_cur = &pm_devs[i];
		if (!pm_cur)
			goto no;
		if (!pm_cur_memop)
			pm_activity(1);
	} else {
		int over = 0;
		sel = profiler_selects(symbol, &over);
		pm_cur = pm_find(ctx, 1);
		if (pm_cur && pm_cur->started && pm_cur->failed)
			pm_stop_dev(pm_cur); /* sampling failed: the trace goes on */
		if (!pm_cur || !pm_cur->started || pm_cur->failed) {
			COLL_DEBUG("launch %lld: not sampled (%s)", (long long)ordinal,
				   pm_off ? "sampling off" : "no sampling on its device");
			if (sel && pm_cur && pm_cur->ever)
				launch_missed_counters(); /* sampling stopped on its device */
			goto no;
		}
		pm_cur_over = sel && over;
		struct pm_dev *d = pm_cur;
		/* bounded backlog: samples come every interval, busy or idle,
		 * and one sample takes longer to decode than an interval on an
		 * H200, so waiting with sampling on never catches up.  Once the
		 * decoder lags the clock by the bound (or too many launches wait
		 * for their samples), the window ends: sampling stops, every
		 * sample is decoded, and it starts again (the GPU is idle here) */
		pthread_mutex_lock(&pm_mu);
		int behind = pm_behind(d, pm_ts(), pm_backlog_ns, PM_QUEUE - 1) ||
			     atomic_load(&d->oom);
		pthread_mutex_unlock(&pm_mu);
		if (behind) {
			uint64_t t_wait = pm_ts();
			pm_window_restart(d);
			uint64_t now = pm_ts();
			d->waits++;
			d->wait_ns += now - t_wait;
			COLL_DEBUG("launch %lld: waited %.3f ms for the decoder (window ended)",
				   (long long)ordinal, (double)(now - t_wait) / 1e6);
			if (d->failed || !d->started) {
				if (sel)
					launch_missed_counters();
				goto no;
			}
		}
		pthread_mutex_lock(&pm_mu);
		struct pm_launch *L = pm_at(d, d->qn++);
		memset(L, 0, sizeof(*L));
		L->ordinal = ordinal;
		L->kind = sel ? 1 : 0;
		L->dur_ns = NAN;
		if (d->qn == 1) {
			memcpy(L->v, d->pre, sizeof(L->v));
			L->lost = d->pre_lost;
			if (L->lost && d->pre_why && L->kind > 0)
				pm_lost_report(d, d->pre_why, d->pre_us);
		}
		memset(d->pre, 0, sizeof(d->pre));
		d->pre_lost = 0;
		d->pre_why = NULL;
		pthread_mutex_unlock(&pm_mu);
		COLL_DEBUG("launch %lld %s: %s", (long long)ordinal, symbol ? symbol : "?",
			   sel ? "sampled" : "filtered out (serialised, duration only)");
	}
	pm_cur_stream = NULL;
	pm_cur_ev = 0;
	if (graph) {
		struct pm_dev *d = pm_cur;
		pthread_mutex_lock(&pm_mu);
		struct pm_launch *L = pm_at(d, d->qn++);
		memset(L, 0, sizeof(*L));
		L->ordinal = -1;
		L->kind = -1;
		memset(d->pre, 0, sizeof(d->pre));
		d->pre_lost = 0;
		d->pre_why = NULL;
		pthread_mutex_unlock(&pm_mu);
		return PROF_HELD;
	}
	return sel ? PROF_SESSION : PROF_SESSION_OTHER;
no:
	pm_cur = NULL;
	pm_unlock();
	return PROF_NO;
}

void pmsample_on_enter(CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
		       const CUpti_CallbackData *cb)
{
	struct pm_dev *d = pm_cur;
	CUstream s;
	if (!d || pm_cur_ev || !launch_stream_of(dom, cbid, cb, &s))
		return;
	pm_cur_stream = s;
	pm_cur_ev = 1;
	if (d->ev0 && pm_ev_record && pm_ev_record(d->ev0, s) != 0)
		pm_cur_ev = 2; /* known stream, no event */
}

void pmsample_launch_exit(CUcontext ctx, int64_t ordinal, int decision, int failed)
{
	struct pm_dev *d = pm_cur;
	double dur = NAN;

	(void)ctx;
	pm_cur = NULL;
	if (!d) {
		pm_unlock();
		if (decision == PROF_SESSION || decision == PROF_SESSION_OTHER)
			launch_set_values(ordinal, NULL);
		return;
	}
	/* the kernel done, then an idle gap of two intervals */
	int synced = 0;
	if (pm_cur_ev == 1 && d->ev1 && pm_ev_record && pm_ev_sync &&
	    pm_ev_record(d->ev1, pm_cur_stream) == 0 && pm_ev_sync(d->ev1) == 0) {
		float ms = 0;
		synced = 1;
		if (pm_ev_elapsed && pm_ev_elapsed(&ms, d->ev0, d->ev1) == 0)
			dur = (double)ms * 1e6;
	}
	if (!synced && pm_ctx_sync)
		pm_ctx_sync();
	uint64_t b1 = pm_gap();
	if (decision == PROF_HELD && !pm_cur_memop)
		pm_activity(0);
	pthread_mutex_lock(&pm_mu);
	if (d->qn) {
		struct pm_launch *L = pm_at(d, d->qn - 1);
		L->b1 = b1;
		L->dur_ns = dur;
		L->failed = failed;
	}
	pthread_mutex_unlock(&pm_mu);
	if (pm_cur_over) {
		/* no launch can be selected any more: sampling ends, and later
		 * launches cost nothing */
		COLL_DEBUG("launch %lld: the launch count is reached; sampling stops", (long long)ordinal);
		pm_stop_all();
	}
	pm_unlock();
}

void pmsample_sync(void)
{
	/* the decoder runs on its own; a capture's begin or a teardown needs
	 * nothing stopped, but what is complete is handed over now */
	pm_lock();
	for (size_t i = 0; i < PM_DEV_MAX; i++) {
		if (pm_devs[i].used && pm_devs[i].started && !pm_devs[i].failed)
			pm_decode_dev(&pm_devs[i], 64);
	}
	pm_unlock();
}

void pmsample_on_context_destroy(CUcontext ctx)
{
	COLL_DEBUG("PM sampling: a context is destroyed");
	pm_lock();
	for (size_t i = 0; i < PM_DEV_MAX; i++)
		if (pm_devs[i].used && pm_devs[i].ctx == ctx)
			pm_stop_dev(&pm_devs[i]);
	pm_unlock();
}

static void pm_atexit(void)
{
	if (getpid() != pm_exit_pid)
		return;
	COLL_DEBUG("PM sampling: the process exits; sampling stops before the runtime's teardown");
	pm_lock();
	pm_stop_all();
	pm_unlock();
}

void pmsample_finish(void)
{
	COLL_DEBUG("PM sampling: finishing");
	pm_lock();
	pm_stop_all();
	pthread_mutex_lock(&pm_mu);
	pm_thread_stop = 1;
	pthread_mutex_unlock(&pm_mu);
	if (pm_thread_on)
		pthread_join(pm_thread, NULL);
	COLL_DEBUG("PM sampling: the decoding thread has ended");
	pm_thread_on = 0;
	for (size_t i = 0; i < PM_DEV_MAX; i++) {
		struct pm_dev *d = &pm_devs[i];
		if (!d->used)
			continue;
		metrics_cfg_free(&d->mc);
		free(d->img);
		free(d->q);
		memset(d, 0, sizeof(*d));
	}
	pm_unlock();
}
