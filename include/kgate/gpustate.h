/*
 * gpustate.h: what a GPU was doing around a benchmark process, as NVML says.
 *
 * gpustate.c owns reading NVML, which it loads at run time (dlopen of
 * libnvidia-ml.so.1, as the driver installs it): clocks (current,
 * application, max), temperature, power draw and limit, clock-event
 * (throttle) reasons, utilization, and the compute processes on the device.
 * A machine without NVML, or an NVML that fails, gives states that say "not
 * recorded" and why; nothing else changes.  kgate only reads: it never sets
 * a clock, a power limit or a mode.
 *
 * It also owns the words for what a state shows (throttling, other
 * processes, a clock different from another state's) and the JSON form a
 * state takes in a records file and in the store.
 */
#ifndef KGATE_GPUSTATE_H
#define KGATE_GPUSTATE_H

#include <stddef.h>

#include <jansson.h>

/* Compute processes kept per state (more are counted, not listed). */
#define KG_GPUSTATE_MAX_PROCS 16
/* Devices read by gpustate_read_all(). */
#define KG_GPUSTATE_MAX_DEVICES 16

struct kg_gpu_proc {
	unsigned pid;
	long long used_bytes;      /* -1: NVML could not say */
};

/* Every number is -1 where NVML could not say (not supported, no permission). */
struct kg_gpu_state {
	int recorded;              /* 0: nothing below is known; why says why */
	char why[160];
	char uuid[96];
	char name[96];
	double when;               /* seconds since the epoch */
	long sm_mhz, mem_mhz;              /* current clocks */
	long sm_app_mhz, mem_app_mhz;      /* application clocks */
	long sm_max_mhz, mem_max_mhz;      /* maximum clocks */
	long temp_c;
	long power_mw, power_limit_mw;     /* draw, enforced limit */
	long long clock_events;            /* NVML clock-event reason bits */
	long util_gpu, util_mem;           /* percent over NVML's last sample period */
	int nprocs;                        /* compute processes on the device, -1: unknown */
	int nlisted;                       /* how many of them procs[] lists */
	struct kg_gpu_proc procs[KG_GPUSTATE_MAX_PROCS];
};

/* A loaded NVML, or the reason there is none. */
struct kg_nvml;

/*
 * Load and initialise NVML.  Never fails: without NVML the handle answers
 * every read with a state that is not recorded.  KGATE_NVML_LIBRARY names
 * another library to load (a non-standard install, or a test's stand-in).
 */
/* 1 when an NVIDIA driver is loaded here (/proc/driver/nvidia/version, or
 * the file KGATE_NVIDIA_PROC names, exists), else 0: a benchmark that
 * measured nothing is then explained by the missing GPU, not by the
 * environment. */
int gpustate_driver_here(void);
/* What kgate says when there is no driver: where to try it without one. */
#define KG_NO_GPU_HINT "no NVIDIA driver or GPU here; to try kgate without one: 'make demo'" \
	" (replays runs recorded on an NVIDIA H200), or 'kgate ingest --records FILE'" \
	" with records files or ncu exports made on a GPU machine"
struct kg_nvml *gpustate_open(void);
void gpustate_close(struct kg_nvml *nv);
/* 1 when NVML loaded and initialised; why() says why not. */
int gpustate_available(const struct kg_nvml *nv);
const char *gpustate_why(const struct kg_nvml *nv);

/*
 * Read the state of one device: uuid "GPU-..." (as NVML and the collector
 * print it), or NULL for the first device.  Returns 0 with *out recorded,
 * or -1 with out->why set (out->recorded 0).
 */
int gpustate_read(struct kg_nvml *nv, const char *uuid, struct kg_gpu_state *out);
/* Read every device (up to cap); returns how many were read (0 without NVML). */
size_t gpustate_read_all(struct kg_nvml *nv, struct kg_gpu_state *out, size_t cap);

/*
 * Wait until no compute process runs on device uuid (NULL: on any device),
 * reading every poll_s seconds for at most wait_s, or until stop() (may be
 * NULL) says to stop.  Returns 0 when idle, 1 when still busy (*last is the
 * busy device's state), -1 when NVML cannot say (last->why says why).
 */
int gpustate_wait_idle(struct kg_nvml *nv, const char *uuid, double wait_s, double poll_s,
		       int (*stop)(void), struct kg_gpu_state *last);

/*
 * The clock-event reasons that slow a GPU down (power, thermal, hardware
 * slowdown, sync boost), without those that say only "idle" or "clocks as
 * set": 0 when none.
 */
long long gpustate_throttle_bits(const struct kg_gpu_state *s);
/* Names of the reason bits in bits, ", "-separated, into buf; returns buf. */
const char *gpustate_reason_names(long long bits, char *buf, size_t len);
/*
 * Compute processes of s that are not one of ours (pids, n of them; may be
 * NULL): the count, and the first one's pid in *first when non-NULL.
 */
int gpustate_others(const struct kg_gpu_state *s, const unsigned *ours, size_t n,
		    unsigned *first);
/*
 * One sentence of what s shows that makes timings less comparable
 * (throttling, other processes), or "" when nothing; into buf, returns buf.
 */
const char *gpustate_concerns(const struct kg_gpu_state *s, char *buf, size_t len);
/*
 * One sentence on how two states' clocks differ (application clocks, max
 * clocks, or current SM clock by more than 5%), or "" when they agree or
 * either is not recorded.
 */
const char *gpustate_clock_difference(const struct kg_gpu_state *a, const struct kg_gpu_state *b,
				      char *buf, size_t len);

/*
 * What the states around a benchmark's processes add up to, as stored with
 * a run per benchmark: the state before its first process, and over every
 * state read before and after each process the range of the SM clock, the
 * hottest temperature, the highest power draw, every clock-event reason
 * seen and the most other compute processes seen.
 */
struct kg_gpu_summary {
	int processes;             /* processes added */
	int recorded;              /* of them, with both states read */
	char why[160];             /* why not, when recorded is 0 */
	struct kg_gpu_state first; /* before the first process with a state */
	long sm_mhz_min, sm_mhz_max;
	long temp_c_max, power_mw_max;
	long long clock_events;    /* every bit seen; -1: never read */
	int others_max;            /* most other compute processes in one state */
	unsigned other_pid;        /* one of them */
	int app_clocks_changed;    /* application clocks differed between states */
};

void gpustate_summary_init(struct kg_gpu_summary *sum);
/* Add one process: the states before and after it (either may be unrecorded). */
void gpustate_summary_add(struct kg_gpu_summary *sum, const struct kg_gpu_state *before,
			  const struct kg_gpu_state *after);
/* Like gpustate_concerns(), for a summary (adds "application clocks changed"). */
const char *gpustate_summary_concerns(const struct kg_gpu_summary *sum, char *buf, size_t len);
/* One line for people: "SM 1755-1980 MHz, up to 41 C, up to 320 W of 700 W". */
const char *gpustate_summary_line(const struct kg_gpu_summary *sum, char *buf, size_t len);
/* JSON form of a summary, and back (-1 and err on a malformed one). */
json_t *gpustate_summary_to_json(const struct kg_gpu_summary *sum);
int gpustate_summary_from_json(const json_t *j, struct kg_gpu_summary *sum, char *err,
			       size_t errlen);

/* JSON form (records files, the store).  to_json never returns NULL on memory. */
json_t *gpustate_to_json(const struct kg_gpu_state *s);
/*
 * Read a state back; unknown keys are ignored, wrong types or values out of
 * range are an error (-1, err set), so a hostile file cannot inject numbers
 * that lie.
 */
int gpustate_from_json(const json_t *j, struct kg_gpu_state *s, char *err, size_t errlen);

#endif
