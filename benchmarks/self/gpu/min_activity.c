/*
 * min_activity.c: the least a CUPTI activity collector can do, as the anchor
 * of the collector's trace-mode cost (benchmarks/self/gpu/overhead.sh).
 *
 * Loaded through CUDA_INJECTION64_PATH like libkgate-collector.so, it
 * enables concurrent-kernel activity records and nothing else: no API
 * callbacks, no NVTX, no names, no output but one count on stderr at exit.
 * What kgate's trace mode costs beyond this is what kgate itself adds.
 *
 *   cc -O2 -shared -fPIC -I$CUDA/include min_activity.c -o min_activity.so \
 *      -L$CUDA/targets/x86_64-linux/lib -lcupti -Wl,-rpath,$CUDA/targets/x86_64-linux/lib
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cupti.h>

#define BUF_SIZE (8u << 20)

static atomic_ullong kernels;

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, BUF_SIZE);
	*size = *buf ? BUF_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				      size_t valid)
{
	CUpti_Activity *rec = NULL;

	(void)ctx;
	(void)stream;
	(void)size;
	while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			atomic_fetch_add(&kernels, 1);
	free(buf);
}

static void at_exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr, "min_activity: %llu kernel records\n", (unsigned long long)atomic_load(&kernels));
}

int InitializeInjection(void)
{
	if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
		fprintf(stderr, "min_activity: cannot enable kernel activity records\n");
		return 1;
	}
	atexit(at_exit);
	return 1;
}
