/*
 * test_ncu_csv.c: the Nsight Compute CSV importer.  The two real H200
 * exports of tests/fixtures/h200/ (details and raw pages) import with the
 * right launches, kernels and values; small synthetic exports written here
 * cover what those lack: long names with commas and quotes, ragged rule
 * rows, "n/a", unit conversion, a newline inside a quoted field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kgate/import.h"
#include "kgate/ncu_csv.h"
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
	unlink(p);
	assert_int_equal(store_open(p, 0, &st), KG_EXIT_PASS);
	free(db_file);
	db_file = p;
	return st;
}

static double value(struct kg_store *st, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	double v = NAN;
	(void)st;
	assert_int_equal(sqlite3_open_v2(db_file, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_double(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

static int import(struct kg_store *st, const char *path, size_t *k, size_t *n)
{
	struct kg_run_info run = { 0 };
	run.commit = (char *)"c";
	assert_int_equal(store_run_begin(st, &run), KG_EXIT_PASS);
	int rc = ncu_csv_ingest(st, path, "k", k, n);
	if (rc == KG_EXIT_PASS)
		assert_int_equal(store_run_commit(st), KG_EXIT_PASS);
	else
		store_run_abort(st);
	return rc;
}

static void test_details_fixture(void **state)
{
	struct kg_store *st = fresh_store("d.db");
	char *p = helper_fixture("h200", "ncu_saxpy_strided_details.csv");
	struct kg_import_info info;
	size_t k, n;
	(void)state;

	assert_int_equal(import_read_info(import_find("ncu-csv"), p, &info), KG_EXIT_PASS);
	/* the details page does not name the GPU: its compute capability stands in */
	assert_string_equal(info.run.gpu_name, "GPU of compute capability 9.0");
	assert_string_equal(info.run.gpu_chip, "sm_90");
	assert_string_equal(info.run.source, "ncu-csv");
	assert_string_equal(info.benchmark, "k");
	import_info_free(&info);

	assert_int_equal(import(st, p, &k, &n), KG_EXIT_PASS);
	assert_int_equal(k, 10);
	/* 2 metrics per launch, plus block and grid size from their columns */
	assert_int_equal(n, 40);
	assert_true(value(st, "SELECT count(*) FROM kernels") == 2);
	assert_true(value(st, "SELECT count(DISTINCT ordinal) FROM samples") == 10);
	/* "1,179,968" ns for launch 1 (strided) */
	assert_true(value(st, "SELECT value FROM samples_named WHERE ordinal = 1"
			      " AND metric = 'gpu__time_duration.sum'") == 1179968);
	assert_true(value(st, "SELECT value FROM samples_named WHERE ordinal = 0"
			      " AND metric = 'sm__throughput.avg.pct_of_peak_sustained_elapsed'") == 34.80);
	assert_true(value(st, "SELECT value FROM samples_named WHERE ordinal = 9"
			      " AND metric = 'launch__grid_size'") == 262144);
	assert_true(value(st, "SELECT count(*) FROM kernels WHERE base = 'strided'"
			      " AND demangled = 'strided(int, float const*, float*, int)'") == 1);
	assert_true(value(st, "SELECT count(*) FROM samples_named WHERE kernel LIKE 'saxpy%'"
			      " AND metric = 'gpu__time_duration.sum'") == 5);
	store_close(st);
	free(p);
}

static void test_raw_fixture(void **state)
{
	struct kg_store *st = fresh_store("r.db");
	char *p = helper_fixture("h200", "ncu_saxpy_strided_raw.csv");
	struct kg_import_info info;
	size_t k, n;
	(void)state;

	assert_int_equal(import_read_info(import_find("ncu-csv"), p, &info), KG_EXIT_PASS);
	assert_string_equal(info.run.gpu_name, "NVIDIA H200");
	import_info_free(&info);
	assert_int_equal(import(st, p, &k, &n), KG_EXIT_PASS);
	assert_int_equal(k, 10);
	assert_true(n > 10 * 5);
	assert_true(value(st, "SELECT count(*) FROM kernels") == 2);
	assert_true(value(st, "SELECT value FROM samples_named WHERE ordinal = 0"
			      " AND metric = 'smsp__inst_executed.sum'") == 39845888);
	assert_true(value(st, "SELECT value FROM samples_named WHERE ordinal = 1"
			      " AND metric = 'dram__bytes_read.sum'") == 4294981888.0);
	assert_true(value(st, "SELECT value FROM samples_named WHERE ordinal = 0"
			      " AND metric = 'gpu__time_duration.sum'") == 230976);
	assert_true(value(st, "SELECT value FROM samples_named WHERE ordinal = 1"
			      " AND metric = 'smsp__inst_executed.avg'") == 178734.55);
	assert_true(value(st, "SELECT value FROM samples_named WHERE ordinal = 1"
			      " AND metric = 'launch__registers_per_thread'") == 18);
	/* every launch has each chosen metric once */
	assert_true(value(st, "SELECT count(*) FROM samples_named"
			      " WHERE metric = 'sm__throughput.avg.pct_of_peak_sustained_elapsed'") == 10);
	assert_true(value(st, "SELECT deterministic FROM metrics WHERE name = 'smsp__inst_executed.sum'") == 1);
	assert_true(value(st, "SELECT count(*) FROM metrics WHERE unit = 'byte'"
			      " AND name = 'dram__bytes_read.sum'") == 1);
	/* device attributes and text columns are not samples */
	assert_true(value(st, "SELECT count(*) FROM metrics WHERE name LIKE 'device\\_\\_%' ESCAPE '\\'") == 0);
	assert_true(value(st, "SELECT count(*) FROM metrics"
			      " WHERE name = 'launch__cluster_scheduling_policy'") == 0);
	store_close(st);
	free(p);
}

#define DETAILS_HDR "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\"," \
	"\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\"," \
	"\"Metric Unit\",\"Metric Value\"\n"

static void test_synthetic_details(void **state)
{
	struct kg_store *st = fresh_store("s.db");
	struct kg_buf name = KG_BUF_INIT, csv = KG_BUF_INIT;
	size_t k, n;
	(void)state;

	/* a templated name over 1000 characters with commas and a quote */
	buf_adds(&name, "void fused::kernel<");
	for (int i = 0; i < 250; i++)
		buf_printf(&name, "%sT%d", i ? ", " : "", i);
	buf_adds(&name, ", \"\"q\"\">(const float *, float *, int)");
	assert_true(name.len > 1000);
	buf_adds(&csv, "program output first, with \"a quote\n==PROF== Connected to process 1\n");
	buf_adds(&csv, DETAILS_HDR);
	buf_printf(&csv, "\"0\",\"1\",\"app\",\"h\",\"%s\",\"1\",\"7\",\"(128, 2, 1)\",\"(10, 1, 1)\","
			 "\"0\",\"9.0\",\"GPU Speed Of Light Throughput\",\"Duration\",\"usecond\",\"1,234.5\"\n",
		   name.s);
	buf_printf(&csv, "\"0\",\"1\",\"app\",\"h\",\"%s\",\"1\",\"7\",\"(128, 2, 1)\",\"(10, 1, 1)\","
			 "\"0\",\"9.0\",\"GPU Speed Of Light Throughput\",\"DRAM Throughput\",\"%%\",\"n/a\"\n",
		   name.s);
	/* a ragged rule row */
	buf_printf(&csv, "\"0\",\"1\",\"app\",\"h\",\"%s\",\"1\",\"7\",\"(128, 2, 1)\",\"(10, 1, 1)\","
			 "\"0\",\"9.0\",\"SOL\",\"\",\"\"\n", name.s);
	buf_adds(&csv, "\"1\",\"1\",\"app\",\"h\",\"multi\nline(int)\",\"1\",\"7\",\"(1, 1, 1)\",\"(1, 1, 1)\","
		       "\"0\",\"9.0\",\"Memory Workload Analysis\",\"Memory Throughput\",\"Gbyte/second\",\"2.5\"\n");
	buf_adds(&csv, "==PROF== Disconnected from process 1\n");
	char *p = helper_write_tmp("syn.csv", csv.s);

	assert_int_equal(import(st, p, &k, &n), KG_EXIT_PASS);
	assert_int_equal(k, 2);
	/* launch 0: duration + block + grid; launch 1: the DRAM bandwidth + block + grid */
	assert_int_equal(n, 6);
	assert_true(value(st, "SELECT value FROM samples_named WHERE metric = 'gpu__time_duration.sum'")
		    == 1234500);
	assert_true(value(st, "SELECT value FROM samples_named WHERE ordinal = 0"
			      " AND metric = 'launch__block_size'") == 256);
	assert_true(value(st, "SELECT value FROM samples_named"
			      " WHERE metric = 'dram__bytes.sum.per_second'") == 2.5e9);
	assert_true(value(st, "SELECT count(*) FROM kernels WHERE base = 'kernel'"
			      " AND demangled LIKE 'void fused::kernel<T0, T1,%\"q\">(float const*, float*, int)'") == 1);
	assert_true(value(st, "SELECT count(*) FROM kernels WHERE mangled = 'multi\nline(int)'") == 1);
	store_close(st);
	free(p);
	buf_free(&name);
	buf_free(&csv);
}

static void test_rejects(void **state)
{
	struct kg_store *st = fresh_store("rej.db");
	size_t k, n;
	(void)state;

	char *p = helper_write_tmp("none.csv", "hello\n==PROF== nothing profiled\n");
	assert_int_equal(import(st, p, &k, &n), KG_EXIT_USAGE);
	free(p);
	p = helper_write_tmp("unterminated.csv", DETAILS_HDR "\"0\",\"1\",\"app\",\"h\",\"k(int\n");
	assert_int_equal(import(st, p, &k, &n), KG_EXIT_USAGE);
	free(p);
	p = helper_write_tmp("raw_ragged.csv", "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n"
					 "\"\",\"\",\"nsecond\"\n\"0\",\"k()\",\"5\"\n\"1\",\"k()\"\n");
	assert_int_equal(import(st, p, &k, &n), KG_EXIT_USAGE);
	free(p);
	assert_true(value(st, "SELECT count(*) FROM runs") == 0);
	/* a raw page with usecond units is converted to ns */
	p = helper_write_tmp("raw_us.csv", "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n"
				     "\"\",\"\",\"usecond\"\n\"0\",\"k()\",\"1.5\"\n\"1\",\"k()\",\"n/a\"\n");
	assert_int_equal(import(st, p, &k, &n), KG_EXIT_PASS);
	assert_int_equal(k, 2);
	assert_int_equal(n, 1);
	assert_true(value(st, "SELECT value FROM samples_named") == 1500);
	assert_true(value(st, "SELECT count(*) FROM metrics WHERE unit = 'ns'") == 1);
	free(p);
	/* a row starting with "ID" that is no header (no "Kernel Name") is
	 * skipped and leaves the page's columns as they were */
	p = helper_write_tmp("id_row.csv", DETAILS_HDR "\"ID\",\"note\"\n"
		      "\"0\",\"1\",\"app\",\"h\",\"k()\",\"1\",\"7\",\"(1, 1, 1)\",\"(1, 1, 1)\","
		      "\"0\",\"9.0\",\"GPU Speed Of Light Throughput\",\"Duration\",\"nsecond\",\"7\"\n");
	assert_int_equal(import(st, p, &k, &n), KG_EXIT_PASS);
	assert_int_equal(k, 1);
	assert_int_equal(n, 3);
	free(p);
	store_close(st);
}

/* A raw page of one metric column whose one launch has value v. */
static int import_value(struct kg_store *st, const char *v, double *got)
{
	char *csv = xasprintf("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n"
			      "\"\",\"\",\"nsecond\"\n\"0\",\"k()\",\"%s\"\n", v);
	char *p = helper_write_tmp("num.csv", csv);
	size_t k, n;
	int rc = import(st, p, &k, &n);
	*got = rc == KG_EXIT_PASS
		? value(st, "SELECT value FROM samples_named WHERE run = (SELECT max(id) FROM runs)")
		: NAN;
	free(p);
	free(csv);
	return rc;
}

/* Numbers as ncu writes them under the C locale are read; numbers of
 * another locale's format, which read as C would be 100x or 1000x off,
 * are refused. */
static void test_numbers(void **state)
{
	static const struct { const char *s; double v; } good[] = {
		{ "1,179,968", 1179968 }, { "1,979,278,859.43", 1979278859.43 }, { "13.42", 13.42 },
		{ "0.07", 0.07 }, { "0.125", 0.125 }, { "4672", 4672 }, { "-3.5", -3.5 },
		{ "1.5e+09", 1.5e9 }, { " 12 ", 12 }, { "1234567", 1234567 },
	};
	static const char *const locale[] = {
		"117.344", "65,77", "1.179.968", "1.234,5", "1 179 968", "1\xc2\xa0" "179",
		"12,3456", "1,23,456", "9.999",
	};
	struct kg_store *st = fresh_store("num.db");
	double v;
	(void)state;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(import_value(st, good[i].s, &v), KG_EXIT_PASS);
		if (v != good[i].v) {
			print_error("'%s' read as %.17g\n", good[i].s, v);
			fail();
		}
	}
	for (size_t i = 0; i < sizeof(locale) / sizeof(locale[0]); i++)
		if (import_value(st, locale[i], &v) != KG_EXIT_USAGE) {
			print_error("'%s' not refused\n", locale[i]);
			fail();
		}
	/* text is no number: skipped, as before */
	assert_int_equal(import_value(st, "n/a", &v), KG_EXIT_PASS);
	store_close(st);
}

/* The header facts come from the first launch row, so reading them stops
 * there (a fault further down is the import's to report); each table's
 * columns are classified from its own header and units rows. */
#define TWO_TABLES "==PROF== Connected\n" \
	"\"ID\",\"Process Name\",\"Kernel Name\",\"device__attribute_display_name\"," \
	"\"gpu__time_duration.sum\",\"launch__grid_size\"\n" \
	"\"\",\"\",\"\",\"\",\"usecond\",\"\"\n" \
	"\"0\",\"app\",\"k()\",\"GPU A\",\"2\",\"64\"\n" \
	"\"ID\",\"Kernel Name\",\"dram__bytes_read.sum\",\"device__attribute_display_name\"\n" \
	"\"\",\"\",\"Kbyte\",\"\"\n" \
	"\"1\",\"k()\",\"2\",\"GPU A\"\n"

static void test_one_pass(void **state)
{
	struct kg_store *st = fresh_store("one.db");
	struct kg_import_info info;
	size_t k, n;
	(void)state;

	char *p = helper_write_tmp("tail.csv", TWO_TABLES "\"2\",\"k(int\n");
	assert_int_equal(import_read_info(import_find("ncu-csv"), p, &info), KG_EXIT_PASS);
	assert_string_equal(info.run.gpu_name, "GPU A");
	assert_string_equal(info.benchmark, "app");
	import_info_free(&info);
	assert_int_equal(import(st, p, &k, &n), KG_EXIT_USAGE);
	assert_true(value(st, "SELECT count(*) FROM runs") == 0);
	free(p);

	p = helper_write_tmp("two.csv", TWO_TABLES);
	assert_int_equal(import(st, p, &k, &n), KG_EXIT_PASS);
	assert_int_equal(k, 2);
	assert_int_equal(n, 3);
	assert_true(value(st, "SELECT value FROM samples_named WHERE ordinal = 0"
			      " AND metric = 'gpu__time_duration.sum'") == 2000);
	assert_true(value(st, "SELECT value FROM samples_named WHERE ordinal = 1"
			      " AND metric = 'dram__bytes_read.sum'") == 2000);
	assert_true(value(st, "SELECT deterministic FROM metrics WHERE name = 'launch__grid_size'") == 1);
	assert_true(value(st, "SELECT deterministic FROM metrics WHERE name = 'gpu__time_duration.sum'") == 0);
	assert_true(value(st, "SELECT count(*) FROM metrics WHERE name = 'dram__bytes_read.sum'"
			      " AND unit = 'byte'") == 1);
	free(p);
	store_close(st);
}

static void test_reader(void **state)
{
	static const char text[] = "\"a\",\"b,c\",\"d\"\"e\"\r\n\"x\ny\",,z\nplain, \"text\n\"last\"";
	struct ncu_csv_reader rd = { 0 };
	FILE *fp = fmemopen((void *)text, sizeof(text) - 1, "r");
	(void)state;

	assert_non_null(fp);
	assert_int_equal(ncu_csv_read_record(fp, &rd), 3);
	assert_string_equal(rd.fields[1], "b,c");
	assert_string_equal(rd.fields[2], "d\"e");
	assert_int_equal(rd.line, 1);
	assert_int_equal(ncu_csv_read_record(fp, &rd), 3);
	assert_string_equal(rd.fields[0], "x\ny");
	assert_string_equal(rd.fields[1], "");
	assert_string_equal(rd.fields[2], "z");
	assert_int_equal(rd.line, 2);
	assert_int_equal(ncu_csv_read_record(fp, &rd), 1);   /* not quoted: one raw line */
	assert_false(rd.quoted_first);
	assert_string_equal(rd.fields[0], "plain, \"text");
	assert_int_equal(rd.line, 4);
	assert_int_equal(ncu_csv_read_record(fp, &rd), 1);
	assert_string_equal(rd.fields[0], "last");
	assert_int_equal(ncu_csv_read_record(fp, &rd), 0);
	fclose(fp);
	ncu_csv_reader_free(&rd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_details_fixture),
		cmocka_unit_test(test_raw_fixture),
		cmocka_unit_test(test_synthetic_details),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_one_pass),
		cmocka_unit_test(test_reader),
	};
	return cmocka_run_group_tests(tests, helper_tmpdir_setup, helper_tmpdir_teardown);
}
