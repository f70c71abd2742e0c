/*
 * points.h: a run's points.  Each series of a run (benchmark, NVTX path,
 * kernel, metric, by id) reduced to the point a trend chart draws: how many
 * samples, their median, quartiles and range.  The store accumulates them
 * as a run's samples are added and writes them with the run as one blob
 * (schema 7), so that "kgate report" reads a point per series and run
 * instead of every sample.
 */
#ifndef KGATE_POINTS_H
#define KGATE_POINTS_H

#include <stddef.h>
#include <stdint.h>

struct kg_buf;

struct kg_point {
	int64_t benchmark, nvtx, kernel, metric;
	uint32_t n;                     /* samples */
	float med, q1, q3, lo, hi;      /* quartiles by linear interpolation */
};

/* v[0 .. n) (n >= 1) sorted in place and reduced into p's n, med, q1, q3,
 * lo and hi: the one reduction, used both when a run is stored and by the
 * report on runs stored without points. */
void points_of(double *v, size_t n, struct kg_point *p);

/* A run's samples so far, by series.  Zero-initialised is empty.  Memory
 * is bounded: past POINTS_MAX_VALUES values the accumulator gives up (the
 * run is then stored without points, and read sample by sample). */
#define POINTS_MAX_VALUES ((size_t)16 << 20)
struct points_acc {
	struct points_series *s;
	size_t ns, cap;         /* cap: hash slots, a power of two (twice ns at most) */
	size_t *slot;
	size_t nvalues;
	size_t last;            /* the series of the last value added */
	int over;               /* gave up: too many values */
};

void points_add(struct points_acc *a, int64_t benchmark, int64_t nvtx, int64_t kernel,
		int64_t metric, double v);
/* The run's points as a blob into out (replacing what it held): 0, or -1
 * when there are none to store (no samples, or the accumulator gave up). */
int points_encode(struct points_acc *a, struct kg_buf *out);
/* Empty again, memory freed. */
void points_reset(struct points_acc *a);

/* Each point of a blob, in order (i counts from 0), to fn, which returns
 * non-zero to stop: 0, or -1 when the blob is not one points_encode
 * wrote (then none is passed). */
int points_decode(const void *data, size_t len,
		  int (*fn)(void *arg, size_t i, const struct kg_point *p), void *arg);

#endif
