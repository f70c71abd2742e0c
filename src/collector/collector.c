/*
 * collector.c: the injection entry point of libkgate-collector.so.
 *
 * The CUDA driver calls InitializeInjection() during cuInit when
 * CUDA_INJECTION64_PATH names this library.  This module reads the KGATE_*
 * environment (include/kgate/records_format.h), owns the records file (header,
 * error records, footer, the lock every writer takes), subscribes to CUPTI
 * once and dispatches the callbacks to nvtx.c, launch.c and profiler.c, and
 * finishes everything at exit.  Whatever fails, the host program goes on:
 * each failure becomes an error record and one "kgate-collector:" line on
 * stderr, and collection degrades (metrics -> trace -> header and footer).
 */
#include "coll.h"

#include <cuda.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kgate/records_format.h"
#include "launch.h"
#include "metrics.h"
#include "nvtx.h"
#include "pmsample.h"
#include "profiler.h"
#include "trace.h"

struct coll_cfg coll_cfg;

/* The records file and what the footer counts; all under coll_mu. */
static pthread_mutex_t coll_mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *coll_out;
static int coll_header_done;
static int coll_closed;
static uint64_t coll_kernels, coll_errors, coll_dropped, coll_late;
static time_t coll_start_time;
static CUpti_SubscriberHandle coll_sub;

/* Error records made before the header can be written (during cuInit the
 * driver cannot be asked for the devices yet) wait here. */
#define COLL_EARLY_MAX 16
static char *coll_early[COLL_EARLY_MAX];
static size_t coll_n_early;

static void coll_finish(void);

/* ------------------------------------------------------------------ */
/* Errors                                                              */

const char *coll_code(CUptiResult r)
{
	switch (r) {
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
		return "insufficient_privileges";
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		return "subscriber_busy";
	case CUPTI_ERROR_INVALID_DEVICE:
		return "no_device";
	case CUPTI_ERROR_HARDWARE_BUSY:
		return "hardware_busy";
	case CUPTI_ERROR_NOT_SUPPORTED:
	case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
		return "not_supported";
	case CUPTI_ERROR_INVALID_METRIC_NAME:
		return "invalid_metric";
	default:
		return "cupti_error";
	}
}

/* Under coll_mu: write one line (already with its newline). */
static void coll_put_locked(const char *s, size_t n)
{
	if (coll_out && fwrite(s, 1, n, coll_out) != n && !coll_late++)
		fprintf(stderr, "kgate-collector: cannot write the records file: %s\n",
			strerror(errno));
}

/* Under coll_mu: close the record w, write it as one line, free it. */
static void coll_put_record_locked(struct jw *w)
{
	jw_obj_close(w);
	jw_raw(w, "\n", 1);
	if (!w->oom)
		coll_put_locked(w->buf, w->len);
	jw_free(w);
}

void coll_error(const char *code, int cupti, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	struct jw w;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "kgate-collector: %s\n", msg);

	jw_init(&w);
	jw_obj_open(&w);
	jw_kstr(&w, "type", "error");
	jw_kstr(&w, "code", code);
	if (cupti >= 0)
		jw_kint(&w, "cupti", cupti);
	jw_kstr(&w, "message", msg);
	jw_obj_close(&w);
	jw_raw(&w, "\n", 1);
	if (w.oom) {
		jw_free(&w);
		return;
	}
	pthread_mutex_lock(&coll_mu);
	if (!coll_closed) {
		coll_errors++;
		if (coll_header_done) {
			coll_put_locked(w.buf, w.len);
		} else if (coll_n_early < COLL_EARLY_MAX) {
			coll_early[coll_n_early++] = w.buf;
			w.buf = NULL;
		}
	}
	pthread_mutex_unlock(&coll_mu);
	jw_free(&w);
}

int coll_check(CUptiResult r, const char *what, const char *instead)
{
	const char *s = NULL;

	if (r == CUPTI_SUCCESS)
		return 0;
	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		s = "unknown CUPTI error";
	coll_error(coll_code(r), (int)r, "%s failed: %s (CUPTI error %d)%s%s", what, s, (int)r,
		   instead ? "; " : "", instead ? instead : "");
	return -1;
}

/* ------------------------------------------------------------------ */
/* Configuration                                                       */

long coll_env_long(const char *name, long dflt, long min, long max)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return dflt;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max) {
		if (max == LONG_MAX)
			coll_error("bad_config", -1, "%s='%s' is not an integer >= %ld; using %ld",
				   name, s, min, dflt);
		else
			coll_error("bad_config", -1, "%s='%s' is not an integer %ld..%ld; using %ld",
				   name, s, min, max, dflt);
		return dflt;
	}
	return v;
}

/* Is s[0..n) a launch__* metric the trace gives anyway? */
static int metrics_derived_n(const char *s, size_t n)
{
	char buf[128];
	memcpy(buf, s, n);
	buf[n] = '\0';
	return metrics_derived(buf);
}

/* Split a comma list (spaces around names are dropped; the launch__*
 * metrics derived from activity records are not the profiler's). */
static void coll_split_metrics(const char *s)
{
	const char *p = s;

	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		const char *q = p;
		while (*q && *q != ',')
			q++;
		const char *e = q;
		while (e > p && e[-1] == ' ')
			e--;
		if (e > p && !(e - p < 128 && metrics_derived_n(p, (size_t)(e - p)))) {
			char **m = realloc(coll_cfg.metrics,
					   (coll_cfg.n_metrics + 1) * sizeof(*m));
			char *name = strndup(p, (size_t)(e - p));
			if (!m || !name) {
				free(name);
				if (m)
					coll_cfg.metrics = m;
				return;
			}
			coll_cfg.metrics = m;
			coll_cfg.metrics[coll_cfg.n_metrics++] = name;
		}
		p = q;
	}
}

/* One of two words from the environment: 0 the first (or unset), 1 the
 * second; a bad value is an error record and gives def. */
static int coll_env_choice(const char *name, const char *a, const char *b, int def)
{
	const char *v = getenv(name);

	if (!v || !*v)
		return def;
	if (!strcmp(v, a))
		return 0;
	if (!strcmp(v, b))
		return 1;
	coll_error("bad_config", -1, "%s='%s' is not %s or %s; using %s", name, v, a, b,
		   def ? b : a);
	return def;
}

/* Metrics mode's cache control, the session's ranges and where its
 * durations come from (docs/collector.md). */
static void coll_read_session_env(void)
{
	coll_cfg.cache_all = coll_env_choice(KG_ENV_CACHE_CONTROL, "none", "all", 1);
	coll_cfg.flush_own = coll_env_choice(KG_ENV_CACHE_FLUSH, "stream", "context", 0);
	coll_cfg.user_range = coll_env_choice(KG_ENV_RANGE, "auto", "user", 0);
	/* a user range's own duration is inflated: events by default there */
	coll_cfg.events = coll_env_choice(KG_ENV_DURATION, "range", "events", coll_cfg.user_range);
}

static void coll_read_env(void)
{
	const char *mode = getenv(KG_ENV_MODE), *replay = getenv(KG_ENV_REPLAY);
	const char *metrics = getenv(KG_ENV_METRICS), *k = getenv(KG_ENV_KERNELS);

	coll_cfg.mode = COLL_TRACE;
	if (mode && *mode && strcmp(mode, "trace") != 0) {
		if (strcmp(mode, "metrics") == 0)
			coll_cfg.mode = COLL_METRICS;
		else
			coll_error("bad_config", -1,
				   "%s='%s' is not trace or metrics; collecting a trace", KG_ENV_MODE,
				   mode);
	}
	if (replay && *replay && strcmp(replay, "kernel") != 0) {
		if (strcmp(replay, "application") == 0)
			coll_cfg.app_replay = 1;
		else if (strcmp(replay, "step") == 0)
			coll_cfg.step_replay = 1;
		else
			coll_error("bad_config", -1,
				   "%s='%s' is not kernel, application or step; using kernel replay",
				   KG_ENV_REPLAY, replay);
	}
	{
		const char *sr = getenv(KG_ENV_STEP_RANGE);
		coll_cfg.step_range = sr && *sr ? sr : "step";
	}
	coll_cfg.kernels = k && *k ? k : NULL;
	const char *nb = getenv(KG_ENV_NAME_BASE);
	if (nb && *nb) {
		if (!strcmp(nb, "function"))
			coll_cfg.name_base = 1;
		else if (!strcmp(nb, "demangled"))
			coll_cfg.name_base = 2;
		else if (!strcmp(nb, "mangled"))
			coll_cfg.name_base = 3;
		else
			coll_error("bad_config", -1, "%s='%s' is not function, demangled or mangled; "
				   "matching every name", KG_ENV_NAME_BASE, nb);
	}
	coll_cfg.launch_skip = coll_env_long(KG_ENV_LAUNCH_SKIP, 0, 0, LONG_MAX);
	/* 0 (the suite file's default) and unset both mean no limit */
	coll_cfg.launch_count = coll_env_long(KG_ENV_LAUNCH_COUNT, 0, 0, LONG_MAX);
	if (coll_cfg.launch_count == 0)
		coll_cfg.launch_count = -1;
	coll_cfg.pass = (int)coll_env_long(KG_ENV_PASS, 0, 0, LONG_MAX);
	coll_cfg.flush_ms = (unsigned)coll_env_long(KG_ENV_FLUSH_MS, 500, 0, LONG_MAX);
	coll_cfg.debug = coll_env_long(KG_ENV_DEBUG, 0, 0, LONG_MAX) > 0;
	coll_cfg.passes = 1;
	coll_read_session_env();
	if (coll_cfg.mode == COLL_METRICS) {
		if (metrics && *metrics) {
			coll_split_metrics(metrics);
			if (!coll_cfg.n_metrics)
				coll_cfg.mode = COLL_TRACE; /* only launch__*: the trace has them */
		} else {
			for (size_t i = 0; metrics_default[i]; i++)
				coll_split_metrics(metrics_default[i]);
		}
		for (size_t i = 0; i < coll_cfg.n_metrics; i++)
			if (strcmp(coll_cfg.metrics[i], KG_M_DURATION) == 0)
				coll_cfg.duration_asked = 1;
	}
}

/* KGATE_RECORDS with "%p" replaced by the pid. */
static char *coll_records_path(void)
{
	const char *t = getenv(KG_ENV_RECORDS);
	char pid[24];
	size_t n = 0, plen;
	char *out;

	if (!t || !*t)
		t = "kgate-records.%p.jsonl";
	plen = (size_t)snprintf(pid, sizeof(pid), "%d", (int)getpid());
	out = malloc(strlen(t) * plen + 2);
	if (!out)
		return NULL;
	for (const char *p = t; *p; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			memcpy(out + n, pid, plen);
			n += plen;
			p++;
		} else {
			out[n++] = *p;
		}
	}
	out[n] = '\0';
	return out;
}

/* ------------------------------------------------------------------ */
/* Header and footer                                                   */

typedef CUresult (*coll_cu_int_fn)(int *);
typedef CUresult (*coll_cu_dev_fn)(CUdevice *, int);
typedef CUresult (*coll_cu_name_fn)(char *, int, CUdevice);
typedef CUresult (*coll_cu_uuid_fn)(CUuuid *, CUdevice);
typedef CUresult (*coll_cu_attr_fn)(int *, CUdevice_attribute, CUdevice);
typedef int (*coll_rt_ver_fn)(int *);

/* A function of lib, already loaded in the process, without linking it:
 * from the process's global scope, else from the library itself (the CUDA
 * runtime loads the driver with dlopen and RTLD_LOCAL, so that libcuda's
 * functions are not in the global scope of most programs). */
static void *coll_sym(const char *lib, const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);
	if (!f) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
		if (h) {
			f = dlsym(h, name);
			dlclose(h);     /* the reference RTLD_NOLOAD took; the library stays */
		}
	}
	return f;
}

void *coll_cuda_sym(const char *name)
{
	return coll_sym("libcuda.so.1", name);
}

static void coll_header_devices(struct jw *w)
{
	coll_cu_int_fn drv_ver = (coll_cu_int_fn)coll_cuda_sym("cuDriverGetVersion");
	coll_cu_int_fn count = (coll_cu_int_fn)coll_cuda_sym("cuDeviceGetCount");
	coll_cu_dev_fn get = (coll_cu_dev_fn)coll_cuda_sym("cuDeviceGet");
	coll_cu_name_fn name = (coll_cu_name_fn)coll_cuda_sym("cuDeviceGetName");
	coll_cu_uuid_fn uuid = (coll_cu_uuid_fn)coll_cuda_sym("cuDeviceGetUuid");
	coll_cu_attr_fn attr = (coll_cu_attr_fn)coll_cuda_sym("cuDeviceGetAttribute");
	coll_rt_ver_fn rt_ver = (coll_rt_ver_fn)coll_sym("libcudart.so.13", "cudaRuntimeGetVersion");
	int n = 0, driver = 0, runtime = 0;

	jw_key(w, "devices");
	jw_arr_open(w);
	if (!count || !get || count(&n) != CUDA_SUCCESS)
		n = 0;
	if (drv_ver && drv_ver(&driver) != CUDA_SUCCESS)
		driver = 0;
	if (rt_ver && rt_ver(&runtime) != 0)
		runtime = 0;
	for (int i = 0; i < n; i++) {
		CUdevice d;
		char nm[256] = "";
		CUuuid u;
		int sms = 0, major = 0, minor = 0;

		if (get(&d, i) != CUDA_SUCCESS)
			continue;
		jw_obj_open(w);
		jw_kint(w, "id", i);
		if (name && name(nm, (int)sizeof(nm), d) == CUDA_SUCCESS)
			jw_kstr(w, "name", nm);
		if (uuid && uuid(&u, d) == CUDA_SUCCESS) {
			const unsigned char *b = (const unsigned char *)u.bytes;
			char s[48];
			snprintf(s, sizeof(s),
				 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
				 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
				 b[11], b[12], b[13], b[14], b[15]);
			jw_kstr(w, "uuid", s);
		}
		CUpti_Device_GetChipName_Params cp = { .structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE };
		cp.deviceIndex = (size_t)i;
		if (cuptiDeviceGetChipName(&cp) == CUPTI_SUCCESS && cp.pChipName)
			jw_kstr(w, "chip", cp.pChipName);
		if (attr && attr(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d) == CUDA_SUCCESS)
			jw_kint(w, "sms", sms);
		if (attr && attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) ==
				    CUDA_SUCCESS &&
		    attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d) == CUDA_SUCCESS) {
			char cc[16];
			snprintf(cc, sizeof(cc), "%d.%d", major, minor);
			jw_kstr(w, "cc", cc);
		}
		if (driver)
			jw_kint(w, "driver", driver);
		if (runtime)
			jw_kint(w, "runtime", runtime);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

/*
 * The process's place in a distributed job, from the first of the launchers'
 * variables that is set and holds a non-negative integer (torchrun, Open MPI,
 * MPICH/Hydra, Slurm): "rank", "local_rank", "world_size" and "rank_from"
 * (the variable the rank came from).  Nothing when no rank variable is set.
 */
static int coll_env_int(const char *const *names, const char **from)
{
	for (size_t i = 0; names[i]; i++) {
		const char *v = getenv(names[i]);
		char *end;
		long n;

		if (!v || !*v)
			continue;
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno || *end || n < 0 || n > 1 << 24)
			continue;
		if (from)
			*from = names[i];
		return (int)n;
	}
	return -1;
}

static void coll_header_rank(struct jw *w)
{
	static const char *const rank[] = { KG_ENV_RANKS, NULL };
	static const char *const local[] = { KG_ENV_LOCAL_RANKS, NULL };
	static const char *const size[] = { KG_ENV_WORLD_SIZES, NULL };
	const char *from = NULL;
	int r = coll_env_int(rank, &from);

	if (r < 0)
		return;
	jw_kint(w, "rank", r);
	jw_kstr(w, "rank_from", from);
	int l = coll_env_int(local, NULL);
	if (l >= 0)
		jw_kint(w, "local_rank", l);
	int n = coll_env_int(size, NULL);
	if (n > 0)
		jw_kint(w, "world_size", n);
}

static void coll_header_argv(struct jw *w)
{
	const size_t cap = 1 << 16; /* longer command lines are cut */
	char *buf = malloc(cap);
	size_t n = 0;
	int fd = buf ? open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC) : -1;

	jw_key(w, "argv");
	jw_arr_open(w);
	if (fd >= 0) {
		ssize_t r;
		while (n < cap && (r = read(fd, buf + n, cap - n)) > 0)
			n += (size_t)r;
		close(fd);
	}
	for (size_t i = 0; i < n;) {
		size_t len = strnlen(buf + i, n - i);
		jw_vstrn(w, buf + i, len);
		i += len + 1;
	}
	free(buf);
	jw_arr_close(w);
}

/* Under coll_mu. */
static void coll_header_locked(void)
{
	struct jw w;
	uint32_t cupti = 0;

	if (coll_header_done || coll_closed)
		return;
	coll_header_done = 1;
	if (cuptiGetVersion(&cupti) != CUPTI_SUCCESS)
		cupti = 0;
	jw_init(&w);
	jw_obj_open(&w);
	jw_kstr(&w, "type", "header");
	jw_kint(&w, "format", KG_RECORDS_FORMAT);
	jw_kstr(&w, "collector", COLL_VERSION);
	jw_kint(&w, "cupti", cupti);
	jw_kstr(&w, "mode", coll_cfg.mode == COLL_METRICS ? "metrics" : "trace");
	jw_kint(&w, "pid", getpid());
	jw_kint(&w, "ppid", getppid());
	jw_kint(&w, "pass", coll_cfg.app_replay ? coll_cfg.pass : 0);
	jw_kint(&w, "passes", coll_cfg.app_replay ? coll_cfg.passes : 1);
	jw_kstr(&w, "replay", coll_cfg.app_replay ? "application"
			      : coll_cfg.mode == COLL_METRICS && coll_cfg.step_replay ? "step"
			      : coll_cfg.mode == COLL_METRICS && coll_cfg.replay_user ? "user"
										 : "kernel");
	if (coll_cfg.mode == COLL_METRICS && pmsample_engine())
		jw_kstr(&w, "engine", "sampling");
	if (coll_cfg.mode == COLL_METRICS && coll_cfg.step_replay) {
		jw_kstr(&w, "step_range", coll_cfg.step_range);
		jw_kint(&w, "step_passes", coll_cfg.step_passes);
	}
	if (coll_cfg.mode == COLL_METRICS) {
		jw_kstr(&w, "cache_control", coll_cfg.cache_all ? "all" : "none");
		if (coll_cfg.cache_all)
			jw_kstr(&w, "cache_flush", coll_cfg.flush_own ? "context" : "stream");
		if (coll_cfg.replay_user) {
			jw_kstr(&w, "range", coll_cfg.user_range ? "user" : "auto");
			jw_kstr(&w, "duration", coll_cfg.events ? "events" : "range");
		}
	}
	coll_header_argv(&w);
	jw_kint(&w, "time", (int64_t)coll_start_time);
	coll_header_rank(&w);
	coll_header_devices(&w);
	jw_key(&w, "metrics");
	jw_arr_open(&w);
	if (coll_cfg.mode == COLL_METRICS) {
		for (size_t i = 0; i < coll_cfg.n_metrics; i++)
			jw_vstr(&w, coll_cfg.metrics[i]);
	} else {
		static const char *const derived[] = { KG_M_DURATION, KG_M_GRID, KG_M_BLOCK,
						       KG_M_REGS, KG_M_SMEM_ST, KG_M_SMEM_DYN,
						       KG_M_LOCAL };
		for (size_t i = 0; i < sizeof(derived) / sizeof(derived[0]); i++)
			jw_vstr(&w, derived[i]);
	}
	jw_arr_close(&w);
	coll_put_record_locked(&w);
	for (size_t i = 0; i < coll_n_early; i++) {
		coll_put_locked(coll_early[i], strlen(coll_early[i]));
		free(coll_early[i]);
	}
	coll_n_early = 0;
	if (coll_out)
		fflush(coll_out);
}

void coll_debug_line(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "kgate-collector[%lu]: %s\n", (unsigned long)pthread_self(), line);
}

void coll_first_launch(CUcontext ctx)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static atomic_int done;

	if (atomic_load(&done))
		return;
	pthread_mutex_lock(&mu);
	if (!atomic_load(&done)) {
		/* the profiler first: it may split the metric set or find metrics
		 * impossible, which the header then says */
		if (coll_cfg.mode == COLL_METRICS) {
			/* Not in InitializeInjection: there the driver is still inside
			 * cuInit and cuptiProfilerInitialize fails (CUPTI_ERROR_UNKNOWN,
			 * seen on an H200 with CUDA 13.0). */
			if (profiler_start() != 0) {
				coll_error("metrics_unavailable", -1,
					   "metrics mode is not available; collecting a trace instead");
				coll_cfg.mode = COLL_TRACE;
			} else {
				profiler_prepare(ctx);
				if (!profiler_usable())
					coll_cfg.mode = COLL_TRACE;
			}
		}
		coll_header();
		atomic_store(&done, 1);
	}
	pthread_mutex_unlock(&mu);
}

void coll_header(void)
{
	pthread_mutex_lock(&coll_mu);
	coll_header_locked();
	pthread_mutex_unlock(&coll_mu);
}

void coll_write(struct jw *w, int is_kernel)
{
	jw_raw(w, "\n", 1);
	if (w->oom)
		return;
	pthread_mutex_lock(&coll_mu);
	if (coll_closed) {
		coll_late++;
	} else {
		coll_header_locked();
		coll_put_locked(w->buf, w->len);
		if (is_kernel)
			coll_kernels++;
	}
	pthread_mutex_unlock(&coll_mu);
}

void coll_flush(void)
{
	pthread_mutex_lock(&coll_mu);
	if (coll_out && !coll_closed)
		fflush(coll_out);
	pthread_mutex_unlock(&coll_mu);
}

void coll_add_dropped(uint64_t n)
{
	pthread_mutex_lock(&coll_mu);
	coll_dropped += n;
	pthread_mutex_unlock(&coll_mu);
}

static void coll_footer(void)
{
	struct jw w;

	pthread_mutex_lock(&coll_mu);
	coll_header_locked();
	jw_init(&w);
	jw_obj_open(&w);
	jw_kstr(&w, "type", "footer");
	jw_kint(&w, "kernels", (int64_t)coll_kernels);
	jw_kint(&w, "dropped", (int64_t)coll_dropped);
	jw_kint(&w, "errors", (int64_t)coll_errors);
	launch_footer_fields(&w);
	coll_put_record_locked(&w);
	if (coll_out) {
		if (fclose(coll_out) != 0)
			fprintf(stderr, "kgate-collector: cannot write the records file: %s\n",
				strerror(errno));
		coll_out = NULL;
	}
	coll_closed = 1;
	pthread_mutex_unlock(&coll_mu);
}

/* ------------------------------------------------------------------ */
/* Callbacks                                                           */

static void CUPTIAPI coll_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				   const void *data)
{
	(void)ud;
	switch (dom) {
	case CUPTI_CB_DOMAIN_NVTX:
		nvtx_on_callback(cbid, data);
		break;
	case CUPTI_CB_DOMAIN_RUNTIME_API:
	case CUPTI_CB_DOMAIN_DRIVER_API:
		launch_on_callback(dom, cbid, (const CUpti_CallbackData *)data);
		break;
	case CUPTI_CB_DOMAIN_RESOURCE: {
		const CUpti_ResourceData *rd = data;
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
			profiler_on_context_destroy(rd->context);
			trace_flush(1);
		}
		break;
	}
	case CUPTI_CB_DOMAIN_STATE:
		if (cbid == CUPTI_CBID_STATE_FATAL_ERROR) {
			const CUpti_StateData *sd = data;
			coll_error("cupti_fatal", (int)sd->notification.result,
				   "CUPTI stopped profiling after a fatal error: %s",
				   sd->notification.message ? sd->notification.message : "(no message)");
		}
		break;
	default:
		break;
	}
}

/* Subscribe and enable the domains; 0 ok, -1 no callbacks at all. */
static int coll_subscribe(void)
{
	char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 4] = "";
	CUpti_SubscriberParams sp = { .structSize = CUpti_SubscriberParams_STRUCT_SIZE };
	CUptiResult r;

	sp.subscriberName = "kgate-collector";
	sp.oldSubscriberName = old;
	sp.oldSubscriberSize = sizeof(old);
	r = cuptiSubscribe_v2(&coll_sub, coll_callback, NULL, &sp);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		coll_error("subscriber_busy", (int)r,
			   "another profiler holds the CUPTI subscription (%s); no kernels are "
			   "recorded in this process (do not run the collector under ncu or nsys)",
			   old[0] ? old : "unknown tool");
		return -1;
	}
	if (r != CUPTI_SUCCESS && !dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
		coll_error("no_device", (int)r,
			   "no CUDA driver in this process (cuptiSubscribe_v2: CUPTI error %d); "
			   "no kernels are recorded", (int)r);
		return -1;
	}
	if (coll_check(r, "cuptiSubscribe_v2", "no kernels are recorded in this process"))
		return -1;
	coll_check(cuptiEnableCallback(1, coll_sub, CUPTI_CB_DOMAIN_RESOURCE,
				       CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING),
		   "cuptiEnableCallback(CONTEXT_DESTROY_STARTING)", NULL);
	/* not fatal when missing: older CUPTI has no state domain callback */
	(void)cuptiEnableCallback(1, coll_sub, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR);
	coll_check(cuptiEnableDomain(1, coll_sub, CUPTI_CB_DOMAIN_NVTX),
		   "cuptiEnableDomain(NVTX)", "kernels carry no NVTX path");
	launch_enable(coll_sub);
	return 0;
}

/* NVTX ranges reach this CUPTI only when NVTX_INJECTION64_PATH names this
 * library (which forwards them, see InitializeInjectionNvtx2 below) or the
 * libcupti this process uses (PyTorch may load its own copy first). */
static void coll_check_nvtx_path(void)
{
	const char *nv = getenv("NVTX_INJECTION64_PATH");
	Dl_info info, self;
	char *a, *b, *c = NULL;

	if (!nv || !*nv)
		return; /* a program without NVTX ranges needs none */
	if (!dladdr((void *)cuptiGetVersion, &info) || !info.dli_fname)
		return;
	a = realpath(nv, NULL);
	b = realpath(info.dli_fname, NULL);
	if (dladdr((void *)coll_check_nvtx_path, &self) && self.dli_fname)
		c = realpath(self.dli_fname, NULL);
	/* naming this library is right: it forwards NVTX to b */
	if (a && b && strcmp(a, b) != 0 && !(c && strcmp(a, c) == 0))
		coll_error("nvtx_mismatch", -1,
			   "NVTX_INJECTION64_PATH names %s but this process uses %s; NVTX ranges "
			   "may not reach the collector", a, b);
	free(a);
	free(b);
	free(c);
}

static void coll_atexit(void)
{
	COLL_DEBUG("the process exits");
	coll_finish();
}

static pthread_once_t coll_finish_once = PTHREAD_ONCE_INIT;

static pid_t coll_pid;

static void coll_finish_run(void)
{
	if (getpid() != coll_pid)
		return; /* a forked child: the parent finishes its file */
	if (coll_sub)
		profiler_finish();
	trace_finish();
	launch_finish();
	coll_footer();
	if (coll_late)
		fprintf(stderr, "kgate-collector: %llu records came after the footer and are lost\n",
			(unsigned long long)coll_late);
}

static void coll_finish(void)
{
	pthread_once(&coll_finish_once, coll_finish_run);
}

/*
 * fork() without exec: the child must not write into the parent's file
 * (nor flush a copy of its stdio buffer there, nor add a footer at its
 * exit).  The buffer is flushed before the fork and the child lets go.
 */
static void coll_fork_prepare(void)
{
	pthread_mutex_lock(&coll_mu);
	if (coll_out)
		fflush(coll_out);
}

static void coll_fork_parent(void)
{
	pthread_mutex_unlock(&coll_mu);
}

static void coll_fork_child(void)
{
	if (coll_out)
		fclose(coll_out);
	coll_out = NULL;
	coll_closed = 1;
	pthread_mutex_unlock(&coll_mu);
}

static pthread_mutex_t coll_init_mu = PTHREAD_MUTEX_INITIALIZER;
static int coll_initialized;

__attribute__((visibility("default"))) int InitializeInjection(void);

int InitializeInjection(void)
{
	char *path;

	pthread_mutex_lock(&coll_init_mu);
	if (coll_initialized) {
		pthread_mutex_unlock(&coll_init_mu);
		return 1;
	}
	coll_initialized = 1;
	pthread_mutex_unlock(&coll_init_mu);

	coll_start_time = time(NULL);
	coll_pid = getpid();
	path = coll_records_path();
	if (path) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0)
			coll_out = fdopen(fd, "w");
		if (!coll_out) {
			fprintf(stderr, "kgate-collector: cannot open '%s': %s; nothing is recorded\n",
				path, strerror(errno));
			if (fd >= 0)
				close(fd);
			free(path);
			return 1;
		}
		setvbuf(coll_out, NULL, _IOFBF, 1 << 16);
		free(path);
	} else {
		fprintf(stderr, "kgate-collector: out of memory; nothing is recorded\n");
		return 1;
	}
	coll_read_env();
	pthread_atfork(coll_fork_prepare, coll_fork_parent, coll_fork_child);
	if (atexit(coll_atexit) != 0)
		fprintf(stderr, "kgate-collector: atexit failed; the records file may lack its footer\n");

	if (coll_subscribe() != 0) {
		/* nothing to collect without callbacks: only the header, the error
		 * and the footer are written */
		if (coll_cfg.mode == COLL_METRICS)
			coll_cfg.mode = COLL_TRACE;
		return 1;
	}
	coll_check_nvtx_path();
	if (coll_cfg.mode == COLL_METRICS && profiler_init() != 0) {
		coll_error("metrics_unavailable", -1,
			   "metrics mode is not available; collecting a trace instead");
		coll_cfg.mode = COLL_TRACE;
	}
	trace_init();
	return 1;
}

/*
 * The NVTX entry point, for NVTX_INJECTION64_PATH naming this library (what
 * kgate run sets).  NVTX calls it at the process's first NVTX call, which
 * may come before the first CUDA call: the collector starts here, so that
 * ranges opened before cuInit are on the threads' stacks, and then hands
 * NVTX over to the libcupti this library is bound to, which turns NVTX calls
 * into the callbacks nvtx.c follows.  Whichever copy of libcupti the process
 * loaded first (PyTorch loads the one of its own wheel), its ranges reach
 * the copy the collector subscribed to.  Returns libcupti's answer; 0 (NVTX
 * then turns its calls into no-ops) when no libcupti entry point is found.
 */
typedef const void *(*coll_nvtx_export_fn)(uint32_t table_id);

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(coll_nvtx_export_fn get_table);

int InitializeInjectionNvtx2(coll_nvtx_export_fn get_table)
{
	int (*cupti_init)(coll_nvtx_export_fn) = NULL;
	Dl_info info = { 0 };
	void *h = NULL;

	(void)InitializeInjection();
	if (dladdr((void *)cuptiGetVersion, &info) && info.dli_fname)
		h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (h)
		*(void **)&cupti_init = dlsym(h, "InitializeInjectionNvtx2");
	if (!cupti_init || cupti_init == InitializeInjectionNvtx2) {
		coll_error("nvtx_unavailable", -1,
			   "the libcupti in use (%s) has no NVTX entry point; kernels carry no NVTX path",
			   info.dli_fname ? info.dli_fname : "?");
		return 0;
	}
	return cupti_init(get_table);
}
