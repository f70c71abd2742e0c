/*
 * gate.c: decides PASS, FAIL or INCONCLUSIVE for each kernel and metric.
 *
 * Inputs are two sample sets as store_load_samples() returns them (sorted
 * by identity and metric), so the walk below is a merge of two sorted
 * lists.  The statistics are in stats.c; this file owns the rules:
 *
 *   noisy metric:  shift = exp(HL(log head - log base)) - 1, interval at
 *                  level 1 - 2*alpha, p = one-sided MWU; after Holm over all
 *                  noisy comparisons, FAIL when p_adj < alpha and shift >=
 *                  threshold, or when the whole interval lies at or beyond
 *                  the threshold in the worse direction (whatever Holm did
 *                  to p); PASS when the interval's bad end is under the
 *                  threshold (or rules out any worsening); else
 *                  INCONCLUSIVE.  A zero baseline makes any significant
 *                  growth an infinite relative change ("0 -> 1000").  Fewer
 *                  than min_samples on either side is INCONCLUSIVE, never
 *                  PASS.  A FAIL needs a change in the worse direction: two
 *                  identical sides never FAIL, even under regression: 0%.
 *                  A kernel launched in several configurations (the grid
 *                  and block size of each launch known on both sides) is
 *                  judged per configuration (compare_by_config).
 *   deterministic: compared launch by launch, as multisets: equal values
 *                  pair off, the rest pair by rank (the baseline scaled to
 *                  the head's number of launches), so a kernel launched at
 *                  several sizes is judged per size; a launch that changed beyond the
 *                  tolerance in the bad direction is a FAIL, and the
 *                  message says how many launches changed and from what
 *                  to what.
 *   min / max:     on the head median.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/gate.h"
#include "kgate/metric.h"
#include "kgate/stats.h"
#include "kgate/util.h"
#include "kgate/verdict.h"

/* Above this many pairwise differences each side is thinned to evenly
 * spaced order statistics, which keeps HL and MWU cheap on long histories. */
#define MAX_SIDE 2000

const char *gate_verdict_name(enum kg_verdict v)
{
	return verdict_name(v);
}

/* Copy of sorted v, thinned to at most MAX_SIDE order statistics. */
static double *side_prepare(const double *v, size_t n, size_t *out_n)
{
	double *s = xmalloc((n ? n : 1) * sizeof *s);
	if (n > MAX_SIDE) {
		for (size_t i = 0; i < MAX_SIDE; i++)
			s[i] = v[(size_t)((double)i * (double)(n - 1) / (MAX_SIDE - 1))];
		n = MAX_SIDE;
	} else {
		memcpy(s, v, n * sizeof *s);
	}
	*out_n = n;
	return s;
}

/* Sorted copy of a series' values (the caller frees). */
static double *sorted_values(const struct kg_series *s)
{
	double *v = xmalloc((s->n ? s->n : 1) * sizeof *v);
	memcpy(v, s->v, s->n * sizeof *v);
	stats_sort(v, s->n);
	return v;
}

static struct kg_result *result_add(struct kg_gate *g, size_t *cap, const struct kg_series *s)
{
	if (g->n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		g->r = xrealloc(g->r, *cap * sizeof *g->r);
	}
	struct kg_result *r = &g->r[g->n++];
	memset(r, 0, sizeof *r);
	r->benchmark = s->benchmark;
	r->nvtx = s->nvtx ? s->nvtx : "";
	r->kernel = s->kernel;
	r->demangled = s->demangled ? s->demangled : s->kernel;
	r->metric = s->metric;
	r->unit = s->unit ? s->unit : "";
	r->ranked = s->ranked;
	r->rank = s->rank;
	r->base = r->head = r->shift = r->lo = r->hi = r->p = r->p_adj = r->threshold = NAN;
	r->cycle_shift = NAN;
	return r;
}

/* The result's message; a long one is cut (it is a summary). */
static void say(struct kg_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct kg_result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(r->message, sizeof r->message, fmt, ap);
	va_end(ap);
	(void)n;
}

/* -v[n-1], ..., -v[0]: an ascending array stays ascending. */
static void negate_reversed(double *v, size_t n)
{
	for (size_t i = 0, j = n; i < j; i++) {
		j--;
		double t = v[i];
		v[i] = -v[j];
		v[j] = -t;     /* i == j: the middle, negated once */
	}
}

/* b and h hold their values sorted ascending. */
static void compare_noisy(double alpha, const struct kg_metric_rule *rule,
			  const struct kg_series *b, const struct kg_series *h, struct kg_result *r)
{
	size_t nb, nh;
	double *x = side_prepare(b->v, b->n, &nb);
	double *y = side_prepare(h->v, h->n, &nh);
	int logs = 1;
	for (size_t i = 0; i < nb && logs; i++)
		logs = x[i] > 0;
	for (size_t i = 0; i < nh && logs; i++)
		logs = y[i] > 0;
	double scale = r->base;
	/* A counter that is 0 whenever the code is right (bank conflicts,
	 * spills): its appearance is the regression, however few launches
	 * show it and whatever the median says. */
	size_t grew = 0;
	double top = 0;
	r->zero_base = !r->higher_is_better && b->n > 0;
	for (size_t i = 0; i < b->n && r->zero_base; i++)
		r->zero_base = b->v[i] == 0;
	for (size_t i = 0; i < h->n && r->zero_base; i++)
		if (h->v[i] > 0) {
			grew++;
			top = h->v[i] > top ? h->v[i] : top;
		}
	if (r->zero_base)
		say(r, "grew from a zero baseline: 0 -> %.6g (largest) in %zu of %zu launches", top,
		    grew, h->n);
	for (size_t i = 0; i < nb; i++)
		x[i] = logs ? log(x[i]) : x[i];
	for (size_t i = 0; i < nh; i++)
		y[i] = logs ? log(y[i]) : y[i];
	/* Orient so that "larger" always means "worse" (reversed, so that
	 * both stay sorted ascending). */
	int flip = r->higher_is_better;
	if (flip) {
		negate_reversed(x, nb);
		negate_reversed(y, nh);
	}
	struct stats_shift st;
	int ci = stats_shift_test(x, nb, y, nh, 1.0 - 2.0 * alpha, &st);
	double d = st.shift, lo = st.lo, hi = st.hi;
	r->p = st.p;
	/* Back to relative changes: "measured" keeps the metric's sign,
	 * "bad" is the size of the change in the worse direction.  Without
	 * logs the scale is the baseline median; a zero baseline makes any
	 * change an infinite one (0 -> 1000 is "+inf"). */
	double sgn = flip ? -1.0 : 1.0, as = fabs(scale);
#define REL(v) (as > 0 ? (v) / as : (v) > 0 ? INFINITY : (v) < 0 ? -INFINITY : 0.0)
#define MEAS(v) (logs ? exp(sgn * (v)) - 1.0 : REL(sgn * (v)))
#define BAD(v) (logs ? exp(v) - 1.0 : REL(v))
	r->shift = MEAS(d);
	r->bad_shift = BAD(d);
	if (ci == 0) {
		double a = MEAS(lo), c = MEAS(hi);
		r->lo = a < c ? a : c;
		r->hi = a < c ? c : a;
		r->bad_bound = BAD(hi);
		r->bad_low = BAD(lo);
	} else {
		r->bad_bound = r->bad_low = NAN;
	}
#undef REL
#undef MEAS
#undef BAD
	r->threshold = rule->regression;
	free(x);
	free(y);
}

/* Relative change from b to h; from a zero b, any change is infinite. */
static double rel_change(double b, double h)
{
	if (b != 0)
		return (h - b) / fabs(b);
	return h > 0 ? INFINITY : h < 0 ? -INFINITY : 0.0;
}

/* "by +50%", or "from 0" when the relative change is infinite. */
static void change_text(char *out, size_t size, double b, double h)
{
	double c = rel_change(b, h);
	int n = isinf(c) ? snprintf(out, size, "from %.12g", b)
		: snprintf(out, size, "by %+.3g%%", 100 * c);
	(void)n;
}

/*
 * A deterministic counter, launch by launch.  The baseline's sorted values
 * are brought to the head's number of launches by rank (the baseline may
 * hold several runs); launches whose value appears on both sides are
 * paired off as equal (a multiset), and what is left is paired by rank and
 * judged: a kernel launched at two sizes keeps its two values, and a
 * change in one launch of seven is one changed launch, not lost in a
 * median.  The worst pair decides; the message counts the head launches
 * that changed and shows the worst.  x and y: the two sides' values sorted
 * ascending, scratch (reordered here).
 */
static void compare_deterministic(const struct kg_metric_rule *rule, const struct kg_series *b,
				  const struct kg_series *h, double *x, double *y,
				  struct kg_result *r)
{
	double tol = rule->has_tolerance ? rule->tolerance
		     : rule->has_regression ? rule->regression : 0.0;
	r->threshold = tol;
	r->shift = 0;
	r->verdict = KG_VERDICT_PASS;
	if (!b->n || !h->n) {
		say(r, "no launches to compare");
		return;
	}
	size_t n = h->n;
	double *xs = xmalloc(n * sizeof *xs);
	for (size_t i = 0; i < n; i++) {
		size_t k = b->n == n ? i : (size_t)(((double)i + 0.5) * (double)b->n / (double)n);
		xs[i] = x[k < b->n ? k : b->n - 1];
	}
	/* Pair off equal values (both sorted: a merge), keep the rest in order. */
	size_t i = 0, j = 0, nx = 0, ny = 0;
	while (i < n || j < n) {
		if (i < n && j < n && xs[i] == y[j]) {
			i++, j++;
		} else if (j == n || (i < n && xs[i] < y[j])) {
			x[nx++] = xs[i++];
		} else {
			y[ny++] = y[j++];
		}
	}
	/* nx == ny: both sides had n values and lost the same number */
	size_t changed = 0, worse = 0;
	double worst_bad = -INFINITY, wb = 0, wh = 0, best_abs = -1, cb = 0, ch = 0;
	for (size_t k = 0; k < nx && k < ny; k++) {
		double vb = x[k], vh = y[k], c = rel_change(vb, vh);
		double bad = r->better == KG_BETTER_HIGHER ? -c
			     : r->better == KG_BETTER_UNCHANGED ? fabs(c) : c;
		changed += fabs(c) > tol;
		if (fabs(c) > best_abs) {
			best_abs = fabs(c);
			cb = vb, ch = vh;
		}
		if (bad > tol)
			worse++;
		if (bad > worst_bad) {
			worst_bad = bad;
			wb = vb, wh = vh;
		}
	}
	free(xs);
	char what[64];
	struct kg_buf fb = KG_BUF_INIT, fh = KG_BUF_INIT;
	int report = rule->on_change ? rule->on_change == KG_ON_CHANGE_REPORT
				     : metric_is_launch_config(r->metric);
	if ((worse || changed) && report) {
		/* The launch configuration: a change of its own, not a regression. */
		r->verdict = KG_VERDICT_CHANGED;
		r->shift = rel_change(cb, ch);
		change_text(what, sizeof what, cb, ch);
		metric_format_value(&fb, cb, r->unit);
		metric_format_value(&fh, ch, r->unit);
		say(r, "launch configuration changed %s in %zu of %zu launches (%s -> %s); reported,"
		    " not gated (on_change: fail gates it)", what, changed, n, fb.s, fh.s);
	} else if (worse) {
		r->verdict = KG_VERDICT_FAIL;
		r->shift = rel_change(wb, wh);
		change_text(what, sizeof what, wb, wh);
		metric_format_value(&fb, wb, r->unit);
		metric_format_value(&fh, wh, r->unit);
		say(r, "deterministic counter changed %s in %zu of %zu launches (%s -> %s; limit %.3g%%)",
		    what, worse, n, fb.s, fh.s, 100 * tol);
	} else if (changed) {
		r->shift = rel_change(cb, ch);
		change_text(what, sizeof what, cb, ch);
		metric_format_value(&fb, cb, r->unit);
		metric_format_value(&fh, ch, r->unit);
		say(r, "changed %s in %zu of %zu launches (%s -> %s)", what, changed, n, fb.s, fh.s);
	} else {
		r->shift = nx ? rel_change(cb, ch) : 0;
		say(r, nx ? "within tolerance" : "unchanged");
	}
	buf_free(&fb);
	buf_free(&fh);
}

static void check_bounds(const struct kg_metric_rule *rule, struct kg_result *r)
{
	if (rule->has_min && r->head < rule->min) {
		r->verdict = KG_VERDICT_FAIL;
		snprintf(r->message, sizeof r->message, "%.4g is under the minimum %.4g", r->head, rule->min);
	} else if (rule->has_max && r->head > rule->max) {
		r->verdict = KG_VERDICT_FAIL;
		snprintf(r->message, sizeof r->message, "%.4g is over the maximum %.4g", r->head, rule->max);
	}
}

static void presence(const struct kg_thresholds *t, struct kg_gate *g, size_t *cap,
		     const struct kg_series *s, enum kg_verdict v)
{
	if (config_ignored(t, s->benchmark, s->nvtx ? s->nvtx : "", s->kernel,
			   s->demangled ? s->demangled : s->kernel, s->ranked ? s->rank : -1))
		return;
	struct kg_result *r = result_add(g, cap, s);
	r->metric = "";
	r->unit = "";
	r->verdict = v;
	enum kg_policy pol = v == KG_VERDICT_NEW ? t->on_new_kernel : t->on_missing_kernel;
	r->fails = pol == KG_POLICY_FAIL;
	snprintf(r->message, sizeof r->message, v == KG_VERDICT_NEW ? "kernel not in the baseline"
		 : "kernel not in the head run");
	if (pol == KG_POLICY_IGNORE)
		g->n--;
}

/*
 * A noisy metric of a kernel launched in several configurations (GEMM
 * shapes, a remainder launch): one pooled sample dilutes a change confined
 * to one of them.  When the launch configuration of every launch is known
 * on both sides (the launch__grid_size and launch__block_size series of the
 * same kernel hold one value per launch, in the same order as the metric's
 * own), each configuration with min_samples launches on both sides is
 * compared on its own, at alpha / k for k such groups (Bonferroni within
 * the kernel; Holm across kernels follows), and the result is the group
 * with the strongest evidence of a worsening; a PASS needs every group's
 * interval under the limit, and no configuration launched on both sides
 * with fewer than min_samples launches on one (it cannot be judged).
 */
struct launch_cfg {
	const double *grid, *block;     /* per launch, or NULL */
};

static const struct kg_series *sibling(const struct kg_sampleset *set, const struct kg_series *s,
				       const char *metric)
{
	size_t at = (size_t)(s - set->s);
	size_t lo = at, hi = at;
	while (lo > 0 && store_series_identity_cmp(&set->s[lo - 1], s) == 0)
		lo--;
	while (hi + 1 < set->n && store_series_identity_cmp(&set->s[hi + 1], s) == 0)
		hi++;
	for (size_t i = lo; i <= hi; i++)
		if (!strcmp(set->s[i].metric, metric))
			return set->s[i].n == s->n ? &set->s[i] : NULL;
	return NULL;
}

static void launch_cfg_of(const struct kg_sampleset *set, const struct kg_series *s,
			  struct launch_cfg *c)
{
	const struct kg_series *g = set ? sibling(set, s, "launch__grid_size") : NULL;
	const struct kg_series *k = set ? sibling(set, s, "launch__block_size") : NULL;
	c->grid = g ? g->v : NULL;
	c->block = k ? k->v : NULL;
}

static int cfg_same(const struct launch_cfg *a, size_t i, const struct launch_cfg *b, size_t j)
{
	return (!a->grid || a->grid[i] == b->grid[j]) && (!a->block || a->block[i] == b->block[j]);
}

/* The values of side s whose launch has the configuration of (c0, i0). */
static size_t cfg_pick(const struct kg_series *s, const struct launch_cfg *c,
		       const struct launch_cfg *c0, size_t i0, double *out)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (cfg_same(c, i, c0, i0))
			out[n++] = s->v[i];
	return n;
}

/* 1 when the comparison was made by configuration (r filled), 0 when the
 * pooled comparison applies. */
static int compare_by_config(const struct kg_thresholds *t, const struct kg_metric_rule *rule,
			     const struct kg_series *b, const struct kg_series *h,
			     const struct launch_cfg *cb, const struct launch_cfg *ch,
			     struct kg_result *r)
{
	if ((!cb->grid && !cb->block) || !cb->grid != !ch->grid || !cb->block != !ch->block)
		return 0;
	int zero = !r->higher_is_better;
	for (size_t i = 0; i < b->n && zero; i++)
		zero = b->v[i] == 0;
	if (zero)
		return 0;       /* any growth from zero: the pooled rule */
	/* The distinct configurations of the head with enough launches on
	 * both sides, each by its first launch. */
	size_t *first = xmalloc(h->n * sizeof *first), k = 0, distinct = 0, few = 0;
	double *xb = xmalloc((b->n ? b->n : 1) * sizeof *xb), *xh = xmalloc(h->n * sizeof *xh);
	for (size_t i = 0; i < h->n; i++) {
		size_t j;
		for (j = 0; j < i && !cfg_same(ch, j, ch, i); j++)
			;
		if (j < i)
			continue;
		distinct++;
		size_t nb = cfg_pick(b, cb, ch, i, xb), nh = cfg_pick(h, ch, ch, i, xh);
		if (nb >= (size_t)t->min_samples && nh >= (size_t)t->min_samples)
			first[k++] = i;
		else if (nb)
			few = i + 1;    /* on both sides, too few to judge: no PASS */
	}
	int done = 0;
	for (size_t i = 0; i < b->n && distinct < 2; i++)
		distinct += !cfg_same(cb, i, ch, 0);     /* a configuration only the base has */
	if (distinct >= 2 && k >= 1) {
		struct kg_result best = *r;
		int have = 0;
		double alpha = t->alpha / (double)k, bound = -INFINITY;
		for (size_t g = 0; g < k; g++) {
			struct kg_series sb = *b, sh = *h;
			sb.n = cfg_pick(b, cb, ch, first[g], xb);
			sh.n = cfg_pick(h, ch, ch, first[g], xh);
			stats_sort(xb, sb.n);
			stats_sort(xh, sh.n);
			sb.v = xb;
			sh.v = xh;
			struct kg_result one = *r;
			one.base = stats_median_sorted(xb, sb.n);
			one.head = stats_median_sorted(xh, sh.n);
			one.n_base = sb.n;
			one.n_head = sh.n;
			compare_noisy(alpha, rule, &sb, &sh, &one);
			one.p = one.p * (double)k < 1 ? one.p * (double)k : 1;
			int n = ch->grid && ch->block
				? snprintf(one.group, sizeof one.group, "grid %.12g, block %.12g",
					   ch->grid[first[g]], ch->block[first[g]])
				: snprintf(one.group, sizeof one.group, "%s %.12g",
					   ch->grid ? "grid" : "block",
					   ch->grid ? ch->grid[first[g]] : ch->block[first[g]]);
			(void)n;
			/* strongest evidence of a worsening: the interval's
			 * better end, then p */
			double ev = isnan(one.bad_low) ? -INFINITY : one.bad_low;
			double best_ev = isnan(best.bad_low) ? -INFINITY : best.bad_low;
			if (!have || ev > best_ev || (ev == best_ev && one.p < best.p))
				best = one;
			double bb = isnan(one.bad_bound) ? INFINITY : one.bad_bound;
			if (bb > bound)
				bound = bb;
			have = 1;
		}
		*r = best;
		r->bad_bound = (isinf(bound) && bound > 0) || few ? NAN : bound;
		done = 1;
	}
	free(first);
	free(xb);
	free(xh);
	return done;
}

/* One comparison of a series present on both sides. */
static void compare_pair(const struct kg_thresholds *t, struct kg_gate *g, size_t *cap,
			 const struct kg_sampleset *bset, const struct kg_series *b,
			 const struct kg_sampleset *hset, const struct kg_series *h)
{
	struct kg_metric_rule rule;
	if (!config_rule_for_rank(t, h->benchmark, h->nvtx ? h->nvtx : "", h->kernel,
				  h->demangled ? h->demangled : h->kernel, h->ranked ? h->rank : -1,
				  h->metric, &rule))
		return;
	struct kg_result *r = result_add(g, cap, h);
	/* Each side sorted once: the medians, the deterministic comparison
	 * and the pooled statistics all read the sorted values. */
	double *xs = sorted_values(b), *ys = sorted_values(h);
	struct kg_series sb = *b, sh = *h;
	sb.v = xs;
	sh.v = ys;
	r->n_base = b->n;
	r->n_head = h->n;
	r->base = stats_median_sorted(xs, b->n);
	r->head = stats_median_sorted(ys, h->n);
	r->better = rule.better ? rule.better : (int)metric_better(h->metric);
	r->higher_is_better = r->better == KG_BETTER_HIGHER;
	/* The vocabulary, not the flag stored at ingest: a database written
	 * by an older kgate may call a rate deterministic. */
	r->deterministic = rule.deterministic >= 0 ? rule.deterministic
			   : metric_deterministic(h->metric);
	r->verdict = KG_VERDICT_PASS;
	if (r->deterministic) {
		compare_deterministic(&rule, b, h, xs, ys, r);
	} else if (rule.has_regression) {
		if (b->n < (size_t)t->min_samples || h->n < (size_t)t->min_samples) {
			r->verdict = KG_VERDICT_INCONCLUSIVE;
			snprintf(r->message, sizeof r->message, "too few samples (%zu base, %zu head; need %d)",
				 b->n, h->n, t->min_samples);
		} else {
			struct launch_cfg cb, ch;
			launch_cfg_of(bset, b, &cb);
			launch_cfg_of(hset, h, &ch);
			if (!compare_by_config(t, &rule, b, h, &cb, &ch, r))
				compare_noisy(t->alpha, &rule, &sb, &sh, r);
			r->verdict = KG_VERDICT_SKIP; /* decided after Holm */
		}
	}
	free(xs);
	free(ys);
	check_bounds(&rule, r);
}

static int result_rank(const struct kg_result *r)
{
	switch (r->verdict) {
	case KG_VERDICT_FAIL: return 0;
	case KG_VERDICT_MISSING: return 1;
	case KG_VERDICT_INCONCLUSIVE: return 2;
	case KG_VERDICT_NEW: return 3;
	case KG_VERDICT_CHANGED: return 4;
	default: return 5;
	}
}

static int result_cmp(const void *pa, const void *pb)
{
	const struct kg_result *a = pa, *b = pb;
	int c = result_rank(a) - result_rank(b);
	if (c)
		return c;
	double sa = isnan(a->shift) ? 0 : fabs(a->shift), sb = isnan(b->shift) ? 0 : fabs(b->shift);
	if (sa != sb)
		return sa < sb ? 1 : -1;
	c = strcmp(a->benchmark, b->benchmark);
	if (!c)
		c = strcmp(a->kernel, b->kernel);
	if (!c)
		c = a->ranked != b->ranked ? a->ranked - b->ranked
					   : (a->rank > b->rank) - (a->rank < b->rank);
	if (!c)
		c = strcmp(a->metric, b->metric);
	return c;
}

/* Holm over the noisy comparisons, then their verdicts. */
static void decide_noisy(const struct kg_thresholds *t, struct kg_gate *g)
{
	size_t m = 0;
	for (size_t i = 0; i < g->n; i++)
		m += g->r[i].verdict == KG_VERDICT_SKIP && !isnan(g->r[i].p);
	double *p = xmalloc((m ? m : 1) * sizeof *p), *adj = xmalloc((m ? m : 1) * sizeof *adj);
	size_t k = 0;
	for (size_t i = 0; i < g->n; i++)
		if (g->r[i].verdict == KG_VERDICT_SKIP && !isnan(g->r[i].p))
			p[k++] = g->r[i].p;
	stats_holm(p, adj, m);
	k = 0;
	for (size_t i = 0; i < g->n; i++) {
		struct kg_result *r = &g->r[i];
		if (r->verdict != KG_VERDICT_SKIP)
			continue;
		r->p_adj = isnan(r->p) ? NAN : adj[k++];
		/* Significant after Holm and at least the limit; or the whole
		 * interval (at level 1 - 2 alpha, one-sided alpha per end) at
		 * or beyond the limit, which Holm does not touch: with few
		 * samples the exact test cannot reach alpha / m, but the
		 * interval still rules out every change under the limit.
		 * Either way the change must be a worsening. */
		int sig = !isnan(r->p_adj) && r->p_adj < t->alpha && r->bad_shift >= r->threshold;
		int whole = !isnan(r->bad_low) && r->bad_low >= r->threshold;
		int from_zero = r->zero_base && !isnan(r->p_adj) && r->p_adj < t->alpha;
		if (from_zero) {
			r->verdict = KG_VERDICT_FAIL;   /* the message is compare_noisy's */
		} else if ((sig || whole) && r->bad_shift > 0) {
			r->verdict = KG_VERDICT_FAIL;
			say(r, "%s by %.2f%% (limit %.3g%%%s)", r->higher_is_better ? "lower" : "slower",
			    100 * fabs(r->shift), 100 * r->threshold,
			    sig ? "" : "; the whole interval is over it");
		} else if (!isnan(r->bad_bound) && (r->bad_bound < r->threshold || r->bad_bound <= 0)) {
			r->verdict = KG_VERDICT_PASS;
			snprintf(r->message, sizeof r->message, "%s", r->shift < 0 && !r->higher_is_better
				 && r->p_adj > 0.5 ? "faster" : "within limit");
		} else {
			r->verdict = KG_VERDICT_INCONCLUSIVE;
			snprintf(r->message, sizeof r->message,
				 "cannot rule out a change of %.3g%% or more", 100 * r->threshold);
		}
		if (r->group[0]) {
			size_t len = strlen(r->message);
			int n = snprintf(r->message + len, sizeof r->message - len, " (launches of %s)",
					 r->group);
			(void)n;
		}
	}
	free(p);
	free(adj);
}

/* Whether a (NULL: no) is a series of s's kernel identity. */
static int same_identity(const struct kg_series *a, const struct kg_series *s)
{
	return a && store_series_identity_cmp(a, s) == 0;
}

void gate_compare(const struct kg_thresholds *t, const struct kg_sampleset *base,
		  const struct kg_sampleset *head, struct kg_gate *out)
{
	memset(out, 0, sizeof *out);
	size_t cap = 0, i = 0, j = 0;
	const struct kg_series *lastb = NULL, *lasth = NULL;
	while (i < base->n || j < head->n) {
		const struct kg_series *b = i < base->n ? &base->s[i] : NULL;
		const struct kg_series *h = j < head->n ? &head->s[j] : NULL;
		int c = !b ? 1 : !h ? -1 : store_series_cmp(b, h);
		if (c == 0) {
			compare_pair(t, out, &cap, base, b, head, h);
			lastb = b, lasth = h;
			i++, j++;
			continue;
		}
		if (c < 0) {
			/* Base series without a head twin: the kernel vanished when
			 * no head series has its identity. */
			if (!same_identity(lastb, b) && !same_identity(h, b) && !same_identity(lasth, b))
				presence(t, out, &cap, b, KG_VERDICT_MISSING);
			lastb = b;
			i++;
		} else {
			if (!same_identity(lasth, h) && !same_identity(b, h) && !same_identity(lastb, h))
				presence(t, out, &cap, h, KG_VERDICT_NEW);
			lasth = h;
			j++;
		}
	}
	decide_noisy(t, out);
	gate_count(t, out);
	if (out->n)
		qsort(out->r, out->n, sizeof *out->r, result_cmp);
}

void gate_count(const struct kg_thresholds *t, struct kg_gate *g)
{
	g->n_fail = g->n_pass = g->n_inconclusive = g->n_new = g->n_missing = g->n_changed = 0;
	g->exit_status = KG_EXIT_PASS;
	for (size_t k = 0; k < g->n; k++) {
		struct kg_result *r = &g->r[k];
		r->fails = 0;
		switch (r->verdict) {
		case KG_VERDICT_FAIL: r->fails = 1; g->n_fail++; break;
		case KG_VERDICT_PASS: g->n_pass++; break;
		case KG_VERDICT_INCONCLUSIVE:
			r->fails = t->on_inconclusive == KG_POLICY_FAIL;
			g->n_inconclusive++;
			break;
		case KG_VERDICT_NEW:
			r->fails = t->on_new_kernel == KG_POLICY_FAIL;
			g->n_new++;
			break;
		case KG_VERDICT_MISSING:
			r->fails = t->on_missing_kernel == KG_POLICY_FAIL;
			g->n_missing++;
			break;
		case KG_VERDICT_CHANGED: g->n_changed++; break;
		case KG_VERDICT_SKIP: case KG_VERDICT_NO_BASELINE: break;
		}
		if (r->fails)
			g->exit_status = KG_EXIT_REGRESSION;
	}
}

void gate_free(struct kg_gate *g)
{
	free(g->r);
	g->r = NULL;
	g->n = 0;
}
