/*
 * test_import.c: the importer table (import.h).  Every importer is whole
 * and found by its name; sniffing over the table gives each real fixture to
 * its own importer and nothing else to any; heads of formats kgate does not
 * read (synthetic: only their top-level keys or magic bytes, written here)
 * are recognised by content, not by name; and the sink interns a kernel's
 * names once, keyed as the importer asks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/import.h"
#include "kgate/store.h"
#include "kgate/util.h"

static const char *src(void)
{
	const char *s = getenv("KGATE_SRC");
	return s && *s ? s : ".";
}

/* The importer sniffing picks for a file's first bytes, and how sure. */
static const char *sniff_file(const char *path, int *conf)
{
	unsigned char *head = xmalloc(KG_IMPORT_HEAD);
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	size_t n = fread(head, 1, KG_IMPORT_HEAD, fp);
	fclose(fp);
	const struct kg_importer *im = import_sniff_head(head, n, path, conf);
	free(head);
	return im ? im->name : NULL;
}

static const char *sniff_str(const char *text, const char *path, int *conf)
{
	const struct kg_importer *im =
		import_sniff_head((const unsigned char *)text, strlen(text), path, conf);
	return im ? im->name : NULL;
}

static void test_table(void **state)
{
	size_t n = 0;
	(void)state;
	for (; kg_importers[n]; n++) {
		const struct kg_importer *im = kg_importers[n];
		assert_non_null(im->name);
		assert_true(im->description && *im->description);
		assert_non_null(im->sniff);
		assert_non_null(im->read_info);
		assert_non_null(im->ingest);
		assert_ptr_equal(import_find(im->name), im);
		for (size_t j = 0; j < n; j++)
			assert_string_not_equal(kg_importers[j]->name, im->name);
	}
	assert_true(n >= 2);
	assert_non_null(import_find("nvbench"));
	assert_non_null(import_find("gbench"));
	assert_null(import_find("no-such-format"));
	char *names = import_names();
	assert_true(!strncmp(names, "records, ncu-csv", 16));   /* in the table's order */
	free(names);
}

/* Each real fixture goes to its importer, with its content's certainty. */
static void test_sniff_fixtures(void **state)
{
	static const struct {
		const char *pattern, *importer;
		int conf;               /* 0: KG_SNIFF_SURE */
	} sets[] = {
		{ "tests/fixtures/nvbench/nvbench_axes_*.json", "nvbench", 0 },
		{ "tests/fixtures/nvbench/synthetic_jsonbin.json", "nvbench", 0 },
		/* older than format 1.0: nvbench's, to be refused by name */
		{ "tests/fixtures/nvbench/nvbench_scan_2021_mx150.json", "nvbench", KG_SNIFF_LIKELY },
		{ "tests/fixtures/gbench/*.json", "gbench", 0 },
		{ "tests/fixtures/records/good.jsonl", "records", 0 },
		{ "tests/fixtures/h200/suite/trace/base/*.jsonl", "records", 0 },
		{ "tests/fixtures/h200/diag/*.jsonl", "records", 0 },
		{ "tests/fixtures/h200/torch/*.jsonl", "records", 0 },
		{ "tests/fixtures/h200/*.csv", "ncu-csv", 0 },
		{ "tests/fixtures/h200/ncu/*.csv", "ncu-csv", 0 },
		{ "tests/fixtures/h200/torch/*.csv", "ncu-csv", 0 },
		{ "tests/fixtures/nsys/*.sqlite", "nsys-sqlite", 0 },
		{ "tests/fixtures/kineto/*.json.gz", "kineto", 0 },
	};
	size_t files = 0;
	(void)state;
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		char *pat = xasprintf("%s/%s", src(), sets[i].pattern);
		glob_t g;
		assert_int_equal(glob(pat, 0, NULL, &g), 0);
		for (size_t j = 0; j < g.gl_pathc; j++) {
			int conf;
			const char *name = sniff_file(g.gl_pathv[j], &conf);
			if (!name || strcmp(name, sets[i].importer) ||
			    conf != (sets[i].conf ? sets[i].conf : KG_SNIFF_SURE))
				fail_msg("%s: sniffed as %s (%d), not %s", g.gl_pathv[j],
					 name ? name : "nothing", conf, sets[i].importer);
			files++;
		}
		globfree(&g);
		free(pat);
	}
	assert_true(files > 20);
}

static void test_sniff_heads(void **state)
{
	int conf;
	(void)state;
	/* a records header written with spaces, and an empty file by its name */
	assert_string_equal(sniff_str("{\"type\": \"header\", \"format\": 1}\n", "x", &conf), "records");
	assert_int_equal(conf, KG_SNIFF_SURE);
	assert_string_equal(sniff_str("", "x.jsonl", &conf), "records");
	assert_int_equal(conf, KG_SNIFF_NAME);
	assert_string_equal(sniff_str("", "x.csv", &conf), "ncu-csv");
	assert_int_equal(conf, KG_SNIFF_NAME);
	/* content over name */
	assert_string_equal(sniff_str("{\"type\":\"header\"}\n", "x.csv", &conf), "records");
	assert_int_equal(conf, KG_SNIFF_SURE);
	assert_string_equal(sniff_str("==PROF== Connected to process 1 (./k)\n", "out.log", &conf),
			    "ncu-csv");
	assert_int_equal(conf, KG_SNIFF_LIKELY);
	assert_null(sniff_str("SQLite format 3", "x.jsonl", &conf));
	assert_int_equal(conf, KG_SNIFF_NO);
	assert_null(sniff_str("hello\n", "notes.txt", &conf));
	assert_null(sniff_str("{\"context\": {}}", "x.json", &conf));
	/* nvbench and Google Benchmark: their signatures, whatever the name */
	assert_string_equal(sniff_str("{\"meta\":{\"version\":{\"nvbench\":{}}},\"devices\":[],"
				      "\"benchmarks\":[]}", "r", &conf), "nvbench");
	assert_int_equal(conf, KG_SNIFF_SURE);
	assert_string_equal(sniff_str("{\"context\":{\"num_cpus\":1,\"mhz_per_cpu\":2},"
				      "\"benchmarks\":[]}", "r.csv", &conf), "gbench");
	assert_int_equal(conf, KG_SNIFF_SURE);
	/* a benchmarks array alone is neither's */
	assert_null(sniff_str("{\"benchmarks\":[]}", "x.json", &conf));
}

static const char *unsupported(const char *text, size_t n, const char *path)
{
	return import_unsupported((const unsigned char *)text, n ? n : strlen(text), path);
}

/* Synthetic heads: only the signature of each format. */
static void test_unsupported(void **state)
{
	(void)state;
	/* Kineto's keys: its importer's; a Chrome trace without them is not */
	int conf;
	assert_string_equal(sniff_str(" {\"schemaVersion\":1,\"deviceProperties\":[", "r", &conf),
			    "kineto");
	assert_int_equal(conf, KG_SNIFF_LIKELY);
	assert_string_equal(unsupported("[{\"ph\":\"X\",\"ts\":1}]", 0, "r"),
			    "a Chrome trace JSON file without the GPU kernels of a Kineto "
			    "(PyTorch profiler) trace");
	assert_null(sniff_str("[{\"ph\":\"X\",\"ts\":1}]", "r.json", &conf));
	/* the keys count only at the top level, not inside a value or a string */
	assert_null(unsupported("{\"x\":{\"traceEvents\":[]},\"y\":\"\\\"traceEvents\\\":\"}", 0, "r"));
	assert_null(unsupported("{\"a\":[{\"ph\":1,\"ts\":2}]}", 0, "r"));
	assert_non_null(strstr(unsupported("NVR\0\1\0", 6, "r"), "Nsight Compute report"));
	/* an nsys export's tables: its importer's; another SQLite file is not */
	const struct kg_importer *im = import_sniff_head(
		(const unsigned char *)"SQLite format 3\0 CREATE TABLE StringIds", 39, "r", &conf);
	assert_non_null(im);
	assert_string_equal(im->name, "nsys-sqlite");
	assert_int_equal(conf, KG_SNIFF_SURE);
	assert_null(import_sniff_head((const unsigned char *)"SQLite format 3\0", 16, "r", &conf));
	assert_int_equal(strncmp(unsupported("SQLite format 3\0", 16, "r"), "an SQLite database",
				 18), 0);
	assert_non_null(strstr(unsupported("SQLite format 3\0 CREATE TABLE StringTable", 41, "r"),
			       "nvprof"));
	/* nsys stats tables: a summary is refused with what to give instead */
	assert_non_null(strstr(unsupported("Processing [r.sqlite]\n\"Time (%)\",\"Total Time (ns)\","
					   "\"Instances\",\"Avg (ns)\",\"Name\"\n", 0, "r.csv"),
			       "nsys export --type sqlite"));
	/* a name is a hint only: it names what the content cannot tell */
	assert_null(unsupported("{\"type\":\"header\"}", 0, "x.nsys-rep"));
	assert_non_null(unsupported("x\0y", 3, "x.nsys-rep"));
	assert_string_equal(unsupported("\x1f\x8b\x08", 3, "t.json"), "a gzip-compressed file");
	assert_null(unsupported("hello", 0, "x.ncu-rep"));
}

/* Real files of those formats (tests/fixtures/<format>/, each with its
 * README): recognised by content, and claimed by no importer. */
static void test_unsupported_fixtures(void **state)
{
	static const struct {
		const char *pattern, *what;
	} sets[] = {
		{ "tests/fixtures/ncu/*.ncu-rep", "a binary Nsight Compute report" },
		{ "tests/fixtures/nsys/*.nsys-rep", "an Nsight Systems report (.nsys-rep)" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		char *pat = xasprintf("%s/%s", src(), sets[i].pattern);
		glob_t g;
		if (glob(pat, 0, NULL, &g) != 0) {
			free(pat);
			continue;       /* not in this checkout */
		}
		for (size_t j = 0; j < g.gl_pathc; j++) {
			unsigned char *head = xmalloc(KG_IMPORT_HEAD);
			FILE *fp = fopen(g.gl_pathv[j], "rb");
			assert_non_null(fp);
			size_t n = fread(head, 1, KG_IMPORT_HEAD, fp);
			fclose(fp);
			int conf;
			const char *what = import_unsupported(head, n, "unnamed");
			if (!what || strncmp(what, sets[i].what, strlen(sets[i].what)))
				fail_msg("%s: looks like %s", g.gl_pathv[j], what ? what : "nothing");
			assert_null(import_sniff_head(head, n, g.gl_pathv[j], &conf));
			free(head);
		}
		globfree(&g);
		free(pat);
	}
}

/* A test importer: its ingest adds samples through the sink's interning
 * (the sink's names live as long as the ingest, so they are checked here). */
static int interned;

static int fake_ingest(struct kg_import_sink *s, const char *path)
{
	struct kg_kernel_name a, b, c;
	const struct kg_import_metric *m = import_sink_metric(s, "gpu__time_duration.sum", NULL);
	const struct kg_import_metric *d = import_sink_metric(s, "launch__grid_size", "");

	import_sink_kernel(s, "saxpy(int, float)", KG_KEY_AS_GIVEN, &a);
	import_sink_kernel(s, "saxpy(int, float)", KG_KEY_AS_GIVEN, &b);
	import_sink_kernel(s, "saxpy(int, float)", KG_KEY_CANONICAL, &c);
	/* one entry per name: the same pointers, as given or canonical */
	interned = a.mangled == b.mangled && !strcmp(a.mangled, "saxpy(int, float)") &&
		   c.mangled == a.demangled && !strcmp(c.demangled, "saxpy(int, float)") &&
		   c.base == a.base && !strcmp(a.base, "saxpy");
	assert_ptr_equal(import_sink_metric(s, "gpu__time_duration.sum", "ns"), m);
	assert_false(m->deterministic);
	assert_true(d->deterministic);
	const char *nvtx = import_sink_string(s, "step");
	assert_ptr_equal(import_sink_string(s, "step"), nvtx);
	for (int i = 0; i < 10000; i++)     /* more than one batch */
		if (import_sink_add(s, nvtx, &a, m, i, 100.0 + i, 1) != KG_EXIT_PASS)
			return KG_EXIT_RUNTIME;
	import_sink_stats(s)->kernels = 10000;
	(void)path;
	return KG_EXIT_PASS;
}

static void test_sink(void **state)
{
	const struct kg_importer fake = { "fake", "a test importer", NULL, NULL, NULL, fake_ingest };
	struct kg_run_info run = { 0 };
	struct kg_import_stats stats;
	struct kg_store *st;
	struct kg_sampleset set = { 0 };
	(void)state;

	assert_int_equal(store_open(":memory:", 0, &st), KG_EXIT_PASS);
	run.commit = (char *)"c";
	assert_int_equal(store_run_begin(st, &run), KG_EXIT_PASS);
	assert_int_equal(import_ingest(&fake, st, "fake", "bench", 0, &stats), KG_EXIT_PASS);
	assert_int_equal(stats.samples, 10000);
	assert_int_equal(stats.kernels, 10000);
	import_stats_free(&stats);
	assert_true(interned);
	assert_int_equal(store_run_commit(st), KG_EXIT_PASS);
	assert_int_equal(store_load_samples(st, &run.id, 1, &set), KG_EXIT_PASS);
	assert_int_equal(set.n, 1);
	assert_int_equal(set.s[0].n, 10000);
	assert_string_equal(set.s[0].nvtx, "step");
	store_sampleset_free(&set);
	store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_sniff_fixtures),
		cmocka_unit_test(test_sniff_heads),
		cmocka_unit_test(test_unsupported),
		cmocka_unit_test(test_unsupported_fixtures),
		cmocka_unit_test(test_sink),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
