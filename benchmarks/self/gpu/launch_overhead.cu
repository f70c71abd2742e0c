/*
 * launch_overhead.cu: the cost of a kernel launch, for kgate's collector
 * overhead benchmark.  Launches a one-block kernel N times back to back
 * (after a warm-up) and prints the wall time per launch in microseconds,
 * with the device synchronized at both ends:
 *
 *   launch_overhead [N]          (default 20000)
 *
 * Output: one line "launches N us_per_launch X total_ms Y".
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>

__global__ void tiny(int *x)
{
	if (threadIdx.x == 0)
		x[blockIdx.x] += 1;
}

static double now_s()
{
	timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], nullptr, 10) : 20000;
	int *x;
	if (n < 1 || cudaMalloc(&x, sizeof(int)) != cudaSuccess) {
		fprintf(stderr, "launch_overhead: bad count or no device\n");
		return 2;
	}
	cudaMemset(x, 0, sizeof(int));
	for (int i = 0; i < 100; i++)
		tiny<<<1, 32>>>(x);
	cudaDeviceSynchronize();
	double t0 = now_s();
	for (long i = 0; i < n; i++)
		tiny<<<1, 32>>>(x);
	cudaError_t e = cudaDeviceSynchronize();
	double t1 = now_s();
	int h = 0;
	cudaMemcpy(&h, x, sizeof h, cudaMemcpyDeviceToHost);
	if (e != cudaSuccess || h != n + 100) {
		fprintf(stderr, "launch_overhead: wrong result %d (want %ld): %s\n", h, n + 100,
			cudaGetErrorString(e));
		return 1;
	}
	printf("launches %ld us_per_launch %.3f total_ms %.1f\n", n, 1e6 * (t1 - t0) / (double)n,
	       1e3 * (t1 - t0));
	return 0;
}
