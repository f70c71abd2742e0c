/*
 * store.h: kgate's SQLite database.  store.c holds all of kgate's SQL.
 *
 * Schema versioned with PRAGMA user_version and migrated forward on open
 * (a database from a newer kgate is refused, untouched); WAL and a busy
 * timeout so that several jobs can share one file; each run written in one
 * transaction, so that a killed writer leaves nothing half-written; bound
 * parameters only.  docs/schema.md documents the tables.
 *
 * Every function that can fail prints "kgate: ..." on stderr and returns an
 * enum kg_exit (KG_EXIT_RUNTIME for database errors).
 */
#ifndef KGATE_STORE_H
#define KGATE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "kgate/kgate.h"

struct kg_store;

enum { KG_STORE_READONLY = 1 };

int store_open(const char *path, int flags, struct kg_store **out);
void store_close(struct kg_store *st);

/* One run: what was measured where.  Strings may be NULL. */
struct kg_run_info {
	int64_t id;             /* filled by the store */
	char *commit;           /* full SHA or any label */
	char *branch;
	char *parent;
	int64_t time;           /* unix seconds */
	char *host;
	char *gpu_name;         /* "NVIDIA H200": runs of different names never compared */
	char *gpu_uuid;
	char *gpu_chip;         /* "GH100" */
	char *driver;           /* "13000" or "580.65.06" */
	char *cuda;
	char *collector;        /* collector version, or "ncu 2025.3.1" */
	char *config_hash;
	char *source;           /* "records", "ncu-csv" */
	char *label;            /* "base"/"head" for compare runs, else NULL */
	char *ci_url;
	char *status;           /* "ok", or "quick" (kgate run --quick: never a baseline) */
};
void store_run_info_free(struct kg_run_info *r);

/* A kernel's three names. */
struct kg_kernel_name {
	const char *mangled;    /* as the driver reports it (may be already demangled) */
	const char *demangled;  /* __cxa_demangle, or = mangled */
	const char *base;       /* ncu's "function" name: no args, no templates */
};

/*
 * Writing a run: begin (BEGIN IMMEDIATE and the runs row), any number of
 * samples, then commit, or abort to leave nothing.  Names are interned, so
 * adding a sample is one cached INSERT.
 */
int store_run_begin(struct kg_store *st, struct kg_run_info *run);
int store_sample_add(struct kg_store *st, const char *benchmark, const char *nvtx,
		     const struct kg_kernel_name *kernel, const char *metric,
		     const char *unit, int deterministic, int repeat, int64_t ordinal,
		     double value);
int store_run_commit(struct kg_store *st);
void store_run_abort(struct kg_store *st);
/* Record that the open run ran benchmark (also when it stored no sample:
 * its kernels all vanished).  Every benchmark a sample names is recorded
 * without this.  Written at store_run_commit into run_benchmarks. */
int store_run_benchmark_add(struct kg_store *st, const char *benchmark);
/* What the GPU was doing around the benchmark's processes in the open run
 * (gpustate.h's summary as JSON; NULL: not recorded).  Adds the benchmark
 * as store_run_benchmark_add() does. */
int store_run_benchmark_state(struct kg_store *st, const char *benchmark, const char *gpu_state);
/* The GPU states stored with run, by benchmark name, sorted (NULL-terminated
 * *names and *states, free each with store_names_free); only benchmarks with
 * a state. */
int store_run_gpu_states(struct kg_store *st, int64_t run, char ***names, char ***states,
			 size_t *n);
/* The benchmarks run ran, sorted (NULL-terminated *names, free with
 * store_names_free); for a run stored before schema 4, those its samples
 * name. */
int store_run_benchmarks(struct kg_store *st, int64_t run, char ***names, size_t *n);

/* Runs, newest first.  Any filter may be NULL.  *runs is an array of *n. */
struct kg_run_filter {
	const char *commit;     /* exact or unique prefix */
	const char *branch;
	const char *gpu_name;
	const char *driver;
	const char *label;
	int no_quick;           /* 1: leave out quick runs (status "quick"), never a baseline */
	int64_t since;          /* unix seconds, 0 for all */
	size_t limit;           /* 0 for all */
};
int store_find_runs(struct kg_store *st, const struct kg_run_filter *f,
		    struct kg_run_info **runs, size_t *n);
void store_runs_free(struct kg_run_info *runs, size_t n);

/*
 * Samples of a set of runs, grouped by identity (benchmark, NVTX path,
 * kernel) and metric, sorted by (benchmark, nvtx, kernel mangled, metric).
 * Each series holds the values of every launch of every repeat of every run.
 */
struct kg_series {
	char *benchmark, *nvtx, *kernel, *demangled, *base, *metric, *unit;
	int deterministic;
	double *v;
	size_t n;
	int64_t *run_of;        /* run id of each value; NULL when the set is of one run */
};
struct kg_sampleset {
	struct kg_series *s;
	size_t n;
	char **pool;            /* when set: owns the series' names, which */
	size_t n_pool;          /* series share (store_load_samples) */
};
int store_load_samples(struct kg_store *st, const int64_t *run_ids, size_t n_runs,
		       struct kg_sampleset *out);
void store_sampleset_free(struct kg_sampleset *set);
/* Keep only the series of the n benchmarks named (freeing the others). */
void store_sampleset_keep(struct kg_sampleset *set, char *const *benchmarks, size_t n);

/* Verdicts, as stored after a check (one row per series compared). */
struct kg_verdict_row {
	const char *benchmark, *nvtx, *kernel, *metric;
	enum kg_verdict verdict;
	double shift, lo, hi, p;    /* relative shift and its interval; NAN when none */
	double base_value, head_value;
	size_t n_base, n_head;
	const char *message;
	int fails;                  /* 1 when this row made the check fail */
};
/* Why a kernel regressed (explain.c's explain_to_json in details). */
struct kg_explain_row {
	const char *benchmark, *nvtx, *base_kernel, *head_kernel;
	const char *why, *details;
};
/* The outcome of one check of head_run (a checks row), its verdicts and
 * the explanations of its failed kernels (x may be NULL), in one
 * transaction. */
struct kg_outcome;
int store_verdicts_put(struct kg_store *st, int64_t head_run, const char *baseline,
		       const struct kg_outcome *o, const struct kg_verdict_row *rows, size_t n,
		       const struct kg_explain_row *x, size_t nx);
/* Explanations alone (kgate explain), in one transaction. */
int store_explanations_put(struct kg_store *st, int64_t head_run, const char *baseline,
			   const struct kg_explain_row *x, size_t nx);

/* Direct access for modules with their own queries (report, stats). */
struct sqlite3 *store_db(struct kg_store *st);


/* ---- additions (store.c owner) ---- */

/* The schema version this kgate writes (PRAGMA user_version). */
int store_schema_version(void);

/* Create a new database file at an older schema version (for migration
 * tests and tooling); fails if path exists.  0 or KG_EXIT_RUNTIME. */
int store_create_at_version(const char *path, int version);


/* Number of runs stored (0 on error). */
int64_t store_run_count(struct kg_store *st);

/* ---- additions (stats) ---- */

/* One run by id: 0 and *out filled, KG_EXIT_USAGE when no such run (said
 * on stderr), KG_EXIT_RUNTIME on a database error. */
int store_run_get(struct kg_store *st, int64_t id, struct kg_run_info *out);

/*
 * The values of one metric in one run, grouped for a summary table (kgate
 * stats): by (benchmark, demangled kernel name) or by (benchmark, NVTX
 * path; "" outside any range).  Groups are sorted by benchmark and name,
 * each group's values ascending.  *groups is an array of *n.
 */
enum kg_summary_by { KG_SUMMARY_KERNEL = 0, KG_SUMMARY_NVTX };
struct kg_summary_group {
	char *benchmark;
	char *name;             /* demangled kernel name, or NVTX path */
	char *unit;             /* the metric's unit ("" when unknown) */
	double *v;              /* ascending */
	size_t n;
};
int store_summary_values(struct kg_store *st, int64_t run, const char *metric,
			 enum kg_summary_by by, struct kg_summary_group **groups, size_t *n);
void store_summary_free(struct kg_summary_group *groups, size_t n);

/* Names of the metrics that have samples in a run, sorted; NULL-terminated
 * array in *names (free with store_names_free). */
int store_run_metrics(struct kg_store *st, int64_t run, char ***names, size_t *n);
void store_names_free(char **names, size_t n);

#endif
