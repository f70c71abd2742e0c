/*
 * fuzz_records.c: libFuzzer harness for records files (records.h): the
 * header readers and a whole ingest into an in-memory store, rolled back
 * after every input.  The records readers take a path, so the input is
 * written to a memory file first.
 */
#include "fuzz.h"

#include "kgate/records.h"
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
	struct kg_records_stats stats;

	records_read_header(path, &run);
	free(records_benchmark_name(path));
	records_header_pass(path);
	if (!run.commit)
		run.commit = xstrdup("fuzz");
	if (store_run_begin(st, &run) != KG_EXIT_PASS)
		abort();
	records_ingest(st, path, "fuzz", 0, &stats);
	store_run_abort(st);
	store_run_info_free(&run);
	return 0;
}
