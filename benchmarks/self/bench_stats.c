/*
 * bench_stats.c: what one noisy comparison's statistics cost (the
 * Mann-Whitney test, the Hodges-Lehmann shift and its interval, as
 * gate.c calls them through stats_shift_test()), per series, at n samples a
 * side.  kgate's own benchmark, linked against libkgate.a.
 *   bench_stats N SERIES ROUNDS
 * Synthetic samples: durations of a 5 us kernel with 1% noise, the head 3%
 * slower, once as doubles (no ties) and once rounded to a 32 ns tick (ties,
 * as CUPTI timestamps have).  Each round times, in turn, the anchor (sorting
 * the two samples of every series, which any rank statistic needs) and
 * stats_shift_test() on the same series, once with the cache of null
 * distributions cleared before every series (cold: each series pays for its
 * distribution) and once kept (warm: a check's series of one shape share it).
 * Times are this process's CPU time (the machine running it may be shared).
 * Prints per case: min and median microseconds per series, and the ratio
 * to the anchor of the same round (min and median).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kgate/stats.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* this process's CPU time: the machine is shared */
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static unsigned long long rs = 88172645463325252ull;
static double unif(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return ((double)(rs >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
	return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

static int cmp_med(const void *a, const void *b)
{
	return cmpd(a, b);
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	size_t n = (size_t)atol(argv[1]), S = (size_t)atol(argv[2]);
	int R = atoi(argv[3]);
	double *x = malloc(S * n * sizeof *x), *y = malloc(S * n * sizeof *y);
	double *tmp = malloc(2 * n * sizeof *tmp);
	double *ta = malloc((size_t)R * sizeof *ta), *tc = malloc((size_t)R * sizeof *tc),
	       *tw = malloc((size_t)R * sizeof *tw), *rc = malloc((size_t)R * sizeof *rc),
	       *rw = malloc((size_t)R * sizeof *rw);
	volatile double sink = 0;
	for (int ties = 0; ties < 2; ties++) {
		for (size_t i = 0; i < S * n; i++) {
			x[i] = 5000 * (1 + 0.01 * gauss());
			y[i] = 5150 * (1 + 0.01 * gauss());
			if (ties) {
				x[i] = 32 * floor(x[i] / 32);
				y[i] = 32 * floor(y[i] / 32);
			}
			x[i] = log(x[i]);
			y[i] = log(y[i]);
		}
		for (int r = 0; r < R; r++) {
			double t0 = now();
			for (size_t s = 0; s < S; s++) {
				memcpy(tmp, x + s * n, n * sizeof *tmp);
				memcpy(tmp + n, y + s * n, n * sizeof *tmp);
				qsort(tmp, n, sizeof *tmp, cmpd);
				qsort(tmp + n, n, sizeof *tmp, cmpd);
				sink += tmp[0];
			}
			double t1 = now();
			for (size_t s = 0; s < S; s++) {
				struct stats_shift st;
				stats_cache_clear();
				stats_shift_test(x + s * n, n, y + s * n, n, 0.998, &st);
				sink += st.p;
			}
			double t2 = now();
			for (size_t s = 0; s < S; s++) {
				struct stats_shift st;
				stats_shift_test(x + s * n, n, y + s * n, n, 0.998, &st);
				sink += st.p;
			}
			double t3 = now();
			ta[r] = (t1 - t0) / (double)S;
			tc[r] = (t2 - t1) / (double)S;
			tw[r] = (t3 - t2) / (double)S;
			rc[r] = tc[r] / ta[r];
			rw[r] = tw[r] / ta[r];
		}
		qsort(ta, (size_t)R, sizeof *ta, cmp_med);
		qsort(tc, (size_t)R, sizeof *tc, cmp_med);
		qsort(tw, (size_t)R, sizeof *tw, cmp_med);
		qsort(rc, (size_t)R, sizeof *rc, cmp_med);
		qsort(rw, (size_t)R, sizeof *rw, cmp_med);
		printf("stats: %zu a side, %s: anchor (sort) %.1f/%.1f us; cold %.1f/%.1f us (%.1fx/%.1fx); "
		       "warm %.1f/%.1f us (%.1fx/%.1fx) per series (min/median of %d rounds of %zu)\n",
		       n, ties ? "32 ns tick (ties)" : "no ties", 1e6 * ta[0], 1e6 * ta[R / 2],
		       1e6 * tc[0], 1e6 * tc[R / 2], rc[0], rc[R / 2],
		       1e6 * tw[0], 1e6 * tw[R / 2], rw[0], rw[R / 2], R, S);
	}
	stats_cache_clear();
	free(x);
	free(y);
	free(tmp);
	free(ta);
	free(tc);
	free(tw);
	free(rc);
	free(rw);
	return sink == 12345.678;
}
