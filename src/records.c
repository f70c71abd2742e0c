/*
 * records.c: reading records files, the JSON Lines the collector writes
 * (records_format.h, docs/records.md), into the run open in the store.
 *
 * The file is streamed one line at a time (kg_lines_next: a line over 16 MiB is
 * rejected once 16 MiB of it are read, so memory stays bounded).  A kernel
 * record in jtok's subset (jtok.h: ASCII strings without escapes, no key
 * twice, every field of the type the format wants) is read from jtok's
 * tokens; every other line is parsed with jansson, which reads it or says
 * what is wrong with it.  Both readings fill one struct kview, from which
 * emit_kernel makes the samples.  The header must be the first line and the
 * footer the last; a file without a footer came from a process
 * that died, and is rejected.  Every kernel record becomes samples: its
 * "metrics" object, plus the launch configuration and the duration
 * (end - start) where "metrics" lacks them.
 */
#include "kgate/records.h"
#include "kgate/demangle.h"
#include "kgate/import.h"
#include "kgate/jtok.h"
#include "kgate/records_format.h"
#include "kgate/metric.h"
#include "kgate/util.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#define MAX_LINE (16u << 20)

/* ------------------------------------------------------------------ */
/* Reading lines                                                       */

struct reader {
	const char *path;
	FILE *fp;
	struct kg_lines lines;
	char *line;         /* the current line, in lines' buffer */
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
	/* the line reader reads blocks of its own: stdio's buffer would be a
	 * second copy */
	setvbuf(r->fp, NULL, _IONBF, 0);
	r->lines.fp = r->fp;
	return KG_EXIT_PASS;
}

static void reader_close(struct reader *r)
{
	if (r->borrowed)
		return;
	if (r->fp)
		fclose(r->fp);
	kg_lines_free(&r->lines);
}

/* 1 a line, 0 end of file, -1 error (printed). */
static int reader_next(struct reader *r)
{
	int newline;

	errno = 0;
	r->len = kg_lines_next(&r->lines, &r->line, MAX_LINE, &newline);
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
	r->no_newline = !newline;
	while (r->len && r->line[r->len - 1] == '\r')
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
	if (json_integer_value(f) < KG_RECORDS_FORMAT_MIN ||
	    json_integer_value(f) > KG_RECORDS_FORMAT) {
		kg_error("%s:%zu: unknown records format %" JSON_INTEGER_FORMAT
			 " (this kgate reads formats %d to %d)", r->path, r->lineno,
			 json_integer_value(f), KG_RECORDS_FORMAT_MIN, KG_RECORDS_FORMAT);
		return KG_EXIT_USAGE;
	}
	static const char *const ranks[] = { "rank", "local_rank", "world_size" };
	for (size_t i = 0; i < sizeof(ranks) / sizeof(ranks[0]); i++) {
		json_t *v = json_object_get(h, ranks[i]);
		if (v && !json_is_null(v) &&
		    (!json_is_integer(v) || json_integer_value(v) < 0 ||
		     json_integer_value(v) > (1 << 24))) {
			kg_error("%s:%zu: header: \"%s\" must be a non-negative integer", r->path,
				 r->lineno, ranks[i]);
			return KG_EXIT_USAGE;
		}
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

/* 1 when the last non-blank line of a regular file is a footer record, 0
 * when it is not, -1 when the file cannot be read backwards (a stream). */
int records_complete(const char *path)
{
	FILE *fp;
	char buf[4096];
	int ok = -1;

	if (is_stream(path) || !(fp = fopen(path, "rb")))
		return -1;
	if (fseek(fp, 0, SEEK_END) == 0) {
		long size = ftell(fp);
		long off = size > (long)sizeof(buf) - 1 ? size - (long)sizeof(buf) + 1 : 0;
		ok = 0;
		if (size > 0 && fseek(fp, off, SEEK_SET) == 0) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
			buf[n] = '\0';
			while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
				buf[--n] = '\0';
			char *line = strrchr(buf, '\n');
			line = line ? line + 1 : buf;
			json_t *j = json_loads(line, 0, NULL);
			const char *type = json_string_value(json_object_get(j, "type"));
			ok = type && !strcmp(type, "footer");
			json_decref(j);
		}
	}
	fclose(fp);
	return ok;
}

/* The header's argv as one line, its arguments separated by spaces. */
static char *command_line(json_t *argv)
{
	struct kg_buf b = KG_BUF_INIT;
	size_t i;
	json_t *a;

	json_array_foreach(argv, i, a) {
		if (!json_is_string(a))
			continue;
		if (b.len)
			buf_addc(&b, ' ');
		buf_add(&b, json_string_value(a), json_string_length(a));
	}
	if (!b.len) {
		buf_free(&b);
		return NULL;
	}
	return buf_detach(&b);
}

int records_read_info(const char *path, struct kg_import_info *info)
{
	struct reader r;
	json_t *h, *v;
	struct kg_run_info *run = &info->run;
	int rc = read_header(&r, path, &h, 0);

	if (rc != KG_EXIT_PASS) {
		reader_close(&r);
		return rc;
	}
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

	json_t *argv = json_object_get(h, "argv"), *a0 = json_array_get(argv, 0);
	if (json_is_string(a0) && json_string_length(a0)) {
		const char *s = json_string_value(a0), *slash = strrchr(s, '/');
		info->benchmark = xstrdup(slash && slash[1] ? slash + 1 : s);
	}
	if (json_is_array(argv))
		info->command = command_line(argv);
	if (json_is_integer(v = json_object_get(h, "pass")) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) < INT_MAX)
		info->pass = (int)json_integer_value(v);
	if (json_is_integer(v = json_object_get(h, "passes")) && json_integer_value(v) >= 1 &&
	    json_integer_value(v) < INT_MAX)
		info->passes = (int)json_integer_value(v);
	if (json_is_integer(v = json_object_get(h, "pid")))
		info->pid = (long long)json_integer_value(v);
	if (json_is_integer(v = json_object_get(h, "ppid")))
		info->ppid = (long long)json_integer_value(v);
	if (json_is_integer(v = json_object_get(h, "rank")))
		info->rank = (int)json_integer_value(v);  /* check_header bounded it */
	if (json_is_integer(v = json_object_get(h, "local_rank")))
		info->local_rank = (int)json_integer_value(v);
	if (json_is_integer(v = json_object_get(h, "world_size")))
		info->world_size = (int)json_integer_value(v);
	json_decref(h);
	reader_close(&r);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Kernel records                                                      */

/* One ingest: the file being read and the sink its samples go to (the
 * sink parses on its reader thread and stores on the caller's). */
struct ingest_ctx {
	struct kg_import_sink *sink;
	struct reader *r;
	int derived;        /* add launch configuration and duration (pass 0) */
	struct kg_import_stats *stats;
	json_t *devices;    /* the header's "devices" (borrowed), or NULL */
	json_int_t *seen;   /* device ids told to the sink */
	size_t n_seen;
	struct jtok jt;     /* the fast reading's tokens */
	struct kmetric *km; /* a record's metrics (either reading) */
	size_t km_cap;
};

/* The device a kernel record ran on, told to the sink the first time: the
 * header's device of that id (its name and uuid), or the header's only
 * device when the record does not say (format 1). */
static void note_device(struct ingest_ctx *c, int has_id, json_int_t id)
{
	size_t i;
	json_t *e, *dev = NULL;

	if (!has_id) {
		if (json_array_size(c->devices) != 1)
			return;
		id = json_integer_value(json_object_get(json_array_get(c->devices, 0), "id"));
	}
	for (i = 0; i < c->n_seen; i++)
		if (c->seen[i] == id)
			return;
	json_array_foreach(c->devices, i, e)
		if (json_integer_value(json_object_get(e, "id")) == id)
			dev = e;
	c->seen = xrealloc(c->seen, (c->n_seen + 1) * sizeof(*c->seen));
	c->seen[c->n_seen++] = id;
	if (dev)
		import_sink_device(c->sink, json_string_value(json_object_get(dev, "name")),
				   json_string_value(json_object_get(dev, "uuid")));
}

/*
 * What a kernel record says, read either way (jansson's tree, or jtok's
 * tokens): the samples it gives are made from this alone (emit_kernel), so
 * the two readings cannot differ in what they store.
 */
#define WORD(s) s, sizeof(s) - 1
static const struct {
	const char *field;
	size_t len;             /* of field */
	const char *metric;
	int dim3;
} launch[] = {
	{ WORD("grid"), KG_M_GRID, 1 },
	{ WORD("block"), KG_M_BLOCK, 1 },
	{ WORD("regs"), KG_M_REGS, 0 },
	{ WORD("smem_static"), KG_M_SMEM_ST, 0 },
	{ WORD("smem_dynamic"), KG_M_SMEM_DYN, 0 },
	{ WORD("local_per_thread"), KG_M_LOCAL, 0 },
};
#define N_LAUNCH (sizeof(launch) / sizeof(launch[0]))
#define DERIVED_DURATION N_LAUNCH       /* in_metrics[]'s slot of the duration */

struct kmetric {
	const char *name;
	double value;
};

struct kview {
	const char *name, *nvtx;        /* nvtx: "" when the record has none */
	json_int_t ordinal, start, end, device;
	int has_start, has_end, has_device;
	int have[N_LAUNCH];             /* launch configuration given (derived only) */
	double launch[N_LAUNCH];
	int in_metrics[N_LAUNCH + 1];   /* "metrics" has that derived metric's key */
	const struct kmetric *m;        /* the non-null metrics, in the record's order */
	size_t nm;
};

static struct kmetric *metric_slot(struct ingest_ctx *c, size_t i)
{
	if (i == c->km_cap) {
		c->km_cap = c->km_cap ? 2 * c->km_cap : 16;
		c->km = xrealloc(c->km, c->km_cap * sizeof(*c->km));
	}
	return &c->km[i];
}

static int add(struct ingest_ctx *c, const char *nvtx, const struct kg_kernel_name *kn,
	       const char *metric, int64_t ordinal, double value)
{
	return import_sink_add(c->sink, nvtx, kn, import_sink_metric(c->sink, metric, NULL),
			       ordinal, value, c->r->lineno);
}

static int emit_kernel(struct ingest_ctx *c, const struct kview *k)
{
	struct kg_kernel_name kn;
	int rc;

	import_sink_kernel(c->sink, k->name, KG_KEY_AS_GIVEN, &kn);
	const char *nvtx = import_sink_string(c->sink, k->nvtx);
	for (size_t i = 0; i < k->nm; i++)
		if ((rc = add(c, nvtx, &kn, k->m[i].name, k->ordinal, k->m[i].value)))
			return rc;
	if (!c->derived)
		return KG_EXIT_PASS;
	for (size_t i = 0; i < N_LAUNCH; i++)
		if (k->have[i] && !k->in_metrics[i] &&
		    (rc = add(c, nvtx, &kn, launch[i].metric, k->ordinal, k->launch[i])))
			return rc;
	if (k->has_start && k->has_end && !k->in_metrics[DERIVED_DURATION]) {
		if (k->end < k->start) {
			kg_error("%s:%zu: kernel record: \"end\" is before \"start\"", c->r->path,
				 c->r->lineno);
			return KG_EXIT_USAGE;
		}
		/* end >= start, so the unsigned difference is exact where the
		 * signed one would overflow */
		double d = (double)((uint64_t)k->end - (uint64_t)k->start);
		if ((rc = add(c, nvtx, &kn, KG_M_DURATION, k->ordinal, d)))
			return rc;
	}
	return KG_EXIT_PASS;
}

/* The derived metric a metrics key names: its in_metrics[] slot, or -1. */
static int derived_slot(const char *key, size_t len)
{
	for (size_t i = 0; i < N_LAUNCH; i++)
		if (strlen(launch[i].metric) == len && !memcmp(launch[i].metric, key, len))
			return (int)i;
	if (strlen(KG_M_DURATION) == len && !memcmp(KG_M_DURATION, key, len))
		return (int)DERIVED_DURATION;
	return -1;
}

/* ---- the kernel record through jansson: every record jtok declines ---- */

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

static int ingest_kernel(struct ingest_ctx *c, json_t *k)
{
	json_t *name = json_object_get(k, "name"), *m = json_object_get(k, "metrics");
	json_t *nv = json_object_get(k, "nvtx"), *d = json_object_get(k, "device");
	struct kview kv = { 0 };
	json_int_t iv;
	int rc;

	if (!json_is_string(name) || !json_string_length(name))
		return bad_field(c, "name", "a non-empty string");
	if ((rc = opt_int(c, k, "ordinal", &kv.ordinal)) <= 0)
		return rc < 0 ? KG_EXIT_USAGE : bad_field(c, "ordinal", "an integer (it is missing)");
	if (nv && !json_is_null(nv) && !json_is_string(nv))
		return bad_field(c, "nvtx", "a string");
	if (m && !json_is_null(m) && !json_is_object(m))
		return bad_field(c, "metrics", "an object");
	if ((kv.has_start = opt_int(c, k, "start", &kv.start)) < 0 ||
	    (kv.has_end = opt_int(c, k, "end", &kv.end)) < 0)
		return KG_EXIT_USAGE;
	kv.name = json_string_value(name);
	kv.nvtx = json_is_string(nv) ? json_string_value(nv) : "";
	if ((kv.has_device = json_is_integer(d)))
		kv.device = json_integer_value(d);
	if (json_is_object(m)) {
		const char *key;
		json_t *v;
		json_object_foreach(m, key, v) {
			int slot = derived_slot(key, strlen(key));
			if (slot >= 0)
				kv.in_metrics[slot] = 1;
			if (json_is_null(v))
				continue;   /* a metric the profiler could not give */
			if (!json_is_number(v)) {
				kg_error("%s:%zu: kernel record: metric \"%s\" must be a number",
					 c->r->path, c->r->lineno, key);
				return KG_EXIT_USAGE;
			}
			*metric_slot(c, kv.nm++) = (struct kmetric){ key, json_number_value(v) };
		}
	}
	kv.m = c->km;
	for (size_t i = 0; c->derived && i < N_LAUNCH; i++) {
		if (launch[i].dim3) {
			kv.have[i] = opt_dim3(c, k, launch[i].field, &kv.launch[i]);
		} else if ((kv.have[i] = opt_int(c, k, launch[i].field, &iv)) > 0) {
			kv.launch[i] = (double)iv;
		}
		if (kv.have[i] < 0)
			return KG_EXIT_USAGE;
	}
	rc = emit_kernel(c, &kv);
	if (rc == KG_EXIT_PASS)
		note_device(c, kv.has_device, kv.device);
	return rc;
}

/* ---- the kernel record through jtok: the common case, fast ---- */

enum { F_TYPE, F_NAME, F_ORDINAL, F_NVTX, F_METRICS, F_START, F_END, F_DEVICE, F_LAUNCH };
#define N_FIELDS (F_LAUNCH + N_LAUNCH)

/* Token i is the key of field f. */
static int is_field(const struct jtok *j, int i, int f)
{
	static const struct {
		const char *name;
		size_t len;
	} fields[F_LAUNCH] = {
		{ WORD("type") }, { WORD("name") }, { WORD("ordinal") }, { WORD("nvtx") },
		{ WORD("metrics") }, { WORD("start") }, { WORD("end") }, { WORD("device") },
	};
	if (f < F_LAUNCH)
		return jtok_isn(j, i, fields[f].name, fields[f].len);
	return jtok_isn(j, i, launch[f - F_LAUNCH].field, launch[f - F_LAUNCH].len);
}

static int cmp_tok_text(const void *a, const void *b, void *arg)
{
	const struct jtok *j = arg;
	const jsmntok_t *x = &j->t[*(const int *)a], *y = &j->t[*(const int *)b];
	int nx = x->end - x->start, ny = y->end - y->start;
	int r = memcmp(j->s + x->start, j->s + y->start, (size_t)(nx < ny ? nx : ny));
	return r ? r : (nx > ny) - (nx < ny);
}

/* Two keys of the metrics object (the tokens keys[0..n)) are the same:
 * jansson would keep the last one's value, so jtok declines. */
static int keys_repeat(const struct jtok *j, int *keys, size_t n)
{
	if (n <= 16) {
		for (size_t a = 0; a < n; a++)
			for (size_t b = a + 1; b < n; b++)
				if (!cmp_tok_text(&keys[a], &keys[b], (void *)j))
					return 1;
		return 0;
	}
	qsort_r(keys, n, sizeof(*keys), cmp_tok_text, (void *)j);
	for (size_t a = 1; a < n; a++)
		if (!cmp_tok_text(&keys[a - 1], &keys[a], (void *)j))
			return 1;
	return 0;
}

/* An optional integer: 1 given (in *v), 0 absent or null, -1 otherwise. */
static int tok_opt_int(const struct jtok *j, int i, json_int_t *v)
{
	int64_t x;
	if (i < 0 || jtok_null(j, i))
		return 0;
	if (!jtok_int(j, i, &x))
		return -1;
	*v = x;
	return 1;
}

/*
 * The current line as a kernel record read by jtok: 1 when it was one
 * within jtok's subset and every field as the format wants (*rc then the
 * outcome of storing it), 0 when not: the line is then read with jansson,
 * which stores it or says what is wrong, as for every other record.
 */
static int fast_kernel(struct ingest_ctx *c, int *rc)
{
	struct jtok *j = &c->jt;
	int f[N_FIELDS];
	struct kview kv = { 0 };

	if (!jtok_scan(j, c->r->line, (size_t)c->r->len))
		return 0;
	for (size_t i = 0; i < N_FIELDS; i++)
		f[i] = -1;
	for (int i = 1; i < j->n; i = jtok_skip(j, i + 1)) {
		for (int k = 0; k < (int)N_FIELDS; k++) {
			if (is_field(j, i, k)) {
				if (f[k] >= 0)
					return 0;       /* a repeated key: jansson's to judge */
				f[k] = i + 1;
				break;
			}
		}
	}
	if (f[F_TYPE] < 0 || !jtok_is(j, f[F_TYPE], "kernel"))
		return 0;
	if (f[F_NAME] < 0 || j->t[f[F_NAME]].type != JSMN_STRING ||
	    j->t[f[F_NAME]].end == j->t[f[F_NAME]].start)
		return 0;
	int64_t ord;
	if (f[F_ORDINAL] < 0 || !jtok_int(j, f[F_ORDINAL], &ord))
		return 0;
	kv.ordinal = ord;
	if (f[F_NVTX] >= 0 && !jtok_null(j, f[F_NVTX]) && j->t[f[F_NVTX]].type != JSMN_STRING)
		return 0;
	if ((kv.has_start = tok_opt_int(j, f[F_START], &kv.start)) < 0 ||
	    (kv.has_end = tok_opt_int(j, f[F_END], &kv.end)) < 0)
		return 0;
	int64_t dev;
	if (f[F_DEVICE] >= 0 && jtok_int(j, f[F_DEVICE], &dev)) {
		kv.has_device = 1;
		kv.device = dev;
	}
	for (size_t i = 0; c->derived && i < N_LAUNCH; i++) {
		int t = f[F_LAUNCH + i];
		if (t < 0 || jtok_null(j, t))
			continue;
		if (!launch[i].dim3) {
			json_int_t iv = 0;
			if (tok_opt_int(j, t, &iv) < 0)
				return 0;
			kv.launch[i] = (double)iv;
		} else {
			if (j->t[t].type != JSMN_ARRAY || j->t[t].size != 3)
				return 0;
			double p = 1;
			for (int e = t + 1; e <= t + 3; e++) {
				if (!jtok_int(j, e, &ord) || ord < 0)
					return 0;
				p *= (double)ord;
			}
			kv.launch[i] = p;
		}
		kv.have[i] = 1;
	}

	/* the metrics: numbers or null, no key twice */
	int mt = f[F_METRICS];
	size_t nkeys = 0;
	int *keys = NULL;
	if (mt >= 0 && !jtok_null(j, mt)) {
		if (j->t[mt].type != JSMN_OBJECT)
			return 0;
		keys = j->stack;    /* free once jtok_scan is done */
		for (int i = mt + 1; i < j->n && j->t[i].start < j->t[mt].end; i = jtok_skip(j, i + 1)) {
			double v;
			if (!jtok_null(j, i + 1) && !jtok_number(j, i + 1, &v))
				return 0;
			keys[nkeys++] = i;
		}
		if (keys_repeat(j, keys, nkeys))
			return 0;
	}

	/* taken: the strings end where their closing quotes are */
	char *s = c->r->line;
	s[j->t[f[F_NAME]].end] = '\0';
	kv.name = s + j->t[f[F_NAME]].start;
	kv.nvtx = "";
	if (f[F_NVTX] >= 0 && j->t[f[F_NVTX]].type == JSMN_STRING) {
		s[j->t[f[F_NVTX]].end] = '\0';
		kv.nvtx = s + j->t[f[F_NVTX]].start;
	}
	for (size_t k = 0; k < nkeys; k++) {
		const jsmntok_t *key = &j->t[keys[k]];
		int slot = derived_slot(s + key->start, (size_t)(key->end - key->start));
		double v;
		if (slot >= 0)
			kv.in_metrics[slot] = 1;
		if (!jtok_number(j, keys[k] + 1, &v))
			continue;   /* null: a metric the profiler could not give */
		s[key->end] = '\0';
		*metric_slot(c, kv.nm++) = (struct kmetric){ s + key->start, v };
	}
	kv.m = c->km;
	*rc = emit_kernel(c, &kv);
	if (*rc == KG_EXIT_PASS)
		note_device(c, kv.has_device, kv.device);
	return 1;
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

/* Every line after the header. */
static int read_records(struct ingest_ctx *c)
{
	struct reader *r = c->r;
	struct kg_import_stats *stats = c->stats;
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
		if (fast_kernel(c, &rc)) {
			stats->kernels++;
			if (rc != KG_EXIT_PASS)
				goto out;
			continue;
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
out:
	return rc;
}

/* The records importer's ingest (import.h): runs on the sink's reader
 * thread. */
int records_parse(struct kg_import_sink *sink, const char *path)
{
	struct reader r;
	struct ingest_ctx c = { .sink = sink, .r = &r, .derived = 1,
				.stats = import_sink_stats(sink) };
	json_t *h = NULL;
	int rc;

	if ((rc = read_header(&r, path, &h, 1)) == KG_EXIT_PASS) {
		json_t *pass = json_object_get(h, "pass"), *rank = json_object_get(h, "rank");
		if (json_is_integer(pass) && json_integer_value(pass) > 0)
			c.derived = 0;  /* application replay: pass 0 carries them */
		if (json_is_integer(rank))
			import_sink_rank(sink, (int)json_integer_value(rank));
		c.devices = json_object_get(h, "devices");
		rc = read_records(&c);
		json_decref(h);
	}
	free(c.seen);
	free(c.km);
	jtok_free(&c.jt);
	reader_close(&r);
	return rc;
}

int records_ingest(struct kg_store *st, const char *path, const char *benchmark,
		   int repeat, struct kg_records_stats *stats)
{
	struct kg_import_stats is;
	int rc = import_ingest(import_find("records"), st, path, benchmark, repeat, &is);

	if (stats) {
		stats->kernels = is.kernels;
		stats->samples = is.samples;
		stats->dropped = is.dropped;
		stats->errors = is.errors;
	}
	import_stats_free(&is);
	return rc;
}
