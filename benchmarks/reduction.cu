/*
 * reduction.cu: the sum of N 32-bit integers, into a 64-bit total.
 *
 *   --n N             elements (default 2^24)
 *   --variant atomic  every element is one atomicAdd on the one total: the
 *                     naive way, serialised on a single address
 *   --variant tree    grid-stride partial sums per thread, a warp-shuffle tree
 *                     and a shared-memory tree per block, one atomicAdd per block
 *   --block B         threads per block (multiple of 32, at most 1024)
 *   --extra-work F    N * (1 + F) elements
 * Integer sums are exact in any order, so the check is equality with the
 * CPU's sum.  NVTX: reduction/{setup,warmup,compute,verify}.
 */
#include "common.cuh"

__global__ void red_atomic(const int *__restrict__ x, long n, unsigned long long *total)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		atomicAdd(total, (unsigned long long)(long long)x[i]);
}

__global__ void red_tree(const int *__restrict__ x, long n, unsigned long long *total)
{
	__shared__ long long warp_sum[32];
	long long s = 0;
	long stride = (long)gridDim.x * blockDim.x;
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		s += x[i];
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, o);
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	if (lane == 0)
		warp_sum[warp] = s;
	__syncthreads();
	if (warp == 0) {
		int nw = (blockDim.x + 31) >> 5;
		s = lane < nw ? warp_sum[lane] : 0;
		for (int o = 16; o > 0; o >>= 1)
			s += __shfl_down_sync(0xffffffffu, s, o);
		if (lane == 0)
			atomicAdd(total, (unsigned long long)s);
	}
}

int main(int argc, char **argv)
{
	struct bench_args a = { 1L << 24, "tree", 256, 20, 2, 0.0 };
	bench_parse(argc, argv, "tree|atomic", &a);
	long n = bench_scaled(a.n, a.extra);
	char name[64];
	snprintf(name, sizeof name, "reduction_%s", a.variant);

	nvtxRangePushA("reduction");
	nvtxRangePushA("setup");
	size_t bytes = sizeof(int) * (size_t)n;
	int *hx = (int *)malloc(bytes);
	if (!hx) {
		fprintf(stderr, "reduction: out of host memory\n");
		return 3;
	}
	long long want = 0;
	for (long i = 0; i < n; i++) {
		hx[i] = (int)((i * 2654435761L) % 2001) - 1000;   /* -1000..1000 */
		want += hx[i];
	}
	int *dx;
	unsigned long long *dtotal;
	CK(cudaMalloc(&dx, bytes));
	CK(cudaMalloc(&dtotal, sizeof(*dtotal)));
	CK(cudaMemcpy(dx, hx, bytes, cudaMemcpyHostToDevice));
	int sms;
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	int atomic = !strcmp(a.variant, "atomic");
	long blocks = (n + a.block - 1) / a.block;
	if (atomic && blocks > 2147483647L) {
		fprintf(stderr, "reduction: --n too large for the atomic variant\n");
		return 2;
	}
	int grid = atomic ? (int)blocks : (int)(blocks < (long)sms * 8 ? blocks : (long)sms * 8);
	nvtxRangePop();

	nvtxRangePushA("warmup");
	for (int i = 0; i < a.warmup; i++) {
		CK(cudaMemsetAsync(dtotal, 0, sizeof(*dtotal)));
		if (atomic)
			red_atomic<<<grid, a.block>>>(dx, n, dtotal);
		else
			red_tree<<<grid, a.block>>>(dx, n, dtotal);
	}
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	nvtxRangePop();

	nvtxRangePushA("compute");
	struct bench_timer t;
	timer_init(&t, a.iters);
	for (int i = 0; i < a.iters; i++) {
		CK(cudaMemsetAsync(dtotal, 0, sizeof(*dtotal)));
		CK(cudaEventRecord(t.ev[2 * i]));
		if (atomic)
			red_atomic<<<grid, a.block>>>(dx, n, dtotal);
		else
			red_tree<<<grid, a.block>>>(dx, n, dtotal);
		CK(cudaEventRecord(t.ev[2 * i + 1]));
	}
	CK(cudaGetLastError());
	timer_report(&t, name, (double)bytes, "GB/s");
	nvtxRangePop();

	nvtxRangePushA("verify");
	unsigned long long got;
	CK(cudaMemcpy(&got, dtotal, sizeof(got), cudaMemcpyDeviceToHost));
	if ((long long)got != want) {
		char msg[128];
		snprintf(msg, sizeof msg, "sum = %lld, want %lld", (long long)got, want);
		bench_wrong(name, msg);
	}
	nvtxRangePop();
	nvtxRangePop();
	bench_ok(name);
	CK(cudaFree(dx));
	CK(cudaFree(dtotal));
	free(hx);
	return 0;
}
