/*
 * nvtx.c: the NVTX range path of each thread.
 *
 * CUPTI calls nvtx_on_callback() synchronously on the thread that calls
 * nvtxRangePushA/W/Ex, nvtxDomainRangePushEx, nvtxRangePop and
 * nvtxDomainRangePop (NVTX_INJECTION64_PATH must name libcupti).  Each
 * thread keeps a stack of open ranges; the path of the stack ("a/b/c") is
 * interned once in a process-wide table, so a launch callback only reads a
 * pointer (nvtx_current) and kernel records can refer to it forever.
 * Registered strings (nvtxDomainRegisterStringA) are remembered by handle.
 * Push/pop of different domains share the thread's stack; a domain's pop
 * removes that domain's innermost range.
 */
#include "nvtx.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <generated_nvtx_meta.h>

#include "coll.h"
#include "profiler.h"

#define NVTX_DEPTH 64         /* deeper ranges are counted, not named */
#define NVTX_INTERN_MAX 65536 /* distinct paths kept; then "(too many NVTX paths)" */
#define NVTX_NAME_MAX 1024    /* bytes of one range name kept */

/* ------------------------------------------------------------------ */
/* The intern table: open addressing, grows, strings never freed.      */

static pthread_mutex_t nvtx_mu = PTHREAD_MUTEX_INITIALIZER;
static char **nvtx_tab;
static size_t nvtx_cap, nvtx_n;

static uint64_t nvtx_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

static int nvtx_grow_locked(void)
{
	size_t cap = nvtx_cap ? nvtx_cap * 2 : 1024;
	char **t = calloc(cap, sizeof(*t));
	if (!t)
		return -1;
	for (size_t i = 0; i < nvtx_cap; i++) {
		if (!nvtx_tab[i])
			continue;
		size_t j = nvtx_hash(nvtx_tab[i], strlen(nvtx_tab[i])) & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = nvtx_tab[i];
	}
	free(nvtx_tab);
	nvtx_tab = t;
	nvtx_cap = cap;
	return 0;
}

/* The interned copy of s[0..n). */
static const char *nvtx_intern(const char *s, size_t n)
{
	const char *r = "(too many NVTX paths)";

	pthread_mutex_lock(&nvtx_mu);
	if ((nvtx_n + 1) * 2 > nvtx_cap && nvtx_grow_locked() != 0)
		goto out;
	size_t j = nvtx_hash(s, n) & (nvtx_cap - 1);
	while (nvtx_tab[j]) {
		if (strlen(nvtx_tab[j]) == n && memcmp(nvtx_tab[j], s, n) == 0) {
			r = nvtx_tab[j];
			goto out;
		}
		j = (j + 1) & (nvtx_cap - 1);
	}
	if (nvtx_n >= NVTX_INTERN_MAX)
		goto out;
	char *c = malloc(n + 1);
	if (!c)
		goto out;
	memcpy(c, s, n);
	c[n] = '\0';
	nvtx_tab[j] = c;
	nvtx_n++;
	r = c;
out:
	pthread_mutex_unlock(&nvtx_mu);
	return r;
}

/* ------------------------------------------------------------------ */
/* Registered strings: handle -> interned name (small, linear).        */

struct nvtx_reg {
	const void *handle;
	const char *name;
};
static struct nvtx_reg *nvtx_regs;
static size_t nvtx_n_regs, nvtx_cap_regs;

static void nvtx_register(const void *handle, const char *name)
{
	const char *in = nvtx_intern(name, strnlen(name, NVTX_NAME_MAX));

	pthread_mutex_lock(&nvtx_mu);
	if (nvtx_n_regs == nvtx_cap_regs && nvtx_cap_regs < NVTX_INTERN_MAX) {
		size_t cap = nvtx_cap_regs ? nvtx_cap_regs * 2 : 64;
		struct nvtx_reg *r = realloc(nvtx_regs, cap * sizeof(*r));
		if (r) {
			nvtx_regs = r;
			nvtx_cap_regs = cap;
		}
	}
	if (nvtx_n_regs < nvtx_cap_regs)
		nvtx_regs[nvtx_n_regs++] = (struct nvtx_reg){ handle, in };
	pthread_mutex_unlock(&nvtx_mu);
}

static const char *nvtx_registered(const void *handle)
{
	const char *r = "(unregistered string)";

	pthread_mutex_lock(&nvtx_mu);
	for (size_t i = nvtx_n_regs; i-- > 0;) {
		if (nvtx_regs[i].handle == handle) {
			r = nvtx_regs[i].name;
			break;
		}
	}
	pthread_mutex_unlock(&nvtx_mu);
	return r;
}

/* ------------------------------------------------------------------ */
/* The per-thread stack                                                */

struct nvtx_frame {
	const void *domain; /* NULL: the default domain */
	const char *name;   /* interned */
	const char *path;   /* interned path up to and including this frame */
};

static __thread struct nvtx_frame nvtx_stack[NVTX_DEPTH];
static __thread int nvtx_depth;    /* frames held */
static __thread int nvtx_overflow; /* pushes beyond NVTX_DEPTH */

/*
 * The process's main thread publishes its path at each push and pop: a
 * thread with no range open launches on its behalf, as PyTorch's autograd
 * thread launches the backward pass while the main thread waits inside
 * loss.backward() (and inside the range the user opened around it).
 */
static _Atomic(const char *) nvtx_main_path;

static int nvtx_is_main(void)
{
	return (pid_t)syscall(SYS_gettid) == getpid();
}

static void nvtx_publish(void)
{
	if (nvtx_is_main())
		atomic_store(&nvtx_main_path, nvtx_current());
}

const char *nvtx_current(void)
{
	return nvtx_depth ? nvtx_stack[nvtx_depth - 1].path : "";
}

const char *nvtx_launch_path(int *from_main)
{
	const char *own = nvtx_current(), *m;

	*from_main = 0;
	if (*own || nvtx_is_main())
		return own;
	m = atomic_load(&nvtx_main_path);
	if (!m || !*m)
		return own;
	*from_main = 1;
	return m;
}

/* The path of frame i given the frame below it. */
static const char *nvtx_path_of(int i)
{
	char buf[8192];
	const char *parent = i ? nvtx_stack[i - 1].path : "";
	size_t pl = strlen(parent), nl = strlen(nvtx_stack[i].name);

	if (!pl)
		return nvtx_stack[i].name;
	if (pl + 1 + nl >= sizeof(buf))
		return parent; /* absurdly long: keep the parent's path */
	memcpy(buf, parent, pl);
	buf[pl] = '/';
	memcpy(buf + pl + 1, nvtx_stack[i].name, nl);
	return nvtx_intern(buf, pl + 1 + nl);
}

/* Step replay: the frame is a push of the step range (default domain). */
static int nvtx_is_step(const struct nvtx_frame *f)
{
	return coll_cfg.step_replay && coll_cfg.mode == COLL_METRICS && !f->domain && f->name &&
	       strcmp(f->name, coll_cfg.step_range) == 0;
}

static void nvtx_push(const void *domain, const char *name, size_t len)
{
	if (nvtx_depth >= NVTX_DEPTH) {
		nvtx_overflow++;
		return;
	}
	if (len > NVTX_NAME_MAX)
		len = NVTX_NAME_MAX;
	struct nvtx_frame *f = &nvtx_stack[nvtx_depth];
	f->domain = domain;
	f->name = nvtx_intern(name, len);
	nvtx_depth++;
	f->path = nvtx_path_of(nvtx_depth - 1);
	nvtx_publish();
	if (nvtx_is_step(f))
		profiler_step(1); /* step replay: the next step begins */
}

static void nvtx_pop(const void *domain)
{
	int i;

	if (nvtx_overflow) {
		nvtx_overflow--;
		return;
	}
	for (i = nvtx_depth - 1; i >= 0; i--) {
		if (nvtx_stack[i].domain == domain)
			break;
	}
	if (i < 0)
		return; /* a pop without its push: ignore */
	int step = nvtx_is_step(&nvtx_stack[i]);
	memmove(&nvtx_stack[i], &nvtx_stack[i + 1],
		(size_t)(nvtx_depth - i - 1) * sizeof(nvtx_stack[0]));
	nvtx_depth--;
	for (; i < nvtx_depth; i++)
		nvtx_stack[i].path = nvtx_path_of(i);
	nvtx_publish();
	if (step)
		profiler_step(0); /* step replay: the step ends */
}

/* Wide strings to UTF-8 (best effort; bad code points become U+FFFD). */
static void nvtx_push_wide(const void *domain, const wchar_t *ws)
{
	char buf[NVTX_NAME_MAX + 8];
	size_t n = 0;

	for (; ws && *ws && n + 4 <= NVTX_NAME_MAX; ws++) {
		uint32_t c = (uint32_t)*ws;
		if (c >= 0xD800 && c <= 0xDFFF)
			c = 0xFFFD;
		if (c < 0x80) {
			buf[n++] = (char)c;
		} else if (c < 0x800) {
			buf[n++] = (char)(0xC0 | (c >> 6));
			buf[n++] = (char)(0x80 | (c & 0x3F));
		} else if (c < 0x10000) {
			buf[n++] = (char)(0xE0 | (c >> 12));
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
			buf[n++] = (char)(0x80 | (c & 0x3F));
		} else if (c < 0x110000) {
			buf[n++] = (char)(0xF0 | (c >> 18));
			buf[n++] = (char)(0x80 | ((c >> 12) & 0x3F));
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
			buf[n++] = (char)(0x80 | (c & 0x3F));
		} else {
			memcpy(buf + n, "\xEF\xBF\xBD", 3);
			n += 3;
		}
	}
	nvtx_push(domain, buf, n);
}

static void nvtx_push_attr(const void *domain, const nvtxEventAttributes_t *a)
{
	if (!a) {
		nvtx_push(domain, "", 0);
		return;
	}
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		if (a->message.ascii)
			nvtx_push(domain, a->message.ascii, strnlen(a->message.ascii, NVTX_NAME_MAX));
		else
			nvtx_push(domain, "", 0);
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		nvtx_push_wide(domain, a->message.unicode);
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED: {
		const char *s = nvtx_registered(a->message.registered);
		nvtx_push(domain, s, strlen(s));
		break;
	}
	default:
		nvtx_push(domain, "", 0);
		break;
	}
}

void nvtx_on_callback(CUpti_CallbackId cbid, const void *data)
{
	const CUpti_NvtxData *d = data;

	if (!d || !d->functionParams)
		return;
	switch (cbid) {
	case CUPTI_CBID_NVTX_nvtxRangePushA: {
		const nvtxRangePushA_params *p = d->functionParams;
		const char *m = p->message ? p->message : "";
		nvtx_push(NULL, m, strnlen(m, NVTX_NAME_MAX));
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangePushW: {
		const nvtxRangePushW_params *p = d->functionParams;
		nvtx_push_wide(NULL, p->message);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangePushEx: {
		const nvtxRangePushEx_params *p = d->functionParams;
		nvtx_push_attr(NULL, p->eventAttrib);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangePop:
		nvtx_pop(NULL);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
		const nvtxDomainRangePushEx_params *p = d->functionParams;
		nvtx_push_attr(p->domain, p->core.eventAttrib);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxDomainRangePop: {
		const nvtxDomainRangePop_params *p = d->functionParams;
		nvtx_pop(p->domain);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
		const nvtxDomainRegisterStringA_params *p = d->functionParams;
		if (d->functionReturnValue && p->string)
			nvtx_register(*(const nvtxStringHandle_t *)d->functionReturnValue,
				      p->string);
		break;
	}
	default:
		break;
	}
}
