/*
 * import/formats.h: the formats kgate reads, one line each, and the
 * functions each format's file in src/import/ gives the table (import.c):
 * ID_sniff, ID_read_info and its ingest function, as import.h describes
 * struct kg_importer's members.  The order is the order of ties in sniffing
 * and of ingest's --help.
 */
#ifndef KGATE_IMPORT_FORMATS_H
#define KGATE_IMPORT_FORMATS_H

#include "kgate/import.h"
#include "kgate/ncu_csv.h"
#include "kgate/records.h"

/* X(ID, name for --input-format, description, complete or NULL, ingest) */
#define FORMATS(X) \
	X(records, "records", "records files (JSON Lines) written by kgate's collector", \
	  records_complete, records_parse) \
	X(ncu_csv, "ncu-csv", "Nsight Compute CSV exports (ncu --csv, details or raw page)", NULL, ncu_csv_parse) \
	X(nsys, "nsys-sqlite", "Nsight Systems SQLite exports (nsys export --type sqlite)", NULL, nsys_ingest) \
	X(kineto, "kineto", "Kineto (torch.profiler) chrome traces, .json or .json.gz", NULL, kineto_ingest) \
	X(nvbench, "nvbench", "nvbench JSON output (--json, and --jsonbin sample files)", NULL, nvbench_ingest) \
	X(gbench, "gbench", "Google Benchmark JSON output (--benchmark_format=json)", NULL, gbench_ingest)

#define KG_FORMAT_DECLARE(id, name, description, complete, ingest) \
	int id##_sniff(const unsigned char *head, size_t n, const char *path); \
	int id##_read_info(const char *path, struct kg_import_info *info); \
	int ingest(struct kg_import_sink *sink, const char *path);
FORMATS(KG_FORMAT_DECLARE)
#undef KG_FORMAT_DECLARE

#endif
