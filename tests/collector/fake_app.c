/*
 * fake_app.c: drives the collector through the stand-in libcupti
 * (fake_cupti.c, found first through LD_LIBRARY_PATH): NVTX ranges on two
 * threads, runtime and nested driver launches, a graph launch, then kernel
 * activity records delivered at exit (tests/e2e/collector.t).
 *
 *   fake_app COLLECTOR [nvtx-first | autograd | many | steps | only-init | pm [N]]
 *
 * steps: FAKE_STEPS steps (default 5), each a push of "step" around two
 * launches; FAKE_STEP_ODD=k: step k launches another kernel in the second
 * place.
 * pm: N launches (default 40) of two kernels in turn inside "step", a
 * graph launch half way (the stand-in's PM sampling counts the kernels);
 * FAKE_APP_IDLE_MS: a pause a quarter of the way (FAKE_APP_IDLE_MEMSET: and a
 * memset after it); FAKE_APP_MEMSET: a
 * memset (cuMemsetD32Async) after every fourth launch.  Like the CUDA runtime, it
 * registers an exit handler of its own after the collector's start (its
 * "teardown": the stand-in's fake_runtime_teardown), which runs before the
 * collector's; on a GPU, PM sampling stopped after it never returns.
 */
#include <cupti.h>
#include <dlfcn.h>
#include <generated_nvtx_meta.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

typedef int (*cb_fn)(CUpti_CallbackDomain, CUpti_CallbackId, const void *);
typedef void (*kern_fn)(const char *, uint32_t, uint64_t, uint64_t, int, int);
static cb_fn fire;

static void push(const char *m)
{
	nvtxRangePushA_params p = { m };
	CUpti_NvtxData d = { "nvtxRangePushA", &p, NULL };
	fire(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA, &d);
}
static void pop(void)
{
	nvtxRangePop_params p;
	CUpti_NvtxData d = { "nvtxRangePop", &p, NULL };
	fire(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePop, &d);
}
static void api(CUpti_CallbackDomain dom, CUpti_CallbackId id, CUpti_ApiCallbackSite site,
		uint32_t corr, const char *sym)
{
	/* FAKE_LATECTX: no context is current yet at the runtime call */
	int late = getenv("FAKE_LATECTX") && dom == CUPTI_CB_DOMAIN_RUNTIME_API;
	/* the driver call's parameters: the grid and block of fake_kernel's
	 * record of the same kernel (grid x 2 x 1, block x 1 x 1) */
	unsigned gx = 1, bx = 32;
	if (sym && strstr(sym, "saxpy"))
		gx = 4, bx = 256;
	else if (sym && strstr(sym, "strided"))
		gx = 2, bx = 128;
	else if (sym && strstr(sym, "scale"))
		bx = 64;
	cuLaunchKernel_params lp = { NULL, gx, 2, 1, bx, 1, 1, 0, NULL, NULL, NULL };
	CUresult ok = CUDA_SUCCESS;
	CUpti_CallbackData d = { .callbackSite = site, .functionName = "launch",
				 .symbolName = sym, .context = late ? NULL : (CUcontext)&fire,
				 .correlationId = corr,
				 .functionParams = dom == CUPTI_CB_DOMAIN_DRIVER_API && sym ? &lp : NULL,
				 .functionReturnValue = site == CUPTI_API_EXIT ? &ok : NULL };
	fire(dom, id, &d);
}
/* a runtime launch with a nested driver launch */
static void launch(uint32_t corr, const char *sym)
{
	api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER, corr, sym);
	api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER, corr + 1, sym);
	api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT, corr + 1, sym);
	api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT, corr, sym);
}
/* a driver memset (cuMemsetD32Async) */
static void memset_call(uint32_t corr)
{
	api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, CUPTI_API_ENTER, corr, NULL);
	api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, CUPTI_API_EXIT, corr, NULL);
}
static const void *get_table(uint32_t id)
{
	return id == 42 ? "42" : NULL;
}
static void *worker(void *u)
{
	(void)u;
	push("worker");
	launch(30, "_Z5scaleifPf");
	pop();
	return NULL;
}
/* a thread with no range of its own, as PyTorch's autograd thread */
static void *autograd(void *u)
{
	launch(*(uint32_t *)u, "_Z8backwardv");
	return NULL;
}

int main(int argc, char **argv)
{
	/* the driver first, as the CUDA runtime loads it: not into the global
	 * scope, so the collector finds its functions only in the library */
	if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 3;
	}
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 3; }
	void *c = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	fire = (cb_fn)dlsym(c, "fake_callback");
	kern_fn kernel = (kern_fn)dlsym(c, "fake_kernel");
	int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
	if (!fire || !kernel || !init) { fprintf(stderr, "fake_app: symbols missing\n"); return 3; }
	if (argc > 2 && !strcmp(argv[2], "nvtx-first")) {
		/* NVTX_INJECTION64_PATH names the collector: a range opened
		 * before cuInit, then one launch in it */
		int (*ninit)(const void *(*)(uint32_t)) =
			(int (*)(const void *(*)(uint32_t)))dlsym(h, "InitializeInjectionNvtx2");
		if (!ninit) { fprintf(stderr, "fake_app: no InitializeInjectionNvtx2\n"); return 3; }
		printf("nvtx=%d\n", ninit(get_table));
		push("early");
		printf("init=%d\n", init());
		launch(10, "_Z5saxpyifPKfPf");
		pop();
		kernel("_Z5saxpyifPKfPf", 10, 1000, 4300, 4, 256);
		return 0;
	}
	printf("init=%d\n", init());
	if (argc > 2 && !strcmp(argv[2], "autograd")) {
		/* launched by a thread with no range while the main thread waits
		 * inside step/backward, then while it has no range open */
		pthread_t t;
		uint32_t c1 = 80, c2 = 90;
		push("step");
		push("backward");
		pthread_create(&t, NULL, autograd, &c1);
		pthread_join(t, NULL);
		pop();
		pop();
		pthread_create(&t, NULL, autograd, &c2);
		pthread_join(t, NULL);
		kernel("_Z8backwardv", 80, 1000, 2000, 1, 32);
		kernel("_Z8backwardv", 90, 3000, 4000, 1, 32);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[2], "pm")) {
		int n = argc > 3 ? atoi(argv[3]) : 40;
		/* the CUDA runtime's exit handler, registered after the
		 * collector started */
		void (*runtime_teardown)(void) = (void (*)(void))dlsym(c, "fake_runtime_teardown");
		if (!runtime_teardown || atexit(runtime_teardown) != 0) {
			fprintf(stderr, "fake_app: no fake_runtime_teardown\n");
			return 3;
		}
		push("step");
		for (int i = 0; i < n; i++) {
			if (i == n / 2) {
				api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, CUPTI_API_ENTER, 5, NULL);
				api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, CUPTI_API_EXIT, 5, NULL);
			}
			if (i == n / 4 && getenv("FAKE_APP_IDLE_MS")) { /* the program pauses */
				usleep(1000 * (useconds_t)atoi(getenv("FAKE_APP_IDLE_MS")));
				if (getenv("FAKE_APP_IDLE_MEMSET"))
					memset_call(400000);
			}
			launch(1000 + 4 * (uint32_t)i, i & 1 ? "_Z2kBv" : "_Z2kAv");
			if (getenv("FAKE_APP_MEMSET") && i % 4 == 1) /* as PyTorch zeroes a gradient */
				memset_call(500000 + (uint32_t)i);
		}
		pop();
		return 0;
	}
	if (argc > 2 && !strcmp(argv[2], "steps")) {
		int steps = getenv("FAKE_STEPS") ? atoi(getenv("FAKE_STEPS")) : 5;
		int odd = getenv("FAKE_STEP_ODD") ? atoi(getenv("FAKE_STEP_ODD")) : -1;
		uint32_t corr = 1000;
		launch(10, "_Z4initv");
		for (int s = 0; s < steps && s < 12; s++) {
			push("step");
			launch(corr, "_Z5saxpyifPKfPf");
			push("inner");
			launch(corr + 2, s == odd ? "_Z3oddv" : "_Z7stridediPKfPfi");
			pop();
			pop();
			corr += 4;
		}
		launch(20, "_Z4tailiPf");
		kernel("_Z4initv", 10, 100, 200, 1, 32);
		for (uint32_t k = 1000; k < corr; k += 4) {
			kernel("_Z5saxpyifPKfPf", k, 1000 + k, 1100 + k, 4, 256);
			kernel("_Z7stridediPKfPfi", k + 2, 1200 + k, 1300 + k, 2, 128);
		}
		kernel("_Z4tailiPf", 20, 90000, 90100, 1, 32);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[2], "many")) {
		/* saxpy, 30 launches of another kernel, saxpy again */
		launch(10, "_Z5saxpyifPKfPf");
		for (uint32_t i = 0; i < 30; i++)
			launch(100 + 2 * i, "_Z5otherv");
		launch(200, "_Z5saxpyifPKfPf");
		kernel("_Z5saxpyifPKfPf", 10, 1000, 4300, 4, 256);
		for (uint32_t i = 0; i < 30; i++)
			kernel("_Z5otherv", 100 + 2 * i, 5000 + 100 * i, 5050 + 100 * i, 1, 32);
		kernel("_Z5saxpyifPKfPf", 200, 9000, 9300, 4, 256);
		return 0;
	}
	if (argc > 2)
		return 0; /* only the injection */

	push("step");
	push("forward");
	launch(10, "_Z5saxpyifPKfPf");
	pop();
	/* a domain range named by a registered string */
	void *dom = (void *)0x77, *handle = (void *)0x1234;
	nvtxDomainRegisterStringA_params rp = { dom, "backward" };
	CUpti_NvtxData rd = { "nvtxDomainRegisterStringA", &rp, &handle };
	fire(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxDomainRegisterStringA, &rd);
	nvtxEventAttributes_t ea = { 0 };
	ea.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	ea.message.registered = handle;
	nvtxDomainRangePushEx_params dp = { dom, { &ea } };
	CUpti_NvtxData dd = { "nvtxDomainRangePushEx", &dp, NULL };
	fire(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &dd);
	if (getenv("FAKE_EARLY")) /* strided's record is already there */
		kernel("_Z7stridediPKfPfi", 21, 5000, 9000, 2, 128);
	launch(20, "_Z7stridediPKfPfi");
	nvtxDomainRangePop_params pp = { dom };
	CUpti_NvtxData pd = { "nvtxDomainRangePop", &pp, NULL };
	fire(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxDomainRangePop, &pd);
	pop();

	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);

	push("graph");
	api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, CUPTI_API_ENTER, 40, NULL);
	api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, CUPTI_API_EXIT, 40, NULL);
	pop();
	pop(); /* a pop without its push is ignored */
	launch(50, "_Z4tailiPf");
	push("\001evil\"/x");
	launch(60, "k\"\377");
	pop();
	nvtxRangePushW_params wp = { L"wide\u00e9" };
	CUpti_NvtxData wd = { "nvtxRangePushW", &wp, NULL };
	fire(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushW, &wd);
	launch(70, "_Z4widev");
	pop();

	if (getenv("FAKE_FORK")) { /* a child that exits through exit() */
		pid_t pid = fork();
		if (pid == 0)
			exit(0);
		waitpid(pid, NULL, 0);
	}
	/* the activity records, as CUPTI would deliver them later */
	kernel("_Z5saxpyifPKfPf", 10, 1000, 4300, 4, 256);
	if (!getenv("FAKE_EARLY"))
		kernel("_Z7stridediPKfPfi", 21, 5000, 9000, 2, 128); /* the nested driver call's id */
	if (getenv("FAKE_DUP")) /* kernel replay: the same launch again */
		kernel("_Z7stridediPKfPfi", 21, 9100, 9200, 2, 128);
	kernel("_Z5scaleifPf", 30, 9500, 9900, 1, 64);
	kernel("_Z7graph_kiPKfPf", 40, 10000, 10100, 1, 32);
	kernel("_Z7graph_kiPKfPf", 40, 10200, 10300, 1, 32);
	kernel("_Z4tailiPf", 50, 0, 0, 1, 32); /* no timestamps */
	kernel("k\"\377", 60, 11000, 11500, 1, 32);
	kernel("_Z4widev", 70, 12000, 12100, 1, 32);
	kernel("_Z7unknownv", 99, 13000, 13100, 1, 32); /* no launch callback */
	return 0;
}
