/*
 * fuzz_gbench.c: libFuzzer harness for the Google Benchmark importer
 * (src/import/gbench.c): sniffing, the header reader and a whole ingest of
 * the input into an in-memory store, rolled back after every input.
 */
#include "fuzz.h"
FUZZ_IMPORTER("gbench")
