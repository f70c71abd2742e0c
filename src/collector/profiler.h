/*
 * profiler.h: metrics mode, the CUPTI 13 Range Profiler with one range per
 * selected kernel launch (started in the launch callback's enter, stopped
 * in its exit), decoded in batches.
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
/* Launch enter: does the filter select this launch?  If so a range is
 * started and 1 returned; the exit must then call profiler_launch_exit. */
int profiler_launch_enter(CUcontext ctx, const char *symbol, int64_t ordinal);
void profiler_launch_exit(CUcontext ctx, int64_t ordinal);
void profiler_finish(void);
/* 0 once profiling is off for the whole process (bad metric set, ...). */
int profiler_usable(void);

#endif
