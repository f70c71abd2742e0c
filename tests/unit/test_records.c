/*
 * test_records.c: reading records files (tests/fixtures/records/, synthetic
 * parser inputs): a good file and its samples, a missing footer, bad JSON
 * with its line number, a truncated last line, an unknown format version,
 * a field of the wrong type, an over-long line.  A rejected file leaves
 * nothing once the run is aborted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kgate/import.h"
#include "kgate/records.h"
#include "kgate/store.h"
#include "kgate/util.h"

#include "helpers.h"

/* The file of the last fresh store: what ingest stored is read from it
 * through a connection of the test's own (the rows of the SQLite
 * backend's tables, as docs/schema.md describes them). */
static char *db_file;

static struct kg_store *fresh_store(const char *name)
{
	char *p = helper_path(name);
	struct kg_store *st;
	assert_int_equal(store_open(p, 0, &st), KG_EXIT_PASS);
	free(db_file);
	db_file = p;
	return st;
}

static int64_t count(struct kg_store *st, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int64_t v = -1;
	(void)st;
	assert_int_equal(sqlite3_open_v2(db_file, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

/* Ingest one fixture as a run; returns records_ingest's status. */
static int ingest(struct kg_store *st, const char *name, struct kg_records_stats *rs)
{
	char *p = helper_fixture("records", name);
	struct kg_run_info run = { 0 };
	run.commit = (char *)"c";
	assert_int_equal(store_run_begin(st, &run), KG_EXIT_PASS);
	int rc = records_ingest(st, p, "bench", 0, rs);
	if (rc == KG_EXIT_PASS)
		assert_int_equal(store_run_commit(st), KG_EXIT_PASS);
	else
		store_run_abort(st);
	free(p);
	return rc;
}

static void test_good(void **state)
{
	struct kg_store *st = fresh_store("good.db");
	struct kg_records_stats rs;
	struct kg_import_info info;
	char *p = helper_fixture("records", "good.jsonl");
	(void)state;

	assert_int_equal(import_read_info(import_find("records"), p, &info), KG_EXIT_PASS);
	assert_string_equal(info.run.gpu_name, "Synthetic GPU");
	assert_string_equal(info.run.gpu_chip, "SYN0");
	assert_string_equal(info.run.driver, "99999");
	assert_string_equal(info.run.gpu_uuid, "GPU-00000000-0000-0000-0000-000000000000");
	assert_string_equal(info.run.collector, "kgate-collector 0.1.0");
	assert_string_equal(info.benchmark, "saxpy");
	assert_int_equal(info.pass, 0);
	import_info_free(&info);

	assert_int_equal(ingest(st, "good.jsonl", &rs), KG_EXIT_PASS);
	assert_int_equal(rs.kernels, 3);
	assert_int_equal(rs.samples, 21);
	assert_int_equal(rs.errors, 1);
	assert_int_equal(rs.dropped, 0);
	assert_int_equal(count(st, "SELECT count(*) FROM samples"), 21);
	assert_int_equal(count(st, "SELECT count(*) FROM kernels"), 2);
	/* duration derived from end - start for the record without metrics */
	assert_int_equal(count(st, "SELECT value FROM samples_named WHERE kernel = '_Z7stridediPKfPfi'"
				   " AND metric = 'gpu__time_duration.sum'"), 4000);
	/* grid from [2,2,1], block from [128,1,1] */
	assert_int_equal(count(st, "SELECT value FROM samples_named WHERE kernel = '_Z7stridediPKfPfi'"
				   " AND metric = 'launch__grid_size'"), 4);
	assert_int_equal(count(st, "SELECT value FROM samples_named WHERE kernel = '_Z7stridediPKfPfi'"
				   " AND metric = 'launch__block_size'"), 128);
	/* metrics given win over the fields: the duration is 3300, not end - start */
	assert_int_equal(count(st, "SELECT value FROM samples_named WHERE ordinal = 0"
				   " AND metric = 'gpu__time_duration.sum'"), 3300);
	assert_int_equal(count(st, "SELECT count(*) FROM samples_named WHERE nvtx = 'step/forward'"), 14);
	assert_int_equal(count(st, "SELECT deterministic FROM metrics WHERE name = 'launch__grid_size'"), 1);
	assert_int_equal(count(st, "SELECT deterministic FROM metrics"
				   " WHERE name = 'gpu__time_duration.sum'"), 0);
	assert_int_equal(count(st, "SELECT count(*) FROM kernels WHERE base = 'saxpy'"
				   " AND demangled = 'saxpy(int, float, float const*, float*)'"), 1);
	store_close(st);
	free(p);
}

static void expect_reject(const char *file)
{
	struct kg_store *st = fresh_store("rej.db");
	struct kg_records_stats rs;

	int before = (int)count(st, "SELECT count(*) FROM runs");
	assert_int_equal(ingest(st, file, &rs), KG_EXIT_USAGE);
	assert_int_equal(count(st, "SELECT count(*) FROM runs"), before);
	store_close(st);
}

static void test_no_footer(void **state)
{
	(void)state;
	expect_reject("no_footer.jsonl");
}

static void test_bad_json(void **state)
{
	(void)state;
	expect_reject("bad_json_line3.jsonl");
}

static void test_truncated(void **state)
{
	(void)state;
	expect_reject("truncated.jsonl");
}

static void test_unknown_format(void **state)
{
	struct kg_import_info info;
	char *p = helper_fixture("records", "format99.jsonl");
	(void)state;
	assert_int_equal(import_read_info(import_find("records"), p, &info), KG_EXIT_USAGE);
	import_info_free(&info);
	free(p);
	expect_reject("format99.jsonl");
}

static void test_bad_type(void **state)
{
	(void)state;
	expect_reject("bad_type.jsonl");
}

static void test_missing_file(void **state)
{
	struct kg_import_info info;
	(void)state;
	assert_int_equal(import_read_info(import_find("records"), "/nonexistent/records.jsonl", &info),
			 KG_EXIT_USAGE);
	import_info_free(&info);
}

static void test_structure(void **state)
{
	struct kg_store *st = fresh_store("structure.db");
	char *p = helper_path("s.jsonl");
	struct kg_run_info run = { 0 };
	static const char *const bad[] = {
		"",   /* empty */
		"{\"type\":\"kernel\",\"ordinal\":0,\"name\":\"k\"}\n",   /* no header first */
		"{\"type\":\"header\",\"format\":1}\n{\"type\":\"footer\"}\n{\"type\":\"footer\"}\n",
		"{\"type\":\"header\",\"format\":1}\n[1,2]\n{\"type\":\"footer\"}\n",
		"{\"type\":\"header\",\"format\":1}\n{\"ordinal\":0}\n{\"type\":\"footer\"}\n",
		"{\"type\":\"header\",\"format\":\"1\"}\n{\"type\":\"footer\"}\n",
		"{\"type\":\"header\",\"format\":1}\n{\"type\":\"kernel\",\"ordinal\":0,\"name\":\"k\","
		"\"grid\":[1,2]}\n{\"type\":\"footer\"}\n",
		"{\"type\":\"header\",\"format\":1}\n{\"type\":\"kernel\",\"ordinal\":0,\"name\":\"k\","
		"\"metrics\":{\"m\":\"fast\"}}\n{\"type\":\"footer\"}\n",
		"{\"type\":\"header\",\"format\":1}\n{\"type\":\"kernel\",\"ordinal\":0,\"name\":\"k\","
		"\"start\":10,\"end\":5}\n{\"type\":\"footer\"}\n",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		helper_write(p, bad[i]);
		run.commit = (char *)"c";
		assert_int_equal(store_run_begin(st, &run), KG_EXIT_PASS);
		assert_int_equal(records_ingest(st, p, "b", 0, NULL), KG_EXIT_USAGE);
		store_run_abort(st);
	}
	/* unknown record types of format 1 are skipped, blank lines too */
	helper_write(p, "{\"type\":\"header\",\"format\":1}\n\n{\"type\":\"future\",\"x\":1}\n"
		      "{\"type\":\"kernel\",\"ordinal\":0,\"name\":\"k\",\"metrics\":{\"m\":1.5,\"n\":null}}\n"
		      "{\"type\":\"footer\",\"kernels\":1}\n");
	struct kg_records_stats rs;
	assert_int_equal(store_run_begin(st, &run), KG_EXIT_PASS);
	assert_int_equal(records_ingest(st, p, "b", 0, &rs), KG_EXIT_PASS);
	assert_int_equal(rs.samples, 1);
	assert_int_equal(store_run_commit(st), KG_EXIT_PASS);
	assert_int_equal(count(st, "SELECT count(*) FROM runs"), 1);
	store_close(st);
	free(p);
}

static void test_long_line(void **state)
{
	struct kg_store *st = fresh_store("long.db");
	char *p = helper_path("long.jsonl");
	struct kg_run_info run = { 0 };
	FILE *fp = fopen(p, "w");
	(void)state;

	assert_non_null(fp);
	fputs("{\"type\":\"header\",\"format\":1}\n{\"type\":\"kernel\",\"ordinal\":0,\"name\":\"", fp);
	for (size_t i = 0; i < (17u << 20) / 64; i++)
		fputs("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", fp);
	fputs("\"}\n{\"type\":\"footer\"}\n", fp);
	fclose(fp);
	run.commit = (char *)"c";
	assert_int_equal(store_run_begin(st, &run), KG_EXIT_PASS);
	assert_int_equal(records_ingest(st, p, "b", 0, NULL), KG_EXIT_USAGE);
	store_run_abort(st);
	store_close(st);
	unlink(p);
	free(p);
}

/* end - start over the whole int64 range: the duration is exact, not an
 * overflow (found by the records fuzz harness, now tests/fuzz/fuzz_import.c). */
static void test_duration_range(void **state)
{
	struct kg_store *st = fresh_store("range.db");
	char *p = helper_path("range.jsonl");
	struct kg_run_info run = { 0 };
	(void)state;

	helper_write(p, "{\"type\":\"header\",\"format\":1}\n"
		      "{\"type\":\"kernel\",\"ordinal\":0,\"name\":\"k\","
		      "\"start\":-9223372036854775808,\"end\":9223372036854775807}\n"
		      "{\"type\":\"footer\"}\n");
	run.commit = (char *)"c";
	assert_int_equal(store_run_begin(st, &run), KG_EXIT_PASS);
	assert_int_equal(records_ingest(st, p, "b", 0, NULL), KG_EXIT_PASS);
	assert_int_equal(store_run_commit(st), KG_EXIT_PASS);
	assert_int_equal(count(st, "SELECT value = 18446744073709551615.0 FROM samples_named"
				   " WHERE metric = 'gpu__time_duration.sum'"), 1);
	store_close(st);
	free(p);
}

/* Format 2's rank: read from the header into every sample and the run's
 * device set; a bad rank rejected; format 1 (no rank) as before. */
static void test_rank(void **state)
{
	struct kg_store *st = fresh_store("rank.db");
	char *p = helper_path("r.jsonl");
	struct kg_run_info run = { 0 };
	struct kg_import_info info;
	static const char *const hdr =
		"{\"type\":\"header\",\"format\":2,\"rank\":3,\"rank_from\":\"RANK\","
		"\"local_rank\":1,\"world_size\":4,\"devices\":[{\"id\":0,\"name\":\"Synthetic GPU\","
		"\"uuid\":\"GPU-a\"},{\"id\":1,\"name\":\"Synthetic GPU\",\"uuid\":\"GPU-b\"}]}\n";
	(void)state;
	struct kg_buf b = KG_BUF_INIT;
	buf_adds(&b, hdr);
	buf_adds(&b, "{\"type\":\"kernel\",\"ordinal\":0,\"name\":\"k\",\"device\":1,"
		     "\"metrics\":{\"m\":1.5}}\n{\"type\":\"footer\",\"kernels\":1}\n");
	helper_write(p, b.s);
	buf_free(&b);
	memset(&info, 0, sizeof(info));
	assert_int_equal(records_read_info(p, &info), KG_EXIT_PASS);
	assert_int_equal(info.rank, 3);
	assert_int_equal(info.local_rank, 1);
	assert_int_equal(info.world_size, 4);
	import_info_free(&info);
	run.commit = (char *)"c";
	assert_int_equal(store_run_begin(st, &run), KG_EXIT_PASS);
	assert_int_equal(records_ingest(st, p, "b", 0, NULL), KG_EXIT_PASS);
	assert_int_equal(store_run_commit(st), KG_EXIT_PASS);
	assert_int_equal(count(st, "SELECT count(*) FROM samples WHERE rank = 3"), 1);
	assert_int_equal(count(st, "SELECT count(*) FROM samples WHERE rank IS NOT 3"), 0);
	/* the device the kernel ran on, not every device the header lists */
	assert_int_equal(count(st, "SELECT json_array_length(devices) FROM runs"), 1);
	assert_int_equal(count(st, "SELECT count(*) FROM runs WHERE devices LIKE '%GPU-b%'"), 1);
	/* each series of the run carries the rank */
	struct kg_sampleset set;
	int64_t id = run.id;
	assert_int_equal(store_load_samples(st, &id, 1, &set), KG_EXIT_PASS);
	assert_int_equal(set.n, 1);
	assert_int_equal(set.s[0].ranked, 1);
	assert_int_equal(set.s[0].rank, 3);
	store_sampleset_free(&set);
	/* a rank that is not a non-negative integer */
	static const char *const bad[] = {
		"{\"type\":\"header\",\"format\":2,\"rank\":-1}\n{\"type\":\"footer\"}\n",
		"{\"type\":\"header\",\"format\":2,\"rank\":\"1\"}\n{\"type\":\"footer\"}\n",
		"{\"type\":\"header\",\"format\":2,\"world_size\":1.5}\n{\"type\":\"footer\"}\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		helper_write(p, bad[i]);
		memset(&info, 0, sizeof(info));
		assert_int_equal(records_read_info(p, &info), KG_EXIT_USAGE);
		import_info_free(&info);
	}
	/* format 1: no rank */
	char *good = helper_fixture("records", "good.jsonl");
	memset(&info, 0, sizeof(info));
	info.rank = info.local_rank = info.world_size = -1;
	assert_int_equal(records_read_info(good, &info), KG_EXIT_PASS);
	assert_int_equal(info.rank, -1);
	import_info_free(&info);
	free(good);
	store_close(st);
	free(p);
}

/* Pooling the ranks: the series of one identity and metric that differ only
 * by rank become one, without a rank, their values together. */
static void test_pool_ranks(void **state)
{
	double a[] = { 1, 2 }, b[] = { 3 }, c[] = { 4 };
	struct kg_series s[3] = {
		{ .benchmark = "b", .nvtx = "", .kernel = "k", .metric = "m", .ranked = 1, .rank = 0 },
		{ .benchmark = "b", .nvtx = "", .kernel = "k", .metric = "m", .ranked = 1, .rank = 1 },
		{ .benchmark = "b", .nvtx = "", .kernel = "j", .metric = "m", .ranked = 1, .rank = 1 },
	};
	(void)state;
	s[0].v = xmalloc(sizeof a);
	memcpy(s[0].v, a, sizeof a);
	s[0].n = 2;
	s[1].v = xmalloc(sizeof b);
	memcpy(s[1].v, b, sizeof b);
	s[1].n = 1;
	s[2].v = xmalloc(sizeof c);
	memcpy(s[2].v, c, sizeof c);
	s[2].n = 1;
	struct kg_series *arr = xmalloc(sizeof s);
	memcpy(arr, s, sizeof s);
	/* the names are static: a pool (empty) says the set does not own them */
	struct kg_sampleset set = { arr, 3, xmalloc(sizeof(char *)), 0 };
	store_sampleset_pool_ranks(&set);
	assert_int_equal(set.n, 2);
	assert_string_equal(set.s[0].kernel, "j");
	assert_int_equal(set.s[0].ranked, 0);
	assert_string_equal(set.s[1].kernel, "k");
	assert_int_equal(set.s[1].ranked, 0);
	assert_int_equal(set.s[1].n, 3);
	assert_true(set.s[1].v[0] == 1 && set.s[1].v[1] == 2 && set.s[1].v[2] == 3);
	store_sampleset_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_no_footer),
		cmocka_unit_test(test_bad_json),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_unknown_format),
		cmocka_unit_test(test_bad_type),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_duration_range),
		cmocka_unit_test(test_rank),
		cmocka_unit_test(test_pool_ranks),
	};
	return cmocka_run_group_tests(tests, helper_tmpdir_setup, helper_tmpdir_teardown);
}
