/*
 * store.h: kgate's database, behind one API whatever holds it.
 *
 * store.c picks the backend by the database's name (--db, else the
 * KGATE_DB environment variable, else KGATE_DB below): a path, or
 * "sqlite:" / "file:" and a path, is an SQLite file (store_sqlite.c);
 * "postgresql://" and "postgres://" URLs name a PostgreSQL database, which
 * this kgate is not built for (a clear error; the password of a URL is
 * never printed).  Each backend (src/store_backend.h) holds every query
 * kgate makes of it: schema versioned and migrated forward on open (a
 * database from a newer kgate is refused, untouched); several jobs may
 * share one database; each run written in one transaction, so that a
 * killed writer leaves nothing half-written; bound parameters only.
 * docs/schema.md documents the tables.
 *
 * Every function that can fail prints "kgate: ..." on stderr and returns an
 * enum kg_exit (KG_EXIT_RUNTIME for database errors).
 */
#ifndef KGATE_STORE_H
#define KGATE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "kgate/kgate.h"
#include "kgate/verdict.h"

/* ---- Opening ---- */

/* The database every command takes when neither --db nor the KGATE_DB
 * environment variable names one. */
#define KGATE_DB "kgate.db"
/* The default database: $KGATE_DB when set and not empty, else KGATE_DB
 * in the working directory or the nearest directory above it that has one
 * (up to the repository's top level, as git finds it: kg_find_up), else
 * KGATE_DB beside the kgate.yaml found so, else KGATE_DB here. */
const char *store_default_db(void);
/* KG_EXIT_PASS when database db exists; else the one message every command
 * gives for a missing database ("cannot open 'X': no such database (store
 * runs first ...)") and KG_EXIT_USAGE.  store_open() with
 * KG_STORE_READONLY gives the same. */
int store_require(const char *db);

struct kg_store;

enum { KG_STORE_READONLY = 1 };

/* Open db (a path or a URL, as above), migrating it forward unless
 * read-only.  A read-only open of a database that does not exist, has no
 * kgate schema or an older one fails. */
int store_open(const char *db, int flags, struct kg_store **out);
void store_close(struct kg_store *st);
/* Whether db exists (SQLite: the file does), and may be opened for
 * writing (the file is writable).  A database on a server, or a name
 * store_open would refuse, is taken to exist and be writable: opening it
 * says. */
int store_exists(const char *db);
int store_writable(const char *db);

/* The schema version this kgate writes (SQLite: PRAGMA user_version). */
int store_schema_version(void);
/* Create a new database at an older schema version (for migration tests
 * and tooling); fails if it exists.  0 or KG_EXIT_RUNTIME. */
int store_create_at_version(const char *db, int version);

/* ---- Runs and kernels, as written and read ---- */

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
	char *status;           /* "ok", "quick" (kgate run --quick: never a baseline), or
				 * "shard I/N" (one part of a sharded run: kgate merge) */
	char *devices;          /* the devices the run's kernels ran on, as a JSON array of
	                           {"name", "uuid"} sorted by uuid; NULL when not known
	                           (runs stored before schema 6, importers that do not say) */
};
void store_run_info_free(struct kg_run_info *r);

/* A kernel's three names. */
struct kg_kernel_name {
	const char *mangled;    /* as the driver reports it (may be already demangled) */
	const char *demangled;  /* __cxa_demangle, or = mangled */
	const char *base;       /* ncu's "function" name: no args, no templates */
};

/* ---- Writing a run ---- */

/*
 * Writing a run: begin (one transaction, and the run's row; run->id is
 * filled), any number of samples, then commit, or abort to leave nothing.
 * Names are interned, so adding a sample is one cached INSERT.  One run is
 * open at a time; a read-only store takes none.
 */
int store_run_begin(struct kg_store *st, struct kg_run_info *run);
int store_sample_add(struct kg_store *st, const char *benchmark, const char *nvtx,
		     const struct kg_kernel_name *kernel, const char *metric,
		     const char *unit, int deterministic, int repeat, int64_t ordinal,
		     double value);
int store_run_commit(struct kg_store *st);
/* The rank (a process's place in a distributed job, >= 0) of the samples
 * added next to the open run; -1 (the default at store_run_begin): none. */
void store_run_rank(struct kg_store *st, int rank);
/* A device the open run's kernels ran on (name, uuid; either may be NULL);
 * the run's device set is written at store_run_commit (runs.devices). */
void store_run_device(struct kg_store *st, const char *name, const char *uuid);
void store_run_abort(struct kg_store *st);
/* Record that the open run ran benchmark (also when it stored no sample:
 * its kernels all vanished).  Every benchmark a sample names is recorded
 * without this.  Written at store_run_commit (table run_benchmarks). */
int store_run_benchmark_add(struct kg_store *st, const char *benchmark);
/* What the GPU was doing around the benchmark's processes in the open run
 * (gpustate.h's summary as JSON; NULL: not recorded).  Adds the benchmark
 * as store_run_benchmark_add() does. */
int store_run_benchmark_state(struct kg_store *st, const char *benchmark, const char *gpu_state);

/* ---- Reading runs ---- */

/* Number of runs stored (0 on error). */
int64_t store_run_count(struct kg_store *st);

/* Runs, newest first (oldest first when asked).  Any filter may be NULL.
 * *runs is an array of *n. */
struct kg_run_filter {
	const char *commit;     /* exact or unique prefix */
	const char *branch;
	const char *gpu_name;
	const char *driver;
	const char *label;
	int no_quick;           /* 1: only complete runs (status "ok"): no quick run, no shard
				 * of a sharded run (kgate run --shard), never a baseline */
	int no_label;           /* 1: only runs without a label (not of kgate compare) */
	int oldest_first;       /* 1: oldest first */
	int64_t since;          /* unix seconds, 0 for all */
	size_t limit;           /* 0 for all */
};
int store_find_runs(struct kg_store *st, const struct kg_run_filter *f,
		    struct kg_run_info **runs, size_t *n);
void store_runs_free(struct kg_run_info *runs, size_t n);
/* The branches of the stored runs, each once (free with store_names_free). */
int store_branches(struct kg_store *st, char ***names, size_t *n);
/* 1 when a stored run is of branch; else 0 after a warning with the
 * branches stored and the nearest ("--branch 'mian' has no stored run; did
 * you mean 'main'? (stored branches: main, pr)"; what names the option);
 * -1 on a database error (printed). */
int store_branch_known(struct kg_store *st, const char *branch, const char *what);

/* One run by id: 0 and *out filled, KG_EXIT_USAGE when no such run (said
 * on stderr), KG_EXIT_RUNTIME on a database error. */
int store_run_get(struct kg_store *st, int64_t id, struct kg_run_info *out);

/* The GPU states stored with run, by benchmark name, sorted (NULL-terminated
 * *names and *states, free each with store_names_free); only benchmarks with
 * a state. */
int store_run_gpu_states(struct kg_store *st, int64_t run, char ***names, char ***states,
			 size_t *n);
/* The benchmarks run ran, sorted (NULL-terminated *names, free with
 * store_names_free); for a run stored before schema 4, those its samples
 * name. */
int store_run_benchmarks(struct kg_store *st, int64_t run, char ***names, size_t *n);
/* Names of the metrics that have samples in a run, sorted; NULL-terminated
 * array in *names (free with store_names_free). */
int store_run_metrics(struct kg_store *st, int64_t run, char ***names, size_t *n);
void store_names_free(char **names, size_t n);

/* ---- Reading samples ---- */

/* One stored sample with its names, as store_sample_add took it. */
struct kg_sample_rec {
	const char *benchmark, *nvtx, *metric, *unit;
	struct kg_kernel_name kernel;
	int deterministic, repeat;
	int64_t ordinal;
	double value;
	int ranked, rank;       /* the rank of a distributed job's process (ranked 1), or none */
};
typedef int (*kg_sample_fn)(void *arg, const struct kg_sample_rec *r);   /* non-zero stops */
/* Every sample of run, in the order stored (kgate db copy, kgate merge:
 * a run rewritten elsewhere sample for sample).  fn may write to another
 * store, or to this one once the rows are read (each backend reads the
 * run's rows before the first call, or from a connection of its own). */
int store_run_samples_each(struct kg_store *st, int64_t run, kg_sample_fn fn, void *arg);

/*
 * Samples of a set of runs, grouped by identity (benchmark, NVTX path,
 * kernel, rank) and metric, sorted by (benchmark, nvtx, kernel mangled,
 * rank (none first), metric).
 * Each series holds the values of every launch of every repeat of every run.
 */
struct kg_series {
	char *benchmark, *nvtx, *kernel, *demangled, *base, *metric, *unit;
	int ranked, rank;       /* ranked 1: the samples of rank (a distributed job's
	                           process); 0: no rank (a single process, or pooled) */
	int deterministic;
	double *v;
	size_t n;
	int64_t *run_of;        /* run id of each value; NULL when the set is of one run */
};
/* The one order of series: by identity (benchmark, NVTX path, kernel
 * mangled (strcmp; a NULL NVTX path is ""), rank (none first)), then metric.
 * store_series_identity_cmp compares the identity alone; store_series_cmp,
 * a qsort comparator of struct kg_series, the whole order. */
int store_series_identity_cmp(const struct kg_series *a, const struct kg_series *b);
int store_series_cmp(const void *a, const void *b);
struct kg_sampleset {
	struct kg_series *s;
	size_t n;
	char **pool;            /* when set: owns the series' names, which */
	size_t n_pool;          /* series share (store_load_samples) */
};
int store_load_samples(struct kg_store *st, const int64_t *run_ids, size_t n_runs,
		       struct kg_sampleset *out);
void store_sampleset_free(struct kg_sampleset *set);
/* Sort the set (store_series_cmp) and merge the series of one identity and
 * metric into one (their values in the order sorted). */
void store_sampleset_merge(struct kg_sampleset *set);
/* Keep only the series of the n benchmarks named (freeing the others). */
void store_sampleset_keep(struct kg_sampleset *set, char *const *benchmarks, size_t n);
/* Pool the ranks: the series of one (benchmark, nvtx, kernel, metric) that
 * differ only by rank become one series without a rank, their values in
 * rank order.  Series without a rank are left as they are. */
void store_sampleset_pool_ranks(struct kg_sampleset *set);

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

/*
 * The trend report's reads: the rows of a name table by id, and the
 * samples of many runs streamed as ids, never held all at once.  Ids are
 * the store's own keys (any int64), the same in both.
 */
enum kg_name_table { KG_NAMES_BENCHMARK, KG_NAMES_NVTX, KG_NAMES_KERNEL, KG_NAMES_METRIC };
struct kg_name_row {
	int64_t id;
	const char *name;       /* benchmark name, NVTX path, mangled kernel name, metric name */
	const char *demangled;  /* kernels only, else NULL */
	const char *unit;       /* metrics only, else NULL */
	int deterministic;      /* metrics only */
};
typedef int (*kg_name_fn)(void *arg, const struct kg_name_row *r);   /* non-zero stops */
/* Every row of table t, ascending by id. */
int store_names_each(struct kg_store *st, enum kg_name_table t, kg_name_fn fn, void *arg);

/*
 * A reader of streamed samples.  part[0 .. n_parts) are the reader's
 * states: the store may read with up to n_parts threads at once, each
 * passing rows to its own part.  Within a part, each run's rows come
 * together (never interleaved with another run's), and each run comes in
 * one part only.  reset(part) says that the part's rows so far are void
 * (they come again, perhaps in another part).
 */
struct kg_sample_reader {
	void *const *part;
	unsigned n_parts;
	void (*row)(void *part, int64_t run, int64_t benchmark, int64_t nvtx, int64_t kernel,
		    int64_t metric, double value);
	void (*reset)(void *part);
};
/* Every sample of the runs run_ids[0 .. n_runs) (any order, no run twice)
 * to rd. */
int store_samples_stream(struct kg_store *st, const int64_t *run_ids, size_t n_runs,
			 const struct kg_sample_reader *rd);

/* The points (kgate/points.h's blob) of each run among run_ids[0 ..
 * n_runs) that has them stored, to fn(arg, run, data, len) in the order
 * asked (fn returns non-zero to stop).  A run without (its samples too
 * many to summarise when stored) is left out: read its samples instead. */
typedef int (*kg_points_fn)(void *arg, int64_t run, const void *data, size_t len);
int store_run_points(struct kg_store *st, const int64_t *run_ids, size_t n_runs,
		     kg_points_fn fn, void *arg);

/* ---- Checks: verdicts and explanations ---- */

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
int store_verdicts_put(struct kg_store *st, int64_t head_run, const char *baseline,
		       const struct kg_outcome *o, const struct kg_verdict_row *rows, size_t n,
		       const struct kg_explain_row *x, size_t nx);
/* The same, ranks[i] the rank of a distributed job that row i compared (-1:
 * none); ranks NULL: none has a rank. */
int store_verdicts_put_ranked(struct kg_store *st, int64_t head_run, const char *baseline,
			      const struct kg_outcome *o, const struct kg_verdict_row *rows,
			      const int *ranks, size_t n, const struct kg_explain_row *x, size_t nx);
/* Explanations alone (kgate explain), in one transaction. */
int store_explanations_put(struct kg_store *st, int64_t head_run, const char *baseline,
			   const struct kg_explain_row *x, size_t nx);

/* Which check store_check_newest finds: the newest of a commit (full SHA or
 * a prefix) when commit is set, else the newest of the runs on branch
 * (NULL: any) since since (unix seconds, 0 for all). */
struct kg_check_filter {
	const char *commit;
	const char *branch;
	int64_t since;
};
/* A stored check (a checks row): its outcome as stored, the counts left 0. */
struct kg_stored_check {
	int64_t id;             /* 0: none found */
	int64_t run;
	char *commit;           /* the run's */
	char *baseline;
	int64_t time;
	struct kg_outcome outcome;
};
/* 0 with out->id 0 when there is none.  Free with store_check_free. */
int store_check_newest(struct kg_store *st, const struct kg_check_filter *f,
		       struct kg_stored_check *out);
void store_check_free(struct kg_stored_check *c);

/* A stored verdict row as read back: verdict is the stored key (verdict.h),
 * demangled the kernel's demangled name (= kernel when unknown), numbers
 * NAN where none was stored. */
struct kg_verdict_rec {
	const char *benchmark, *nvtx, *kernel, *demangled, *metric, *verdict, *message;
	double shift, lo, hi, p, base_value, head_value;
	int64_t n_base, n_head;
	int fails;
	int ranked, rank;           /* the rank compared (ranked 1), or none */
};
typedef int (*kg_verdict_fn)(void *arg, const struct kg_verdict_rec *r);   /* non-zero stops */
/* The verdict rows of check check_id, in the order stored. */
int store_check_verdicts(struct kg_store *st, int64_t check_id, kg_verdict_fn fn, void *arg);

typedef int (*kg_explain_fn)(void *arg, const struct kg_explain_row *x);  /* non-zero stops */
/* The explanations stored for run, newest first. */
int store_run_explanations(struct kg_store *st, int64_t run, kg_explain_fn fn, void *arg);


#endif
