/*
 * profiler.c: metrics mode, the CUPTI 13 Range Profiler.
 *
 * One auto range per kernel launch, so that each range is exactly one
 * launch whose ordinal, name and NVTX path the launch callback knows
 * (auto-range names are only numbers): the i-th range of the counter data
 * image is the i-th launch recorded as pending.  Two ways:
 *
 * - A one-pass set (the default set on GH100): one long session per context
 *   with user replay (one pass needs no replay).  The first selected launch
 *   starts it; every kernel launched while it is open makes a range, so
 *   every launch of the process holds the profiler's lock from its API entry
 *   to its exit while a session may be open (ranges in launch order, across
 *   threads).  The session stops, and its ranges are decoded and evaluated,
 *   when a batch is full (KGATE_PROFILE_BATCH, default 512), when the filter
 *   can select no more launches, at a capture's begin, a graph launch, a
 *   reset or context destruction, and at exit; the next selected launch
 *   starts it again.  Launches the filter leaves out that come while it is
 *   open keep only their range's duration; after PROF_OTHERS_MAX of them in
 *   a row the session stops too.  Measured on an H200 (CUPTI
 *   13.0): about 1 ms a launch against 17 ms with kernel replay, the same
 *   instruction counts as ncu, two threads launching at once matched.  Kernel
 *   activity records are off while a session is open (with them on, CUPTI
 *   adds about 8 instructions a warp to every kernel of a user-replay range):
 *   such a launch's record is built from its callback and its range.
 *   KGATE_SESSION=0 keeps kernel replay for one-pass sets.
 * - A multi-pass set: kernel replay, cuptiRangeProfilerStart in the launch
 *   callback's enter and Stop in its exit (CUPTI replays the kernel inside
 *   the launch call), decoded in batches (default 128).  A launch from a
 *   thread other than the one that enabled the profiler first decodes what
 *   is waiting and is decoded on its own (with two threads launching at once
 *   ranges went missing): a missing range is an error record
 *   ("range_missing"), never a value matched to the wrong launch.  The
 *   Activity API stays on, for timestamps and launch configuration.
 *
 * Selection (KGATE_KERNELS, KGATE_LAUNCH_SKIP, KGATE_LAUNCH_COUNT) follows
 * ncu's -k / --launch-skip / --launch-count: skip and count apply to the
 * matching launches.  KGATE_KERNELS is an exact name (mangled, demangled or
 * the function's base name) or "regex:" + a POSIX ERE matched against the
 * demangled name; __cxa_demangle is used when the process has it (C++ and
 * PyTorch processes do), else the mangled name is matched.
 * KGATE_KERNEL_NAME_BASE (function | demangled | mangled), as ncu's
 * --kernel-name-base, matches both against that one name only.
 *
 * Application replay (KGATE_REPLAY=application): the metric set is split
 * into groups that are one pass each (metrics_split), the runner runs the
 * process once per group and KGATE_PASS picks this run's group (kernel
 * replay of that one pass).
 */
#include "profiler.h"
#include "pmsample.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "coll.h"
#include "flush.h"
#include "kgate/records_format.h"
#include "launch.h"
#include "metrics.h"

#define PROF_CTX_MAX 16
#define PROF_ERR_MAX 8 /* error records per kind before going quiet */
/* Ranges decoded together (KGATE_PROFILE_BATCH, 1..PROF_BATCH_MAX); the
 * counter data image holds PROF_SLACK more, so that a launch that makes
 * CUPTI count an extra range is seen (then values cannot be matched). */
#define PROF_BATCH_DEFAULT 128
/* A session's default: on an H200 (docs/PERFORMANCE.md) 512 ranges a batch
 * cost 0.9 ms a launch against 1.1 ms with 128 (the stop, evaluation and
 * restart of each batch spread over more launches), for 0.35 s more at the
 * first start, whose cost grows with the image (0.26-0.37 s for 132 ranges,
 * 0.61-0.64 s for 516, 1.2-1.3 s for 1028). */
#define PROF_SESSION_BATCH_DEFAULT 512
/*
 * Launches the filter leaves out, in a row, that an open session takes as
 * ranges (about 1 ms each on an H200) before it stops: stopping, decoding
 * and starting again cost about 27 ms (docs/PERFORMANCE.md), so after that
 * many it stops (the rent-or-buy rule: never more than twice the cheaper of
 * the two), and launches left out cost nothing until the next selected one.
 */
#define PROF_OTHERS_MAX 24
#define PROF_BATCH_MAX 1024
#define PROF_SLACK 4

/* What a waiting launch of a session is (pending_sel). */
enum {
	PROF_SEL_OTHER = 0, /* left out by the filter; its kernel made a range (auto ranges) */
	PROF_SEL_RANGE = 1, /* profiled: its range has its values */
	PROF_SEL_BARE = 2,  /* left out; no range (user ranges): a record, maybe a duration */
	PROF_SEL_FLUSH = 3, /* the cache flush's kernel (auto ranges): its range is dropped */
};

struct prof_ctx {
	CUcontext ctx;
	int failed;             /* setup failed: never profile this context */
	int enabled;            /* Range Profiler enabled and configured */
	char chip[64];
	struct metrics_cfg mc;
	uint8_t *counter;
	size_t counter_size;
	CUpti_RangeProfiler_Object *obj;
	int64_t *pending;       /* launch ordinal of each launch waiting (-1: a flush) */
	uint8_t *pending_sel;   /* PROF_SEL_*: what each waiting launch is */
	size_t n_pending;
	size_t n_ranges;        /* ranges the waiting launches made */
	CUevent *ev0, *ev1;     /* KGATE_DURATION=events: around each waiting launch */
	pthread_t owner;        /* the thread that enabled the profiler */
	int session;            /* one-pass set: one long user-replay session */
	int open;               /* session: started, not yet stopped */
	int others;             /* session: launches left out in a row since the last selected one */
	int step;               /* step replay: pass p of a group collected on its p-th step */
	char **step_names;      /* step replay: the first pass's launches, by name */
	size_t step_idx;        /* step replay, a later pass: launches so far */
	int step_pass;          /* step replay: the pass the open step collects */
	int64_t step_first;     /* step replay: the group's first step */
	int step_broken;        /* step replay: a step's launches differ from the first's */
	char step_why[256];
};

typedef char *(*prof_demangle_fn)(const char *, char *, size_t *, int *);

/*
 * The profiler's lock, held from a profiled launch's API entry to its exit,
 * and taken in turn: a ticket lock.  A plain mutex let one thread that
 * launches back to back take it again before a waiting thread woke (15
 * launches in a row on an H200), so the other thread's launch waited until
 * a stream capture had begun and went unprofiled.
 */
static pthread_mutex_t prof_tk_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t prof_tk_cv = PTHREAD_COND_INITIALIZER;
static unsigned long prof_tk_next, prof_tk_serving;

static void prof_lock(void)
{
	pthread_mutex_lock(&prof_tk_mu);
	unsigned long me = prof_tk_next++;
	while (me != prof_tk_serving)
		pthread_cond_wait(&prof_tk_cv, &prof_tk_mu);
	pthread_mutex_unlock(&prof_tk_mu);
}

static void prof_unlock(void)
{
	pthread_mutex_lock(&prof_tk_mu);
	prof_tk_serving++;
	pthread_cond_broadcast(&prof_tk_cv);
	pthread_mutex_unlock(&prof_tk_mu);
}
static struct prof_ctx prof_ctxs[PROF_CTX_MAX];
static size_t prof_n_ctx;
static int prof_off;          /* profiling disabled for the process */
static int prof_failed;       /* ... because a profiler call failed mid-run */
static int prof_have_regex;
static regex_t prof_regex;
static prof_demangle_fn prof_demangle;
static long prof_matched;     /* matching launches so far */
static struct prof_ctx *prof_active;
static int prof_active_foreign; /* launched off the profiler's own thread */
static double *prof_values;
static int prof_errs_launch;
static int prof_split_done;
static size_t prof_batch = PROF_BATCH_DEFAULT; /* ranges per decode */
static size_t prof_cap = PROF_BATCH_DEFAULT + PROF_SLACK; /* ranges in the image */
static int prof_batch_set; /* KGATE_PROFILE_BATCH given */
static int prof_session_ok = 1; /* KGATE_SESSION: 0 keeps kernel replay for one-pass sets */
static int prof_any_session;    /* some context profiles in a session */
static int prof_n_open;         /* sessions open now */
static int64_t prof_step_no = -1; /* step replay: pushes of the step range so far, less 1 */

static void prof_fail_locked(CUptiResult r, const char *what);
static void prof_give_locked(struct prof_ctx *pc, size_t base);
static void prof_step_abandon_locked(struct prof_ctx *pc, int push, const char *why);

/*
 * KGATE_DURATION=events: a session's durations from CUDA events recorded on
 * the launch's stream around it (a user range's own duration is inflated:
 * 59 us for a 5 us kernel on an H200; kernel activity records would change
 * the counts).  The driver's event functions are looked up in the process.
 */
typedef CUresult (*prof_evcreate_fn)(CUevent *, unsigned);
typedef CUresult (*prof_evrecord_fn)(CUevent, CUstream);
typedef CUresult (*prof_evsync_fn)(CUevent);
typedef CUresult (*prof_evtime_fn)(float *, CUevent, CUevent);
static struct {
	int looked, ok;
	prof_evcreate_fn create;
	prof_evrecord_fn record;
	prof_evsync_fn sync;
	prof_evtime_fn elapsed;
} prof_ev;
static CUstream prof_cur_stream; /* the running launch's stream (under the lock) */
static int prof_dur_idx = -1;    /* the duration's index in the set */

static int prof_events_lookup(void)
{
	if (!prof_ev.looked) {
		prof_ev.looked = 1;
		*(void **)&prof_ev.create = coll_cuda_sym("cuEventCreate");
		*(void **)&prof_ev.record = coll_cuda_sym("cuEventRecord");
		*(void **)&prof_ev.sync = coll_cuda_sym("cuEventSynchronize");
		*(void **)&prof_ev.elapsed = coll_cuda_sym("cuEventElapsedTime_v2");
		if (!prof_ev.elapsed)
			*(void **)&prof_ev.elapsed = coll_cuda_sym("cuEventElapsedTime");
		prof_ev.ok = prof_ev.create && prof_ev.record && prof_ev.sync && prof_ev.elapsed;
		if (!prof_ev.ok)
			coll_error("not_supported", -1, "KGATE_DURATION=events: the driver's event "
				   "functions were not found; durations from the ranges");
	}
	return prof_ev.ok ? 0 : -1;
}

/* Record the i-th waiting launch's event (which: 0 before, 1 after). */
static void prof_event_record(struct prof_ctx *pc, size_t i, int which)
{
	CUevent *ev = which ? pc->ev1 : pc->ev0;

	if (!ev || i >= prof_cap)
		return;
	if (!ev[i] && prof_ev.create(&ev[i], CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
		ev[i] = NULL;
		return;
	}
	/* a failed record makes the elapsed time fail: no duration */
	(void)prof_ev.record(ev[i], prof_cur_stream);
}

/* The i-th waiting launch's duration from its events, ns; NAN if none. */
static double prof_event_ns(struct prof_ctx *pc, size_t i)
{
	float ms = 0;

	if (!pc->ev0 || !pc->ev0[i] || !pc->ev1[i] || prof_ev.sync(pc->ev1[i]) != CUDA_SUCCESS ||
	    prof_ev.elapsed(&ms, pc->ev0[i], pc->ev1[i]) != CUDA_SUCCESS)
		return NAN;
	return (double)ms * 1e6;
}

/* KGATE_DEBUG timings: a monotonic clock in ms, the running range's start. */
static double prof_t_start, prof_start_ms;
static double prof_ms(void)
{
	struct timespec ts;
	if (!coll_cfg.debug)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------------ */
/* Selection                                                           */

/* The function's base name in a demangled signature: "void ns::f<int>(x)"
 * -> "f".  Writes into out (size n). */
static void prof_base_name(const char *dem, char *out, size_t n)
{
	int depth = 0;
	const char *end = dem + strlen(dem), *start = dem;

	/* the top-level '(' ends the name */
	for (const char *p = dem; *p; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>')
			depth--;
		else if (*p == '(' && depth == 0 && p != dem) {
			end = p;
			break;
		}
	}
	/* drop template arguments at the end */
	if (end > dem && end[-1] == '>') {
		depth = 0;
		for (const char *p = end - 1; p >= dem; p--) {
			if (*p == '>')
				depth++;
			else if (*p == '<' && --depth == 0) {
				end = p;
				break;
			}
		}
	}
	/* the last "::" or space at top level starts it */
	depth = 0;
	for (const char *p = dem; p < end; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>')
			depth--;
		else if (depth == 0 && (*p == ' ' || (*p == ':' && p[1] == ':'))) {
			start = *p == ' ' ? p + 1 : p + 2;
			if (*p == ':')
				p++;
		}
	}
	size_t len = end > start ? (size_t)(end - start) : 0;
	if (len >= n)
		len = n - 1;
	memcpy(out, start, len);
	out[len] = '\0';
}

static int prof_matches(const char *mangled)
{
	const char *k = coll_cfg.kernels;
	char *dem = NULL;
	int status = -1, m;

	if (!k)
		return 1;
	if (!mangled)
		return 0;
	if (prof_demangle)
		dem = prof_demangle(mangled, NULL, NULL, &status);
	if (status != 0) {
		free(dem);
		dem = NULL;
	}
	const char *subject = dem ? dem : mangled;
	if (coll_cfg.name_base) {
		/* the one name kernel_name_base says, as ncu's --kernel-name-base */
		char base[512];
		const char *name = coll_cfg.name_base == 3 ? mangled : subject;
		if (coll_cfg.name_base == 1) {
			prof_base_name(subject, base, sizeof(base));
			name = base;
		}
		m = prof_have_regex ? regexec(&prof_regex, name, 0, NULL, 0) == 0 : strcmp(k, name) == 0;
	} else if (prof_have_regex) {
		m = regexec(&prof_regex, subject, 0, NULL, 0) == 0;
	} else {
		char base[512];
		prof_base_name(subject, base, sizeof(base));
		m = strcmp(k, mangled) == 0 || strcmp(k, subject) == 0 || strcmp(k, base) == 0;
	}
	free(dem);
	return m;
}

/* Is this launch selected (the kernel filter, then launch_skip and
 * launch_count over the launches that match)?  Counts it as matched. */
static int prof_select_locked(const char *symbol)
{
	int sel = prof_matches(symbol);
	if (sel) {
		long m = prof_matched++;
		sel = !(m < coll_cfg.launch_skip ||
			(coll_cfg.launch_count >= 0 && m >= coll_cfg.launch_skip + coll_cfg.launch_count));
	}
	return sel;
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */

int profiler_start(void)
{
	CUpti_Profiler_Initialize_Params ip = { .structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE };

	return coll_check(cuptiProfilerInitialize(&ip), "cuptiProfilerInitialize", NULL) ? -1 : 0;
}

int profiler_init(void)
{
	prof_demangle = (prof_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (coll_cfg.kernels && strncmp(coll_cfg.kernels, "regex:", 6) == 0) {
		int rc = regcomp(&prof_regex, coll_cfg.kernels + 6, REG_EXTENDED | REG_NOSUB);
		if (rc != 0) {
			char msg[256];
			regerror(rc, &prof_regex, msg, sizeof(msg));
			coll_error("bad_config", -1, "KGATE_KERNELS='%s': bad regular expression: %s",
				   coll_cfg.kernels, msg);
			return -1;
		}
		prof_have_regex = 1;
	}
	const char *b = getenv("KGATE_PROFILE_BATCH");
	if (b && *b) {
		char *end;
		long v = strtol(b, &end, 10);
		if (*end || v < 1 || v > PROF_BATCH_MAX)
			coll_error("bad_config", -1, "KGATE_PROFILE_BATCH='%s' is not 1..%d; using %d",
				   b, PROF_BATCH_MAX, PROF_BATCH_DEFAULT);
		else
			prof_batch = (size_t)v, prof_batch_set = 1;
	}
	prof_cap = prof_batch + PROF_SLACK;
	const char *ss = getenv("KGATE_SESSION");
	if (ss && *ss) {
		if (strcmp(ss, "0") == 0)
			prof_session_ok = 0;
		else if (strcmp(ss, "1") != 0)
			coll_error("bad_config", -1, "KGATE_SESSION='%s' is not 0 or 1; using 1", ss);
	}
	/* room for a duration the session adds to the set */
	prof_values = calloc(coll_cfg.n_metrics + 1, sizeof(double));
	if (pmsample_engine())
		return prof_values ? pmsample_init() : -1;
	return prof_values ? 0 : -1;
}

/* Application replay: keep only this pass's group of metrics. */
static int prof_split_locked(const char *chip, const uint8_t *avail)
{
	char err[512];
	int *group, ngroups = 0;
	size_t k = 0;

	if (prof_split_done || !coll_cfg.app_replay)
		return 0;
	prof_split_done = 1;
	group = calloc(coll_cfg.n_metrics ? coll_cfg.n_metrics : 1, sizeof(int));
	if (!group)
		return -1;
	if (metrics_split(chip, avail, (const char *const *)coll_cfg.metrics, coll_cfg.n_metrics,
			  group, &ngroups, err, sizeof(err)) != 0) {
		coll_error("invalid_metric", -1, "%s; metrics mode is off", err);
		free(group);
		return -1;
	}
	coll_cfg.passes = ngroups;
	if (coll_cfg.pass >= ngroups) {
		coll_error("bad_config", -1,
			   "KGATE_PASS=%d but the metric set has %d single-pass groups on %s; no "
			   "metrics in this run", coll_cfg.pass, ngroups, chip);
		free(group);
		return -1;
	}
	for (size_t i = 0; i < coll_cfg.n_metrics; i++) {
		if (group[i] == coll_cfg.pass)
			coll_cfg.metrics[k++] = coll_cfg.metrics[i];
		else
			free(coll_cfg.metrics[i]);
	}
	coll_cfg.n_metrics = k;
	free(group);
	return 0;
}

/*
 * A one-pass set is collected in one long session with user replay (one
 * pass needs no replay): about 1 ms a launch on an H200 against 17 ms with
 * kernel replay.  Kernel activity records are off while a session is open
 * (with them on, CUPTI adds instructions to each profiled kernel, about 8 a
 * warp), so the records of its launches are built from the launch callback
 * (name, grid, block, stream) and the range's own gpu__time_duration.sum
 * (an auto range measures the kernel alone).  Without the duration in the
 * set, it is added when the set stays one pass; otherwise no session.
 */
static void prof_session_setup_locked(struct prof_ctx *pc)
{
	char err[512];

	if (!coll_cfg.duration_asked) {
		CUpti_Profiler_Host_Object *h = metrics_host_open(pc->chip, pc->mc.avail, err, sizeof(err));
		const char **names = calloc(coll_cfg.n_metrics + 1, sizeof(*names));
		char *dur = strdup(KG_M_DURATION);
		char **grown = realloc(coll_cfg.metrics, (coll_cfg.n_metrics + 1) * sizeof(char *));
		uint8_t *img = NULL;
		size_t img_size = 0;
		int passes = 0, ok = 0;
		if (grown)
			coll_cfg.metrics = grown;
		if (h && names && dur && grown) {
			for (size_t i = 0; i < coll_cfg.n_metrics; i++)
				names[i] = coll_cfg.metrics[i];
			names[coll_cfg.n_metrics] = dur;
			ok = metrics_config(h, pc->chip, names, coll_cfg.n_metrics + 1, &img,
					    &img_size, &passes, err, sizeof(err)) == 0 && passes == 1;
		}
		free(names);
		if (!ok) {
			free(img);
			free(dur);
			metrics_host_close(h);
			COLL_DEBUG("no session: the set with %s is not one pass", KG_M_DURATION);
			return;
		}
		metrics_host_close(pc->mc.host);
		free(pc->mc.config);
		pc->mc.host = h;
		pc->mc.config = img;
		pc->mc.config_size = img_size;
		coll_cfg.metrics[coll_cfg.n_metrics++] = dur;
		coll_cfg.duration_asked = 1;
	}
	pc->session = 1;
	prof_any_session = 1;
	if (!prof_batch_set && !pc->enabled) {
		prof_batch = PROF_SESSION_BATCH_DEFAULT;
		prof_cap = prof_batch + PROF_SLACK;
	}
	coll_cfg.replay_user = 1;
}

/* Host side of a new context: chip, counter availability, config image. */
static void prof_ctx_host_locked(struct prof_ctx *pc)
{
	char err[512];
	uint32_t devid = 0;
	CUdevice dev;
	int passes = 0;

	if (coll_check(cuptiGetDeviceId(pc->ctx, &devid), "cuptiGetDeviceId",
		       "no metrics for this context")) {
		pc->failed = 1;
		return;
	}
	dev = (CUdevice)devid;
	CUpti_Profiler_DeviceSupported_Params ds = { .structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE };
	ds.cuDevice = dev;
	ds.api = CUPTI_PROFILER_RANGE_PROFILING;
	if (cuptiProfilerDeviceSupported(&ds) == CUPTI_SUCCESS &&
	    ds.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
		coll_error("not_supported", -1,
			   "device %d does not support the Range Profiler (architecture %d, vGPU %d, "
			   "confidential compute %d, CMP %d, WSL %d); no metrics, trace only",
			   (int)dev, (int)ds.architecture, (int)ds.vGpu, (int)ds.confidentialCompute,
			   (int)ds.cmp, (int)ds.wsl);
		prof_off = 1;
		pc->failed = 1;
		return;
	}
	CUpti_Device_GetChipName_Params cp = { .structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE };
	cp.deviceIndex = (size_t)dev;
	if (coll_check(cuptiDeviceGetChipName(&cp), "cuptiDeviceGetChipName", "no metrics") ||
	    !cp.pChipName) {
		pc->failed = 1;
		return;
	}
	snprintf(pc->chip, sizeof(pc->chip), "%s", cp.pChipName);

	CUpti_Profiler_GetCounterAvailability_Params ca = { .structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE };
	ca.ctx = pc->ctx;
	CUptiResult r = cuptiProfilerGetCounterAvailability(&ca);
	if (r == CUPTI_SUCCESS && ca.counterAvailabilityImageSize) {
		pc->mc.avail = malloc(ca.counterAvailabilityImageSize);
		ca.pCounterAvailabilityImage = pc->mc.avail;
		if (pc->mc.avail)
			r = cuptiProfilerGetCounterAvailability(&ca);
	}
	if (r != CUPTI_SUCCESS) {
		if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
			coll_error("insufficient_privileges", (int)r,
				   "GPU performance counters are not permitted for this user "
				   "(NVreg_RestrictProfilingToAdminUsers); no metrics, trace only");
			prof_off = 1;
		} else {
			coll_check(r, "cuptiProfilerGetCounterAvailability", "no metrics, trace only");
		}
		pc->failed = 1;
		return;
	}
	if (prof_split_locked(pc->chip, pc->mc.avail) != 0) {
		prof_off = 1;
		pc->failed = 1;
		return;
	}
	pc->mc.host = metrics_host_open(pc->chip, pc->mc.avail, err, sizeof(err));
	if (!pc->mc.host ||
	    metrics_config(pc->mc.host, pc->chip, (const char *const *)coll_cfg.metrics,
			   coll_cfg.n_metrics, &pc->mc.config, &pc->mc.config_size, &passes, err,
			   sizeof(err)) != 0) {
		coll_error(!pc->mc.host && metrics_host_missing() ? "metrics_unavailable" : "invalid_metric",
			   -1, "%s; no metrics, trace only", err);
		prof_off = 1;
		pc->failed = 1;
		return;
	}
	if (!coll_cfg.app_replay)
		coll_cfg.passes = 1; /* kernel replay: one run, CUPTI replays each kernel */
	if (coll_cfg.step_replay && !coll_cfg.app_replay) {
		/* user replay over the program's steps: pass p on a group's p-th
		 * step; every kernel of a step makes an auto range */
		pc->step = 1;
		coll_cfg.step_passes = passes;
		coll_cfg.replay_user = 1;
		coll_cfg.user_range = 0; /* auto ranges: every kernel of a step */
		coll_cfg.events = 0;
		if (!prof_batch_set) {
			prof_batch = PROF_SESSION_BATCH_DEFAULT;
			prof_cap = prof_batch + PROF_SLACK;
		}
		return;
	}
	if (passes == 1 && !coll_cfg.app_replay && prof_session_ok)
		prof_session_setup_locked(pc);
}

/* Target side, on the launching thread: enable, counter data, config. */
static int prof_ctx_enable_locked(struct prof_ctx *pc)
{
	CUpti_RangeProfiler_Enable_Params en = { .structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE };
	en.ctx = pc->ctx;
	CUptiResult r = cuptiRangeProfilerEnable(&en);
	if (r != CUPTI_SUCCESS) {
		if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
			coll_error("insufficient_privileges", (int)r,
				   "GPU performance counters are not permitted for this user; no "
				   "metrics, trace only");
		else
			coll_check(r, "cuptiRangeProfilerEnable", "no metrics, trace only");
		return -1;
	}
	pc->obj = en.pRangeProfilerObject;
	pc->owner = pthread_self();

	CUpti_RangeProfiler_GetCounterDataSize_Params gs = { .structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE };
	gs.pRangeProfilerObject = pc->obj;
	gs.pMetricNames = (const char **)coll_cfg.metrics;
	gs.numMetrics = coll_cfg.n_metrics;
	gs.maxNumOfRanges = prof_cap;
	gs.maxNumRangeTreeNodes = prof_cap;
	if (coll_check(cuptiRangeProfilerGetCounterDataSize(&gs),
		       "cuptiRangeProfilerGetCounterDataSize", "no metrics, trace only"))
		return -1;
	pc->counter_size = gs.counterDataSize;
	pc->counter = calloc(1, pc->counter_size);
	pc->pending = calloc(prof_cap, sizeof(*pc->pending));
	pc->pending_sel = calloc(prof_cap, 1);
	if (!pc->counter || !pc->pending || !pc->pending_sel)
		return -1;
	if (pc->step && !(pc->step_names = calloc(prof_cap, sizeof(char *))))
		return -1;
	for (size_t j = 0; j < coll_cfg.n_metrics; j++)
		if (strcmp(coll_cfg.metrics[j], KG_M_DURATION) == 0)
			prof_dur_idx = (int)j;
	if (pc->session && coll_cfg.events && prof_events_lookup() == 0) {
		pc->ev0 = calloc(prof_cap, sizeof(CUevent));
		pc->ev1 = calloc(prof_cap, sizeof(CUevent));
		if (!pc->ev0 || !pc->ev1)
			return -1;
	}
	/* the flush kernel and its buffer, before any session starts */
	if (coll_cfg.cache_all)
		(void)flush_prepare(pc->ctx);
	return 0;
}

/* A fresh counter data image and the configuration that points at it:
 * once at enable and once after each decoded batch, never per launch. */
static int prof_reset_locked(struct prof_ctx *pc)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params ci = { .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE };
	ci.pRangeProfilerObject = pc->obj;
	ci.counterDataSize = pc->counter_size;
	ci.pCounterData = pc->counter;
	CUptiResult r = cuptiRangeProfilerCounterDataImageInitialize(&ci);
	if (r != CUPTI_SUCCESS) {
		prof_fail_locked(r, "cuptiRangeProfilerCounterDataImageInitialize");
		return -1;
	}
	CUpti_RangeProfiler_SetConfig_Params sc = { .structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE };
	sc.pRangeProfilerObject = pc->obj;
	sc.configSize = pc->mc.config_size;
	sc.pConfig = pc->mc.config;
	sc.counterDataImageSize = pc->counter_size;
	sc.pCounterDataImage = pc->counter;
	sc.range = pc->session && coll_cfg.user_range ? CUPTI_UserRange : CUPTI_AutoRange;
	sc.replayMode = pc->session || pc->step ? CUPTI_UserReplay : CUPTI_KernelReplay;
	sc.maxRangesPerPass = prof_cap;
	sc.numNestingLevels = 1;
	sc.minNestingLevel = 1;
	sc.passIndex = 0;
	sc.targetNestingLevel = 1;
	r = cuptiRangeProfilerSetConfig(&sc);
	if (r != CUPTI_SUCCESS) {
		prof_fail_locked(r, "cuptiRangeProfilerSetConfig");
		return -1;
	}
	pc->n_pending = 0;
	pc->n_ranges = 0;
	return 0;
}

/*
 * A session's kernels have no activity records: kernel activity is off from
 * its start to its stop (with it on, CUPTI adds instructions to the kernels
 * of a user-replay range).  Launches before and after keep their records.
 */
static void prof_session_opened_locked(struct prof_ctx *pc)
{
	pc->open = 1;
	if (prof_n_open++ == 0)
		coll_check(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
			   "cuptiActivityDisable(CONCURRENT_KERNEL)", NULL);
}

static void prof_session_closed_locked(struct prof_ctx *pc)
{
	pc->open = 0;
	pc->others = 0;
	if (--prof_n_open == 0)
		coll_check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
			   "cuptiActivityEnable(CONCURRENT_KERNEL)",
			   "kernels after a profiling session have no trace records");
}

static struct prof_ctx *prof_find_locked(CUcontext ctx, int create)
{
	for (size_t i = 0; i < prof_n_ctx; i++) {
		if (prof_ctxs[i].ctx == ctx)
			return &prof_ctxs[i];
	}
	if (!create)
		return NULL;
	if (prof_n_ctx == PROF_CTX_MAX) {
		coll_error("not_supported", -1, "more than %d CUDA contexts; no metrics for the rest",
			   PROF_CTX_MAX);
		return NULL;
	}
	struct prof_ctx *pc = &prof_ctxs[prof_n_ctx++];
	memset(pc, 0, sizeof(*pc));
	pc->ctx = ctx;
	double t0 = prof_ms();
	prof_ctx_host_locked(pc);
	COLL_DEBUG("context set-up (host API: chip, counter availability, config image): %.3f ms",
		   prof_ms() - t0);
	return pc;
}

static void prof_ctx_release_locked(struct prof_ctx *pc)
{
	/* launches still waiting for values get none */
	for (size_t i = 0; pc->pending && i < pc->n_pending; i++)
		launch_set_values(pc->pending[i], NULL);
	pc->n_pending = 0;
	pc->n_ranges = 0;
	if (pc->open) {
		/* best effort: the profiler failed or the context goes */
		CUpti_RangeProfiler_Stop_Params sp = { .structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
		sp.pRangeProfilerObject = pc->obj;
		(void)cuptiRangeProfilerStop(&sp);
		prof_session_closed_locked(pc);
	}
	if (pc->enabled && pc->obj) {
		CUpti_RangeProfiler_Disable_Params d = { .structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE };
		d.pRangeProfilerObject = pc->obj;
		coll_check(cuptiRangeProfilerDisable(&d), "cuptiRangeProfilerDisable", NULL);
	}
	metrics_cfg_free(&pc->mc);
	free(pc->counter);
	free(pc->pending);
	free(pc->pending_sel);
	free(pc->ev0);
	free(pc->ev1);
	pc->ev0 = pc->ev1 = NULL;
	for (size_t i = 0; pc->step_names && i < prof_cap; i++)
		free(pc->step_names[i]);
	free(pc->step_names);
	pc->step_names = NULL;
	pc->mc.host = NULL;
	pc->mc.avail = pc->mc.config = pc->counter = NULL;
	pc->pending = NULL;
	pc->pending_sel = NULL;
	pc->obj = NULL;
	pc->enabled = 0;
	pc->failed = 1;
}

/*
 * A profiler call failed: the range profiler may be in any state, and a
 * later Start or Decode could break the program (a failed decode once
 * invalidated a stream capture).  So metrics end for the whole process:
 * one error record, every context's profiler disabled, the trace goes on.
 */
static void prof_fail_locked(CUptiResult r, const char *what)
{
	if (prof_off)
		return;
	prof_off = 1;
	prof_failed = 1;
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		coll_error("insufficient_privileges", (int)r,
			   "%s: GPU performance counters are not permitted for this user; no "
			   "metrics from here on, trace only", what);
	else
		coll_check(r, what, "no metrics for the rest of the process; the trace goes on");
	for (size_t i = 0; i < prof_n_ctx; i++) {
		if (!prof_ctxs[i].failed || prof_ctxs[i].enabled)
			prof_ctx_release_locked(&prof_ctxs[i]);
	}
}

typedef CUresult (*prof_ctx_fn)(CUcontext);
typedef CUresult (*prof_pop_fn)(CUcontext *);

/* The driver's context push and pop, looked up once. */
static prof_ctx_fn prof_cu_push;
static prof_pop_fn prof_cu_pop;
static pthread_once_t prof_ctx_fns_once = PTHREAD_ONCE_INIT;

static void prof_ctx_fns(void)
{
	*(void **)&prof_cu_push = coll_cuda_sym("cuCtxPushCurrent_v2");
	*(void **)&prof_cu_pop = coll_cuda_sym("cuCtxPopCurrent_v2");
}

/* ctx made current; ctx, or NULL when it could not be (nothing to pop). */
static CUcontext prof_ctx_push(CUcontext ctx)
{
	pthread_once(&prof_ctx_fns_once, prof_ctx_fns);
	return prof_cu_push && prof_cu_push(ctx) == CUDA_SUCCESS ? ctx : NULL;
}

/* Undo prof_ctx_push (pushed: what it returned). */
static void prof_ctx_pop(CUcontext pushed)
{
	CUcontext popped = NULL;
	if (pushed && prof_cu_pop)
		prof_cu_pop(&popped);
}

/*
 * Decode the ranges of the image and give each launch its values (the
 * i-th range is the i-th profiled launch of the context: ranges are made
 * one launch at a time under the profiler's lock).  push: make the context current
 * around the decode (outside a launch callback of that context).
 */
static void prof_decode_locked(struct prof_ctx *pc, int push)
{
	CUptiResult r;
	CUcontext pushed = NULL;

	if (prof_off || !pc->enabled || pc->failed || (!pc->n_pending && !pc->open))
		return;
	if (pc->step == 1) {
		/* a capture, a graph launch, a teardown or the exit in the middle
		 * of a group: its passes cannot be completed */
		prof_step_abandon_locked(pc, push, "the program ended, or captured a stream, launched "
					 "a graph or destroyed its context");
		return;
	}
	if (push)
		pushed = prof_ctx_push(pc->ctx);
	r = CUPTI_SUCCESS;
	double ts = prof_ms();
	int all_submitted = 1;
	const char *what = "cuptiRangeProfilerDecodeData";
	if (pc->open) {
		what = "cuptiRangeProfilerStop";
		/* the session ends here: its ranges are complete after the stop */
		CUpti_RangeProfiler_Stop_Params sp = { .structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
		sp.pRangeProfilerObject = pc->obj;
		r = cuptiRangeProfilerStop(&sp);
		all_submitted = sp.isAllPassSubmitted;
		prof_session_closed_locked(pc);
		COLL_DEBUG("session stop: %zu ranges, all passes submitted %d; %.3f ms", pc->n_pending,
			   all_submitted, prof_ms() - ts);
	}
	CUpti_RangeProfiler_DecodeData_Params dd = { .structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE };
	dd.pRangeProfilerObject = pc->obj;
	double td = prof_ms();
	if (r == CUPTI_SUCCESS && pc->n_ranges) {
		what = "cuptiRangeProfilerDecodeData";
		r = cuptiRangeProfilerDecodeData(&dd);
	}
	td = prof_ms() - td;
	prof_ctx_pop(pushed);
	if (r != CUPTI_SUCCESS) {
		prof_fail_locked(r, what);
		return;
	}
	if (!pc->n_pending) {
		prof_reset_locked(pc);
		return;
	}
	if (!pc->n_ranges) {
		/* only launches without ranges (user ranges, left out) */
		prof_give_locked(pc, 0);
		return;
	}
	if (!all_submitted && prof_errs_launch++ < PROF_ERR_MAX)
		coll_error("range_mismatch", -1,
			   "the profiler's session ended with passes not submitted; values may be "
			   "missing");
	CUpti_RangeProfiler_GetCounterDataInfo_Params gi = { .structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE };
	gi.pCounterDataImage = pc->counter;
	gi.counterDataImageSize = pc->counter_size;
	if ((r = cuptiRangeProfilerGetCounterDataInfo(&gi)) != CUPTI_SUCCESS) {
		prof_fail_locked(r, "cuptiRangeProfilerGetCounterDataInfo");
		return;
	}
	size_t n = pc->n_pending, base;
	COLL_DEBUG("decode: %zu launches waiting, %zu ranges expected, %zu made, %zu dropped; %.3f ms",
		   n, pc->n_ranges, (size_t)gi.numTotalRanges, (size_t)dd.numOfRangeDropped, td);
	if (gi.numTotalRanges == pc->n_ranges && !dd.numOfRangeDropped) {
		base = 0;
	} else if (n == 1 && pc->n_ranges == 1 && gi.numTotalRanges >= 1) {
		base = gi.numTotalRanges - 1; /* one launch: its range is the last */
	} else if (n == 1 && pc->n_ranges == 1 && gi.numTotalRanges == 0) {
		/* this launch made no range (seen for launches off the thread
		 * that enabled the profiler): it alone goes without values */
		if (prof_errs_launch++ < PROF_ERR_MAX)
			coll_error("range_missing", -1,
				   "the profiler made no range for launch %lld; it has no metric "
				   "values", (long long)pc->pending[0]);
		launch_set_values(pc->pending[0], NULL);
		pc->n_pending = 0;
		prof_reset_locked(pc);
		return;
	} else {
		if (prof_errs_launch++ < PROF_ERR_MAX)
			coll_error("range_mismatch", -1,
				   "the profiler returned %zu ranges (%zu dropped) for %zu launches; "
				   "their values cannot be matched and are left out; decoding after "
				   "every launch from here on", gi.numTotalRanges,
				   dd.numOfRangeDropped, n);
		for (size_t i = 0; i < n; i++)
			launch_set_values(pc->pending[i], NULL);
		pc->n_pending = 0;
		prof_batch = 1;
		prof_reset_locked(pc);
		return;
	}
	prof_give_locked(pc, base);
}

/* Evaluate the ranges of the decoded image (the first at base) and give each
 * waiting launch its values, in order; then a fresh image. */
static void prof_give_locked(struct prof_ctx *pc, size_t base)
{
	size_t n = pc->n_pending, range = base;
	CUptiResult r;
	double tev = prof_ms();
	for (size_t i = 0; i < n; i++) {
		uint8_t sel = pc->session || pc->step ? pc->pending_sel[i] : PROF_SEL_RANGE;
		for (size_t j = 0; j < coll_cfg.n_metrics; j++)
			prof_values[j] = NAN;
		if (sel == PROF_SEL_FLUSH) {
			range++; /* the flush kernel's range: no launch of the program */
			continue;
		}
		if (sel == PROF_SEL_BARE) {
			if (coll_cfg.events && prof_dur_idx >= 0)
				prof_values[prof_dur_idx] = prof_event_ns(pc, i);
			launch_set_values(pc->pending[i], prof_values);
			continue;
		}
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = { .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE };
		ev.pHostObject = pc->mc.host;
		ev.pCounterDataImage = pc->counter;
		ev.counterDataImageSize = pc->counter_size;
		ev.rangeIndex = range++;
		ev.ppMetricNames = (const char **)coll_cfg.metrics;
		ev.numMetrics = coll_cfg.n_metrics;
		ev.pMetricValues = prof_values;
		r = cuptiProfilerHostEvaluateToGpuValues(&ev);
		if (r != CUPTI_SUCCESS) {
			/* host-side only: the profiler itself is fine */
			if (prof_errs_launch++ < PROF_ERR_MAX)
				coll_check(r, "cuptiProfilerHostEvaluateToGpuValues",
					   "this launch has no metric values");
			launch_set_values(pc->pending[i], NULL);
		} else {
			if (pc->session && coll_cfg.events && prof_dur_idx >= 0)
				prof_values[prof_dur_idx] = prof_event_ns(pc, i);
			launch_set_values(pc->pending[i], prof_values);
		}
	}
	double tre = prof_ms();
	pc->n_pending = 0;
	prof_reset_locked(pc);
	COLL_DEBUG("evaluate: %zu ranges, %.3f ms; new counter data image and config: %.3f ms", n,
		   tre - tev, prof_ms() - tre);
}

/* ------------------------------------------------------------------ */
/* Step replay                                                         */

/*
 * KGATE_REPLAY=step: the program repeats identical steps, each begun by a
 * push of the NVTX range KGATE_STEP_RANGE (default "step") and ended by its
 * pop (or the next push).  A set of P passes is collected with user replay
 * over P consecutive steps, a group: the Range Profiler is started at the
 * step's push and stopped at its pop, and every kernel launched in the
 * context meanwhile makes an auto range; CUPTI collects pass p on the
 * group's p-th step and joins the passes by range index, which is the
 * launch's ordinal within the step, as application replay joins processes.
 * The first pass's launches get the values (and say which steps gave them:
 * "step" and "step_passes"); the launches of later passes are recorded
 * without values.  A step whose launches differ from the first step's (in
 * number or names) breaks the group: a step_mismatch error record, no
 * values, and a new group begins at the next step.  Kernel activity is off
 * during the steps of a group (records from the launch callbacks, as in a
 * session) and on between them.
 */

static void prof_step_clear_locked(struct prof_ctx *pc)
{
	for (size_t i = 0; pc->step_names && i < prof_cap; i++) {
		free(pc->step_names[i]);
		pc->step_names[i] = NULL;
	}
	pc->step_pass = 0;
	pc->step_idx = 0;
	pc->step_broken = 0;
	pc->step_why[0] = '\0';
}

/* The group ends without values (the launches waiting get none). */
static void prof_step_drop_locked(struct prof_ctx *pc, const char *code, const char *why)
{
	if (pc->n_pending && prof_errs_launch++ < PROF_ERR_MAX)
		coll_error(code, -1, "step replay: the group of steps from step %lld (%zu ranges a "
			   "step, %d of %d passes collected) has no values: %s",
			   (long long)pc->step_first, pc->n_pending, pc->step_pass, coll_cfg.step_passes,
			   why);
	for (size_t i = 0; pc->pending && i < pc->n_pending; i++)
		if (pc->pending[i] >= 0)
			launch_set_values(pc->pending[i], NULL);
	pc->n_pending = 0;
	prof_step_clear_locked(pc);
	prof_reset_locked(pc);
}

static void prof_step_stop_locked(struct prof_ctx *pc, int push, int *all)
{
	CUcontext pushed = push ? prof_ctx_push(pc->ctx) : NULL;
	CUpti_RangeProfiler_Stop_Params sp = { .structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
	sp.pRangeProfilerObject = pc->obj;
	CUptiResult r = cuptiRangeProfilerStop(&sp);
	prof_ctx_pop(pushed);
	prof_session_closed_locked(pc);
	*all = sp.isAllPassSubmitted;
	if (r != CUPTI_SUCCESS)
		prof_fail_locked(r, "cuptiRangeProfilerStop");
}

static void prof_step_abandon_locked(struct prof_ctx *pc, int push, const char *why)
{
	int all = 0;

	if (pc->open)
		prof_step_stop_locked(pc, push, &all);
	if (!prof_off)
		prof_step_drop_locked(pc, "step_incomplete", why);
}

/* The step ends: its pass is stopped; after the group's last, the values. */
static void prof_step_end_locked(struct prof_ctx *pc)
{
	int all = 0;

	prof_step_stop_locked(pc, 1, &all);
	if (prof_off)
		return;
	if (pc->step_pass > 0 && !pc->step_broken && pc->step_idx != pc->n_pending) {
		pc->step_broken = 1;
		snprintf(pc->step_why, sizeof(pc->step_why),
			 "step %lld made %zu launches, the group's first step %zu",
			 (long long)(pc->step_first + pc->step_pass), pc->step_idx, pc->n_pending);
	}
	COLL_DEBUG("step %lld ends: pass %d of %d, %zu launches, all passes submitted %d%s%s",
		   (long long)prof_step_no, pc->step_pass + 1, coll_cfg.step_passes,
		   pc->step_pass ? pc->step_idx : pc->n_pending, all, pc->step_broken ? "; " : "",
		   pc->step_why);
	pc->step_pass++;
	if (pc->step_broken) {
		prof_step_drop_locked(pc, "step_mismatch", pc->step_why);
		return;
	}
	if (!all)
		return; /* the next step collects the next pass */
	/* every pass collected: decode as a session's batch */
	for (size_t i = 0; pc->pending && i < pc->n_pending; i++)
		if (pc->pending[i] >= 0)
			launch_set_steps(pc->pending[i], pc->step_first, pc->step_pass);
	pc->step = 2; /* prof_decode_locked: decode, not abandon */
	prof_decode_locked(pc, 1);
	pc->step = 1;
	prof_step_clear_locked(pc);
}

void profiler_step(int begin)
{
	if (coll_cfg.mode != COLL_METRICS || !coll_cfg.step_replay)
		return;
	prof_lock();
	if (begin)
		prof_step_no++;
	struct prof_ctx *pc = NULL;
	for (size_t i = 0; i < prof_n_ctx; i++)
		if (prof_ctxs[i].step && prof_ctxs[i].enabled && !prof_ctxs[i].failed)
			pc = &prof_ctxs[i];
	if (prof_off || !pc || launch_capture_active()) {
		prof_unlock();
		return; /* before the first launch, steps are not profiled */
	}
	if (pc->open)
		prof_step_end_locked(pc); /* the pop, or a push without it */
	if (begin && !prof_off && !pc->failed) {
		if (pc->step_pass == 0)
			pc->step_first = prof_step_no;
		CUcontext pushed = prof_ctx_push(pc->ctx);
		CUpti_RangeProfiler_Start_Params st = { .structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE };
		st.pRangeProfilerObject = pc->obj;
		CUptiResult r = cuptiRangeProfilerStart(&st);
		prof_ctx_pop(pushed);
		if (r != CUPTI_SUCCESS) {
			prof_fail_locked(r, "cuptiRangeProfilerStart");
		} else {
			prof_session_opened_locked(pc);
			pc->step_idx = 0;
			COLL_DEBUG("step %lld begins: pass %d of %d", (long long)prof_step_no,
				   pc->step_pass + 1, coll_cfg.step_passes);
		}
	}
	prof_unlock();
}

/* A launch under step replay (the lock held; it is released unless a range
 * is made). */
/* On a context's first profiled launch (the launching thread): enable
 * its Range Profiler and reset its counter data.  0, or -1 (a failed
 * enable releases the context's profiler). */
static int prof_ctx_start_locked(struct prof_ctx *pc)
{
	if (prof_ctx_enable_locked(pc) != 0) {
		pc->enabled = pc->obj != NULL;
		prof_ctx_release_locked(pc);
		return -1;
	}
	pc->enabled = 1;
	return prof_reset_locked(pc);
}

static int prof_step_launch_locked(CUcontext ctx, const char *symbol, int64_t ordinal,
				   CUstream stream)
{
	struct prof_ctx *pc = prof_find_locked(ctx, 1);

	if (!pc || pc->failed || !pc->step)
		goto no;
	if (!pc->enabled) {
		/* on the launching thread, before the next step begins */
		if (prof_ctx_start_locked(pc) != 0)
			goto no;
		COLL_DEBUG("profiler enabled (step replay of %d passes)", coll_cfg.step_passes);
	}
	if (!pc->open)
		goto no; /* between steps: traced */
	int sel = prof_matches(symbol);
	prof_active = pc;
	if (pc->step_pass > 0) {
		/* the flush before a selected launch has its place too */
		if (sel && coll_cfg.cache_all && !pc->step_broken && !flush_ranged(pc->ctx)) {
			(void)flush_run(pc->ctx, stream, 0); /* in its own context: no range */
		} else if (sel && coll_cfg.cache_all && !pc->step_broken) {
			size_t f = pc->step_idx++;
			if (f < pc->n_pending && pc->step_names[f] &&
			    strcmp(pc->step_names[f], FLUSH_KERNEL) == 0) {
				(void)flush_run(pc->ctx, stream, 0);
			} else {
				pc->step_broken = 1;
				snprintf(pc->step_why, sizeof(pc->step_why),
					 "launch %zu of step %lld has no cache flush before it in the "
					 "group's first step", f, (long long)prof_step_no);
			}
		}
		/* the same launch as the first pass's at this index? */
		size_t i = pc->step_idx++;
		const char *want = i < pc->n_pending ? pc->step_names[i] : NULL;
		if (!pc->step_broken && (!want || !symbol || strcmp(want, symbol) != 0)) {
			pc->step_broken = 1;
			snprintf(pc->step_why, sizeof(pc->step_why),
				 "launch %zu of step %lld is %.90s, of the group's first step %.90s", i,
				 (long long)prof_step_no, symbol ? symbol : "(unnamed)",
				 want ? want : "(none: fewer launches)");
		}
		return PROF_STEP_LATER;
	}
	if (pc->n_pending + 2 > prof_cap) {
		if (!pc->step_broken) {
			pc->step_broken = 1;
			snprintf(pc->step_why, sizeof(pc->step_why),
				 "a step makes more than %zu launches (KGATE_PROFILE_BATCH)", prof_batch);
		}
		return PROF_STEP_LATER;
	}
	/* the flush on the stream makes a range in every pass, at the same place */
	if (sel && coll_cfg.cache_all && flush_run(pc->ctx, stream, 0) == 1) {
		pc->pending[pc->n_pending] = -1;
		pc->pending_sel[pc->n_pending] = PROF_SEL_FLUSH;
		pc->step_names[pc->n_pending++] = strdup(FLUSH_KERNEL);
		pc->n_ranges++;
	}
	free(pc->step_names[pc->n_pending]);
	pc->step_names[pc->n_pending] = symbol ? strdup(symbol) : NULL;
	(void)ordinal;
	return sel ? PROF_SESSION : PROF_SESSION_OTHER;
no:
	prof_unlock();
	return PROF_NO;
}

void profiler_prepare(CUcontext ctx)
{
	if (pmsample_engine()) {
		pmsample_prepare(ctx);
		return;
	}
	if (coll_cfg.mode != COLL_METRICS || !ctx)
		return;
	prof_lock();
	if (!prof_off)
		prof_find_locked(ctx, 1);
	prof_unlock();
}

/* Under the lock: decode what every context has collected. */
static void prof_decode_all_locked(void)
{
	for (size_t i = 0; i < prof_n_ctx; i++)
		prof_decode_locked(&prof_ctxs[i], 1);
}

/* 1 when the Range Profiler (this file) collects the metrics; 0 in trace
 * mode, or after handing the call to PM sampling's pm when that engine
 * collects them. */
static int prof_range_engine(void (*pm)(void))
{
	if (coll_cfg.mode != COLL_METRICS)
		return 0;
	if (pmsample_engine()) {
		pm();
		return 0;
	}
	return 1;
}

void profiler_sync(void)
{
	if (!prof_range_engine(pmsample_sync))
		return;
	prof_lock();
	prof_decode_all_locked();
	prof_unlock();
}

void profiler_on_context_destroy(CUcontext ctx)
{
	if (pmsample_engine() && coll_cfg.mode == COLL_METRICS) {
		pmsample_on_context_destroy(ctx);
		return;
	}
	if (coll_cfg.mode != COLL_METRICS)
		return;
	prof_lock();
	struct prof_ctx *pc = prof_find_locked(ctx, 0);
	if (pc) {
		/* the last chance for its ranges (the API callbacks of a reset
		 * or destroy have decoded them already when there were any) */
		prof_decode_locked(pc, 0);
		prof_ctx_release_locked(pc);
	}
	prof_unlock();
}

/* ------------------------------------------------------------------ */
/* Per launch                                                          */

/* No matching launch can be selected any more (launch_count reached). */
static int prof_selection_over_locked(void)
{
	return coll_cfg.launch_count >= 0 &&
	       prof_matched >= coll_cfg.launch_skip + coll_cfg.launch_count;
}

/* Start the context's session (a launch callback's enter: its context is
 * current).  0 ok. */
static int prof_session_start_locked(struct prof_ctx *pc, int64_t ordinal)
{
	CUpti_RangeProfiler_Start_Params st = { .structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE };
	st.pRangeProfilerObject = pc->obj;
	double t0 = prof_ms();
	CUptiResult r = cuptiRangeProfilerStart(&st);
	if (r != CUPTI_SUCCESS) {
		prof_fail_locked(r, "cuptiRangeProfilerStart");
		return -1;
	}
	prof_session_opened_locked(pc);
	COLL_DEBUG("launch %lld: session started (start %.3f ms)", (long long)ordinal, prof_ms() - t0);
	return 0;
}

/* A user range around the launch (KGATE_RANGE=user); 0 ok. */
static int prof_push_locked(struct prof_ctx *pc, int64_t ordinal)
{
	char name[32];

	snprintf(name, sizeof(name), "%lld", (long long)ordinal);
	CUpti_RangeProfiler_PushRange_Params pr = { .structSize = CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE };
	pr.pRangeProfilerObject = pc->obj;
	pr.pRangeName = name;
	CUptiResult r = cuptiRangeProfilerPushRange(&pr);
	if (r != CUPTI_SUCCESS) {
		prof_fail_locked(r, "cuptiRangeProfilerPushRange");
		return -1;
	}
	return 0;
}

/* A session's waiting launches and ranges are full: the session ends. */
static int prof_session_full(const struct prof_ctx *pc)
{
	/* room for a flush's range and the launch's */
	return pc->n_ranges >= prof_batch || pc->n_pending + 2 > prof_cap;
}

int profiler_launch_enter(CUcontext ctx, const char *symbol, int64_t ordinal, int graph,
			  CUstream stream)
{
	if (pmsample_engine())
		return pmsample_launch_enter(ctx, symbol, ordinal, graph);
	if (coll_cfg.mode != COLL_METRICS || !ctx)
		return PROF_NO;
	prof_lock();
	prof_cur_stream = stream;
	/* A capture may have begun since the launch looked (its begin marks
	 * it, then waits for this lock): no profiler call during a capture. */
	if (prof_off || launch_capture_active()) {
		COLL_DEBUG("launch %lld %s: not profiled (%s)", (long long)ordinal, symbol ? symbol : "?",
			   prof_off ? "profiler off" : "a capture is on");
		/* the profiler failed mid-run: a launch it would have profiled
		 * misses its counters (the footer counts it) */
		if (prof_off && prof_failed && !graph && !launch_capture_active() &&
		    !coll_cfg.step_replay && prof_select_locked(symbol))
			launch_missed_counters();
		goto no;
	}
	if (graph) {
		/* A graph's kernels are not profiled: an open session ends before
		 * the graph launch, and none starts until its call returns. */
		if (!prof_any_session && !coll_cfg.step_replay)
			goto no;
		for (size_t i = 0; i < prof_n_ctx; i++)
			if (prof_ctxs[i].open)
				prof_decode_locked(&prof_ctxs[i], 0);
		return PROF_HELD;
	}
	if (coll_cfg.step_replay)
		return prof_step_launch_locked(ctx, symbol, ordinal, stream);
	int sel = prof_select_locked(symbol);
	struct prof_ctx *pc = prof_find_locked(ctx, sel);
	if (!sel) {
		/* In an open session every kernel of the context makes a range:
		 * this one's range gives its duration; it has no counters. */
		if (pc && pc->open && !pc->failed) {
			/* with user ranges it makes no range: it costs nothing, and
			 * the session stays open */
			int many = !coll_cfg.user_range && pc->others >= PROF_OTHERS_MAX;
			if (prof_session_full(pc) || many) {
				COLL_DEBUG("launch %lld: the session stops (%s)", (long long)ordinal,
					   many ? "launches left out in a row" : "a full batch");
				prof_decode_locked(pc, 0);
			}
			if (pc->open) {
				pc->others++;
				prof_active = pc;
				if (coll_cfg.events)
					prof_event_record(pc, pc->n_pending, 0);
				return PROF_SESSION_OTHER;
			}
		}
		COLL_DEBUG("launch %lld %s: not profiled (filtered)", (long long)ordinal,
			   symbol ? symbol : "?");
		/* no session may start while this launch is in the driver, or
		 * its kernel would make a range no launch is waiting for */
		if (prof_any_session && !prof_selection_over_locked())
			return PROF_HELD;
		goto no;
	}
	if (!pc || pc->failed) {
		COLL_DEBUG("launch %lld: not profiled (%s)", (long long)ordinal,
			   pc ? "its context's profiler failed" : "no profiler for its context");
		goto missed;
	}
	if (!pc->enabled) {
		double te = prof_ms();
		if (prof_ctx_start_locked(pc) != 0)
			goto missed;
		COLL_DEBUG("profiler enabled (enable, counter data image, set config; %s): %.3f ms",
			   pc->session ? "user replay session" : "kernel replay", prof_ms() - te);
	}
	if (pc->session) {
		if (prof_session_full(pc))
			prof_decode_locked(pc, 0); /* a full batch: the session ends */
		if (prof_off || pc->failed)
			goto missed;
		if (!pc->open && prof_session_start_locked(pc, ordinal) != 0)
			goto missed;
		/* Cache control: the flush on the stream with auto ranges makes
		 * a range of its own (dropped); with user ranges it runs, and is
		 * waited for, before the range is pushed, so it is not counted;
		 * in the collector's own context it is never profiled. */
		if (coll_cfg.cache_all && flush_run(pc->ctx, stream, coll_cfg.user_range) == 1 &&
		    !coll_cfg.user_range) {
			pc->pending[pc->n_pending] = -1;
			pc->pending_sel[pc->n_pending++] = PROF_SEL_FLUSH;
			pc->n_ranges++;
		}
		if (coll_cfg.user_range && prof_push_locked(pc, ordinal) != 0)
			goto missed;
		if (coll_cfg.events)
			prof_event_record(pc, pc->n_pending, 0);
		pc->others = 0;
		prof_active = pc;
		prof_t_start = prof_ms();
		return PROF_SESSION; /* the lock stays held until the exit */
	}
	int foreign = !pthread_equal(pc->owner, pthread_self());
	if (pc->n_pending >= prof_batch || (foreign && pc->n_pending))
		prof_decode_locked(pc, 0); /* a full batch, or another thread's turn */
	if (prof_off || pc->failed)
		goto missed;
	/* cache control: the flush runs, and is waited for, before the range */
	if (coll_cfg.cache_all)
		(void)flush_run(pc->ctx, stream, 1);
	CUpti_RangeProfiler_Start_Params st = { .structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE };
	st.pRangeProfilerObject = pc->obj;
	double t0 = prof_ms();
	CUptiResult r = cuptiRangeProfilerStart(&st);
	prof_t_start = prof_ms();
	prof_start_ms = prof_t_start - t0;
	if (r != CUPTI_SUCCESS) {
		prof_fail_locked(r, "cuptiRangeProfilerStart");
		goto missed;
	}
	COLL_DEBUG("launch %lld: range started (%s thread, %zu waiting; start %.3f ms)",
		   (long long)ordinal, foreign ? "another" : "the enabling", pc->n_pending, prof_start_ms);
	prof_active = pc;
	prof_active_foreign = foreign;
	return PROF_RANGE; /* the profiler's lock stays held until the exit */
missed:
	/* selected, and refused by a profiler that failed or could not start:
	 * the launch misses its counters (the footer counts it) */
	launch_missed_counters();
no:
	prof_unlock();
	return PROF_NO;
}

void profiler_launch_exit(CUcontext ctx, int64_t ordinal, int decision, int failed)
{
	if (pmsample_engine()) {
		pmsample_launch_exit(ctx, ordinal, decision, failed);
		return;
	}
	struct prof_ctx *pc = prof_active;
	CUptiResult r;

	(void)ctx;
	prof_active = NULL;
	if (decision == PROF_HELD) {
		prof_unlock();
		return;
	}
	if (decision == PROF_STEP_LATER) {
		/* its range is the first pass's launch's: no values of its own */
		prof_unlock();
		launch_set_values(ordinal, NULL);
		return;
	}
	if (decision == PROF_SESSION || decision == PROF_SESSION_OTHER) {
		int ranged = !coll_cfg.user_range || decision == PROF_SESSION;
		if (pc && !prof_off && !pc->failed && pc->open && coll_cfg.events)
			prof_event_record(pc, pc->n_pending, 1);
		if (pc && !prof_off && !pc->failed && pc->open && coll_cfg.user_range &&
		    decision == PROF_SESSION) {
			CUpti_RangeProfiler_PopRange_Params pp = { .structSize = CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE };
			pp.pRangeProfilerObject = pc->obj;
			r = cuptiRangeProfilerPopRange(&pp);
			if (r != CUPTI_SUCCESS)
				prof_fail_locked(r, "cuptiRangeProfilerPopRange");
			/* a failed launch in a user range still makes the range:
			 * it is dropped with the launch's values */
			if (r == CUPTI_SUCCESS && failed) {
				pc->pending[pc->n_pending] = -1;
				pc->pending_sel[pc->n_pending++] = PROF_SEL_FLUSH;
				pc->n_ranges++;
			}
		}
		if (!pc || prof_off || pc->failed || !pc->open || failed) {
			/* a launch that failed made no range */
			COLL_DEBUG("launch %lld exits: no range (%s)", (long long)ordinal,
				   failed ? "the launch failed" : "profiler off");
			prof_unlock();
			launch_set_values(ordinal, NULL);
			return;
		}
		pc->pending[pc->n_pending] = ordinal;
		pc->pending_sel[pc->n_pending++] = decision == PROF_SESSION ? PROF_SEL_RANGE
					       : ranged ? PROF_SEL_OTHER : PROF_SEL_BARE;
		if (ranged)
			pc->n_ranges++;
		COLL_DEBUG("launch %lld: in the session (%s), launch call %.3f ms, %zu ranges waiting",
			   (long long)ordinal, decision == PROF_SESSION ? "profiled" : "filtered out",
			   prof_ms() - prof_t_start, pc->n_pending);
		/* a full batch, or the last launch the filter can select: the
		 * session ends, so that later launches cost nothing */
		if (!pc->step && (prof_session_full(pc) ||
				  (decision == PROF_SESSION && prof_selection_over_locked())))
			prof_decode_locked(pc, 0);
		prof_unlock();
		return;
	}
	if (!pc || prof_off || pc->failed) {
		COLL_DEBUG("launch %lld exits: no values (%s)", (long long)ordinal,
			   !pc ? "no active range" : "profiler off");
		prof_unlock();
		launch_set_values(ordinal, NULL);
		return;
	}
	CUpti_RangeProfiler_Stop_Params sp = { .structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
	sp.pRangeProfilerObject = pc->obj;
	double t1 = prof_ms();
	r = cuptiRangeProfilerStop(&sp);
	COLL_DEBUG("launch %lld: launch call %.3f ms, stop %.3f ms", (long long)ordinal, t1 - prof_t_start,
		   prof_ms() - t1);
	if (r != CUPTI_SUCCESS) {
		prof_fail_locked(r, "cuptiRangeProfilerStop");
		prof_unlock();
		launch_set_values(ordinal, NULL);
		return;
	}
	pc->pending[pc->n_pending++] = ordinal;
	pc->n_ranges++;
	if (pc->n_pending >= prof_batch || prof_active_foreign)
		prof_decode_locked(pc, 0);
	prof_unlock();
}

int profiler_usable(void)
{
	if (pmsample_engine())
		return pmsample_usable();
	int ok;

	prof_lock();
	ok = !prof_off;
	prof_unlock();
	return ok;
}

void profiler_finish(void)
{
	if (!prof_range_engine(pmsample_finish))
		return;
	prof_lock();
	prof_decode_all_locked();
	for (size_t i = 0; i < prof_n_ctx; i++) {
		if (!prof_ctxs[i].failed || prof_ctxs[i].enabled)
			prof_ctx_release_locked(&prof_ctxs[i]);
	}
	prof_off = 1;
	prof_unlock();
}

/* The PM-sampling engine's selection: the launch filter, counted as for the
 * Range Profiler; *over once no later launch can be selected. */
int profiler_selects(const char *symbol, int *over)
{
	int sel = prof_select_locked(symbol);
	*over = prof_selection_over_locked();
	return sel;
}
