/*
 * trace.c: trace mode, the Activity API.
 *
 * Enables CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, hands CUPTI 8 MiB buffers
 * (8-byte aligned), and turns each completed buffer's kernel records into
 * coll_kernel structs for launch.c.  Buffers are requested and completed on
 * several threads (per-thread activity buffers are the 13.0 default), so
 * nothing here depends on order.  CUPTI's worker flushes every
 * KGATE_FLUSH_MS (default 500 ms); the last flush is forced at exit and on
 * context destruction.  Dropped records are counted into the footer.
 */
#include "trace.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "launch.h"

#define TRACE_BUF_SIZE (8u << 20)
#define TRACE_ALIGN 8

static int trace_on;
static atomic_int trace_finished;

static void CUPTIAPI trace_buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	void *p = NULL;

	if (posix_memalign(&p, TRACE_ALIGN, TRACE_BUF_SIZE) != 0)
		p = NULL;
	*buf = p;
	*size = p ? TRACE_BUF_SIZE : 0;
	*max_records = 0; /* fill the buffer */
}

static void trace_kernel(const CUpti_ActivityKernel10 *a)
{
	struct coll_kernel k;

	memset(&k, 0, sizeof(k));
	k.range_ns = -1;
	k.name = a->name;
	k.device = a->deviceId;
	k.context = a->contextId;
	k.stream = a->streamId;
	k.corr = a->correlationId;
	k.graph_id = a->graphId;
	k.start = a->start;
	k.end = a->end;
	k.grid[0] = a->gridX;
	k.grid[1] = a->gridY;
	k.grid[2] = a->gridZ;
	k.block[0] = a->blockX;
	k.block[1] = a->blockY;
	k.block[2] = a->blockZ;
	k.regs = a->registersPerThread;
	k.smem_static = a->staticSharedMemory;
	k.smem_dynamic = a->dynamicSharedMemory;
	k.local_per_thread = a->localMemoryPerThread;
	launch_on_kernel(&k);
}

static void CUPTIAPI trace_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf,
					     size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	(void)ctx;
	(void)stream;
	(void)size;
	if (!buf)
		return;
	for (;;) {
		CUptiResult r = cuptiActivityGetNextRecord(buf, valid, &rec);
		if (r != CUPTI_SUCCESS) {
			if (r != CUPTI_ERROR_MAX_LIMIT_REACHED)
				coll_check(r, "cuptiActivityGetNextRecord",
					   "the rest of this activity buffer is skipped");
			break;
		}
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
		    rec->kind == CUPTI_ACTIVITY_KIND_KERNEL)
			trace_kernel((const CUpti_ActivityKernel10 *)rec);
	}
	if (cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped) {
		coll_add_dropped(dropped);
	}
	free(buf);
	coll_flush();
}

int trace_init(void)
{
	if (coll_check(cuptiActivityRegisterCallbacks(trace_buffer_requested,
						      trace_buffer_completed),
		       "cuptiActivityRegisterCallbacks", "no kernels are recorded"))
		return -1;
	if (coll_check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
		       "cuptiActivityEnable(CONCURRENT_KERNEL)", "no kernels are recorded"))
		return -1;
	trace_on = 1;
	if (coll_cfg.flush_ms)
		coll_check(cuptiActivityFlushPeriod(coll_cfg.flush_ms), "cuptiActivityFlushPeriod",
			   "records are written when buffers fill and at exit");
	return 0;
}

void trace_flush(int forced)
{
	if (!trace_on || atomic_load(&trace_finished))
		return;
	coll_check(cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0),
		   "cuptiActivityFlushAll", NULL);
}

typedef int (*trace_sync_fn)(void);

void trace_finish(void)
{
	if (!trace_on || atomic_exchange(&trace_finished, 1))
		return;
	/* FlushAll does not wait for the GPU: let running kernels finish first
	 * (an error, e.g. no current context or the driver shut down, is fine) */
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	trace_sync_fn sync = cuda ? (trace_sync_fn)dlsym(cuda, "cuCtxSynchronize") : NULL;
	if (sync)
		(void)sync();
	coll_check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
		   "cuptiActivityFlushAll", "records still on the GPU are lost");
}
