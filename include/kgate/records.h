/*
 * records.h: reading records files (the JSON Lines of records_format.h).
 *
 * records.c validates a whole file and adds its samples to the run open in
 * the store.  A file without its footer, or with any bad line, is rejected
 * as "kgate: FILE:LINE: what is wrong" and KG_EXIT_USAGE; the caller then
 * aborts the run, so nothing is stored.
 */
#ifndef KGATE_RECORDS_H
#define KGATE_RECORDS_H

#include "kgate/import.h"
#include "kgate/store.h"

/* The records importer's parts (src/import/records.c names them in the
 * table): what the header says, whether the footer is there, and the whole
 * file into a sink. */
int records_read_info(const char *path, struct kg_import_info *info);
int records_parse(struct kg_import_sink *sink, const char *path);
/* 1 when the last non-blank line of a regular file is the footer, 0 when it
 * is not, -1 for a stream (which cannot be read backwards). */
int records_complete(const char *path);

struct kg_records_stats {
	size_t kernels, samples, dropped, errors;
};

/* Add every kernel record of path to the open run as (benchmark, repeat). */
int records_ingest(struct kg_store *st, const char *path, const char *benchmark,
		   int repeat, struct kg_records_stats *stats);

#endif
