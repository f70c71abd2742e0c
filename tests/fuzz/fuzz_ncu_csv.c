/*
 * fuzz_ncu_csv.c: libFuzzer harness for Nsight Compute CSV exports
 * (ncu_csv.h), both pages: the header reader, the process name and a whole
 * ingest into an in-memory store, rolled back after every input.  The
 * importer takes a path, so the input is written to a memory file first.
 */
#include "fuzz.h"

#include "kgate/ncu_csv.h"
#include "kgate/store.h"
#include "kgate/util.h"

static struct kg_store *st;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	if (store_open(":memory:", 0, &st) != KG_EXIT_PASS)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file_set(data, size);
	struct kg_run_info run = { 0 };
	size_t kernels, samples;

	ncu_csv_read_header(path, &run);
	free(ncu_csv_process_name(path));
	if (!run.commit)
		run.commit = xstrdup("fuzz");
	if (store_run_begin(st, &run) != KG_EXIT_PASS)
		abort();
	ncu_csv_ingest_repeat(st, path, "fuzz", 1, &kernels, &samples);
	store_run_abort(st);
	store_run_info_free(&run);
	return 0;
}
