/*
 * many.cu: one program with a hundred kernel identities, for measuring the
 * gate's false-alarm rate and its power at affordable device time.
 *
 *   --variant many   (default) --n K kernel identities (default 100, at most
 *                    999): identity i is the NVTX range many/compute/kNNN
 *                    around --iters launches (default 10) of one compute-bound
 *                    kernel whose work grows with i (roughly 10 to 30 us on an
 *                    H200); --extra-work F makes every identity's loop F
 *                    longer, so each one's time shifts by about F
 *   --variant hog    keeps the GPU computing for --n seconds (a second
 *                    program on the GPU: what kgate must see and report)
 *   --variant crash  --iters launches of identity 0, then a kernel that traps
 *                    (a benchmark that dies on the GPU mid-run)
 *   --block B        threads per block (default 256)
 *
 * Each thread iterates an integer recurrence seeded by its global index; the
 * last thread of every identity's last launch is recomputed on the CPU and
 * must match.  Every identity's grid fits in one wave, so its time is its
 * loop's length.  NVTX: many/{setup,warmup,compute/kNNN,verify}.
 */
#include "common.cuh"

#include <time.h>

__host__ __device__ static inline unsigned many_step(unsigned x)
{
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

__global__ void many_spin(unsigned *out, long iters, unsigned seed)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned x = (i + seed) * 2654435761u + 1u;
	for (long k = 0; k < iters; k++)
		x = many_step(x);
	out[i] = x;
}

__global__ void many_trap(unsigned *out)
{
	if (threadIdx.x == 0)
		__trap();
	out[threadIdx.x] = 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Identity i's loop length and grid: 2000 to 6000 steps, 8 to 404 blocks. */
static long ident_iters(int i, int k, double extra)
{
	return bench_scaled(2000 + 4000L * i / (k > 1 ? k - 1 : 1), extra);
}

static int ident_grid(int i)
{
	return 8 + 4 * (i % 100);
}

int main(int argc, char **argv)
{
	struct bench_args a = { 100, "many", 256, 10, 2, 0.0 };
	bench_parse(argc, argv, "many|hog|crash", &a);
	int k = (int)a.n;
	if (!strcmp(a.variant, "many") && k > 999) {
		fprintf(stderr, "many: --n wants at most 999 identities\n");
		return 2;
	}
	size_t threads = (size_t)ident_grid(99) * (size_t)a.block;
	unsigned *dout, *hout = (unsigned *)malloc(sizeof(unsigned) * threads);
	nvtxRangePushA("many");
	nvtxRangePushA("setup");
	CK(cudaMalloc(&dout, sizeof(unsigned) * threads));
	nvtxRangePop();

	if (!strcmp(a.variant, "hog")) {
		/* Launch 1 ms kernels until --n seconds have passed. */
		double end = now_s() + (double)a.n;
		long launches = 0;
		while (now_s() < end) {
			many_spin<<<ident_grid(99), a.block>>>(dout, 200000, 0);
			CK(cudaDeviceSynchronize());
			launches++;
		}
		printf("many_hog: %ld launches in %ld s\n", launches, a.n);
		nvtxRangePop();
		return 0;
	}
	if (!strcmp(a.variant, "crash")) {
		for (int j = 0; j < a.iters; j++)
			many_spin<<<ident_grid(0), a.block>>>(dout, ident_iters(0, 2, 0), 0);
		CK(cudaDeviceSynchronize());
		many_trap<<<1, 32>>>(dout);
		cudaError_t e = cudaDeviceSynchronize();
		fprintf(stderr, "many_crash: %s\n", cudaGetErrorString(e));
		return 3;
	}

	nvtxRangePushA("warmup");
	for (int j = 0; j < a.warmup; j++)
		many_spin<<<ident_grid(0), a.block>>>(dout, ident_iters(0, k, a.extra), 0);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	nvtxRangePop();

	nvtxRangePushA("compute");
	int bad = 0;
	for (int i = 0; i < k; i++) {
		char range[16];
		snprintf(range, sizeof range, "k%03d", i);
		long iters = ident_iters(i, k, a.extra);
		int grid = ident_grid(i);
		nvtxRangePushA(range);
		for (int j = 0; j < a.iters; j++)
			many_spin<<<grid, a.block>>>(dout, iters, (unsigned)i);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		nvtxRangePop();
		/* the last thread of this identity */
		unsigned last = (unsigned)(grid * a.block - 1);
		CK(cudaMemcpy(hout, dout, sizeof(unsigned) * (last + 1), cudaMemcpyDeviceToHost));
		unsigned x = (last + (unsigned)i) * 2654435761u + 1u;
		for (long s = 0; s < iters; s++)
			x = many_step(x);
		if (x != hout[last])
			bad++;
	}
	nvtxRangePop();
	nvtxRangePop();
	cudaFree(dout);
	free(hout);
	if (bad) {
		char what[64];
		snprintf(what, sizeof what, "%d of %d identities", bad, k);
		bench_wrong("many", what);
	}
	printf("many: %d identities x %d launches\n", k, a.iters);
	bench_ok("many");
	return 0;
}
