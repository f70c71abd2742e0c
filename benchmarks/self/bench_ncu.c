/*
 * bench_ncu.c: time what "kgate ingest --ncu-csv" does with an export (the
 * header reads, then the import into one run of a fresh database).
 * kgate's own benchmark, linked against libkgate.a for the current
 * importer, or against ncu_csv_anchor.c (the importer before its one-pass
 * rewrite) for the anchor; bench_ncu.sh builds both.
 *   bench_ncu DB CSV
 * Prints: seconds kernels samples.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kgate/ncu_csv.h"
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
	struct kg_run_info run = { 0 };
	size_t kernels = 0, samples = 0;

	if (argc != 3)
		return 2;
	if (store_open(argv[1], 0, &st) != KG_EXIT_PASS)
		return 3;
	double t0 = now();
	char *process = NULL;
	int rc = ncu_csv_read_header(argv[2], &run);
	if (!rc && !(process = ncu_csv_process_name(argv[2])))
		rc = 2;
	run.commit = process;
	if (!rc)
		rc = store_run_begin(st, &run);
	if (!rc)
		rc = ncu_csv_ingest_repeat(st, argv[2], process, 0, &kernels, &samples);
	if (!rc)
		rc = store_run_commit(st);
	double t1 = now();
	run.commit = NULL;
	store_run_info_free(&run);
	free(process);
	store_close(st);
	if (rc)
		return rc;
	printf("%.6f %zu %zu\n", t1 - t0, kernels, samples);
	return 0;
}
