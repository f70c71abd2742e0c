/*
 * fuzz.h: what the libFuzzer harnesses of tests/fuzz/ share: the entry
 * points' prototypes, quieting kgate's own messages (a rejected input
 * prints one, and printing costs more than parsing), and a memory file
 * that the parsers which read a path can open.
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
#include <sys/mman.h>
#include <unistd.h>

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

#endif
