/*
 * runcopy.c: runs rewritten from one store into another, their identity
 * and content digest (runcopy.h).  Only the store API: any backend to any
 * other.
 */
#include "kgate/runcopy.h"
#include "kgate/kgate.h"
#include "kgate/util.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a over a field, then a separator so that ("ab","c") != ("a","bc"). */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ULL;
	return (h ^ 0xff) * 0x100000001b3ULL;
}

static uint64_t fnv_s(uint64_t h, const char *s)
{
	return s ? fnv(h, s, strlen(s)) : fnv(h, "\x01", 1);
}

/* splitmix64's finaliser: the sum of hashes mixes every bit of each. */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t sample_hash(const struct kg_sample_rec *r)
{
	uint64_t h = 0xcbf29ce484222325ULL, bits;
	int64_t rep = r->repeat;
	double v = r->value;

	memcpy(&bits, &v, sizeof bits);
	h = fnv_s(h, r->benchmark);
	h = fnv_s(h, r->nvtx ? r->nvtx : "");
	h = fnv_s(h, r->kernel.mangled);
	h = fnv_s(h, r->metric);
	h = fnv(h, &rep, sizeof rep);
	h = fnv(h, &r->ordinal, sizeof r->ordinal);
	h = fnv(h, &bits, sizeof bits);
	return mix(h);
}

static uint64_t state_hash(const char *bench, const char *state)
{
	return mix(fnv_s(fnv_s(0xcbf29ce484222325ULL, bench), state));
}

struct copy_ctx {
	struct kg_store *dst;   /* NULL: digest only */
	struct kg_run_digest *d;
	size_t samples;
	int rc;
};

static int copy_row(void *arg, const struct kg_sample_rec *r)
{
	struct copy_ctx *c = arg;
	c->d->samples_hash += sample_hash(r);
	c->d->samples++;
	c->samples++;
	if (c->dst) {
		c->rc = store_sample_add(c->dst, r->benchmark, r->nvtx, &r->kernel, r->metric,
					 r->unit, r->deterministic, r->repeat, r->ordinal, r->value);
		return c->rc != KG_EXIT_PASS;
	}
	return 0;
}

/* Samples (into dst when not NULL), then the benchmarks and their states. */
static int walk(struct kg_store *src, int64_t id, struct kg_store *dst, size_t *samples,
		struct kg_run_digest *d)
{
	struct copy_ctx c = { dst, d, 0, KG_EXIT_PASS };
	char **names = NULL, **states = NULL, **bench = NULL;
	size_t n = 0, nb = 0;
	int rc;

	memset(d, 0, sizeof *d);
	rc = store_run_samples_each(src, id, copy_row, &c);
	if (rc == KG_EXIT_PASS)
		rc = c.rc;
	if (samples)
		*samples = c.samples;
	if (rc == KG_EXIT_PASS)
		rc = store_run_gpu_states(src, id, &names, &states, &n);
	for (size_t i = 0; i < n && rc == KG_EXIT_PASS; i++) {
		d->states_hash += state_hash(names[i], states[i]);
		if (dst)
			rc = store_run_benchmark_state(dst, names[i], states[i]);
	}
	/* the benchmarks that ran without a state (or without a sample) */
	if (rc == KG_EXIT_PASS && dst)
		rc = store_run_benchmarks(src, id, &bench, &nb);
	for (size_t i = 0; i < nb && rc == KG_EXIT_PASS; i++)
		rc = store_run_benchmark_add(dst, bench[i]);
	store_names_free(names, n);
	store_names_free(states, n);
	store_names_free(bench, nb);
	return rc;
}

int runcopy_digest(struct kg_store *st, int64_t id, struct kg_run_digest *d)
{
	return walk(st, id, NULL, NULL, d);
}

int runcopy_contents(struct kg_store *src, int64_t id, struct kg_store *dst, size_t *samples,
		     struct kg_run_digest *d)
{
	struct kg_run_digest mine;
	return walk(src, id, dst, samples, d ? d : &mine);
}

int runcopy_digest_equal(const struct kg_run_digest *a, const struct kg_run_digest *b)
{
	return a->samples_hash == b->samples_hash && a->states_hash == b->states_hash &&
	       a->samples == b->samples;
}

void runcopy_digest_add(struct kg_run_digest *sum, const struct kg_run_digest *d)
{
	sum->samples_hash += d->samples_hash;
	sum->states_hash += d->states_hash;
	sum->samples += d->samples;
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

int runcopy_same_fields(const struct kg_run_info *a, const struct kg_run_info *b)
{
	return same(a->commit, b->commit) && a->time == b->time && same(a->host, b->host) &&
	       same(a->gpu_name, b->gpu_name) && same(a->gpu_uuid, b->gpu_uuid) &&
	       same(a->gpu_chip, b->gpu_chip) && same(a->driver, b->driver) &&
	       same(a->cuda, b->cuda) && same(a->collector, b->collector) &&
	       same(a->config_hash, b->config_hash) && same(a->source, b->source) &&
	       same(a->label, b->label) &&
	       same(a->status ? a->status : "ok", b->status ? b->status : "ok");
}

int runcopy_find(struct kg_store *dst, const struct kg_run_info *run, char *const *bench,
		 size_t nb, const struct kg_run_digest *d, int64_t *dup, int64_t *conflict)
{
	struct kg_run_filter f = { .commit = run->commit ? run->commit : "unknown" };
	struct kg_run_info *runs = NULL;
	size_t n = 0;
	int rc;

	*dup = *conflict = 0;
	if ((rc = store_find_runs(dst, &f, &runs, &n)) != KG_EXIT_PASS)
		return rc;
	for (size_t i = 0; i < n && !*dup && rc == KG_EXIT_PASS; i++) {
		char **b = NULL;
		size_t k = 0;
		struct kg_run_digest e;
		if (!runcopy_same_fields(run, &runs[i]))
			continue;
		if ((rc = store_run_benchmarks(dst, runs[i].id, &b, &k)) != KG_EXIT_PASS)
			break;
		int sameb = k == nb;
		for (size_t j = 0; j < k && sameb; j++)
			sameb = !strcmp(b[j], bench[j]);
		store_names_free(b, k);
		if (!sameb)
			continue;
		if ((rc = runcopy_digest(dst, runs[i].id, &e)) != KG_EXIT_PASS)
			break;
		if (runcopy_digest_equal(&e, d))
			*dup = runs[i].id;
		else if (!*conflict)
			*conflict = runs[i].id;
	}
	store_runs_free(runs, n);
	return rc;
}
