/*
 * flush.c: cache control for metrics mode (KGATE_CACHE_CONTROL=all, the
 * default, as ncu's --cache-control all): before each profiled launch a
 * kernel of the collector's own reads a buffer twice the size of the
 * device's L2 cache, so that the lines the kernels before it left (dirty
 * ones included: their write-backs happen during the flush) are evicted,
 * and the profiled kernel's DRAM counters are those of a cold cache.  CUDA
 * has no call that invalidates the L2 (ncu uses a mechanism of its own); a
 * memset or a copy would leave the L2 full of dirty lines that the profiled
 * kernel would then be charged for, so the flush only reads (ld.global.cg:
 * cached in L2 only).  The kernel is PTX embedded here, loaded once per
 * context with cuModuleLoadData; the driver entry points are looked up in
 * the driver library (the collector links no libcuda).
 *
 * Where it runs (KGATE_CACHE_FLUSH):
 *   stream (the default): on the launch's own stream, in the program's
 *     context, not waited for (with auto ranges it is a range of its own,
 *     dropped).
 *   context: in a context the collector creates on the launch's device.
 *     The launch's stream is synchronised, the flush runs in that context
 *     and is waited for, then the launch goes on.  The L2 is the device's,
 *     so the flush evicts the program's lines all the same, but the
 *     profiler, which works on the program's context, never sees the
 *     flush: no range of its own.  Measured slower on an H100 (the two
 *     context switches cost more than the range: docs/PERFORMANCE.md,
 *     "Where the flush runs").  When the context cannot be created, the
 *     flush runs on the stream (one error record says why).
 *
 * The flush kernel's launch goes through the driver and so through the
 * collector's launch callbacks: flush_busy() tells them to ignore it, and
 * its activity record (kernel replay keeps activity on) is dropped by name.
 */
#include "flush.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "coll.h"

#define FLUSH_CTX_MAX 16

/* nvcc -arch=compute_75 -ptx of:
 *   extern "C" __global__ void kgate_flush(const uint4 *__restrict__ buf,
 *                                          unsigned long long n, unsigned *out)
 *   { unsigned acc = 0;
 *     for (i = global thread index; i < n; i += grid size) {
 *       uint4 v = __ldcg(buf + i); acc ^= v.x ^ v.y ^ v.z ^ v.w; }
 *     if (acc == 0x9e3779b9u) *out = acc; }   (the loads cannot be dropped) */
static const char flush_ptx[] =
	".version 7.5\n"
	".target sm_75\n"
	".address_size 64\n"
	".visible .entry kgate_flush(\n"
	"	.param .u64 kgate_flush_param_0,\n"
	"	.param .u64 kgate_flush_param_1,\n"
	"	.param .u64 kgate_flush_param_2\n"
	")\n"
	"{\n"
	"	.reg .pred %p<4>;\n"
	"	.reg .b32 %r<17>;\n"
	"	.reg .b64 %rd<16>;\n"
	"	ld.param.u64 %rd7, [kgate_flush_param_0];\n"
	"	ld.param.u64 %rd8, [kgate_flush_param_1];\n"
	"	ld.param.u64 %rd9, [kgate_flush_param_2];\n"
	"	mov.u32 %r3, %ctaid.x;\n"
	"	mov.u32 %r4, %ntid.x;\n"
	"	cvt.u64.u32 %rd1, %r4;\n"
	"	mul.wide.u32 %rd10, %r3, %r4;\n"
	"	mov.u32 %r5, %tid.x;\n"
	"	cvt.u64.u32 %rd11, %r5;\n"
	"	add.s64 %rd15, %rd10, %rd11;\n"
	"	setp.ge.u64 %p1, %rd15, %rd8;\n"
	"	@%p1 bra $L__BB0_5;\n"
	"	mov.u32 %r7, %nctaid.x;\n"
	"	cvt.u64.u32 %rd12, %r7;\n"
	"	mul.lo.s64 %rd3, %rd12, %rd1;\n"
	"	cvta.to.global.u64 %rd4, %rd9;\n"
	"	mov.u32 %r16, 0;\n"
	"$L__BB0_2:\n"
	"	shl.b64 %rd14, %rd15, 4;\n"
	"	add.s64 %rd13, %rd7, %rd14;\n"
	"	ld.global.cg.v4.u32 {%r8,%r9,%r10,%r11}, [%rd13];\n"
	"	xor.b32 %r12, %r9, %r16;\n"
	"	xor.b32 %r13, %r12, %r8;\n"
	"	xor.b32 %r14, %r13, %r10;\n"
	"	xor.b32 %r16, %r14, %r11;\n"
	"	add.s64 %rd15, %rd15, %rd3;\n"
	"	setp.lt.u64 %p2, %rd15, %rd8;\n"
	"	@%p2 bra $L__BB0_2;\n"
	"	setp.ne.s32 %p3, %r16, -1640531527;\n"
	"	@%p3 bra $L__BB0_5;\n"
	"	mov.u32 %r15, -1640531527;\n"
	"	st.global.u32 [%rd4], %r15;\n"
	"$L__BB0_5:\n"
	"	ret;\n"
	"}\n";

typedef CUresult (*fl_load_fn)(CUmodule *, const void *);
typedef CUresult (*fl_getfn_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*fl_alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*fl_attr_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*fl_dev_fn)(CUdevice *);
typedef CUresult (*fl_launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
				 unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*fl_sync_fn)(CUstream);
typedef CUresult (*fl_create_fn)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice);
typedef CUresult (*fl_push_fn)(CUcontext);
typedef CUresult (*fl_pop_fn)(CUcontext *);
typedef CUresult (*fl_ctxsync_fn)(void);

static struct {
	fl_load_fn load;
	fl_getfn_fn getfn;
	fl_alloc_fn alloc;
	fl_attr_fn attr;
	fl_dev_fn dev;
	fl_launch_fn launch;
	fl_sync_fn sync;
	fl_create_fn create;
	fl_push_fn push;
	fl_pop_fn pop;
	fl_ctxsync_fn ctxsync;
} fl;

struct flush_ctx {
	CUcontext ctx; /* the program's */
	CUcontext own; /* the collector's own on the same device (NULL: the flush runs on the stream) */
	int failed;
	CUfunction fn;
	CUdeviceptr buf;
	unsigned long long n16; /* 16-byte elements of the buffer read */
	unsigned grid;
};

static pthread_mutex_t flush_mu = PTHREAD_MUTEX_INITIALIZER;
static struct flush_ctx flush_ctxs[FLUSH_CTX_MAX];
static size_t flush_n;
static int flush_looked, flush_off, flush_errs;
static __thread int flush_in;
static unsigned long flush_count;

int flush_busy(void)
{
	return flush_in;
}

int flush_is_kernel(const char *name)
{
	return name && strcmp(name, FLUSH_KERNEL) == 0;
}

unsigned long flush_launches(void)
{
	unsigned long n;

	pthread_mutex_lock(&flush_mu);
	n = flush_count;
	pthread_mutex_unlock(&flush_mu);
	return n;
}

static void flush_fail_locked(const char *what, CUresult r)
{
	if (flush_errs++ == 0)
		coll_error("cache_control", -1,
			   "cannot flush the caches before profiled launches: %s failed (%d); DRAM "
			   "counters are those of a warm cache (as ncu --cache-control none)",
			   what, (int)r);
}

static int flush_lookup_locked(void)
{
	if (flush_looked)
		return flush_off ? -1 : 0;
	flush_looked = 1;
	*(void **)&fl.load = coll_cuda_sym("cuModuleLoadData");
	*(void **)&fl.getfn = coll_cuda_sym("cuModuleGetFunction");
	*(void **)&fl.alloc = coll_cuda_sym("cuMemAlloc_v2");
	*(void **)&fl.attr = coll_cuda_sym("cuDeviceGetAttribute");
	*(void **)&fl.dev = coll_cuda_sym("cuCtxGetDevice");
	*(void **)&fl.launch = coll_cuda_sym("cuLaunchKernel");
	*(void **)&fl.sync = coll_cuda_sym("cuStreamSynchronize");
	if (!fl.load || !fl.getfn || !fl.alloc || !fl.attr || !fl.dev || !fl.launch || !fl.sync) {
		flush_off = 1;
		flush_fail_locked("finding the driver's module and launch functions", CUDA_ERROR_NOT_FOUND);
		return -1;
	}
	*(void **)&fl.create = coll_cuda_sym("cuCtxCreate_v4");
	*(void **)&fl.push = coll_cuda_sym("cuCtxPushCurrent_v2");
	*(void **)&fl.pop = coll_cuda_sym("cuCtxPopCurrent_v2");
	*(void **)&fl.ctxsync = coll_cuda_sym("cuCtxSynchronize");
	return 0;
}

/* A context of the collector's own on dev, current after the call; NULL
 * when it cannot be made (one error record: the flush runs on the stream). */
static CUcontext flush_own_ctx_locked(CUdevice dev)
{
	CUctxCreateParams cp;
	CUcontext own = NULL;
	CUresult r;

	if (!fl.create || !fl.push || !fl.pop || !fl.ctxsync) {
		r = CUDA_ERROR_NOT_FOUND;
		goto fail;
	}
	memset(&cp, 0, sizeof(cp));
	if ((r = fl.create(&own, &cp, 0, dev)) != CUDA_SUCCESS)
		goto fail;
	return own; /* created current, above the program's */
fail:
	if (flush_errs++ == 0)
		coll_error("cache_control", -1,
			   "cannot create a context for the cache flush (CUDA error %d); the flush "
			   "runs on each profiled launch's stream instead (with auto ranges a range "
			   "of its own: slower, the same counters)",
			   (int)r);
	return NULL;
}

/* The context's flush kernel and buffer (the context is current). */
static struct flush_ctx *flush_ctx_locked(CUcontext ctx)
{
	for (size_t i = 0; i < flush_n; i++)
		if (flush_ctxs[i].ctx == ctx)
			return flush_ctxs[i].failed ? NULL : &flush_ctxs[i];
	if (flush_n == FLUSH_CTX_MAX || flush_lookup_locked() != 0)
		return NULL;
	struct flush_ctx *fc = &flush_ctxs[flush_n++];
	memset(fc, 0, sizeof(*fc));
	fc->ctx = ctx;
	fc->failed = 1;
	CUdevice dev;
	CUmodule mod;
	int l2 = 0, sms = 0;
	CUresult r;
	flush_in = 1;
	if ((r = fl.dev(&dev)) != CUDA_SUCCESS) {
		flush_fail_locked("cuCtxGetDevice", r);
	} else if ((r = fl.attr(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev)) != CUDA_SUCCESS ||
		   (r = fl.attr(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)) != CUDA_SUCCESS) {
		flush_fail_locked("cuDeviceGetAttribute", r);
	} else {
		if (coll_cfg.flush_own)
			fc->own = flush_own_ctx_locked(dev); /* current until popped below */
		if ((r = fl.load(&mod, flush_ptx)) != CUDA_SUCCESS) {
			flush_fail_locked("cuModuleLoadData (the flush kernel)", r);
		} else if ((r = fl.getfn(&fc->fn, mod, FLUSH_KERNEL)) != CUDA_SUCCESS) {
			flush_fail_locked("cuModuleGetFunction", r);
		} else {
			/* twice the L2, and room for the kernel's never-taken store */
			size_t bytes = 2 * (size_t)(l2 > 0 ? l2 : 1 << 20);
			if ((r = fl.alloc(&fc->buf, bytes + 16)) != CUDA_SUCCESS) {
				flush_fail_locked("cuMemAlloc (the flush buffer)", r);
			} else {
				fc->n16 = bytes / 16;
				fc->grid = (unsigned)(sms > 0 ? sms : 1) * 4;
				fc->failed = 0;
				COLL_DEBUG("cache flush: %zu bytes (L2 %d), %u blocks of 512, %s", bytes,
					   l2, fc->grid,
					   fc->own ? "in a context of its own" : "on the launch's stream");
			}
		}
		CUcontext top;
		if (fc->own && fl.pop(&top) != CUDA_SUCCESS)
			fc->failed = 1; /* the program's context would not be current again */
	}
	flush_in = 0;
	return fc->failed ? NULL : fc;
}

int flush_prepare(CUcontext ctx)
{
	int ok;

	if (!coll_cfg.cache_all)
		return -1;
	pthread_mutex_lock(&flush_mu);
	ok = flush_ctx_locked(ctx) != NULL;
	pthread_mutex_unlock(&flush_mu);
	return ok ? 0 : -1;
}

int flush_ranged(CUcontext ctx)
{
	int ranged = 1;

	pthread_mutex_lock(&flush_mu);
	for (size_t i = 0; i < flush_n; i++)
		if (flush_ctxs[i].ctx == ctx)
			ranged = flush_ctxs[i].own == NULL;
	pthread_mutex_unlock(&flush_mu);
	return ranged;
}

/* The flush in the collector's own context: the launch's stream drained
 * first (what was queued before the launch must not run after the flush),
 * the flush waited for. */
static CUresult flush_run_own(struct flush_ctx *fc, CUstream stream, void **args)
{
	CUresult r;
	CUcontext top;

	if ((r = fl.sync(stream)) != CUDA_SUCCESS || (r = fl.push(fc->own)) != CUDA_SUCCESS)
		return r;
	r = fl.launch(fc->fn, fc->grid, 1, 1, 512, 1, 1, 0, NULL, args, NULL);
	if (r == CUDA_SUCCESS)
		r = fl.ctxsync();
	CUresult p = fl.pop(&top);
	return r != CUDA_SUCCESS ? r : p;
}

int flush_run(CUcontext ctx, CUstream stream, int sync)
{
	CUresult r = CUDA_SUCCESS;

	if (!coll_cfg.cache_all)
		return -1;
	pthread_mutex_lock(&flush_mu);
	struct flush_ctx *fc = flush_ctx_locked(ctx);
	if (!fc) {
		pthread_mutex_unlock(&flush_mu);
		return -1;
	}
	unsigned long long n = fc->n16;
	CUdeviceptr buf = fc->buf, out = fc->buf + (CUdeviceptr)(n * 16);
	void *args[] = { &buf, &n, &out };
	flush_in = 1;
	if (fc->own) {
		r = flush_run_own(fc, stream, args);
	} else {
		r = fl.launch(fc->fn, fc->grid, 1, 1, 512, 1, 1, 0, stream, args, NULL);
		if (r == CUDA_SUCCESS && sync)
			r = fl.sync(stream);
	}
	flush_in = 0;
	if (r != CUDA_SUCCESS) {
		flush_fail_locked("launching the flush kernel", r);
		fc->failed = 1;
	} else {
		flush_count++;
	}
	int ranged = fc->own == NULL;
	pthread_mutex_unlock(&flush_mu);
	return r == CUDA_SUCCESS ? ranged : -1;
}
