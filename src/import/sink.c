/*
 * sink.c: where importers put samples (import.h).  Owns what every format
 * shares: kernel names interned once per ingest with their demangled and
 * base forms (demangle.c), metric names classified once (metric.c), NVTX
 * paths interned, and the two threads of an ingest: the importer parses on
 * a reader thread into batches of pending samples (which hold only pointers
 * to interned names), while the caller's thread stores them through the
 * store's public API.  The queue between them is bounded, so memory is too.
 */
#include "kgate/import.h"
#include "kgate/demangle.h"
#include "kgate/kname.h"
#include "kgate/metric.h"
#include "kgate/records_format.h"
#include "kgate/unit.h"
#include "kgate/util.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Interning: key -> an entry allocated once (its address is stable).  */

struct ent {
	char *key;              /* every entry type begins with its key */
};
struct kernel_ent {
	struct ent e;           /* the name as given */
	char *dem, *base;
};
struct metric_ent {
	struct ent e;           /* the name */
	struct kg_import_metric m;
	int unit_checked;       /* storing side: its unit held against the store's */
	int timed;              /* it is the duration (stats->timed) */
};
struct unit_ent {
	struct ent e;           /* a metric's name in the store */
	char *unit;             /* its stored unit */
};
struct intern {
	struct ent **e;
	size_t cap, n;
};

static size_t name_hash(const char *s)
{
	size_t h = 5381;
	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

static void intern_grow(struct intern *t)
{
	struct ent **old = t->e;
	size_t oldcap = t->cap;

	t->cap = oldcap ? oldcap * 2 : 64;
	t->e = xcalloc(t->cap, sizeof(*t->e));
	for (size_t i = 0; i < oldcap; i++)
		if (old[i]) {
			size_t j = name_hash(old[i]->key) & (t->cap - 1);
			while (t->e[j])
				j = (j + 1) & (t->cap - 1);
			t->e[j] = old[i];
		}
	free(old);
}

/* The slot of key: its entry, or the empty slot where it goes. */
static struct ent **intern_slot(struct intern *t, const char *key)
{
	if ((t->n + 1) * 2 > t->cap)
		intern_grow(t);
	size_t i = name_hash(key) & (t->cap - 1);
	while (t->e[i] && strcmp(t->e[i]->key, key) != 0)
		i = (i + 1) & (t->cap - 1);
	return &t->e[i];
}

static void intern_free(struct intern *t, void (*free_ent)(struct ent *))
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->e[i])
			free_ent(t->e[i]);
	free(t->e);
	memset(t, 0, sizeof(*t));
}

static void string_free(struct ent *e)
{
	free(e->key);
	free(e);
}

static void kernel_free(struct ent *e)
{
	struct kernel_ent *k = (struct kernel_ent *)e;
	free(k->e.key);
	free(k->dem);
	free(k->base);
	free(k);
}

static void unit_free(struct ent *e)
{
	struct unit_ent *u = (struct unit_ent *)e;
	free(u->e.key);
	free(u->unit);
	free(u);
}

static void metric_free(struct ent *e)
{
	struct metric_ent *m = (struct metric_ent *)e;
	free(m->e.key);
	free((char *)m->m.unit);
	free(m);
}

/* ------------------------------------------------------------------ */
/* The sink                                                            */

/* A benchmark named by the file; added: stored into the run (written and
 * read by the storing thread only). */
struct bench_ent {
	struct ent e;
	int added;
};

struct pending {
	struct bench_ent *bench;        /* NULL: the ingest's benchmark */
	const char *kernel, *dem, *base, *nvtx;
	const struct kg_import_metric *metric;
	size_t line;
	int64_t ordinal;
	double value;
	int rank;               /* -1: none */
};
#define BATCH 4096
#define QUEUE 8
struct batch {
	size_t n;
	struct pending p[BATCH];
};

struct kg_import_sink {
	struct kg_store *st;
	const struct kg_importer *im;
	const char *path, *benchmark;
	int repeat;
	struct intern kernels, strings, metrics, benches;
	struct bench_ent *cur_bench;    /* import_sink_benchmark's, else NULL */
	struct intern units;    /* the store's metrics with a unit, before this file */
	struct intern timed;    /* demangled names of the kernels given a duration */
	const char *last_timed; /* the last one added there */
	struct kg_import_stats *stats;
	/* the queue between the two threads */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch *q[QUEUE];
	size_t qhead, qcount;
	struct batch *cur;      /* the batch the reader is filling */
	int done;               /* the reader has finished */
	int reader_rc;
	int store_failed;       /* the storing side stopped: the reader stops too */
	int rank;               /* the rank of the samples added next (reader's side) */
	int stored_rank;        /* the rank the store was last told (storing side) */
	char **dev_name, **dev_uuid; /* the devices the samples ran on (reader's side,
	                           read once the reader has finished) */
	size_t n_dev;
};

void import_sink_rank(struct kg_import_sink *s, int rank)
{
	s->rank = rank >= 0 ? rank : -1;
}

void import_sink_device(struct kg_import_sink *s, const char *name, const char *uuid)
{
	for (size_t i = 0; i < s->n_dev; i++)
		if (!strcmp(s->dev_name[i] ? s->dev_name[i] : "", name ? name : "") &&
		    !strcmp(s->dev_uuid[i] ? s->dev_uuid[i] : "", uuid ? uuid : ""))
			return;
	s->dev_name = xrealloc(s->dev_name, (s->n_dev + 1) * sizeof(*s->dev_name));
	s->dev_uuid = xrealloc(s->dev_uuid, (s->n_dev + 1) * sizeof(*s->dev_uuid));
	s->dev_name[s->n_dev] = name ? xstrdup(name) : NULL;
	s->dev_uuid[s->n_dev] = uuid ? xstrdup(uuid) : NULL;
	s->n_dev++;
}

void import_sink_kernel(struct kg_import_sink *s, const char *name, enum kg_kernel_key key,
			struct kg_kernel_name *out)
{
	struct ent **slot = intern_slot(&s->kernels, name);
	struct kernel_ent *k = (struct kernel_ent *)*slot;

	if (!k) {
		k = xcalloc(1, sizeof(*k));
		k->e.key = xstrdup(name);
		k->dem = demangle_name(name);
		k->base = demangle_base(k->dem);
		*slot = &k->e;
		s->kernels.n++;
	}
	out->mangled = kname_key(k->e.key, k->dem,
				 key == KG_KEY_CANONICAL ? KNAME_DEMANGLED : KNAME_AS_GIVEN);
	out->demangled = k->dem;
	out->base = k->base;
}

void import_sink_benchmark(struct kg_import_sink *s, const char *name)
{
	char *full = *s->benchmark ? xasprintf("%s/%s", s->benchmark, name) : xstrdup(name);
	struct ent **slot = intern_slot(&s->benches, full);

	if (!*slot) {
		struct bench_ent *b = xcalloc(1, sizeof(*b));
		b->e.key = full;
		*slot = &b->e;
		s->benches.n++;
		s->stats->benchmarks++;
	} else {
		free(full);
	}
	s->cur_bench = (struct bench_ent *)*slot;
}

static const char *import_sink_string_in(struct intern *t, const char *str)
{
	struct ent **slot = intern_slot(t, str);

	if (!*slot) {
		*slot = xcalloc(1, sizeof(**slot));
		(*slot)->key = xstrdup(str);
		t->n++;
	}
	return (*slot)->key;
}

const char *import_sink_string(struct kg_import_sink *s, const char *str)
{
	return import_sink_string_in(&s->strings, str);
}

void import_stats_free(struct kg_import_stats *stats)
{
	for (size_t i = 0; i < stats->n_timed; i++)
		free(stats->timed[i]);
	free(stats->timed);
	stats->timed = NULL;
	stats->n_timed = 0;
}

const struct kg_import_metric *import_sink_metric(struct kg_import_sink *s, const char *name,
						  const char *unit)
{
	struct ent **slot = intern_slot(&s->metrics, name);
	struct metric_ent *m = (struct metric_ent *)*slot;

	if (!m) {
		m = xcalloc(1, sizeof(*m));
		m->e.key = xstrdup(name);
		m->m.name = m->e.key;
		m->m.unit = unit ? xstrdup(unit) : NULL;
		m->m.deterministic = metric_deterministic(name);
		m->timed = !strcmp(name, KG_M_DURATION);
		*slot = &m->e;
		s->metrics.n++;
	}
	return &m->m;
}

struct kg_import_stats *import_sink_stats(struct kg_import_sink *s)
{
	return s->stats;
}

/* Reader side: hand the current batch over; waits while the queue is full. */
static int flush_batch(struct kg_import_sink *s)
{
	int failed;

	pthread_mutex_lock(&s->mu);
	while (s->qcount == QUEUE && !s->store_failed)
		pthread_cond_wait(&s->cv, &s->mu);
	failed = s->store_failed;
	if (!failed && s->cur) {
		s->q[(s->qhead + s->qcount) % QUEUE] = s->cur;
		s->qcount++;
		s->cur = NULL;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return failed ? KG_EXIT_RUNTIME : KG_EXIT_PASS;
}

int import_sink_add(struct kg_import_sink *s, const char *nvtx, const struct kg_kernel_name *k,
		    const struct kg_import_metric *m, int64_t ordinal, double value, size_t line)
{
	if (!s->cur) {
		s->cur = xmalloc(sizeof(*s->cur));
		s->cur->n = 0;
	}
	if (k->demangled && k->demangled != s->last_timed &&
	    ((const struct metric_ent *)((const char *)m - offsetof(struct metric_ent, m)))->timed) {
		s->last_timed = k->demangled;
		import_sink_string_in(&s->timed, k->demangled);
	}
	struct pending *p = &s->cur->p[s->cur->n++];
	p->bench = s->cur_bench;
	p->kernel = k->mangled;
	p->dem = k->demangled;
	p->base = k->base;
	p->nvtx = nvtx ? nvtx : "";
	p->metric = m;
	p->line = line;
	p->ordinal = ordinal;
	p->value = value;
	p->rank = s->rank;
	if (s->cur->n == BATCH)
		return flush_batch(s);
	return KG_EXIT_PASS;
}

/* The reader thread: the importer's whole parse, then the last batch. */
static void *reader(void *arg)
{
	struct kg_import_sink *s = arg;
	int rc = s->im->ingest(s, s->path);

	if (rc == KG_EXIT_PASS && s->cur && s->cur->n)
		rc = flush_batch(s);
	pthread_mutex_lock(&s->mu);
	s->done = 1;
	s->reader_rc = rc;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* The store's metrics and their units, for the check below. */
static int unit_row(void *arg, const struct kg_name_row *r)
{
	struct intern *t = arg;

	if (!r->name || !r->unit || !*r->unit)
		return 0;
	struct ent **slot = intern_slot(t, r->name);
	if (!*slot) {
		struct unit_ent *u = xcalloc(1, sizeof(*u));
		u->e.key = xstrdup(r->name);
		u->unit = xstrdup(r->unit);
		*slot = &u->e;
		t->n++;
	}
	return 0;
}

/*
 * A metric's unit as the file gives it (already in kgate's canonical unit)
 * against the unit the store holds it in: values of another unit, or of the
 * same unit at another scale (a store that kept ncu's "Gbyte/s" as given),
 * would compare wrongly by a factor, so they are refused.  Storing side,
 * once per metric and file.
 */
static int unit_check(struct kg_import_sink *s, const struct pending *p)
{
	struct metric_ent *m = (struct metric_ent *)((char *)p->metric -
						     offsetof(struct metric_ent, m));

	m->unit_checked = 1;
	if (!m->m.unit || !*m->m.unit || !s->units.cap)
		return KG_EXIT_PASS;
	struct ent **slot = intern_slot(&s->units, m->m.name);
	const struct unit_ent *u = (const struct unit_ent *)*slot;
	if (!u || unit_agrees(u->unit, m->m.unit))
		return KG_EXIT_PASS;
	kg_error("%s:%zu: %s is in '%s' here, but the database holds it in '%s'; values of the "
		 "two would compare wrongly, so nothing is stored (a database whose values of it "
		 "were stored in '%s' needs them converted, or a new database)", s->path,
		 p->line, m->m.name, m->m.unit, u->unit, u->unit);
	return KG_EXIT_USAGE;
}

/* The storing side: the caller's thread. */
static int store_batches(struct kg_import_sink *s)
{
	int rc = KG_EXIT_PASS;

	for (;;) {
		struct batch *b = NULL;
		pthread_mutex_lock(&s->mu);
		while (!s->qcount && !s->done)
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->qcount) {
			b = s->q[s->qhead];
			s->qhead = (s->qhead + 1) % QUEUE;
			s->qcount--;
			pthread_cond_broadcast(&s->cv);
		}
		pthread_mutex_unlock(&s->mu);
		if (!b)
			break;
		for (size_t i = 0; i < b->n && rc == KG_EXIT_PASS; i++) {
			const struct pending *p = &b->p[i];
			struct kg_kernel_name kn = { p->kernel, p->dem, p->base };
			/* a benchmark the file names: into the run before its first sample */
			struct bench_ent *be = p->bench;
			if (be && !be->added) {
				be->added = 1;
				rc = store_run_benchmark_add(s->st, be->e.key);
				if (rc != KG_EXIT_PASS) {
					kg_error("%s: benchmark '%s' not stored", s->path, be->e.key);
					pthread_mutex_lock(&s->mu);
					s->store_failed = 1;
					pthread_cond_broadcast(&s->cv);
					pthread_mutex_unlock(&s->mu);
					break;
				}
			}
			if (!((const struct metric_ent *)((const char *)p->metric -
							  offsetof(struct metric_ent, m)))->unit_checked &&
			    (rc = unit_check(s, p)) != KG_EXIT_PASS) {
				pthread_mutex_lock(&s->mu);
				s->store_failed = 1;
				pthread_cond_broadcast(&s->cv);
				pthread_mutex_unlock(&s->mu);
				break;
			}
			if (p->rank != s->stored_rank) {
				store_run_rank(s->st, p->rank);
				s->stored_rank = p->rank;
			}
			rc = store_sample_add(s->st, be ? be->e.key : s->benchmark, p->nvtx, &kn, p->metric->name,
					      p->metric->unit, p->metric->deterministic, s->repeat,
					      p->ordinal, p->value);
			if (rc == KG_EXIT_PASS) {
				s->stats->samples++;
			} else {
				kg_error("%s:%zu: kernel record not stored", s->path, p->line);
				pthread_mutex_lock(&s->mu);
				s->store_failed = 1;
				pthread_cond_broadcast(&s->cv);
				pthread_mutex_unlock(&s->mu);
			}
		}
		free(b);
	}
	return rc;
}

int import_ingest(const struct kg_importer *im, struct kg_store *st, const char *path,
		  const char *benchmark, int repeat, struct kg_import_stats *stats)
{
	struct kg_import_stats dummy = { 0 };
	struct kg_import_sink s;
	pthread_t tid;
	int rc;

	if (!stats)
		stats = &dummy;
	memset(stats, 0, sizeof(*stats));
	memset(&s, 0, sizeof(s));
	s.st = st;
	s.im = im;
	s.path = path;
	s.benchmark = benchmark;
	s.repeat = repeat;
	s.stats = stats;
	s.rank = s.stored_rank = -1;
	store_run_rank(st, -1);
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	if (store_names_each(st, KG_NAMES_METRIC, unit_row, &s.units) != KG_EXIT_PASS) {
		rc = KG_EXIT_RUNTIME;
	} else if (pthread_create(&tid, NULL, reader, &s) != 0) {
		kg_error("cannot read '%s': cannot start a thread", path);
		rc = KG_EXIT_RUNTIME;
	} else {
		rc = store_batches(&s);
		pthread_join(tid, NULL);
		if (rc == KG_EXIT_PASS)
			rc = s.reader_rc;
		for (size_t i = 0; i < s.n_dev && rc == KG_EXIT_PASS; i++)
			store_run_device(st, s.dev_name[i], s.dev_uuid[i]);
	}
	store_run_rank(st, -1);
	for (size_t i = 0; i < s.n_dev; i++) {
		free(s.dev_name[i]);
		free(s.dev_uuid[i]);
	}
	free(s.dev_name);
	free(s.dev_uuid);
	while (s.qcount) {
		free(s.q[s.qhead]);
		s.qhead = (s.qhead + 1) % QUEUE;
		s.qcount--;
	}
	free(s.cur);
	pthread_mutex_destroy(&s.mu);
	pthread_cond_destroy(&s.cv);
	stats->timed = xmalloc((s.timed.n ? s.timed.n : 1) * sizeof(*stats->timed));
	for (size_t i = 0; i < s.timed.cap; i++)
		if (s.timed.e[i])
			stats->timed[stats->n_timed++] = xstrdup(s.timed.e[i]->key);
	intern_free(&s.timed, string_free);
	intern_free(&s.kernels, kernel_free);
	intern_free(&s.strings, string_free);
	intern_free(&s.metrics, metric_free);
	intern_free(&s.benches, string_free);
	intern_free(&s.units, unit_free);
	if (stats == &dummy)
		import_stats_free(&dummy);
	return rc;
}
