/*
 * fuzz_kineto.c: libFuzzer harness for the Kineto importer alone
 * (src/import/kineto.c): sniffing, its header reader and a whole ingest
 * through the sink into an in-memory store, rolled back after every input.
 * fuzz_import.c runs every importer on each input; this one spends all its
 * time on the streaming JSON scanner and the event handling (plain JSON
 * seeds; gzip is zlib's).
 */
#include "fuzz.h"
FUZZ_IMPORTER("kineto")
