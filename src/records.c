/*
 * records.c: reading records files, the JSON Lines the collector writes
 * (records_format.h, docs/records.md), into the run open in the store.
 *
 * The file is streamed one line at a time (kg_getline: a line over 16 MiB is
 * rejected once 16 MiB of it are read, so memory stays bounded) and each
 * line parsed with jansson.  The header must be the first line and the
 * footer the last; a file without a footer came from a process
 * that died, and is rejected.  Every kernel record becomes samples: its
 * "metrics" object, plus the launch configuration and the duration
 * (end - start) where "metrics" lacks them.
 */
#include "kgate/records.h"
#include "kgate/records_format.h"
#include "kgate/demangle.h"
#include "kgate/metric.h"
#include "kgate/util.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#define MAX_LINE (16u << 20)

/* ------------------------------------------------------------------ */
/* Kernel name cache: the same few names recur on every launch.        */

struct name_ent {
	char *raw, *dem, *base;   /* dem and base only in a kernel-name cache */
	int det;                  /* metric-name cache: deterministic */
};
struct name_cache {
	struct name_ent *e;
	size_t cap, n;
	int kind;                 /* NAMES_KERNEL, NAMES_METRIC or NAMES_PLAIN */
};
enum { NAMES_PLAIN, NAMES_KERNEL, NAMES_METRIC };

static size_t name_hash(const char *s)
{
	size_t h = 5381;
	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

static struct name_ent *name_lookup(struct name_cache *c, const char *raw);

static void name_grow(struct name_cache *c)
{
	struct name_ent *old = c->e;
	size_t oldcap = c->cap;

	c->cap = oldcap ? oldcap * 2 : 64;
	c->e = xcalloc(c->cap, sizeof(*c->e));
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].raw) {
			size_t j = name_hash(old[i].raw) & (c->cap - 1);
			while (c->e[j].raw)
				j = (j + 1) & (c->cap - 1);
			c->e[j] = old[i];
		}
	free(old);
}

static struct name_ent *name_lookup(struct name_cache *c, const char *raw)
{
	if ((c->n + 1) * 2 > c->cap)
		name_grow(c);
	size_t i = name_hash(raw) & (c->cap - 1);
	while (c->e[i].raw) {
		if (!strcmp(c->e[i].raw, raw))
			return &c->e[i];
		i = (i + 1) & (c->cap - 1);
	}
	c->e[i].raw = xstrdup(raw);
	if (c->kind == NAMES_KERNEL) {
		c->e[i].dem = demangle_name(raw);
		c->e[i].base = demangle_base(c->e[i].dem);
	} else if (c->kind == NAMES_METRIC) {
		c->e[i].det = metric_deterministic(raw);
	}
	c->n++;
	return &c->e[i];
}

static void name_cache_free(struct name_cache *c)
{
	for (size_t i = 0; i < c->cap; i++)
		if (c->e[i].raw) {
			free(c->e[i].raw);
			free(c->e[i].dem);
			free(c->e[i].base);
		}
	free(c->e);
}

/* ------------------------------------------------------------------ */
/* Reading lines                                                       */

struct reader {
	const char *path;
	FILE *fp;
	char *line;
	size_t cap;
	ssize_t len;
	size_t lineno;
	int no_newline;     /* the last line read had no '\n' */
	int borrowed;       /* the held stream's reader: reader_close leaves it */
};

/*
 * A records file that is not a regular file (a FIFO, /dev/stdin) can be
 * read only once, but ingest asks for its header several times before it
 * reads the records.  The first read_header() of such a path keeps its
 * reader open here, after the header line, with the parsed header; later
 * header reads borrow it, and records_ingest() takes it over and reads on.
 */
static struct {
	char *path;
	struct reader r;
	json_t *header;
} held;

static int is_stream(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
}

static int reader_open(struct reader *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	if (!(r->fp = fopen(path, "r"))) {
		kg_error("cannot open '%s': %s", path, strerror(errno));
		return KG_EXIT_USAGE;
	}
	return KG_EXIT_PASS;
}

static void reader_close(struct reader *r)
{
	if (r->borrowed)
		return;
	if (r->fp)
		fclose(r->fp);
	free(r->line);
}

/* 1 a line, 0 end of file, -1 error (printed). */
static int reader_next(struct reader *r)
{
	errno = 0;
	r->len = kg_getline(&r->line, &r->cap, r->fp, MAX_LINE);
	if (r->len == -1) {
		if (ferror(r->fp)) {
			kg_error("cannot read '%s': %s", r->path, strerror(errno));
			return -1;
		}
		return 0;
	}
	r->lineno++;
	if (r->len == -2) {
		kg_error("%s:%zu: line is longer than 16 MiB", r->path, r->lineno);
		return -1;
	}
	r->no_newline = !(r->len && r->line[r->len - 1] == '\n');
	while (r->len && (r->line[r->len - 1] == '\n' || r->line[r->len - 1] == '\r'))
		r->line[--r->len] = '\0';
	return 1;
}

static int blank(const struct reader *r)
{
	for (ssize_t i = 0; i < r->len; i++)
		if (r->line[i] != ' ' && r->line[i] != '\t')
			return 0;
	return 1;
}

/* Parse the current line as a JSON object; NULL after printing the error. */
static json_t *parse_line(struct reader *r)
{
	json_error_t e;
	json_t *j = json_loadb(r->line, (size_t)r->len, 0, &e);

	if (!j) {
		if (r->no_newline)
			kg_error("%s:%zu: truncated record (%s): the process died or was killed "
				 "while writing it", r->path, r->lineno, e.text);
		else
			kg_error("%s:%zu:%d: bad JSON: %s", r->path, r->lineno, e.column, e.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		kg_error("%s:%zu: a record must be a JSON object", r->path, r->lineno);
		json_decref(j);
		return NULL;
	}
	return j;
}

static const char *record_type(struct reader *r, json_t *j)
{
	json_t *t = json_object_get(j, "type");
	if (!json_is_string(t)) {
		kg_error("%s:%zu: record has no \"type\" string", r->path, r->lineno);
		return NULL;
	}
	return json_string_value(t);
}

/* ------------------------------------------------------------------ */
/* Header                                                              */

static int check_header(struct reader *r, json_t *h)
{
	const char *t = record_type(r, h);
	json_t *f;

	if (!t)
		return KG_EXIT_USAGE;
	if (strcmp(t, "header") != 0) {
		kg_error("%s:%zu: the first record must be the header, not \"%s\"", r->path,
			 r->lineno, t);
		return KG_EXIT_USAGE;
	}
	f = json_object_get(h, "format");
	if (!json_is_integer(f)) {
		kg_error("%s:%zu: header: \"format\" must be an integer", r->path, r->lineno);
		return KG_EXIT_USAGE;
	}
	if (json_integer_value(f) != KG_RECORDS_FORMAT) {
		kg_error("%s:%zu: unknown records format %" JSON_INTEGER_FORMAT
			 " (this kgate reads format %d)", r->path, r->lineno,
			 json_integer_value(f), KG_RECORDS_FORMAT);
		return KG_EXIT_USAGE;
	}
	json_t *d = json_object_get(h, "devices");
	if (d && !json_is_array(d)) {
		kg_error("%s:%zu: header: \"devices\" must be an array", r->path, r->lineno);
		return KG_EXIT_USAGE;
	}
	return KG_EXIT_PASS;
}

/* Open path and parse its header line into *out.  take: the caller reads
 * on after the header (records_ingest), and so takes over a held stream. */
static int read_header(struct reader *r, const char *path, json_t **out, int take)
{
	int rc;

	*out = NULL;
	if (held.path && !strcmp(held.path, path)) {
		*r = held.r;
		*out = json_incref(held.header);
		if (take) {
			r->borrowed = 0;
			free(held.path);
			json_decref(held.header);
			memset(&held, 0, sizeof(held));
		}
		return KG_EXIT_PASS;
	}
	if ((rc = reader_open(r, path)) != KG_EXIT_PASS)
		return rc;
	do {
		rc = reader_next(r);
	} while (rc == 1 && blank(r));
	if (rc < 0)
		return KG_EXIT_USAGE;
	if (rc == 0) {
		kg_error("%s: empty file: no header", path);
		return KG_EXIT_USAGE;
	}
	if (!(*out = parse_line(r)))
		return KG_EXIT_USAGE;
	if ((rc = check_header(r, *out)) != KG_EXIT_PASS) {
		json_decref(*out);
		*out = NULL;
	} else if (!take && !held.path && is_stream(path)) {
		held.path = xstrdup(path);
		held.r = *r;
		held.r.borrowed = 1;
		held.header = json_incref(*out);
		r->borrowed = 1;
	}
	return rc;
}

static char *json_to_str(json_t *v)
{
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	if (json_is_integer(v))
		return xasprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
	if (json_is_real(v))
		return xasprintf("%g", json_real_value(v));
	return NULL;
}

static void set_str(char **dst, json_t *v)
{
	char *s = json_to_str(v);
	if (s) {
		free(*dst);
		*dst = s;
	}
}

/* How far ahead of this machine's clock a header's time may be (clocks of
 * CI machines differ by seconds; time zones are not involved). */
#define FUTURE_SLACK (24 * 3600)

int records_read_header(const char *path, struct kg_run_info *run)
{
	struct reader r;
	json_t *h;
	int rc = read_header(&r, path, &h, 0);

	if (rc == KG_EXIT_PASS) {
		json_t *devs = json_object_get(h, "devices");
		json_t *d0 = json_array_get(devs, 0);
		if (json_is_object(d0)) {
			set_str(&run->gpu_name, json_object_get(d0, "name"));
			set_str(&run->gpu_uuid, json_object_get(d0, "uuid"));
			set_str(&run->gpu_chip, json_object_get(d0, "chip"));
			set_str(&run->driver, json_object_get(d0, "driver"));
			set_str(&run->cuda, json_object_get(d0, "runtime"));
		}
		for (size_t i = 1; i < json_array_size(devs); i++) {
			json_t *n = json_object_get(json_array_get(devs, i), "name");
			if (json_is_string(n) && run->gpu_name &&
			    strcmp(json_string_value(n), run->gpu_name) != 0)
				kg_warn("%s: devices differ (%s, %s); the run is recorded as %s", path,
					run->gpu_name, json_string_value(n), run->gpu_name);
		}
		json_t *c = json_object_get(h, "collector");
		if (json_is_string(c)) {
			free(run->collector);
			run->collector = xasprintf("kgate-collector %s", json_string_value(c));
		}
		json_t *tm = json_object_get(h, "time");
		if (json_is_integer(tm) && json_integer_value(tm) > (json_int_t)time(NULL) + FUTURE_SLACK) {
			/* "newest run of main" is by time: a run from the future
			 * would be every later check's baseline. */
			kg_error("%s:1: header: \"time\" %" JSON_INTEGER_FORMAT " is %.1f days ahead of "
				 "this machine's clock; the clock of the machine that measured it is wrong",
				 path, json_integer_value(tm),
				 (double)(json_integer_value(tm) - (json_int_t)time(NULL)) / 86400.0);
			rc = KG_EXIT_USAGE;
		} else if (json_is_integer(tm) && json_integer_value(tm) < 0) {
			kg_error("%s:1: header: \"time\" must be unix seconds, not negative", path);
			rc = KG_EXIT_USAGE;
		} else if (!run->time && json_is_integer(tm)) {
			run->time = json_integer_value(tm);
		}
		if (!run->source)
			run->source = xstrdup("records");
		json_decref(h);
	}
	reader_close(&r);
	return rc;
}

char *records_benchmark_name(const char *path)
{
	struct reader r;
	json_t *h;
	char *name = NULL;

	if (read_header(&r, path, &h, 0) == KG_EXIT_PASS) {
		json_t *a0 = json_array_get(json_object_get(h, "argv"), 0);
		if (json_is_string(a0) && json_string_length(a0)) {
			const char *s = json_string_value(a0), *slash = strrchr(s, '/');
			name = xstrdup(slash && slash[1] ? slash + 1 : s);
		}
		json_decref(h);
	}
	reader_close(&r);
	return name;
}

int records_header_pass(const char *path)
{
	struct reader r;
	json_t *h;
	int pass = 0;

	if (read_header(&r, path, &h, 0) == KG_EXIT_PASS) {
		json_t *p = json_object_get(h, "pass");
		if (json_is_integer(p))
			pass = (int)json_integer_value(p);
		json_decref(h);
	}
	reader_close(&r);
	return pass;
}

int records_header_replay(const char *path, int *pass, int *passes, long long *pid,
			  long long *ppid)
{
	struct reader r;
	json_t *h;
	int rc = -1;

	*pass = 0;
	*passes = 1;
	*pid = *ppid = -1;
	if (read_header(&r, path, &h, 0) == KG_EXIT_PASS) {
		json_t *v;
		if (json_is_integer(v = json_object_get(h, "pass")) && json_integer_value(v) >= 0 &&
		    json_integer_value(v) < INT_MAX)
			*pass = (int)json_integer_value(v);
		if (json_is_integer(v = json_object_get(h, "passes")) && json_integer_value(v) >= 1 &&
		    json_integer_value(v) < INT_MAX)
			*passes = (int)json_integer_value(v);
		if (json_is_integer(v = json_object_get(h, "pid")))
			*pid = (long long)json_integer_value(v);
		if (json_is_integer(v = json_object_get(h, "ppid")))
			*ppid = (long long)json_integer_value(v);
		json_decref(h);
		rc = 0;
	}
	reader_close(&r);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Kernel records                                                      */

/*
 * Parsing and storing overlap: a reader thread parses lines into batches
 * of pending samples (their names interned in caches that live as long as
 * the ingest, so a pending sample holds only pointers), and the caller's
 * thread stores them.  The queue is bounded, so memory is too.
 */
struct pending {
	const char *kernel, *dem, *base, *nvtx, *metric;
	int det;
	size_t lineno;
	int64_t ordinal;
	double value;
};
#define BATCH 4096
#define QUEUE 8
struct batch {
	size_t n;
	struct pending p[BATCH];
};

struct ingest_ctx {
	struct kg_store *st;
	struct reader *r;
	const char *benchmark;
	int repeat;
	int derived;        /* add launch configuration and duration (pass 0) */
	struct name_cache names, nvtxs, metrics;
	struct kg_records_stats *stats;
	/* the queue between the two threads */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch *q[QUEUE];
	size_t qhead, qcount;
	struct batch *cur;  /* the batch the reader is filling */
	int done;           /* the reader has finished */
	int reader_rc;
	int store_failed;   /* the storing side stopped: the reader stops too */
};

/* Reader side: hand the current batch over; waits while the queue is full. */
static int flush_batch(struct ingest_ctx *c)
{
	int failed;

	pthread_mutex_lock(&c->mu);
	while (c->qcount == QUEUE && !c->store_failed)
		pthread_cond_wait(&c->cv, &c->mu);
	failed = c->store_failed;
	if (!failed && c->cur) {
		c->q[(c->qhead + c->qcount) % QUEUE] = c->cur;
		c->qcount++;
		c->cur = NULL;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	return failed ? KG_EXIT_RUNTIME : KG_EXIT_PASS;
}

static int bad_field(struct ingest_ctx *c, const char *field, const char *want)
{
	kg_error("%s:%zu: kernel record: \"%s\" must be %s", c->r->path, c->r->lineno, field, want);
	return KG_EXIT_USAGE;
}

/* An optional integer field: 0 absent, 1 present, -1 wrong type (printed). */
static int opt_int(struct ingest_ctx *c, json_t *k, const char *field, json_int_t *v)
{
	json_t *x = json_object_get(k, field);
	if (!x || json_is_null(x))
		return 0;
	if (!json_is_integer(x)) {
		bad_field(c, field, "an integer");
		return -1;
	}
	*v = json_integer_value(x);
	return 1;
}

/* Product of a [x,y,z] array: 0 absent, 1 present, -1 bad. */
static int opt_dim3(struct ingest_ctx *c, json_t *k, const char *field, double *v)
{
	json_t *x = json_object_get(k, field);
	if (!x || json_is_null(x))
		return 0;
	if (!json_is_array(x) || json_array_size(x) != 3) {
		bad_field(c, field, "an array of 3 integers");
		return -1;
	}
	double p = 1;
	for (size_t i = 0; i < 3; i++) {
		json_t *e = json_array_get(x, i);
		if (!json_is_integer(e) || json_integer_value(e) < 0) {
			bad_field(c, field, "an array of 3 non-negative integers");
			return -1;
		}
		p *= (double)json_integer_value(e);
	}
	*v = p;
	return 1;
}

static int add(struct ingest_ctx *c, const char *nvtx, const struct kg_kernel_name *kn,
	       const char *metric, int64_t ordinal, double value)
{
	if (!c->cur) {
		c->cur = xmalloc(sizeof(*c->cur));
		c->cur->n = 0;
	}
	struct pending *p = &c->cur->p[c->cur->n++];
	const struct name_ent *m = name_lookup(&c->metrics, metric);
	p->kernel = kn->mangled;
	p->dem = kn->demangled;
	p->base = kn->base;
	p->nvtx = nvtx;
	p->metric = m->raw;
	p->det = m->det;
	p->lineno = c->r->lineno;
	p->ordinal = ordinal;
	p->value = value;
	if (c->cur->n == BATCH)
		return flush_batch(c);
	return KG_EXIT_PASS;
}

static int ingest_kernel(struct ingest_ctx *c, json_t *k)
{
	json_t *name = json_object_get(k, "name"), *m = json_object_get(k, "metrics");
	json_t *nv = json_object_get(k, "nvtx");
	json_int_t ordinal, start = 0, end = 0, iv;
	int rc, has_start, has_end;

	if (!json_is_string(name) || !json_string_length(name))
		return bad_field(c, "name", "a non-empty string");
	if ((rc = opt_int(c, k, "ordinal", &ordinal)) <= 0)
		return rc < 0 ? KG_EXIT_USAGE : bad_field(c, "ordinal", "an integer (it is missing)");
	if (nv && !json_is_null(nv) && !json_is_string(nv))
		return bad_field(c, "nvtx", "a string");
	if (m && !json_is_null(m) && !json_is_object(m))
		return bad_field(c, "metrics", "an object");
	if ((has_start = opt_int(c, k, "start", &start)) < 0 ||
	    (has_end = opt_int(c, k, "end", &end)) < 0)
		return KG_EXIT_USAGE;

	struct name_ent *ne = name_lookup(&c->names, json_string_value(name));
	struct kg_kernel_name kn = { ne->raw, ne->dem, ne->base };
	const char *nvtx = name_lookup(&c->nvtxs, json_is_string(nv) ? json_string_value(nv) : "")->raw;

	if (json_is_object(m)) {
		const char *key;
		json_t *v;
		json_object_foreach(m, key, v) {
			if (json_is_null(v))
				continue;   /* a metric the profiler could not give */
			if (!json_is_number(v)) {
				kg_error("%s:%zu: kernel record: metric \"%s\" must be a number",
					 c->r->path, c->r->lineno, key);
				return KG_EXIT_USAGE;
			}
			if ((rc = add(c, nvtx, &kn, key, ordinal, json_number_value(v))))
				return rc;
		}
	}
	if (!c->derived)
		return KG_EXIT_PASS;

	static const struct {
		const char *field, *metric;
		int dim3;
	} launch[] = {
		{ "grid", KG_M_GRID, 1 },
		{ "block", KG_M_BLOCK, 1 },
		{ "regs", KG_M_REGS, 0 },
		{ "smem_static", KG_M_SMEM_ST, 0 },
		{ "smem_dynamic", KG_M_SMEM_DYN, 0 },
		{ "local_per_thread", KG_M_LOCAL, 0 },
	};
	for (size_t i = 0; i < sizeof(launch) / sizeof(launch[0]); i++) {
		double v = 0;
		int have;
		if (launch[i].dim3) {
			have = opt_dim3(c, k, launch[i].field, &v);
		} else {
			have = opt_int(c, k, launch[i].field, &iv);
			if (have > 0)   /* iv is set only when the field is there */
				v = (double)iv;
		}
		if (have < 0)
			return KG_EXIT_USAGE;
		if (have && !(json_is_object(m) && json_object_get(m, launch[i].metric)) &&
		    (rc = add(c, nvtx, &kn, launch[i].metric, ordinal, v)))
			return rc;
	}
	if (has_start && has_end && !(json_is_object(m) && json_object_get(m, KG_M_DURATION))) {
		if (end < start) {
			kg_error("%s:%zu: kernel record: \"end\" is before \"start\"", c->r->path,
				 c->r->lineno);
			return KG_EXIT_USAGE;
		}
		/* end >= start, so the unsigned difference is exact where the
		 * signed one would overflow */
		double d = (double)((uint64_t)end - (uint64_t)start);
		if ((rc = add(c, nvtx, &kn, KG_M_DURATION, ordinal, d)))
			return rc;
	}
	return KG_EXIT_PASS;
}

static void report_error_record(struct ingest_ctx *c, json_t *e)
{
	json_t *code = json_object_get(e, "code"), *msg = json_object_get(e, "message");

	c->stats->errors++;
	kg_warn("%s:%zu: collector error %s: %s", c->r->path, c->r->lineno,
		json_is_string(code) ? json_string_value(code) : "(no code)",
		json_is_string(msg) ? json_string_value(msg) : "(no message)");
}

static int check_footer(struct ingest_ctx *c, json_t *f)
{
	json_int_t v;
	int rc;

	if ((rc = opt_int(c, f, "dropped", &v)) < 0)
		return KG_EXIT_USAGE;
	if (rc > 0 && v > 0) {
		c->stats->dropped = (size_t)v;
		kg_warn("%s: the collector dropped %" JSON_INTEGER_FORMAT " records", c->r->path, v);
	}
	if ((rc = opt_int(c, f, "kernels", &v)) < 0)
		return KG_EXIT_USAGE;
	if (rc > 0 && (size_t)v != c->stats->kernels)
		kg_warn("%s: the footer counts %" JSON_INTEGER_FORMAT " kernel records, the file "
			"holds %zu", c->r->path, v, c->stats->kernels);
	return KG_EXIT_PASS;
}

/* The reader thread: every line after the header. */
static void *read_records(void *arg)
{
	struct ingest_ctx *c = arg;
	struct reader *r = c->r;
	struct kg_records_stats *stats = c->stats;
	const char *path = r->path;
	json_t *j;
	int rc, footer = 0;

	while ((rc = reader_next(r)) == 1) {
		if (blank(r))
			continue;
		if (footer) {
			kg_error("%s:%zu: a record after the footer", path, r->lineno);
			rc = KG_EXIT_USAGE;
			goto out;
		}
		if (!(j = parse_line(r))) {
			rc = KG_EXIT_USAGE;
			goto out;
		}
		const char *t = record_type(r, j);
		rc = KG_EXIT_PASS;
		if (!t) {
			rc = KG_EXIT_USAGE;
		} else if (!strcmp(t, "kernel")) {
			stats->kernels++;
			rc = ingest_kernel(c, j);
		} else if (!strcmp(t, "error")) {
			report_error_record(c, j);
		} else if (!strcmp(t, "footer")) {
			footer = 1;
			rc = check_footer(c, j);
		} else if (!strcmp(t, "header")) {
			kg_error("%s:%zu: a second header", path, r->lineno);
			rc = KG_EXIT_USAGE;
		}
		/* other types: newer records of this format, ignored by design */
		json_decref(j);
		if (rc != KG_EXIT_PASS)
			goto out;
	}
	if (rc < 0) {
		rc = KG_EXIT_USAGE;
		goto out;
	}
	rc = KG_EXIT_PASS;
	if (!footer) {
		kg_error("%s: no footer: the process died or was killed before it finished "
			 "(%zu kernel records read)", path, stats->kernels);
		rc = KG_EXIT_USAGE;
	}
	if (rc == KG_EXIT_PASS && c->cur && c->cur->n)
		rc = flush_batch(c);
out:
	pthread_mutex_lock(&c->mu);
	c->done = 1;
	c->reader_rc = rc;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* The storing side: the caller's thread. */
static int store_batches(struct ingest_ctx *c)
{
	int rc = KG_EXIT_PASS;

	for (;;) {
		struct batch *b = NULL;
		pthread_mutex_lock(&c->mu);
		while (!c->qcount && !c->done)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->qcount) {
			b = c->q[c->qhead];
			c->qhead = (c->qhead + 1) % QUEUE;
			c->qcount--;
			pthread_cond_broadcast(&c->cv);
		}
		pthread_mutex_unlock(&c->mu);
		if (!b)
			break;
		for (size_t i = 0; i < b->n && rc == KG_EXIT_PASS; i++) {
			const struct pending *p = &b->p[i];
			struct kg_kernel_name kn = { p->kernel, p->dem, p->base };
			rc = store_sample_add(c->st, c->benchmark, p->nvtx, &kn, p->metric, NULL, p->det,
					      c->repeat, p->ordinal, p->value);
			if (rc == KG_EXIT_PASS) {
				c->stats->samples++;
			} else {
				kg_error("%s:%zu: kernel record not stored", c->r->path, p->lineno);
				pthread_mutex_lock(&c->mu);
				c->store_failed = 1;
				pthread_cond_broadcast(&c->cv);
				pthread_mutex_unlock(&c->mu);
			}
		}
		free(b);
	}
	return rc;
}

int records_ingest(struct kg_store *st, const char *path, const char *benchmark,
		   int repeat, struct kg_records_stats *stats)
{
	struct reader r;
	struct kg_records_stats dummy;
	struct ingest_ctx c;
	pthread_t tid;
	json_t *h = NULL;
	int rc;

	if (!stats)
		stats = &dummy;
	memset(stats, 0, sizeof(*stats));
	memset(&c, 0, sizeof(c));
	c.st = st;
	c.r = &r;
	c.benchmark = benchmark;
	c.repeat = repeat;
	c.derived = 1;
	c.stats = stats;
	c.names.kind = NAMES_KERNEL;
	c.metrics.kind = NAMES_METRIC;
	if ((rc = read_header(&r, path, &h, 1)) != KG_EXIT_PASS) {
		reader_close(&r);
		return rc;
	}
	json_t *pass = json_object_get(h, "pass");
	if (json_is_integer(pass) && json_integer_value(pass) > 0)
		c.derived = 0;  /* application replay: pass 0 carries them */
	json_decref(h);

	pthread_mutex_init(&c.mu, NULL);
	pthread_cond_init(&c.cv, NULL);
	if (pthread_create(&tid, NULL, read_records, &c) != 0) {
		kg_error("cannot read '%s': cannot start a thread", path);
		rc = KG_EXIT_RUNTIME;
	} else {
		rc = store_batches(&c);
		pthread_join(tid, NULL);
		if (rc == KG_EXIT_PASS)
			rc = c.reader_rc;
	}
	while (c.qcount) {
		free(c.q[c.qhead]);
		c.qhead = (c.qhead + 1) % QUEUE;
		c.qcount--;
	}
	free(c.cur);
	pthread_mutex_destroy(&c.mu);
	pthread_cond_destroy(&c.cv);
	name_cache_free(&c.names);
	name_cache_free(&c.nvtxs);
	name_cache_free(&c.metrics);
	reader_close(&r);
	return rc;
}
