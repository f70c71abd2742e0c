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

void ranks_slowest(const struct kg_gate *g, int all, struct kg_slowest **out, size_t *n)
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
		if (s.n_ranks < 2 || (!all && !s.any_not_pass))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[(*n)++] = s;
	}
	free(done);
}

size_t ranks_group(const char *name, const char *at, const int *rank, const int *world, size_t n)
{
	int top = -1, size = -1;
	size_t unranked = 0, missing = 0;

	for (size_t i = 0; i < n; i++) {
		if (rank[i] > top)
			top = rank[i];
		if (world[i] > size)
			size = world[i];
		unranked += rank[i] < 0;
	}
	if (top < 0)
		return 0;       /* a single process: as before */
	if (size < top + 1)
		size = top + 1;
	size_t *count = xcalloc((size_t)size, sizeof(*count));
	for (size_t i = 0; i < n; i++)
		if (rank[i] >= 0)
			count[rank[i]]++;
	struct kg_buf b = KG_BUF_INIT, m = KG_BUF_INIT;
	for (int r = 0; r < size; r++) {
		if (count[r]) {
			buf_printf(&b, "%srank %d: %zu", b.len ? ", " : "", r, count[r]);
		} else {
			buf_printf(&m, "%s%d", m.len ? ", " : "", r);
			missing++;
		}
	}
	kg_note("benchmark '%s' (%s): records of %d rank%s (%s)%s", name, at, size,
		size == 1 ? "" : "s", b.s, unranked ? "; and files without a rank (the launcher's)" : "");
	if (missing)
		kg_warn("benchmark '%s' (%s): rank%s %s of %d wrote no records file (the process "
			"launched no CUDA work, or the collector did not reach it)", name, at,
			missing == 1 ? "" : "s", m.s, size);
	buf_free(&b);
	buf_free(&m);
	free(count);
	return missing;
}
