/*
 * import.h: one interface for every input format kgate reads.
 *
 * An importer (one file per format in src/import/) says how sure it is that
 * a file is of its format (sniff: the file's first bytes, its path a hint
 * only), reads what the file says of itself (read_info: the GPU fingerprint,
 * the default benchmark name, the command line measured, its place in an
 * application replay), whether it is whole, and streams its samples into
 * a sink (ingest).  The sink (src/import/sink.c) owns what importers share:
 * kernel names interned once with their demangled and base forms, metric
 * names classified once (metric.c), the reader thread that parses while the
 * caller's thread stores, and the samples' way into the open run of the
 * store.  src/import/import.c holds the one table of importers, the lookup by
 * name, sniffing (and the recognition of formats kgate does not read yet),
 * the merge of the files' fingerprints into one run and the run's context.
 *
 * Adding a format: one file in src/import/ defining a struct kg_importer,
 * one line in import.c's table, and a fixture.
 */
#ifndef KGATE_IMPORT_H
#define KGATE_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "kgate/store.h"

/* How sure a sniff is; the highest wins, ties go to the earlier table entry. */
enum {
	KG_SNIFF_NO = 0,
	KG_SNIFF_NAME = 10,     /* only the path's suffix says so */
	KG_SNIFF_LIKELY = 50,   /* the content looks like it */
	KG_SNIFF_SURE = 100,    /* the content carries the format's signature */
};

/* Bytes of a file's beginning that sniff() sees (fewer for a short file). */
#define KG_IMPORT_HEAD 65536

/* What a file says of itself. */
struct kg_import_info {
	struct kg_run_info run;  /* gpu_*, driver, cuda, collector, source, time */
	char *benchmark;         /* the default benchmark name, or NULL */
	char *command;           /* the command line measured, or NULL */
	int pass, passes;        /* application replay: this pass of passes (0 and 1 without) */
	long long pid, ppid;     /* -1 when the file does not say */
	int rank;                /* the process's rank in a distributed job; -1: none */
	int local_rank;          /* its rank on its node; -1: not said */
	int world_size;          /* the job's number of ranks; -1: not said */
	int names_benchmarks;    /* the file names its benchmarks (import_sink_benchmark):
				  * benchmark is then only the first of them */
};
void import_info_free(struct kg_import_info *info);

struct kg_import_stats {
	size_t kernels, samples, dropped, errors;
	size_t benchmarks;       /* those named by import_sink_benchmark */
	/* the demangled names of the kernels given a duration
	 * (gpu__time_duration.sum), each once, in no order: what ingest's
	 * summary counts; freed by import_stats_free */
	char **timed;
	size_t n_timed;
};

void import_stats_free(struct kg_import_stats *stats);

struct kg_import_sink;

struct kg_importer {
	const char *name;        /* as --input-format takes it: "records" */
	const char *description; /* one line: "records files written by kgate's collector" */
	/* How sure (KG_SNIFF_*) that a file beginning with head[0..n) is of this
	 * format; path is a hint only. */
	int (*sniff)(const unsigned char *head, size_t n, const char *path);
	/* Fill *info (zeroed by the caller, pass 0, passes 1, pid, ppid, rank,
	 * local_rank and world_size -1).
	 * 0, or an exit status after printing why. */
	int (*read_info)(const char *path, struct kg_import_info *info);
	/* 1 when the file is whole, 0 when it was cut short (its writer died),
	 * -1 when that cannot be told without reading it all; prints nothing.
	 * NULL: never told. */
	int (*complete)(const char *path);
	/* Stream every sample of path into sink.  Runs on the sink's reader
	 * thread.  0, or an exit status after printing why. */
	int (*ingest)(struct kg_import_sink *sink, const char *path);
};

/* ---- the table (import.c) ---- */

/* The importers, NULL-terminated. */
extern const struct kg_importer *const kg_importers[];

/* The importer of that name, or NULL. */
const struct kg_importer *import_find(const char *name);
/* "records, ncu-csv": the names of the table, malloc'd. */
char *import_names(void);

/* The best importer for path's content, and how sure it is (*conf); NULL
 * with *conf 0 when none claims it.  head/n: the file's first bytes. */
const struct kg_importer *import_sniff_head(const unsigned char *head, size_t n,
					    const char *path, int *conf);
/* What a file of a format kgate does not read looks like to it ("an nvbench
 * JSON file"), or NULL. */
const char *import_unsupported(const unsigned char *head, size_t n, const char *path);

/*
 * The importer for path: the one named (when name is not NULL), else the
 * best sniff of the file's beginning.  NULL after printing "kgate: cannot
 * ingest 'x': ..." (what the file looks like when kgate knows its format,
 * else the formats kgate reads).  skipped not NULL: the file was found in a
 * directory; one that no importer claims is skipped (*skipped = 1) instead,
 * silently, or with a warning when it looks like a format kgate does not
 * read yet.
 */
const struct kg_importer *import_choose(const char *path, const char *name, int *skipped);

/*
 * --allow-partial: whether a file whose writer reported errors (ncu's
 * ==ERROR== lines) is stored with what it holds, with a warning, instead of
 * refused.  Off unless set; one setting for the process.
 */
void import_set_partial(int allowed);
int import_partial_allowed(void);

/* The GPU name of a run whose files give only the compute capability
 * (ncu's details page): this prefix and "9.0"; its gpu_chip is "sm_90". */
#define KG_IMPORT_CC_NAME "GPU of compute capability "

/* im->read_info with the defaults set; frees nothing of a previous info. */
int import_read_info(const struct kg_importer *im, const char *path, struct kg_import_info *info);

/*
 * Merge one file's fingerprint into the run's: the GPU model must agree with
 * the files before (first_path names the first), and what the run lacks is
 * taken (GPU uuid and chip, driver, CUDA, collector, source, time).  A GPU
 * known only by its compute capability (KG_IMPORT_CC_NAME) agrees with a
 * named one of that compute capability (gpu_chip "sm_XY"), or whose
 * compute capability is not known, and takes its name.  0, or
 * KG_EXIT_USAGE after printing "PATH: recorded on X, but FIRST was recorded
 * on Y; one run is one GPU model".
 */
int import_fingerprint(struct kg_run_info *run, struct kg_run_info *one, const char *path,
		       const char *first_path);
/* The run's context, where not set: the CI run's URL (GitHub Actions), the
 * host name, the time (now). */
void import_context(struct kg_run_info *run);

/* Stream path into the open run of st as (benchmark, repeat) through a sink.
 * benchmark "": the file names its own (info.names_benchmarks).  stats may
 * be NULL. */
int import_ingest(const struct kg_importer *im, struct kg_store *st, const char *path,
		  const char *benchmark, int repeat, struct kg_import_stats *stats);

/* (Importers of JSON documents stream them: src/import/jstream.h.) */

/* ---- the sink (sink.c), for importers ---- */

/* A metric as the sink hands it out: its name, the unit of its first sample
 * (NULL: the store guesses from the name), deterministic (metric.c). */
struct kg_import_metric {
	const char *name, *unit;
	int deterministic;
};

/* How an importer's kernel names are keyed: as given (the collector's
 * mangled names), or by their canonical demangled form unless mangled (ncu
 * prints names demangled, in its own spelling). */
enum kg_kernel_key { KG_KEY_AS_GIVEN, KG_KEY_CANONICAL };

/* A kernel's three names, interned for the sink's life; *out's pointers stay
 * valid until the ingest ends. */
void import_sink_kernel(struct kg_import_sink *s, const char *name, enum kg_kernel_key key,
			struct kg_kernel_name *out);
/* The benchmark of the samples added after it: name as the file says it,
 * or "B/name" when the ingest's benchmark B was given on the command line
 * (import_ingest's benchmark not ""); the first sample of each stores it
 * into the run (store_run_benchmark_add). */
void import_sink_benchmark(struct kg_import_sink *s, const char *name);
/* A string (an NVTX path) interned for the sink's life. */
const char *import_sink_string(struct kg_import_sink *s, const char *str);
/* A metric, classified once; unit may be NULL.  Valid for the sink's life. */
const struct kg_import_metric *import_sink_metric(struct kg_import_sink *s, const char *name,
						  const char *unit);
/* Queue one sample of the open run.  line: where in the file (for the
 * message when the store refuses it).  0, or KG_EXIT_RUNTIME when storing
 * has failed (the importer stops). */
int import_sink_add(struct kg_import_sink *s, const char *nvtx, const struct kg_kernel_name *k,
		    const struct kg_import_metric *m, int64_t ordinal, double value, size_t line);
/* The rank (a distributed job's process, >= 0; -1 none, the default) of the
 * samples added next: part of their identity. */
void import_sink_rank(struct kg_import_sink *s, int rank);
/* A device the samples ran on (name, uuid; either may be NULL): the run's
 * device set (store_run_device) once the ingest has succeeded. */
void import_sink_device(struct kg_import_sink *s, const char *name, const char *uuid);
/* The counters of this ingest: the importer counts kernels, dropped and
 * errors; the sink counts samples. */
struct kg_import_stats *import_sink_stats(struct kg_import_sink *s);

#endif
