/*
 * gpustate.c: a GPU's state through NVML loaded at run time (gpustate.h).
 *
 * Owns the loading of NVML (dlopen, never a link-time dependency: the
 * binary runs where no driver is installed), the reads of one device's
 * clocks, temperature, power, clock-event reasons, utilization and compute
 * processes, the words for what a state shows, and its JSON form.
 *
 * NVML's declarations are written out below instead of included: nvml.h is
 * not part of the CUDA toolkit's packages on Debian or of the GPU machines
 * kgate builds for.  Only the few functions and constants used are
 * declared, each with the ABI NVML has kept since CUDA 11 (the _v2 and _v3
 * entry points, the four-field process record).  A missing entry point
 * leaves its fields at -1; it does not stop the others.
 */
#include "kgate/gpustate.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* --- NVML's ABI, the parts used (see the file-top comment) --- */
typedef int nvml_ret;
typedef void *nvml_dev;
#define NVML_OK 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_TEMPERATURE_GPU 0
#define NVML_NAME_LEN 96
#define NVML_VALUE_NOT_AVAILABLE (~0ull)

struct nvml_util {
	unsigned gpu, memory;
};
struct nvml_proc {          /* nvmlProcessInfo_t since CUDA 11.x (v2 and v3 calls) */
	unsigned pid;
	unsigned long long used;
	unsigned gi, ci;
};

/* Clock-event reason bits (nvmlClocksEventReason*). */
static const struct {
	long long bit;
	const char *name;
	int slows;                 /* 1: a slowdown, not just "idle" or "as set" */
} reasons[] = {
	{ 0x1, "gpu_idle", 0 },
	{ 0x2, "applications_clocks_setting", 0 },
	{ 0x4, "sw_power_cap", 1 },
	{ 0x8, "hw_slowdown", 1 },
	{ 0x10, "sync_boost", 1 },
	{ 0x20, "sw_thermal_slowdown", 1 },
	{ 0x40, "hw_thermal_slowdown", 1 },
	{ 0x80, "hw_power_brake_slowdown", 1 },
	{ 0x100, "display_clock_setting", 0 },
};

struct kg_nvml {
	void *lib;
	int ready;
	char why[160];
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	const char *(*error_string)(nvml_ret);
	nvml_ret (*count)(unsigned *);
	nvml_ret (*by_index)(unsigned, nvml_dev *);
	nvml_ret (*by_uuid)(const char *, nvml_dev *);
	nvml_ret (*name)(nvml_dev, char *, unsigned);
	nvml_ret (*uuid)(nvml_dev, char *, unsigned);
	nvml_ret (*clock)(nvml_dev, int, unsigned *);
	nvml_ret (*app_clock)(nvml_dev, int, unsigned *);
	nvml_ret (*max_clock)(nvml_dev, int, unsigned *);
	nvml_ret (*temperature)(nvml_dev, int, unsigned *);
	nvml_ret (*power)(nvml_dev, unsigned *);
	nvml_ret (*power_limit)(nvml_dev, unsigned *);
	nvml_ret (*events)(nvml_dev, unsigned long long *);
	nvml_ret (*util)(nvml_dev, struct nvml_util *);
	nvml_ret (*procs)(nvml_dev, unsigned *, struct nvml_proc *);
};

static void *sym(void *lib, const char *a, const char *b)
{
	void *p = dlsym(lib, a);

	if (!p && b)
		p = dlsym(lib, b);
	return p;
}

#define BIND(field, a, b) (*(void **)&nv->field = sym(nv->lib, a, b))

struct kg_nvml *gpustate_open(void)
{
	struct kg_nvml *nv = calloc(1, sizeof(*nv));
	const char *path = getenv("KGATE_NVML_LIBRARY");
	nvml_ret r;

	if (!nv)
		return NULL;
	if (!path || !*path)
		path = "libnvidia-ml.so.1";
	nv->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!nv->lib) {
		const char *e = dlerror();

		snprintf(nv->why, sizeof(nv->why), "NVML not loaded (%s)", e ? e : path);
		return nv;
	}
	BIND(init, "nvmlInit_v2", "nvmlInit");
	BIND(shutdown, "nvmlShutdown", NULL);
	BIND(error_string, "nvmlErrorString", NULL);
	BIND(count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	BIND(by_index, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
	BIND(by_uuid, "nvmlDeviceGetHandleByUUID", NULL);
	BIND(name, "nvmlDeviceGetName", NULL);
	BIND(uuid, "nvmlDeviceGetUUID", NULL);
	BIND(clock, "nvmlDeviceGetClockInfo", NULL);
	BIND(app_clock, "nvmlDeviceGetApplicationsClock", NULL);
	BIND(max_clock, "nvmlDeviceGetMaxClockInfo", NULL);
	BIND(temperature, "nvmlDeviceGetTemperature", NULL);
	BIND(power, "nvmlDeviceGetPowerUsage", NULL);
	BIND(power_limit, "nvmlDeviceGetEnforcedPowerLimit", NULL);
	BIND(events, "nvmlDeviceGetCurrentClocksEventReasons",
	     "nvmlDeviceGetCurrentClocksThrottleReasons");
	BIND(util, "nvmlDeviceGetUtilizationRates", NULL);
	BIND(procs, "nvmlDeviceGetComputeRunningProcesses_v3",
	     "nvmlDeviceGetComputeRunningProcesses_v2");
	if (!nv->init || !nv->count || !nv->by_index) {
		snprintf(nv->why, sizeof(nv->why), "NVML in '%s' lacks nvmlInit or device lookup",
			 path);
		return nv;
	}
	r = nv->init();
	if (r != NVML_OK) {
		snprintf(nv->why, sizeof(nv->why), "NVML did not start: %s",
			 nv->error_string ? nv->error_string(r) : "error");
		return nv;
	}
	nv->ready = 1;
	return nv;
}

void gpustate_close(struct kg_nvml *nv)
{
	if (!nv)
		return;
	if (nv->ready && nv->shutdown)
		nv->shutdown();
	if (nv->lib)
		dlclose(nv->lib);
	free(nv);
}

int gpustate_available(const struct kg_nvml *nv)
{
	return nv && nv->ready;
}

const char *gpustate_why(const struct kg_nvml *nv)
{
	if (!nv)
		return "NVML not loaded (out of memory)";
	return nv->ready ? "" : nv->why;
}

static void state_unknown(struct kg_gpu_state *s)
{
	memset(s, 0, sizeof(*s));
	s->sm_mhz = s->mem_mhz = s->sm_app_mhz = s->mem_app_mhz = -1;
	s->sm_max_mhz = s->mem_max_mhz = s->temp_c = -1;
	s->power_mw = s->power_limit_mw = -1;
	s->clock_events = -1;
	s->util_gpu = s->util_mem = -1;
	s->nprocs = -1;
}

/* One unsigned query: its value, or -1 when NVML could not say. */
#define ASK(call) (ask_r = (call), ask_r == NVML_OK ? (long)ask_v : -1)

static void read_device(struct kg_nvml *nv, nvml_dev d, struct kg_gpu_state *s)
{
	unsigned ask_v = 0;
	nvml_ret ask_r;
	struct timespec ts;

	s->recorded = 1;
	clock_gettime(CLOCK_REALTIME, &ts);
	s->when = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	if (nv->name && nv->name(d, s->name, sizeof(s->name)) != NVML_OK)
		s->name[0] = '\0';
	if (nv->uuid && nv->uuid(d, s->uuid, sizeof(s->uuid)) != NVML_OK)
		s->uuid[0] = '\0';
	s->name[sizeof(s->name) - 1] = s->uuid[sizeof(s->uuid) - 1] = '\0';
	if (nv->clock) {
		s->sm_mhz = ASK(nv->clock(d, NVML_CLOCK_SM, &ask_v));
		s->mem_mhz = ASK(nv->clock(d, NVML_CLOCK_MEM, &ask_v));
	}
	if (nv->app_clock) {
		s->sm_app_mhz = ASK(nv->app_clock(d, NVML_CLOCK_SM, &ask_v));
		s->mem_app_mhz = ASK(nv->app_clock(d, NVML_CLOCK_MEM, &ask_v));
	}
	if (nv->max_clock) {
		s->sm_max_mhz = ASK(nv->max_clock(d, NVML_CLOCK_SM, &ask_v));
		s->mem_max_mhz = ASK(nv->max_clock(d, NVML_CLOCK_MEM, &ask_v));
	}
	if (nv->temperature)
		s->temp_c = ASK(nv->temperature(d, NVML_TEMPERATURE_GPU, &ask_v));
	if (nv->power)
		s->power_mw = ASK(nv->power(d, &ask_v));
	if (nv->power_limit)
		s->power_limit_mw = ASK(nv->power_limit(d, &ask_v));
	if (nv->events) {
		unsigned long long bits = 0;

		if (nv->events(d, &bits) == NVML_OK)
			s->clock_events = (long long)(bits & 0x7fffffffffffffffull);
	}
	if (nv->util) {
		struct nvml_util u = { 0, 0 };

		if (nv->util(d, &u) == NVML_OK) {
			s->util_gpu = (long)u.gpu;
			s->util_mem = (long)u.memory;
		}
	}
	if (nv->procs) {
		/* Ask with room for 64; a busier device is counted by NVML's answer. */
		struct nvml_proc p[64];
		unsigned n = 64;
		nvml_ret r = nv->procs(d, &n, p);

		if (r == NVML_OK || r == NVML_ERROR_INSUFFICIENT_SIZE) {
			/* Too many to list: NVML's n is then the count needed. */
			s->nprocs = (int)(n > 100000 ? 100000 : n);
			for (unsigned i = 0; r == NVML_OK && i < n && i < KG_GPUSTATE_MAX_PROCS; i++) {
				s->procs[i].pid = p[i].pid;
				s->procs[i].used_bytes = p[i].used == NVML_VALUE_NOT_AVAILABLE ||
								 p[i].used > (unsigned long long)LLONG_MAX
							 ? -1
							 : (long long)p[i].used;
				s->nlisted++;
			}
		}
	}
}

int gpustate_read(struct kg_nvml *nv, const char *uuid, struct kg_gpu_state *out)
{
	nvml_dev d = NULL;
	nvml_ret r;

	state_unknown(out);
	if (!gpustate_available(nv)) {
		snprintf(out->why, sizeof(out->why), "%s", gpustate_why(nv));
		return -1;
	}
	if (uuid && *uuid) {
		r = nv->by_uuid ? nv->by_uuid(uuid, &d) : -1;
		if (r != NVML_OK) {
			snprintf(out->why, sizeof(out->why), "NVML does not know device %.100s",
				 uuid);
			return -1;
		}
	} else if ((r = nv->by_index(0, &d)) != NVML_OK) {
		snprintf(out->why, sizeof(out->why), "NVML has no device 0: %s",
			 nv->error_string ? nv->error_string(r) : "error");
		return -1;
	}
	read_device(nv, d, out);
	return 0;
}

size_t gpustate_read_all(struct kg_nvml *nv, struct kg_gpu_state *out, size_t cap)
{
	unsigned n = 0;
	size_t k = 0;

	if (!gpustate_available(nv) || nv->count(&n) != NVML_OK)
		return 0;
	for (unsigned i = 0; i < n && k < cap; i++) {
		nvml_dev d;

		if (nv->by_index(i, &d) != NVML_OK)
			continue;
		state_unknown(&out[k]);
		read_device(nv, d, &out[k]);
		k++;
	}
	return k;
}

int gpustate_wait_idle(struct kg_nvml *nv, const char *uuid, double wait_s, double poll_s,
		       int (*stop)(void), struct kg_gpu_state *last)
{
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct kg_gpu_state all[KG_GPUSTATE_MAX_DEVICES];
		size_t n = 0;
		int busy = 0;

		if (uuid && *uuid) {
			if (gpustate_read(nv, uuid, &all[0]) == 0)
				n = 1;
		} else {
			n = gpustate_read_all(nv, all, KG_GPUSTATE_MAX_DEVICES);
		}
		if (!n) {
			state_unknown(last);
			snprintf(last->why, sizeof(last->why), "%s",
				 gpustate_available(nv) ? "NVML lists no such device"
							: gpustate_why(nv));
			return -1;
		}
		*last = all[0];
		for (size_t i = 0; i < n; i++)
			if (gpustate_others(&all[i], NULL, 0, NULL) > 0) {
				*last = all[i];
				busy = 1;
				break;
			}
		if (!busy)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		double waited = (double)(now.tv_sec - t0.tv_sec) +
				(double)(now.tv_nsec - t0.tv_nsec) / 1e9;
		if (waited >= wait_s || (stop && stop()))
			return 1;
		double nap = poll_s > 0 ? poll_s : 1.0;
		if (nap > wait_s - waited)
			nap = wait_s - waited;
		struct timespec ts = { (time_t)nap, (long)((nap - (double)(time_t)nap) * 1e9) };
		nanosleep(&ts, NULL);
	}
}

long long gpustate_throttle_bits(const struct kg_gpu_state *s)
{
	long long bits = 0;

	if (!s->recorded || s->clock_events < 0)
		return 0;
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].slows && (s->clock_events & reasons[i].bit))
			bits |= reasons[i].bit;
	return bits;
}

const char *gpustate_reason_names(long long bits, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		if (!(bits & reasons[i].bit))
			continue;
		int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
				 reasons[i].name);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
		bits &= ~reasons[i].bit;
	}
	if (bits > 0 && used + 24 < len)
		snprintf(buf + used, len - used, "%sunknown 0x%llx", used ? ", " : "",
			 (unsigned long long)bits);
	return buf;
}

int gpustate_others(const struct kg_gpu_state *s, const unsigned *ours, size_t n,
		    unsigned *first)
{
	int count = 0;
	int listed;

	if (!s->recorded || s->nprocs <= 0)
		return 0;
	listed = s->nlisted;
	for (int i = 0; i < listed; i++) {
		int mine = 0;

		for (size_t k = 0; ours && k < n; k++)
			mine |= ours[k] == s->procs[i].pid;
		if (mine)
			continue;
		if (!count && first)
			*first = s->procs[i].pid;
		count++;
	}
	/* Processes beyond the listed ones cannot be told apart: count them. */
	return count + (s->nprocs - listed);
}

const char *gpustate_concerns(const struct kg_gpu_state *s, char *buf, size_t len)
{
	long long t = gpustate_throttle_bits(s);
	unsigned first = 0;
	int others = gpustate_others(s, NULL, 0, &first);
	char names[200];

	if (!len)
		return buf;
	buf[0] = '\0';
	if (t && others > 0)
		snprintf(buf, len, "clocks slowed (%s); %d other process%s computing (pid %u)",
			 gpustate_reason_names(t, names, sizeof(names)), others,
			 others == 1 ? "" : "es", first);
	else if (t)
		snprintf(buf, len, "clocks slowed (%s)",
			 gpustate_reason_names(t, names, sizeof(names)));
	else if (others > 0)
		snprintf(buf, len, "%d other process%s computing (pid %u)", others,
			 others == 1 ? "" : "es", first);
	return buf;
}

const char *gpustate_clock_difference(const struct kg_gpu_state *a, const struct kg_gpu_state *b,
				      char *buf, size_t len)
{
	if (!len)
		return buf;
	buf[0] = '\0';
	if (!a->recorded || !b->recorded)
		return buf;
	if (a->sm_app_mhz >= 0 && b->sm_app_mhz >= 0 &&
	    (a->sm_app_mhz != b->sm_app_mhz || a->mem_app_mhz != b->mem_app_mhz))
		snprintf(buf, len, "application clocks differ: SM %ld MHz, memory %ld MHz against SM %ld MHz, memory %ld MHz",
			 a->sm_app_mhz, a->mem_app_mhz, b->sm_app_mhz, b->mem_app_mhz);
	else if (a->sm_max_mhz >= 0 && b->sm_max_mhz >= 0 && a->sm_max_mhz != b->sm_max_mhz)
		snprintf(buf, len, "maximum SM clocks differ: %ld MHz against %ld MHz",
			 a->sm_max_mhz, b->sm_max_mhz);
	else if (a->sm_mhz > 0 && b->sm_mhz > 0 &&
		 fabs((double)a->sm_mhz - (double)b->sm_mhz) > 0.05 * (double)b->sm_mhz)
		snprintf(buf, len, "SM clocks differ: %ld MHz against %ld MHz", a->sm_mhz,
			 b->sm_mhz);
	return buf;
}

/* --- JSON --- */

static const struct {
	const char *key;
	size_t off;
	long max;
} longs[] = {
#define L(k, f, m) { k, offsetof(struct kg_gpu_state, f), m }
	L("sm_mhz", sm_mhz, 100000), L("mem_mhz", mem_mhz, 100000),
	L("sm_app_mhz", sm_app_mhz, 100000), L("mem_app_mhz", mem_app_mhz, 100000),
	L("sm_max_mhz", sm_max_mhz, 100000), L("mem_max_mhz", mem_max_mhz, 100000),
	L("temp_c", temp_c, 1000), L("power_mw", power_mw, 100000000),
	L("power_limit_mw", power_limit_mw, 100000000), L("util_gpu", util_gpu, 100),
	L("util_mem", util_mem, 100),
#undef L
};

json_t *gpustate_to_json(const struct kg_gpu_state *s)
{
	json_t *o = json_object();
	json_t *procs;

	if (!o)
		return NULL;
	if (!s->recorded) {
		json_object_set_new(o, "recorded", json_false());
		json_object_set_new(o, "why", json_string(s->why));
		return o;
	}
	json_object_set_new(o, "uuid", json_string(s->uuid));
	json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "when", json_real(s->when));
	for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++) {
		long v = *(const long *)((const char *)s + longs[i].off);

		if (v >= 0)
			json_object_set_new(o, longs[i].key, json_integer(v));
	}
	if (s->clock_events >= 0) {
		char names[400];

		json_object_set_new(o, "clock_events", json_integer(s->clock_events));
		json_object_set_new(o, "clock_event_names",
				    json_string(gpustate_reason_names(s->clock_events, names,
								      sizeof(names))));
	}
	if (s->nprocs >= 0) {
		json_object_set_new(o, "compute_processes", json_integer(s->nprocs));
		procs = json_array();
		for (int i = 0; i < s->nlisted; i++) {
			json_t *p = json_object();

			json_object_set_new(p, "pid", json_integer(s->procs[i].pid));
			if (s->procs[i].used_bytes >= 0)
				json_object_set_new(p, "used_bytes",
						    json_integer(s->procs[i].used_bytes));
			json_array_append_new(procs, p);
		}
		json_object_set_new(o, "processes", procs);
	}
	return o;
}

static int str_field(const json_t *j, const char *key, char *dst, size_t cap, char *err,
		     size_t errlen)
{
	const json_t *v = json_object_get(j, key);

	if (!v)
		return 0;
	if (!json_is_string(v) || json_string_length(v) >= cap) {
		snprintf(err, errlen, "gpu_state.%s: not a string of under %zu bytes", key, cap);
		return -1;
	}
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	if (strlen(dst) != json_string_length(v)) {
		snprintf(err, errlen, "gpu_state.%s: contains a NUL byte", key);
		return -1;
	}
	return 0;
}

static int int_field(const json_t *j, const char *key, long long max, long long *out, char *err,
		     size_t errlen)
{
	const json_t *v = json_object_get(j, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max) {
		snprintf(err, errlen, "gpu_state.%s: not an integer from 0 to %lld", key, max);
		return -1;
	}
	*out = json_integer_value(v);
	return 1;
}

int gpustate_from_json(const json_t *j, struct kg_gpu_state *s, char *err, size_t errlen)
{
	const json_t *rec, *when, *procs;
	long long v;
	int r;

	state_unknown(s);
	if (!json_is_object(j)) {
		snprintf(err, errlen, "gpu_state: not an object");
		return -1;
	}
	rec = json_object_get(j, "recorded");
	if (rec && !json_is_boolean(rec)) {
		snprintf(err, errlen, "gpu_state.recorded: not true or false");
		return -1;
	}
	if (rec && json_is_false(rec)) {
		return str_field(j, "why", s->why, sizeof(s->why), err, errlen);
	}
	s->recorded = 1;
	if (str_field(j, "uuid", s->uuid, sizeof(s->uuid), err, errlen) ||
	    str_field(j, "name", s->name, sizeof(s->name), err, errlen))
		return -1;
	when = json_object_get(j, "when");
	if (when) {
		if (!json_is_number(when) || !isfinite(json_number_value(when)) ||
		    json_number_value(when) < 0) {
			snprintf(err, errlen, "gpu_state.when: not a time in seconds");
			return -1;
		}
		s->when = json_number_value(when);
	}
	for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++) {
		r = int_field(j, longs[i].key, longs[i].max, &v, err, errlen);
		if (r < 0)
			return -1;
		if (r)
			*(long *)((char *)s + longs[i].off) = (long)v;
	}
	r = int_field(j, "clock_events", LLONG_MAX, &v, err, errlen);
	if (r < 0)
		return -1;
	if (r)
		s->clock_events = v;
	r = int_field(j, "compute_processes", 100000, &v, err, errlen);
	if (r < 0)
		return -1;
	if (r)
		s->nprocs = (int)v;
	procs = json_object_get(j, "processes");
	if (procs) {
		size_t i;
		const json_t *p;

		if (!json_is_array(procs) || s->nprocs < 0 ||
		    json_array_size(procs) > (size_t)s->nprocs) {
			snprintf(err, errlen,
				 "gpu_state.processes: not a list of at most compute_processes entries");
			return -1;
		}
		json_array_foreach(procs, i, p) {
			if (i >= KG_GPUSTATE_MAX_PROCS)
				break;
			if (!json_is_object(p) ||
			    int_field(p, "pid", 0xffffffffll, &v, err, errlen) != 1) {
				snprintf(err, errlen, "gpu_state.processes[%zu]: no pid", i);
				return -1;
			}
			s->procs[i].pid = (unsigned)v;
			r = int_field(p, "used_bytes", LLONG_MAX, &v, err, errlen);
			if (r < 0)
				return -1;
			s->procs[i].used_bytes = r ? v : -1;
			s->nlisted++;
		}
	}
	return 0;
}

/* --- summaries --- */

void gpustate_summary_init(struct kg_gpu_summary *sum)
{
	memset(sum, 0, sizeof(*sum));
	state_unknown(&sum->first);
	sum->sm_mhz_min = sum->sm_mhz_max = sum->temp_c_max = sum->power_mw_max = -1;
	sum->clock_events = -1;
}

static void summary_take(struct kg_gpu_summary *sum, const struct kg_gpu_state *s)
{
	unsigned pid = 0;
	int others;

	if (!s->recorded)
		return;
	if (!sum->first.recorded)
		sum->first = *s;
	else if (s->sm_app_mhz != sum->first.sm_app_mhz ||
		 s->mem_app_mhz != sum->first.mem_app_mhz)
		sum->app_clocks_changed = 1;
	if (s->sm_mhz >= 0) {
		if (sum->sm_mhz_min < 0 || s->sm_mhz < sum->sm_mhz_min)
			sum->sm_mhz_min = s->sm_mhz;
		if (s->sm_mhz > sum->sm_mhz_max)
			sum->sm_mhz_max = s->sm_mhz;
	}
	if (s->temp_c > sum->temp_c_max)
		sum->temp_c_max = s->temp_c;
	if (s->power_mw > sum->power_mw_max)
		sum->power_mw_max = s->power_mw;
	if (s->clock_events >= 0)
		sum->clock_events = (sum->clock_events < 0 ? 0 : sum->clock_events) | s->clock_events;
	others = gpustate_others(s, NULL, 0, &pid);
	if (others > sum->others_max) {
		sum->others_max = others;
		sum->other_pid = pid;
	}
}

void gpustate_summary_add(struct kg_gpu_summary *sum, const struct kg_gpu_state *before,
			  const struct kg_gpu_state *after)
{
	sum->processes++;
	if (before->recorded && after->recorded)
		sum->recorded++;
	else if (!sum->why[0])
		snprintf(sum->why, sizeof(sum->why), "%s",
			 !before->recorded ? before->why : after->why);
	summary_take(sum, before);
	summary_take(sum, after);
}

const char *gpustate_summary_concerns(const struct kg_gpu_summary *sum, char *buf, size_t len)
{
	struct kg_gpu_state s;
	size_t used;

	if (!len)
		return buf;
	/* The worst seen, as one state, through the words of gpustate_concerns(). */
	state_unknown(&s);
	s.recorded = 1;
	s.clock_events = sum->clock_events;
	s.nprocs = 0;
	if (sum->others_max > 0) {
		s.nprocs = sum->others_max;
		s.nlisted = 1;
		s.procs[0].pid = sum->other_pid;
	}
	gpustate_concerns(&s, buf, len);
	used = strlen(buf);
	if (sum->app_clocks_changed && used + 2 < len)
		snprintf(buf + used, len - used, "%sapplication clocks changed during the run",
			 used ? "; " : "");
	return buf;
}

const char *gpustate_summary_line(const struct kg_gpu_summary *sum, char *buf, size_t len)
{
	size_t used = 0;
	int w;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (!sum->recorded) {
		snprintf(buf, len, "not recorded%s%s", sum->why[0] ? ": " : "", sum->why);
		return buf;
	}
#define ADD(...)                                                              \
	do {                                                                  \
		w = snprintf(buf + used, len - used, __VA_ARGS__);            \
		if (w < 0 || (size_t)w >= len - used)                          \
			return buf;                                           \
		used += (size_t)w;                                            \
	} while (0)
	if (sum->sm_mhz_min >= 0) {
		if (sum->sm_mhz_min == sum->sm_mhz_max)
			ADD("SM %ld MHz", sum->sm_mhz_min);
		else
			ADD("SM %ld-%ld MHz", sum->sm_mhz_min, sum->sm_mhz_max);
		if (sum->first.sm_max_mhz > 0)
			ADD(" (max %ld)", sum->first.sm_max_mhz);
	}
	if (sum->temp_c_max >= 0)
		ADD("%sup to %ld C", used ? ", " : "", sum->temp_c_max);
	if (sum->power_mw_max >= 0) {
		ADD("%sup to %.0f W", used ? ", " : "", (double)sum->power_mw_max / 1000.0);
		if (sum->first.power_limit_mw > 0)
			ADD(" of %.0f W", (double)sum->first.power_limit_mw / 1000.0);
	}
	if (sum->processes > sum->recorded)
		ADD("%s%d of %d processes read", used ? ", " : "", sum->recorded, sum->processes);
#undef ADD
	return buf;
}

json_t *gpustate_summary_to_json(const struct kg_gpu_summary *sum)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "processes", json_integer(sum->processes));
	json_object_set_new(o, "recorded", json_integer(sum->recorded));
	if (sum->why[0])
		json_object_set_new(o, "why", json_string(sum->why));
	if (sum->first.recorded)
		json_object_set_new(o, "first", gpustate_to_json(&sum->first));
	if (sum->sm_mhz_min >= 0) {
		json_object_set_new(o, "sm_mhz_min", json_integer(sum->sm_mhz_min));
		json_object_set_new(o, "sm_mhz_max", json_integer(sum->sm_mhz_max));
	}
	if (sum->temp_c_max >= 0)
		json_object_set_new(o, "temp_c_max", json_integer(sum->temp_c_max));
	if (sum->power_mw_max >= 0)
		json_object_set_new(o, "power_mw_max", json_integer(sum->power_mw_max));
	if (sum->clock_events >= 0)
		json_object_set_new(o, "clock_events", json_integer(sum->clock_events));
	json_object_set_new(o, "others_max", json_integer(sum->others_max));
	if (sum->others_max > 0)
		json_object_set_new(o, "other_pid", json_integer(sum->other_pid));
	if (sum->app_clocks_changed)
		json_object_set_new(o, "app_clocks_changed", json_true());
	return o;
}

int gpustate_summary_from_json(const json_t *j, struct kg_gpu_summary *sum, char *err,
			       size_t errlen)
{
	static const struct {
		const char *key;
		long long max;
	} keys[] = {
		{ "processes", 100000000 }, { "recorded", 100000000 }, { "sm_mhz_min", 100000 },
		{ "sm_mhz_max", 100000 },   { "temp_c_max", 1000 },     { "power_mw_max", 100000000 },
		{ "clock_events", LLONG_MAX }, { "others_max", 100000 }, { "other_pid", 0xffffffffll },
	};
	long long v[sizeof(keys) / sizeof(keys[0])];
	const json_t *first, *changed;

	gpustate_summary_init(sum);
	if (!json_is_object(j)) {
		snprintf(err, errlen, "gpu_state: not an object");
		return -1;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v[i] = -1;
		if (int_field(j, keys[i].key, keys[i].max, &v[i], err, errlen) < 0)
			return -1;
	}
	sum->processes = v[0] < 0 ? 0 : (int)v[0];
	sum->recorded = v[1] < 0 ? 0 : (int)v[1];
	if (sum->recorded > sum->processes) {
		snprintf(err, errlen, "gpu_state.recorded: more than processes");
		return -1;
	}
	sum->sm_mhz_min = (long)v[2];
	sum->sm_mhz_max = (long)v[3];
	sum->temp_c_max = (long)v[4];
	sum->power_mw_max = (long)v[5];
	sum->clock_events = v[6];
	sum->others_max = v[7] < 0 ? 0 : (int)v[7];
	sum->other_pid = v[8] < 0 ? 0 : (unsigned)v[8];
	if (str_field(j, "why", sum->why, sizeof(sum->why), err, errlen))
		return -1;
	changed = json_object_get(j, "app_clocks_changed");
	if (changed && !json_is_boolean(changed)) {
		snprintf(err, errlen, "gpu_state.app_clocks_changed: not true or false");
		return -1;
	}
	sum->app_clocks_changed = changed && json_is_true(changed);
	first = json_object_get(j, "first");
	if (first && gpustate_from_json(first, &sum->first, err, errlen) < 0)
		return -1;
	return 0;
}

int gpustate_driver_here(void)
{
	const char *p = getenv("KGATE_NVIDIA_PROC");
	return access(p && *p ? p : "/proc/driver/nvidia/version", F_OK) == 0;
}
