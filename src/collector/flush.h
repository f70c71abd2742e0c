/*
 * flush.h: cache control for metrics mode: a kernel of the collector's own
 * that evicts the L2 before each profiled launch (KGATE_CACHE_CONTROL=all).
 */
#ifndef KGATE_COLL_FLUSH_H
#define KGATE_COLL_FLUSH_H

#include <cuda.h>

#define FLUSH_KERNEL "kgate_flush"

/* Load the flush kernel and allocate its buffer in ctx (current), once;
 * 0 ready, -1 not (cache control none, or it failed: one error record). */
int flush_prepare(CUcontext ctx);
/* Launch the flush on stream (sync: and wait for it); 0 launched. */
int flush_run(CUcontext ctx, CUstream stream, int sync);
/* This thread is launching the flush kernel: launch callbacks ignore it. */
int flush_busy(void);
/* name is the flush kernel's: its activity record is not the program's. */
int flush_is_kernel(const char *name);
/* Flush kernels launched so far. */
unsigned long flush_launches(void);

#endif
