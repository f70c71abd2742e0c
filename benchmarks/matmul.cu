/*
 * matmul.cu: C = A * B in single precision, naive or shared-memory tiled.
 *
 *   --n N              B is N x N, A is M x N (default N = 2048)
 *   --variant naive    one thread per C element, operands from global memory
 *   --variant tiled    square tiles staged in shared memory (tile = sqrt(block))
 *   --block B          256 (16 x 16) or 1024 (32 x 32)
 *   --extra-work F     A gets M = N * (1 + F) rows
 * Inputs are small integers, so every sum is exact in float whatever the
 * order; 4096 sampled elements (and the last row) are checked against a
 * CPU dot product.  NVTX: matmul/{setup,warmup,compute,verify}.
 */
#include "common.cuh"

__global__ void mm_naive(const float *__restrict__ A, const float *__restrict__ B,
			 float *__restrict__ C, int M, int N)
{
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= M || col >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < N; k++)
		acc += A[(size_t)row * N + k] * B[(size_t)k * N + col];
	C[(size_t)row * N + col] = acc;
}

template <int TILE>
__global__ void mm_tiled(const float *__restrict__ A, const float *__restrict__ B,
			 float *__restrict__ C, int M, int N)
{
	__shared__ float As[TILE][TILE];
	__shared__ float Bs[TILE][TILE + 1];
	int ty = threadIdx.y, tx = threadIdx.x;
	int row = blockIdx.y * TILE + ty;
	int col = blockIdx.x * TILE + tx;
	float acc = 0.0f;
	for (int t = 0; t < N; t += TILE) {
		As[ty][tx] = (row < M && t + tx < N) ? A[(size_t)row * N + t + tx] : 0.0f;
		Bs[ty][tx] = (t + ty < N && col < N) ? B[(size_t)(t + ty) * N + col] : 0.0f;
		__syncthreads();
#pragma unroll
		for (int k = 0; k < TILE; k++)
			acc += As[ty][k] * Bs[k][tx];
		__syncthreads();
	}
	if (row < M && col < N)
		C[(size_t)row * N + col] = acc;
}

static void launch(const struct bench_args *a, int tile, const float *A, const float *B,
		   float *C, int M, int N)
{
	dim3 block(tile, tile);
	dim3 grid((N + tile - 1) / tile, (M + tile - 1) / tile);
	if (!strcmp(a->variant, "naive"))
		mm_naive<<<grid, block>>>(A, B, C, M, N);
	else if (tile == 16)
		mm_tiled<16><<<grid, block>>>(A, B, C, M, N);
	else
		mm_tiled<32><<<grid, block>>>(A, B, C, M, N);
}

int main(int argc, char **argv)
{
	struct bench_args a = { 2048, "naive", 256, 10, 2, 0.0 };
	bench_parse(argc, argv, "naive|tiled", &a);
	if (a.block != 256 && a.block != 1024) {
		fprintf(stderr, "matmul: --block must be 256 or 1024\n");
		return 2;
	}
	if (a.n > 16384) {
		fprintf(stderr, "matmul: --n must be at most 16384\n");
		return 2;
	}
	int tile = a.block == 256 ? 16 : 32;
	int N = (int)a.n;
	int M = (int)bench_scaled(a.n, a.extra);
	char name[64];
	snprintf(name, sizeof name, "matmul_%s", a.variant);

	nvtxRangePushA("matmul");
	nvtxRangePushA("setup");
	size_t ab = sizeof(float) * (size_t)M * N, bb = sizeof(float) * (size_t)N * N;
	float *hA = (float *)malloc(ab), *hB = (float *)malloc(bb), *hC = (float *)malloc(ab);
	for (size_t i = 0; i < (size_t)M * N; i++)
		hA[i] = (float)((int)((i * 2654435761u) >> 7 & 3) - 1);      /* -1..2 */
	for (size_t i = 0; i < (size_t)N * N; i++)
		hB[i] = (float)((int)((i * 2246822519u) >> 9 & 3) - 2);      /* -2..1 */
	float *dA, *dB, *dC;
	CK(cudaMalloc(&dA, ab));
	CK(cudaMalloc(&dB, bb));
	CK(cudaMalloc(&dC, ab));
	CK(cudaMemcpy(dA, hA, ab, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(dB, hB, bb, cudaMemcpyHostToDevice));
	nvtxRangePop();

	nvtxRangePushA("warmup");
	for (int i = 0; i < a.warmup; i++)
		launch(&a, tile, dA, dB, dC, M, N);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	nvtxRangePop();

	nvtxRangePushA("compute");
	struct bench_timer t;
	timer_init(&t, a.iters);
	for (int i = 0; i < a.iters; i++) {
		CK(cudaEventRecord(t.ev[2 * i]));
		launch(&a, tile, dA, dB, dC, M, N);
		CK(cudaEventRecord(t.ev[2 * i + 1]));
	}
	CK(cudaGetLastError());
	timer_report(&t, name, 2.0 * (double)M * N * N, "GFLOP/s");
	nvtxRangePop();

	nvtxRangePushA("verify");
	CK(cudaMemcpy(hC, dC, ab, cudaMemcpyDeviceToHost));
	unsigned x = 12345;
	for (int s = 0; s < 4096 + N; s++) {
		int r, c;
		if (s < 4096) {
			x = x * 1664525u + 1013904223u;
			r = (int)(x % (unsigned)M);
			x = x * 1664525u + 1013904223u;
			c = (int)(x % (unsigned)N);
		} else {
			r = M - 1;
			c = s - 4096;
		}
		double want = 0;
		for (int k = 0; k < N; k++)
			want += (double)hA[(size_t)r * N + k] * hB[(size_t)k * N + c];
		if ((double)hC[(size_t)r * N + c] != want) {
			char msg[128];
			snprintf(msg, sizeof msg, "C[%d][%d] = %g, want %g", r, c,
				 hC[(size_t)r * N + c], want);
			bench_wrong(name, msg);
		}
	}
	nvtxRangePop();
	nvtxRangePop();
	bench_ok(name);
	CK(cudaFree(dA));
	CK(cudaFree(dB));
	CK(cudaFree(dC));
	free(hA);
	free(hB);
	free(hC);
	return 0;
}
