/*
 * bench_ncu.c: time what "kgate ingest --ncu-csv" does with an export (the
 * header reads, then the import into one run of a fresh database).
 * kgate's own benchmark, linked against libkgate.a for the current
 * importer, or against ncu_csv_anchor.c (the importer before its one-pass
 * rewrite, built with -DNCU_ANCHOR) for the anchor; bench_ncu.sh builds both.
 *   bench_ncu DB CSV
 * Prints: seconds kernels samples.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kgate/ncu_csv.h"
#include "kgate/store.h"
#ifdef NCU_ANCHOR
/* the anchor's header reads (ncu_csv_anchor.c) */
int ncu_csv_read_header(const char *path, struct kg_run_info *run);
char *ncu_csv_process_name(const char *path);
#else
#include "kgate/import.h"
#endif

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
#ifdef NCU_ANCHOR
	int rc = ncu_csv_read_header(argv[2], &run);
	if (!rc && !(process = ncu_csv_process_name(argv[2])))
		rc = 2;
#else
	/* the current importer reads the GPU and the process name in one pass */
	struct kg_import_info info = { 0 };
	int rc = ncu_csv_read_info(argv[2], &info);
	run = info.run;
	memset(&info.run, 0, sizeof(info.run));
	if (!rc && !(process = info.benchmark))
		rc = 2;
	info.benchmark = NULL;
	import_info_free(&info);
#endif
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
