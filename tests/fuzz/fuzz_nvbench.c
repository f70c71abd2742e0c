/*
 * fuzz_nvbench.c: libFuzzer harness for the nvbench importer
 * (src/import/nvbench.c) with its sample files: the input up to its first
 * NUL byte is the JSON document, what follows is the content of the sample
 * files a document may name (f.json-bin/0.bin and f.json-freqs-bin/0.bin),
 * all written into a scratch directory; then sniffing, the header reader
 * and a whole ingest into an in-memory store, rolled back after every input.
 */
#include "fuzz.h"

#include <string.h>
#include <sys/stat.h>

static char dir[64], json[96], bin[96], freqs[96];

static void put(const char *path, const uint8_t *data, size_t size)
{
	FILE *fp = fopen(path, "wb");

	if (!fp || (size && fwrite(data, 1, size, fp) != size) || fclose(fp) != 0)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "/tmp/kgate-fuzz-nvbench.XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(json, sizeof(json), "%s/f.json", dir);
	snprintf(bin, sizeof(bin), "%s/f.json-bin", dir);
	snprintf(freqs, sizeof(freqs), "%s/f.json-freqs-bin", dir);
	if (mkdir(bin, 0700) != 0 || mkdir(freqs, 0700) != 0)
		abort();
	strcat(bin, "/0.bin");
	strcat(freqs, "/0.bin");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t n = nul ? (size_t)(nul - data) : size;

	put(json, data, n);
	put(bin, nul ? nul + 1 : data, nul ? size - n - 1 : 0);
	put(freqs, nul ? nul + 1 : data, nul ? size - n - 1 : 0);
	fuzz_importer_file("nvbench", json, data, n, "");
	return 0;
}
