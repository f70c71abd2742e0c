/*
 * transpose.cu: out = in^T for an M x N float matrix, naive or tiled.
 *
 *   --n N              in is M x N with N columns (default N = 8192)
 *   --variant naive    one element per thread: coalesced reads, strided writes
 *   --variant tiled    32 x 32 tiles staged in shared memory (padded against
 *                      bank conflicts): coalesced reads and writes
 *   --variant unpadded the tiled kernel without the padding column: each
 *                      warp's column read of the tile hits one bank 32 times
 *   --block B          threads per block: 32 x (B / 32), each thread moves
 *                      32 / (B / 32) elements of a tile (256 or 1024; 32..1024)
 *   --extra-work F     in gets M = N * (1 + F) rows
 * A transpose is a copy, so the check is exact: every element of out is
 * compared with in on the CPU.  NVTX: transpose/{setup,warmup,compute,verify}.
 */
#include "common.cuh"

#define TILE 32

__global__ void tr_naive(const float *__restrict__ in, float *__restrict__ out, int M, int N)
{
	int col = blockIdx.x * TILE + threadIdx.x;
	for (int r = threadIdx.y; r < TILE; r += blockDim.y) {
		int row = blockIdx.y * TILE + r;
		if (row < M && col < N)
			out[(size_t)col * M + row] = in[(size_t)row * N + col];
	}
}

/* One 32 x 32 tile through shared memory, PAD words of padding a row. */
template <int PAD>
__device__ __forceinline__ void tile_transpose(const float *__restrict__ in, float *__restrict__ out,
					       int M, int N)
{
	__shared__ float tile[TILE][TILE + PAD];
	int col = blockIdx.x * TILE + threadIdx.x;
	for (int r = threadIdx.y; r < TILE; r += blockDim.y) {
		int row = blockIdx.y * TILE + r;
		if (row < M && col < N)
			tile[r][threadIdx.x] = in[(size_t)row * N + col];
	}
	__syncthreads();
	/* out is N x M: its row is in's column. */
	int ocol = blockIdx.y * TILE + threadIdx.x;
	for (int r = threadIdx.y; r < TILE; r += blockDim.y) {
		int orow = blockIdx.x * TILE + r;
		if (orow < N && ocol < M)
			out[(size_t)orow * M + ocol] = tile[threadIdx.x][r];
	}
}

/* Padded: a warp's column read of the tile spreads over all 32 banks. */
__global__ void tr_tiled(const float *__restrict__ in, float *__restrict__ out, int M, int N)
{
	tile_transpose<1>(in, out, M, N);
}

/* Unpadded: tile[threadIdx.x][r] over a warp reads one column, 32 words
 * 32 words apart, all in one bank. */
__global__ void tr_unpadded(const float *__restrict__ in, float *__restrict__ out, int M, int N)
{
	tile_transpose<0>(in, out, M, N);
}

/* One launch of the variant's kernel. */
static void launch(int variant, dim3 grid, dim3 block, const float *in, float *out, int M, int N)
{
	if (variant == 0)
		tr_naive<<<grid, block>>>(in, out, M, N);
	else if (variant == 1)
		tr_tiled<<<grid, block>>>(in, out, M, N);
	else
		tr_unpadded<<<grid, block>>>(in, out, M, N);
}

int main(int argc, char **argv)
{
	struct bench_args a = { 8192, "naive", 256, 20, 2, 0.0 };
	bench_parse(argc, argv, "naive|tiled|unpadded", &a);
	if (a.n > 32768) {
		fprintf(stderr, "transpose: --n must be at most 32768\n");
		return 2;
	}
	int N = (int)a.n;
	long Ml = bench_scaled(a.n, a.extra);
	if (Ml * (long)N > (1L << 31)) {
		fprintf(stderr, "transpose: the matrix must hold at most 2^31 elements\n");
		return 2;
	}
	int M = (int)Ml;
	char name[64];
	snprintf(name, sizeof name, "transpose_%s", a.variant);
	dim3 block(TILE, a.block / TILE);
	dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);

	nvtxRangePushA("transpose");
	nvtxRangePushA("setup");
	size_t count = (size_t)M * N, bytes = sizeof(float) * count;
	float *hin = (float *)malloc(bytes), *hout = (float *)malloc(bytes);
	if (!hin || !hout) {
		fprintf(stderr, "transpose: out of host memory\n");
		return 3;
	}
	for (size_t i = 0; i < count; i++)
		hin[i] = (float)(i % 65521);
	float *din, *dout;
	CK(cudaMalloc(&din, bytes));
	CK(cudaMalloc(&dout, bytes));
	CK(cudaMemcpy(din, hin, bytes, cudaMemcpyHostToDevice));
	CK(cudaMemset(dout, 0, bytes));
	nvtxRangePop();

	int variant = !strcmp(a.variant, "naive") ? 0 : !strcmp(a.variant, "tiled") ? 1 : 2;
	nvtxRangePushA("warmup");
	for (int i = 0; i < a.warmup; i++)
		launch(variant, grid, block, din, dout, M, N);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	nvtxRangePop();

	nvtxRangePushA("compute");
	struct bench_timer t;
	timer_init(&t, a.iters);
	for (int i = 0; i < a.iters; i++) {
		CK(cudaEventRecord(t.ev[2 * i]));
		launch(variant, grid, block, din, dout, M, N);
		CK(cudaEventRecord(t.ev[2 * i + 1]));
	}
	CK(cudaGetLastError());
	timer_report(&t, name, 2.0 * (double)bytes, "GB/s");
	nvtxRangePop();

	nvtxRangePushA("verify");
	CK(cudaMemcpy(hout, dout, bytes, cudaMemcpyDeviceToHost));
	for (int r = 0; r < M; r++)
		for (int c = 0; c < N; c++)
			if (hout[(size_t)c * M + r] != hin[(size_t)r * N + c]) {
				char msg[128];
				snprintf(msg, sizeof msg, "out[%d][%d] = %g, want %g", c, r,
					 hout[(size_t)c * M + r], hin[(size_t)r * N + c]);
				bench_wrong(name, msg);
			}
	nvtxRangePop();
	nvtxRangePop();
	bench_ok(name);
	CK(cudaFree(din));
	CK(cudaFree(dout));
	free(hin);
	free(hout);
	return 0;
}
