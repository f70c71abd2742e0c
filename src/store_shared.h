/*
 * store_shared.h: what the store's backends share that is not SQL, so that
 * each backend file holds only its queries and its connection.
 *
 * Owns the name caches of the write path (benchmark, NVTX path, kernel and
 * metric names to their row ids, open addressing), the list of benchmarks
 * the open run ran with their GPU states, and the orderings both backends
 * sort by (run ids, and series by benchmark, NVTX path, kernel, metric as
 * kgate's loaders promise).  Internal to the store: included by
 * store_<backend>.c only.
 */
#ifndef KGATE_STORE_SHARED_H
#define KGATE_STORE_SHARED_H

#include <stddef.h>
#include <stdint.h>

/* ---- string -> row id cache ---- */

struct namemap_ent {
	char *key;
	int64_t id;
};
struct namemap {
	struct namemap_ent *e;
	size_t cap, n;          /* cap: 0 or a power of two */
	size_t last;            /* 1 + the slot namemap_get found last; 0: none */
};

/* The id cached for key, or 0.  The entry found last is tried first: a
 * kernel record's samples name the same benchmark, NVTX path and kernel. */
int64_t namemap_get(struct namemap *m, const char *key);
/* Cache key -> id (replacing an earlier id); the key is copied. */
void namemap_put(struct namemap *m, const char *key, int64_t id);
/* Forget everything; the map can be used again. */
void namemap_clear(struct namemap *m);

/* ---- the benchmarks of the open run ---- */

struct runbench {
	int64_t *id;            /* benchmark ids, in the order first seen */
	char **state;           /* their GPU-state JSON, or NULL */
	size_t n, cap;
};

/* The slot of benchmark id b in the open run, added when new. */
size_t runbench_note(struct runbench *rb, int64_t b);
/* Set slot i's GPU state (copied; NULL clears it). */
void runbench_set_state(struct runbench *rb, size_t i, const char *state);
/* A new run: no benchmarks (the slots are kept for reuse). */
void runbench_reset(struct runbench *rb);
void runbench_free(struct runbench *rb);

/* ---- the runs table's columns ---- */

/* What the backends select of a run (SELECT STORE_RUN_COLS FROM runs), in
 * this order: id and time are integers, every other column one string of
 * struct kg_run_info. */
#define STORE_RUN_COLS "id, commit_sha, branch, parent, time, host, gpu_name, gpu_uuid," \
		       " gpu_chip, driver, cuda, collector, config_hash, source, label, ci_url," \
		       " status, devices"
enum { STORE_RUN_COL_ID = 0, STORE_RUN_COL_TIME = 4, STORE_RUN_NCOLS = 18 };
/* The string of run that column col of STORE_RUN_COLS holds; NULL for
 * id and time. */
struct kg_run_info;
char **store_run_text(struct kg_run_info *run, int col);

/* ---- the run filter ---- */

/*
 * Append to sql (a "SELECT ... FROM runs WHERE <true>") the conditions,
 * order and limit of f (NULL: all runs, newest first), with the parameters
 * numbered as the backends bind them: 1 the full commit (when has_commit),
 * 2 branch, 3 GPU name, 4 driver, 5 label, 6 since, 7 limit; mark is the
 * parameters' sign ('?' SQLite, '$' PostgreSQL).
 */
struct kg_buf;
struct kg_run_filter;
void store_run_filter_sql(struct kg_buf *sql, const struct kg_run_filter *f, int has_commit,
			  char mark);

/* ---- orderings ---- */

/* qsort comparator: int64_t ascending (series: store_series_cmp, store.h). */
int store_cmp_id(const void *a, const void *b);

/* Whether a kernel name is an Itanium-mangled one ("_Z..."). */
int store_is_mangled(const char *name);

#endif
