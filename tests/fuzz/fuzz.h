/*
 * fuzz.h: what the libFuzzer harnesses of tests/fuzz/ share: the entry
 * points' prototypes, quieting kgate's own messages (a rejected input
 * prints one, and printing costs more than parsing), a memory file
 * that the parsers which read a path can open, and the whole of a harness
 * of one importer (fuzz_importer_run).
 *
 * KGATE_FUZZ_VERBOSE=1 keeps kgate's messages on stderr.  libFuzzer's own
 * output and the sanitizers' reports are written without stdio's stderr,
 * so they are not affected.
 */
#ifndef KGATE_FUZZ_H
#define KGATE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kgate/import.h"
#include "kgate/store.h"
#include "kgate/util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void fuzz_quiet(void)
{
	const char *v = getenv("KGATE_FUZZ_VERBOSE");
	FILE *null;

	if (v && *v && *v != '0')
		return;
	if ((null = fopen("/dev/null", "w")))
		stderr = null;
}

/* A file in memory, opened once: fuzz_file_set() replaces its contents and
 * answers a path that fopen(3) reads from the start. */
static int fuzz_fd = -1;
static char fuzz_path[64];

static inline const char *fuzz_file_set(const uint8_t *data, size_t size)
{
	if (fuzz_fd < 0) {
		fuzz_fd = memfd_create("kgate-fuzz", 0);
		if (fuzz_fd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(fuzz_path, sizeof(fuzz_path), "/proc/self/fd/%d", fuzz_fd);
	}
	if (ftruncate(fuzz_fd, 0) != 0 ||
	    (size && pwrite(fuzz_fd, data, size, 0) != (ssize_t)size)) {
		perror("memfd write");
		abort();
	}
	return fuzz_path;
}

/* The same on disk (in /dev/shm where there is one, else $TMPDIR): for
 * parsers that a memory file's /proc path does not reach (SQLite resolves
 * the link, to a memfd name it cannot open). */
static int fuzz_disk_fd = -1;
static char fuzz_disk_path[256];

static void fuzz_disk_cleanup(void)
{
	if (fuzz_disk_path[0])
		unlink(fuzz_disk_path);
}

static inline const char *fuzz_disk_file_set(const uint8_t *data, size_t size)
{
	if (fuzz_disk_fd < 0) {
		const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
				: getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
		snprintf(fuzz_disk_path, sizeof(fuzz_disk_path), "%s/kgate-fuzz-%d", dir,
			 (int)getpid());
		fuzz_disk_fd = open(fuzz_disk_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fuzz_disk_fd < 0) {
			perror(fuzz_disk_path);
			abort();
		}
		atexit(fuzz_disk_cleanup);
	}
	if (ftruncate(fuzz_disk_fd, 0) != 0 ||
	    (size && pwrite(fuzz_disk_fd, data, size, 0) != (ssize_t)size)) {
		perror("fuzz file write");
		abort();
	}
	return fuzz_disk_path;
}

/*
 * One input of an importer's harness, in the file at path (head[0..n) its
 * beginning): sniffed (every importer of the table), its header read and
 * the whole of it ingested through the sink by the importer named, into an
 * in-memory store opened on the first call, in a run rolled back after.
 */
static inline void fuzz_importer_file(const char *name, const char *path, const uint8_t *head,
				      size_t n, const char *benchmark)
{
	static struct kg_store *st;
	static const struct kg_importer *im;
	struct kg_import_info info;
	struct kg_run_info run = { 0 };
	int conf;

	if (!st) {
		fuzz_quiet();
		if (store_open(":memory:", 0, &st) != KG_EXIT_PASS || !(im = import_find(name)))
			abort();
	}
	import_sniff_head(head, n < KG_IMPORT_HEAD ? n : KG_IMPORT_HEAD, path, &conf);
	import_read_info(im, path, &info);
	import_info_free(&info);
	run.commit = xstrdup("fuzz");
	if (store_run_begin(st, &run) != KG_EXIT_PASS)
		abort();
	import_ingest(im, st, path, benchmark, 1, NULL);
	store_run_abort(st);
	store_run_info_free(&run);
}

/* The whole of the harness of one importer: the input as a file on disk
 * (which every parser can open, SQLite's too). */
static inline int fuzz_importer_run(const char *name, const uint8_t *data, size_t size)
{
	fuzz_importer_file(name, fuzz_disk_file_set(data, size), data, size, "fuzz");
	return 0;
}

/* A harness of one importer, whole: FUZZ_IMPORTER("kineto") */
#define FUZZ_IMPORTER(name) \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) \
	{ \
		return fuzz_importer_run(name, data, size); \
	}

#endif
