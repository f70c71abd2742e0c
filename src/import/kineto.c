/*
 * import/kineto.c: the importer of Kineto traces: torch.profiler's
 * export_chrome_trace() and on_trace_ready files (Chrome trace JSON,
 * "traceEvents"), plain or gzip-compressed (.json.gz).
 *
 * Streamed (jstream.c: zlib, a window, a scanner that splits the
 * traceEvents array into events); an event is parsed only when its
 * category (read by the scanner's probe of "cat") is one this importer
 * reads, and on a thread of its own (evq below), in file order.  Memory holds one
 * event (at most JSTREAM_VALUE_MAX bytes) and the window, plus the GPU
 * user annotations (one small record each), never the whole trace.  A
 * truncated gzip stream, a document cut short or bytes after it fail the
 * import, naming the file and the byte offset (of the decompressed text).
 *
 * What is read: "kernel" events (ph "X") as launches: the duration (dur,
 * microseconds, fractional since Kineto's ns resolution) in ns as
 * gpu__time_duration.sum, and from args the grid and block sizes, the
 * registers per thread and "shared memory" (static plus dynamic, so stored
 * as launch__shared_mem_per_block); "cuda_profiler_range" events (the
 * CUPTI range profiler's counters, one event per kernel with the counters
 * as args) as metrics of the kernel they name; "gpu_user_annotation" ranges
 * (record_function ranges projected on the GPU) as NVTX paths: a launch
 * gets the annotations of its device and stream (the event's pid and tid)
 * that contain its start, outermost first, joined with '/'.  Kineto
 * writes the annotations after the kernels, so the launches of the first
 * KINETO_HELD kernel events are held (a small record each) until the
 * annotations are read, and stored then; a trace with more kernel events,
 * or with counter events, is read a second time for those.  Kernel
 * names are demangled in Kineto traces: keyed canonically.  The ordinal
 * counts kernel events in file order.  The stream is read for the
 * annotations only (a stream's number is the launch's identity, not its
 * behaviour, as in the collector's records).
 *
 * The GPU is the deviceProperties entry of the kernels' device; an AMD GPU
 * (a ROCm build of PyTorch writes the same format) is refused: kgate gates
 * CUDA kernels.  The benchmark is named by the process_name metadata event
 * of the profiled process.
 */
#include "jstream.h"

#include "kgate/import.h"
#include "kgate/records_format.h"
#include "kgate/util.h"

#include <pthread.h>

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats.h"

#define KINETO_DEPTH 64                 /* nested annotations named */
/* Kernel launches held in the first pass, to be placed under the
 * annotations once they are read (Kineto writes the annotations after the
 * kernels): a trace of at most this many launches is read once, a longer
 * one a second time for the rest.  96 bytes a launch: 12 MiB. */
#define KINETO_HELD (1u << 17)

/* ------------------------------------------------------------------ */
/* Sniffing: the head, inflated when it is gzip                        */

static size_t inflate_head(const unsigned char *head, size_t n, unsigned char *out, size_t cap)
{
	z_stream z;
	size_t got;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return 0;
	z.next_in = (unsigned char *)head;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	inflate(&z, Z_SYNC_FLUSH);
	got = cap - z.avail_out;
	inflateEnd(&z);
	return got;
}

int kineto_sniff(const unsigned char *head, size_t n, const char *path)
{
	unsigned char *buf = NULL;
	int sure = KG_SNIFF_NO;

	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
		buf = xmalloc(KG_IMPORT_HEAD);
		n = inflate_head(head, n, buf, KG_IMPORT_HEAD);
		head = buf;
	}
	size_t i = 0;
	while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
		i++;
	if (i < n && head[i] == '{') {
		int trace = memmem(head, n, "\"traceEvents\"", 13) != NULL;
		int props = memmem(head, n, "\"deviceProperties\"", 18) != NULL;
		int kernel = memmem(head, n, "\"kernel\"", 8) != NULL ||
			     memmem(head, n, "\"cuda_profiler_range\"", 21) != NULL;
		int schema = memmem(head, n, "\"schemaVersion\"", 15) != NULL;
		/* a torch.profiler trace whose first events are all on the CPU */
		int torch = memmem(head, n, "\"cpu_op\"", 8) != NULL ||
			    memmem(head, n, "\"cuda_runtime\"", 14) != NULL ||
			    memmem(head, n, "\"python_function\"", 17) != NULL;
		if (trace && (props || kernel))
			sure = KG_SNIFF_SURE;
		else if ((props && schema) || (trace && (schema || torch)))
			sure = KG_SNIFF_LIKELY;
	}
	free(buf);
	return sure;
}

/* ------------------------------------------------------------------ */
/* Events                                                              */

static int has_bytes(const unsigned char *s, size_t n, const char *w)
{
	return memmem(s, n, w, strlen(w)) != NULL;
}

/* Whether an event is wanted, by its category as the reader's probe of
 * "cat" found it (jstream_probe): 1 or 0, or -1 when the probe cannot say. */
static int probe_wanted(const struct jstream *r, const unsigned char *s, const char *const *want)
{
	if (!r->probe || r->pr.unsure || r->pr.hits > 1)
		return -1;
	if (!r->pr.hits)
		return 0;       /* no category: ingest_event would pass it over */
	for (size_t i = 0; want[i]; i++) {
		size_t l = strlen(want[i]) - 2;      /* want[i] is quoted */
		if (r->pr.len == l && !memcmp(s + r->pr.off, want[i] + 1, l))
			return 1;
	}
	return 0;
}

/* Where an event is, for messages: the file and the event's byte offset
 * in its (decompressed) text. */
struct evsrc {
	const char *path;
	uint64_t off;
};

static struct evsrc src_of(const struct jstream *r, const unsigned char *s)
{
	return (struct evsrc){ r->path, jstream_offset(r, s) };
}

/* An event that names a wanted category, parsed with jt; NULL when not
 * wanted or after an error (*rc set).  sure: the caller knows it is wanted
 * (probe_wanted); else it is parsed when a wanted name appears in it
 * anywhere quoted, or it has a backslash (where a category could be written
 * with escapes). */
static json_t *event_parse(struct jtok *jt, const struct evsrc *src, const unsigned char *s,
			   size_t n, const char *const *want, int sure, int *rc)
{
	int hit = sure;
	json_error_t err;

	*rc = KG_EXIT_PASS;
	if (!hit) {
		hit = memchr(s, '\\', n) != NULL;
		for (size_t i = 0; want[i] && !hit; i++)
			hit = has_bytes(s, n, want[i]);
	}
	if (!hit)
		return NULL;
	json_t *e = jtok_loadb(jt, (const char *)s, n, &err);
	if (!e) {
		kg_error("%s: byte %llu: bad JSON in traceEvents: %s", src->path,
			 (unsigned long long)src->off, err.text);
		*rc = KG_EXIT_USAGE;
		return NULL;
	}
	if (!json_is_object(e)) {
		kg_error("%s: byte %llu: an element of traceEvents that is not an object", src->path,
			 (unsigned long long)src->off);
		json_decref(e);
		*rc = KG_EXIT_USAGE;
		return NULL;
	}
	return e;
}

static const char *str_of(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* ts or dur (microseconds) in ns; 0 when absent or not a finite number >= 0
 * (for dur) */
static int time_ns(json_t *o, const char *k, int64_t *out)
{
	json_t *v = json_object_get(o, k);
	if (!json_is_number(v))
		return 0;
	double d = json_number_value(v) * 1000.0;
	if (!isfinite(d) || fabs(d) > 9.0e18)
		return 0;
	*out = (int64_t)llround(d);
	return 1;
}

static int int_of(json_t *o, const char *k, int64_t *out)
{
	json_t *v = json_object_get(o, k);
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 1;
	}
	if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
	    fabs(json_real_value(v)) < 9.0e18) {
		*out = (int64_t)json_real_value(v);
		return 1;
	}
	return 0;
}

/* A device or stream id: an integer, or a string that ends in one ("stream
 * 7", older Kineto's tid of GPU events). */
static int id_of(json_t *o, const char *k, int64_t *out)
{
	json_t *v = json_object_get(o, k);
	if (json_is_string(v)) {
		const char *s = json_string_value(v), *e = s + strlen(s), *d = e;
		while (d > s && d[-1] >= '0' && d[-1] <= '9' && e - d < 18)
			d--;
		if (d == e)
			return 0;
		*out = strtoll(d, NULL, 10);
		return 1;
	}
	return int_of(o, k, out);
}

/* ------------------------------------------------------------------ */
/* read_info: deviceProperties, the process name, the kernels' devices */

struct info_ctx {
	struct kg_import_info *info;
	json_t *devices;        /* deviceProperties */
	char *process;          /* the first process_name */
	long long pid;
	int64_t devs_seen[8];   /* the kernels' devices (the first few) */
	int ndevs;
	int has_events;
	int one_model;          /* deviceProperties holds one GPU model */
	int gpu_count;          /* kernel or counter events (counted until one is seen
				 * where one_model) */
};

/* 1 when the trace's devices are all of one model (so a kernel's device
 * need not be read), as far as deviceProperties, read before traceEvents,
 * tells. */
static int one_model(json_t *devices)
{
	const char *first = NULL;
	size_t i;
	json_t *d;

	if (!json_is_array(devices))
		return 0;
	json_array_foreach(devices, i, d) {
		const char *n = str_of(d, "name");
		if (!n)
			return 0;
		if (first && strcmp(first, n) != 0)
			return 0;
		first = n;
	}
	return 1;
}

static int info_event(struct jstream *r, const unsigned char *s, size_t n, void *arg)
{
	struct info_ctx *c = arg;
	static const char *const all[] = { "\"process_name\"", "\"kernel\"",
					   "\"cuda_profiler_range\"", NULL };
	static const char *const names[] = { "\"process_name\"", NULL };
	int rc;
	/* once a kernel is seen on a trace of one GPU model, only the process
	 * name is still wanted */
	struct evsrc src = src_of(r, s);
	json_t *e = event_parse(&r->jt, &src, s, n, c->gpu_count && c->one_model ? names : all, 0,
				&rc);

	if (!e)
		return rc;
	const char *name = str_of(e, "name"), *ph = str_of(e, "ph"), *cat = str_of(e, "cat");
	if (ph && !strcmp(ph, "M") && name && !strcmp(name, "process_name") && !c->process) {
		const char *pn = str_of(json_object_get(e, "args"), "name");
		int64_t pid;
		if (pn && *pn) {
			c->process = xstrdup(pn);
			if (int_of(e, "pid", &pid))
				c->pid = pid;
		}
	} else if (cat && (!strcmp(cat, "kernel") || !strcmp(cat, "cuda_profiler_range"))) {
		int64_t d;
		c->gpu_count++;
		if (int_of(json_object_get(e, "args"), "device", &d) || id_of(e, "pid", &d)) {
			int k;
			for (k = 0; k < c->ndevs && c->devs_seen[k] != d; k++)
				;
			if (k == c->ndevs && c->ndevs < 8)
				c->devs_seen[c->ndevs++] = d;
		}
	}
	json_decref(e);
	/* all that is wanted is known: the rest of the trace (a second inflating
	 * of it, the ingest's, reads and checks every event) is not walked here */
	if (c->process && c->gpu_count && c->one_model)
		return JSTREAM_STOP;
	return KG_EXIT_PASS;
}

static int info_key(struct jstream *r, const char *key, void *arg)
{
	struct info_ctx *c = arg;

	if (!strcmp(key, "deviceProperties") && !c->devices)
		return (c->devices = jstream_json(r)) ? KG_EXIT_PASS : KG_EXIT_USAGE;
	if (!strcmp(key, "traceEvents")) {
		c->has_events = 1;
		c->one_model = one_model(c->devices);
		return jstream_array(r, info_event, c);
	}
	return jstream_skip(r);
}

static json_t *device_of(json_t *devices, int64_t id)
{
	size_t i;
	json_t *d;
	int64_t v;

	json_array_foreach(devices, i, d)
		if (int_of(d, "id", &v) && v == id)
			return d;
	return NULL;
}

static int is_amd(json_t *d)
{
	const char *n = str_of(d, "name");
	int64_t warp;
	return (n && (strstr(n, "AMD") || strstr(n, "Radeon") || strstr(n, "Instinct"))) ||
	       (int_of(d, "warpSize", &warp) && warp == 64);
}

static char *stem(const char *path)
{
	const char *b = strrchr(path, '/');
	char *s = xstrdup(b ? b + 1 : path);
	static const char *const ext[] = { ".json.gz", ".json", ".gz" };
	size_t l = strlen(s);
	for (size_t i = 0; i < 3; i++) {
		size_t m = strlen(ext[i]);
		if (l > m && !strcmp(s + l - m, ext[i])) {
			s[l - m] = '\0';
			break;
		}
	}
	return s;
}

int kineto_read_info(const char *path, struct kg_import_info *info)
{
	struct info_ctx c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.info = info;
	c.pid = -1;
	rc = jstream_walk(path, "Kineto", info_key, &c);
	if (rc == KG_EXIT_PASS && !c.has_events) {
		kg_error("%s: a JSON object without traceEvents; not a Kineto trace", path);
		rc = KG_EXIT_USAGE;
	}
	if (rc == KG_EXIT_PASS && !c.gpu_count) {
		kg_error("%s: a trace without GPU kernels (no \"kernel\" events: was the profiler "
			 "run with ProfilerActivity.CUDA?); nothing to import", path);
		rc = KG_EXIT_USAGE;
	}
	/* the GPU: the kernels' device(s), else the trace's first device */
	json_t *gpu = NULL;
	if (rc == KG_EXIT_PASS && json_is_array(c.devices)) {
		for (int k = 0; k < c.ndevs && rc == KG_EXIT_PASS; k++) {
			json_t *d = device_of(c.devices, c.devs_seen[k]);
			const char *a = str_of(d, "name"), *b = str_of(gpu, "name");
			if (d && gpu && a && b && strcmp(a, b) != 0) {
				kg_error("%s: the kernels ran on GPUs of different models (%s, %s); "
					 "one run is one GPU model", path, b, a);
				rc = KG_EXIT_USAGE;
			}
			if (d && !gpu)
				gpu = d;
		}
		if (!gpu && !c.ndevs)
			gpu = json_array_get(c.devices, 0);
	}
	if (rc == KG_EXIT_PASS && gpu && is_amd(gpu)) {
		kg_error("%s: a trace of an AMD GPU (%s; a ROCm build of PyTorch): kgate gates "
			 "CUDA kernels on NVIDIA GPUs; nothing imported", path,
			 str_of(gpu, "name") ? str_of(gpu, "name") : "warp size 64");
		rc = KG_EXIT_USAGE;
	}
	if (rc == KG_EXIT_PASS) {
		if (gpu && str_of(gpu, "name") && *str_of(gpu, "name"))
			info->run.gpu_name = xstrdup(str_of(gpu, "name"));
		info->run.collector = xstrdup("kineto");
		info->run.source = xstrdup("kineto");
		if (c.process) {
			const char *b = strrchr(c.process, '/');
			info->benchmark = xstrdup(b && b[1] ? b + 1 : c.process);
		} else {
			info->benchmark = stem(path);
		}
		info->pid = c.pid;
	}
	json_decref(c.devices);
	free(c.process);
	return rc;
}

/* ------------------------------------------------------------------ */
/* ingest                                                              */

struct annot {
	int64_t dev, stream, start, end;
	const char *name;       /* interned */
	const char *path;       /* interned: the names of it and its parents */
	size_t parent;          /* index + 1, 0: none */
};

/* A kernel launch read before the annotations that place it are known
 * (Kineto writes them after the kernels): what kernel_store needs. */
struct launch {
	struct kg_kernel_name kn;
	int64_t dev, stream, ts, dur, ord, regs, smem;      /* regs, smem: -1 none */
	double grid, block;     /* 0: none */
};

struct ingest_ctx {
	struct kg_import_sink *sink;
	struct annot *a;
	size_t na, capa;
	int pass;               /* 1: annotations, and the kernels held below;
				 * 2: the kernels (after the first nheld) and counters */
	int64_t ordinal, counters;
	struct launch *held;    /* pass 1's kernels, at most KINETO_HELD */
	size_t nheld, capheld;
	int again;              /* pass 2 is needed: more kernels than held, or
				 * counter events */
	const struct kg_import_metric *m[5];
	json_t *devices;
	int amd;
	const char *path;       /* the file, for messages */
	struct evq *q;          /* traceEvents' parsing thread */
};

static int annot_cmp(const void *x, const void *y)
{
	const struct annot *a = x, *b = y;
	int c = KG_CMP(a->dev, b->dev);

	if (!c)
		c = KG_CMP(a->stream, b->stream);
	if (!c)
		c = KG_CMP(a->start, b->start);
	return c ? c : KG_CMP(b->end, a->end); /* the outer one first */
}

/* Parents and paths, once the annotations are sorted. */
static void annot_nest(struct ingest_ctx *c)
{
	size_t stack[KINETO_DEPTH], depth = 0;
	struct kg_buf b = KG_BUF_INIT;

	for (size_t i = 0; i < c->na; i++) {
		struct annot *x = &c->a[i];
		if (i && (x->dev != c->a[i - 1].dev || x->stream != c->a[i - 1].stream))
			depth = 0;
		while (depth && c->a[stack[depth - 1]].end < x->end)
			depth--;        /* not inside the one on top */
		x->parent = depth ? stack[depth - 1] + 1 : 0;
		buf_reset(&b);
		if (x->parent)
			buf_printf(&b, "%s/", c->a[x->parent - 1].path);
		buf_adds(&b, x->name);
		x->path = depth < KINETO_DEPTH ? import_sink_string(c->sink, b.s)
					       : c->a[x->parent - 1].path;
		if (depth < KINETO_DEPTH)
			stack[depth++] = i;
	}
	buf_free(&b);
}

/* The path of a launch at ts on (dev, stream). */
static const char *annot_path(struct ingest_ctx *c, int64_t dev, int64_t stream, int64_t ts)
{
	size_t lo = 0, hi = c->na;
	struct annot key = { dev, stream, ts, INT64_MIN, NULL, NULL, 0 };

	/* the last annotation that starts at or before ts on (dev, stream) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (annot_cmp(&c->a[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i > 0;) {
		struct annot *x = &c->a[i - 1];
		if (x->dev != dev || x->stream != stream)
			break;
		if (x->start <= ts && ts <= x->end)
			return x->path;
		i = x->parent;
	}
	return "";
}

static int annot_event(struct ingest_ctx *c, json_t *e)
{
	int64_t dev, stream, ts, dur;
	const char *name = str_of(e, "name");

	if (!id_of(e, "pid", &dev) || !id_of(e, "tid", &stream) || !time_ns(e, "ts", &ts) ||
	    !time_ns(e, "dur", &dur) || dur < 0 || !name)
		return KG_EXIT_PASS;   /* not a range kgate can place */
	if (c->na == c->capa) {
		c->capa = c->capa ? c->capa * 2 : 256;
		c->a = xrealloc(c->a, c->capa * sizeof(*c->a));
	}
	char n[1025];
	snprintf(n, sizeof(n), "%s", name);
	c->a[c->na++] = (struct annot){ dev, stream, ts, ts + dur, import_sink_string(c->sink, n),
					NULL, 0 };
	return KG_EXIT_PASS;
}

static int bad_event(const struct evsrc *src, const char *what)
{
	kg_error("%s: byte %llu: %s", src->path, (unsigned long long)src->off, what);
	return KG_EXIT_USAGE;
}

static int dim3(json_t *args, const char *k, double *out)
{
	json_t *v = json_object_get(args, k);
	double p = 1;

	if (!v)
		return 0;
	if (!json_is_array(v) || json_array_size(v) != 3)
		return -1;
	for (size_t i = 0; i < 3; i++) {
		json_t *x = json_array_get(v, i);
		if (!json_is_integer(x) || json_integer_value(x) < 0)
			return -1;
		p *= (double)json_integer_value(x);
	}
	*out = p;
	return 1;
}

/* A launch's samples, under the annotations that contain its start. */
static int kernel_store(struct ingest_ctx *c, const struct launch *l)
{
	const char *nvtx = c->na ? annot_path(c, l->dev, l->stream, l->ts) : "";
	size_t line = (size_t)l->ord + 1;
	int rc;

	if ((rc = import_sink_add(c->sink, nvtx, &l->kn, c->m[0], l->ord, (double)l->dur, line)))
		return rc;
	if (l->grid && (rc = import_sink_add(c->sink, nvtx, &l->kn, c->m[1], l->ord, l->grid, line)))
		return rc;
	if (l->block && (rc = import_sink_add(c->sink, nvtx, &l->kn, c->m[2], l->ord, l->block, line)))
		return rc;
	if (l->regs >= 0 &&
	    (rc = import_sink_add(c->sink, nvtx, &l->kn, c->m[3], l->ord, (double)l->regs, line)))
		return rc;
	if (l->smem >= 0 &&
	    (rc = import_sink_add(c->sink, nvtx, &l->kn, c->m[4], l->ord, (double)l->smem, line)))
		return rc;
	import_sink_stats(c->sink)->kernels++;
	return KG_EXIT_PASS;
}

static int kernel_event(struct ingest_ctx *c, const struct evsrc *src, json_t *e)
{
	const char *name = str_of(e, "name");
	json_t *args = json_object_get(e, "args");
	struct launch l = { .regs = -1, .smem = -1 };
	int64_t v;

	l.ord = c->ordinal++;
	if (c->pass == 2 && (size_t)l.ord < c->nheld)
		return KG_EXIT_PASS;    /* stored from the first pass */
	if (!name || !*name)
		return bad_event(src, "a kernel event without a name");
	if (!time_ns(e, "ts", &l.ts) || !time_ns(e, "dur", &l.dur) || l.dur < 0)
		return bad_event(src, "a kernel event without a time (ts, dur: microseconds, dur "
				       "not negative)");
	id_of(e, "pid", &l.dev);
	id_of(e, "tid", &l.stream);
	int hg = dim3(args, "grid", &l.grid), hb = dim3(args, "block", &l.block);
	if (hg < 0 || hb < 0)
		return bad_event(src, "a kernel event whose grid or block is not 3 non-negative "
				       "integers");
	if (!hg)
		l.grid = 0;
	if (!hb)
		l.block = 0;
	if (int_of(args, "registers per thread", &v) && v >= 0)
		l.regs = v;
	if (int_of(args, "shared memory", &v) && v >= 0)
		l.smem = v;
	if (c->pass == 1 && c->nheld == KINETO_HELD) {
		c->again = 1;   /* the rest in the second pass */
		return KG_EXIT_PASS;
	}
	import_sink_kernel(c->sink, name, KG_KEY_CANONICAL, &l.kn);
	if (c->pass == 2)
		return kernel_store(c, &l);
	if (c->nheld == c->capheld) {
		c->capheld = c->capheld ? c->capheld * 2 : 256;
		c->held = xrealloc(c->held, c->capheld * sizeof(*c->held));
	}
	c->held[c->nheld++] = l;
	return KG_EXIT_PASS;
}

/* A cuda_profiler_range event: the CUPTI range profiler's counters of one
 * kernel, as args. */
static int counter_event(struct ingest_ctx *c, const struct evsrc *src, json_t *e)
{
	const char *name = str_of(e, "name"), *key;
	json_t *args = json_object_get(e, "args"), *v;
	int64_t ts = 0, dev = 0, stream = 0;
	int rc;

	if (!name || !*name)
		return bad_event(src, "a cuda_profiler_range event without a kernel name");
	time_ns(e, "ts", &ts);
	id_of(e, "pid", &dev);
	id_of(e, "tid", &stream);
	struct kg_kernel_name kn;
	import_sink_kernel(c->sink, name, KG_KEY_CANONICAL, &kn);
	const char *nvtx = c->na ? annot_path(c, dev, stream, ts) : "";
	int64_t ord = c->counters++;
	json_object_foreach(args, key, v) {
		if (!json_is_number(v) || !strchr(key, '_'))
			continue;       /* counters are named unit__counter.rollup */
		char m[256];
		snprintf(m, sizeof(m), "%s", key);
		if ((rc = import_sink_add(c->sink, nvtx, &kn, import_sink_metric(c->sink, m, NULL),
					  ord, json_number_value(v), (size_t)ord + 1)))
			return rc;
	}
	import_sink_stats(c->sink)->kernels++;
	return KG_EXIT_PASS;
}

/* The categories each pass reads, quoted as they appear in an event. */
static const char *const *want_of(const struct ingest_ctx *c)
{
	static const char *const want1[] = { "\"gpu_user_annotation\"", "\"kernel\"",
					     "\"cuda_profiler_range\"", NULL };
	static const char *const want2[] = { "\"kernel\"", "\"cuda_profiler_range\"", NULL };
	return c->pass == 1 ? want1 : want2;
}

/* One wanted event, parsed and taken in (on the parsing thread). */
static int event_do(struct ingest_ctx *c, struct jtok *jt, const struct evsrc *src,
		    const unsigned char *s, size_t n, int sure)
{
	int rc;
	json_t *e = event_parse(jt, src, s, n, want_of(c), sure, &rc);

	if (!e)
		return rc;
	const char *cat = str_of(e, "cat"), *ph = str_of(e, "ph");
	if (!cat || !ph || strcmp(ph, "X") != 0) {
		json_decref(e);
		return KG_EXIT_PASS;
	}
	if (c->pass == 1 && !strcmp(cat, "gpu_user_annotation"))
		rc = annot_event(c, e);
	else if (!strcmp(cat, "kernel"))
		rc = kernel_event(c, src, e);
	else if (c->pass == 1 && !strcmp(cat, "cuda_profiler_range"))
		c->again = 1;   /* counters name their kernel; read in the second pass */
	else if (c->pass == 2 && !strcmp(cat, "cuda_profiler_range"))
		rc = counter_event(c, src, e);
	json_decref(e);
	return rc;
}

/* ------------------------------------------------------------------ */
/* traceEvents on two threads                                          */

/*
 * The reading thread (jstream's scan, the inflater beside it) keeps the
 * events whose category is wanted, copied into batches, and a parsing
 * thread parses them and takes them in (event_do), one batch after the
 * other, so in file order.  On a large trace the scan and the parsing cost
 * about the same, and the launches are stored only after the pass (they
 * wait for the annotations, which come last), so this takes the parsing
 * off the pass's critical path where a second core is free.  Memory:
 * EVQ_BATCHES batches of EVQ_BATCH bytes (one larger for a larger event).
 */
#define EVQ_BATCH (256u << 10)
#define EVQ_BATCHES 4

struct evref {
	uint64_t off;           /* the event's byte offset in the file */
	size_t at, n;           /* its bytes in the batch */
	int sure;               /* the probe said it is wanted */
};

struct evbatch {
	unsigned char *b;
	size_t len, cap;
	struct evref *ev;
	size_t nev, capev;
};

struct evq {
	struct ingest_ctx *c;
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct evbatch batch[EVQ_BATCHES];
	size_t fill;            /* the batch the reading thread fills */
	size_t queued;          /* batches handed over and not yet done, the
				 * ones before fill (round robin) */
	int done;               /* no more batches come */
	int rc;                 /* the parsing thread's failure (it stops taking
				 * events in, and the reading thread stops) */
};

static void *evq_main(void *arg)
{
	struct evq *q = arg;
	struct jtok jt = { 0 };
	size_t take = 0;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->queued && !q->done)
			pthread_cond_wait(&q->cv, &q->mu);
		if (!q->queued)
			break;
		int failed = q->rc != KG_EXIT_PASS;
		pthread_mutex_unlock(&q->mu);
		struct evbatch *b = &q->batch[take];
		int rc = KG_EXIT_PASS;
		for (size_t i = 0; i < b->nev && !failed && rc == KG_EXIT_PASS; i++) {
			struct evsrc src = { q->c->path, b->ev[i].off };
			rc = event_do(q->c, &jt, &src, b->b + b->ev[i].at, b->ev[i].n, b->ev[i].sure);
		}
		b->len = b->nev = 0;
		take = (take + 1) % EVQ_BATCHES;
		pthread_mutex_lock(&q->mu);
		if (rc != KG_EXIT_PASS && q->rc == KG_EXIT_PASS)
			q->rc = rc;
		q->queued--;
		pthread_cond_broadcast(&q->cv);
	}
	pthread_mutex_unlock(&q->mu);
	jtok_free(&jt);
	return NULL;
}

/* The batch being filled handed to the parsing thread, waiting for the
 * next one to be free; the parsing thread's failure, if any. */
static int evq_hand(struct evq *q)
{
	pthread_mutex_lock(&q->mu);
	q->queued++;
	q->fill = (q->fill + 1) % EVQ_BATCHES;
	pthread_cond_broadcast(&q->cv);
	while (q->queued == EVQ_BATCHES)
		pthread_cond_wait(&q->cv, &q->mu);
	int rc = q->rc;
	pthread_mutex_unlock(&q->mu);
	return rc;
}

static int evq_put(struct evq *q, uint64_t off, const unsigned char *s, size_t n, int sure)
{
	struct evbatch *b = &q->batch[q->fill];
	int rc;

	if (b->len && b->len + n > EVQ_BATCH) {
		if ((rc = evq_hand(q)) != KG_EXIT_PASS)
			return rc;
		b = &q->batch[q->fill];
	}
	if (b->len + n > b->cap) {
		b->cap = b->len + n > EVQ_BATCH ? b->len + n : EVQ_BATCH;
		b->b = xrealloc(b->b, b->cap);
	}
	if (b->nev == b->capev) {
		b->capev = b->capev ? 2 * b->capev : 1024;
		b->ev = xrealloc(b->ev, b->capev * sizeof(*b->ev));
	}
	memcpy(b->b + b->len, s, n);
	b->ev[b->nev++] = (struct evref){ off, b->len, n, sure };
	b->len += n;
	return KG_EXIT_PASS;
}

static int evq_start(struct evq *q, struct ingest_ctx *c)
{
	memset(q, 0, sizeof(*q));
	q->c = c;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	int e = pthread_create(&q->tid, NULL, evq_main, q);
	if (e) {
		kg_error("cannot read '%s': cannot start a thread: %s", c->path, strerror(e));
		pthread_cond_destroy(&q->cv);
		pthread_mutex_destroy(&q->mu);
		return KG_EXIT_RUNTIME;
	}
	return KG_EXIT_PASS;
}

/* The last batch handed over (when the reading went well: rc), the
 * parsing thread ended; rc, or the parsing thread's failure. */
static int evq_finish(struct evq *q, int rc)
{
	if (rc == KG_EXIT_PASS && q->batch[q->fill].nev)
		rc = evq_hand(q);
	pthread_mutex_lock(&q->mu);
	q->done = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->tid, NULL);
	if (rc == KG_EXIT_PASS)
		rc = q->rc;
	for (size_t i = 0; i < EVQ_BATCHES; i++) {
		free(q->batch[i].b);
		free(q->batch[i].ev);
	}
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	return rc;
}

/* An element of traceEvents, on the reading thread: handed over when the
 * probe of "cat" says it is wanted or cannot say. */
static int ingest_event(struct jstream *r, const unsigned char *s, size_t n, void *arg)
{
	struct ingest_ctx *c = arg;
	int w = probe_wanted(r, s, want_of(c));

	return w ? evq_put(c->q, jstream_offset(r, s), s, n, w > 0) : KG_EXIT_PASS;
}

static int ingest_key(struct jstream *r, const char *key, void *arg)
{
	struct ingest_ctx *c = arg;
	struct evq q;

	if (strcmp(key, "traceEvents") != 0)
		return jstream_skip(r);
	c->path = r->path;
	c->q = &q;
	int rc = evq_start(&q, c);
	if (rc != KG_EXIT_PASS)
		return rc;
	jstream_probe(r, "cat");
	rc = evq_finish(&q, jstream_array(r, ingest_event, c));
	jstream_probe(r, NULL);
	c->q = NULL;
	return rc;
}

int kineto_ingest(struct kg_import_sink *sink, const char *path)
{
	struct ingest_ctx c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.sink = sink;
	c.m[0] = import_sink_metric(sink, KG_M_DURATION, NULL);
	c.m[1] = import_sink_metric(sink, KG_M_GRID, NULL);
	c.m[2] = import_sink_metric(sink, KG_M_BLOCK, NULL);
	c.m[3] = import_sink_metric(sink, KG_M_REGS, NULL);
	c.m[4] = import_sink_metric(sink, "launch__shared_mem_per_block", NULL);
	for (c.pass = 1; c.pass <= 2; c.pass++) {
		if ((rc = jstream_walk(path, "Kineto", ingest_key, &c)) != KG_EXIT_PASS)
			break;
		if (c.pass == 1 && c.na) {
			qsort(c.a, c.na, sizeof(*c.a), annot_cmp);
			annot_nest(&c);
		}
		if (c.pass == 1) {
			for (size_t i = 0; i < c.nheld && rc == KG_EXIT_PASS; i++)
				rc = kernel_store(&c, &c.held[i]);
			if (rc != KG_EXIT_PASS || !c.again)
				break;
			c.ordinal = 0;
		}
	}
	free(c.held);
	free(c.a);
	return rc;
}
