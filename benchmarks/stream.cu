/*
 * stream.cu: STREAM triad, a[i] = b[i] + s * c[i], bandwidth-bound.
 *
 *   --n N           elements per array (default 2^25, 3 x 128 MiB)
 *   --extra-work F  the arrays hold N * (1 + F) elements
 * NVTX: stream/{setup,warmup,compute,verify}.  Checked element by element
 * against the same expression on the CPU (exact: one FMA-free multiply-add).
 */
#include "common.cuh"

__global__ void triad(float *__restrict__ a, const float *__restrict__ b,
		      const float *__restrict__ c, float s, long n)
{
	long stride = (long)gridDim.x * blockDim.x;
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		a[i] = __fadd_rn(b[i], __fmul_rn(s, c[i]));
}

int main(int argc, char **argv)
{
	struct bench_args a = { 1L << 25, "triad", 256, 50, 3, 0.0 };
	bench_parse(argc, argv, "triad", &a);
	long n = bench_scaled(a.n, a.extra);
	const float s = 3.0f;

	nvtxRangePushA("stream");
	nvtxRangePushA("setup");
	size_t bytes = sizeof(float) * (size_t)n;
	float *hb = (float *)malloc(bytes), *hc = (float *)malloc(bytes), *ha = (float *)malloc(bytes);
	for (long i = 0; i < n; i++) {
		hb[i] = (float)(i % 1000) * 0.5f;
		hc[i] = (float)((i * 7) % 1000) * 0.25f;
	}
	float *da, *db, *dc;
	CK(cudaMalloc(&da, bytes));
	CK(cudaMalloc(&db, bytes));
	CK(cudaMalloc(&dc, bytes));
	CK(cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dc, hc, bytes, cudaMemcpyHostToDevice));
	int sms;
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	long want = (n + a.block - 1) / a.block;
	int grid = (int)(want < (long)sms * 32 ? want : (long)sms * 32);
	nvtxRangePop();

	nvtxRangePushA("warmup");
	for (int i = 0; i < a.warmup; i++)
		triad<<<grid, a.block>>>(da, db, dc, s, n);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	nvtxRangePop();

	nvtxRangePushA("compute");
	struct bench_timer t;
	timer_init(&t, a.iters);
	for (int i = 0; i < a.iters; i++) {
		CK(cudaEventRecord(t.ev[2 * i]));
		triad<<<grid, a.block>>>(da, db, dc, s, n);
		CK(cudaEventRecord(t.ev[2 * i + 1]));
	}
	CK(cudaGetLastError());
	timer_report(&t, "stream", 3.0 * (double)bytes, "GB/s");
	nvtxRangePop();

	nvtxRangePushA("verify");
	CK(cudaMemcpy(ha, da, bytes, cudaMemcpyDeviceToHost));
	for (long i = 0; i < n; i++) {
		float want_v = hb[i] + s * hc[i];
		if (ha[i] != want_v) {
			char msg[128];
			snprintf(msg, sizeof msg, "a[%ld] = %g, want %g", i, ha[i], want_v);
			bench_wrong("stream", msg);
		}
	}
	nvtxRangePop();
	nvtxRangePop();
	bench_ok("stream");
	CK(cudaFree(da));
	CK(cudaFree(db));
	CK(cudaFree(dc));
	free(ha);
	free(hb);
	free(hc);
	return 0;
}
