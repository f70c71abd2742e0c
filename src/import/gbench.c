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
 * Streamed (jstream.c): one run of "benchmarks" in memory at a time, plus a
 * name set (which names have repetitions, and how many so far) and the
 * aggregate means that may stand for their runs, until the end.
 */
#include "jstream.h"

#include "kgate/import.h"
#include "kgate/util.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

/* An object whose keys include "context" and "benchmarks", and a context
 * key only Google Benchmark writes. */
int gbench_sniff(const unsigned char *head, size_t n, const char *path)
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

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* What a walk of the document found at its top level. */
struct doc {
	json_t *context;        /* read_info's */
	int has_context, has_runs;
};

/* The document's shape, said once it is walked: 0, or an exit status. */
static int doc_check(const char *path, int rc, const struct doc *d)
{
	if (rc == KG_EXIT_PASS && (!d->has_context || !d->has_runs)) {
		kg_error("%s: not Google Benchmark JSON: no \"context\" object and \"benchmarks\" "
			 "array", path);
		rc = KG_EXIT_USAGE;
	}
	return rc;
}

/* A top-level "context" or "benchmarks" of the right type: 1 (the reader
 * still at it), 0 for any other key. */
static int doc_key(struct jstream *r, const char *key, struct doc *d)
{
	if (!strcmp(key, "context") && jstream_peek(r) == '{') {
		d->has_context = 1;
		return 1;
	}
	if (!strcmp(key, "benchmarks") && jstream_peek(r) == '[') {
		d->has_runs = 1;
		return 1;
	}
	return 0;
}

static int info_key(struct jstream *r, const char *key, void *arg)
{
	struct doc *d = arg;

	if (doc_key(r, key, d) && !strcmp(key, "context") && !d->context)
		return (d->context = jstream_json(r)) ? KG_EXIT_PASS : KG_EXIT_USAGE;
	return jstream_skip(r);
}

int gbench_read_info(const char *path, struct kg_import_info *info)
{
	struct doc d = { 0 };
	int rc = doc_check(path, jstream_walk(path, "Google Benchmark", info_key, &d), &d);

	if (rc != KG_EXIT_PASS) {
		json_decref(d.context);
		return rc;
	}
	json_t *ctx = d.context;
	const char *exe = str(ctx, "executable"), *ver = str(ctx, "library_version");
	if (exe && *exe) {
		const char *slash = strrchr(exe, '/');
		const char *base = slash && slash[1] ? slash + 1 : exe;
		info->benchmark = xstrdup(base);
		info->command = xstrdup(exe);
	}
	info->run.collector = xasprintf("google-benchmark%s%s", ver ? " " : "", ver ? ver : "");
	info->run.source = xstrdup("gbench");
	json_decref(ctx);
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

struct ingest {
	struct kg_import_sink *sink;
	const char *path;
	struct doc doc;
	json_t *iterated;       /* the run names that have iteration rows */
	json_t *seen;           /* name -> the repetitions of it so far */
	json_t *means;          /* aggregate means, until the end shows whether
				   their name has iteration rows */
	size_t index, nmeans;
	const struct kg_import_metric *real_m, *cpu_m, *it_m;
};

/* One run's figures as samples of kernel name. */
static int run_store(struct ingest *c, json_t *r, const char *name, int64_t ordinal)
{
	const char *k;
	json_t *v;
	struct kg_kernel_name kn;
	int rc = KG_EXIT_PASS;
	double ns = unit_ns(str(r, "time_unit"));

	if (!ns) {
		kg_error("%s: '%s': time_unit '%s' is not ns, us, ms or s", c->path, name,
			 str(r, "time_unit"));
		return KG_EXIT_USAGE;
	}
	import_sink_kernel(c->sink, name, KG_KEY_AS_GIVEN, &kn);
	import_sink_stats(c->sink)->kernels++;
	json_object_foreach(r, k, v) {
		const struct kg_import_metric *m;
		double x;
		if (rc != KG_EXIT_PASS)
			break;
		if (!json_is_number(v) || !isfinite(x = json_number_value(v)))
			continue;
		if (!strcmp(k, "real_time")) {
			m = c->real_m;
			x *= ns;
		} else if (!strcmp(k, "cpu_time")) {
			m = c->cpu_m;
			x *= ns;
		} else if (!strcmp(k, "iterations")) {
			m = c->it_m;
		} else if (!known_key(k)) {
			m = import_sink_metric(c->sink, k, counter_unit(k));
		} else {
			continue;
		}
		rc = import_sink_add(c->sink, NULL, &kn, m, ordinal, x, 0);
	}
	return rc;
}

/* One element of "benchmarks". */
static int run_event(struct jstream *js, const unsigned char *s, size_t n, void *arg)
{
	struct ingest *c = arg;
	size_t i = c->index++;
	json_t *r = jstream_parse(js, s, n);
	int rc = KG_EXIT_PASS;

	if (!r)
		return KG_EXIT_USAGE;
	if (!json_is_object(r))
		goto out;
	const char *type = str(r, "run_type"), *name = str(r, "run_name");
	if ((!type || !strcmp(type, "iteration")) && name)
		json_object_set_new(c->iterated, name, json_true());
	if (!name)
		name = str(r, "name");
	if (!name) {
		kg_error("%s: benchmark entry %zu has no name", c->path, i);
		rc = KG_EXIT_USAGE;
		goto out;
	}
	if (json_is_true(json_object_get(r, "error_occurred"))) {
		kg_warn("%s: '%s' failed: %s; nothing stored of it", c->path, name,
			str(r, "error_message") ? str(r, "error_message") : "(no message)");
		import_sink_stats(c->sink)->errors++;
		goto out;
	}
	if (json_is_true(json_object_get(r, "skipped")) ||
	    (json_is_integer(json_object_get(r, "skipped")) &&
	     json_integer_value(json_object_get(r, "skipped"))))
		goto out;
	if (type && !strcmp(type, "aggregate")) {
		/* the mean stands for runs reported by their aggregates alone:
		 * kept until the end, where it is known whether they are */
		if (str(r, "aggregate_name") && !strcmp(str(r, "aggregate_name"), "mean") &&
		    !json_object_get(c->iterated, name))
			json_array_append(c->means, r);
	} else if (!type || !strcmp(type, "iteration")) {
		/* the repetitions of a name in file order (repetition_index,
		 * where written, counts the same way; before 1.6 it is not) */
		json_t *seen = json_object_get(c->seen, name);
		int64_t ordinal = seen ? (int64_t)json_integer_value(seen) : 0;
		json_object_set_new(c->seen, name, json_integer(ordinal + 1));
		rc = run_store(c, r, name, ordinal);
	}
out:
	json_decref(r);
	return rc;
}

static int ingest_key(struct jstream *r, const char *key, void *arg)
{
	struct ingest *c = arg;

	if (doc_key(r, key, &c->doc) && !strcmp(key, "benchmarks"))
		return jstream_array(r, run_event, c);
	return jstream_skip(r);
}

int gbench_ingest(struct kg_import_sink *sink, const char *path)
{
	struct ingest c = { .sink = sink, .path = path };
	size_t i;
	json_t *r;
	int rc;

	c.iterated = json_object();
	c.seen = json_object();
	c.means = json_array();
	c.real_m = import_sink_metric(sink, "real_time", "ns");
	c.cpu_m = import_sink_metric(sink, "cpu_time", "ns");
	c.it_m = import_sink_metric(sink, "iterations", "iteration");
	rc = doc_check(path, jstream_walk(path, "Google Benchmark", ingest_key, &c), &c.doc);
	json_array_foreach(c.means, i, r) {
		const char *name = str(r, "run_name") ? str(r, "run_name") : str(r, "name");
		if (rc != KG_EXIT_PASS)
			break;
		if (json_object_get(c.iterated, name))
			continue;
		c.nmeans++;
		rc = run_store(&c, r, name, 0);
	}
	if (c.nmeans && rc == KG_EXIT_PASS)
		kg_warn("%s: %zu benchmark%s reported by aggregates alone "
			"(--benchmark_report_aggregates_only): each mean is one sample, so the gate "
			"sees no spread", path, c.nmeans, c.nmeans == 1 ? "" : "s");
	json_decref(c.iterated);
	json_decref(c.seen);
	json_decref(c.means);
	return rc;
}
