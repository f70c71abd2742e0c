/*
 * store_backend.h: the method table behind include/kgate/store.h, in the
 * manner of SQLite's VFS or curl's TLS backends.
 *
 * store.c owns the public store functions as thin wrappers: it picks a
 * backend by the scheme of the database named (--db, KGATE_DB), checks what
 * every backend would check alike (a read-only store is not written, one
 * run open at a time), and calls the backend's method.  A backend owns its
 * connection, its schema and forward migrations (versioned, applied on
 * open; a newer schema is refused untouched), every query kgate makes of
 * it, bound parameters only, and each run written in one transaction.
 *
 * A backend's store begins with struct kg_store (its first member), which
 * the backend fills at open; the rest is the backend's own.  Every method
 * that can fail prints "kgate: ..." on stderr and returns an enum kg_exit,
 * as store.h says of the public function it serves.  A new backend is one
 * file (store_<name>.c) defining a struct kg_store_backend, and a line of
 * store.c's table.
 */
#ifndef KGATE_STORE_BACKEND_H
#define KGATE_STORE_BACKEND_H

#include "kgate/store.h"

/* What every backend's store begins with. */
struct kg_store {
	const struct kg_store_backend *be;
	char *name;             /* the database as messages name it (store.c sets it after open) */
	int readonly;           /* opened with KG_STORE_READONLY (the backend sets it) */
	int in_run;             /* a run is open: set by run_begin, cleared by run_commit
				 * and run_abort, and by the backend when it aborts */
	int rank;               /* the rank of the samples added next (store_run_rank);
				 * -1: none.  store.c resets it at run_begin */
	char *devices;          /* the open run's device set as runs.devices holds it
				 * (store.c builds it; NULL: none said), written by
				 * the backend's run_commit */
};

struct kg_store_backend {
	const char *name;       /* "SQLite" */
	/* Open target (the --db value less the scheme the backend takes, e.g.
	 * a path) at schema version (migrating forward to it when writable).
	 * shown: target as messages name it (a password hidden). */
	int (*open)(const char *target, const char *shown, int flags, int version,
		    struct kg_store **out);
	void (*close)(struct kg_store *st);
	int (*exists)(const char *target);      /* store_exists, store_writable */
	int (*writable)(const char *target);
	int (*schema_version)(void);
	/* A new database at an older schema version (migration tests). */
	int (*create_at_version)(const char *target, const char *shown, int version);

	/* Writing a run (store.c has checked readonly and in_run). */
	int (*run_begin)(struct kg_store *st, struct kg_run_info *run);
	int (*sample_add)(struct kg_store *st, const char *benchmark, const char *nvtx,
			  const struct kg_kernel_name *kernel, const char *metric,
			  const char *unit, int deterministic, int repeat, int64_t ordinal,
			  double value);
	int (*run_benchmark_add)(struct kg_store *st, const char *benchmark);
	int (*run_benchmark_state)(struct kg_store *st, const char *benchmark,
				   const char *gpu_state);
	int (*run_commit)(struct kg_store *st);     /* aborts the run when it fails */
	void (*run_abort)(struct kg_store *st);

	/* Checks and explanations, each call one transaction. */
	int (*verdicts_put)(struct kg_store *st, int64_t head_run, const char *baseline,
			    const struct kg_outcome *o, const struct kg_verdict_row *rows,
			    const int *ranks, size_t n,
			    const struct kg_explain_row *x, size_t nx);
	int (*explanations_put)(struct kg_store *st, int64_t head_run, const char *baseline,
				const struct kg_explain_row *x, size_t nx);

	/* Reading runs. */
	int64_t (*run_count)(struct kg_store *st);
	int (*find_runs)(struct kg_store *st, const struct kg_run_filter *f,
			 struct kg_run_info **runs, size_t *n);
	int (*run_get)(struct kg_store *st, int64_t id, struct kg_run_info *out);
	int (*run_benchmarks)(struct kg_store *st, int64_t run, char ***names, size_t *n);
	int (*run_gpu_states)(struct kg_store *st, int64_t run, char ***names, char ***states,
			      size_t *n);
	int (*run_metrics)(struct kg_store *st, int64_t run, char ***names, size_t *n);

	/* Reading samples. */
	int (*load_samples)(struct kg_store *st, const int64_t *run_ids, size_t n_runs,
			    struct kg_sampleset *out);
	int (*summary_values)(struct kg_store *st, int64_t run, const char *metric,
			      enum kg_summary_by by, struct kg_summary_group **groups, size_t *n);
	int (*names_each)(struct kg_store *st, enum kg_name_table t, kg_name_fn fn, void *arg);
	int (*samples_stream)(struct kg_store *st, const int64_t *run_ids, size_t n_runs,
			      const struct kg_sample_reader *rd);
	int (*run_samples_each)(struct kg_store *st, int64_t run, kg_sample_fn fn, void *arg);
	int (*run_points)(struct kg_store *st, const int64_t *run_ids, size_t n_runs,
			  kg_points_fn fn, void *arg);

	/* Reading checks. */
	int (*check_newest)(struct kg_store *st, const struct kg_check_filter *f,
			    struct kg_stored_check *out);
	int (*check_verdicts)(struct kg_store *st, int64_t check_id, kg_verdict_fn fn, void *arg);
	int (*run_explanations)(struct kg_store *st, int64_t run, kg_explain_fn fn, void *arg);
};

/* The backends (one file each). */
extern const struct kg_store_backend store_sqlite_backend;
extern const struct kg_store_backend store_pg_backend;

/* A database name with any password in it (a URL's user:password@, a
 * password=... parameter) replaced by "***"; malloc'd. */
char *store_target_shown(const char *target);

#endif
