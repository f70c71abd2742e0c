/*
 * profiler.h: metrics mode, the CUPTI 13 Range Profiler with one auto range
 * per selected kernel launch, decoded in batches: one-pass sets in one long
 * user-replay session per context, multi-pass sets with kernel replay
 * (started in the launch callback's enter, stopped in its exit).
 */
#ifndef KGATE_COLL_PROFILER_H
#define KGATE_COLL_PROFILER_H

#include <stdint.h>

#include <cuda.h>

/* Validate the metric set and prepare; 0 ok, -1 metrics mode unavailable
 * (the reason is already an error record). */
/* cuptiProfilerInitialize, at the first launch: inside InitializeInjection
 * the driver is still in cuInit and it fails (CUPTI_ERROR_UNKNOWN). */
int profiler_start(void);
int profiler_init(void);
/* Host-side setup for a context (chip, counter availability, config image;
 * application replay picks this pass's metrics), on the first launch in it,
 * before the header is written.  Driver calls are safe there, unlike in
 * resource callbacks. */
void profiler_prepare(CUcontext ctx);
/* Decode every context's waiting ranges now (before a reset or context
 * destroy, from its API entry). */
void profiler_sync(void);
/* The context is about to be destroyed. */
void profiler_on_context_destroy(CUcontext ctx);
/* What profiler_launch_enter decided for a launch.  For every decision but
 * PROF_NO the profiler's lock is held and the exit must call
 * profiler_launch_exit with it. */
enum {
	PROF_NO = 0,        /* not profiled */
	PROF_RANGE,         /* kernel replay: a range around the launch; its
			       activity record comes as for any kernel */
	PROF_SESSION,       /* selected, in the context's session: values and
			       duration from its range; no activity record */
	PROF_SESSION_OTHER, /* not selected, but in an open session its kernel
			       makes a range: duration only; no activity record */
	PROF_HELD,          /* not profiled; no session starts until its exit */
	PROF_STEP_LATER,    /* step replay, a later pass: its range belongs to the
			       first pass's launch; no values, no activity record */
};
/* Launch enter (graph: 1 a graph launch, never profiled; 2 a memory
 * operation PM sampling fences; stream: the launch's, for the cache flush
 * and the duration's events). */
int profiler_launch_enter(CUcontext ctx, const char *symbol, int64_t ordinal, int graph,
			  CUstream stream);
/* failed: the launch call returned an error (it made no range). */
void profiler_launch_exit(CUcontext ctx, int64_t ordinal, int decision, int failed);
void profiler_finish(void);
/* The launch filter for another engine (its own lock serialises the
 * calls): 1 selected; *over once no later launch can be. */
int profiler_selects(const char *symbol, int *over);

/* Step replay: the step range was pushed (begin 1) or popped (0). */
void profiler_step(int begin);
/* 0 once profiling is off for the whole process (bad metric set, ...). */
int profiler_usable(void);

#endif
