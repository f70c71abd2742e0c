/*
 * test_store.c: the SQLite store: schema migration, refusal of a newer
 * schema and of a corrupt file (both left untouched), two concurrent
 * writers, read-only opening, aborted runs, and sample loading.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kgate/demangle.h"
#include "kgate/store.h"
#include "kgate/util.h"
#include "kgate/verdict.h"
#include "../../src/store_backend.h"

#include "helpers.h"

static int user_version(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int v = -1;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

static int64_t one_int(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int64_t v = -1;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

/* Run sql on the file at path, through a connection of the test's own. */
static void exec_on(const char *path, const char *sql)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void add_run(struct kg_store *st, const char *commit, int nsamples, double base)
{
	struct kg_run_info run = { 0 };
	struct kg_kernel_name k1 = { "_Z5saxpyifPKfPf", "saxpy(int, float, float const*, float*)",
				     "saxpy" };
	struct kg_kernel_name k2 = { "_Z1av", "a()", "a" };

	run.commit = (char *)commit;
	run.gpu_name = (char *)"Test GPU";
	assert_int_equal(store_run_begin(st, &run), KG_EXIT_PASS);
	assert_true(run.id > 0);
	for (int i = 0; i < nsamples; i++) {
		assert_int_equal(store_sample_add(st, "bench", "step", &k1, "gpu__time_duration.sum",
						  "ns", 0, 0, i, base + i), KG_EXIT_PASS);
		assert_int_equal(store_sample_add(st, "bench", "step", &k2, "gpu__time_duration.sum",
						  "ns", 0, 0, i, 2 * base + i), KG_EXIT_PASS);
	}
	assert_int_equal(store_sample_add(st, "bench", "", &k1, "launch__grid_size", NULL, 1, 0, 0,
					  4), KG_EXIT_PASS);
	assert_int_equal(store_run_commit(st), KG_EXIT_PASS);
}

static void test_create_and_load(void **state)
{
	char *p = helper_path("a.db");
	struct kg_store *st;
	struct kg_sampleset set;
	(void)state;

	assert_int_equal(store_open(p, 0, &st), KG_EXIT_PASS);
	add_run(st, "aaaa1111", 5, 100);
	add_run(st, "bbbb2222", 3, 200);
	assert_int_equal(store_run_count(st), 2);

	int64_t ids[2] = { 1, 2 };
	assert_int_equal(store_load_samples(st, ids, 2, &set), KG_EXIT_PASS);
	/* sorted by benchmark, nvtx, kernel mangled, metric: ("", saxpy grid),
	 * ("step", _Z1av), ("step", _Z5saxpy) */
	assert_int_equal(set.n, 3);
	assert_string_equal(set.s[0].nvtx, "");
	assert_string_equal(set.s[0].metric, "launch__grid_size");
	assert_int_equal(set.s[0].deterministic, 1);
	assert_int_equal(set.s[0].n, 2);
	assert_string_equal(set.s[1].kernel, "_Z1av");
	assert_string_equal(set.s[2].kernel, "_Z5saxpyifPKfPf");
	assert_string_equal(set.s[2].base, "saxpy");
	assert_string_equal(set.s[2].unit, "ns");
	assert_int_equal(set.s[2].n, 8);
	assert_true(set.s[2].v[0] == 100 && set.s[2].run_of[0] == 1);
	assert_true(set.s[2].v[5] == 200 && set.s[2].run_of[5] == 2);
	store_sampleset_free(&set);

	/* one run only */
	assert_int_equal(store_load_samples(st, &ids[1], 1, &set), KG_EXIT_PASS);
	assert_int_equal(set.n, 3);
	assert_int_equal(set.s[2].n, 3);
	store_sampleset_free(&set);
	store_close(st);
	free(p);
}

/* Values come back in (run, repeat, ordinal) order whatever the order they
 * were stored in and the runs were asked for; a run asked twice counts once. */
static void test_load_order(void **state)
{
	char *p = helper_path("order.db");
	struct kg_store *st;
	struct kg_sampleset set;
	struct kg_kernel_name k = { "_Z1kv", "k()", "k" };
	static const int rep[] = { 1, 0, 1, 0 }, ord[] = { 1, 1, 0, 0 };
	(void)state;

	assert_int_equal(store_open(p, 0, &st), KG_EXIT_PASS);
	for (int r = 0; r < 2; r++) {
		struct kg_run_info run = { 0 };
		run.commit = (char *)(r ? "bbbb" : "aaaa");
		run.gpu_name = (char *)"Test GPU";
		assert_int_equal(store_run_begin(st, &run), KG_EXIT_PASS);
		for (int i = 0; i < 4; i++) /* value = 10 run + 2 repeat + ordinal */
			assert_int_equal(store_sample_add(st, "b", "", &k, "gpu__time_duration.sum", "ns",
							  0, rep[i], ord[i], 10 * r + 2 * rep[i] + ord[i]),
					 KG_EXIT_PASS);
		assert_int_equal(store_run_commit(st), KG_EXIT_PASS);
	}
	int64_t ids[3] = { 2, 1, 2 };
	assert_int_equal(store_load_samples(st, ids, 3, &set), KG_EXIT_PASS);
	assert_int_equal(set.n, 1);
	assert_int_equal(set.s[0].n, 8);
	for (size_t i = 0; i < 8; i++) {
		assert_true(set.s[0].v[i] == (double)((i / 4) * 10 + i % 4));
		assert_true(set.s[0].run_of[i] == (int64_t)(i / 4 + 1));
	}
	store_sampleset_free(&set);
	store_close(st);
	free(p);
}

static void test_find_runs(void **state)
{
	char *p = helper_path("f.db");
	struct kg_store *st;
	struct kg_run_info *runs;
	size_t n;
	(void)state;

	assert_int_equal(store_open(p, 0, &st), KG_EXIT_PASS);
	add_run(st, "abc111", 1, 1);
	add_run(st, "abc222", 1, 1);
	add_run(st, "def333", 1, 1);
	struct kg_run_filter f = { 0 };
	assert_int_equal(store_find_runs(st, &f, &runs, &n), KG_EXIT_PASS);
	assert_int_equal(n, 3);
	assert_int_equal(runs[0].id, 3);   /* newest first */
	store_runs_free(runs, n);
	f.commit = "def";
	assert_int_equal(store_find_runs(st, &f, &runs, &n), KG_EXIT_PASS);
	assert_int_equal(n, 1);
	assert_string_equal(runs[0].commit, "def333");
	assert_string_equal(runs[0].gpu_name, "Test GPU");
	store_runs_free(runs, n);
	f.commit = "abc";   /* two commits: ambiguous */
	assert_int_equal(store_find_runs(st, &f, &runs, &n), KG_EXIT_USAGE);
	f.commit = "zzz";
	assert_int_equal(store_find_runs(st, &f, &runs, &n), KG_EXIT_PASS);
	assert_int_equal(n, 0);
	f.commit = NULL;
	f.limit = 2;
	f.gpu_name = "Test GPU";
	assert_int_equal(store_find_runs(st, &f, &runs, &n), KG_EXIT_PASS);
	assert_int_equal(n, 2);
	store_runs_free(runs, n);
	store_close(st);
	free(p);
}

static void test_abort_leaves_nothing(void **state)
{
	char *p = helper_path("ab.db");
	struct kg_store *st;
	struct kg_run_info run = { 0 };
	struct kg_kernel_name k = { "k", "k", "k" };
	(void)state;

	assert_int_equal(store_open(p, 0, &st), KG_EXIT_PASS);
	add_run(st, "c1", 2, 1);
	run.commit = (char *)"c2";
	assert_int_equal(store_run_begin(st, &run), KG_EXIT_PASS);
	assert_int_equal(store_sample_add(st, "newbench", "", &k, "m", "", 0, 0, 0, 1), 0);
	store_run_abort(st);
	assert_int_equal(store_run_count(st), 1);
	/* the interned names of the aborted run are gone too; a new run works */
	add_run(st, "c3", 1, 1);
	assert_int_equal(one_int(p, "SELECT count(*) FROM benchmarks WHERE name = 'newbench'"), 0);
	store_close(st);
	free(p);
}

static void test_migrate_v1(void **state)
{
	char *p = helper_path("v1.db");
	struct kg_store *st;
	(void)state;

	assert_true(store_schema_version() >= 2);
	assert_int_equal(store_create_at_version(p, 1), KG_EXIT_PASS);
	assert_int_equal(user_version(p), 1);
	/* a v1 database has no verdicts table */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
	assert_int_not_equal(sqlite3_exec(db, "SELECT * FROM verdicts", NULL, NULL, NULL),
			     SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "INSERT INTO runs(commit_sha, time) VALUES ('old', 1)",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	assert_int_equal(store_open(p, 0, &st), KG_EXIT_PASS);
	assert_int_equal(user_version(p), store_schema_version());
	assert_int_equal(store_run_count(st), 1);   /* data kept */
	struct kg_verdict_row row = { "bench", "", "k", "m", KG_VERDICT_PASS, 0.01, NAN, NAN, NAN,
				      1, 2, 3, 4, "ok", 0 };
	struct kg_outcome oc = { .verdict = KG_VERDICT_PASS, .on_new_kernel = KG_POLICY_WARN,
				 .on_missing_kernel = KG_POLICY_FAIL, .on_inconclusive = -1,
				 .on_no_baseline = KG_POLICY_WARN };
	assert_int_equal(store_verdicts_put(st, 1, "main", &oc, &row, 1, NULL, 0), KG_EXIT_PASS);
	store_close(st);
	free(p);
}

/* Schema 3 -> 4: every check stored before gets a checks row with the
 * outcome the comment showed then (fail when a row is fail or missing),
 * its rows point at it, and a failing row is marked. */
static void test_migrate_v3_checks(void **state)
{
	char *p = helper_path("v3.db");
	struct kg_store *st;
	sqlite3 *db;
	(void)state;

	assert_true(store_schema_version() >= 4);
	assert_int_equal(store_create_at_version(p, 3), KG_EXIT_PASS);
	assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "INSERT INTO runs(commit_sha, time) VALUES ('a', 1), ('b', 2);"
				      "INSERT INTO verdicts(run, baseline, time, benchmark, nvtx, kernel, metric,"
				      " verdict) VALUES (2, 'a', 10, 'x', '', 'k1', 'm', 'pass'),"
				      " (2, 'a', 10, 'x', '', 'k2', '', 'missing'),"
				      " (2, 'a', 20, 'x', '', 'k1', 'm', 'pass'),"
				      " (2, 'a', 20, 'x', '', 'k2', '', 'new')",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(p, 0, &st), KG_EXIT_PASS);
	store_close(st);
	assert_int_equal(one_int(p, "SELECT count(*) FROM checks"), 2);
	assert_int_equal(one_int(p, "SELECT exit_status FROM checks WHERE time = 10"), 1);
	assert_int_equal(one_int(p, "SELECT verdict = 'fail' FROM checks WHERE time = 10"), 1);
	assert_int_equal(one_int(p, "SELECT exit_status FROM checks WHERE time = 20"), 0);
	assert_int_equal(one_int(p, "SELECT on_new_kernel IS NULL FROM checks WHERE time = 20"), 1);
	assert_int_equal(one_int(p, "SELECT count(*) FROM verdicts v JOIN checks c ON c.id = v.check_id"
				    " AND c.time = v.time"), 4);
	assert_int_equal(one_int(p, "SELECT sum(fails) FROM verdicts"), 1);
	free(p);
}

/* A run records the benchmarks it ran: those its samples name, and those
 * added explicitly that stored nothing. */
static void test_run_benchmarks(void **state)
{
	char *p = helper_path("rb.db");
	struct kg_store *st;
	struct kg_run_info run = { .commit = (char *)"c1" };
	struct kg_kernel_name k = { "k", "k", "k" };
	char **names;
	size_t n;
	(void)state;

	assert_int_equal(store_open(p, 0, &st), KG_EXIT_PASS);
	assert_int_equal(store_run_begin(st, &run), KG_EXIT_PASS);
	assert_int_equal(store_sample_add(st, "zeta", "", &k, "m", "", 0, 0, 0, 1), 0);
	assert_int_equal(store_sample_add(st, "alpha", "", &k, "m", "", 0, 0, 0, 1), 0);
	assert_int_equal(store_sample_add(st, "zeta", "", &k, "m", "", 0, 0, 1, 1), 0);
	assert_int_equal(store_run_benchmark_add(st, "empty"), 0);
	assert_int_equal(store_run_commit(st), KG_EXIT_PASS);
	assert_int_equal(store_run_benchmarks(st, run.id, &names, &n), KG_EXIT_PASS);
	assert_int_equal(n, 3);
	assert_string_equal(names[0], "alpha");
	assert_string_equal(names[1], "empty");
	assert_string_equal(names[2], "zeta");
	store_names_free(names, n);
	/* a run stored before schema 4 (no rows): the benchmarks of its samples */
	exec_on(p, "DELETE FROM run_benchmarks");
	assert_int_equal(store_run_benchmarks(st, run.id, &names, &n), KG_EXIT_PASS);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "alpha");
	assert_string_equal(names[1], "zeta");
	store_names_free(names, n);
	store_close(st);
	free(p);
}

static void test_newer_schema_refused(void **state)
{
	char *p = helper_path("new.db");
	struct kg_store *st;
	sqlite3 *db;
	size_t n1, n2;
	(void)state;

	assert_int_equal(store_open(p, 0, &st), KG_EXIT_PASS);
	store_close(st);
	assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
	char sql[64];
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", store_schema_version() + 1);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	char *before = helper_slurp(p, &n1);
	assert_int_equal(store_open(p, 0, &st), KG_EXIT_RUNTIME);
	assert_null(st);
	assert_int_equal(store_open(p, KG_STORE_READONLY, &st), KG_EXIT_RUNTIME);
	char *after = helper_slurp(p, &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(before, after, n1);
	assert_int_equal(user_version(p), store_schema_version() + 1);
	free(before);
	free(after);
	free(p);
}

static void test_corrupt_refused(void **state)
{
	char *p = helper_path("bad.db");
	struct kg_store *st;
	size_t n1, n2;
	(void)state;

	FILE *fp = fopen(p, "wb");
	assert_non_null(fp);
	for (int i = 0; i < 300; i++)
		fputs("this is not a database at all. ", fp);
	fclose(fp);
	char *before = helper_slurp(p, &n1);
	assert_int_equal(store_open(p, 0, &st), KG_EXIT_RUNTIME);
	assert_int_equal(store_open(p, KG_STORE_READONLY, &st), KG_EXIT_RUNTIME);
	char *after = helper_slurp(p, &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(before, after, n1);
	char *wal = xasprintf("%s-wal", p);
	assert_int_not_equal(access(wal, F_OK), 0);
	free(wal);
	free(before);
	free(after);
	free(p);
}

static void test_foreign_db_refused(void **state)
{
	char *p = helper_path("foreign.db");
	struct kg_store *st;
	sqlite3 *db;
	size_t n1, n2;
	(void)state;

	assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1)", NULL, NULL,
				      NULL), SQLITE_OK);
	sqlite3_close(db);
	char *before = helper_slurp(p, &n1);
	assert_int_equal(store_open(p, 0, &st), KG_EXIT_RUNTIME);
	char *after = helper_slurp(p, &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(before, after, n1);   /* not even switched to WAL */
	free(before);
	free(after);
	free(p);
}

static void test_readonly(void **state)
{
	char *p = helper_path("ro.db");
	char *missing = helper_path("missing.db");
	struct kg_store *st;
	struct kg_run_info run = { 0 };
	(void)state;

	/* a reader of a database that is not there: the one usage error of
	 * every command (store_require), nothing created */
	assert_int_equal(store_open(missing, KG_STORE_READONLY, &st), KG_EXIT_USAGE);
	assert_null(st);
	assert_int_equal(store_require(missing), KG_EXIT_USAGE);
	assert_int_not_equal(access(missing, F_OK), 0);   /* not created */
	assert_int_equal(store_open(p, 0, &st), KG_EXIT_PASS);
	add_run(st, "r1", 3, 10);
	store_close(st);
	assert_int_equal(chmod(p, 0444), 0);
	assert_int_equal(store_open(p, KG_STORE_READONLY, &st), KG_EXIT_PASS);
	assert_int_equal(store_run_count(st), 1);
	int64_t id = 1;
	struct kg_sampleset set;
	assert_int_equal(store_load_samples(st, &id, 1, &set), KG_EXIT_PASS);
	assert_int_equal(set.n, 3);
	store_sampleset_free(&set);
	run.commit = (char *)"r2";
	assert_int_equal(store_run_begin(st, &run), KG_EXIT_RUNTIME);
	store_close(st);
	chmod(p, 0644);
	free(p);
	free(missing);
}

/* One writing process: the exit status it should have. */
static int writer(const char *p, int who, int runs)
{
	struct kg_store *st;

	if (store_open(p, 0, &st) != KG_EXIT_PASS)
		return 10;
	for (int r = 0; r < runs; r++) {
		struct kg_run_info run = { 0 };
		char commit[32];
		snprintf(commit, sizeof(commit), "w%d-%d", who, r);
		run.commit = commit;
		if (store_run_begin(st, &run) != KG_EXIT_PASS)
			return 11;
		for (int i = 0; i < 500; i++) {
			char kname[32];
			snprintf(kname, sizeof(kname), "kernel%d", i % 7);
			struct kg_kernel_name k = { kname, kname, kname };
			if (store_sample_add(st, "bench", "", &k, "gpu__time_duration.sum", "ns", 0, 0, i,
					     i) != KG_EXIT_PASS)
				return 12;
		}
		if (store_run_commit(st) != KG_EXIT_PASS)
			return 13;
	}
	store_close(st);
	return 0;
}

static void test_two_writers(void **state)
{
	char *p = helper_path("two.db");
	pid_t pid[2];
	struct kg_store *st;
	(void)state;

	setenv("KGATE_BUSY_TIMEOUT_MS", "20000", 1);
	for (int w = 0; w < 2; w++) {
		pid[w] = fork();
		assert_true(pid[w] >= 0);
		if (pid[w] == 0) {
			int code = writer(p, w, 20);
			free(p);
			_exit(code);
		}
	}
	for (int w = 0; w < 2; w++) {
		int status;
		assert_int_equal(waitpid(pid[w], &status, 0), pid[w]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_int_equal(store_open(p, KG_STORE_READONLY, &st), KG_EXIT_PASS);
	assert_int_equal(store_run_count(st), 40);
	assert_int_equal(one_int(p, "SELECT count(*) FROM samples"), 40 * 500);
	assert_int_equal(one_int(p, "SELECT count(DISTINCT run) FROM samples"), 40);
	assert_int_equal(one_int(p, "SELECT count(*) FROM kernels"), 7);   /* names interned once */
	store_close(st);
	unsetenv("KGATE_BUSY_TIMEOUT_MS");
	free(p);
}

static void test_kernel_names_meet(void **state)
{
	char *p = helper_path("names.db");
	struct kg_store *st;
	struct kg_run_info run = { 0 };
	(void)state;

	/* ncu's spelling and the collector's mangled name are one kernel */
	char *ncu = demangle_name("saxpy(int, float, const float *, float *)");
	char *col = demangle_name("_Z5saxpyifPKfPf");
	assert_string_equal(ncu, col);
	char *base = demangle_base(col);
	assert_string_equal(base, "saxpy");
	assert_int_equal(store_open(p, 0, &st), KG_EXIT_PASS);
	run.commit = (char *)"x";
	assert_int_equal(store_run_begin(st, &run), 0);
	struct kg_kernel_name kn = { ncu, ncu, base }, kc = { "_Z5saxpyifPKfPf", col, base };
	assert_int_equal(store_sample_add(st, "b", "", &kn, "m", "", 0, 0, 0, 1), 0);
	assert_int_equal(store_sample_add(st, "b", "", &kc, "m", "", 0, 1, 0, 1), 0);
	assert_int_equal(store_run_commit(st), 0);
	struct kg_sampleset set;
	assert_int_equal(store_load_samples(st, &run.id, 1, &set), KG_EXIT_PASS);
	assert_int_equal(set.n, 1);      /* one kernel, of the true mangled name */
	assert_string_equal(set.s[0].kernel, "_Z5saxpyifPKfPf");
	assert_int_equal(set.s[0].n, 2);
	store_sampleset_free(&set);
	store_close(st);
	free(ncu);
	free(col);
	free(base);
	free(p);
}

/* A database's name as messages show it: any password hidden. */
static void test_target_shown(void **state)
{
	static const char *const cases[][2] = {
		{ "kgate.db", "kgate.db" },
		{ "/tmp/a:b@c.db", "/tmp/a:b@c.db" },
		{ "postgresql://kg:pw@host:5432/db", "postgresql://kg:***@host:5432/db" },
		{ "postgres://kg@host/db", "postgres://kg@host/db" },
		{ "postgresql://host/db", "postgresql://host/db" },
		{ "postgresql://kg:p%40w@host/db?sslmode=require", "postgresql://kg:***@host/db?sslmode=require" },
		{ "postgresql://host/db?password=pw&user=kg", "postgresql://host/db?password=***&user=kg" },
		{ "postgresql://host/db?user=kg&PASSWORD=pw", "postgresql://host/db?user=kg&PASSWORD=***" },
		{ "postgresql://a:b@h/d?password=c&password=d#x", "postgresql://a:***@h/d?password=***&password=***#x" },
		{ "postgresql://kg:@host/db", "postgresql://kg:***@host/db" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = store_target_shown(cases[i][0]);
		assert_string_equal(got, cases[i][1]);
		free(got);
	}
}

/* Scheme prefixes are SQLite paths; other URLs are refused, not made files. */
static void test_db_schemes(void **state)
{
	char *p = helper_path("scheme.db"), *u = xasprintf("sqlite:%s", p);
	struct kg_store *st;
	(void)state;
	unlink(p);
	assert_int_equal(store_exists(u), 0);
	assert_int_equal(store_open(u, 0, &st), KG_EXIT_PASS);
	add_run(st, "s1", 1, 1);
	store_close(st);
	assert_int_equal(store_exists(u), 1);
	assert_int_equal(store_exists(p), 1);
	assert_int_equal(one_int(p, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(store_open("postgresql://kg:pw@localhost/kgate", 0, &st), KG_EXIT_RUNTIME);
	assert_null(st);
	assert_int_equal(store_open("nosuch://x", KG_STORE_READONLY, &st), KG_EXIT_RUNTIME);
	assert_null(st);
	free(u);
	free(p);
}

static void test_demangle(void **state)
{
	static const struct {
		const char *in, *canon, *base;
	} cases[] = {
		{ "_Z5saxpyifPKfPf", "saxpy(int, float, float const*, float*)", "saxpy" },
		{ "strided(int, const float *, float *, int)", "strided(int, float const*, float*, int)",
		  "strided" },
		{ "void ns::gemm<float, 128>(const float *, float *, int)",
		  "void ns::gemm<float, 128>(float const*, float*, int)", "gemm" },
		{ "void at::native::(anonymous namespace)::kern<4>(int)",
		  "void at::native::(anonymous namespace)::kern<4>(int)", "kern" },
		{ "_ZN2ns4gemmIfLi128EEEvPKfPfi", "void ns::gemm<float, 128>(float const*, float*, int)",
		  "gemm" },
		{ "plain_c_kernel", "plain_c_kernel", "plain_c_kernel" },
		{ "_Zbroken", "_Zbroken", "_Zbroken" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *c = demangle_name(cases[i].in);
		char *b = demangle_base(c);
		assert_string_equal(c, cases[i].canon);
		assert_string_equal(b, cases[i].base);
		free(c);
		free(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_and_load),
		cmocka_unit_test(test_load_order),
		cmocka_unit_test(test_find_runs),
		cmocka_unit_test(test_abort_leaves_nothing),
		cmocka_unit_test(test_migrate_v1),
		cmocka_unit_test(test_migrate_v3_checks),
		cmocka_unit_test(test_run_benchmarks),
		cmocka_unit_test(test_newer_schema_refused),
		cmocka_unit_test(test_corrupt_refused),
		cmocka_unit_test(test_foreign_db_refused),
		cmocka_unit_test(test_readonly),
		cmocka_unit_test(test_two_writers),
		cmocka_unit_test(test_kernel_names_meet),
		cmocka_unit_test(test_target_shown),
		cmocka_unit_test(test_db_schemes),
		cmocka_unit_test(test_demangle),
	};
	return cmocka_run_group_tests(tests, helper_tmpdir_setup, helper_tmpdir_teardown);
}
