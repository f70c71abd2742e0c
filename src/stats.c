/*
 * stats.c: statistics for the gate: descriptive statistics, Holm step-down
 * correction, one-sided Mann-Whitney U test (exact DP without ties, normal
 * approximation with tie and continuity correction otherwise) and the
 * Hodges-Lehmann shift estimate.
 */
#include "kgate/stats.h"
#include "kgate/util.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double *sorted_copy(const double *x, size_t n)
{
	double *s = xmalloc((n ? n : 1) * sizeof *s);
	memcpy(s, x, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_double);
	return s;
}

double stats_percentile(const double *x, size_t n, double p)
{
	if (n == 0)
		return NAN;
	double *s = sorted_copy(x, n);
	double pos = p / 100.0 * (double)(n - 1);
	size_t lo = (size_t)floor(pos);
	size_t hi = lo + 1 < n ? lo + 1 : lo;
	double r = s[lo] + (pos - (double)lo) * (s[hi] - s[lo]);
	free(s);
	return r;
}

double stats_median(const double *x, size_t n)
{
	return stats_percentile(x, n, 50.0);
}

double stats_mean(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

double stats_stddev(const double *x, size_t n)
{
	if (n < 2)
		return 0.0;
	double m = stats_mean(x, n), s = 0;
	for (size_t i = 0; i < n; i++)
		s += (x[i] - m) * (x[i] - m);
	return sqrt(s / (double)(n - 1));
}

void stats_holm(const double *p, double *adj, size_t n)
{
	size_t *idx = xmalloc((n ? n : 1) * sizeof *idx);
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	for (size_t i = 1; i < n; i++) /* insertion sort by p ascending, stable */
		for (size_t j = i; j > 0 && p[idx[j - 1]] > p[idx[j]]; j--) {
			size_t t = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = t;
		}
	double run = 0;
	for (size_t k = 0; k < n; k++) {
		double a = (double)(n - k) * p[idx[k]];
		if (a > 1)
			a = 1;
		if (a < run)
			a = run;
		run = a;
		adj[idx[k]] = a;
	}
	free(idx);
}

/* U = #{(i,j): y[j] > x[i]} + 0.5 #{ties}; returns whether any tie occurred. */
static double mwu_u(const double *x, size_t n, const double *y, size_t m, int *ties)
{
	double u = 0;
	*ties = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < m; j++) {
			if (y[j] > x[i])
				u += 1;
			else if (y[j] == x[i]) {
				u += 0.5;
				*ties = 1;
			}
		}
	for (size_t i = 0; i + 1 < n && !*ties; i++)
		for (size_t k = i + 1; k < n; k++)
			if (x[i] == x[k]) *ties = 1;
	for (size_t j = 0; j + 1 < m && !*ties; j++)
		for (size_t k = j + 1; k < m; k++)
			if (y[j] == y[k]) *ties = 1;
	return u;
}

/* Exact null distribution of U (no ties): pmf[k], k = 0..n*m, by DP. */
static double *mwu_exact_pmf(size_t n, size_t m)
{
	size_t maxu = n * m;
	/* f[j][k]: number of ways with j y's among the processed elements, U = k */
	double *f = xcalloc((m + 1) * (maxu + 1), sizeof *f);
	f[0] = 1;
	for (size_t t = 1; t <= n + m; t++) { /* t-th element in ascending order */
		for (size_t j = (t < m ? t : m); ; j--) {
			size_t xs = t - j; /* number of x's so far */
			if (xs <= n && j > 0) {
				/* element t is a y, beats all xs x's before it */
				double *dst = &f[j * (maxu + 1)];
				const double *src = &f[(j - 1) * (maxu + 1)];
				for (size_t k = maxu + 1; k-- > xs;)
					dst[k] += src[k - xs];
			}
			if (j == 0)
				break;
		}
	}
	double tot = 0;
	double *pmf = xmalloc((maxu + 1) * sizeof *pmf);
	for (size_t k = 0; k <= maxu; k++)
		tot += f[m * (maxu + 1) + k];
	for (size_t k = 0; k <= maxu; k++)
		pmf[k] = f[m * (maxu + 1) + k] / tot;
	free(f);
	return pmf;
}

static double mwu_exact_upper(size_t n, size_t m, long u)
{
	double *pmf = mwu_exact_pmf(n, m), up = 0;
	for (size_t k = 0; k <= n * m; k++)
		if ((long)k >= u)
			up += pmf[k];
	free(pmf);
	return up;
}

/* inverse of erfc by bisection (only for large-sample CI) */
static double erfcinv_approx(double p)
{
	double a = 0, b = 10;
	for (int i = 0; i < 200; i++) {
		double c = (a + b) / 2;
		if (erfc(c) > p) a = c; else b = c;
	}
	return (a + b) / 2;
}

double stats_mwu_greater(const double *x, size_t n, const double *y, size_t m)
{
	if (n == 0 || m == 0)
		return 1.0;
	int ties;
	double u = mwu_u(x, n, y, m, &ties);
	if (!ties && n <= 200 && m <= 200)
		return mwu_exact_upper(n, m, (long)llround(u));
	/* normal approximation with tie and continuity correction */
	size_t N = n + m;
	double *all = xmalloc(N * sizeof *all);
	memcpy(all, x, n * sizeof *all);
	memcpy(all + n, y, m * sizeof *all);
	qsort(all, N, sizeof *all, cmp_double);
	double tsum = 0;
	for (size_t i = 0; i < N;) {
		size_t j = i;
		while (j < N && all[j] == all[i])
			j++;
		double t = (double)(j - i);
		tsum += t * t * t - t;
		i = j;
	}
	free(all);
	double dn = (double)n, dm = (double)m, dN = (double)N;
	double var = dn * dm / 12.0 * ((dN + 1) - tsum / (dN * (dN - 1)));
	if (var <= 0)
		return 1.0;
	double z = (u - dn * dm / 2.0 - 0.5) / sqrt(var);
	return 0.5 * erfc(z / sqrt(2.0));
}

double stats_hodges_lehmann(const double *x, size_t n, const double *y, size_t m)
{
	if (n == 0 || m == 0)
		return NAN;
	double *d = xmalloc(n * m * sizeof *d);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < m; j++)
			d[i * m + j] = y[j] - x[i];
	double r = stats_median(d, n * m);
	free(d);
	return r;
}

int stats_hl_ci(const double *x, size_t n, const double *y, size_t m,
                double conf, double *lo, double *hi)
{
	*lo = *hi = NAN;
	if (n == 0 || m == 0)
		return -1;
	size_t nm = n * m;
	double a2 = (1.0 - conf) / 2.0;
	size_t k = 0; /* largest k with P(U <= k-1) <= a2 */
	if (n <= 200 && m <= 200) {
		double *pmf = mwu_exact_pmf(n, m), cdf = 0;
		for (size_t c = 0; c < nm; c++) {
			cdf += pmf[c];
			if (cdf > a2 + 1e-12)
				break;
			k = c + 1;
		}
		free(pmf);
	} else {
		double z = sqrt(2.0) * erfcinv_approx(2.0 * a2);
		double kk = (double)nm / 2.0 - z * sqrt((double)nm * (double)(n + m + 1) / 12.0);
		k = kk > 0 ? (size_t)floor(kk) : 0;
	}
	if (k == 0)
		return -1; /* too few samples for this confidence */
	double *d = xmalloc(nm * sizeof *d);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < m; j++)
			d[i * m + j] = y[j] - x[i];
	qsort(d, nm, sizeof *d, cmp_double);
	*lo = d[k - 1];
	*hi = d[nm - k];
	free(d);
	return 0;
}
