/*
 * fuzz_nsys.c: libFuzzer harness for the Nsight Systems importer alone
 * (src/import/nsys_sqlite.c): its sniff, its header reader and a whole ingest
 * through the sink into an in-memory store, rolled back after every input.
 * fuzz_import.c runs every importer on each input; this one spends all its
 * time on SQLite files: the schema checks, the queries built from the
 * columns found, the NVTX merge (seeds: a small export made from the
 * fixture; import.dict holds its table names).
 */
#include "fuzz.h"

#include "kgate/import.h"
#include "kgate/store.h"
#include "kgate/util.h"

#include <string.h>

static struct kg_store *st;
static const struct kg_importer *im;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	if (store_open(":memory:", 0, &st) != KG_EXIT_PASS || !(im = import_find("nsys-sqlite")))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_disk_file_set(data, size);
	struct kg_import_info info;
	struct kg_run_info run = { 0 };

	im->sniff(data, size < KG_IMPORT_HEAD ? size : KG_IMPORT_HEAD, path);
	import_read_info(im, path, &info);
	import_info_free(&info);
	run.commit = xstrdup("fuzz");
	if (store_run_begin(st, &run) != KG_EXIT_PASS)
		abort();
	import_ingest(im, st, path, "fuzz", 1, NULL);
	store_run_abort(st);
	store_run_info_free(&run);
	return 0;
}
