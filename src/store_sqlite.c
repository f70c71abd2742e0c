/*
 * store_sqlite.c: the SQLite backend of the store (store_backend.h); every
 * sqlite3_ call of kgate is here.
 *
 * Owns the schema (docs/schema.md), its forward migrations (a list of SQL
 * steps indexed by PRAGMA user_version), the write path of a run (one
 * BEGIN IMMEDIATE transaction, cached prepared statements, hash-map caches
 * that intern benchmark, kernel, metric and NVTX names), and the read
 * queries of runs, samples, checks, verdicts and explanations, the trend
 * report's among them (a scan of the samples table in two threads when it
 * reads most of it).  Bound parameters only.
 */
#include "store_backend.h"
#include "store_shared.h"

#include "kgate/metric.h"
#include "kgate/points.h"
#include "kgate/store.h"
#include "kgate/verdict.h"
#include "kgate/util.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Schema and migrations                                               */

/*
 * migrations[i] takes a database from user_version i to i + 1.  Never edit
 * a step once released; append a new one.
 */
static const char *const migrations[] = {
	/* 0 -> 1: the first schema */
	"CREATE TABLE runs ("
	"  id INTEGER PRIMARY KEY,"
	"  commit_sha TEXT NOT NULL,"
	"  branch TEXT, parent TEXT,"
	"  time INTEGER NOT NULL,"
	"  host TEXT,"
	"  gpu_name TEXT, gpu_uuid TEXT, gpu_chip TEXT, driver TEXT, cuda TEXT,"
	"  collector TEXT, config_hash TEXT, source TEXT,"
	"  status TEXT NOT NULL DEFAULT 'ok');"
	"CREATE INDEX runs_commit ON runs(commit_sha);"
	"CREATE TABLE benchmarks (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
	"CREATE TABLE kernels (id INTEGER PRIMARY KEY, mangled TEXT NOT NULL UNIQUE,"
	"  demangled TEXT NOT NULL, base TEXT NOT NULL);"
	"CREATE INDEX kernels_demangled ON kernels(demangled);"
	"CREATE TABLE metrics (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
	"  unit TEXT, deterministic INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE nvtx (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);"
	"CREATE TABLE samples ("
	"  id INTEGER PRIMARY KEY,"
	"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  benchmark INTEGER NOT NULL REFERENCES benchmarks(id),"
	"  nvtx INTEGER NOT NULL REFERENCES nvtx(id),"
	"  kernel INTEGER NOT NULL REFERENCES kernels(id),"
	"  metric INTEGER NOT NULL REFERENCES metrics(id),"
	"  repeat INTEGER NOT NULL,"
	"  ordinal INTEGER NOT NULL,"
	"  value REAL NOT NULL);"
	/* a run's samples are appended in one transaction: this index only
	 * ever grows at its end, and finds a run's rows for check */
	"CREATE INDEX samples_run ON samples(run);",

	/* 1 -> 2: labels and CI links on runs, stored verdicts, a readable view */
	"ALTER TABLE runs ADD COLUMN label TEXT;"
	"ALTER TABLE runs ADD COLUMN ci_url TEXT;"
	"CREATE INDEX runs_time ON runs(time);"
	"CREATE TABLE verdicts ("
	"  id INTEGER PRIMARY KEY,"
	"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  baseline TEXT,"
	"  time INTEGER NOT NULL,"
	"  benchmark TEXT NOT NULL, nvtx TEXT NOT NULL, kernel TEXT NOT NULL,"
	"  metric TEXT NOT NULL,"
	"  verdict TEXT NOT NULL,"
	"  shift REAL, lo REAL, hi REAL, p REAL,"
	"  base_value REAL, head_value REAL,"
	"  n_base INTEGER, n_head INTEGER,"
	"  message TEXT);"
	"CREATE INDEX verdicts_run ON verdicts(run);"
	"CREATE VIEW samples_named AS"
	"  SELECT s.run, b.name AS benchmark, n.path AS nvtx, k.mangled AS kernel,"
	"         k.demangled, k.base, m.name AS metric, m.unit, m.deterministic,"
	"         s.repeat, s.ordinal, s.value"
	"  FROM samples s JOIN benchmarks b ON b.id = s.benchmark"
	"  JOIN nvtx n ON n.id = s.nvtx JOIN kernels k ON k.id = s.kernel"
	"  JOIN metrics m ON m.id = s.metric;",

	/* 2 -> 3: why a kernel regressed, beside the verdicts */
	"CREATE TABLE explanations ("
	"  id INTEGER PRIMARY KEY,"
	"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  baseline TEXT,"
	"  time INTEGER NOT NULL,"
	"  benchmark TEXT NOT NULL, nvtx TEXT NOT NULL,"
	"  base_kernel TEXT NOT NULL, head_kernel TEXT NOT NULL,"
	"  why TEXT NOT NULL,"
	"  details TEXT NOT NULL);"
	"CREATE INDEX explanations_run ON explanations(run);",

	/* 3 -> 4: the outcome of each check, stored once (the verdict every
	 * rendering reads); which row made it fail; the benchmarks a run ran.
	 * Checks stored before are given the outcome "kgate comment" showed
	 * for them then (fail when a row is fail or missing); their policies
	 * are not known (NULL). */
	"CREATE TABLE checks ("
	"  id INTEGER PRIMARY KEY,"
	"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  baseline TEXT,"
	"  time INTEGER NOT NULL,"
	"  verdict TEXT NOT NULL,"
	"  exit_status INTEGER NOT NULL,"
	"  on_new_kernel TEXT, on_missing_kernel TEXT, on_inconclusive TEXT, on_no_baseline TEXT,"
	"  note TEXT, not_compared TEXT);"
	"CREATE INDEX checks_run ON checks(run);"
	"ALTER TABLE verdicts ADD COLUMN fails INTEGER;"
	"ALTER TABLE verdicts ADD COLUMN check_id INTEGER REFERENCES checks(id);"
	"INSERT INTO checks(run, baseline, time, verdict, exit_status)"
	"  SELECT run, baseline, time,"
	"    CASE WHEN sum(verdict IN ('fail', 'missing')) > 0 THEN 'fail' ELSE 'pass' END,"
	"    CASE WHEN sum(verdict IN ('fail', 'missing')) > 0 THEN 1 ELSE 0 END"
	"  FROM verdicts GROUP BY run, baseline, time ORDER BY min(id);"
	"UPDATE verdicts SET fails = verdict IN ('fail', 'missing'),"
	"  check_id = (SELECT c.id FROM checks c WHERE c.run = verdicts.run"
	"    AND c.time = verdicts.time AND c.baseline IS verdicts.baseline);"
	"CREATE INDEX verdicts_check ON verdicts(check_id);"
	"CREATE TABLE run_benchmarks ("
	"  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  benchmark INTEGER NOT NULL REFERENCES benchmarks(id),"
	"  PRIMARY KEY (run, benchmark)) WITHOUT ROWID;",

	/* 4 -> 5: what the GPU was doing around each benchmark's processes
	 * (gpustate.h's summary, as JSON); NULL for runs stored before */
	"ALTER TABLE run_benchmarks ADD COLUMN gpu_state TEXT;",

	/* 5 -> 6: distributed jobs: the rank of each sample (NULL: a single
	 * process), the rank of each verdict, the devices of each run (a JSON
	 * array; NULL for runs stored before) */
	"ALTER TABLE samples ADD COLUMN rank INTEGER;"
	"ALTER TABLE verdicts ADD COLUMN rank INTEGER;"
	"ALTER TABLE runs ADD COLUMN devices TEXT;"
	"DROP VIEW samples_named;"
	"CREATE VIEW samples_named AS"
	"  SELECT s.run, b.name AS benchmark, n.path AS nvtx, k.mangled AS kernel,"
	"         k.demangled, k.base, m.name AS metric, m.unit, m.deterministic,"
	"         s.repeat, s.ordinal, s.value, s.rank"
	"  FROM samples s JOIN benchmarks b ON b.id = s.benchmark"
	"  JOIN nvtx n ON n.id = s.nvtx JOIN kernels k ON k.id = s.kernel"
	"  JOIN metrics m ON m.id = s.metric;",

	/* 6 -> 7: each run's points (kgate/points.h: per series, the count,
	 * median, quartiles and range of its samples in the run) as one blob,
	 * which the trend report reads instead of every sample; runs stored
	 * before are backfilled from their samples (backfill_points).  Samples
	 * changed or removed with SQL void their runs' points (the report
	 * then reads those runs' samples); no trigger on INSERT, which would
	 * cost every sample kgate stores.  The application id: "kgat" */
	"CREATE TABLE run_points ("
	"  run INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,"
	"  data BLOB NOT NULL);"
	"CREATE TRIGGER samples_update_points AFTER UPDATE ON samples BEGIN"
	"  DELETE FROM run_points WHERE run IN (OLD.run, NEW.run); END;"
	"CREATE TRIGGER samples_delete_points AFTER DELETE ON samples BEGIN"
	"  DELETE FROM run_points WHERE run = OLD.run; END;"
	"CREATE TRIGGER runs_delete_points AFTER DELETE ON runs BEGIN"
	"  DELETE FROM run_points WHERE run = OLD.id; END;"
	/* the file says it is kgate's in its header ("kgat" at byte 68):
	 * the schema's text no longer fits its first page, where the
	 * importers' sniffers looked for it */
	"PRAGMA application_id = 1801937268;",
};
#define SCHEMA_VERSION ((int)(sizeof(migrations) / sizeof(migrations[0])))

static int sq_schema_version(void)
{
	return SCHEMA_VERSION;
}

/* ------------------------------------------------------------------ */

enum {
	Q_SAMPLE, Q_BENCH_GET, Q_BENCH_ADD, Q_NVTX_GET, Q_NVTX_ADD,
	Q_KERN_GET, Q_KERN_BY_DEM, Q_KERN_ADD, Q_KERN_RENAME,
	Q_METRIC_GET, Q_METRIC_ADD, Q_COUNT
};

static const char *const query_sql[Q_COUNT] = {
	[Q_SAMPLE] = ("INSERT INTO samples(run, benchmark, nvtx, kernel, metric, repeat, ordinal,"
		      " value, rank) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
	[Q_BENCH_GET] = "SELECT id FROM benchmarks WHERE name = ?",
	[Q_BENCH_ADD] = "INSERT INTO benchmarks(name) VALUES (?)",
	[Q_NVTX_GET] = "SELECT id FROM nvtx WHERE path = ?",
	[Q_NVTX_ADD] = "INSERT INTO nvtx(path) VALUES (?)",
	[Q_KERN_GET] = "SELECT id FROM kernels WHERE mangled = ?",
	[Q_KERN_BY_DEM] = "SELECT id, mangled FROM kernels WHERE demangled = ? ORDER BY id LIMIT 1",
	[Q_KERN_ADD] = "INSERT INTO kernels(mangled, demangled, base) VALUES (?, ?, ?)",
	[Q_KERN_RENAME] = "UPDATE kernels SET mangled = ? WHERE id = ?",
	[Q_METRIC_GET] = "SELECT id FROM metrics WHERE name = ?",
	[Q_METRIC_ADD] = "INSERT INTO metrics(name, unit, deterministic) VALUES (?, ?, ?)",
};

/*
 * Samples are inserted SAMPLE_ROWS to a statement: one sqlite3_step per row
 * costs about half again the VDBE work of the row itself (INSERT of 1M
 * samples: 1.0 s one row a statement, 0.68 s 16 rows).  The rows wait in
 * struct sq until the batch is full, or until anything else runs SQL
 * (query(), the run's commit, the readers of samples).
 */
#define SAMPLE_ROWS 32

/* The SQLite store: struct kg_store, then its own. */
struct sq {
	struct kg_store base;
	sqlite3 *db;
	char *path;
	int64_t run_id;
	sqlite3_stmt *q[Q_COUNT];
	struct namemap bench, nvtx, kern, metric;
	struct runbench rb;     /* the benchmarks of the open run */
	int version;            /* the schema version it was opened at */
	struct points_acc acc;  /* the open run's points (schema 7 on) */
	struct kg_buf blob;
	/* samples added and not yet inserted: SAMPLE_ROWS of them go in one
	 * INSERT of that many rows (flush_samples) */
	struct pend_sample {
		int64_t b, n, k, m, ordinal;
		double value;
		int repeat, rank;
	} pend[SAMPLE_ROWS];
	size_t npend;
	sqlite3_stmt *many;     /* the INSERT of SAMPLE_ROWS rows */
};

static int db_fail(struct sq *st, const char *what)
{
	kg_error("database '%s': %s: %s", st->path, what, sqlite3_errmsg(st->db));
	return KG_EXIT_RUNTIME;
}

/* A statement of sql with its one parameter (?1) bound to id; NULL after
 * saying "what" failed. */
static sqlite3_stmt *prepare_id(struct sq *st, const char *what, const char *sql, int64_t id)
{
	sqlite3_stmt *s;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
		db_fail(st, what);
		return NULL;
	}
	sqlite3_bind_int64(s, 1, id);
	return s;
}

static int flush_samples(struct sq *st);

static sqlite3_stmt *query(struct sq *st, int which)
{
	if (which != Q_SAMPLE && st->npend && flush_samples(st) != KG_EXIT_PASS)
		return NULL;
	if (!st->q[which]) {
		if (sqlite3_prepare_v3(st->db, query_sql[which], -1, SQLITE_PREPARE_PERSISTENT,
				       &st->q[which], NULL) != SQLITE_OK) {
			db_fail(st, "prepare");
			return NULL;
		}
	} else {
		sqlite3_reset(st->q[which]);
		sqlite3_clear_bindings(st->q[which]);
	}
	return st->q[which];
}

static int exec_sql(sqlite3 *db, const char *sql, char **err)
{
	return sqlite3_exec(db, sql, NULL, NULL, err);
}

static int busy_timeout_ms(void)
{
	const char *e = getenv("KGATE_BUSY_TIMEOUT_MS");
	if (e && *e) {
		char *end;
		long v = strtol(e, &end, 10);
		if (*end == '\0' && v >= 0 && v < 86400000L)
			return (int)v;
		kg_warn("KGATE_BUSY_TIMEOUT_MS='%s' is not a number of milliseconds; using 10000", e);
	}
	return 10000;
}

/* PRAGMA data_version: changes when another connection commits; -1 when it
 * cannot be read (a rollback-journal database another process writes). */
static long long data_version(sqlite3 *db)
{
	sqlite3_stmt *s;
	long long v = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA data_version", -1, &s, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/*
 * BEGIN IMMEDIATE, retried.  SQLite's busy handler waits up to the busy
 * timeout for the write lock, and is not fair: with several writers queued
 * (kgate ingests of a CI's parallel jobs), a waiter can lose to every
 * newcomer until its timeout runs out although each writer holds the lock
 * for a moment only.  So a writer that still finds the lock held pauses (a
 * tenth of the busy timeout, up to twice that at random) and tries again,
 * for as long as other writers keep committing; it gives up when
 * STALE_TRIES attempts in a row saw no commit (one transaction held the
 * lock all that time), or after MAX_TRIES attempts.
 */
#define STALE_TRIES 4
#define MAX_TRIES 1000
static int begin_immediate(sqlite3 *db, const char *path)
{
	long base = busy_timeout_ms() / 10;
	unsigned seed = (unsigned)getpid() ^ (unsigned)time(NULL);
	long long seen = data_version(db);
	int rc = exec_sql(db, "BEGIN IMMEDIATE", NULL);

	for (int i = 1, stale = 1; i < MAX_TRIES && stale < STALE_TRIES &&
				   (rc & 0xff) == SQLITE_BUSY; i++) {
		long ms = base + (base ? (long)(rand_r(&seed) % base) : 0);
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		if (i == 1)
			kg_note("database '%s': another writer holds its write lock; waiting on",
				path);
		nanosleep(&ts, NULL);
		long long now = data_version(db);
		if (now >= 0 && now != seen) {
			stale = 0;      /* someone committed: the queue moves */
			seen = now;
		}
		rc = exec_sql(db, "BEGIN IMMEDIATE", NULL);
		if ((rc & 0xff) == SQLITE_BUSY)
			stale++;
	}
	return rc;
}

static int read_user_version(sqlite3 *db, int *v)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*v = sqlite3_column_int(s, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(s);
	return rc;
}

/* The open run's points (st->acc) stored: 0 also when it has none. */
static int points_write(struct sq *st, int64_t run)
{
	sqlite3_stmt *s;
	int rc = KG_EXIT_PASS;

	/* none: read sample by sample (and no row left of a deleted run
	 * whose id this one reuses) */
	int none = points_encode(&st->acc, &st->blob) != 0;
	points_reset(&st->acc);
	if (sqlite3_prepare_v2(st->db, none ? "DELETE FROM run_points WHERE run = ?"
			       : "INSERT OR REPLACE INTO run_points(run, data) VALUES (?, ?)", -1, &s,
			       NULL) != SQLITE_OK)
		return db_fail(st, "cannot store the run's points");
	sqlite3_bind_int64(s, 1, run);
	if (!none)
		sqlite3_bind_blob64(s, 2, st->blob.s, st->blob.len, SQLITE_STATIC);
	if (sqlite3_step(s) != SQLITE_DONE)
		rc = db_fail(st, "cannot store the run's points");
	sqlite3_finalize(s);
	buf_free(&st->blob);
	return rc;
}

/* Migration to schema 7: the points of every run stored before, from its
 * samples (inside the migration's transaction). */
static int backfill_points(struct sq *st)
{
	sqlite3_stmt *r, *s;
	int rc = KG_EXIT_PASS, step;

	if (sqlite3_prepare_v2(st->db, "SELECT id FROM runs ORDER BY id", -1, &r, NULL) != SQLITE_OK)
		return db_fail(st, "migration to schema 7: cannot list the runs");
	if (sqlite3_prepare_v2(st->db, "SELECT benchmark, nvtx, kernel, metric, value FROM samples"
			       " WHERE run = ?", -1, &s, NULL) != SQLITE_OK) {
		sqlite3_finalize(r);
		return db_fail(st, "migration to schema 7: cannot read the samples");
	}
	while (rc == KG_EXIT_PASS && (step = sqlite3_step(r)) == SQLITE_ROW) {
		int64_t run = sqlite3_column_int64(r, 0);
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, run);
		while ((step = sqlite3_step(s)) == SQLITE_ROW)
			points_add(&st->acc, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
				   sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3),
				   sqlite3_column_double(s, 4));
		if (step != SQLITE_DONE)
			rc = db_fail(st, "migration to schema 7: cannot read the samples");
		else
			rc = points_write(st, run);
	}
	if (rc == KG_EXIT_PASS && step != SQLITE_DONE)
		rc = db_fail(st, "migration to schema 7: cannot list the runs");
	points_reset(&st->acc);
	sqlite3_finalize(s);
	sqlite3_finalize(r);
	return rc;
}

/* Migrate from the version found to target, in one transaction. */
static int migrate(struct sq *st, int target)
{
	char *err = NULL;
	int v = 0;

	if (begin_immediate(st->db, st->path) != SQLITE_OK)
		return db_fail(st, "cannot lock for migration");
	if (read_user_version(st->db, &v) != SQLITE_OK) {
		int rc = db_fail(st, "cannot read schema version");
		exec_sql(st->db, "ROLLBACK", NULL);
		return rc;
	}
	if (v < 0 || v > target) {
		/* another process changed it since open_db looked */
		exec_sql(st->db, "ROLLBACK", NULL);
		kg_error("cannot open '%s': database schema version %d is not one this kgate "
			 "can migrate to %d", st->path, v, target);
		return KG_EXIT_RUNTIME;
	}
	if (v == 0) {
		/* A SQLite file with tables but without our schema is not ours to
		 * touch.  Checked under the lock: another kgate may have just
		 * created the schema. */
		sqlite3_stmt *s;
		int nobj = 0;
		if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM sqlite_master", -1, &s,
				       NULL) == SQLITE_OK) {
			if (sqlite3_step(s) == SQLITE_ROW)
				nobj = sqlite3_column_int(s, 0);
			sqlite3_finalize(s);
		}
		if (nobj > 0) {
			exec_sql(st->db, "ROLLBACK", NULL);
			kg_error("cannot open '%s': a SQLite database, but not a kgate one", st->path);
			return KG_EXIT_RUNTIME;
		}
	}
	for (; v < target; v++) {
		if (exec_sql(st->db, migrations[v], &err) != SQLITE_OK) {
			kg_error("database '%s': migration from schema %d to %d failed: %s",
				 st->path, v, v + 1, err ? err : "?");
			sqlite3_free(err);
			exec_sql(st->db, "ROLLBACK", NULL);
			return KG_EXIT_RUNTIME;
		}
		if (v + 1 == 7 && backfill_points(st) != KG_EXIT_PASS) {
			exec_sql(st->db, "ROLLBACK", NULL);
			return KG_EXIT_RUNTIME;
		}
	}
	char pragma[64];
	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", target);
	if (exec_sql(st->db, pragma, NULL) != SQLITE_OK ||
	    exec_sql(st->db, "COMMIT", NULL) != SQLITE_OK) {
		int rc = db_fail(st, "migration");
		exec_sql(st->db, "ROLLBACK", NULL);
		return rc;
	}
	return KG_EXIT_PASS;
}

static void sq_close(struct kg_store *kst);
static void sq_run_abort(struct kg_store *kst);

static int open_db(const char *path, int flags, int target, struct sq **out)
{
	struct sq *st = xcalloc(1, sizeof(*st));
	int ro = (flags & KG_STORE_READONLY) != 0;
	int rc, v = 0;

	*out = NULL;
	st->base.be = &store_sqlite_backend;
	st->path = xstrdup(path);
	st->base.readonly = ro;
	st->version = target;
	if (ro && access(path, F_OK) != 0) {
		kg_error("cannot open '%s': %s", path, strerror(errno));
		goto fail;
	}
	struct stat sb;
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		/* SQLite would block for ever reading a FIFO */
		kg_error("cannot open '%s': not a regular file", path);
		goto fail;
	}
	/* kgate reads no memory statistics of SQLite's; keeping them takes a
	 * global mutex for every allocation (about 8% of inserting a
	 * sample).  Only before SQLite is initialised; later calls are
	 * refused, harmlessly. */
	static int configured;
	if (!configured) {
		configured = 1;
		sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	}
	rc = sqlite3_open_v2(path, &st->db,
			     (ro ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
			     SQLITE_OPEN_NOMUTEX,
			     NULL);
	if (rc != SQLITE_OK) {
		kg_error("cannot open '%s': %s", path, st->db ? sqlite3_errmsg(st->db) : "out of memory");
		goto fail;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, busy_timeout_ms());
	rc = read_user_version(st->db, &v);
	if (rc != SQLITE_OK && ro) {
		/* A WAL database on read-only media, without its -shm file (SQLite
		 * cannot create it): open it as immutable, which reads the main
		 * file alone.  Committed transactions still in the -wal file
		 * would then be silently missing, so a -wal that holds anything
		 * is refused. */
		char *wal = xasprintf("%s-wal", path);
		struct stat wb;
		int wal_used = stat(wal, &wb) == 0 && wb.st_size > 0;
		free(wal);
		if (wal_used) {
			kg_error("cannot open '%s': its write-ahead log '%s-wal' holds changes "
				 "that cannot be read without '%s-shm' on read-only media (%s); "
				 "copy the three files to writable storage", path, path, path,
				 sqlite3_errmsg(st->db));
			goto fail;
		}
		sqlite3_close(st->db);
		st->db = NULL;
		char *uri = sqlite3_mprintf("file:%q?immutable=1", path);
		rc = sqlite3_open_v2(uri, &st->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
				     NULL);
		sqlite3_free(uri);
		if (rc == SQLITE_OK)
			rc = read_user_version(st->db, &v);
	}
	if (rc != SQLITE_OK) {
		kg_error("cannot open '%s': %s", path, sqlite3_errmsg(st->db));
		goto fail;
	}
	if (v < 0) {
		kg_error("cannot open '%s': database schema version %d is not one kgate "
			 "writes (a damaged or foreign file); left untouched", path, v);
		goto fail;
	}
	if (v > SCHEMA_VERSION) {
		kg_error("cannot open '%s': database schema version %d is newer than this kgate "
			 "understands (%d); upgrade kgate", path, v, SCHEMA_VERSION);
		goto fail;
	}
	if (ro) {
		if (v == 0) {
			kg_error("cannot open '%s': not a kgate database (no schema)", path);
			goto fail;
		}
		if (v < SCHEMA_VERSION) {
			kg_error("cannot open '%s': database schema version %d is older than %d; "
				 "run 'kgate ingest' on it once to migrate it", path, v, SCHEMA_VERSION);
			goto fail;
		}
	} else {
		/* migrate first: a refused file must not even be switched to WAL */
		if (v < target && migrate(st, target) != KG_EXIT_PASS)
			goto fail;
		char *mode = NULL;
		sqlite3_stmt *s;
		if (sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &s, NULL) == SQLITE_OK) {
			if (sqlite3_step(s) == SQLITE_ROW)
				mode = xstrdup((const char *)sqlite3_column_text(s, 0));
			sqlite3_finalize(s);
		}
		if (!mode || strcmp(mode, "wal") != 0)
			kg_warn("database '%s': could not switch to WAL mode (%s)", path,
				mode ? mode : sqlite3_errmsg(st->db));
		free(mode);
		exec_sql(st->db, "PRAGMA synchronous = NORMAL", NULL);
		/* foreign keys stay documentation: enforcing them costs five lookups
		 * per sample, and store.c hands out every id itself */
	}
	*out = st;
	return KG_EXIT_PASS;
fail:
	sq_close(&st->base);
	return KG_EXIT_RUNTIME;
}

static int sq_open(const char *path, const char *shown, int flags, int version,
		   struct kg_store **out)
{
	struct sq *st;
	(void)shown;    /* a path holds no password: messages name it */
	int rc = open_db(path, flags, version, &st);
	*out = st ? &st->base : NULL;
	return rc;
}

static int sq_create_at_version(const char *path, const char *shown, int version)
{
	struct sq *st;
	(void)shown;

	if (version < 1 || version > SCHEMA_VERSION) {
		kg_error("no schema version %d", version);
		return KG_EXIT_RUNTIME;
	}
	if (access(path, F_OK) == 0) {
		kg_error("cannot create '%s': file exists", path);
		return KG_EXIT_RUNTIME;
	}
	int rc = open_db(path, 0, version, &st);
	if (st)
		sq_close(&st->base);
	return rc;
}

static void sq_close(struct kg_store *kst)
{
	struct sq *st = (struct sq *)kst;
	if (!st)
		return;
	sq_run_abort(&st->base);
	for (int i = 0; i < Q_COUNT; i++)
		sqlite3_finalize(st->q[i]);
	sqlite3_finalize(st->many);
	namemap_clear(&st->bench);
	namemap_clear(&st->nvtx);
	namemap_clear(&st->kern);
	namemap_clear(&st->metric);
	runbench_free(&st->rb);
	points_reset(&st->acc);
	buf_free(&st->blob);
	if (st->db)
		sqlite3_close(st->db);
	free(st->path);
	free(st);
}

/* ------------------------------------------------------------------ */
/* Writing a run                                                       */

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

static int sq_run_begin(struct kg_store *kst, struct kg_run_info *run)
{
	struct sq *st = (struct sq *)kst;
	sqlite3_stmt *s;

	if (begin_immediate(st->db, st->path) != SQLITE_OK)
		return db_fail(st, "cannot start a transaction");
	st->base.in_run = 1;
	runbench_reset(&st->rb);
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO runs(commit_sha, branch, parent, time, host, gpu_name,"
			       " gpu_uuid, gpu_chip, driver, cuda, collector, config_hash, source,"
			       " label, ci_url, status) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
			       -1, &s, NULL) != SQLITE_OK) {
		int rc = db_fail(st, "prepare");
		sq_run_abort(&st->base);
		return rc;
	}
	if (!run->time)
		run->time = (int64_t)time(NULL);
	bind_text(s, 1, run->commit ? run->commit : "unknown");
	bind_text(s, 2, run->branch);
	bind_text(s, 3, run->parent);
	sqlite3_bind_int64(s, 4, run->time);
	bind_text(s, 5, run->host);
	bind_text(s, 6, run->gpu_name);
	bind_text(s, 7, run->gpu_uuid);
	bind_text(s, 8, run->gpu_chip);
	bind_text(s, 9, run->driver);
	bind_text(s, 10, run->cuda);
	bind_text(s, 11, run->collector);
	bind_text(s, 12, run->config_hash);
	bind_text(s, 13, run->source);
	bind_text(s, 14, run->label);
	bind_text(s, 15, run->ci_url);
	bind_text(s, 16, run->status ? run->status : "ok");
	if (sqlite3_step(s) != SQLITE_DONE) {
		int rc = db_fail(st, "cannot add the run");
		sqlite3_finalize(s);
		sq_run_abort(&st->base);
		return rc;
	}
	sqlite3_finalize(s);
	st->run_id = sqlite3_last_insert_rowid(st->db);
	run->id = st->run_id;
	return KG_EXIT_PASS;
}

/* id of name in a name table, adding it when new (a metric with its unit,
 * the name's guess when NULL, and whether it is deterministic). */
static int64_t intern_row(struct sq *st, struct namemap *m, int qget, int qadd,
			  const char *name, const char *unit, int det)
{
	int64_t id = namemap_get(m, name);
	sqlite3_stmt *s;

	if (id)
		return id;
	if (!(s = query(st, qget)))
		return 0;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW) {
		id = sqlite3_column_int64(s, 0);
	} else {
		if (!(s = query(st, qadd)))
			return 0;
		sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
		if (qadd == Q_METRIC_ADD) {
			bind_text(s, 2, unit ? unit : metric_unit(name));
			sqlite3_bind_int(s, 3, det);
		}
		if (sqlite3_step(s) != SQLITE_DONE) {
			db_fail(st, "cannot add a name");
			return 0;
		}
		id = sqlite3_last_insert_rowid(st->db);
	}
	sqlite3_reset(s);
	namemap_put(m, name, id);
	return id;
}

/*
 * A kernel row is found by its mangled name, else by its canonical
 * demangled name (ncu exports carry only that); a row first made from a
 * demangled name takes the true mangled name when one arrives.
 */
static int64_t intern_kernel(struct sq *st, const struct kg_kernel_name *k)
{
	const char *mangled = k->mangled;
	const char *dem = k->demangled ? k->demangled : mangled;
	const char *base = k->base ? k->base : dem;
	int64_t id = namemap_get(&st->kern, mangled);
	sqlite3_stmt *s;

	if (id)
		return id;
	if (!(s = query(st, Q_KERN_GET)))
		return 0;
	sqlite3_bind_text(s, 1, mangled, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW)
		id = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (!id) {
		if (!(s = query(st, Q_KERN_BY_DEM)))
			return 0;
		sqlite3_bind_text(s, 1, dem, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW) {
			id = sqlite3_column_int64(s, 0);
			int rename = store_is_mangled(mangled) &&
				     !store_is_mangled((const char *)sqlite3_column_text(s, 1));
			sqlite3_reset(s);
			if (rename) {
				if (!(s = query(st, Q_KERN_RENAME)))
					return 0;
				sqlite3_bind_text(s, 1, mangled, -1, SQLITE_STATIC);
				sqlite3_bind_int64(s, 2, id);
				if (sqlite3_step(s) != SQLITE_DONE) {
					db_fail(st, "cannot rename a kernel");
					return 0;
				}
				sqlite3_reset(s);
				namemap_clear(&st->kern);
			}
		}
		sqlite3_reset(s);
	}
	if (!id) {
		if (!(s = query(st, Q_KERN_ADD)))
			return 0;
		sqlite3_bind_text(s, 1, mangled, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, dem, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, base, -1, SQLITE_STATIC);
		if (sqlite3_step(s) != SQLITE_DONE) {
			db_fail(st, "cannot add a kernel");
			return 0;
		}
		sqlite3_reset(s);
		id = sqlite3_last_insert_rowid(st->db);
	}
	namemap_put(&st->kern, mangled, id);
	return id;
}

static int sq_run_benchmark_add(struct kg_store *kst, const char *benchmark)
{
	struct sq *st = (struct sq *)kst;
	int64_t b = intern_row(st, &st->bench, Q_BENCH_GET, Q_BENCH_ADD, benchmark, NULL, 0);
	if (!b)
		return KG_EXIT_RUNTIME;
	runbench_note(&st->rb, b);
	return KG_EXIT_PASS;
}

static int sq_run_benchmark_state(struct kg_store *kst, const char *benchmark,
				  const char *gpu_state)
{
	struct sq *st = (struct sq *)kst;
	int64_t b = intern_row(st, &st->bench, Q_BENCH_GET, Q_BENCH_ADD, benchmark, NULL, 0);
	if (!b)
		return KG_EXIT_RUNTIME;
	size_t i = runbench_note(&st->rb, b);
	runbench_set_state(&st->rb, i, gpu_state);
	return KG_EXIT_PASS;
}

/* The open run's benchmarks into run_benchmarks, inside its transaction. */
static int run_bench_write(struct sq *st)
{
	sqlite3_stmt *s;
	if (!st->rb.n)
		return KG_EXIT_PASS;
	if (sqlite3_prepare_v2(st->db, "INSERT OR IGNORE INTO run_benchmarks(run, benchmark, gpu_state)"
			       " VALUES (?, ?, ?)", -1, &s, NULL) != SQLITE_OK)
		return db_fail(st, "prepare");
	for (size_t i = 0; i < st->rb.n; i++) {
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, st->run_id);
		sqlite3_bind_int64(s, 2, st->rb.id[i]);
		if (st->rb.state[i])
			sqlite3_bind_text(s, 3, st->rb.state[i], -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(s, 3);
		if (sqlite3_step(s) != SQLITE_DONE) {
			int rc = db_fail(st, "cannot store the run's benchmarks");
			sqlite3_finalize(s);
			return rc;
		}
	}
	sqlite3_finalize(s);
	return KG_EXIT_PASS;
}

/* Bind one pending sample as the row starting at parameter at + 1. */
static void bind_sample(sqlite3_stmt *s, int at, int64_t run, const struct pend_sample *p)
{
	sqlite3_bind_int64(s, at + 1, run);
	sqlite3_bind_int64(s, at + 2, p->b);
	sqlite3_bind_int64(s, at + 3, p->n);
	sqlite3_bind_int64(s, at + 4, p->k);
	sqlite3_bind_int64(s, at + 5, p->m);
	sqlite3_bind_int(s, at + 6, p->repeat);
	sqlite3_bind_int64(s, at + 7, p->ordinal);
	sqlite3_bind_double(s, at + 8, p->value);
	if (p->rank >= 0)
		sqlite3_bind_int(s, at + 9, p->rank);
	else
		sqlite3_bind_null(s, at + 9);
}

/* The INSERT of SAMPLE_ROWS rows, prepared once. */
static sqlite3_stmt *many_rows(struct sq *st)
{
	if (st->many) {
		sqlite3_reset(st->many);
		return st->many;
	}
	struct kg_buf b = KG_BUF_INIT;
	buf_printf(&b, "INSERT INTO samples(run, benchmark, nvtx, kernel, metric, repeat, ordinal,"
		   " value, rank) VALUES ");
	for (int i = 0; i < SAMPLE_ROWS; i++)
		buf_printf(&b, "%s(?, ?, ?, ?, ?, ?, ?, ?, ?)", i ? ", " : "");
	if (sqlite3_prepare_v3(st->db, b.s, -1, SQLITE_PREPARE_PERSISTENT, &st->many,
			       NULL) != SQLITE_OK) {
		db_fail(st, "prepare");
		st->many = NULL;
	}
	buf_free(&b);
	return st->many;
}

/* Insert the pending samples: a full batch in one statement, fewer one by one. */
static int flush_samples(struct sq *st)
{
	size_t n = st->npend;
	sqlite3_stmt *s;

	st->npend = 0;
	if (n == SAMPLE_ROWS) {
		if (!(s = many_rows(st)))
			return KG_EXIT_RUNTIME;
		for (size_t i = 0; i < n; i++)
			bind_sample(s, 9 * (int)i, st->run_id, &st->pend[i]);
		int rc = sqlite3_step(s);
		sqlite3_reset(s);
		return rc == SQLITE_DONE ? KG_EXIT_PASS : db_fail(st, "cannot add a sample");
	}
	for (size_t i = 0; i < n; i++) {
		if (!(s = query(st, Q_SAMPLE)))
			return KG_EXIT_RUNTIME;
		bind_sample(s, 0, st->run_id, &st->pend[i]);
		int rc = sqlite3_step(s);
		sqlite3_reset(s);
		if (rc != SQLITE_DONE)
			return db_fail(st, "cannot add a sample");
	}
	return KG_EXIT_PASS;
}

static int sq_sample_add(struct kg_store *kst, const char *benchmark, const char *nvtx,
		     const struct kg_kernel_name *kernel, const char *metric,
		     const char *unit, int deterministic, int repeat, int64_t ordinal,
		     double value)
{
	struct sq *st = (struct sq *)kst;
	int64_t b, n, k, m;

	if (!(b = intern_row(st, &st->bench, Q_BENCH_GET, Q_BENCH_ADD, benchmark, NULL, 0)) ||
	    !(n = intern_row(st, &st->nvtx, Q_NVTX_GET, Q_NVTX_ADD, nvtx ? nvtx : "", NULL, 0)) ||
	    !(k = intern_kernel(st, kernel)) ||
	    !(m = intern_row(st, &st->metric, Q_METRIC_GET, Q_METRIC_ADD, metric, unit, deterministic)))
		return KG_EXIT_RUNTIME;
	runbench_note(&st->rb, b);
	if (st->version >= 7)
		points_add(&st->acc, b, n, k, m, value);
	st->pend[st->npend++] = (struct pend_sample){ b, n, k, m, ordinal, value, repeat,
						      st->base.rank >= 0 ? st->base.rank : -1 };
	return st->npend == SAMPLE_ROWS ? flush_samples(st) : KG_EXIT_PASS;
}

static int sq_run_commit(struct kg_store *kst)
{
	struct sq *st = (struct sq *)kst;
	if (flush_samples(st) != KG_EXIT_PASS || run_bench_write(st) != KG_EXIT_PASS) {
		sq_run_abort(&st->base);
		return KG_EXIT_RUNTIME;
	}
	runbench_reset(&st->rb);
	if (st->version >= 7 && points_write(st, st->run_id) != KG_EXIT_PASS) {
		sq_run_abort(&st->base);
		return KG_EXIT_RUNTIME;
	}
	if (st->base.devices) {
		sqlite3_stmt *s;
		int ok = sqlite3_prepare_v2(st->db, "UPDATE runs SET devices = ? WHERE id = ?", -1, &s,
					    NULL) == SQLITE_OK;
		if (ok) {
			bind_text(s, 1, st->base.devices);
			sqlite3_bind_int64(s, 2, st->run_id);
			ok = sqlite3_step(s) == SQLITE_DONE;
			sqlite3_finalize(s);
		}
		if (!ok) {
			int rc = db_fail(st, "cannot store the run's devices");
			sq_run_abort(&st->base);
			return rc;
		}
	}
	if (exec_sql(st->db, "COMMIT", NULL) != SQLITE_OK) {
		int rc = db_fail(st, "cannot commit the run");
		sq_run_abort(&st->base);
		return rc;
	}
	st->base.in_run = 0;
	return KG_EXIT_PASS;
}

static void sq_run_abort(struct kg_store *kst)
{
	struct sq *st = (struct sq *)kst;
	if (!st->base.in_run)
		return;
	exec_sql(st->db, "ROLLBACK", NULL);
	st->base.in_run = 0;
	st->run_id = 0;
	st->npend = 0;
	runbench_reset(&st->rb);
	points_reset(&st->acc);
	/* Ids handed out inside the transaction are gone. */
	namemap_clear(&st->bench);
	namemap_clear(&st->nvtx);
	namemap_clear(&st->kern);
	namemap_clear(&st->metric);
}

static int64_t sq_run_count(struct kg_store *kst)
{
	struct sq *st = (struct sq *)kst;
	sqlite3_stmt *s;
	int64_t n = 0;

	if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM runs", -1, &s, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

/* ------------------------------------------------------------------ */
/* Reading runs                                                        */

static char *col_dup(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return t ? xstrdup((const char *)t) : NULL;
}

/* A row of SELECT STORE_RUN_COLS into r. */
static void run_from_row(sqlite3_stmt *s, struct kg_run_info *r)
{
	r->id = sqlite3_column_int64(s, STORE_RUN_COL_ID);
	r->time = sqlite3_column_int64(s, STORE_RUN_COL_TIME);
	for (int i = 0; i < STORE_RUN_NCOLS; i++) {
		char **t = store_run_text(r, i);
		if (t)
			*t = col_dup(s, i);
	}
}

/* Resolve a commit prefix to one full commit_sha; NULL when none matches. */
static int resolve_commit(struct sq *st, const char *c, char **full)
{
	sqlite3_stmt *s;
	size_t n = 0;

	*full = NULL;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT DISTINCT commit_sha FROM runs WHERE commit_sha = ?1"
			       " UNION SELECT DISTINCT commit_sha FROM runs"
			       " WHERE substr(commit_sha, 1, length(?1)) = ?1 AND NOT EXISTS"
			       " (SELECT 1 FROM runs WHERE commit_sha = ?1) LIMIT 3",
			       -1, &s, NULL) != SQLITE_OK)
		return db_fail(st, "prepare");
	sqlite3_bind_text(s, 1, c, -1, SQLITE_STATIC);
	struct kg_buf all = KG_BUF_INIT;
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(s, 0);
		if (n++ == 0)
			*full = xstrdup(t);
		buf_printf(&all, "%s%s", n > 1 ? ", " : "", t);
	}
	sqlite3_finalize(s);
	if (n > 1) {
		kg_error("commit '%s' is ambiguous: %s%s", c, all.s, n > 2 ? ", ..." : "");
		free(*full);
		*full = NULL;
		buf_free(&all);
		return KG_EXIT_USAGE;
	}
	buf_free(&all);
	return KG_EXIT_PASS;
}

static int sq_find_runs(struct kg_store *kst, const struct kg_run_filter *f,
		    struct kg_run_info **runs, size_t *n)
{
	struct sq *st = (struct sq *)kst;
	struct kg_buf sql = KG_BUF_INIT;
	char *full = NULL;
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc;

	*runs = NULL;
	*n = 0;
	if (f && f->commit) {
		if ((rc = resolve_commit(st, f->commit, &full)) != KG_EXIT_PASS)
			return rc;
		if (!full)
			return KG_EXIT_PASS;
	}
	buf_adds(&sql, "SELECT " STORE_RUN_COLS " FROM runs WHERE 1");
	store_run_filter_sql(&sql, f, full != NULL, '?');
	if (sqlite3_prepare_v2(st->db, sql.s, -1, &s, NULL) != SQLITE_OK) {
		buf_free(&sql);
		free(full);
		return db_fail(st, "prepare");
	}
	buf_free(&sql);
	if (full)
		sqlite3_bind_text(s, 1, full, -1, SQLITE_STATIC);
	if (f) {
		if (f->branch)
			sqlite3_bind_text(s, 2, f->branch, -1, SQLITE_STATIC);
		if (f->gpu_name)
			sqlite3_bind_text(s, 3, f->gpu_name, -1, SQLITE_STATIC);
		if (f->driver)
			sqlite3_bind_text(s, 4, f->driver, -1, SQLITE_STATIC);
		if (f->label)
			sqlite3_bind_text(s, 5, f->label, -1, SQLITE_STATIC);
		if (f->since)
			sqlite3_bind_int64(s, 6, f->since);
		if (f->limit)
			sqlite3_bind_int64(s, 7, (sqlite3_int64)f->limit);
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			*runs = xrealloc(*runs, cap * sizeof(**runs));
		}
		memset(&(*runs)[*n], 0, sizeof(**runs));
		run_from_row(s, &(*runs)[(*n)++]);
	}
	sqlite3_finalize(s);
	free(full);
	if (rc != SQLITE_DONE) {
		store_runs_free(*runs, *n);
		*runs = NULL;
		*n = 0;
		return db_fail(st, "cannot read runs");
	}
	return KG_EXIT_PASS;
}

static int names_query(struct sq *st, const char *sql, int64_t run, char ***names,
		       size_t *n)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc;

	if (!(s = prepare_id(st, "prepare", sql, run)))
		return KG_EXIT_RUNTIME;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n + 1 >= cap) {
			cap = cap ? 2 * cap : 16;
			*names = xrealloc(*names, cap * sizeof **names);
		}
		(*names)[(*n)++] = col_dup(s, 0);
		(*names)[*n] = NULL;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_fail(st, "cannot read the run's benchmarks");
	return KG_EXIT_PASS;
}

static int sq_run_gpu_states(struct kg_store *kst, int64_t run, char ***names, char ***states,
			     size_t *n)
{
	struct sq *st = (struct sq *)kst;
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc;

	*names = *states = NULL;
	*n = 0;
	if (!(s = prepare_id(st, "prepare",
			     "SELECT b.name, r.gpu_state FROM run_benchmarks r"
			     " JOIN benchmarks b ON b.id = r.benchmark"
			     " WHERE r.run = ?1 AND r.gpu_state IS NOT NULL ORDER BY b.name", run)))
		return KG_EXIT_RUNTIME;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n + 1 >= cap) {
			cap = cap ? 2 * cap : 16;
			*names = xrealloc(*names, cap * sizeof **names);
			*states = xrealloc(*states, cap * sizeof **states);
		}
		(*names)[*n] = col_dup(s, 0);
		(*states)[*n] = col_dup(s, 1);
		(*n)++;
		(*names)[*n] = (*states)[*n] = NULL;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		store_names_free(*names, *n);
		store_names_free(*states, *n);
		*names = *states = NULL;
		*n = 0;
		return db_fail(st, "cannot read the run's GPU states");
	}
	return KG_EXIT_PASS;
}

static int sq_run_benchmarks(struct kg_store *kst, int64_t run, char ***names, size_t *n)
{
	struct sq *st = (struct sq *)kst;
	*names = NULL;
	*n = 0;
	int rc = names_query(st, "SELECT b.name FROM run_benchmarks r JOIN benchmarks b"
			     " ON b.id = r.benchmark WHERE r.run = ?1 ORDER BY b.name", run, names, n);
	if (rc == KG_EXIT_PASS && !*n)
		/* a run stored before schema 4: what its samples name */
		rc = names_query(st, "SELECT b.name FROM benchmarks b WHERE b.id IN"
				 " (SELECT DISTINCT benchmark FROM samples WHERE run = ?1)"
				 " ORDER BY b.name", run, names, n);
	if (rc != KG_EXIT_PASS) {
		store_names_free(*names, *n);
		*names = NULL;
		*n = 0;
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* Reading samples                                                     */

static int same_text(const char *a, const unsigned char *b)
{
	return a && b && !strcmp(a, (const char *)b);
}

/* A series' benchmark id while loading carries its rank + 1 (0: none) in
 * the bits from RANK_SHIFT up: the rank is part of its identity. */
#define RANK_SHIFT 40
#define RANK_SHIFT_S "40"
#define BENCH_ID(b) ((b) & (((int64_t)1 << RANK_SHIFT) - 1))

/* One series while loading: its ids, and each value's (repeat, ordinal). */
struct load_series {
	int64_t b, n, k, m;
	int64_t *key;           /* repeat << 32 | ordinal, per value (when kept) */
	int sorted;             /* values so far in (run, repeat, ordinal) order */
	int64_t last;           /* the key of the last value */
	size_t runs;            /* runs seen before the present one */
	size_t n_before;        /* values in those */
	int64_t last_run;       /* the run of the last value */
};

struct load_map {
	size_t *slot;           /* series index + 1; 0 empty */
	size_t mask;
};

static uint64_t ids_hash(int64_t b, int64_t n, int64_t k, int64_t m)
{
	uint64_t h = (uint64_t)b * 0x9e3779b97f4a7c15ull;
	h = (h ^ (uint64_t)n) * 0xc2b2ae3d27d4eb4full;
	h = (h ^ (uint64_t)k) * 0x165667b19e3779f9ull;
	h = (h ^ (uint64_t)m) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* The metric map's slots hold 1 + the index of a series (0: empty). */
static size_t metric_slot_hash(const void *slot, const void *arg)
{
	const struct load_series *ls = arg;
	return ids_hash(ls[*(const size_t *)slot - 1].m, 0, 0, 0);
}

/* Names of the ids the samples use, fetched by id (no join, no sort). */
/* A name read from the store, kept in the set's pool (one copy each). */
static char *pool_dup(struct kg_sampleset *set, size_t *cap, sqlite3_stmt *q, int col)
{
	char *c = col_dup(q, col);
	if (!c)
		return NULL;
	if (set->n_pool == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		set->pool = xrealloc(set->pool, *cap * sizeof(*set->pool));
	}
	set->pool[set->n_pool++] = c;
	return c;
}

/* Names of the ids the samples use, fetched by id (no join, no sort) and
 * shared: series sorted by ids meet equal benchmarks, NVTX paths and
 * kernels in runs, and metrics come from a small map by id. */
static int load_names(struct sq *st, struct kg_sampleset *set, const struct load_series *ls)
{
	static const char *const sql[] = {
		"SELECT name FROM benchmarks WHERE id = ?",
		"SELECT path FROM nvtx WHERE id = ?",
		"SELECT mangled, demangled, base FROM kernels WHERE id = ?",
		"SELECT name, unit, deterministic FROM metrics WHERE id = ?",
	};
	sqlite3_stmt *q[4] = { NULL, NULL, NULL, NULL };
	struct kg_series *out = set->s;
	size_t n = set->n, pcap = 0, msz = 64, mn = 0;
	size_t *mslot = xcalloc(msz, sizeof(*mslot)); /* metric id -> series index + 1 */
	int rc = KG_EXIT_PASS;

	for (int t = 0; t < 4 && rc == KG_EXIT_PASS; t++)
		if (sqlite3_prepare_v2(st->db, sql[t], -1, &q[t], NULL) != SQLITE_OK)
			rc = db_fail(st, "prepare");
	for (size_t i = 0; i < n && rc == KG_EXIT_PASS; i++) {
		struct kg_series *x = &out[i];
		const struct load_series *l = &ls[i], *p = i ? &ls[i - 1] : NULL;
		int64_t id[4] = { BENCH_ID(l->b), l->n, l->k, l->m };
		int64_t rank1 = l->b >> RANK_SHIFT;
		x->ranked = rank1 != 0;
		x->rank = rank1 ? (int)(rank1 - 1) : 0;
		int same[4] = { p && p->b == l->b, p && p->n == l->n, p && p->k == l->k, 0 };
		size_t h = ids_hash(l->m, 0, 0, 0) & (msz - 1), mi;
		while ((mi = mslot[h]) != 0 && ls[mi - 1].m != l->m)
			h = (h + 1) & (msz - 1);
		same[3] = mi != 0;
		for (int t = 0; t < 4 && rc == KG_EXIT_PASS; t++) {
			if (same[t]) {
				const struct kg_series *y = t == 3 ? &out[mi - 1] : &out[i - 1];
				switch (t) {
				case 0: x->benchmark = y->benchmark; break;
				case 1: x->nvtx = y->nvtx; break;
				case 2:
					x->kernel = y->kernel;
					x->demangled = y->demangled;
					x->base = y->base;
					break;
				default:
					x->metric = y->metric;
					x->unit = y->unit;
					x->deterministic = y->deterministic;
					break;
				}
				continue;
			}
			sqlite3_reset(q[t]);
			sqlite3_bind_int64(q[t], 1, id[t]);
			if (sqlite3_step(q[t]) != SQLITE_ROW) {
				rc = db_fail(st, "cannot read the names of samples");
				break;
			}
			switch (t) {
			case 0: x->benchmark = pool_dup(set, &pcap, q[t], 0); break;
			case 1: x->nvtx = pool_dup(set, &pcap, q[t], 0); break;
			case 2:
				x->kernel = pool_dup(set, &pcap, q[t], 0);
				x->demangled = pool_dup(set, &pcap, q[t], 1);
				x->base = pool_dup(set, &pcap, q[t], 2);
				break;
			default:
				x->metric = pool_dup(set, &pcap, q[t], 0);
				x->unit = pool_dup(set, &pcap, q[t], 1);
				x->deterministic = sqlite3_column_int(q[t], 2);
				if (!x->unit) {
					if (set->n_pool == pcap) {
						pcap = pcap ? 2 * pcap : 256;
						set->pool = xrealloc(set->pool, pcap * sizeof(*set->pool));
					}
					set->pool[set->n_pool++] = x->unit = xstrdup("");
				}
				mslot[h] = i + 1;
				if (++mn * 2 >= msz) { /* grow the metric map */
					static const size_t none = 0;
					mslot = kg_table_grow(mslot, msz, 2 * msz, sizeof(*mslot), &none,
							      metric_slot_hash, ls);
					msz *= 2;
				}
				break;
			}
		}
	}
	free(mslot);
	for (int t = 0; t < 4; t++)
		sqlite3_finalize(q[t]);
	return rc;
}

static int series_id_cmp(const void *pa, const void *pb)
{
	const struct load_series *a = pa, *b = pb;
	if (a->b != b->b) return a->b < b->b ? -1 : 1;
	if (a->n != b->n) return a->n < b->n ? -1 : 1;
	if (a->k != b->k) return a->k < b->k ? -1 : 1;
	return (a->m > b->m) - (a->m < b->m);
}

/* Values of one series into (run, repeat, ordinal) order (insertion sort:
 * they are nearly always in order already, run by run). */
static void series_order(struct kg_series *x, int64_t *key)
{
	for (size_t i = 1; i < x->n; i++) {
		double v = x->v[i];
		int64_t r = x->run_of ? x->run_of[i] : 0, k = key[i];
		size_t j = i;
		while (j > 0 && ((x->run_of ? x->run_of[j - 1] : 0) > r ||
				 ((x->run_of ? x->run_of[j - 1] : 0) == r && key[j - 1] > k))) {
			x->v[j] = x->v[j - 1];
			if (x->run_of)
				x->run_of[j] = x->run_of[j - 1];
			key[j] = key[j - 1];
			j--;
		}
		x->v[j] = v;
		if (x->run_of)
			x->run_of[j] = r;
		key[j] = k;
	}
}

#define LOAD_RESTART (-1)

/* A loading series' arrays to cap values (growing them: realloc).  Sized
 * well up front, a series is not grown by doubling from 16. */
static void x_alloc(struct kg_series *x, struct load_series *l, size_t cap, int multi,
		    int with_keys)
{
	x->v = xrealloc(x->v, cap * sizeof(*x->v));
	if (multi)
		x->run_of = xrealloc(x->run_of, cap * sizeof(*x->run_of));
	if (with_keys)
		l->key = xrealloc(l->key, cap * sizeof(*l->key));
}

/* One pass over the runs' samples into out (ls: the series' ids).  Without
 * keys, each series remembers only the (repeat, ordinal) of its last value,
 * and the pass gives up (LOAD_RESTART) at the first value out of order,
 * which kgate's own ingest never stores; with keys, every value's is kept
 * and such series are put in order at the end. */
static int load_pass(struct sq *st, const int64_t *run_ids, size_t n_runs, int with_keys,
		     struct kg_sampleset *out, struct load_series **lsp)
{
	sqlite3_stmt *s;
	size_t cap = 64, last = 0;
	size_t per_run = 0;     /* most values a series had in one run (to 256) */
	size_t *vcap = xmalloc(cap * sizeof(*vcap));
	struct load_series *ls = xmalloc(cap * sizeof(*ls));
	struct load_map map = { xcalloc(1024, sizeof(size_t)), 1023 };
	int rc = KG_EXIT_PASS, multi = n_runs > 1 && run_ids[0] != run_ids[n_runs - 1];

	/* A run's rows are contiguous in rowid order (each run is appended in
	 * one transaction): the range between its first and last rowid (two
	 * lookups in samples_run) is walked along the table itself, and the
	 * run filter keeps the answer right if they ever interleave ("+run":
	 * not through the index, which would look every row up again). */
	out->s = xmalloc(cap * sizeof(*out->s));
	*lsp = ls;
	if (sqlite3_prepare_v2(st->db, "SELECT benchmark | ((ifnull(rank, -1) + 1) << " RANK_SHIFT_S "),"
				       " nvtx, kernel, metric, repeat, ordinal, value"
				       " FROM samples WHERE id >= (SELECT min(id) FROM samples WHERE run = ?1)"
				       " AND id <= (SELECT max(id) FROM samples WHERE run = ?1) AND +run = ?1",
			       -1, &s, NULL) != SQLITE_OK) {
		free(vcap);
		free(map.slot);
		return db_fail(st, "prepare");
	}
	for (size_t r = 0; r < n_runs && rc == KG_EXIT_PASS; r++) {
		int step;
		if (r && run_ids[r] == run_ids[r - 1])
			continue; /* asked twice (they are sorted) */
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, run_ids[r]);
		while ((step = sqlite3_step(s)) == SQLITE_ROW) {
			int64_t b = sqlite3_column_int64(s, 0), n = sqlite3_column_int64(s, 1),
				k = sqlite3_column_int64(s, 2), m = sqlite3_column_int64(s, 3);
			int64_t key = (sqlite3_column_int64(s, 4) << 32) |
				      (sqlite3_column_int64(s, 5) & 0xffffffff);
			size_t i;
			if (last && ls[last - 1].b == b && ls[last - 1].n == n && ls[last - 1].k == k &&
			    ls[last - 1].m == m) {
				i = last; /* rows of one series often come together */
			} else {
				if (out->n * 2 >= map.mask) { /* grow and rehash */
					size_t sz = 2 * (map.mask + 1);
					free(map.slot);
					map.slot = xcalloc(sz, sizeof(*map.slot));
					map.mask = sz - 1;
					for (size_t q = 0; q < out->n; q++) {
						size_t h = ids_hash(ls[q].b, ls[q].n, ls[q].k, ls[q].m) & map.mask;
						while (map.slot[h])
							h = (h + 1) & map.mask;
						map.slot[h] = q + 1;
					}
				}
				size_t h = ids_hash(b, n, k, m) & map.mask;
				while ((i = map.slot[h]) != 0 && !(ls[i - 1].b == b && ls[i - 1].n == n &&
								   ls[i - 1].k == k && ls[i - 1].m == m))
					h = (h + 1) & map.mask;
				if (!i) {
					if (out->n == cap) {
						cap *= 2;
						out->s = xrealloc(out->s, cap * sizeof(*out->s));
						ls = xrealloc(ls, cap * sizeof(*ls));
						vcap = xrealloc(vcap, cap * sizeof(*vcap));
					}
					i = ++out->n;
					map.slot[h] = i;
					memset(&out->s[i - 1], 0, sizeof(*out->s));
					ls[i - 1] = (struct load_series){ b, n, k, m, NULL, 1, 0, 0, 0, 0 };
					vcap[i - 1] = 0;
					if (per_run) { /* likely as many values a run as the others */
						size_t want = per_run * (n_runs - r);
						vcap[i - 1] = want < 4096 ? want : 4096;
						x_alloc(&out->s[i - 1], &ls[i - 1], vcap[i - 1], multi, with_keys);
					}
				}
				last = i;
			}
			struct kg_series *x = &out->s[i - 1];
			struct load_series *l = &ls[i - 1];
			if (x->n && (l->last_run > run_ids[r] ||
				     (l->last_run == run_ids[r] && l->last > key))) {
				l->sorted = 0;
				if (!with_keys) {
					rc = LOAD_RESTART;
					break;
				}
			}
			if (x->n && l->last_run != run_ids[r]) {
				l->runs++;
				l->n_before = x->n;
			}
			if (x->n == vcap[i - 1]) {
				/* from its second run on, a series likely has as many
				 * values in each run as in those before */
				size_t want = l->runs ? (l->n_before * (l->runs + n_runs - r) + l->runs - 1) / l->runs : 0;
				vcap[i - 1] = vcap[i - 1] ? vcap[i - 1] * 2 : 16;
				if (want > vcap[i - 1])
					vcap[i - 1] = want;
				x_alloc(x, l, vcap[i - 1], multi, with_keys);
			}
			if (with_keys)
				l->key[x->n] = key;
			l->last = key;
			l->last_run = run_ids[r];
			if (multi)
				x->run_of[x->n] = run_ids[r];
			x->v[x->n++] = sqlite3_column_double(s, 6);
			if (x->n - l->n_before > per_run && x->n - l->n_before <= 256)
				per_run = x->n - l->n_before;
		}
		if (rc == KG_EXIT_PASS && step != SQLITE_DONE)
			rc = db_fail(st, "cannot read samples");
	}
	sqlite3_finalize(s);
	free(map.slot);
	free(vcap);
	for (size_t i = 0; i < out->n; i++) {
		if (rc == KG_EXIT_PASS && !ls[i].sorted)
			series_order(&out->s[i], ls[i].key);
		free(ls[i].key);
		ls[i].key = NULL;
	}
	*lsp = ls;
	return rc;
}

static int sq_load_samples(struct kg_store *kst, const int64_t *run_ids, size_t n_runs,
		       struct kg_sampleset *out)
{
	struct sq *st = (struct sq *)kst;
	struct load_series *ls = NULL;
	int rc;

	if (st->npend && flush_samples(st) != KG_EXIT_PASS)
		return KG_EXIT_RUNTIME;
	out->s = NULL;
	out->n = 0;
	out->pool = NULL;
	out->n_pool = 0;
	if (n_runs == 0)
		return KG_EXIT_PASS;
	/*
	 * The runs' samples are read with their integer ids only and grouped
	 * into series by a hash of the ids as they stream by: no join and no
	 * ORDER BY, so SQLite never sorts (its sorter spilled the joined names
	 * to temporary files).  The names are fetched once per series
	 * afterwards and the series (not the samples) sorted by them.
	 */
	int64_t *ids = xmalloc(n_runs * sizeof(*ids)); /* ascending: values in run order */
	memcpy(ids, run_ids, n_runs * sizeof(*ids));
	qsort(ids, n_runs, sizeof(*ids), store_cmp_id);
	rc = load_pass(st, ids, n_runs, 0, out, &ls);
	if (rc == LOAD_RESTART) {
		free(ls);
		store_sampleset_free(out);
		rc = load_pass(st, ids, n_runs, 1, out, &ls);
	}
	free(ids);
	if (rc == KG_EXIT_PASS && out->n) {
		/* by ids first, so that load_names() meets equal names in runs:
		 * ls sorted in place, each entry carrying its series' index, then
		 * the series moved into that order in place, cycle by cycle (no
		 * copy of either array: at 200,000 series a side, 33 MB) */
		for (size_t i = 0; i < out->n; i++)
			ls[i].key = (int64_t *)(uintptr_t)i;
		qsort(ls, out->n, sizeof(*ls), series_id_cmp);
		for (size_t i = 0; i < out->n; i++) {
			if ((size_t)(uintptr_t)ls[i].key == i)
				continue;   /* in place, or moved already */
			struct kg_series first = out->s[i];
			for (size_t j = i;;) {
				size_t k = (size_t)(uintptr_t)ls[j].key;
				ls[j].key = (int64_t *)(uintptr_t)j;
				if (k == i) {
					out->s[j] = first;
					break;
				}
				out->s[j] = out->s[k];
				j = k;
			}
		}
		rc = load_names(st, out, ls);
		if (rc == KG_EXIT_PASS)
			qsort(out->s, out->n, sizeof(*out->s), store_series_cmp);
	}
	free(ls);
	if (rc != KG_EXIT_PASS)
		store_sampleset_free(out);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Verdicts                                                            */

static void bind_real(sqlite3_stmt *s, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_double(s, i, v);
}

/* Insert the explanation rows inside the caller's transaction. */
static int put_explanations(struct sq *st, int64_t head_run, const char *baseline,
			    int64_t now, const struct kg_explain_row *x, size_t nx)
{
	sqlite3_stmt *s;
	if (!nx)
		return KG_EXIT_PASS;
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO explanations(run, baseline, time, benchmark, nvtx,"
			       " base_kernel, head_kernel, why, details) VALUES (?,?,?,?,?,?,?,?,?)",
			       -1, &s, NULL) != SQLITE_OK)
		return db_fail(st, "prepare");
	for (size_t i = 0; i < nx; i++) {
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, head_run);
		bind_text(s, 2, baseline);
		sqlite3_bind_int64(s, 3, now);
		bind_text(s, 4, x[i].benchmark ? x[i].benchmark : "");
		bind_text(s, 5, x[i].nvtx ? x[i].nvtx : "");
		bind_text(s, 6, x[i].base_kernel ? x[i].base_kernel : "");
		bind_text(s, 7, x[i].head_kernel ? x[i].head_kernel : "");
		bind_text(s, 8, x[i].why ? x[i].why : "");
		bind_text(s, 9, x[i].details ? x[i].details : "{}");
		if (sqlite3_step(s) != SQLITE_DONE) {
			int rc = db_fail(st, "cannot store an explanation");
			sqlite3_finalize(s);
			return rc;
		}
	}
	sqlite3_finalize(s);
	return KG_EXIT_PASS;
}

static void bind_policy(sqlite3_stmt *s, int i, int p)
{
	if (p < 0)
		sqlite3_bind_null(s, i);
	else
		bind_text(s, i, verdict_policy_name((enum kg_policy)p));
}

/* The checks row of an outcome, inside the caller's transaction. */
static int put_check(struct sq *st, int64_t head_run, const char *baseline, int64_t now,
		     const struct kg_outcome *o, int64_t *id)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO checks(run, baseline, time, verdict, exit_status, on_new_kernel,"
			       " on_missing_kernel, on_inconclusive, on_no_baseline, note, not_compared)"
			       " VALUES (?,?,?,?,?,?,?,?,?,?,?)", -1, &s, NULL) != SQLITE_OK)
		return db_fail(st, "prepare");
	sqlite3_bind_int64(s, 1, head_run);
	bind_text(s, 2, baseline);
	sqlite3_bind_int64(s, 3, now);
	bind_text(s, 4, verdict_key(o->verdict));
	sqlite3_bind_int(s, 5, o->exit_status);
	bind_policy(s, 6, o->on_new_kernel);
	bind_policy(s, 7, o->on_missing_kernel);
	bind_policy(s, 8, o->on_inconclusive);
	bind_policy(s, 9, o->on_no_baseline);
	bind_text(s, 10, o->note);
	bind_text(s, 11, o->not_compared);
	int rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_fail(st, "cannot store the check");
	*id = sqlite3_last_insert_rowid(st->db);
	return KG_EXIT_PASS;
}

static int sq_verdicts_put(struct kg_store *kst, int64_t head_run, const char *baseline,
		       const struct kg_outcome *o, const struct kg_verdict_row *rows,
		       const int *ranks, size_t n,
		       const struct kg_explain_row *x, size_t nx)
{
	struct sq *st = (struct sq *)kst;
	sqlite3_stmt *s;
	int64_t now = (int64_t)time(NULL), check_id = 0;

	if (begin_immediate(st->db, st->path) != SQLITE_OK)
		return db_fail(st, "cannot start a transaction");
	int crc = put_check(st, head_run, baseline, now, o, &check_id);
	if (crc != KG_EXIT_PASS) {
		exec_sql(st->db, "ROLLBACK", NULL);
		return crc;
	}
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO verdicts(run, baseline, time, benchmark, nvtx, kernel,"
			       " metric, verdict, shift, lo, hi, p, base_value, head_value, n_base,"
			       " n_head, message, fails, check_id, rank)"
			       " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
			       -1, &s, NULL) != SQLITE_OK) {
		int rc = db_fail(st, "prepare");
		exec_sql(st->db, "ROLLBACK", NULL);
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		const struct kg_verdict_row *r = &rows[i];
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, head_run);
		bind_text(s, 2, baseline);
		sqlite3_bind_int64(s, 3, now);
		bind_text(s, 4, r->benchmark ? r->benchmark : "");
		bind_text(s, 5, r->nvtx ? r->nvtx : "");
		bind_text(s, 6, r->kernel ? r->kernel : "");
		bind_text(s, 7, r->metric ? r->metric : "");
		bind_text(s, 8, verdict_key(r->verdict));
		bind_real(s, 9, r->shift);
		bind_real(s, 10, r->lo);
		bind_real(s, 11, r->hi);
		bind_real(s, 12, r->p);
		bind_real(s, 13, r->base_value);
		bind_real(s, 14, r->head_value);
		sqlite3_bind_int64(s, 15, (sqlite3_int64)r->n_base);
		sqlite3_bind_int64(s, 16, (sqlite3_int64)r->n_head);
		bind_text(s, 17, r->message);
		sqlite3_bind_int(s, 18, r->fails != 0);
		sqlite3_bind_int64(s, 19, check_id);
		if (ranks && ranks[i] >= 0)
			sqlite3_bind_int(s, 20, ranks[i]);
		else
			sqlite3_bind_null(s, 20);
		if (sqlite3_step(s) != SQLITE_DONE) {
			int rc = db_fail(st, "cannot store a verdict");
			sqlite3_finalize(s);
			exec_sql(st->db, "ROLLBACK", NULL);
			return rc;
		}
	}
	sqlite3_finalize(s);
	int rc = put_explanations(st, head_run, baseline, now, x, nx);
	if (rc != KG_EXIT_PASS) {
		exec_sql(st->db, "ROLLBACK", NULL);
		return rc;
	}
	if (exec_sql(st->db, "COMMIT", NULL) != SQLITE_OK) {
		rc = db_fail(st, "cannot commit verdicts");
		exec_sql(st->db, "ROLLBACK", NULL);
		return rc;
	}
	return KG_EXIT_PASS;
}

static int sq_explanations_put(struct kg_store *kst, int64_t head_run, const char *baseline,
			   const struct kg_explain_row *x, size_t nx)
{
	struct sq *st = (struct sq *)kst;
	if (begin_immediate(st->db, st->path) != SQLITE_OK)
		return db_fail(st, "cannot start a transaction");
	int rc = put_explanations(st, head_run, baseline, (int64_t)time(NULL), x, nx);
	if (rc == KG_EXIT_PASS && exec_sql(st->db, "COMMIT", NULL) != SQLITE_OK)
		rc = db_fail(st, "cannot commit the explanations");
	if (rc != KG_EXIT_PASS)
		exec_sql(st->db, "ROLLBACK", NULL);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Summaries (kgate stats)                                             */

static int sq_run_get(struct kg_store *kst, int64_t id, struct kg_run_info *out)
{
	struct sq *st = (struct sq *)kst;
	sqlite3_stmt *s;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!(s = prepare_id(st, "prepare", "SELECT " STORE_RUN_COLS " FROM runs WHERE id = ?", id)))
		return KG_EXIT_RUNTIME;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		run_from_row(s, out);
		sqlite3_finalize(s);
		return KG_EXIT_PASS;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_fail(st, "cannot read runs");
	kg_error("database '%s' has no run %lld", st->path, (long long)id);
	return KG_EXIT_USAGE;
}

static int sq_summary_values(struct kg_store *kst, int64_t run, const char *metric,
			 enum kg_summary_by by, struct kg_summary_group **groups, size_t *n)
{
	struct sq *st = (struct sq *)kst;
	/* Grouping by the kernel's demangled name: two mangled names that
	 * demangle alike are one row, as in nsys stats. */
	static const char *const sql[] = {
		[KG_SUMMARY_KERNEL] =
			"SELECT b.name, k.demangled, m.unit, s.value"
			" FROM samples s JOIN benchmarks b ON b.id = s.benchmark"
			" JOIN kernels k ON k.id = s.kernel JOIN metrics m ON m.id = s.metric"
			" WHERE s.run = ?1 AND m.name = ?2"
			" ORDER BY b.name, k.demangled, s.value",
		[KG_SUMMARY_NVTX] =
			"SELECT b.name, n.path, m.unit, s.value"
			" FROM samples s JOIN benchmarks b ON b.id = s.benchmark"
			" JOIN nvtx n ON n.id = s.nvtx JOIN metrics m ON m.id = s.metric"
			" WHERE s.run = ?1 AND m.name = ?2"
			" ORDER BY b.name, n.path, s.value",
	};
	struct kg_summary_group *cur = NULL;
	sqlite3_stmt *s;
	size_t cap = 0, vcap = 0;
	int rc;

	if (st->npend && flush_samples(st) != KG_EXIT_PASS)
		return KG_EXIT_RUNTIME;
	*groups = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(st->db, sql[by == KG_SUMMARY_NVTX], -1, &s, NULL) != SQLITE_OK)
		return db_fail(st, "prepare");
	sqlite3_bind_int64(s, 1, run);
	sqlite3_bind_text(s, 2, metric, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const unsigned char *bn = sqlite3_column_text(s, 0), *gn = sqlite3_column_text(s, 1);
		if (!cur || !same_text(cur->benchmark, bn) || !same_text(cur->name, gn)) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 16;
				*groups = xrealloc(*groups, cap * sizeof(**groups));
			}
			cur = &(*groups)[(*n)++];
			memset(cur, 0, sizeof(*cur));
			cur->benchmark = col_dup(s, 0);
			cur->name = col_dup(s, 1);
			cur->unit = col_dup(s, 2);
			if (!cur->benchmark)
				cur->benchmark = xstrdup("");
			if (!cur->name)
				cur->name = xstrdup("");
			if (!cur->unit)
				cur->unit = xstrdup("");
			vcap = 0;
		}
		if (cur->n == vcap) {
			vcap = vcap ? vcap * 2 : 16;
			cur->v = xrealloc(cur->v, vcap * sizeof(*cur->v));
		}
		cur->v[cur->n++] = sqlite3_column_double(s, 3);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		store_summary_free(*groups, *n);
		*groups = NULL;
		*n = 0;
		return db_fail(st, "cannot read samples");
	}
	return KG_EXIT_PASS;
}

static int sq_run_metrics(struct kg_store *kst, int64_t run, char ***names, size_t *n)
{
	struct sq *st = (struct sq *)kst;
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc;

	if (st->npend && flush_samples(st) != KG_EXIT_PASS)
		return KG_EXIT_RUNTIME;
	*names = NULL;
	*n = 0;
	if (!(s = prepare_id(st, "prepare",
			     "SELECT DISTINCT m.name FROM samples s JOIN metrics m ON m.id = s.metric"
			     " WHERE s.run = ?1 ORDER BY m.name", run)))
		return KG_EXIT_RUNTIME;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n + 1 >= cap) {
			cap = cap ? cap * 2 : 16;
			*names = xrealloc(*names, cap * sizeof(**names));
		}
		(*names)[(*n)++] = col_dup(s, 0);
		(*names)[*n] = NULL;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		store_names_free(*names, *n);
		*names = NULL;
		*n = 0;
		return db_fail(st, "cannot read metrics");
	}
	if (!*names)
		*names = xcalloc(1, sizeof(**names));
	return KG_EXIT_PASS;
}



/* ------------------------------------------------------------------ */
/* Stored checks (the PR comment, the report's newest verdicts)        */

static double col_num(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

/* A stored policy name, or -1 (NULL: a check stored before schema 4). */
static int col_policy(sqlite3_stmt *s, int i)
{
	enum kg_policy p;
	const char *t = (const char *)sqlite3_column_text(s, i);
	return t && verdict_policy_parse(t, &p) == 0 ? (int)p : -1;
}

static int sq_check_newest(struct kg_store *kst, const struct kg_check_filter *f,
			   struct kg_stored_check *out)
{
	struct sq *st = (struct sq *)kst;
	static const char cols[] =
		"SELECT c.id, c.run, c.baseline, c.time, r.commit_sha, c.verdict,"
		" c.exit_status, c.on_new_kernel, c.on_missing_kernel, c.on_inconclusive,"
		" c.on_no_baseline, c.note, c.not_compared FROM checks c JOIN runs r ON r.id = c.run";
	char *sql = xasprintf("%s WHERE %s ORDER BY c.id DESC LIMIT 1", cols,
			      f->commit ? "(r.commit_sha = ?1 OR substr(r.commit_sha, 1, length(?1)) = ?1)"
				: "c.run IN (SELECT id FROM runs WHERE (?1 IS NULL OR branch = ?1) AND time >= ?2)");
	sqlite3_stmt *s;

	memset(out, 0, sizeof *out);
	int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return db_fail(st, "cannot find the stored check");
	bind_text(s, 1, f->commit ? f->commit : f->branch);
	sqlite3_bind_int64(s, 2, f->since);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		sqlite3_finalize(s);
		return KG_EXIT_PASS;
	}
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(s);
		return db_fail(st, "cannot find the stored check");
	}
	struct kg_outcome *o = &out->outcome;
	const char *vd = (const char *)sqlite3_column_text(s, 5);
	if (verdict_parse(vd, &o->verdict) != 0) {
		kg_error("the stored check %lld has an unknown verdict '%s'",
			 (long long)sqlite3_column_int64(s, 0), vd ? vd : "");
		sqlite3_finalize(s);
		return KG_EXIT_RUNTIME;
	}
	out->id = sqlite3_column_int64(s, 0);
	out->run = sqlite3_column_int64(s, 1);
	out->baseline = col_dup(s, 2);
	out->time = sqlite3_column_int64(s, 3);
	out->commit = col_dup(s, 4);
	o->exit_status = sqlite3_column_int(s, 6);
	o->on_new_kernel = col_policy(s, 7);
	o->on_missing_kernel = col_policy(s, 8);
	o->on_inconclusive = col_policy(s, 9);
	o->on_no_baseline = col_policy(s, 10);
	o->note = col_dup(s, 11);
	o->not_compared = col_dup(s, 12);
	sqlite3_finalize(s);
	return KG_EXIT_PASS;
}

static int sq_check_verdicts(struct kg_store *kst, int64_t check_id, kg_verdict_fn fn, void *arg)
{
	struct sq *st = (struct sq *)kst;
	sqlite3_stmt *s;
	int rc;

	if (!(s = prepare_id(st, "cannot read the stored verdicts",
			     "SELECT v.benchmark, v.nvtx, v.kernel, COALESCE(k.demangled, v.kernel), v.metric,"
			     " v.verdict, v.message, v.shift, v.lo, v.hi, v.p, v.base_value, v.head_value,"
			     " v.n_base, v.n_head, v.fails, v.rank FROM verdicts v"
			     " LEFT JOIN kernels k ON k.mangled = v.kernel"
			     " WHERE v.check_id = ?1 ORDER BY v.id", check_id)))
		return KG_EXIT_RUNTIME;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *t[7];
		for (int i = 0; i < 7; i++)
			t[i] = (const char *)sqlite3_column_text(s, i);
		struct kg_verdict_rec r = {
			t[0], t[1], t[2], t[3], t[4], t[5], t[6],
			col_num(s, 7), col_num(s, 8), col_num(s, 9), col_num(s, 10),
			col_num(s, 11), col_num(s, 12),
			sqlite3_column_int64(s, 13), sqlite3_column_int64(s, 14),
			sqlite3_column_int(s, 15), 0, 0,
		};
		r.ranked = sqlite3_column_type(s, 16) != SQLITE_NULL;
		r.rank = r.ranked ? sqlite3_column_int(s, 16) : 0;
		if (fn(arg, &r)) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? KG_EXIT_PASS : db_fail(st, "cannot read the stored verdicts");
}

static int sq_run_explanations(struct kg_store *kst, int64_t run, kg_explain_fn fn, void *arg)
{
	struct sq *st = (struct sq *)kst;
	sqlite3_stmt *s;
	int rc;

	if (!(s = prepare_id(st, "cannot read the stored explanations",
			     "SELECT benchmark, nvtx, base_kernel, head_kernel, why, details"
			     " FROM explanations WHERE run = ?1 ORDER BY id DESC", run)))
		return KG_EXIT_RUNTIME;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *t[6];
		for (int i = 0; i < 6; i++)
			t[i] = (const char *)sqlite3_column_text(s, i);
		struct kg_explain_row x = { t[0], t[1], t[2], t[3], t[4], t[5] };
		if (fn(arg, &x)) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? KG_EXIT_PASS : db_fail(st, "cannot read the stored explanations");
}

/* Every sample of one run with its names, in the order stored.  The rows
 * are read as they are passed on: fn writes elsewhere (another store), or
 * here only to another run, which this run's rows never include. */
static int sq_run_samples_each(struct kg_store *kst, int64_t run, kg_sample_fn fn, void *arg)
{
	struct sq *st = (struct sq *)kst;
	sqlite3_stmt *s;
	int rc;

	if (st->npend && flush_samples(st) != KG_EXIT_PASS)
		return KG_EXIT_RUNTIME;
	if (!(s = prepare_id(st, "cannot read the run's samples",
			     "SELECT b.name, n.path, k.mangled, k.demangled, k.base, m.name, m.unit,"
			     " m.deterministic, s.repeat, s.ordinal, s.value, coalesce(s.rank, -1) FROM samples s"
			     " JOIN benchmarks b ON b.id = s.benchmark JOIN nvtx n ON n.id = s.nvtx"
			     " JOIN kernels k ON k.id = s.kernel JOIN metrics m ON m.id = s.metric"
			     " WHERE s.run = ?1 ORDER BY s.id", run)))
		return KG_EXIT_RUNTIME;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *t[7];
		for (int i = 0; i < 7; i++)
			t[i] = (const char *)sqlite3_column_text(s, i);
		struct kg_sample_rec r = {
			.benchmark = t[0], .nvtx = t[1], .metric = t[5], .unit = t[6],
			.kernel = { t[2], t[3] ? t[3] : t[2], t[4] ? t[4] : t[2] },
			.deterministic = sqlite3_column_int(s, 7), .repeat = sqlite3_column_int(s, 8),
			.ordinal = sqlite3_column_int64(s, 9), .value = sqlite3_column_double(s, 10),
			.ranked = sqlite3_column_int(s, 11) >= 0,
			.rank = sqlite3_column_int(s, 11) >= 0 ? sqlite3_column_int(s, 11) : 0,
		};
		if (fn(arg, &r)) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? KG_EXIT_PASS : db_fail(st, "cannot read the run's samples");
}

/* ------------------------------------------------------------------ */
/* The trend report's reads                                            */

static int sq_names_each(struct kg_store *kst, enum kg_name_table t, kg_name_fn fn, void *arg)
{
	struct sq *st = (struct sq *)kst;
	static const char *const sql[] = {
		[KG_NAMES_BENCHMARK] = "SELECT id, name, NULL, NULL, 0 FROM benchmarks ORDER BY id",
		[KG_NAMES_NVTX] = "SELECT id, path, NULL, NULL, 0 FROM nvtx ORDER BY id",
		[KG_NAMES_KERNEL] = "SELECT id, mangled, demangled, NULL, 0 FROM kernels ORDER BY id",
		[KG_NAMES_METRIC] = "SELECT id, name, NULL, unit, deterministic FROM metrics ORDER BY id",
	};
	sqlite3_stmt *s;
	int rc;

	if ((unsigned)t > KG_NAMES_METRIC)
		return KG_EXIT_RUNTIME;
	if (sqlite3_prepare_v2(st->db, sql[t], -1, &s, NULL) != SQLITE_OK)
		return db_fail(st, "cannot read the name tables");
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct kg_name_row r = {
			sqlite3_column_int64(s, 0), (const char *)sqlite3_column_text(s, 1),
			(const char *)sqlite3_column_text(s, 2), (const char *)sqlite3_column_text(s, 3),
			sqlite3_column_int(s, 4),
		};
		if (fn(arg, &r)) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? KG_EXIT_PASS : db_fail(st, "cannot read the name tables");
}

/* One reader of the samples stream: its statement's connection, the runs
 * asked for (sorted ids), which of them have passed and been seen. */
struct stream_part {
	struct sq *st;
	sqlite3 *db;
	const int64_t *ids;
	size_t n;
	const struct kg_sample_reader *rd;
	void *part;
	int64_t lo, hi;         /* rowid range [lo, hi) */
	unsigned char *seen;    /* per run: its rows were met */
	int rc;                 /* KG_EXIT_PASS, STREAM_APART, or an error */
};
#define STREAM_APART (-1)

/* The index of run among ids, or -1. */
static ptrdiff_t run_index(const int64_t *ids, size_t n, int64_t run, size_t *hint)
{
	size_t lo = 0, hi = n;

	if (*hint < n && ids[*hint] == run)
		return (ptrdiff_t)*hint;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ids[mid] < run)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n || ids[lo] != run)
		return -1;
	*hint = lo;
	return (ptrdiff_t)lo;
}

/* The rows of rowids [lo, hi) of the runs asked for, in rowid order: a
 * run's rows come together when it was stored in one transaction (kgate
 * writes it so); STREAM_APART when they do not. */
static void *stream_scan(void *arg)
{
	struct stream_part *p = arg;
	sqlite3_stmt *s;
	unsigned char *done = xcalloc(p->n + 1, 1);   /* runs whose rows have passed */
	ptrdiff_t prev = -1;
	size_t hint = 0;
	int rc;

	p->rc = KG_EXIT_PASS;
	if (sqlite3_prepare_v2(p->db, "SELECT run, benchmark, nvtx, kernel, metric, value FROM samples"
				      " WHERE rowid >= ?1 AND rowid < ?2", -1, &s, NULL) != SQLITE_OK) {
		free(done);
		p->rc = KG_EXIT_RUNTIME;
		return NULL;
	}
	sqlite3_bind_int64(s, 1, p->lo);
	sqlite3_bind_int64(s, 2, p->hi);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		ptrdiff_t i = run_index(p->ids, p->n, sqlite3_column_int64(s, 0), &hint);
		if (i < 0)
			continue;
		if (i != prev) {
			if (prev >= 0)
				done[prev] = 1;
			if (done[i]) {
				p->rc = STREAM_APART;
				break;
			}
			p->seen[i] = 1;
			prev = i;
		}
		p->rd->row(p->part, p->ids[i], sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
			   sqlite3_column_int64(s, 3), sqlite3_column_int64(s, 4),
			   sqlite3_column_double(s, 5));
	}
	if (p->rc == KG_EXIT_PASS && rc != SQLITE_DONE)
		p->rc = KG_EXIT_RUNTIME;
	sqlite3_finalize(s);
	free(done);
	return NULL;
}

static int64_t one_int(sqlite3 *db, const char *sql, int64_t arg, int64_t dflt)
{
	sqlite3_stmt *s;
	int64_t v = dflt;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return dflt;
	sqlite3_bind_int64(s, 1, arg);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* The whole table scanned, in two threads over two rowid ranges split at a
 * run's first row when there are two parts and rows enough (the second
 * thread on a connection of its own): 0, STREAM_APART (a run's rows came
 * apart, or ran across the split), or an error (printed). */
static int stream_scan_all(struct sq *st, const int64_t *ids, size_t n,
			   const struct kg_sample_reader *rd)
{
	int64_t first = one_int(st->db, "SELECT min(rowid) FROM samples", 0, -1);
	int64_t last = one_int(st->db, "SELECT max(rowid) FROM samples", 0, -1);
	const char *file = sqlite3_db_filename(st->db, "main");
	struct stream_part p[2];
	int nparts = 1, rc;

	memset(p, 0, sizeof p);
	for (int k = 0; k < 2; k++)
		p[k] = (struct stream_part){ st, st->db, ids, n, rd, rd->part[0], INT64_MIN, INT64_MAX,
					     xcalloc(n + 1, 1), 0 };
	if (rd->n_parts > 1 && first >= 0 && last - first >= 100000 && file && *file) {
		int64_t mid_run = one_int(st->db, "SELECT run FROM samples WHERE rowid >= ?1"
					  " ORDER BY rowid LIMIT 1", first + (last - first) / 2, -1);
		int64_t split = one_int(st->db, "SELECT min(rowid) FROM samples WHERE run = ?1",
					mid_run, -1);
		sqlite3 *db2 = NULL;
		if (mid_run >= 0 && split > first &&
		    sqlite3_open_v2(file, &db2, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
				    NULL) == SQLITE_OK) {
			p[0].hi = split;
			p[1].lo = split;
			p[1].db = db2;
			p[1].part = rd->part[1];
			nparts = 2;
		} else {
			sqlite3_close(db2);
		}
	}
	pthread_t tid;
	if (nparts == 2 && pthread_create(&tid, NULL, stream_scan, &p[1]) != 0) {
		/* no thread to be had: one scan of the whole table */
		sqlite3_close(p[1].db);
		p[0].hi = INT64_MAX;
		nparts = 1;
	}
	stream_scan(&p[0]);
	if (nparts == 2) {
		pthread_join(tid, NULL);
		sqlite3_close(p[1].db);
	}
	rc = p[0].rc;
	if (nparts == 2) {
		if (rc == KG_EXIT_PASS)
			rc = p[1].rc;
		for (size_t i = 0; rc == KG_EXIT_PASS && i < n; i++)
			if (p[0].seen[i] && p[1].seen[i])
				rc = STREAM_APART;   /* a run on both sides of the split */
	}
	free(p[0].seen);
	free(p[1].seen);
	if (rc != KG_EXIT_PASS && rc != STREAM_APART)
		return db_fail(st, "cannot read the samples");
	return rc;
}

static int sq_samples_stream(struct kg_store *kst, const int64_t *run_ids, size_t n_runs,
			     const struct kg_sample_reader *rd)
{
	struct sq *st = (struct sq *)kst;
	int64_t *ids = xmalloc((n_runs ? n_runs : 1) * sizeof *ids);
	size_t n = 0;
	int rc = STREAM_APART;

	if (st->npend && flush_samples(st) != KG_EXIT_PASS) {
		free(ids);
		return KG_EXIT_RUNTIME;
	}
	memcpy(ids, run_ids, n_runs * sizeof *ids);
	qsort(ids, n_runs, sizeof *ids, store_cmp_id);
	for (size_t i = 0; i < n_runs; i++)
		if (!n || ids[n - 1] != ids[i])
			ids[n++] = ids[i];
	/* When most runs are asked for, the table is scanned in rowid order,
	 * which is cheaper than looking every row up through the run index;
	 * else (or when a run's rows came apart) each run is read through
	 * it. */
	int64_t all = one_int(st->db, "SELECT count(*) FROM runs", 0, 0);
	if (n && (int64_t)n * 4 >= all * 3)
		rc = stream_scan_all(st, ids, n, rd);
	if (rc == STREAM_APART) {
		sqlite3_stmt *s;
		for (unsigned k = 0; k < rd->n_parts; k++)
			rd->reset(rd->part[k]);
		rc = KG_EXIT_PASS;
		if (n && sqlite3_prepare_v2(st->db, "SELECT benchmark, nvtx, kernel, metric, value"
					    " FROM samples WHERE run = ?1", -1, &s, NULL) != SQLITE_OK)
			rc = db_fail(st, "cannot read the samples");
		for (size_t i = 0; n && rc == KG_EXIT_PASS && i < n; i++) {
			int step;
			sqlite3_reset(s);
			sqlite3_bind_int64(s, 1, ids[i]);
			while ((step = sqlite3_step(s)) == SQLITE_ROW)
				rd->row(rd->part[0], ids[i], sqlite3_column_int64(s, 0),
					sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
					sqlite3_column_int64(s, 3), sqlite3_column_double(s, 4));
			if (step != SQLITE_DONE)
				rc = db_fail(st, "cannot read the samples");
		}
		if (n)
			sqlite3_finalize(s);
	}
	free(ids);
	return rc;
}

static int sq_run_points(struct kg_store *kst, const int64_t *run_ids, size_t n_runs,
			 kg_points_fn fn, void *arg)
{
	struct sq *st = (struct sq *)kst;
	sqlite3_stmt *s;
	int rc = KG_EXIT_PASS, step = SQLITE_DONE;

	if (st->npend && flush_samples(st) != KG_EXIT_PASS)
		return KG_EXIT_RUNTIME;
	if (!n_runs)
		return KG_EXIT_PASS;
	if (sqlite3_prepare_v2(st->db, "SELECT data FROM run_points WHERE run = ?", -1, &s,
			       NULL) != SQLITE_OK)
		return db_fail(st, "cannot read the runs' points");
	for (size_t i = 0; i < n_runs; i++) {
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, run_ids[i]);
		if ((step = sqlite3_step(s)) == SQLITE_ROW) {
			const void *d = sqlite3_column_blob(s, 0);
			int len = sqlite3_column_bytes(s, 0);
			if (fn(arg, run_ids[i], d ? d : "", (size_t)len))
				break;
		} else if (step != SQLITE_DONE) {
			break;
		}
	}
	if (step != SQLITE_DONE && step != SQLITE_ROW)
		rc = db_fail(st, "cannot read the runs' points");
	sqlite3_finalize(s);
	return rc;
}

static int sq_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static int sq_writable(const char *path)
{
	return access(path, W_OK) == 0;
}

const struct kg_store_backend store_sqlite_backend = {
	.name = "SQLite",
	.open = sq_open,
	.close = sq_close,
	.exists = sq_exists,
	.writable = sq_writable,
	.schema_version = sq_schema_version,
	.create_at_version = sq_create_at_version,
	.run_begin = sq_run_begin,
	.sample_add = sq_sample_add,
	.run_benchmark_add = sq_run_benchmark_add,
	.run_benchmark_state = sq_run_benchmark_state,
	.run_commit = sq_run_commit,
	.run_abort = sq_run_abort,
	.verdicts_put = sq_verdicts_put,
	.explanations_put = sq_explanations_put,
	.run_count = sq_run_count,
	.find_runs = sq_find_runs,
	.run_get = sq_run_get,
	.run_benchmarks = sq_run_benchmarks,
	.run_gpu_states = sq_run_gpu_states,
	.run_metrics = sq_run_metrics,
	.load_samples = sq_load_samples,
	.summary_values = sq_summary_values,
	.names_each = sq_names_each,
	.samples_stream = sq_samples_stream,
	.run_points = sq_run_points,
	.run_samples_each = sq_run_samples_each,
	.check_newest = sq_check_newest,
	.check_verdicts = sq_check_verdicts,
	.run_explanations = sq_run_explanations,
};
