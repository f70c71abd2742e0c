/*
 * tail.cu: the tail effect: a grid of equal, compute-bound blocks whose
 * size is one full wave of the device (SM count x resident blocks per SM,
 * from the occupancy calculator), or just over it.
 *
 *   --n N             loop iterations per thread (default 200000)
 *   --variant wave    exactly one wave: every SM busy to the end
 *   --variant tail    one wave plus one block: the last block runs alone in
 *                     a second wave, so the kernel takes about twice as long
 *                     for 1/(wave size) more work
 *   --block B         threads per block (multiple of 32, at most 1024)
 *   --extra-work F    N * (1 + F) iterations per thread
 * Each thread iterates an integer recurrence seeded by its global index;
 * 256 sampled threads (and the last one) are recomputed on the CPU and must
 * match exactly.  NVTX: tail/{setup,warmup,compute,verify}.
 */
#include "common.cuh"

__host__ __device__ static inline unsigned step(unsigned x)
{
	/* xorshift32: integer only, so the CPU and GPU agree bit for bit */
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

__global__ void spin(unsigned *out, long iters)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned x = i * 2654435761u + 1u;
	for (long k = 0; k < iters; k++)
		x = step(x);
	out[i] = x;
}

int main(int argc, char **argv)
{
	struct bench_args a = { 200000, "tail", 256, 10, 2, 0.0 };
	bench_parse(argc, argv, "tail|wave", &a);
	long iters = bench_scaled(a.n, a.extra);
	char name[64];
	snprintf(name, sizeof name, "tail_%s", a.variant);

	nvtxRangePushA("tail");
	nvtxRangePushA("setup");
	int sms, per_sm;
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spin, a.block, 0));
	if (per_sm < 1) {
		fprintf(stderr, "tail: a block of %d threads does not fit on an SM\n", a.block);
		return 2;
	}
	int wave = sms * per_sm;
	int grid = !strcmp(a.variant, "tail") ? wave + 1 : wave;
	size_t threads = (size_t)grid * a.block;
	unsigned *dout, *hout = (unsigned *)malloc(sizeof(unsigned) * threads);
	CK(cudaMalloc(&dout, sizeof(unsigned) * threads));
	printf("%s: %d SMs x %d blocks per SM = wave of %d blocks; grid %d\n", name, sms,
	       per_sm, wave, grid);
	nvtxRangePop();

	nvtxRangePushA("warmup");
	for (int i = 0; i < a.warmup; i++)
		spin<<<grid, a.block>>>(dout, iters);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	nvtxRangePop();

	nvtxRangePushA("compute");
	struct bench_timer t;
	timer_init(&t, a.iters);
	for (int i = 0; i < a.iters; i++) {
		CK(cudaEventRecord(t.ev[2 * i]));
		spin<<<grid, a.block>>>(dout, iters);
		CK(cudaEventRecord(t.ev[2 * i + 1]));
	}
	CK(cudaGetLastError());
	timer_report(&t, name, 0, NULL);
	nvtxRangePop();

	nvtxRangePushA("verify");
	CK(cudaMemcpy(hout, dout, sizeof(unsigned) * threads, cudaMemcpyDeviceToHost));
	for (int s = 0; s <= 256; s++) {
		unsigned i = s < 256 ? (unsigned)(((size_t)s * 40503u) % threads)
				     : (unsigned)(threads - 1);
		unsigned x = i * 2654435761u + 1u;
		for (long k = 0; k < iters; k++)
			x = step(x);
		if (hout[i] != x) {
			char msg[128];
			snprintf(msg, sizeof msg, "thread %u: %u, want %u", i, hout[i], x);
			bench_wrong(name, msg);
		}
	}
	nvtxRangePop();
	nvtxRangePop();
	bench_ok(name);
	CK(cudaFree(dout));
	free(hout);
	return 0;
}
