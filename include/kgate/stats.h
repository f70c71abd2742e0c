/*
 * stats.h: statistics for the gate (descriptive statistics, Holm correction,
 * one-sided Mann-Whitney U test, Hodges-Lehmann shift).
 */
#ifndef KGATE_STATS_H
#define KGATE_STATS_H
#include <stddef.h>

double stats_median(const double *x, size_t n);  /* NAN when n == 0 */
double stats_mean(const double *x, size_t n);
double stats_stddev(const double *x, size_t n);  /* sample (n-1); 0 when n < 2 */
double stats_percentile(const double *x, size_t n, double p); /* p in [0,100], linear */
/* Sorts x ascending in place (no NaN). */
void stats_sort(double *x, size_t n);
/* stats_median() of an ascending array, without a copy. */
double stats_median_sorted(const double *s, size_t n);

/* Holm step-down: adj[i] = adjusted p of p[i], monotone, capped at 1. */
void stats_holm(const double *p, double *adj, size_t n);

/* One-sided Mann-Whitney U test (H1: y stochastically larger than x) and
 * the Hodges-Lehmann shift of y against x with its interval, from one null
 * distribution: the permutation distribution of U given the pooled sample's
 * ties, exact up to about 12 a side (dynamic programme over the tie groups)
 * and with few distinct values (enumeration), Skovgaard's double saddlepoint
 * approximation otherwise; cached per (n, m, tie
 * structure) for the life of the process. */
struct stats_shift {
	double shift;   /* Hodges-Lehmann: median of all y[j] - x[i] */
	double lo, hi;  /* interval at level conf (two-sided); NAN if too few samples */
	double p;       /* P(U >= u_observed) under the null */
	int ties;       /* the pooled sample has ties */
	int exact;      /* p and the interval come from the exact distribution */
};
/* The interval's ends are the order statistics of the differences that the
 * test's critical values at (1 - conf) / 2 pick, so they agree: lo > 0 only
 * when p <= (1 - conf) / 2, lo < 0 only when p is above it.  Returns -1
 * (lo = hi = NAN, shift and p still set) when too few samples for conf. */
int stats_shift_test(const double *x, size_t n, const double *y, size_t m, double conf,
		     struct stats_shift *out);

/* The parts of stats_shift_test() alone.  stats_mwu_greater returns 1.0
 * and stats_hodges_lehmann NAN when either side is empty. */
double stats_mwu_greater(const double *x, size_t n, const double *y, size_t m);
double stats_hodges_lehmann(const double *x, size_t n, const double *y, size_t m);
int stats_hl_ci(const double *x, size_t n, const double *y, size_t m,
                double conf, double *lo, double *hi);

/* For the tests: P(U >= u_observed) by one method whatever the size
 * (0: exact dynamic programme over the tie groups, 1: saddlepoint,
 * 2: exact enumeration of the counts per tie group), uncached. */
double stats_mwu_upper_method(const double *x, size_t n, const double *y, size_t m, int method);
/* Frees the cached null distributions. */
void stats_cache_clear(void);
#endif
