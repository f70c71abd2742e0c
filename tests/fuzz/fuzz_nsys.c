/*
 * fuzz_nsys.c: libFuzzer harness for the Nsight Systems importer alone
 * (src/import/nsys_sqlite.c): sniffing, its header reader and a whole ingest
 * through the sink into an in-memory store, rolled back after every input.
 * fuzz_import.c runs every importer on each input; this one spends all its
 * time on SQLite files: the schema checks, the queries built from the
 * columns found, the NVTX merge (seeds: a small export made from the
 * fixture; import.dict holds its table names).
 */
#include "fuzz.h"
FUZZ_IMPORTER("nsys-sqlite")
