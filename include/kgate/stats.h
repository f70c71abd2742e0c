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

/* Holm step-down: adj[i] = adjusted p of p[i], monotone, capped at 1. */
void stats_holm(const double *p, double *adj, size_t n);

/* One-sided P(U >= u_observed) for H1: y stochastically larger than x.
 * No ties and n,m <= 200: exact null distribution by dynamic programming.
 * With ties or larger samples: normal approximation with tie and continuity
 * correction. Returns 1.0 when either side is empty. */
double stats_mwu_greater(const double *x, size_t n, const double *y, size_t m);

/* Hodges-Lehmann shift: median of all y[j] - x[i]. NAN when either is empty. */
double stats_hodges_lehmann(const double *x, size_t n, const double *y, size_t m);
/* Distribution-free (Moses) confidence interval for the shift at level conf
 * (two-sided), from the exact U null distribution for n,m <= 200, normal
 * approximation beyond. Returns -1 (lo = hi = NAN) when too few samples. */
int stats_hl_ci(const double *x, size_t n, const double *y, size_t m,
                double conf, double *lo, double *hi);
#endif
