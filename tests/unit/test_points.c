/*
 * test_points.c: a run's points (kgate/points.h): the reduction against a
 * plain definition, the blob back as it went in, damaged blobs refused
 * whole, the accumulator's bound.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/points.h"
#include "kgate/util.h"

/* quantile q of n values by linear interpolation between order statistics,
 * found by counting (no sort) */
static double kth(const double *v, size_t n, size_t k)
{
	for (size_t i = 0; i < n; i++) {
		size_t below = 0, equal = 0;
		for (size_t j = 0; j < n; j++) {
			below += v[j] < v[i];
			equal += v[j] == v[i];
		}
		if (below <= k && k < below + equal)
			return v[i];
	}
	return NAN;
}

static double plain_quant(const double *v, size_t n, double q)
{
	double h = q * (double)(n - 1);
	size_t i = (size_t)h;
	if (i + 1 >= n)
		return kth(v, n, n - 1);
	return kth(v, n, i) + (h - (double)i) * (kth(v, n, i + 1) - kth(v, n, i));
}

static void test_reduction(void **state)
{
	(void)state;
	unsigned seed = 7;
	/* sorted when few, selected when many: both against counting; with
	 * ties, with many ties (5 values), sorted and reversed input */
	static const size_t big[] = { 100, 257, 1000, 1001 };
	for (size_t c = 0; c < 40 + 4 * 4; c++) {
		size_t n = c < 40 ? c + 1 : big[(c - 40) % 4];
		unsigned mod = c < 40 || (c - 40) / 4 == 0 ? 1000 : 5;
		double *v = xmalloc(n * sizeof *v), *w = xmalloc(n * sizeof *w);
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			v[i] = w[i] = (double)(seed % mod) / 7.0;   /* with ties */
			if (c >= 40 && (c - 40) / 4 == 2)
				v[i] = w[i] = (double)i;             /* sorted */
			if (c >= 40 && (c - 40) / 4 == 3)
				v[i] = w[i] = (double)(n - i);       /* reversed */
		}
		struct kg_point p;
		points_of(w, n, &p);
		assert_int_equal(p.n, n);
		assert_true(p.med == (float)plain_quant(v, n, 0.5));
		assert_true(p.q1 == (float)plain_quant(v, n, 0.25));
		assert_true(p.q3 == (float)plain_quant(v, n, 0.75));
		assert_true(p.lo == (float)kth(v, n, 0));
		assert_true(p.hi == (float)kth(v, n, n - 1));
		free(v);
		free(w);
	}
}

struct got {
	struct kg_point p[64];
	size_t n;
};

static int collect(void *arg, size_t i, const struct kg_point *p)
{
	struct got *g = arg;
	assert_int_equal(i, g->n);
	g->p[g->n++] = *p;
	return 0;
}

/* The series of a run, added interleaved and out of order, come back one
 * point each, sorted by ids, with the values points_of gives. */
static void test_round_trip(void **state)
{
	(void)state;
	struct points_acc a;
	struct kg_buf b = KG_BUF_INIT;
	memset(&a, 0, sizeof a);
	/* 30 series, ids up to 2^40 and down again (deltas of both signs) */
	for (int r = 0; r < 5; r++)
		for (int s = 29; s >= 0; s--)
			points_add(&a, s % 3 + 1, (int64_t)1 << (s % 41), 1000 - s, s % 4 + 1,
				   s == 7 ? 2.5 : 100.0 * s + r * 0.5 + (r == 3 ? 1e9 : 0));
	assert_int_equal(points_encode(&a, &b), 0);
	struct got g = { .n = 0 };
	assert_int_equal(points_decode(b.s, b.len, collect, &g), 0);
	assert_int_equal(g.n, 30);
	for (size_t i = 1; i < g.n; i++) {
		const struct kg_point *x = &g.p[i - 1], *y = &g.p[i];
		int64_t kx[4] = { x->benchmark, x->nvtx, x->kernel, x->metric };
		int64_t ky[4] = { y->benchmark, y->nvtx, y->kernel, y->metric };
		int c = 0;
		for (int k = 0; k < 4 && !c; k++)
			c = (kx[k] > ky[k]) - (kx[k] < ky[k]);
		assert_true(c < 0);
	}
	for (size_t i = 0; i < g.n; i++) {
		int s = (int)(1000 - g.p[i].kernel);
		assert_int_equal(g.p[i].benchmark, s % 3 + 1);
		assert_int_equal(g.p[i].nvtx, (int64_t)1 << (s % 41));
		assert_int_equal(g.p[i].metric, s % 4 + 1);
		double v[5];
		struct kg_point want;
		for (int r = 0; r < 5; r++)
			v[r] = s == 7 ? 2.5 : 100.0 * s + r * 0.5 + (r == 3 ? 1e9 : 0);
		points_of(v, 5, &want);
		assert_int_equal(g.p[i].n, 5);
		assert_true(g.p[i].med == want.med && g.p[i].q1 == want.q1 && g.p[i].q3 == want.q3 &&
			    g.p[i].lo == want.lo && g.p[i].hi == want.hi);
	}
	/* encoding emptied it: a run without samples has no points */
	assert_int_equal(points_encode(&a, &b), -1);
	points_add(&a, 1, 1, 1, 1, 3.0);
	assert_int_equal(points_encode(&a, &b), 0);
	g.n = 0;
	assert_int_equal(points_decode(b.s, b.len, collect, &g), 0);
	assert_int_equal(g.n, 1);
	assert_true(g.p[0].n == 1 && g.p[0].med == 3.0f && g.p[0].lo == 3.0f && g.p[0].hi == 3.0f);
	buf_free(&b);
	points_reset(&a);
}

/* Every truncation and every single-byte change of a blob is either
 * refused before any point is passed, or decodes whole. */
static void test_damaged(void **state)
{
	(void)state;
	struct points_acc a;
	struct kg_buf b = KG_BUF_INIT;
	memset(&a, 0, sizeof a);
	for (int s = 0; s < 6; s++)
		for (int r = 0; r <= s % 2; r++)
			points_add(&a, 1, 1, s + 1, 1, s + r);
	assert_int_equal(points_encode(&a, &b), 0);
	struct got g;
	for (size_t len = 0; len < b.len; len++) {
		g.n = 0;
		assert_int_equal(points_decode(b.s, len, collect, &g), -1);
		assert_int_equal(g.n, 0);
	}
	char *d = xmalloc(b.len + 1);
	for (size_t i = 0; i < b.len; i++)
		for (int bit = 0; bit < 8; bit++) {
			memcpy(d, b.s, b.len);
			d[i] = (char)(d[i] ^ (1 << bit));
			g.n = 0;
			int rc = points_decode(d, b.len, collect, &g);
			assert_true(rc == -1 ? g.n == 0 : g.n <= 6);
		}
	/* trailing bytes */
	memcpy(d, b.s, b.len);
	d[b.len] = 0;
	g.n = 0;
	assert_int_equal(points_decode(d, b.len + 1, collect, &g), -1);
	assert_int_equal(g.n, 0);
	assert_int_equal(points_decode("\002\000", 2, collect, &g), -1);   /* another format */
	free(d);
	buf_free(&b);
	points_reset(&a);
}

/* Past its bound the accumulator holds nothing and the run has no points. */
static void test_bound(void **state)
{
	(void)state;
	struct points_acc a;
	struct kg_buf b = KG_BUF_INIT;
	memset(&a, 0, sizeof a);
	for (size_t i = 0; i <= POINTS_MAX_VALUES; i++)
		points_add(&a, 1, 1, 1 + (int64_t)(i % 3), 1, (double)i);
	assert_true(a.over);
	assert_int_equal(a.ns, 0);
	assert_null(a.s);
	assert_int_equal(points_encode(&a, &b), -1);
	points_reset(&a);
	assert_false(a.over);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reduction),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
