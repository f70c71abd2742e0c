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
 *                  threshold; PASS when the interval's bad end is under the
 *                  threshold; else INCONCLUSIVE.  Fewer than min_samples on
 *                  either side is INCONCLUSIVE, never PASS.
 *   deterministic: medians compared; a change beyond the tolerance in the
 *                  bad direction is FAIL, in the good direction PASS with a
 *                  note.
 *   min / max:     on the head median.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/gate.h"
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

int gate_higher_is_better(const char *metric)
{
	return strstr(metric, "pct_of_peak") != NULL || strstr(metric, ".per_second") != NULL ||
	       strstr(metric, "throughput") != NULL || strstr(metric, "occupancy") != NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorted copy of v, thinned to at most MAX_SIDE order statistics. */
static double *side_prepare(const double *v, size_t n, size_t *out_n)
{
	double *s = xmalloc((n ? n : 1) * sizeof *s);
	memcpy(s, v, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_double);
	if (n > MAX_SIDE) {
		for (size_t i = 0; i < MAX_SIDE; i++)
			s[i] = s[(size_t)((double)i * (double)(n - 1) / (MAX_SIDE - 1))];
		n = MAX_SIDE;
	}
	*out_n = n;
	return s;
}

static int identity_cmp(const struct kg_series *a, const struct kg_series *b)
{
	int c = strcmp(a->benchmark, b->benchmark);
	if (!c)
		c = strcmp(a->nvtx ? a->nvtx : "", b->nvtx ? b->nvtx : "");
	if (!c)
		c = strcmp(a->kernel, b->kernel);
	return c;
}

static int series_cmp(const struct kg_series *a, const struct kg_series *b)
{
	int c = identity_cmp(a, b);
	return c ? c : strcmp(a->metric, b->metric);
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
	r->base = r->head = r->shift = r->lo = r->hi = r->p = r->p_adj = r->threshold = NAN;
	return r;
}

static void compare_noisy(const struct kg_thresholds *t, const struct kg_metric_rule *rule,
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
	for (size_t i = 0; i < nb; i++)
		x[i] = logs ? log(x[i]) : x[i];
	for (size_t i = 0; i < nh; i++)
		y[i] = logs ? log(y[i]) : y[i];
	/* Orient so that "larger" always means "worse". */
	int flip = r->higher_is_better;
	if (flip) {
		for (size_t i = 0; i < nb; i++)
			x[i] = -x[i];
		for (size_t i = 0; i < nh; i++)
			y[i] = -y[i];
	}
	struct stats_shift st;
	int ci = stats_shift_test(x, nb, y, nh, 1.0 - 2.0 * t->alpha, &st);
	double d = st.shift, lo = st.lo, hi = st.hi;
	r->p = st.p;
	/* Back to relative changes: "measured" keeps the metric's sign,
	 * "bad" is the size of the change in the worse direction. */
	double sgn = flip ? -1.0 : 1.0, as = fabs(scale);
#define MEAS(v) (logs ? exp(sgn * (v)) - 1.0 : (as > 0 ? sgn * (v) / as : NAN))
#define BAD(v) (logs ? exp(v) - 1.0 : (as > 0 ? (v) / as : NAN))
	r->shift = MEAS(d);
	r->bad_shift = BAD(d);
	if (ci == 0) {
		double a = MEAS(lo), c = MEAS(hi);
		r->lo = a < c ? a : c;
		r->hi = a < c ? c : a;
		r->bad_bound = BAD(hi);
	} else {
		r->bad_bound = NAN;
	}
#undef MEAS
#undef BAD
	r->threshold = rule->regression;
	free(x);
	free(y);
}

static void compare_deterministic(const struct kg_metric_rule *rule, struct kg_result *r)
{
	double tol = rule->has_tolerance ? rule->tolerance
		     : rule->has_regression ? rule->regression : 0.0;
	r->threshold = tol;
	if (r->base == r->head) {
		r->shift = 0;
		r->verdict = KG_VERDICT_PASS;
		snprintf(r->message, sizeof r->message, "unchanged");
		return;
	}
	r->shift = r->base != 0 ? (r->head - r->base) / fabs(r->base) : INFINITY;
	double bad = r->higher_is_better ? -r->shift : r->shift;
	if (bad > tol) {
		r->verdict = KG_VERDICT_FAIL;
		snprintf(r->message, sizeof r->message, "deterministic counter changed by %+.3g%% (limit %.3g%%)",
			 100 * r->shift, 100 * tol);
	} else {
		r->verdict = KG_VERDICT_PASS;
		snprintf(r->message, sizeof r->message, "changed by %+.3g%%", 100 * r->shift);
	}
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

/* One comparison of a series present on both sides. */
static void compare_pair(const struct kg_thresholds *t, struct kg_gate *g, size_t *cap,
			 const struct kg_series *b, const struct kg_series *h)
{
	struct kg_metric_rule rule;
	if (!config_rule_for(t, h->benchmark, h->nvtx ? h->nvtx : "", h->kernel,
			     h->demangled ? h->demangled : h->kernel, h->metric, &rule))
		return;
	struct kg_result *r = result_add(g, cap, h);
	r->n_base = b->n;
	r->n_head = h->n;
	r->base = stats_median(b->v, b->n);
	r->head = stats_median(h->v, h->n);
	r->higher_is_better = gate_higher_is_better(h->metric);
	r->deterministic = rule.deterministic == 1 ||
			   (rule.deterministic == -1 && (h->deterministic || b->deterministic));
	r->verdict = KG_VERDICT_PASS;
	if (r->deterministic) {
		compare_deterministic(&rule, r);
	} else if (rule.has_regression) {
		if (b->n < (size_t)t->min_samples || h->n < (size_t)t->min_samples) {
			r->verdict = KG_VERDICT_INCONCLUSIVE;
			snprintf(r->message, sizeof r->message, "too few samples (%zu base, %zu head; need %d)",
				 b->n, h->n, t->min_samples);
		} else {
			compare_noisy(t, &rule, b, h, r);
			r->verdict = KG_VERDICT_SKIP; /* decided after Holm */
		}
	}
	check_bounds(&rule, r);
}

static int result_rank(const struct kg_result *r)
{
	switch (r->verdict) {
	case KG_VERDICT_FAIL: return 0;
	case KG_VERDICT_MISSING: return 1;
	case KG_VERDICT_INCONCLUSIVE: return 2;
	case KG_VERDICT_NEW: return 3;
	default: return 4;
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
		if (!isnan(r->p_adj) && r->p_adj < t->alpha && r->bad_shift >= r->threshold) {
			r->verdict = KG_VERDICT_FAIL;
			snprintf(r->message, sizeof r->message, "%s by %.2f%% (limit %.3g%%)",
				 r->higher_is_better ? "lower" : "slower", 100 * fabs(r->shift),
				 100 * r->threshold);
		} else if (!isnan(r->bad_bound) && r->bad_bound < r->threshold) {
			r->verdict = KG_VERDICT_PASS;
			snprintf(r->message, sizeof r->message, "%s", r->shift < 0 && !r->higher_is_better
				 && r->p_adj > 0.5 ? "faster" : "within limit");
		} else {
			r->verdict = KG_VERDICT_INCONCLUSIVE;
			snprintf(r->message, sizeof r->message,
				 "cannot rule out a change of %.3g%% or more", 100 * r->threshold);
		}
	}
	free(p);
	free(adj);
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
		int c = !b ? 1 : !h ? -1 : series_cmp(b, h);
		if (c == 0) {
			compare_pair(t, out, &cap, b, h);
			lastb = b, lasth = h;
			i++, j++;
			continue;
		}
		if (c < 0) {
			/* Base series without a head twin: the kernel vanished when
			 * no head series has its identity. */
			if (!(lastb && identity_cmp(lastb, b) == 0) &&
			    !(h && identity_cmp(b, h) == 0) && !(lasth && identity_cmp(lasth, b) == 0))
				presence(t, out, &cap, b, KG_VERDICT_MISSING);
			lastb = b;
			i++;
		} else {
			if (!(lasth && identity_cmp(lasth, h) == 0) &&
			    !(b && identity_cmp(b, h) == 0) && !(lastb && identity_cmp(lastb, h) == 0))
				presence(t, out, &cap, h, KG_VERDICT_NEW);
			lasth = h;
			j++;
		}
	}
	decide_noisy(t, out);
	for (size_t k = 0; k < out->n; k++) {
		struct kg_result *r = &out->r[k];
		switch (r->verdict) {
		case KG_VERDICT_FAIL: r->fails = 1; out->n_fail++; break;
		case KG_VERDICT_PASS: out->n_pass++; break;
		case KG_VERDICT_INCONCLUSIVE:
			r->fails = t->on_inconclusive == KG_POLICY_FAIL;
			out->n_inconclusive++;
			break;
		case KG_VERDICT_NEW: out->n_new++; break;
		case KG_VERDICT_MISSING: out->n_missing++; break;
		case KG_VERDICT_SKIP: case KG_VERDICT_NO_BASELINE: break;
		}
		if (r->fails)
			out->exit_status = KG_EXIT_REGRESSION;
	}
	if (out->n)
		qsort(out->r, out->n, sizeof *out->r, result_cmp);
}

void gate_free(struct kg_gate *g)
{
	free(g->r);
	g->r = NULL;
	g->n = 0;
}
