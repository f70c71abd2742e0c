/*
 * common.cuh: what every program of the CUDA benchmark suite shares.
 *
 * Command-line parsing (--n, --variant, --block, --iters, --warmup,
 * --extra-work), error checking of CUDA calls, NVTX ranges (NVTX3,
 * header-only) and event timing of the measured loop.  Each program checks
 * its result against a CPU reference and exits 1 when it is wrong, 2 on bad
 * usage, 3 on a CUDA error.
 */
#ifndef KGATE_BENCH_COMMON_CUH
#define KGATE_BENCH_COMMON_CUH

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(call)                                                             \
	do {                                                                 \
		cudaError_t e_ = (call);                                     \
		if (e_ != cudaSuccess) {                                     \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, \
				#call, cudaGetErrorString(e_));              \
			exit(3);                                             \
		}                                                            \
	} while (0)

struct bench_args {
	long n;             /* problem size (meaning per program) */
	const char *variant;
	int block;          /* threads per block */
	int iters;          /* measured launches */
	int warmup;         /* unmeasured launches first */
	double extra;       /* --extra-work: 0.03 does 3% more work */
};

static inline void bench_usage(const char *prog, const char *variants, FILE *fp)
{
	fprintf(fp,
		"usage: %s [--n N] [--variant %s] [--block B] [--iters I]\n"
		"       [--warmup W] [--extra-work F]\n"
		"  --extra-work F  do the fraction F more work (0.03 = 3%%), to\n"
		"                  inject a regression on purpose\n",
		prog, variants);
}

static inline long bench_long(const char *prog, const char *opt, const char *s, long lo)
{
	char *end;
	long v = strtol(s, &end, 0);
	if (*s == '\0' || *end != '\0' || v < lo) {
		fprintf(stderr, "%s: %s wants an integer >= %ld, not '%s'\n", prog, opt, lo, s);
		exit(2);
	}
	return v;
}

/* variants: "a|b|c"; the first is the default. */
static inline void bench_parse(int argc, char **argv, const char *variants,
			struct bench_args *a)
{
	const char *prog = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			bench_usage(prog, variants, stdout);
			exit(0);
		}
		if (i + 1 >= argc) {
			bench_usage(prog, variants, stderr);
			exit(2);
		}
		const char *v = argv[++i];
		if (!strcmp(o, "--n"))
			a->n = bench_long(prog, o, v, 1);
		else if (!strcmp(o, "--block"))
			a->block = (int)bench_long(prog, o, v, 32);
		else if (!strcmp(o, "--iters"))
			a->iters = (int)bench_long(prog, o, v, 1);
		else if (!strcmp(o, "--warmup"))
			a->warmup = (int)bench_long(prog, o, v, 0);
		else if (!strcmp(o, "--variant"))
			a->variant = v;
		else if (!strcmp(o, "--extra-work")) {
			char *end;
			a->extra = strtod(v, &end);
			if (*v == '\0' || *end != '\0' || !(a->extra >= 0.0) || a->extra > 10.0) {
				fprintf(stderr, "%s: --extra-work wants a fraction in [0, 10], not '%s'\n", prog, v);
				exit(2);
			}
		} else {
			fprintf(stderr, "%s: unknown option '%s'\n", prog, o);
			bench_usage(prog, variants, stderr);
			exit(2);
		}
	}
	if (a->block > 1024 || (a->block & 31)) {
		fprintf(stderr, "%s: --block must be a multiple of 32, at most 1024\n", prog);
		exit(2);
	}
	/* The variant must be one of the list. */
	size_t vl = strlen(a->variant);
	const char *p = variants;
	while (*p) {
		const char *bar = strchr(p, '|');
		size_t l = bar ? (size_t)(bar - p) : strlen(p);
		if (l == vl && !strncmp(p, a->variant, l))
			return;
		p += l + (bar ? 1 : 0);
	}
	fprintf(stderr, "%s: --variant must be one of %s, not '%s'\n", prog, variants, a->variant);
	exit(2);
}

/* n scaled by 1 + extra, rounded up. */
static inline long bench_scaled(long n, double extra)
{
	return (long)ceil((double)n * (1.0 + extra));
}

/* Event timing of the measured loop: one pair of events per launch. */
struct bench_timer {
	cudaEvent_t *ev;
	int n;
};

static inline void timer_init(struct bench_timer *t, int n)
{
	t->n = n;
	t->ev = (cudaEvent_t *)calloc((size_t)(2 * n), sizeof(cudaEvent_t));
	for (int i = 0; i < 2 * n; i++)
		CK(cudaEventCreate(&t->ev[i]));
}

/* Print min/median/mean of the launches and the CV (stddev/mean). */
static inline void timer_report(struct bench_timer *t, const char *name, double work,
			 const char *unit)
{
	CK(cudaDeviceSynchronize());
	float *ms = (float *)malloc(sizeof(float) * (size_t)t->n);
	double sum = 0, sq = 0;
	for (int i = 0; i < t->n; i++) {
		CK(cudaEventElapsedTime(&ms[i], t->ev[2 * i], t->ev[2 * i + 1]));
		sum += ms[i];
	}
	double mean = sum / t->n;
	for (int i = 0; i < t->n; i++)
		sq += (ms[i] - mean) * (ms[i] - mean);
	double sd = t->n > 1 ? sqrt(sq / (t->n - 1)) : 0.0;
	/* median by insertion sort: n is small */
	for (int i = 1; i < t->n; i++)
		for (int j = i; j > 0 && ms[j - 1] > ms[j]; j--) {
			float x = ms[j];
			ms[j] = ms[j - 1];
			ms[j - 1] = x;
		}
	double med = t->n % 2 ? ms[t->n / 2] : 0.5 * (ms[t->n / 2 - 1] + ms[t->n / 2]);
	printf("%s: launches=%d min_ms=%.4f median_ms=%.4f mean_ms=%.4f cv=%.4f",
	       name, t->n, ms[0], med, mean, mean > 0 ? sd / mean : 0.0);
	if (work > 0 && unit)
		printf(" %s=%.1f", unit, work / (med * 1e-3) / 1e9);
	printf("\n");
	for (int i = 0; i < 2 * t->n; i++)
		CK(cudaEventDestroy(t->ev[i]));
	free(t->ev);
	free(ms);
}

static inline void bench_ok(const char *name)
{
	printf("%s: result ok\n", name);
}

static inline void bench_wrong(const char *name, const char *what)
{
	fprintf(stderr, "%s: WRONG RESULT: %s\n", name, what);
	exit(1);
}

#endif
