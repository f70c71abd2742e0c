/*
 * import/gbench.c: the importer of Google Benchmark JSON output
 * (--benchmark_format=json or --benchmark_out=FILE), for the host-side
 * figures next to the kernels.
 *
 * What is stored (docs/RUNNING.md, "Google Benchmark"):
 *  - benchmark: the executable's file name (context.executable), or
 *    --benchmark NAME (to put the figures next to a benchmark's kernels);
 *  - kernel: the run's name ("BM_copy/1024/threads:2"), as given;
 *  - real_time and cpu_time in ns (time_unit normalised), iterations, and
 *    every user counter under its name (bytes_per_second in byte/s,
 *    items_per_second in item/s);
 *  - each repetition (run_type "iteration") one sample, the ordinal its
 *    place among the repetitions of its name; the aggregates Google Benchmark derives
 *    from them (_mean, _median, _stddev, _cv, BigO, RMS) are not stored,
 *    since the statistics are kgate's.  A run reported by its aggregates
 *    alone (--benchmark_report_aggregates_only) stores its mean as one
 *    sample, and says so on stderr;
 *  - a run with error_occurred stores nothing and is counted as an error.
 */
#include "kgate/import.h"
#include "kgate/util.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The largest document read (Google Benchmark output of thousands of runs
 * is a few MB). */
#define MAX_JSON (512L << 20)

/* An object whose keys include "context" and "benchmarks", and a context
 * key only Google Benchmark writes. */
static int gbench_sniff(const unsigned char *head, size_t n, const char *path)
{
	size_t i = 0;

	(void)path;
	while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
		i++;
	if (i == n || head[i] != '{' || !memmem(head, n, "\"context\"", 9))
		return KG_SNIFF_NO;
	if (memmem(head, n, "\"library_build_type\"", 20) ||
	    (memmem(head, n, "\"num_cpus\"", 10) && memmem(head, n, "\"mhz_per_cpu\"", 13)))
		return KG_SNIFF_SURE;
	if (memmem(head, n, "\"benchmarks\"", 12) && memmem(head, n, "\"time_unit\"", 11))
		return KG_SNIFF_LIKELY;
	return KG_SNIFF_NO;
}

static json_t *load(const char *path)
{
	json_t *j = import_json_load(path, MAX_JSON, "Google Benchmark");

	if (!j)
		return NULL;
	if (!json_is_object(j) || !json_is_object(json_object_get(j, "context")) ||
	    !json_is_array(json_object_get(j, "benchmarks"))) {
		kg_error("%s: not Google Benchmark JSON: no \"context\" object and \"benchmarks\" "
			 "array", path);
		json_decref(j);
		return NULL;
	}
	return j;
}

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int gbench_read_info(const char *path, struct kg_import_info *info)
{
	json_t *doc = load(path);

	if (!doc)
		return KG_EXIT_USAGE;
	json_t *ctx = json_object_get(doc, "context");
	const char *exe = str(ctx, "executable"), *ver = str(ctx, "library_version");
	if (exe && *exe) {
		const char *slash = strrchr(exe, '/');
		const char *base = slash && slash[1] ? slash + 1 : exe;
		info->benchmark = xstrdup(base);
		info->command = xstrdup(exe);
	}
	info->run.collector = xasprintf("google-benchmark%s%s", ver ? " " : "", ver ? ver : "");
	info->run.source = xstrdup("gbench");
	json_decref(doc);
	return KG_EXIT_PASS;
}

/* ns per time_unit, or 0 for a unit not Google Benchmark's. */
static double unit_ns(const char *u)
{
	if (!u || !strcmp(u, "ns"))
		return 1;
	if (!strcmp(u, "us"))
		return 1e3;
	if (!strcmp(u, "ms"))
		return 1e6;
	if (!strcmp(u, "s"))
		return 1e9;
	return 0;
}

/* Keys of a run that are not counters. */
static int known_key(const char *k)
{
	static const char *const keys[] = {
		"name", "run_name", "run_type", "repetitions", "repetition_index", "threads",
		"iterations", "real_time", "cpu_time", "time_unit", "family_index",
		"per_family_instance_index", "aggregate_name", "aggregate_unit", "label",
		"error_occurred", "error_message", "big_o", "cpu_coefficient", "real_coefficient",
		"rms", "skipped", "skip_message", "manual_time", "memory", "allocs_per_iter",
		"max_bytes_used", "total_allocated_bytes", "net_heap_growth",
	};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (!strcmp(k, keys[i]))
			return 1;
	return 0;
}

static const char *counter_unit(const char *k)
{
	if (!strcmp(k, "bytes_per_second"))
		return "byte/s";
	if (!strcmp(k, "items_per_second"))
		return "item/s";
	return NULL;
}

/* The run names that have iteration rows (their aggregates are derived). */
static json_t *iteration_names(json_t *runs)
{
	json_t *set = json_object(), *r;
	size_t i;

	json_array_foreach(runs, i, r) {
		const char *t = str(r, "run_type"), *rn = str(r, "run_name");
		if ((!t || !strcmp(t, "iteration")) && rn)
			json_object_set_new(set, rn, json_true());
	}
	return set;
}

static int gbench_ingest(struct kg_import_sink *sink, const char *path)
{
	json_t *doc = load(path), *runs, *r;
	size_t i, means = 0;
	int rc = KG_EXIT_PASS;

	if (!doc)
		return KG_EXIT_USAGE;
	runs = json_object_get(doc, "benchmarks");
	json_t *iterated = iteration_names(runs), *seen = json_object();
	const struct kg_import_metric *real_m = import_sink_metric(sink, "real_time", "ns");
	const struct kg_import_metric *cpu_m = import_sink_metric(sink, "cpu_time", "ns");
	const struct kg_import_metric *it_m = import_sink_metric(sink, "iterations", "iteration");
	json_array_foreach(runs, i, r) {
		const char *type = str(r, "run_type"), *name = str(r, "run_name");
		const char *k;
		json_t *v;
		int64_t ordinal;
		struct kg_kernel_name kn;
		if (rc != KG_EXIT_PASS)
			break;
		if (!json_is_object(r))
			continue;
		if (!name)
			name = str(r, "name");
		if (!name) {
			kg_error("%s: benchmark entry %zu has no name", path, i);
			rc = KG_EXIT_USAGE;
			break;
		}
		if (json_is_true(json_object_get(r, "error_occurred"))) {
			kg_warn("%s: '%s' failed: %s; nothing stored of it", path, name,
				str(r, "error_message") ? str(r, "error_message") : "(no message)");
			import_sink_stats(sink)->errors++;
			continue;
		}
		if (json_is_true(json_object_get(r, "skipped")) ||
		    (json_is_integer(json_object_get(r, "skipped")) &&
		     json_integer_value(json_object_get(r, "skipped"))))
			continue;
		if (type && !strcmp(type, "aggregate")) {
			/* the mean stands for runs reported by their aggregates alone */
			if (!str(r, "aggregate_name") || strcmp(str(r, "aggregate_name"), "mean") ||
			    json_object_get(iterated, name))
				continue;
			means++;
			ordinal = 0;
		} else if (type && strcmp(type, "iteration")) {
			continue;
		} else {
			/* the repetitions of a name in file order (repetition_index,
			 * where written, counts the same way; before 1.6 it is not) */
			json_t *c = json_object_get(seen, name);
			ordinal = c ? (int64_t)json_integer_value(c) : 0;
			json_object_set_new(seen, name, json_integer(ordinal + 1));
		}
		double ns = unit_ns(str(r, "time_unit"));
		if (!ns) {
			kg_error("%s: '%s': time_unit '%s' is not ns, us, ms or s", path, name,
				 str(r, "time_unit"));
			rc = KG_EXIT_USAGE;
			break;
		}
		import_sink_kernel(sink, name, KG_KEY_AS_GIVEN, &kn);
		import_sink_stats(sink)->kernels++;
		json_object_foreach(r, k, v) {
			const struct kg_import_metric *m;
			double x;
			if (rc != KG_EXIT_PASS)
				break;
			if (!json_is_number(v) || !isfinite(x = json_number_value(v)))
				continue;
			if (!strcmp(k, "real_time")) {
				m = real_m;
				x *= ns;
			} else if (!strcmp(k, "cpu_time")) {
				m = cpu_m;
				x *= ns;
			} else if (!strcmp(k, "iterations")) {
				m = it_m;
			} else if (!known_key(k)) {
				m = import_sink_metric(sink, k, counter_unit(k));
			} else {
				continue;
			}
			rc = import_sink_add(sink, NULL, &kn, m, ordinal, x, 0);
		}
	}
	if (means && rc == KG_EXIT_PASS)
		kg_warn("%s: %zu benchmark%s reported by aggregates alone "
			"(--benchmark_report_aggregates_only): each mean is one sample, so the gate "
			"sees no spread", path, means, means == 1 ? "" : "s");
	json_decref(iterated);
	json_decref(seen);
	json_decref(doc);
	return rc;
}

const struct kg_importer kg_import_gbench = {
	.name = "gbench",
	.description = "Google Benchmark JSON output (--benchmark_format=json)",
	.sniff = gbench_sniff,
	.read_info = gbench_read_info,
	.ingest = gbench_ingest,
};
