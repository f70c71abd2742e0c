/*
 * flush.h: cache control for metrics mode: a kernel of the collector's own
 * that evicts the L2 before each profiled launch (KGATE_CACHE_CONTROL=all),
 * in a context of its own or on the launch's stream (KGATE_CACHE_FLUSH).
 */
#ifndef KGATE_COLL_FLUSH_H
#define KGATE_COLL_FLUSH_H

#include <cuda.h>

#define FLUSH_KERNEL "kgate_flush"

/* Load the flush kernel and allocate its buffer in ctx (current), once;
 * 0 ready, -1 not (cache control none, or it failed: one error record). */
int flush_prepare(CUcontext ctx);
/* Flush before a launch on stream (sync: and wait for it; the flush in a
 * context of its own is always waited for): 1 flushed in ctx (on the
 * stream: with auto ranges a range of its own), 0 flushed in the
 * collector's own context, -1 not flushed. */
int flush_run(CUcontext ctx, CUstream stream, int sync);
/* 1 when ctx's flush runs in ctx itself (on the stream: with auto ranges a
 * range of its own), 0 when in the collector's own context. */
int flush_ranged(CUcontext ctx);
/* This thread is launching the flush kernel: launch callbacks ignore it. */
int flush_busy(void);
/* name is the flush kernel's: its activity record is not the program's. */
int flush_is_kernel(const char *name);
/* Flush kernels launched so far. */
unsigned long flush_launches(void);

#endif
