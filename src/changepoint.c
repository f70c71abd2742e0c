/*
 * changepoint.c: binary segmentation with Pettitt's rank statistic and a
 * permutation test (see kgate/changepoint.h).  Owns nothing but the
 * arithmetic; the report decides what series to search.
 */
#include "kgate/changepoint.h"
#include "kgate/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void changepoint_defaults(struct cp_opts *o)
{
	o->alpha = 0.005;
	o->permutations = 999;
	o->min_seg = 3;
	o->min_shift = 0.01;
	o->seed = 1;
	o->asymptotic_min = 50;
}

/* Pettitt's asymptotic p-value of the maximum K of |U_t| over m values:
 * 2 exp(-6 K^2 / (m^3 + m^2)) (Pettitt 1979), the first term of the
 * Brownian bridge's supremum, accurate to well under a factor of 2 from
 * about 50 values on for p below 0.5. */
static double pettitt_p(double k, size_t m)
{
	double mm = (double)m;
	double p = 2 * exp(-6 * k * k / (mm * mm * mm + mm * mm));
	return p > 1 ? 1 : p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double changepoint_median(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	double *t = xmalloc(n * sizeof *t);
	memcpy(t, x, n * sizeof *t);
	qsort(t, n, sizeof *t, cmp_double);
	double m = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	free(t);
	return m;
}

struct idx { double v; size_t i; };

static int cmp_idx(const void *a, const void *b)
{
	const struct idx *x = a, *y = b;
	return (x->v > y->v) - (x->v < y->v);
}

/* score[i] = 2 * midrank(x[i]) - m - 1: sum of sgn(x[i] - x[j]) over j */
static void rank_scores(const double *x, size_t m, double *score)
{
	struct idx *t = xmalloc(m * sizeof *t);
	for (size_t i = 0; i < m; i++)
		t[i] = (struct idx){ x[i], i };
	qsort(t, m, sizeof *t, cmp_idx);
	for (size_t i = 0; i < m;) {
		size_t j = i;
		while (j + 1 < m && t[j + 1].v == t[i].v)
			j++;
		double midrank = ((double)i + (double)j) / 2 + 1;
		for (size_t k = i; k <= j; k++)
			score[t[k].i] = 2 * midrank - (double)m - 1;
		i = j + 1;
	}
	free(t);
}

/* max over t in [lo, hi] of |sum score[0..t]|, and where */
static double max_cusum(const double *score, size_t lo, size_t hi, size_t *where)
{
	double u = 0, best = -1;
	for (size_t t = 0; t <= hi; t++) {
		u += score[t];
		if (t >= lo && fabs(u) > best + 1e-9) {
			best = fabs(u);
			if (where)
				*where = t;
		}
	}
	return best;
}

static uint64_t next_rand(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

struct seg { size_t a, b; };

static int cmp_result(const void *a, const void *b)
{
	const struct cp_result *x = a, *y = b;
	return (x->at > y->at) - (x->at < y->at);
}

size_t changepoint_find(const double *x, size_t n, const struct cp_opts *o,
			struct cp_result *out, size_t max_out)
{
	struct cp_opts def;
	if (!o) {
		changepoint_defaults(&def);
		o = &def;
	}
	size_t min_seg = o->min_seg ? o->min_seg : 1;
	if (n < 2 * min_seg)
		return 0;
	uint64_t rng = o->seed ? o->seed : 1;
	double *score = xmalloc(n * sizeof *score);
	double *perm = xmalloc(n * sizeof *perm);
	struct seg *stack = xmalloc(n * sizeof *stack);
	struct cp_result *found = xmalloc(n * sizeof *found);
	size_t nstack = 0, nfound = 0;
	stack[nstack++] = (struct seg){ 0, n };
	const size_t h = 10;    /* sequential stopping: exceedances that end the test */
	while (nstack) {
		struct seg s = stack[--nstack];
		size_t m = s.b - s.a;
		if (m < 2 * min_seg)
			continue;
		rank_scores(x + s.a, m, score);
		/* split after index t (0-based in the segment): t in [min_seg-1, m-min_seg-1] */
		size_t lo = min_seg - 1, hi = m - min_seg - 1, t = lo;
		double k = max_cusum(score, lo, hi, &t);
		if (k <= 1e-9)
			continue;        /* all values tie: nothing to split */
		/* Long segments whose asymptotic p is far from alpha either way
		 * skip the permutations: below alpha / 1000 none of them would
		 * exceed k (p as the test gives it then, 1 / (permutations + 1)),
		 * above 20 alpha the split is not significant. */
		double pa = o->asymptotic_min && m >= o->asymptotic_min ? pettitt_p(k, m) : -1;
		if (pa > 20 * o->alpha)
			continue;
		int perms = pa >= 0 && pa < o->alpha / 1000 ? 0 : o->permutations;
		memcpy(perm, score, m * sizeof *perm);
		size_t exceed = 0, done = 0;
		for (int r = 0; r < perms; r++) {
			for (size_t i = m - 1; i > 0; i--) {
				size_t j = (size_t)(next_rand(&rng) % (i + 1));
				double tmp = perm[i];
				perm[i] = perm[j];
				perm[j] = tmp;
			}
			done++;
			if (max_cusum(perm, lo, hi, NULL) >= k - 1e-9 && ++exceed >= h)
				break;
		}
		double p = exceed >= h ? (double)exceed / (double)done
			: (double)(exceed + 1) / (double)(o->permutations + 1);
		if (p > o->alpha)
			continue;
		size_t at = s.a + t + 1;
		double before = changepoint_median(x + s.a, at - s.a);
		double after = changepoint_median(x + at, s.b - at);
		double shift = before != 0 ? after / before - 1 : NAN;
		double mag = before != 0 ? fabs(shift) : (after != 0 ? INFINITY : 0);
		if (mag < o->min_shift)
			continue;
		found[nfound++] = (struct cp_result){ at, p, before, after, shift };
		stack[nstack++] = (struct seg){ s.a, at };
		stack[nstack++] = (struct seg){ at, s.b };
	}
	qsort(found, nfound, sizeof *found, cmp_result);
	/* medians and shifts relative to the neighbouring change points */
	for (size_t i = 0; i < nfound; i++) {
		size_t a = i ? found[i - 1].at : 0;
		size_t b = i + 1 < nfound ? found[i + 1].at : n;
		found[i].before = changepoint_median(x + a, found[i].at - a);
		found[i].after = changepoint_median(x + found[i].at, b - found[i].at);
		found[i].shift = found[i].before != 0 ? found[i].after / found[i].before - 1 : NAN;
	}
	for (size_t i = 0; i < nfound && i < max_out; i++)
		out[i] = found[i];
	free(score);
	free(perm);
	free(stack);
	free(found);
	return nfound;
}
