/*
 * test_confirm.c: the confirmation procedure of "kgate compare --confirm"
 * (confirm.c): the alpha-spending schedule, flagging, looks and how their
 * outcome is written into the screening gate, and, by simulation, its
 * false-alarm rate and power.
 *
 * The samples are SYNTHETIC, from a seeded generator with log-normal noise:
 * they test the procedure's arithmetic, not a GPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/config.h"
#include "kgate/confirm.h"
#include "kgate/gate.h"
#include "kgate/util.h"

#include "rng.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double normal(void) { return rng_normal(&rng); }

/* One series of n values center * exp(cv * N(0,1)), or n more appended. */
static void series_add(struct kg_sampleset *set, size_t n, double center, double cv)
{
	struct kg_series *s;

	if (!set->n) {
		set->s = xcalloc(1, sizeof(*set->s));
		set->n = 1;
		s = &set->s[0];
		s->benchmark = xstrdup("b");
		s->nvtx = xstrdup("");
		s->kernel = s->demangled = s->base = NULL;
		s->kernel = xstrdup("k");
		s->demangled = xstrdup("k");
		s->base = xstrdup("k");
		s->metric = xstrdup("gpu__time_duration.sum");
		s->unit = xstrdup("ns");
	}
	s = &set->s[0];
	s->v = xrealloc(s->v, (s->n + n) * sizeof(*s->v));
	for (size_t i = 0; i < n; i++)
		s->v[s->n + i] = center * exp(cv * normal());
	s->n += n;
}

static void set_free(struct kg_sampleset *set)
{
	for (size_t i = 0; i < set->n; i++) {
		struct kg_series *s = &set->s[i];
		free(s->benchmark);
		free(s->nvtx);
		free(s->kernel);
		free(s->demangled);
		free(s->base);
		free(s->metric);
		free(s->unit);
		free(s->v);
	}
	free(set->s);
	memset(set, 0, sizeof(*set));
}

static struct kg_thresholds *thresholds(const char *text)
{
	struct kg_thresholds *t = NULL;
	struct kg_buf errs = KG_BUF_INIT;
	int rc = config_parse_thresholds("t.yaml", text, strlen(text), &t, &errs);
	assert_int_equal(rc, 0);
	buf_free(&errs);
	return t;
}

static void test_alpha_schedule(void **state)
{
	(void)state;
	for (int K = 1; K <= 6; K++) {
		double sum = 0, prev = 0;
		for (int k = 1; k <= K; k++) {
			double a = confirm_alpha(0.05, k, K);
			assert_true(a > 0);
			assert_true(a >= prev); /* early looks strictest */
			prev = a;
			sum += a;
		}
		assert_true(fabs(sum - 0.05) < 1e-12);
	}
	assert_true(fabs(confirm_alpha(0.05, 1, 3) - 0.05 / 9) < 1e-15);
	assert_true(confirm_alpha(0.05, 0, 3) == 0);
	assert_true(confirm_alpha(0.05, 4, 3) == 0);
}

/*
 * One comparison under the procedure: screen on n a side; when flagged,
 * up to K looks on fresh rounds of n a side (accumulated).  Returns the
 * final verdict; *flagged and *rounds say what happened.
 */
static enum kg_verdict procedure(const struct kg_thresholds *t, double shift, double cv, size_t n,
				 int K, int *flagged, int *rounds)
{
	struct kg_sampleset b = { 0 }, h = { 0 }, cb = { 0 }, ch = { 0 };
	struct kg_gate g;
	struct kg_confirm c;
	enum kg_verdict v;

	series_add(&b, n, 1000, cv);
	series_add(&h, n, 1000 * (1 + shift), cv);
	gate_compare(t, &b, &h, &g);
	*flagged = confirm_flag(&c, &g, K) > 0;
	*rounds = 0;
	for (int k = 1; k <= K && *flagged; k++) {
		struct kg_thresholds tk = *t;
		struct kg_gate gk;
		size_t nopen;
		char **open = confirm_open_benchmarks(&c, &nopen);

		for (size_t i = 0; i < nopen; i++)
			free(open[i]);
		free(open);
		if (!nopen)
			break;
		series_add(&cb, n, 1000, cv);
		series_add(&ch, n, 1000 * (1 + shift), cv);
		tk.alpha = confirm_alpha(t->alpha, k, K);
		gate_compare(&tk, &cb, &ch, &gk);
		confirm_look(&c, &gk, k);
		gate_free(&gk);
		*rounds = k;
	}
	confirm_apply(&c, t, &g);
	v = g.r[0].verdict;
	confirm_free(&c);
	gate_free(&g);
	set_free(&b);
	set_free(&h);
	set_free(&cb);
	set_free(&ch);
	return v;
}

static const char *const T_LOOSE =
	"version: 1\n"
	"statistics: { alpha: 0.05, min_samples: 5 }\n"
	"defaults:\n"
	"  gpu__time_duration.sum: { regression: 1% }\n";

/*
 * No real change, alpha 0.05, 3% noise against a 1% limit: most
 * comparisons are flagged (INCONCLUSIVE), some FAIL.  Each flagged one is
 * decided on fresh data at levels summing to alpha, so among the flagged
 * the final FAIL rate must stay under alpha.  4000 trials: the bound is
 * alpha * flagged + 3 standard deviations.  Re-testing each round at alpha
 * itself would exceed it (checked too, so the bound has teeth).
 */
static void test_false_alarms(void **state)
{
	struct kg_thresholds *t = thresholds(T_LOOSE);
	int flagged = 0, fails = 0, screen_fails = 0, naive = 0;

	(void)state;
	for (int i = 0; i < 4000; i++) {
		int f, r;
		enum kg_verdict v = procedure(t, 0.0, 0.03, 10, 3, &f, &r);
		flagged += f;
		fails += v == KG_VERDICT_FAIL;
	}
	/* The same data-generating process, re-tested at alpha every round. */
	for (int i = 0; i < 4000; i++) {
		struct kg_sampleset cb = { 0 }, ch = { 0 };
		int failed = 0;
		for (int k = 1; k <= 3 && !failed; k++) {
			struct kg_gate g;
			series_add(&cb, 10, 1000, 0.03);
			series_add(&ch, 10, 1000, 0.03);
			gate_compare(t, &cb, &ch, &g);
			failed = g.r[0].verdict == KG_VERDICT_FAIL;
			screen_fails += k == 1 && failed;
			gate_free(&g);
		}
		naive += failed;
		set_free(&cb);
		set_free(&ch);
	}
	double bound = 0.05 * flagged + 3 * sqrt(0.05 * 0.95 * flagged);
	print_message("# flagged %d of 4000, confirmed FAILs %d (bound %.0f); one look at alpha: "
		      "%d FAIL; three looks at alpha: %d\n", flagged, fails, bound, screen_fails, naive);
	assert_true(flagged > 1000);        /* the screen does flag: the test has work */
	assert_true(fails <= bound);
	assert_true(naive > bound);         /* looking three times at alpha would not hold */
	config_free_thresholds(t);
}

/* A real 5% slowdown with 1% noise is confirmed in the first round. */
static void test_power(void **state)
{
	struct kg_thresholds *t = thresholds(T_LOOSE);
	int confirmed = 0, first = 0;

	(void)state;
	for (int i = 0; i < 200; i++) {
		int f, r;
		enum kg_verdict v = procedure(t, 0.05, 0.01, 10, 3, &f, &r);
		assert_true(f);
		confirmed += v == KG_VERDICT_FAIL;
		first += v == KG_VERDICT_FAIL && r == 1;
	}
	assert_true(confirmed >= 196);
	assert_true(first >= 190);
	config_free_thresholds(t);
}

/* The outcome in the screening gate: verdicts, message, counts, exit status. */
static void test_apply(void **state)
{
	struct kg_thresholds *t = thresholds(T_LOOSE);
	struct kg_sampleset b = { 0 }, h = { 0 }, cb = { 0 }, ch = { 0 };
	struct kg_gate g, gk;
	struct kg_confirm c;
	size_t n;
	char **open;

	(void)state;
	/* Screen: a transient 10% slowdown FAILs. */
	series_add(&b, 10, 1000, 0.005);
	series_add(&h, 10, 1100, 0.005);
	gate_compare(t, &b, &h, &g);
	assert_int_equal(g.r[0].verdict, KG_VERDICT_FAIL);
	assert_int_equal(confirm_flag(&c, &g, 2), 1);
	open = confirm_open_benchmarks(&c, &n);
	assert_int_equal(n, 1);
	assert_string_equal(open[0], "b");
	free(open[0]);
	free(open);
	/* Confirmation: no change at all; cleared in round 1. */
	series_add(&cb, 10, 1000, 0.001);
	series_add(&ch, 10, 1000, 0.001);
	gate_compare(t, &cb, &ch, &gk);
	assert_int_equal(confirm_look(&c, &gk, 1), 0);
	gate_free(&gk);
	confirm_apply(&c, t, &g);
	assert_int_equal(g.r[0].verdict, KG_VERDICT_PASS);
	assert_string_equal(g.r[0].message, "within limit in 1 confirmation round (was FAIL)");
	assert_int_equal(g.n_fail, 0);
	assert_int_equal(g.n_pass, 1);
	assert_int_equal(g.exit_status, 0);
	assert_int_equal(g.r[0].fails, 0);
	confirm_free(&c);
	gate_free(&g);

	/* A look that does not see the kernel leaves it open: INCONCLUSIVE. */
	gate_compare(t, &b, &h, &g);
	confirm_flag(&c, &g, 1);
	memset(&gk, 0, sizeof(gk));
	assert_int_equal(confirm_look(&c, &gk, 1), 1);
	confirm_apply(&c, t, &g);
	assert_int_equal(g.r[0].verdict, KG_VERDICT_INCONCLUSIVE);
	assert_string_equal(g.r[0].message,
			    "neither confirmed nor cleared in 1 confirmation round (was FAIL)");
	confirm_free(&c);
	gate_free(&g);
	set_free(&b);
	set_free(&h);
	set_free(&cb);
	set_free(&ch);
	config_free_thresholds(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alpha_schedule),
		cmocka_unit_test(test_false_alarms),
		cmocka_unit_test(test_power),
		cmocka_unit_test(test_apply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
