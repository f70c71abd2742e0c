/*
 * coll.h: the collector core (collector.c) that the other collector modules
 * share: the configuration read from the KGATE_* environment, the records
 * file (one line at a time, header first, footer last), error records, and
 * the kernel data that trace.c hands to launch.c.
 */
#ifndef KGATE_COLL_H
#define KGATE_COLL_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "jsonw.h"

#define COLL_VERSION "0.1.0"

enum coll_mode { COLL_TRACE, COLL_METRICS };

struct coll_cfg {
	enum coll_mode mode;
	char **metrics;      /* metrics mode: the requested names */
	size_t n_metrics;
	const char *kernels; /* KGATE_KERNELS or NULL */
	int name_base;       /* KGATE_KERNEL_NAME_BASE: 0 any, 1 function, 2 demangled, 3 mangled */
	long launch_skip;    /* matching launches to skip */
	long launch_count;   /* matching launches to profile; -1 all (env: 0 or unset) */
	int app_replay;      /* KGATE_REPLAY=application */
	int step_replay;     /* KGATE_REPLAY=step: pass p of a group on its p-th step */
	const char *step_range; /* step replay: the NVTX range (default "step") each push of which starts a step */
	int step_passes;     /* step replay: the set's passes (steps a group takes) */
	int pass;            /* application replay: this pass */
	int passes;          /* number of passes of the metric set (1 if unknown) */
	int duration_asked;  /* metrics mode: gpu__time_duration.sum was requested */
	int replay_user;     /* metrics mode: one-pass set in a user-replay session */
	int cache_all;       /* KGATE_CACHE_CONTROL=all: caches flushed before each profiled launch */
	int flush_own;       /* KGATE_CACHE_FLUSH=context: the flush runs in a context of its own */
	int user_range;      /* KGATE_RANGE=user: a session's ranges pushed around profiled launches */
	int events;          /* KGATE_DURATION=events: a session's durations from CUDA events */
	unsigned flush_ms;
	int debug;           /* KGATE_DEBUG=1: the profiler's decisions on stderr */
};

extern struct coll_cfg coll_cfg;

/* One line on stderr when KGATE_DEBUG is set: what the profiler decided
 * for a launch, for reports of launches without counters. */
#define COLL_DEBUG(...)                                                        \
	do {                                                                   \
		if (coll_cfg.debug)                                            \
			coll_debug_line(__VA_ARGS__);                          \
	} while (0)
void coll_debug_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One kernel execution as the Activity API reported it (copied). */
struct coll_kernel {
	const char *name; /* mangled; owned by the holder of the struct */
	uint32_t device, context, stream, corr, graph_id;
	uint64_t start, end; /* 0, 0: no timestamps */
	int32_t grid[3], block[3];
	int32_t smem_static, smem_dynamic;
	uint32_t local_per_thread;
	uint16_t regs;
	double range_ns; /* >= 0: the duration from a profiler range (no timestamps) */
};

/* A driver API function (cuEventCreate, ...): the collector links no
 * libcuda, and the CUDA runtime loads it with RTLD_LOCAL, so dlsym with
 * RTLD_DEFAULT alone does not find its functions; NULL when not found. */
void *coll_cuda_sym(const char *name);

/* An error record plus one stderr line "kgate-collector: ...".  code is the
 * records-file code ("insufficient_privileges", ...); cupti is the CUPTI
 * result or -1 when none applies. */
void coll_error(const char *code, int cupti, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Check a CUPTI result: 0 on success; otherwise an error record naming
 * what failed (and what is done instead) and -1. */
int coll_check(CUptiResult r, const char *what, const char *instead);

/* The integer in the environment variable name, min..max (max LONG_MAX:
 * no upper bound); dflt when unset or empty, and an error record plus dflt
 * when it is not such an integer. */
long coll_env_long(const char *name, long dflt, long min, long max);

/* The records-file error code for a CUPTI result. */
const char *coll_code(CUptiResult r);

/* Write one complete record (w holds an object; a newline is added).
 * is_kernel counts it for the footer.  The header goes first. */
void coll_write(struct jw *w, int is_kernel);
/* Flush the records file to the kernel (after a batch of records). */
void coll_flush(void);
/* Write the header now if it is not written yet (needs the driver up). */
void coll_header(void);
/* The first launch callback (an API entry, where driver calls are safe):
 * prepare the profiler for ctx and write the header.  Cheap afterwards. */
void coll_first_launch(CUcontext ctx);
/* Records the Activity API dropped (buffer full). */
void coll_add_dropped(uint64_t n);

#endif
