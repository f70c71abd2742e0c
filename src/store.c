/*
 * store.c: kgate's SQLite database; all of kgate's SQL lives here.
 *
 * Owns the schema (docs/schema.md), its forward migrations (a list of SQL
 * steps indexed by PRAGMA user_version), the write path of a run (one
 * BEGIN IMMEDIATE transaction, cached prepared statements, hash-map caches
 * that intern benchmark, kernel, metric and NVTX names), and the read
 * queries of runs, samples and verdicts.  Bound parameters only.
 */
#include "kgate/store.h"
#include "kgate/util.h"

#include <errno.h>
#include <math.h>
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
};
#define SCHEMA_VERSION ((int)(sizeof(migrations) / sizeof(migrations[0])))

int store_schema_version(void)
{
	return SCHEMA_VERSION;
}

/* ------------------------------------------------------------------ */
/* Name interning: string -> row id, open addressing                   */

struct intern_ent {
	char *key;
	int64_t id;
};
struct intern_map {
	struct intern_ent *e;
	size_t cap, n;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static int64_t intern_get(const struct intern_map *m, const char *key)
{
	if (!m->cap)
		return 0;
	for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].key)
			return 0;
		if (!strcmp(m->e[i].key, key))
			return m->e[i].id;
	}
}

static void intern_put(struct intern_map *m, const char *key, int64_t id);

static void intern_grow(struct intern_map *m)
{
	struct intern_ent *old = m->e;
	size_t oldcap = m->cap;

	m->cap = oldcap ? oldcap * 2 : 64;
	m->e = xcalloc(m->cap, sizeof(*m->e));
	m->n = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].key) {
			size_t j = hash_str(old[i].key) & (m->cap - 1);
			while (m->e[j].key)
				j = (j + 1) & (m->cap - 1);
			m->e[j] = old[i];
			m->n++;
		}
	free(old);
}

static void intern_put(struct intern_map *m, const char *key, int64_t id)
{
	if ((m->n + 1) * 2 > m->cap)
		intern_grow(m);
	size_t i = hash_str(key) & (m->cap - 1);
	while (m->e[i].key) {
		if (!strcmp(m->e[i].key, key)) {
			m->e[i].id = id;
			return;
		}
		i = (i + 1) & (m->cap - 1);
	}
	m->e[i].key = xstrdup(key);
	m->e[i].id = id;
	m->n++;
}

static void intern_clear(struct intern_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->e[i].key);
	free(m->e);
	m->e = NULL;
	m->cap = m->n = 0;
}

/* ------------------------------------------------------------------ */

enum {
	Q_SAMPLE, Q_BENCH_GET, Q_BENCH_ADD, Q_NVTX_GET, Q_NVTX_ADD,
	Q_KERN_GET, Q_KERN_BY_DEM, Q_KERN_ADD, Q_KERN_RENAME,
	Q_METRIC_GET, Q_METRIC_ADD, Q_COUNT
};

static const char *const query_sql[Q_COUNT] = {
	[Q_SAMPLE] = ("INSERT INTO samples(run, benchmark, nvtx, kernel, metric, repeat, ordinal,"
		      " value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
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

struct kg_store {
	sqlite3 *db;
	char *path;
	int readonly;
	int in_run;
	int64_t run_id;
	sqlite3_stmt *q[Q_COUNT];
	struct intern_map bench, nvtx, kern, metric;
};

static int db_fail(struct kg_store *st, const char *what)
{
	kg_error("database '%s': %s: %s", st->path, what, sqlite3_errmsg(st->db));
	return KG_EXIT_RUNTIME;
}

static sqlite3_stmt *query(struct kg_store *st, int which)
{
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

/* Migrate from the version found to target, in one transaction. */
static int migrate(struct kg_store *st, int target)
{
	char *err = NULL;
	int v = 0;

	if (exec_sql(st->db, "BEGIN IMMEDIATE", NULL) != SQLITE_OK)
		return db_fail(st, "cannot lock for migration");
	if (read_user_version(st->db, &v) != SQLITE_OK) {
		int rc = db_fail(st, "cannot read schema version");
		exec_sql(st->db, "ROLLBACK", NULL);
		return rc;
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

static int open_db(const char *path, int flags, int target, struct kg_store **out)
{
	struct kg_store *st = xcalloc(1, sizeof(*st));
	int ro = (flags & KG_STORE_READONLY) != 0;
	int rc, v = 0;

	*out = NULL;
	st->path = xstrdup(path);
	st->readonly = ro;
	if (ro && access(path, F_OK) != 0) {
		kg_error("cannot open '%s': %s", path, strerror(errno));
		goto fail;
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
		/* A WAL file on read-only media: open it as immutable. */
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
	store_close(st);
	return KG_EXIT_RUNTIME;
}

int store_open(const char *path, int flags, struct kg_store **out)
{
	return open_db(path, flags, SCHEMA_VERSION, out);
}

int store_create_at_version(const char *path, int version)
{
	struct kg_store *st;

	if (version < 1 || version > SCHEMA_VERSION) {
		kg_error("no schema version %d", version);
		return KG_EXIT_RUNTIME;
	}
	if (access(path, F_OK) == 0) {
		kg_error("cannot create '%s': file exists", path);
		return KG_EXIT_RUNTIME;
	}
	int rc = open_db(path, 0, version, &st);
	store_close(st);
	return rc;
}

void store_close(struct kg_store *st)
{
	if (!st)
		return;
	if (st->in_run)
		store_run_abort(st);
	for (int i = 0; i < Q_COUNT; i++)
		sqlite3_finalize(st->q[i]);
	intern_clear(&st->bench);
	intern_clear(&st->nvtx);
	intern_clear(&st->kern);
	intern_clear(&st->metric);
	if (st->db)
		sqlite3_close(st->db);
	free(st->path);
	free(st);
}

struct sqlite3 *store_db(struct kg_store *st)
{
	return st->db;
}

/* ------------------------------------------------------------------ */
/* Metric vocabulary                                                   */

int store_metric_is_deterministic(const char *m)
{
	if (!strncmp(m, "launch__", 8))
		return 1;
	return strstr(m, "inst_executed") || strstr(m, "bytes") || strstr(m, "sectors") ||
	       strstr(m, "requests");
}

const char *store_metric_unit_guess(const char *m)
{
	if (!strncmp(m, "gpu__time_duration", 18) || strstr(m, "__time"))
		return "ns";
	if (!strncmp(m, "launch__shared_mem", 18))
		return "byte/block";
	if (!strncmp(m, "launch__local_mem", 17))
		return "byte/thread";
	if (!strcmp(m, "launch__registers_per_thread"))
		return "register/thread";
	if (strstr(m, "bytes"))
		return "byte";
	if (strstr(m, "inst_executed"))
		return "inst";
	if (strstr(m, "sectors"))
		return "sector";
	if (strstr(m, "requests"))
		return "request";
	if (strstr(m, "pct_of_peak") || strstr(m, "_pct"))
		return "%";
	return "";
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

int store_run_begin(struct kg_store *st, struct kg_run_info *run)
{
	sqlite3_stmt *s;

	if (st->readonly) {
		kg_error("database '%s' was opened read-only", st->path);
		return KG_EXIT_RUNTIME;
	}
	if (st->in_run) {
		kg_error("database '%s': a run is already open", st->path);
		return KG_EXIT_RUNTIME;
	}
	if (exec_sql(st->db, "BEGIN IMMEDIATE", NULL) != SQLITE_OK)
		return db_fail(st, "cannot start a transaction");
	st->in_run = 1;
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO runs(commit_sha, branch, parent, time, host, gpu_name,"
			       " gpu_uuid, gpu_chip, driver, cuda, collector, config_hash, source,"
			       " label, ci_url, status) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
			       -1, &s, NULL) != SQLITE_OK) {
		int rc = db_fail(st, "prepare");
		store_run_abort(st);
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
		store_run_abort(st);
		return rc;
	}
	sqlite3_finalize(s);
	st->run_id = sqlite3_last_insert_rowid(st->db);
	run->id = st->run_id;
	return KG_EXIT_PASS;
}

/* id of name in a one-column name table, adding it when new. */
static int64_t intern_simple(struct kg_store *st, struct intern_map *m, int qget, int qadd,
			     const char *name)
{
	int64_t id = intern_get(m, name);
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
		if (sqlite3_step(s) != SQLITE_DONE) {
			db_fail(st, "cannot add a name");
			return 0;
		}
		id = sqlite3_last_insert_rowid(st->db);
	}
	sqlite3_reset(s);
	intern_put(m, name, id);
	return id;
}

static int64_t intern_metric(struct kg_store *st, const char *name, const char *unit, int det)
{
	int64_t id = intern_get(&st->metric, name);
	sqlite3_stmt *s;

	if (id)
		return id;
	if (!(s = query(st, Q_METRIC_GET)))
		return 0;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW) {
		id = sqlite3_column_int64(s, 0);
	} else {
		if (!(s = query(st, Q_METRIC_ADD)))
			return 0;
		sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
		bind_text(s, 2, unit ? unit : store_metric_unit_guess(name));
		sqlite3_bind_int(s, 3, det);
		if (sqlite3_step(s) != SQLITE_DONE) {
			db_fail(st, "cannot add a metric");
			return 0;
		}
		id = sqlite3_last_insert_rowid(st->db);
	}
	sqlite3_reset(s);
	intern_put(&st->metric, name, id);
	return id;
}

static int is_mangled(const char *n)
{
	return n[0] == '_' && n[1] == 'Z';
}

/*
 * A kernel row is found by its mangled name, else by its canonical
 * demangled name (ncu exports carry only that); a row first made from a
 * demangled name takes the true mangled name when one arrives.
 */
static int64_t intern_kernel(struct kg_store *st, const struct kg_kernel_name *k)
{
	const char *mangled = k->mangled;
	const char *dem = k->demangled ? k->demangled : mangled;
	const char *base = k->base ? k->base : dem;
	int64_t id = intern_get(&st->kern, mangled);
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
			int rename = is_mangled(mangled) &&
				     !is_mangled((const char *)sqlite3_column_text(s, 1));
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
				intern_clear(&st->kern);
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
	intern_put(&st->kern, mangled, id);
	return id;
}

int store_sample_add(struct kg_store *st, const char *benchmark, const char *nvtx,
		     const struct kg_kernel_name *kernel, const char *metric,
		     const char *unit, int deterministic, int repeat, int64_t ordinal,
		     double value)
{
	int64_t b, n, k, m;
	sqlite3_stmt *s;

	if (!st->in_run) {
		kg_error("database '%s': no run is open", st->path);
		return KG_EXIT_RUNTIME;
	}
	if (!(b = intern_simple(st, &st->bench, Q_BENCH_GET, Q_BENCH_ADD, benchmark)) ||
	    !(n = intern_simple(st, &st->nvtx, Q_NVTX_GET, Q_NVTX_ADD, nvtx ? nvtx : "")) ||
	    !(k = intern_kernel(st, kernel)) || !(m = intern_metric(st, metric, unit, deterministic)))
		return KG_EXIT_RUNTIME;
	if (!(s = query(st, Q_SAMPLE)))
		return KG_EXIT_RUNTIME;
	sqlite3_bind_int64(s, 1, st->run_id);
	sqlite3_bind_int64(s, 2, b);
	sqlite3_bind_int64(s, 3, n);
	sqlite3_bind_int64(s, 4, k);
	sqlite3_bind_int64(s, 5, m);
	sqlite3_bind_int(s, 6, repeat);
	sqlite3_bind_int64(s, 7, ordinal);
	sqlite3_bind_double(s, 8, value);
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return db_fail(st, "cannot add a sample");
	return KG_EXIT_PASS;
}

int store_run_commit(struct kg_store *st)
{
	if (!st->in_run) {
		kg_error("database '%s': no run is open", st->path);
		return KG_EXIT_RUNTIME;
	}
	if (exec_sql(st->db, "COMMIT", NULL) != SQLITE_OK) {
		int rc = db_fail(st, "cannot commit the run");
		store_run_abort(st);
		return rc;
	}
	st->in_run = 0;
	return KG_EXIT_PASS;
}

void store_run_abort(struct kg_store *st)
{
	if (!st->in_run)
		return;
	exec_sql(st->db, "ROLLBACK", NULL);
	st->in_run = 0;
	st->run_id = 0;
	/* Ids handed out inside the transaction are gone. */
	intern_clear(&st->bench);
	intern_clear(&st->nvtx);
	intern_clear(&st->kern);
	intern_clear(&st->metric);
}

int64_t store_run_count(struct kg_store *st)
{
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

void store_run_info_free(struct kg_run_info *r)
{
	if (!r)
		return;
	free(r->commit);
	free(r->branch);
	free(r->parent);
	free(r->host);
	free(r->gpu_name);
	free(r->gpu_uuid);
	free(r->gpu_chip);
	free(r->driver);
	free(r->cuda);
	free(r->collector);
	free(r->config_hash);
	free(r->source);
	free(r->label);
	free(r->ci_url);
	free(r->status);
	memset(r, 0, sizeof(*r));
}

void store_runs_free(struct kg_run_info *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		store_run_info_free(&runs[i]);
	free(runs);
}

#define RUN_COLS "id, commit_sha, branch, parent, time, host, gpu_name, gpu_uuid, gpu_chip," \
		 " driver, cuda, collector, config_hash, source, label, ci_url, status"

static void run_from_row(sqlite3_stmt *s, struct kg_run_info *r)
{
	r->id = sqlite3_column_int64(s, 0);
	r->commit = col_dup(s, 1);
	r->branch = col_dup(s, 2);
	r->parent = col_dup(s, 3);
	r->time = sqlite3_column_int64(s, 4);
	r->host = col_dup(s, 5);
	r->gpu_name = col_dup(s, 6);
	r->gpu_uuid = col_dup(s, 7);
	r->gpu_chip = col_dup(s, 8);
	r->driver = col_dup(s, 9);
	r->cuda = col_dup(s, 10);
	r->collector = col_dup(s, 11);
	r->config_hash = col_dup(s, 12);
	r->source = col_dup(s, 13);
	r->label = col_dup(s, 14);
	r->ci_url = col_dup(s, 15);
	r->status = col_dup(s, 16);
}

/* Resolve a commit prefix to one full commit_sha; NULL when none matches. */
static int resolve_commit(struct kg_store *st, const char *c, char **full)
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

int store_find_runs(struct kg_store *st, const struct kg_run_filter *f,
		    struct kg_run_info **runs, size_t *n)
{
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
	buf_adds(&sql, "SELECT " RUN_COLS " FROM runs WHERE 1");
	if (full)
		buf_adds(&sql, " AND commit_sha = ?1");
	if (f && f->branch)
		buf_adds(&sql, " AND branch = ?2");
	if (f && f->gpu_name)
		buf_adds(&sql, " AND gpu_name = ?3");
	if (f && f->driver)
		buf_adds(&sql, " AND driver = ?4");
	if (f && f->label)
		buf_adds(&sql, " AND label = ?5");
	if (f && f->no_quick)
		buf_adds(&sql, " AND status <> 'quick'");
	if (f && f->since)
		buf_adds(&sql, " AND time >= ?6");
	buf_adds(&sql, " ORDER BY time DESC, id DESC");
	if (f && f->limit)
		buf_adds(&sql, " LIMIT ?7");
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

/* ------------------------------------------------------------------ */
/* Reading samples                                                     */

static int same_text(const char *a, const unsigned char *b)
{
	return a && b && !strcmp(a, (const char *)b);
}

int store_load_samples(struct kg_store *st, const int64_t *run_ids, size_t n_runs,
		       struct kg_sampleset *out)
{
	struct kg_buf sql = KG_BUF_INIT;
	sqlite3_stmt *s;
	size_t cap = 0, vcap = 0;
	struct kg_series *cur = NULL;
	int rc;

	out->s = NULL;
	out->n = 0;
	if (n_runs == 0)
		return KG_EXIT_PASS;
	/*
	 * The samples of each run are contiguous in the samples b-tree (its key
	 * starts with run); the names are joined afterwards and sorted.
	 */
	buf_adds(&sql, "SELECT b.name, n.path, k.mangled, k.demangled, k.base, m.name, m.unit,"
		       " m.deterministic, s.value, s.run"
		       " FROM samples s JOIN benchmarks b ON b.id = s.benchmark"
		       " JOIN nvtx n ON n.id = s.nvtx JOIN kernels k ON k.id = s.kernel"
		       " JOIN metrics m ON m.id = s.metric WHERE s.run IN (");
	for (size_t i = 0; i < n_runs; i++)
		buf_adds(&sql, i ? ",?" : "?");
	buf_adds(&sql, ") ORDER BY b.name, n.path, k.mangled, m.name, s.run, s.repeat, s.ordinal");
	rc = sqlite3_prepare_v2(st->db, sql.s, -1, &s, NULL);
	buf_free(&sql);
	if (rc != SQLITE_OK)
		return db_fail(st, "prepare");
	for (size_t i = 0; i < n_runs; i++)
		sqlite3_bind_int64(s, (int)i + 1, run_ids[i]);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const unsigned char *bn = sqlite3_column_text(s, 0), *nv = sqlite3_column_text(s, 1),
				    *kn = sqlite3_column_text(s, 2), *mn = sqlite3_column_text(s, 5);
		if (!cur || !same_text(cur->benchmark, bn) || !same_text(cur->nvtx, nv) ||
		    !same_text(cur->kernel, kn) || !same_text(cur->metric, mn)) {
			if (out->n == cap) {
				cap = cap ? cap * 2 : 64;
				out->s = xrealloc(out->s, cap * sizeof(*out->s));
			}
			cur = &out->s[out->n++];
			memset(cur, 0, sizeof(*cur));
			cur->benchmark = col_dup(s, 0);
			cur->nvtx = col_dup(s, 1);
			cur->kernel = col_dup(s, 2);
			cur->demangled = col_dup(s, 3);
			cur->base = col_dup(s, 4);
			cur->metric = col_dup(s, 5);
			cur->unit = col_dup(s, 6);
			if (!cur->unit)
				cur->unit = xstrdup("");
			cur->deterministic = sqlite3_column_int(s, 7);
			vcap = 0;
		}
		if (cur->n == vcap) {
			vcap = vcap ? vcap * 2 : 16;
			cur->v = xrealloc(cur->v, vcap * sizeof(*cur->v));
			cur->run_of = xrealloc(cur->run_of, vcap * sizeof(*cur->run_of));
		}
		cur->v[cur->n] = sqlite3_column_double(s, 8);
		cur->run_of[cur->n++] = sqlite3_column_int64(s, 9);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		store_sampleset_free(out);
		return db_fail(st, "cannot read samples");
	}
	return KG_EXIT_PASS;
}

void store_sampleset_free(struct kg_sampleset *set)
{
	for (size_t i = 0; i < set->n; i++) {
		struct kg_series *x = &set->s[i];
		free(x->benchmark);
		free(x->nvtx);
		free(x->kernel);
		free(x->demangled);
		free(x->base);
		free(x->metric);
		free(x->unit);
		free(x->v);
		free(x->run_of);
	}
	free(set->s);
	set->s = NULL;
	set->n = 0;
}

/* ------------------------------------------------------------------ */
/* Verdicts                                                            */

static const char *verdict_name(enum kg_verdict v)
{
	switch (v) {
	case KG_VERDICT_PASS: return "pass";
	case KG_VERDICT_FAIL: return "fail";
	case KG_VERDICT_INCONCLUSIVE: return "inconclusive";
	case KG_VERDICT_NEW: return "new";
	case KG_VERDICT_MISSING: return "missing";
	case KG_VERDICT_SKIP: return "skip";
	}
	return "?";
}

static void bind_real(sqlite3_stmt *s, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_double(s, i, v);
}

/* Insert the explanation rows inside the caller's transaction. */
static int put_explanations(struct kg_store *st, int64_t head_run, const char *baseline,
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

int store_verdicts_put(struct kg_store *st, int64_t head_run, const char *baseline,
		       const struct kg_verdict_row *rows, size_t n,
		       const struct kg_explain_row *x, size_t nx)
{
	sqlite3_stmt *s;
	int64_t now = (int64_t)time(NULL);

	if (st->readonly) {
		kg_error("database '%s' was opened read-only", st->path);
		return KG_EXIT_RUNTIME;
	}
	if (exec_sql(st->db, "BEGIN IMMEDIATE", NULL) != SQLITE_OK)
		return db_fail(st, "cannot start a transaction");
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO verdicts(run, baseline, time, benchmark, nvtx, kernel,"
			       " metric, verdict, shift, lo, hi, p, base_value, head_value, n_base,"
			       " n_head, message) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
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
		bind_text(s, 8, verdict_name(r->verdict));
		bind_real(s, 9, r->shift);
		bind_real(s, 10, r->lo);
		bind_real(s, 11, r->hi);
		bind_real(s, 12, r->p);
		bind_real(s, 13, r->base_value);
		bind_real(s, 14, r->head_value);
		sqlite3_bind_int64(s, 15, (sqlite3_int64)r->n_base);
		sqlite3_bind_int64(s, 16, (sqlite3_int64)r->n_head);
		bind_text(s, 17, r->message);
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

int store_explanations_put(struct kg_store *st, int64_t head_run, const char *baseline,
			   const struct kg_explain_row *x, size_t nx)
{
	if (st->readonly) {
		kg_error("database '%s' was opened read-only", st->path);
		return KG_EXIT_RUNTIME;
	}
	if (exec_sql(st->db, "BEGIN IMMEDIATE", NULL) != SQLITE_OK)
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

int store_run_get(struct kg_store *st, int64_t id, struct kg_run_info *out)
{
	sqlite3_stmt *s;
	int rc;

	memset(out, 0, sizeof(*out));
	if (sqlite3_prepare_v2(st->db, "SELECT " RUN_COLS " FROM runs WHERE id = ?", -1, &s,
			       NULL) != SQLITE_OK)
		return db_fail(st, "prepare");
	sqlite3_bind_int64(s, 1, id);
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

int store_summary_values(struct kg_store *st, int64_t run, const char *metric,
			 enum kg_summary_by by, struct kg_summary_group **groups, size_t *n)
{
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

void store_summary_free(struct kg_summary_group *groups, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(groups[i].benchmark);
		free(groups[i].name);
		free(groups[i].unit);
		free(groups[i].v);
	}
	free(groups);
}

int store_run_metrics(struct kg_store *st, int64_t run, char ***names, size_t *n)
{
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc;

	*names = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT DISTINCT m.name FROM samples s JOIN metrics m ON m.id = s.metric"
			       " WHERE s.run = ?1 ORDER BY m.name",
			       -1, &s, NULL) != SQLITE_OK)
		return db_fail(st, "prepare");
	sqlite3_bind_int64(s, 1, run);
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

void store_names_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}
