/*
 * confirm.c: the sequential confirmation of "kgate compare --confirm"
 * (confirm.h says the procedure and why its false-alarm rate stays at
 * alpha).  This file matches the flagged comparisons across looks, spends
 * alpha over them, and writes the outcome into the screening gate.
 */
#include "kgate/confirm.h"
#include "kgate/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double confirm_alpha(double alpha, int k, int K)
{
	if (K < 1 || k < 1 || k > K)
		return 0;
	double a = (double)k / K, b = (double)(k - 1) / K;
	return alpha * (a * a - b * b);
}

static int same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

static int item_is(const struct kg_confirm_item *it, const struct kg_result *r)
{
	return same(it->benchmark, r->benchmark) && same(it->nvtx, r->nvtx) &&
	       same(it->kernel, r->kernel) && same(it->metric, r->metric) &&
	       same(it->group, r->group);
}

size_t confirm_flag(struct kg_confirm *c, const struct kg_gate *g, int rounds)
{
	memset(c, 0, sizeof(*c));
	c->planned = rounds > 0 ? rounds : KG_CONFIRM_ROUNDS;
	for (size_t i = 0; i < g->n; i++) {
		const struct kg_result *r = &g->r[i];

		if (r->deterministic || (r->verdict != KG_VERDICT_FAIL &&
					 r->verdict != KG_VERDICT_INCONCLUSIVE))
			continue;
		c->it = xrealloc(c->it, (c->n + 1) * sizeof(*c->it));
		struct kg_confirm_item *it = &c->it[c->n++];
		memset(it, 0, sizeof(*it));
		it->benchmark = xstrdup(r->benchmark ? r->benchmark : "");
		it->nvtx = xstrdup(r->nvtx ? r->nvtx : "");
		it->kernel = xstrdup(r->kernel ? r->kernel : "");
		it->metric = xstrdup(r->metric ? r->metric : "");
		snprintf(it->group, sizeof(it->group), "%s", r->group);
		it->first = it->verdict = r->verdict;
		it->shift = it->lo = it->hi = it->p = NAN;
	}
	return c->n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **confirm_open_benchmarks(const struct kg_confirm *c, size_t *n)
{
	char **names = xcalloc(c->n + 1, sizeof(*names));

	*n = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (c->it[i].rounds)
			continue;
		int dup = 0;
		for (size_t k = 0; k < *n && !dup; k++)
			dup = !strcmp(names[k], c->it[i].benchmark);
		if (!dup)
			names[(*n)++] = xstrdup(c->it[i].benchmark);
	}
	qsort(names, *n, sizeof(*names), cmp_str);
	return names;
}

size_t confirm_look(struct kg_confirm *c, const struct kg_gate *g, int k)
{
	size_t open = 0;

	c->looks = k;
	for (size_t i = 0; i < c->n; i++) {
		struct kg_confirm_item *it = &c->it[i];
		const struct kg_result *r = NULL;

		if (it->rounds)
			continue;
		for (size_t j = 0; j < g->n && !r; j++)
			if (item_is(it, &g->r[j]))
				r = &g->r[j];
		/* Not seen in the rounds (the kernel was not launched again):
		 * nothing to decide on; it stays open. */
		if (r && (r->verdict == KG_VERDICT_FAIL || r->verdict == KG_VERDICT_PASS)) {
			it->verdict = r->verdict;
			it->rounds = k;
			it->shift = r->shift;
			it->lo = r->lo;
			it->hi = r->hi;
			it->p = r->p_adj;
			it->base = r->base;
			it->head = r->head;
			it->n_base = r->n_base;
			it->n_head = r->n_head;
		} else {
			it->verdict = KG_VERDICT_INCONCLUSIVE;
			open++;
		}
	}
	return open;
}

void confirm_apply(const struct kg_confirm *c, const struct kg_thresholds *t, struct kg_gate *g)
{
	for (size_t i = 0; i < g->n; i++) {
		struct kg_result *r = &g->r[i];
		const struct kg_confirm_item *it = NULL;

		for (size_t k = 0; k < c->n && !it; k++)
			if (item_is(&c->it[k], r))
				it = &c->it[k];
		if (!it)
			continue;
		r->verdict = it->verdict;
		if (it->rounds) {
			r->shift = it->shift;
			r->lo = it->lo;
			r->hi = it->hi;
			r->p = r->p_adj = it->p;
			r->base = it->base;
			r->head = it->head;
			r->n_base = it->n_base;
			r->n_head = it->n_head;
			if (it->verdict == KG_VERDICT_FAIL)
				snprintf(r->message, sizeof(r->message),
					 "%s by %.2f%% (limit %.3g%%), confirmed in %d round%s",
					 r->higher_is_better ? "lower" : "slower", 100 * fabs(r->shift),
					 100 * r->threshold, it->rounds, it->rounds == 1 ? "" : "s");
			else
				snprintf(r->message, sizeof(r->message),
					 "within limit in %d confirmation round%s (was %s)", it->rounds,
					 it->rounds == 1 ? "" : "s", gate_verdict_name(it->first));
		} else {
			snprintf(r->message, sizeof(r->message),
				 "neither confirmed nor cleared in %d confirmation round%s (was %s)",
				 c->looks, c->looks == 1 ? "" : "s", gate_verdict_name(it->first));
		}
	}
	gate_count(t, g);
}

void confirm_free(struct kg_confirm *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->it[i].benchmark);
		free(c->it[i].nvtx);
		free(c->it[i].kernel);
		free(c->it[i].metric);
	}
	free(c->it);
	memset(c, 0, sizeof(*c));
}
