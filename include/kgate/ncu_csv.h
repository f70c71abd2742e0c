/*
 * ncu_csv.h: importing Nsight Compute CSV exports (ncu --csv, details page,
 * and ncu --csv --page raw) as samples of a run.
 *
 * Program output and ==PROF== lines mixed into the export are skipped,
 * ==WARNING== lines passed on, ==ERROR== lines refused (unless
 * import_set_partial()); thousands separators, long quoted kernel names,
 * ragged rule rows and the units row of the raw page are handled, numbers
 * of a locale other than C refused, names and units of every release since
 * 2019 mapped onto today's.  Errors as "FILE:LINE: message".
 */
#ifndef KGATE_NCU_CSV_H
#define KGATE_NCU_CSV_H

#include <stdio.h>

#include "kgate/import.h"
#include "kgate/store.h"

/* The ncu CSV importer's parts (src/import/ncu_csv.c names them in the
 * table): what the export says before its first launch (the GPU's and the
 * process's names), and the whole export into a sink. */
int ncu_csv_read_info(const char *path, struct kg_import_info *info);
int ncu_csv_parse(struct kg_import_sink *sink, const char *path);

/* Add the export's metrics to the open run, one launch per ncu "ID". */
int ncu_csv_ingest(struct kg_store *st, const char *path, const char *benchmark,
		   size_t *kernels, size_t *samples);

/* The same, storing the launches as repeat number `repeat` (ncu_csv_ingest
 * uses repeat 0). */
int ncu_csv_ingest_repeat(struct kg_store *st, const char *path, const char *benchmark,
			  int repeat, size_t *kernels, size_t *samples);

/*
 * The CSV record reader (RFC 4180), exposed for tests: reads one record
 * from fp, quoted fields may span lines.  It reads fp ahead in blocks, so
 * fp is read through one reader only.  Returns the number of fields
 * (>= 1), 0 at end of file, -1 on a malformed record (unterminated quote).
 * Fields are NUL-terminated in *fields[i]; storage is owned by rd.
 */
struct ncu_csv_reader {
	char *buf;          /* field bytes */
	size_t len, cap;
	size_t *off;        /* field offsets into buf */
	size_t nf, fcap;
	char **fields;      /* pointers into buf, valid until the next read */
	size_t line;        /* physical line number where the record started */
	size_t next_line;   /* line number of the next physical line */
	int quoted_first;   /* the first field was quoted */
	unsigned char *in;  /* the input read ahead, [in_pos, in_len) not used yet */
	size_t in_pos, in_len;
	FILE *in_fp;        /* the file it was read from */
};
int ncu_csv_read_record(FILE *fp, struct ncu_csv_reader *rd);
void ncu_csv_reader_free(struct ncu_csv_reader *rd);

#endif
