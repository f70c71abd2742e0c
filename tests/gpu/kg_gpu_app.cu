// kg_gpu_app.cu: the CUDA program scripts/test-gpu.sh runs under the
// collector and under ncu.  Every kernel is launched by one thread from one
// NVTX range, so the k-th launch of a kernel is the same launch in every
// run, and its expected NVTX path is fixed:
//
//   saxpy      step/forward             main thread, <<<>>>
//   attention  step/forward/attention   main thread, nested range
//   strided    step/backward            main thread, domain range with a
//                                       registered string, cudaLaunchKernelEx
//   scale      worker                   second thread, own stream and range
//   graph_k    graph                    CUDA graph, launched twice
//   tail       (none)                   outside every range
//
// Output goes to stderr only (stdout stays clean for tools).
// Usage: kg_gpu_app [--n ELEMENTS] [--iters N] [--serial]
//                   [--worker-stream nonblocking|blocking|legacy|early]
//                   [--worker-first]
// --worker-stream: the worker's stream, made by the worker (nonblocking,
// the default, or blocking), the legacy default stream, or a non-blocking
// stream made by the main thread before any launch (early).
// --worker-first: the main thread launches only once the worker's first
// launch has returned (the two threads still launch at once afterwards).
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                      \
	do {                                                                          \
		cudaError_t e_ = (x);                                                 \
		if (e_ != cudaSuccess) {                                              \
			fprintf(stderr, "kg_gpu_app: %s: %s\n", #x, cudaGetErrorString(e_)); \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

__global__ void saxpy(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

// Compute-heavy: a short dependent FMA chain per element.
__global__ void attention(int n, const float *x, float *out, int rounds)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = x[i], acc = 0.f;
	for (int r = 0; r < rounds; r++)
		acc = fmaf(acc, 0.999f, v * 1.0001f);
	out[i] = acc;
}

__global__ void strided(int n, const float *x, float *y, int stride)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[(long long)i * stride % n] * 2.f;
}

__global__ void scale(int n, float a, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] *= a;
}

__global__ void graph_k(int n, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[i] + 1.f;
}

__global__ void tail(int n, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = 0.5f * y[i];
}

struct worker_arg {
	int n, iters;
	float *buf;
	const char *stream;     // nonblocking, blocking, legacy, early
	cudaStream_t early;
	volatile int started;   // the first launch has returned
};

static void *worker(void *p)
{
	struct worker_arg *w = (struct worker_arg *)p;
	cudaStream_t s = 0;
	int own = 0;
	if (!strcmp(w->stream, "early")) {
		s = w->early;
	} else if (strcmp(w->stream, "legacy")) {
		CHECK(cudaStreamCreateWithFlags(&s, strcmp(w->stream, "blocking") ? cudaStreamNonBlocking
										     : cudaStreamDefault));
		own = 1;
	}
	nvtxRangePushA("worker");
	for (int i = 0; i < w->iters; i++) {
		scale<<<(w->n + 255) / 256, 256, 0, s>>>(w->n, 1.0001f, w->buf);
		__atomic_store_n(&w->started, 1, __ATOMIC_RELEASE);
	}
	CHECK(cudaGetLastError());
	nvtxRangePop();
	CHECK(cudaStreamSynchronize(s));
	if (own)
		CHECK(cudaStreamDestroy(s));
	return NULL;
}

int main(int argc, char **argv)
{
	int n = 1 << 24, iters = 5, serial = 0, worker_first = 0;
	const char *wstream = "nonblocking";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--serial") == 0)
			serial = 1;
		else if (strcmp(argv[i], "--worker-first") == 0)
			worker_first = 1;
		else if (i + 1 < argc && strcmp(argv[i], "--worker-stream") == 0)
			wstream = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "--n") == 0)
			n = atoi(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "--iters") == 0)
			iters = atoi(argv[++i]);
	}
	size_t bytes = (size_t)n * sizeof(float);
	float *x, *y, *z, *w;
	CHECK(cudaMalloc(&x, bytes));
	CHECK(cudaMalloc(&y, bytes));
	CHECK(cudaMalloc(&z, bytes));
	CHECK(cudaMalloc(&w, bytes));
	CHECK(cudaMemset(x, 0, bytes));
	CHECK(cudaMemset(y, 0, bytes));
	CHECK(cudaMemset(w, 0, bytes));
	int blocks = (n + 255) / 256;

	// the worker thread: its own range and stream, concurrently
	struct worker_arg wa = { n, iters, w, wstream, 0, 0 };
	if (!strcmp(wstream, "early"))
		CHECK(cudaStreamCreateWithFlags(&wa.early, cudaStreamNonBlocking));
	pthread_t th;
	if (pthread_create(&th, NULL, worker, &wa) != 0) {
		fprintf(stderr, "kg_gpu_app: pthread_create failed\n");
		return 1;
	}
	// --serial: the worker's kernels finish before the main thread's
	// start, so that no kernel shares the GPU with another (as under ncu,
	// which serializes them) and durations compare launch for launch
	if (serial)
		pthread_join(th, NULL);
	while (worker_first && !__atomic_load_n(&wa.started, __ATOMIC_ACQUIRE))
		;

	nvtxDomainHandle_t dom = nvtxDomainCreateA("kgate-test");
	nvtxStringHandle_t back = nvtxDomainRegisterStringA(dom, "backward");
	nvtxEventAttributes_t ea;
	memset(&ea, 0, sizeof(ea));
	ea.version = NVTX_VERSION;
	ea.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	ea.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	ea.message.registered = back;

	for (int it = 0; it < iters; it++) {
		nvtxRangePushA("step");
		nvtxRangePushA("forward");
		saxpy<<<blocks, 256>>>(n, 2.0f, x, y);
		nvtxRangePushA("attention");
		attention<<<blocks, 256>>>(n, x, z, 64);
		nvtxRangePop();
		nvtxRangePop();
		nvtxDomainRangePushEx(dom, &ea);
		cudaLaunchConfig_t cfg;
		memset(&cfg, 0, sizeof(cfg));
		cfg.gridDim = dim3(blocks);
		cfg.blockDim = dim3(128);
		// 128 threads per block here: twice the blocks
		cfg.gridDim = dim3((n + 127) / 128);
		CHECK(cudaLaunchKernelEx(&cfg, strided, n, (const float *)x, z, 33));
		nvtxDomainRangePop(dom);
		nvtxRangePop();
	}
	CHECK(cudaGetLastError());

	// a CUDA graph holding one kernel, launched twice
	cudaStream_t gs;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	CHECK(cudaStreamCreateWithFlags(&gs, cudaStreamNonBlocking));
	CHECK(cudaStreamBeginCapture(gs, cudaStreamCaptureModeThreadLocal));
	graph_k<<<blocks, 256, 0, gs>>>(n, x, y);
	CHECK(cudaStreamEndCapture(gs, &g));
	CHECK(cudaGraphInstantiate(&ge, g, 0));
	nvtxRangePushA("graph");
	for (int i = 0; i < 2; i++)
		CHECK(cudaGraphLaunch(ge, gs));
	nvtxRangePop();
	CHECK(cudaStreamSynchronize(gs));

	tail<<<blocks, 256>>>(n, y);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	if (!serial)
		pthread_join(th, NULL);

	if (wa.early)
		CHECK(cudaStreamDestroy(wa.early));
	CHECK(cudaGraphExecDestroy(ge));
	CHECK(cudaGraphDestroy(g));
	CHECK(cudaStreamDestroy(gs));
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
	CHECK(cudaFree(z));
	CHECK(cudaFree(w));
	fprintf(stderr, "kg_gpu_app: done (n=%d, iters=%d)\n", n, iters);
	return 0;
}
