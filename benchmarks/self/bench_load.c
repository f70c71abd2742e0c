/*
 * bench_load.c: time store_load_samples() (what "kgate check" reads) for a
 * few runs of a large database.  kgate's own benchmark, linked against
 * libkgate.a.
 *   bench_load DB RUN_ID...
 * Prints: runs series values seconds (best of 5).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kgate/store.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct kg_store *st;
	int64_t ids[64];
	size_t n = 0, values = 0, series = 0;
	double best = 1e9;

	if (argc < 3)
		return 2;
	for (int i = 2; i < argc && n < 64; i++)
		ids[n++] = strtoll(argv[i], NULL, 10);
	if (store_open(argv[1], KG_STORE_READONLY, &st) != KG_EXIT_PASS)
		return 3;
	for (int rep = 0; rep < 5; rep++) {
		struct kg_sampleset set;
		double t0 = now();
		if (store_load_samples(st, ids, n, &set) != KG_EXIT_PASS)
			return 3;
		double t = now() - t0;
		if (t < best)
			best = t;
		series = set.n;
		values = 0;
		for (size_t i = 0; i < set.n; i++)
			values += set.s[i].n;
		store_sampleset_free(&set);
	}
	store_close(st);
	printf("%zu %zu %zu %.6f\n", n, series, values, best);
	return 0;
}
