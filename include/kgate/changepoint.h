/*
 * changepoint.h: change points in a series of per-commit values.
 *
 * Binary segmentation with a rank test: in each segment the split is the
 * point that maximises Pettitt's rank statistic |U_t| (a Mann-Whitney
 * statistic between the values before and after t, so it is
 * distribution-free and robust to outliers), and the split is kept when a
 * permutation test of that maximum gives p <= alpha and the medians on the
 * two sides differ by at least min_shift (relative).  Each kept split
 * divides its segment and both halves are searched again.  The permutation
 * stream is seeded, so a report is reproducible.  Permutations stop early
 * (Besag and Clifford's sequential rule) once the p-value is clearly large.
 * In segments of at least asymptotic_min values, Pettitt's asymptotic
 * p-value decides alone where it is far from alpha (below alpha / 1000: p is
 * given as the permutation test's floor, 1 / (permutations + 1); above 20
 * alpha: no split), so that long series cost one ranking per segment.
 */
#ifndef KGATE_CHANGEPOINT_H
#define KGATE_CHANGEPOINT_H

#include <stddef.h>
#include <stdint.h>

struct cp_opts {
	double alpha;        /* default 0.005 */
	int permutations;    /* default 999 */
	size_t min_seg;      /* shortest segment, default 3 */
	double min_shift;    /* smallest relative change of the median, default 0.01 */
	uint64_t seed;       /* default 1 */
	size_t asymptotic_min; /* default 50; 0: always permute */
};

struct cp_result {
	size_t at;           /* index of the first value after the change */
	double p;            /* permutation p-value */
	double before, after;/* medians of the segment's two sides */
	double shift;        /* after / before - 1; NAN when before is 0 */
};

void changepoint_defaults(struct cp_opts *o);

/*
 * Change points of x[0..n), in increasing order of at; at most max_out are
 * written to out.  Returns how many were found (may exceed max_out).
 * NaN values are not allowed.
 */
size_t changepoint_find(const double *x, size_t n, const struct cp_opts *o,
			struct cp_result *out, size_t max_out);

/* Median of x[0..n) (x is not changed); NAN when n is 0. */
double changepoint_median(const double *x, size_t n);

#endif
