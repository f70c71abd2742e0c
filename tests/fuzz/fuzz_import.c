/*
 * fuzz_import.c: libFuzzer harness for every importer of the table
 * (import.h), one input through all of them: sniffing and the recognition
 * of formats kgate does not read (on the input's first bytes), then for each
 * importer its header reader, its completeness check and a whole ingest
 * through the sink (reader thread and store) into an in-memory store,
 * rolled back after every input.  Importers take a path, so the input is
 * written to a file first (on disk, /dev/shm where there is one: SQLite
 * cannot open a memory file's /proc path).  A new importer in the table is fuzzed
 * here without a line changed.
 */
#include "fuzz.h"

#include "kgate/import.h"
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
	const char *path = fuzz_disk_file_set(data, size);
	size_t head = size < KG_IMPORT_HEAD ? size : KG_IMPORT_HEAD;
	int conf;

	import_sniff_head(data, head, path, &conf);
	import_unsupported(data, head, path);
	for (size_t i = 0; kg_importers[i]; i++) {
		const struct kg_importer *im = kg_importers[i];
		struct kg_import_info info;
		struct kg_run_info run = { 0 };

		import_read_info(im, path, &info);
		import_info_free(&info);
		if (im->complete)
			im->complete(path);
		run.commit = xstrdup("fuzz");
		if (store_run_begin(st, &run) != KG_EXIT_PASS)
			abort();
		import_ingest(im, st, path, "fuzz", 1, NULL);
		store_run_abort(st);
		store_run_info_free(&run);
	}
	return 0;
}
