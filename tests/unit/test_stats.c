/* test_stats.c: unit tests for stats.c (brute force checks of the MWU test). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include "kgate/stats.h"

/* brute force: P(U >= u_obs) over all C(n+m, m) splits of ranks 1..n+m */
static double brute_upper(size_t n, size_t m, double uobs)
{
	size_t N = n + m, hit = 0, tot = 0;
	for (unsigned mask = 0; mask < (1u << N); mask++) {
		if ((size_t)__builtin_popcount(mask) != m)
			continue;
		double u = 0;
		for (size_t a = 0; a < N; a++)
			for (size_t b = 0; b < N; b++)
				if (!(mask >> a & 1) && (mask >> b & 1) && b > a)
					u += 1;
		tot++;
		if (u >= uobs - 1e-9)
			hit++;
	}
	return (double)hit / (double)tot;
}

static void test_mwu_exact_vs_brute(void **state)
{
	(void)state;
	for (size_t n = 1; n <= 6; n++)
		for (size_t m = 1; m <= 6; m++) {
			/* x gets ranks 1..n shifted by s, y the rest: vary U */
			for (size_t s = 0; s <= m; s++) {
				double x[6], y[6];
				size_t xi = 0, yi = 0;
				for (size_t r = 1; r <= n + m; r++) {
					if (r > s && xi < n)
						x[xi++] = (double)r;
					else
						y[yi++] = (double)r;
				}
				double u = 0;
				for (size_t i = 0; i < n; i++)
					for (size_t j = 0; j < m; j++)
						u += y[j] > x[i];
				assert_float_equal(stats_mwu_greater(x, n, y, m),
				                   brute_upper(n, m, u), 1e-12);
			}
		}
}

static void test_holm(void **state)
{
	(void)state;
	double p[4] = {0.01, 0.04, 0.03, 0.005}, adj[4];
	stats_holm(p, adj, 4);
	assert_float_equal(adj[3], 0.02, 1e-12);
	assert_float_equal(adj[0], 0.03, 1e-12);
	assert_float_equal(adj[2], 0.06, 1e-12);
	assert_float_equal(adj[1], 0.06, 1e-12);
}

static void test_edges(void **state)
{
	(void)state;
	double x[3] = {2, 2, 2};
	assert_true(isnan(stats_median(x, 0)));
	assert_float_equal(stats_median(x, 1), 2, 0);
	assert_float_equal(stats_stddev(x, 3), 0, 0);
	assert_float_equal(stats_mwu_greater(x, 3, x, 3), 1.0, 1e-12);
	assert_float_equal(stats_mwu_greater(x, 0, x, 3), 1.0, 0);
	assert_float_equal(stats_hodges_lehmann(x, 3, x, 3), 0, 0);
	double y[3] = {3, 5, 4};
	assert_float_equal(stats_hodges_lehmann(x, 3, y, 3), 2, 0);
	assert_float_equal(stats_percentile(y, 3, 100), 5, 0);
}

static void test_hl_ci(void **state)
{
	(void)state;
	/* n = m = 5: P(U <= 2) = 0.0159, P(U <= 3) = 0.0278 -> k = 3 at 95% */
	double x[5] = {0, 0, 0, 0, 0}, y[5] = {1, 2, 3, 4, 5};
	double xs[5] = {0, 10, 20, 30, 40}, lo, hi;
	assert_int_equal(stats_hl_ci(xs, 5, y, 5, 0.95, &lo, &hi), 0);
	/* differences y - xs sorted: 3rd smallest and 3rd largest */
	assert_float_equal(lo, -37, 1e-12);
	assert_float_equal(hi, 3, 1e-12);
	assert_int_equal(stats_hl_ci(x, 1, y, 1, 0.95, &lo, &hi), -1);
	assert_true(isnan(lo));
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_mwu_exact_vs_brute),
		cmocka_unit_test(test_holm),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_hl_ci),
	};
	return cmocka_run_group_tests(t, NULL, NULL);
}
