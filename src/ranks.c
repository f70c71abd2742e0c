/*
 * ranks.c: a distributed job's ranks in a check (ranks.h): the slowest
 * rank of each kernel and metric compared on several ranks.
 */
#include "kgate/ranks.h"
#include "kgate/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ranks_any(const struct kg_gate *g)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->r[i].ranked)
			return 1;
	return 0;
}

static int same_series(const struct kg_result *a, const struct kg_result *b)
{
	return !strcmp(a->benchmark, b->benchmark) && !strcmp(a->nvtx, b->nvtx) &&
	       !strcmp(a->kernel, b->kernel) && !strcmp(a->metric, b->metric);
}

/* How far a result's median moved in the worse direction (a gain is
 * negative); NAN when it has no shift. */
static double worsening(const struct kg_result *r)
{
	if (isnan(r->shift))
		return NAN;
	return r->higher_is_better ? -r->shift : r->shift;
}

void ranks_slowest(const struct kg_gate *g, struct kg_slowest **out, size_t *n)
{
	size_t cap = 0;
	unsigned char *done = xcalloc(g->n ? g->n : 1, 1);

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < g->n; i++) {
		const struct kg_result *a = &g->r[i];
		if (done[i] || !a->ranked || a->deterministic || isnan(worsening(a)))
			continue;
		struct kg_slowest s = { a, a, 1, a->verdict != KG_VERDICT_PASS };
		for (size_t j = i + 1; j < g->n; j++) {
			const struct kg_result *b = &g->r[j];
			if (done[j] || !b->ranked || b->deterministic || isnan(worsening(b)) ||
			    !same_series(a, b))
				continue;
			done[j] = 1;
			s.n_ranks++;
			s.any_not_pass |= b->verdict != KG_VERDICT_PASS;
			if (worsening(b) > worsening(s.slow))
				s.slow = b;
			if (worsening(b) < worsening(s.fast))
				s.fast = b;
		}
		if (s.n_ranks < 2)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[(*n)++] = s;
	}
	free(done);
}
