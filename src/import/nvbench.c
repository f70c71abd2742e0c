/*
 * import/nvbench.c: the importer of NVIDIA nvbench JSON output (`--json`,
 * format 1.x) and of the per-sample files `--jsonbin` writes beside it.
 *
 * What is stored (docs/RUNNING.md, "nvbench"):
 *  - benchmark: the nvbench benchmark's name (import_sink_benchmark; with
 *    --benchmark NAME, "NAME/benchmark");
 *  - kernel: the state's name, its axis values ("Device=0 BlockSize=2^8"),
 *    as given; no NVTX path;
 *  - gpu__time_duration.sum (ns): every cold GPU time of the state's
 *    `nv/json/bin:nv/cold/sample_times` file (float32 seconds) when it is
 *    there, else the one `nv/cold/time/gpu/mean` of the summaries;
 *    sm__cycles_elapsed.avg.per_second (cycle/s): every SM clock of the
 *    `nv/json/freqs-bin:nv/cold/sample_freqs` file when it is there;
 *  - every other numeric summary under its nvbench tag, its unit from the
 *    summary's hint (durations in ns, percentages in %), harness figures
 *    (sample counts, walltimes) aside.
 * The GPU of the run is the device of the states measured (the `devices`
 * section; its sm_version the chip, "sm_90"); states of several GPU models
 * name them all ("A + B").  A file
 * whose states have no sample files says so on stderr, and its run's source
 * is "nvbench (summaries)".  Skipped states store nothing.  JSON older than
 * format 1.0 (2021, no "meta") is refused by name.
 */
#include "jstream.h"

#include "kgate/import.h"
#include "kgate/util.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats.h"

/* The most samples one state's sample file may hold (nvbench stops a state
 * at its time limit long before). */
#define MAX_SAMPLES (64L << 20)

static const char *const sniff_keys[] = { "\"meta\"", "\"devices\"", "\"benchmarks\"" };

/* A JSON object with "devices" and "benchmarks" (and "meta" since 1.0). */
int nvbench_sniff(const unsigned char *head, size_t n, const char *path)
{
	size_t i = 0;
	int seen = 0;

	(void)path;
	while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
		i++;
	if (i == n || head[i] != '{')
		return KG_SNIFF_NO;
	for (size_t k = 0; k < 3; k++)
		if (memmem(head, n, sniff_keys[k], strlen(sniff_keys[k])))
			seen |= 1 << k;
	if (seen == 7 && (memmem(head, n, "\"nvbench\"", 9) || memmem(head, n, "\"axes\"", 6) ||
			  memmem(head, n, "\"sm_version\"", 12)))
		return KG_SNIFF_SURE;
	if ((seen & 6) == 6 && memmem(head, n, "\"sm_version\"", 12))
		return KG_SNIFF_LIKELY;   /* older than 1.0: no meta */
	return KG_SNIFF_NO;
}

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The device object of id in devices, or NULL. */
static json_t *device(json_t *devices, json_int_t id)
{
	size_t i;
	json_t *d;

	json_array_foreach(devices, i, d)
		if (json_is_object(d) && json_is_integer(json_object_get(d, "id")) &&
		    json_integer_value(json_object_get(d, "id")) == id)
			return d;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The document, streamed (jstream.c): "meta" and "devices" (small) kept,
 * "benchmarks" one benchmark at a time.  nvbench writes meta first, but a
 * file whose keys were reordered (jq -S) is read the same: what the meta
 * says is checked once the walk is done, before the run is stored. */

struct doc {
	const char *path;
	json_t *meta, *devices;
	int has_benchmarks;
	int (*bench)(struct doc *d, json_t *b, size_t i);     /* each benchmark */
	void *ctx;              /* bench's */
	size_t index;
};

static int bench_elem(struct jstream *r, const unsigned char *s, size_t n, void *arg)
{
	struct doc *d = arg;
	json_t *b = jstream_parse(r, s, n);
	int rc;

	if (!b)
		return KG_EXIT_USAGE;
	rc = d->bench(d, b, d->index++);
	json_decref(b);
	return rc;
}

static int doc_key(struct jstream *r, const char *key, void *arg)
{
	struct doc *d = arg;
	json_t **keep = !strcmp(key, "meta") ? &d->meta : !strcmp(key, "devices") ? &d->devices : NULL;

	if (keep && !*keep)
		return (*keep = jstream_json(r)) ? KG_EXIT_PASS : KG_EXIT_USAGE;
	if (!strcmp(key, "benchmarks") && jstream_peek(r) == '[' && !d->has_benchmarks) {
		d->has_benchmarks = 1;
		return jstream_array(r, bench_elem, d);
	}
	return jstream_skip(r);
}

/* Walk path, each benchmark to bench; then what the document must be. */
static int doc_walk(const char *path, struct doc *d)
{
	int rc = jstream_walk(path, "nvbench", doc_key, d);

	if (rc != KG_EXIT_PASS)
		return rc;
	if (!d->has_benchmarks || !json_is_array(d->devices)) {
		kg_error("%s: not nvbench JSON: no \"benchmarks\" and \"devices\" arrays", path);
		return KG_EXIT_USAGE;
	}
	if (!json_is_object(d->meta)) {
		kg_error("%s: nvbench JSON older than format 1.0 (no \"meta\": nvbench of 2021); "
			 "kgate reads format 1.x, as nvbench 0.1 and later write it (--json FILE)",
			 path);
		return KG_EXIT_USAGE;
	}
	json_t *v = json_object_get(json_object_get(json_object_get(d->meta, "version"), "json"),
				    "major");
	if (json_is_integer(v) && json_integer_value(v) != 1) {
		kg_error("%s: nvbench JSON format %" JSON_INTEGER_FORMAT ".x; kgate reads format 1.x",
			 path, json_integer_value(v));
		return KG_EXIT_USAGE;
	}
	return KG_EXIT_PASS;
}

static void doc_free(struct doc *d)
{
	json_decref(d->meta);
	json_decref(d->devices);
}

/* A summary's data entry of that name, or NULL. */
static json_t *datum(json_t *summary, const char *name)
{
	size_t i;
	json_t *d;

	json_array_foreach(json_object_get(summary, "data"), i, d)
		if (json_is_object(d) && (str(d, "name") && !strcmp(str(d, "name"), name)))
			return json_object_get(d, "value");
	return NULL;
}

/* A datum's number (nvbench writes numbers as strings): 0, or -1. */
static int number(json_t *v, double *out)
{
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return isfinite(*out) ? 0 : -1;
	}
	if (!json_is_string(v))
		return -1;
	const char *s = json_string_value(v);
	char *end;
	errno = 0;
	*out = strtod(s, &end);
	return end == s || *end || errno == ERANGE || !isfinite(*out) ? -1 : 0;
}

/* The tagged summary of a state, or NULL. */
static json_t *summary(json_t *state, const char *tag)
{
	size_t i;
	json_t *s;

	json_array_foreach(json_object_get(state, "summaries"), i, s)
		if (json_is_object(s) && str(s, "tag") && !strcmp(str(s, "tag"), tag))
			return s;
	return NULL;
}

static int skipped(json_t *state)
{
	return json_is_true(json_object_get(state, "is_skipped"));
}

/* ------------------------------------------------------------------ */
/* Sample files                                                        */

/*
 * The path of a sample file that a summary names: nvbench writes it as the
 * JSON's path (as given on its command line) + "-bin/N.bin", so it is
 * looked for beside the JSON file by its last two components (the pair
 * moves together), and then as written relative to the JSON's directory.
 * Never outside those: a name with ".." is not followed.  malloc'd, or NULL.
 */
static char *sample_path(const char *json_path, const char *name)
{
	const char *slash = strrchr(json_path, '/');
	size_t dirlen = slash ? (size_t)(slash - json_path) + 1 : 0;
	const char *last = strrchr(name, '/'), *tail = name;
	struct stat sb;

	if (!*name || strstr(name, ".."))
		return NULL;
	if (last) {
		tail = last;
		while (tail > name && tail[-1] != '/')
			tail--;
	}
	char *p = xasprintf("%.*s%s", (int)dirlen, json_path, tail);
	if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode))
		return p;
	free(p);
	if (name[0] == '/')
		return NULL;
	p = xasprintf("%.*s%s", (int)dirlen, json_path, name);
	if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode))
		return p;
	free(p);
	return NULL;
}

/*
 * A state's sample file of that tag: *out (malloc'd) its size floats, *n
 * their count.  1 read, 0 when the state has no such summary or its file is
 * not there, -1 after printing why (a file that contradicts its summary).
 */
static int read_samples(const char *json_path, json_t *state, const char *tag, float **out,
			size_t *n)
{
	json_t *s = summary(state, tag);
	double size;

	*out = NULL;
	*n = 0;
	if (!s)
		return 0;
	const char *name = json_string_value(datum(s, "filename"));
	if (!name || number(datum(s, "size"), &size) != 0 || size < 0 || size > MAX_SAMPLES ||
	    size != floor(size)) {
		kg_error("%s: state '%s': summary %s has no usable filename and size", json_path,
			 str(state, "name") ? str(state, "name") : "?", tag);
		return -1;
	}
	char *p = sample_path(json_path, name);
	if (!p)
		return 0;
	FILE *fp = fopen(p, "rb");
	if (!fp) {
		kg_error("cannot open '%s': %s", p, strerror(errno));
		free(p);
		return -1;
	}
	size_t want = (size_t)size, got = 0;
	struct stat sb;
	float *f = NULL;
	int extra = 0;
	/* the file's size first: a summary's count takes no memory on trust */
	int known = fstat(fileno(fp), &sb) == 0;
	if (known && (uint64_t)sb.st_size == (uint64_t)want * sizeof(*f)) {
		f = xmalloc((want ? want : 1) * sizeof(*f));
		got = fread(f, sizeof(*f), want, fp);
		extra = fgetc(fp) != EOF;
	} else {
		extra = known && (uint64_t)sb.st_size > (uint64_t)want * sizeof(*f);
	}
	fclose(fp);
	if (got != want || extra) {
		kg_error("%s: %s sample file of state '%s' holds %s than the %zu samples its "
			 "summary says; the pair is not of one run", p, tag,
			 str(state, "name") ? str(state, "name") : "?", extra ? "more" : "fewer",
			 want);
		free(f);
		free(p);
		return -1;
	}
	free(p);
	*out = f;
	*n = want;
	return 1;
}

/* ------------------------------------------------------------------ */
/* The header                                                          */

/* Has the state a GPU-time sample file, and is it there? */
static int has_samples(const char *json_path, json_t *state)
{
	const char *name = json_string_value(datum(summary(state,
		"nv/json/bin:nv/cold/sample_times"), "filename"));
	char *p = name ? sample_path(json_path, name) : NULL;
	int there = p != NULL;

	free(p);
	return there;
}

struct info {
	size_t states, with_bins;
	json_int_t dev[8];      /* the states' devices, the first few */
	size_t ndev;
};

static int info_bench(struct doc *d, json_t *b, size_t i)
{
	struct info *c = d->ctx;
	size_t k, g;
	json_t *s;

	(void)i;
	json_array_foreach(json_object_get(b, "states"), k, s) {
		json_t *id = json_object_get(s, "device");
		if (!json_is_object(s) || skipped(s))
			continue;
		c->states++;
		c->with_bins += has_samples(d->path, s);
		if (!json_is_integer(id))
			continue;
		for (g = 0; g < c->ndev && c->dev[g] != json_integer_value(id); g++)
			;
		if (g == c->ndev && c->ndev < sizeof c->dev / sizeof c->dev[0])
			c->dev[c->ndev++] = json_integer_value(id);
	}
	return KG_EXIT_PASS;
}

int nvbench_read_info(const char *path, struct kg_import_info *info)
{
	struct info c = { 0 };
	struct doc d = { .path = path, .bench = info_bench, .ctx = &c };
	struct kg_buf gpus = KG_BUF_INIT, cmd = KG_BUF_INIT;
	size_t i, ngpu = 0;
	const char *names[8];
	json_int_t sm = 0;
	int rc;

	if ((rc = doc_walk(path, &d)) != KG_EXIT_PASS) {
		doc_free(&d);
		return rc;
	}
	for (i = 0; i < c.ndev; i++) {
		json_t *dv = device(d.devices, c.dev[i]);
		const char *name = dv ? str(dv, "name") : NULL;
		size_t g;
		if (!name)
			continue;
		for (g = 0; g < ngpu && strcmp(names[g], name); g++)
			;
		if (g == ngpu && ngpu < sizeof names / sizeof names[0]) {
			if (!ngpu)
				sm = json_integer_value(json_object_get(dv, "sm_version"));
			names[ngpu++] = name;
			buf_printf(&gpus, "%s%s", g ? " + " : "", name);
		}
	}
	if (ngpu > 1)
		kg_warn("%s: measured on %zu GPU models; the run is recorded as '%s' and compares "
			"only with runs of the same models", path, ngpu, gpus.s);
	if (ngpu)
		info->run.gpu_name = buf_detach(&gpus);
	if (ngpu == 1 && sm > 0 && sm < 100000)   /* sm_version 900: compute capability 9.0 */
		info->run.gpu_chip = xasprintf("sm_%" JSON_INTEGER_FORMAT, sm / 10);
	buf_free(&gpus);

	json_t *a;
	json_array_foreach(json_object_get(d.meta, "argv"), i, a)
		if (json_is_string(a))
			buf_printf(&cmd, "%s%s", i ? " " : "", json_string_value(a));
	if (cmd.len)
		info->command = buf_detach(&cmd);
	buf_free(&cmd);
	const char *ver = str(json_object_get(json_object_get(d.meta, "version"), "nvbench"),
			      "string");
	info->run.collector = xasprintf("nvbench %s", ver ? ver : "(version unknown)");
	info->run.source = xstrdup(c.states && c.with_bins == c.states ? "nvbench"
								      : "nvbench (summaries)");
	if (c.states && c.with_bins < c.states)
		kg_warn("%s: %zu of %zu states have no per-sample files (nvbench --jsonbin); "
			"their GPU time is one mean each, so the gate sees no spread", path,
			c.states - c.with_bins, c.states);
	info->names_benchmarks = 1;
	doc_free(&d);
	return KG_EXIT_PASS;
}

/* ------------------------------------------------------------------ */
/* The samples                                                         */

/* A summary's unit and the factor its value is stored with, from its hint;
 * 0 (and no unit) for what is not stored. */
static double scale(const char *tag, const char *hint, const char **unit)
{
	size_t l = strlen(tag);

	*unit = NULL;
	if (!strncmp(tag, "nv/json/", 8) || (l >= 9 && !strcmp(tag + l - 9, "/walltime")))
		return 0;
	if (!hint)
		return 1;
	if (!strcmp(hint, "sample_size"))
		return 0;
	if (!strcmp(hint, "duration")) {
		*unit = "ns";
		return 1e9;
	}
	if (!strcmp(hint, "percentage")) {
		*unit = "%";
		return 100;
	}
	if (!strcmp(hint, "byte_rate"))
		*unit = "byte/s";
	else if (!strcmp(hint, "item_rate"))
		*unit = "item/s";
	else if (!strcmp(hint, "bytes"))
		*unit = "byte";
	else if (!strcmp(hint, "frequency"))
		*unit = "Hz";
	return 1;
}

static int state_ingest(struct kg_import_sink *sink, const char *path, json_t *state,
			const struct kg_import_metric *time_m, const struct kg_import_metric *clk_m)
{
	const char *name = str(state, "name");
	struct kg_kernel_name k;
	float *f;
	size_t n, i;
	json_t *s;
	int rc = KG_EXIT_PASS, r;

	if (!name) {
		kg_error("%s: a state without a name", path);
		return KG_EXIT_USAGE;
	}
	import_sink_kernel(sink, name, KG_KEY_AS_GIVEN, &k);
	import_sink_stats(sink)->kernels++;

	/* the cold GPU times, one by one, or their mean */
	r = read_samples(path, state, "nv/json/bin:nv/cold/sample_times", &f, &n);
	if (r < 0)
		return KG_EXIT_USAGE;
	if (r > 0) {
		for (i = 0; i < n && rc == KG_EXIT_PASS; i++) {
			if (!isfinite(f[i]) || f[i] < 0) {
				import_sink_stats(sink)->dropped++;
				continue;
			}
			rc = import_sink_add(sink, NULL, &k, time_m, (int64_t)i, (double)f[i] * 1e9, 0);
		}
		free(f);
	} else {
		double v;
		if (number(datum(summary(state, "nv/cold/time/gpu/mean"), "value"), &v) == 0)
			rc = import_sink_add(sink, NULL, &k, time_m, 0, v * 1e9, 0);
	}
	if (rc != KG_EXIT_PASS)
		return rc;
	r = read_samples(path, state, "nv/json/freqs-bin:nv/cold/sample_freqs", &f, &n);
	if (r < 0)
		return KG_EXIT_USAGE;
	for (i = 0; r > 0 && i < n && rc == KG_EXIT_PASS; i++) {
		if (!isfinite(f[i]) || f[i] <= 0) {
			import_sink_stats(sink)->dropped++;
			continue;
		}
		rc = import_sink_add(sink, NULL, &k, clk_m, (int64_t)i, (double)f[i], 0);
	}
	free(f);

	/* every other figure of the summaries */
	json_array_foreach(json_object_get(state, "summaries"), i, s) {
		const char *tag = str(s, "tag"), *unit;
		double v, x;
		if (rc != KG_EXIT_PASS)
			break;
		if (!tag || !(x = scale(tag, str(s, "hint"), &unit)) ||
		    number(datum(s, "value"), &v) != 0)
			continue;
		rc = import_sink_add(sink, NULL, &k, import_sink_metric(sink, tag, unit), 0, v * x, 0);
	}
	return rc;
}

struct ingest {
	struct kg_import_sink *sink;
	const struct kg_import_metric *time_m, *clk_m;
};

static int ingest_bench(struct doc *d, json_t *b, size_t i)
{
	struct ingest *c = d->ctx;
	const char *name = str(b, "name");
	size_t j;
	json_t *s;
	int rc = KG_EXIT_PASS;

	if (!name) {
		kg_error("%s: benchmark %zu has no name", d->path, i);
		return KG_EXIT_USAGE;
	}
	import_sink_benchmark(c->sink, name);
	json_array_foreach(json_object_get(b, "states"), j, s) {
		if (!json_is_object(s) || skipped(s))
			continue;
		if ((rc = state_ingest(c->sink, d->path, s, c->time_m, c->clk_m)) != KG_EXIT_PASS)
			break;
	}
	return rc;
}

int nvbench_ingest(struct kg_import_sink *sink, const char *path)
{
	struct ingest c = { .sink = sink };
	struct doc d = { .path = path, .bench = ingest_bench, .ctx = &c };
	int rc;

	c.time_m = import_sink_metric(sink, "gpu__time_duration.sum", "ns");
	c.clk_m = import_sink_metric(sink, "sm__cycles_elapsed.avg.per_second", "cycle/s");
	rc = doc_walk(path, &d);
	doc_free(&d);
	return rc;
}
