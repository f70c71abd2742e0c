/*
 * launch.c: launch callbacks, launch ordinals and the correlation-id join.
 *
 * On each kernel-launch API (runtime and driver, Ex, cooperative, graph)
 * the launching thread takes the next launch ordinal (once per outermost
 * call: a runtime launch and the driver launch nested in it are one launch)
 * and records correlation id -> (ordinal, NVTX path) in a bounded table.
 * When the kernel's activity record arrives, possibly on another thread,
 * the join finds its ordinal and path and writes the kernel record.  In
 * metrics mode a profiled launch waits until both its activity record and
 * its profiler values are here (whichever comes second writes the record);
 * further activity records of the same launch (kernel replay passes) are
 * dropped and counted.  Kernels without a launch callback (graph nodes,
 * launches the table forgot) take a fresh ordinal when they arrive.
 *
 * While PM sampling, memory operations (the driver's cuMemset* and cuMemcpy*,
 * found by name) are fenced too: they run on the GPU (a memset is a kernel
 * of the driver's), so unfenced their instructions land in a neighbouring
 * launch's window.  They take no ordinal and make no record.
 */
#include "launch.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>


#include "kgate/records_format.h"
#include "nvtx.h"
#include "flush.h"
#include "pmsample.h"
#include "profiler.h"

/* ------------------------------------------------------------------ */
/* correlation id -> launch                                            */

#define CORR_BITS 19
#define CORR_N (1u << CORR_BITS)
#define CORR_LOCKS 64

struct corr_slot {
	uint32_t corr;
	uint8_t used, graph, done, from_main;
	int64_t ordinal;
	const char *path;
};

static struct corr_slot *corr_tab;
static pthread_mutex_t corr_mu[CORR_LOCKS];
static pthread_once_t corr_once = PTHREAD_ONCE_INIT;

static atomic_llong launch_next;     /* the next launch ordinal */
static atomic_ullong launch_unmatched, launch_replayed, launch_no_ts;
/* launches meant to be profiled and written without a single counter value
 * (the footer's "no_counters"; one error record at the end says so,
 * whatever the cause) */
static atomic_ullong launch_no_counters;

static void corr_init(void)
{
	for (int i = 0; i < CORR_LOCKS; i++)
		pthread_mutex_init(&corr_mu[i], NULL);
	corr_tab = calloc(CORR_N, sizeof(*corr_tab));
}

/* done: the launch has its record without an activity record (a profiling
 * session's launch); one that still arrives is dropped and counted. */
static void corr_put(uint32_t corr, int64_t ordinal, const char *path, int from_main, int graph,
		     int done)
{
	pthread_once(&corr_once, corr_init);
	if (!corr_tab)
		return;
	struct corr_slot *s = &corr_tab[corr & (CORR_N - 1)];
	pthread_mutex_t *mu = &corr_mu[corr % CORR_LOCKS];
	pthread_mutex_lock(mu);
	*s = (struct corr_slot){ corr, 1, (uint8_t)graph, (uint8_t)done, (uint8_t)from_main, ordinal,
				 path };
	pthread_mutex_unlock(mu);
}

/* ------------------------------------------------------------------ */
/* metrics mode: launches waiting for their values or their record     */

#define SEL_N 4096

struct sel_slot {
	int64_t ordinal; /* -1: free */
	int have_values;
	double *values;            /* NULL with have_values: profiling failed */
	struct coll_kernel *parked; /* the activity record, name owned */
	const char *path;
	int from_main; /* the path is the main thread's (nvtx_launch_path) */
	char *name; /* symbol name from the launch callback */
	int session;  /* in a profiling session: parked is built from the callback */
	int selected; /* session: the filter selected it (else its duration only) */
	int64_t step;  /* step replay: the step of its group's first pass (-1: none) */
	int step_passes; /* step replay: the passes, pass p from step + p */
};

static pthread_mutex_t sel_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sel_slot sel_tab[SEL_N];
static int sel_ready;

static void sel_init_locked(void)
{
	if (sel_ready)
		return;
	for (size_t i = 0; i < SEL_N; i++)
		sel_tab[i].ordinal = -1;
	sel_ready = 1;
}

/* ------------------------------------------------------------------ */
/* Writing kernel records                                              */

static void launch_dim3(struct jw *w, const char *key, const int32_t d[3])
{
	jw_key(w, key);
	jw_arr_open(w);
	for (int i = 0; i < 3; i++)
		jw_int(w, d[i]);
	jw_arr_close(w);
}

/* k may be NULL (values without an activity record); values may be NULL
 * (no profiler values); profiled says whether values were expected. */
static void launch_emit(const struct coll_kernel *k, const char *name, int64_t ordinal,
			const char *path, int from_main, const double *values, int profiled,
			int64_t step, int step_passes)
{
	struct jw w;
	int have_ts = k && (k->start || k->end);
	int dur_from_profiler = 0;

	jw_init(&w);
	jw_obj_open(&w);
	jw_kstr(&w, "type", "kernel");
	jw_kint(&w, "ordinal", ordinal);
	jw_kstr(&w, "name", name && *name ? name : "(unknown)");
	if (k) {
		jw_kint(&w, "device", k->device);
		jw_kint(&w, "context", k->context);
		jw_kint(&w, "stream", k->stream);
		jw_kint(&w, "corr", k->corr);
		if (have_ts && k->end >= k->start) {
			jw_kint(&w, "start", (int64_t)k->start);
			jw_kint(&w, "end", (int64_t)k->end);
		}
		launch_dim3(&w, "grid", k->grid);
		launch_dim3(&w, "block", k->block);
		jw_kint(&w, "regs", k->regs);
		jw_kint(&w, "smem_static", k->smem_static);
		jw_kint(&w, "smem_dynamic", k->smem_dynamic);
		jw_kint(&w, "local_per_thread", k->local_per_thread);
		if (k->graph_id)
			jw_kint(&w, "graph", k->graph_id);
	}
	if (path && *path) {
		jw_kstr(&w, "nvtx", path);
		if (from_main)
			jw_kstr(&w, "nvtx_from", "main_thread");
	}
	if (step >= 0) {
		jw_kint(&w, "step", step);
		jw_kint(&w, "step_passes", step_passes);
	}
	jw_key(&w, "metrics");
	jw_obj_open(&w);
	if (profiled) {
		int counters = 0, counted = 0;
		for (size_t i = 0; i < coll_cfg.n_metrics; i++) {
			const char *m = coll_cfg.metrics[i];
			if (strcmp(m, KG_M_DURATION) == 0) {
				if (!values || isnan(values[i]))
					continue; /* the trace's duration stands in */
				dur_from_profiler = 1;
			} else {
				counters++;
				counted += values && !isnan(values[i]);
			}
			if (values && !isnan(values[i])) {
				jw_kdbl(&w, m, values[i]);
			} else {
				jw_key(&w, m);
				jw_raw(&w, "null", 4);
				w.need_comma = 1;
			}
		}
		if (counters && !counted && coll_cfg.mode == COLL_METRICS)
			atomic_fetch_add(&launch_no_counters, 1);
	}
	/*
	 * Application replay: the reader adds every pass's "metrics" and takes
	 * the launch configuration (and end - start when "metrics" lacks the
	 * duration) from pass 0 only.  So later passes carry only their profiler
	 * values, and when another pass measures the duration pass 0 says null
	 * for it instead of the trace's value.
	 */
	int later_pass = coll_cfg.app_replay && coll_cfg.pass > 0;
	int dur_here = 0;
	for (size_t i = 0; i < coll_cfg.n_metrics; i++)
		dur_here |= strcmp(coll_cfg.metrics[i], KG_M_DURATION) == 0;
	int dur_elsewhere = coll_cfg.app_replay && coll_cfg.duration_asked && profiled &&
			    !dur_here;
	if (k && !later_pass) {
		if (dur_elsewhere) {
			jw_key(&w, KG_M_DURATION);
			jw_raw(&w, "null", 4);
			w.need_comma = 1;
		} else if (have_ts && k->end >= k->start && !dur_from_profiler) {
			jw_kdbl(&w, KG_M_DURATION, (double)(k->end - k->start));
		} else if (!have_ts && k->range_ns >= 0 && !dur_from_profiler) {
			jw_kdbl(&w, KG_M_DURATION, k->range_ns);
		}
		jw_kint(&w, KG_M_GRID, (int64_t)k->grid[0] * k->grid[1] * k->grid[2]);
		jw_kint(&w, KG_M_BLOCK, (int64_t)k->block[0] * k->block[1] * k->block[2]);
		jw_kint(&w, KG_M_REGS, k->regs);
		jw_kint(&w, KG_M_SMEM_ST, k->smem_static);
		jw_kint(&w, KG_M_SMEM_DYN, k->smem_dynamic);
		jw_kint(&w, KG_M_LOCAL, k->local_per_thread);
	}
	jw_obj_close(&w);
	jw_obj_close(&w);
	coll_write(&w, 1);
	jw_free(&w);
}

static struct coll_kernel *launch_copy(const struct coll_kernel *k)
{
	struct coll_kernel *c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	*c = *k;
	c->name = k->name ? strdup(k->name) : NULL;
	return c;
}

static void launch_free_kernel(struct coll_kernel *k)
{
	if (k) {
		free((char *)k->name);
		free(k);
	}
}

/* Under sel_mu: write what the slot has and free it. */
static void sel_flush_locked(struct sel_slot *s)
{
	if (s->ordinal < 0)
		return;
	if (s->parked || s->have_values)
		launch_emit(s->parked, s->parked ? s->parked->name : s->name, s->ordinal, s->path,
			    s->from_main, s->values, !s->session || s->selected,
			    s->step_passes ? s->step : -1, s->step_passes);
	launch_free_kernel(s->parked);
	free(s->values);
	free(s->name);
	memset(s, 0, sizeof(*s));
	s->ordinal = -1;
}

/* Under sel_mu: the slot for a profiled launch (a new one at launch time). */
static struct sel_slot *sel_get_locked(int64_t ordinal, int create)
{
	sel_init_locked();
	struct sel_slot *s = &sel_tab[ordinal & (SEL_N - 1)];
	if (s->ordinal == ordinal)
		return s;
	if (!create)
		return NULL;
	sel_flush_locked(s); /* an old launch never completed: write what it has */
	s->ordinal = ordinal;
	return s;
}

void launch_set_steps(int64_t ordinal, int64_t step, int passes)
{
	pthread_mutex_lock(&sel_mu);
	struct sel_slot *s = sel_get_locked(ordinal, 0);
	if (s) {
		s->step = step;
		s->step_passes = passes;
	}
	pthread_mutex_unlock(&sel_mu);
}

void launch_set_values(int64_t ordinal, const double *values)
{
	pthread_mutex_lock(&sel_mu);
	struct sel_slot *s = sel_get_locked(ordinal, 0);
	if (s && s->session && !s->selected) {
		/* filtered out, but its kernel made a range: its duration only */
		for (size_t i = 0; values && s->parked && i < coll_cfg.n_metrics; i++)
			if (strcmp(coll_cfg.metrics[i], KG_M_DURATION) == 0 && !isnan(values[i]))
				s->parked->range_ns = values[i];
		s->have_values = 1;
		sel_flush_locked(s);
	} else if (s) {
		s->have_values = 1;
		if (values && coll_cfg.n_metrics) {
			s->values = malloc(coll_cfg.n_metrics * sizeof(double));
			if (s->values)
				memcpy(s->values, values, coll_cfg.n_metrics * sizeof(double));
		}
		if (s->parked)
			sel_flush_locked(s);
	}
	pthread_mutex_unlock(&sel_mu);
}

void launch_on_kernel(const struct coll_kernel *k)
{
	int64_t ordinal = -1;
	const char *path = "";
	int profiled = 0, found = 0, from_main = 0;

	if (flush_is_kernel(k->name))
		return; /* the collector's own cache flush (kernel replay) */
	if (!k->start && !k->end)
		atomic_fetch_add(&launch_no_ts, 1);
	pthread_once(&corr_once, corr_init);
	if (corr_tab) {
		struct corr_slot *s = &corr_tab[k->corr & (CORR_N - 1)];
		pthread_mutex_t *mu = &corr_mu[k->corr % CORR_LOCKS];
		pthread_mutex_lock(mu);
		if (s->used && s->corr == k->corr) {
			found = 1;
			path = s->path;
			from_main = s->from_main;
			if (!s->graph) {
				if (!s->done) {
					ordinal = s->ordinal;
					s->done = 1;
				} else if (coll_cfg.mode == COLL_METRICS) {
					found = 2; /* a replay pass of a launch already seen */
				}
			}
		}
		pthread_mutex_unlock(mu);
	}
	if (found == 2) {
		atomic_fetch_add(&launch_replayed, 1);
		return;
	}
	if (!found)
		atomic_fetch_add(&launch_unmatched, 1);
	if (ordinal < 0)
		ordinal = atomic_fetch_add(&launch_next, 1);
	/* a profiled launch has a slot (whichever of its correlation ids the
	 * record carries: the range may have started in a nested call) */
	if (coll_cfg.mode == COLL_METRICS && found) {
		pthread_mutex_lock(&sel_mu);
		struct sel_slot *s = sel_get_locked(ordinal, 0);
		if (s)
			profiled = 1;
		if (s && s->have_values) {
			launch_emit(k, k->name, ordinal, path, from_main, s->values, 1, -1, 0);
			free(s->values);
			s->values = NULL;
			s->have_values = 0;
			sel_flush_locked(s);
			pthread_mutex_unlock(&sel_mu);
			return;
		}
		if (s && !s->parked) {
			s->parked = launch_copy(k);
			if (s->parked) {
				pthread_mutex_unlock(&sel_mu);
				return;
			}
		}
		pthread_mutex_unlock(&sel_mu);
	}
	launch_emit(k, k->name, ordinal, path, from_main, NULL, profiled, -1, 0);
}

/* ------------------------------------------------------------------ */
/* Launch callbacks                                                    */

static __thread int launch_depth;
static __thread int64_t launch_ord;
static __thread const char *launch_path;
static __thread int launch_from_main; /* launch_path is the main thread's */
static __thread int launch_graph;
static __thread int launch_dec;        /* metrics mode: the profiler's decision (PROF_*) */
static __thread uint32_t launch_outer_corr; /* the outermost call's correlation id */
static __thread int launch_pending;    /* metrics mode: not yet offered to the profiler */
static __thread int launch_prof_depth; /* the depth whose exit stops the range */

/* ------------------------------------------------------------------ */
/* Stream capture                                                      */

/*
 * A launch made while a stream is being captured is not executed: it
 * becomes a graph node, and its kernels run (and get trace records) when
 * the graph is launched.  Such launches must not be profiled (a range
 * around a captured launch makes the decode fail and invalidates the
 * capture).  Capture is counted process-wide, since with the default
 * global capture mode an unsafe call on any thread breaks the capture.
 */
static atomic_int launch_capturing;

/* 1 begin capture, -1 end capture, 0 other. */
static int launch_capture_kind(CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
		switch (cbid) {
		case CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_ptsz_v10000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_v12030:
		case CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_ptsz_v12030:
			return 1;
		case CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_ptsz_v10000:
			return -1;
		default:
			return 0;
		}
	}
	if (dom != CUPTI_CB_DOMAIN_DRIVER_API)
		return 0;
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture:
	case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2:
	case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph:
	case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz:
		return 1;
	case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture:
	case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz:
		return -1;
	default:
		return 0;
	}
}

/* Nesting: a runtime capture call and the driver call inside it are one. */
static __thread int capture_depth;
static __thread int capture_counted; /* this outermost call changed the count */

static void launch_on_capture(int kind, const CUpti_CallbackData *cb)
{
	if (cb->callbackSite == CUPTI_API_ENTER) {
		if (capture_depth++ == 0) {
			capture_counted = 0;
			/* count at the begin's entry, so that nothing inside it is
			 * profiled; the end's exit uncounts.  Then decode what is
			 * waiting, at this API entry, outside the capture: the sync
			 * takes the profiler's lock, so a launch of another thread
			 * that is being profiled now ends first, and launches that
			 * enter after the count are not profiled (profiler work
			 * during a capture invalidated it, on an H200) */
			if (kind > 0) {
				atomic_fetch_add(&launch_capturing, 1);
				capture_counted = 1;
				profiler_sync();
			}
		}
		return;
	}
	if (capture_depth == 0 || --capture_depth > 0)
		return;
	if (kind > 0) {
		/* a failed begin starts no capture */
		int failed = cb->functionReturnValue &&
			     *(const int *)cb->functionReturnValue != 0;
		if (failed && capture_counted)
			atomic_fetch_sub(&launch_capturing, 1);
	} else {
		/* an end, failed or not, ends the capture (an invalidated capture
		 * also ends there) */
		int n = atomic_load(&launch_capturing);
		while (n > 0 && !atomic_compare_exchange_weak(&launch_capturing, &n, n - 1))
			;
	}
}

/* A call that may destroy a context: decode the profiler's ranges first
 * (an API entry, where driver calls are safe). */
static int launch_is_teardown(CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API)
		return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020;
	return dom == CUPTI_CB_DOMAIN_DRIVER_API &&
	       (cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy ||
		cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2 ||
		cbid == CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRelease ||
		cbid == CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRelease_v2 ||
		cbid == CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset ||
		cbid == CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset_v2);
}

int launch_capture_active(void)
{
	return atomic_load(&launch_capturing) > 0;
}

/* The driver's memory operations, by callback id (launch_enable). */
static uint8_t launch_memop[CUPTI_DRIVER_TRACE_CBID_SIZE];

/* 1 kernel launch, 2 graph launch, 3 memory operation, 0 other. */
static int launch_kind(CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
		switch (cbid) {
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
		case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
		case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
			return 1;
		case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
			return 2;
		default:
			return 0;
		}
	}
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
		return 1;
	case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
	case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
		return 2;
	default:
		return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && launch_memop[cbid] ? 3 : 0;
	}
}

void launch_enable(CUpti_SubscriberHandle sub)
{
	static const CUpti_CallbackId rt[] = {
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
		CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
		CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
		CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
		CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
		CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
		CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_ptsz_v10000,
		CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_v12030,
		CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_ptsz_v12030,
		CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
		CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_ptsz_v10000,
		CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020,
	};
	static const CUpti_CallbackId drv[] = {
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
		CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture,
		CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,
		CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph,
		CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture,
		CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy,
		CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2,
		CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRelease,
		CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRelease_v2,
		CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset,
		CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset_v2,
	};
	int bad = 0;

	for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++)
		bad |= cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, rt[i]) !=
		       CUPTI_SUCCESS;
	for (size_t i = 0; i < sizeof(drv) / sizeof(drv[0]); i++)
		bad |= cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, drv[i]) !=
		       CUPTI_SUCCESS;
	if (bad)
		coll_error("cupti_error", -1,
			   "some launch callbacks could not be enabled; their kernels carry no "
			   "NVTX path");
	/* PM sampling fences memory operations as well: every cuMemset* and
	 * cuMemcpy* of the driver (the runtime's calls go through them) */
	if (coll_cfg.mode != COLL_METRICS || !pmsample_engine())
		return;
	size_t n = 0;
	for (CUpti_CallbackId id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; id++) {
		const char *name = NULL;
		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) != CUPTI_SUCCESS ||
		    !name || (strncmp(name, "cuMemset", 8) != 0 && strncmp(name, "cuMemcpy", 8) != 0))
			continue;
		if (cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, id) == CUPTI_SUCCESS) {
			launch_memop[id] = 1;
			n++;
		}
	}
	COLL_DEBUG("PM sampling: %zu memory operations of the driver fenced", n);
}

/* A memory operation while PM sampling: fenced as a graph launch is (its
 * samples in a window no launch gets), outside any launch call. */
static __thread int memop_depth, memop_dec;

static void launch_on_memop(const CUpti_CallbackData *cb)
{
	if (launch_depth > 0)
		return; /* inside a launch call: the launch is fenced already */
	if (cb->callbackSite == CUPTI_API_ENTER) {
		if (memop_depth++ == 0)
			memop_dec = cb->context ? profiler_launch_enter(cb->context, NULL, -1, 2, NULL)
						: PROF_NO;
	} else if (memop_depth > 0 && --memop_depth == 0 && memop_dec != PROF_NO) {
		profiler_launch_exit(cb->context, -1, memop_dec, 0);
		memop_dec = PROF_NO;
	}
}

typedef CUresult (*launch_attr_fn)(int *, CUfunction_attribute, CUfunction);

/*
 * A profiling session's launch has no activity record: its launch
 * configuration comes from the launch call's parameters (the driver call
 * nested in a runtime launch overwrites what the runtime call gave, and
 * knows the function, so registers and static and local memory too).
 */
/* The launch call's function, stream, grid, block and dynamic shared
 * memory from its parameters; 0 when the call is one of the launches
 * known here. */
static int launch_params(CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
			 const CUpti_CallbackData *cb, CUfunction *fp, CUstream *stp, unsigned g[3],
			 unsigned b[3], unsigned *smemp, int *per_threadp)
{
	const void *p = cb->functionParams;
	CUfunction f = NULL;
	CUstream st = NULL;
	unsigned smem = 0;
	int per_thread = 0;

	if (!p)
		return -1;
	if (dom == CUPTI_CB_DOMAIN_DRIVER_API) {
		switch (cbid) {
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
			per_thread = 1;
			/* fall through */
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel: {
			/* the cooperative and _ptsz forms begin alike */
			const cuLaunchKernel_params *q = p;
			f = q->f;
			g[0] = q->gridDimX, g[1] = q->gridDimY, g[2] = q->gridDimZ;
			b[0] = q->blockDimX, b[1] = q->blockDimY, b[2] = q->blockDimZ;
			smem = q->sharedMemBytes;
			st = q->hStream;
			break;
		}
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
			per_thread = 1;
			/* fall through */
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
			const cuLaunchKernelEx_params *q = p;
			if (!q->config)
				return -1;
			f = q->f;
			g[0] = q->config->gridDimX, g[1] = q->config->gridDimY, g[2] = q->config->gridDimZ;
			b[0] = q->config->blockDimX, b[1] = q->config->blockDimY, b[2] = q->config->blockDimZ;
			smem = q->config->sharedMemBytes;
			st = q->config->hStream;
			break;
		}
		default:
			return -1;
		}
	} else {
		switch (cbid) {
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
			per_thread = 1;
			/* fall through */
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000: {
			const cudaLaunchKernel_v7000_params *q = p;
			g[0] = q->gridDim.x, g[1] = q->gridDim.y, g[2] = q->gridDim.z;
			b[0] = q->blockDim.x, b[1] = q->blockDim.y, b[2] = q->blockDim.z;
			smem = (unsigned)q->sharedMem;
			st = (CUstream)q->stream;
			break;
		}
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
			per_thread = 1;
			/* fall through */
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060: {
			const cudaLaunchKernelExC_v11060_params *q = p;
			if (!q->config)
				return -1;
			g[0] = q->config->gridDim.x, g[1] = q->config->gridDim.y, g[2] = q->config->gridDim.z;
			b[0] = q->config->blockDim.x, b[1] = q->config->blockDim.y, b[2] = q->config->blockDim.z;
			smem = (unsigned)q->config->dynamicSmemBytes;
			st = (CUstream)q->config->stream;
			break;
		}
		default:
			return -1;
		}
	}
	*fp = f;
	*stp = st;
	*smemp = smem;
	*per_threadp = per_thread;
	return 0;
}

int launch_stream_of(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const CUpti_CallbackData *cb,
		     CUstream *out)
{
	CUfunction f;
	CUstream st = NULL;
	unsigned g[3], b[3], smem;
	int per_thread = 0;

	if (!cb || launch_params(dom, cbid, cb, &f, &st, g, b, &smem, &per_thread) != 0)
		return 0;
	*out = !st && per_thread ? CU_STREAM_PER_THREAD : st;
	return 1;
}

static CUstream launch_stream(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	CUstream st = NULL;

	return launch_stream_of(dom, cbid, cb, &st) ? st : NULL;
}

static void launch_config(struct coll_kernel *k, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
			  const CUpti_CallbackData *cb)
{
	static launch_attr_fn attr;
	static int attr_looked;
	CUfunction f = NULL;
	CUstream st = NULL;
	unsigned g[3], b[3], smem = 0;
	int per_thread = 0;

	if (launch_params(dom, cbid, cb, &f, &st, g, b, &smem, &per_thread) != 0)
		return;
	for (int i = 0; i < 3; i++) {
		k->grid[i] = (int32_t)g[i];
		k->block[i] = (int32_t)b[i];
	}
	k->smem_dynamic = (int32_t)smem;
	uint32_t sid = 0;
	if (cuptiGetStreamIdEx(cb->context, st, (uint8_t)per_thread, &sid) == CUPTI_SUCCESS)
		k->stream = sid;
	if (!f)
		return;
	if (!attr_looked) {
		*(void **)&attr = coll_cuda_sym("cuFuncGetAttribute");
		attr_looked = 1;
	}
	int v;
	if (attr && attr(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f) == CUDA_SUCCESS)
		k->regs = (uint16_t)v;
	if (attr && attr(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) == CUDA_SUCCESS)
		k->smem_static = v;
	if (attr && attr(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f) == CUDA_SUCCESS)
		k->local_per_thread = (uint32_t)v;
}

/* The record of a session's launch, from its callback (no timestamps). */
static struct coll_kernel *launch_new_kernel(const CUpti_CallbackData *cb)
{
	struct coll_kernel *k = calloc(1, sizeof(*k));
	uint32_t id = 0;

	if (!k)
		return NULL;
	k->range_ns = -1;
	k->name = cb->symbolName ? strdup(cb->symbolName) : NULL;
	k->corr = cb->correlationId;
	if (cuptiGetDeviceId(cb->context, &id) == CUPTI_SUCCESS)
		k->device = id;
	if (cuptiGetContextId(cb->context, &id) == CUPTI_SUCCESS)
		k->context = id;
	return k;
}

static int launch_in_session(void)
{
	return launch_dec == PROF_SESSION || launch_dec == PROF_SESSION_OTHER ||
	       launch_dec == PROF_STEP_LATER;
}

/* Metrics mode, at the first enter of this launch that knows its context
 * (a runtime launch before the runtime made its context current may not):
 * ask the profiler whether it profiles the launch, and how. */
static void launch_try_profile(CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
			       const CUpti_CallbackData *cb)
{
	struct sel_slot *s;

	launch_pending = 0;
	if (launch_graph) {
		launch_dec = profiler_launch_enter(cb->context, NULL, -1, 1, NULL);
		if (launch_dec != PROF_NO)
			launch_prof_depth = launch_depth;
		return;
	}
	/* the slot first, so that values always find it */
	pthread_mutex_lock(&sel_mu);
	s = sel_get_locked(launch_ord, 1);
	s->path = launch_path;
	s->from_main = launch_from_main;
	s->name = cb->symbolName ? strdup(cb->symbolName) : NULL;
	pthread_mutex_unlock(&sel_mu);
	launch_dec = profiler_launch_enter(cb->context, cb->symbolName, launch_ord, 0,
					   launch_stream(dom, cbid, cb));
	if (launch_dec != PROF_NO)
		launch_prof_depth = launch_depth;
	pthread_mutex_lock(&sel_mu);
	s = sel_get_locked(launch_ord, 0);
	if (s && launch_in_session()) {
		s->session = 1;
		s->selected = launch_dec == PROF_SESSION;
		if (!s->parked)
			s->parked = launch_new_kernel(cb);
		if (s->parked) {
			launch_config(s->parked, dom, cbid, cb);
			s->parked->corr = launch_outer_corr;
		}
	} else if (s && launch_dec != PROF_RANGE) {
		free(s->name);
		memset(s, 0, sizeof(*s));
		s->ordinal = -1;
	}
	pthread_mutex_unlock(&sel_mu);
	/* decided in a nested call: the outer call's id has no record either */
	if (launch_in_session() && launch_depth > 1)
		corr_put(launch_outer_corr, launch_ord, launch_path, launch_from_main, 0, 1);
}

void launch_on_callback(CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
			const CUpti_CallbackData *cb)
{
	int kind = launch_kind(dom, cbid);

	if (!cb || flush_busy())
		return; /* the collector's own cache flush is no launch of the program */
	if (kind == 3) {
		launch_on_memop(cb);
		return;
	}
	if (!kind) {
		if (coll_cfg.mode == COLL_METRICS && cb->callbackSite == CUPTI_API_ENTER &&
		    launch_is_teardown(dom, cbid)) {
			profiler_sync();
			return;
		}
		int ck = launch_capture_kind(dom, cbid);
		if (ck && coll_cfg.mode == COLL_METRICS)
			launch_on_capture(ck, cb);
		return;
	}
	if (cb->callbackSite == CUPTI_API_ENTER) {
		if (launch_depth++ == 0) {
			coll_first_launch(cb->context);
			launch_graph = kind == 2;
			launch_path = nvtx_launch_path(&launch_from_main);
			launch_ord = launch_graph ? -1 : atomic_fetch_add(&launch_next, 1);
			launch_dec = PROF_NO;
			launch_outer_corr = cb->correlationId;
			/* a launch into a capturing stream is not executed now:
			 * never profiled (its graph's launch is traced later) */
			launch_pending = coll_cfg.mode == COLL_METRICS && !launch_capture_active();
		}
		if (launch_depth == 1 && coll_cfg.mode == COLL_METRICS)
			COLL_DEBUG("launch %lld enters: %s%s%s", (long long)launch_ord,
				   launch_graph ? "graph launch" : launch_pending ? "offered" : "a capture is on",
				   cb->context ? "" : ", no context yet", cb->symbolName ? "" : ", no symbol");
		if (launch_pending && cb->context) {
			launch_try_profile(dom, cbid, cb);
		} else if (launch_in_session() && dom == CUPTI_CB_DOMAIN_DRIVER_API) {
			/* the driver call inside a runtime launch: its parameters
			 * name the function */
			pthread_mutex_lock(&sel_mu);
			struct sel_slot *s = sel_get_locked(launch_ord, 0);
			if (s && s->parked)
				launch_config(s->parked, dom, cbid, cb);
			pthread_mutex_unlock(&sel_mu);
		}
		if (launch_dec != PROF_NO)
			pmsample_on_enter(dom, cbid, cb);
		corr_put(cb->correlationId, launch_ord, launch_path, launch_from_main, launch_graph,
			 launch_in_session());
	} else if (launch_depth > 0) {
		if (launch_dec != PROF_NO && launch_depth == launch_prof_depth) {
			int failed = cb->functionReturnValue &&
				     *(const int *)cb->functionReturnValue != 0;
			profiler_launch_exit(cb->context, launch_ord, launch_dec, failed);
			launch_dec = PROF_NO;
		}
		if (--launch_depth == 0)
			launch_pending = 0;
	}
}

void launch_finish(void)
{
	pthread_mutex_lock(&sel_mu);
	if (sel_ready) {
		for (size_t i = 0; i < SEL_N; i++)
			sel_flush_locked(&sel_tab[i]);
	}
	pthread_mutex_unlock(&sel_mu);
	/* never a silent gap: whatever kept a profiled launch from its
	 * counters (an error record before may say what), the end says how
	 * many have none */
	unsigned long long n = atomic_load(&launch_no_counters);
	if (n)
		coll_error("no_counters", -1,
			   "%llu launch%s meant to be profiled %s no counters", n,
			   n == 1 ? "" : "es", n == 1 ? "has" : "have");
}

void launch_missed_counters(void)
{
	atomic_fetch_add(&launch_no_counters, 1);
}

void launch_footer_fields(struct jw *w)
{
	jw_kint(w, "unmatched", (int64_t)atomic_load(&launch_unmatched));
	jw_kint(w, "replayed", (int64_t)atomic_load(&launch_replayed));
	jw_kint(w, "no_timestamp", (int64_t)atomic_load(&launch_no_ts));
	jw_kint(w, "no_counters", (int64_t)atomic_load(&launch_no_counters));
}
