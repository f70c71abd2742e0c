/*
 * test_gate.c: the verdict rules of gate.c on sample sets with known
 * shifts: noisy metrics (shift found, interval covers it, PASS / FAIL /
 * INCONCLUSIVE, too few samples), higher-is-better orientation, Holm
 * across a check, deterministic counters and their tolerance, min/max
 * bounds, new and vanished kernels under each policy, and the false-alarm
 * rate of same-distribution comparisons.
 *
 * The samples are generated here from a seeded generator with log-normal
 * noise: they test the arithmetic of the rules, not a GPU.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/config.h"
#include "kgate/gate.h"
#include "kgate/util.h"

/* xorshift64*, then Box-Muller: reproducible normal deviates. */
static uint64_t rng = 88172645463325252ull;
static double uniform(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}
static double normal(void)
{
	double u = uniform(), v = uniform();
	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

struct spec {
	const char *kernel, *metric;
	int deterministic;
	size_t n;
	double center, cv; /* value = center * exp(cv * N(0,1)) */
};

static void series_fill(struct kg_series *s, const struct spec *sp)
{
	memset(s, 0, sizeof *s);
	s->benchmark = xstrdup("b");
	s->nvtx = xstrdup("");
	s->kernel = xstrdup(sp->kernel);
	s->demangled = xstrdup(sp->kernel);
	s->base = xstrdup(sp->kernel);
	s->metric = xstrdup(sp->metric);
	s->unit = xstrdup("ns");
	s->deterministic = sp->deterministic;
	s->n = sp->n;
	s->v = xcalloc(sp->n ? sp->n : 1, sizeof *s->v);
	s->run_of = xcalloc(sp->n ? sp->n : 1, sizeof *s->run_of);
	for (size_t i = 0; i < sp->n; i++)
		s->v[i] = sp->cv > 0 ? sp->center * exp(sp->cv * normal()) : sp->center;
}

static int spec_cmp(const void *a, const void *b)
{
	const struct spec *x = a, *y = b;
	int c = strcmp(x->kernel, y->kernel);
	return c ? c : strcmp(x->metric, y->metric);
}

/* A sample set as store_load_samples() returns it: sorted. */
static void set_make(struct kg_sampleset *set, struct spec *sp, size_t n)
{
	qsort(sp, n, sizeof *sp, spec_cmp);
	set->n = n;
	set->s = xcalloc(n ? n : 1, sizeof *set->s);
	for (size_t i = 0; i < n; i++)
		series_fill(&set->s[i], &sp[i]);
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
		free(s->run_of);
	}
	free(set->s);
}

static struct kg_thresholds *thresholds(const char *text)
{
	struct kg_thresholds *t = NULL;
	struct kg_buf errs = KG_BUF_INIT;
	int rc = config_parse_thresholds("t.yaml", text, strlen(text), &t, &errs);
	if (rc != 0)
		print_error("%s", errs.s ? errs.s : "");
	assert_int_equal(rc, 0);
	buf_free(&errs);
	return t;
}

static const char *const T_DEFAULT =
	"version: 1\n"
	"defaults:\n"
	"  gpu__time_duration.sum: { regression: 3% }\n"
	"  sm__throughput.avg.pct_of_peak_sustained_elapsed: { regression: 3% }\n"
	"  smsp__inst_executed.sum: { regression: 0.1%, deterministic: true }\n"
	"  launch__registers_per_thread: { deterministic: true }\n";

/* One kernel, one metric: base and head from two specs. */
static enum kg_verdict one(const char *ttext, struct spec b, struct spec h, struct kg_result *out)
{
	struct kg_thresholds *t = thresholds(ttext);
	struct kg_sampleset bs, hs;
	struct kg_gate g;
	set_make(&bs, &b, 1);
	set_make(&hs, &h, 1);
	gate_compare(t, &bs, &hs, &g);
	assert_int_equal(g.n, 1);
	enum kg_verdict v = g.r[0].verdict;
	if (out) {
		*out = g.r[0];
		out->benchmark = out->nvtx = out->kernel = out->demangled = out->metric = out->unit = NULL;
	}
	gate_free(&g);
	set_free(&bs);
	set_free(&hs);
	config_free_thresholds(t);
	return v;
}

#define TIME "gpu__time_duration.sum"

static void test_same_distribution_passes(void **state)
{
	(void)state;
	struct kg_result r;
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", TIME, 0, 20, 1000, 0.005 },
			     (struct spec){ "k", TIME, 0, 20, 1000, 0.005 }, &r), KG_VERDICT_PASS);
	assert_true(fabs(r.shift) < 0.01);
	assert_true(r.lo <= r.shift && r.shift <= r.hi);
	assert_true(r.hi < 0.03);
}

static void test_ten_percent_slower_fails(void **state)
{
	(void)state;
	struct kg_result r;
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", TIME, 0, 20, 1000, 0.01 },
			     (struct spec){ "k", TIME, 0, 20, 1100, 0.01 }, &r), KG_VERDICT_FAIL);
	assert_true(r.fails);
	assert_true(fabs(r.shift - 0.10) < 0.01);
	assert_true(r.lo < 0.10 && 0.10 < r.hi);
	assert_true(r.p_adj < 0.001);
	assert_float_equal(r.threshold, 0.03, 1e-12);
}

static void test_small_shift_passes(void **state)
{
	(void)state;
	struct kg_result r;
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", TIME, 0, 30, 1000, 0.003 },
			     (struct spec){ "k", TIME, 0, 30, 1010, 0.003 }, &r), KG_VERDICT_PASS);
	/* A real 1% shift is measured, but it is under the 3% limit. */
	assert_true(r.shift > 0.005 && r.shift < 0.015);
}

static void test_noisy_is_inconclusive(void **state)
{
	(void)state;
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", TIME, 0, 10, 1000, 0.10 },
			     (struct spec){ "k", TIME, 0, 10, 1030, 0.10 }, NULL), KG_VERDICT_INCONCLUSIVE);
}

static void test_too_few_samples(void **state)
{
	(void)state;
	struct kg_result r;
	/* Even a 50% change is not judged on 5 samples (min_samples 7). */
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", TIME, 0, 5, 1000, 0.001 },
			     (struct spec){ "k", TIME, 0, 20, 1500, 0.001 }, &r), KG_VERDICT_INCONCLUSIVE);
	assert_non_null(strstr(r.message, "too few samples (5 base, 20 head; need 7)"));
	assert_int_equal(r.fails, 0);
	const char *strict = "version: 1\n"
			     "defaults: { gpu__time_duration.sum: { regression: 3% } }\n"
			     "on_inconclusive: fail\n";
	assert_int_equal(one(strict, (struct spec){ "k", TIME, 0, 5, 1000, 0.001 },
			     (struct spec){ "k", TIME, 0, 20, 1500, 0.001 }, &r), KG_VERDICT_INCONCLUSIVE);
	assert_int_equal(r.fails, 1);
}

static void test_higher_is_better(void **state)
{
	(void)state;
	const char *m = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
	struct kg_result r;
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", m, 0, 20, 80, 0.01 },
			     (struct spec){ "k", m, 0, 20, 72, 0.01 }, &r), KG_VERDICT_FAIL);
	assert_true(r.higher_is_better);
	assert_true(fabs(r.shift + 0.10) < 0.01); /* measured: 10% lower */
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", m, 0, 20, 80, 0.01 },
			     (struct spec){ "k", m, 0, 20, 88, 0.01 }, &r), KG_VERDICT_PASS);
	assert_true(r.shift > 0.09);
}

static void test_faster_passes(void **state)
{
	(void)state;
	struct kg_result r;
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", TIME, 0, 20, 1000, 0.01 },
			     (struct spec){ "k", TIME, 0, 20, 800, 0.01 }, &r), KG_VERDICT_PASS);
	assert_true(r.shift < -0.15);
}

static void test_deterministic(void **state)
{
	(void)state;
	const char *m = "smsp__inst_executed.sum";
	struct kg_result r;
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", m, 1, 3, 1e6, 0 },
			     (struct spec){ "k", m, 1, 3, 1e6, 0 }, &r), KG_VERDICT_PASS);
	assert_true(r.deterministic);
	/* No statistics: 3 samples are enough, and no p-value is made. */
	assert_true(isnan(r.p));
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", m, 1, 3, 1e6, 0 },
			     (struct spec){ "k", m, 1, 3, 1e6 + 500, 0 }, &r), KG_VERDICT_PASS);
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", m, 1, 3, 1e6, 0 },
			     (struct spec){ "k", m, 1, 3, 1e6 + 2000, 0 }, &r), KG_VERDICT_FAIL);
	assert_float_equal(r.shift, 0.002, 1e-12);
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", m, 1, 3, 1e6, 0 },
			     (struct spec){ "k", m, 1, 3, 0.9e6, 0 }, &r), KG_VERDICT_PASS);
	/* "deterministic: true" alone means exactly equal. */
	const char *regs = "launch__registers_per_thread";
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", regs, 1, 3, 32, 0 },
			     (struct spec){ "k", regs, 1, 3, 40, 0 }, &r), KG_VERDICT_FAIL);
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", regs, 1, 3, 32, 0 },
			     (struct spec){ "k", regs, 1, 3, 32, 0 }, &r), KG_VERDICT_PASS);
}

static void test_bounds(void **state)
{
	(void)state;
	const char *t = "version: 1\n"
			"defaults:\n"
			"  sm__throughput.avg.pct_of_peak_sustained_elapsed: { min: 60 }\n"
			"  gpu__time_duration.sum: { max: 1500 }\n";
	const char *m = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
	struct kg_result r;
	assert_int_equal(one(t, (struct spec){ "k", m, 0, 3, 70, 0 }, (struct spec){ "k", m, 0, 3, 55, 0 }, &r),
			 KG_VERDICT_FAIL);
	assert_non_null(strstr(r.message, "under the minimum 60"));
	assert_int_equal(one(t, (struct spec){ "k", m, 0, 3, 70, 0 }, (struct spec){ "k", m, 0, 3, 65, 0 }, &r),
			 KG_VERDICT_PASS);
	assert_int_equal(one(t, (struct spec){ "k", TIME, 0, 3, 1000, 0 },
			     (struct spec){ "k", TIME, 0, 3, 1600, 0 }, &r), KG_VERDICT_FAIL);
	assert_non_null(strstr(r.message, "over the maximum 1500"));
}

/*
 * Holm: 40 kernels with the same evidence, 7 vs 7 with complete separation
 * (exact p = 1/C(14,7) = 2.9e-4 each): alone the test fails it; together
 * Holm lifts every p above alpha, but each interval lies wholly above the
 * 3% limit, and that alone is a FAIL (Holm does not make it wider).
 */
static void test_holm(void **state)
{
	(void)state;
	struct kg_thresholds *t = thresholds(T_DEFAULT);
	enum { K = 40 };
	struct spec b[K], h[K];
	char names[K][8];
	for (int i = 0; i < K; i++) {
		snprintf(names[i], sizeof names[i], "k%02d", i);
		/* 7 vs 7, complete separation: exact p = 1/C(14,7) = 2.9e-4 */
		b[i] = (struct spec){ names[i], TIME, 0, 7, 1000, 0.001 };
		h[i] = (struct spec){ names[i], TIME, 0, 7, 1100, 0.001 };
	}
	struct kg_sampleset bs, hs;
	struct kg_gate g;
	set_make(&bs, b, 1);
	set_make(&hs, h, 1);
	gate_compare(t, &bs, &hs, &g);
	assert_int_equal(g.n_fail, 1); /* alone, it fails */
	gate_free(&g);
	set_free(&bs);
	set_free(&hs);
	set_make(&bs, b, K);
	set_make(&hs, h, K);
	gate_compare(t, &bs, &hs, &g);
	assert_int_equal(g.n, K);
	assert_int_equal(g.n_fail, K);
	for (size_t i = 0; i < g.n; i++) {
		assert_true(g.r[i].p_adj > g.r[i].p);
		assert_true(g.r[i].p_adj > 0.001); /* 40 x 2.9e-4 after Holm */
		assert_true(g.r[i].lo >= 0.03);
	}
	gate_free(&g);
	set_free(&bs);
	set_free(&hs);
	config_free_thresholds(t);
}

static void test_new_and_missing(void **state)
{
	(void)state;
	const char *pol[] = { "on_new_kernel: warn\non_missing_kernel: fail\n",
			      "on_new_kernel: fail\non_missing_kernel: ignore\n" };
	for (int p = 0; p < 2; p++) {
		char *text = xasprintf("%s%s", T_DEFAULT, pol[p]);
		struct kg_thresholds *t = thresholds(text);
		struct spec b[] = { { "gone", TIME, 0, 10, 1000, 0.01 }, { "gone", "smsp__inst_executed.sum", 1, 10, 5, 0 },
				    { "kept", TIME, 0, 10, 1000, 0.01 } };
		struct spec h[] = { { "kept", TIME, 0, 10, 1000, 0.01 }, { "new", TIME, 0, 10, 1000, 0.01 },
				    { "new", "smsp__inst_executed.sum", 1, 10, 5, 0 } };
		struct kg_sampleset bs, hs;
		struct kg_gate g;
		set_make(&bs, b, 3);
		set_make(&hs, h, 3);
		gate_compare(t, &bs, &hs, &g);
		/* Each kernel is reported once, whatever its number of metrics. */
		if (p == 0) {
			assert_int_equal(g.n_new, 1);
			assert_int_equal(g.n_missing, 1);
			assert_int_equal(g.exit_status, KG_EXIT_REGRESSION);
		} else {
			assert_int_equal(g.n_new, 1);
			assert_int_equal(g.n_missing, 0); /* ignored: not even listed */
			assert_int_equal(g.exit_status, KG_EXIT_REGRESSION);
		}
		gate_free(&g);
		set_free(&bs);
		set_free(&hs);
		config_free_thresholds(t);
		free(text);
	}
}

/* Same distribution, many times: the false-alarm rate is bounded by alpha
 * (0.001), here with noise large enough that a 3% shift is within reach of
 * chance.  2000 comparisons expect 2 at most; more than 6 would happen
 * with probability under 0.5% if the rate were alpha.  (Holm plays no
 * part: one comparison per check.) */
static void test_false_alarms(void **state)
{
	(void)state;
	struct kg_thresholds *t = thresholds(T_DEFAULT);
	int fails = 0, passes = 0;
	for (int i = 0; i < 2000; i++) {
		struct spec b = { "k", TIME, 0, 10, 1000, 0.02 }, h = b;
		struct kg_sampleset bs, hs;
		struct kg_gate g;
		set_make(&bs, &b, 1);
		set_make(&hs, &h, 1);
		gate_compare(t, &bs, &hs, &g);
		fails += (int)g.n_fail;
		passes += (int)g.n_pass;
		gate_free(&g);
		set_free(&bs);
		set_free(&hs);
	}
	assert_true(fails <= 6);
	/* And the gate is not merely timid: with 1% noise, 10 samples a side
	 * rule a 3% change out nearly every time. */
	passes = 0;
	for (int i = 0; i < 500; i++) {
		struct spec b = { "k", TIME, 0, 10, 1000, 0.01 }, h = b;
		struct kg_sampleset bs, hs;
		struct kg_gate g;
		set_make(&bs, &b, 1);
		set_make(&hs, &h, 1);
		gate_compare(t, &bs, &hs, &g);
		passes += (int)g.n_pass;
		gate_free(&g);
		set_free(&bs);
		set_free(&hs);
	}
	assert_true(passes >= 475);
	config_free_thresholds(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_distribution_passes),
		cmocka_unit_test(test_ten_percent_slower_fails),
		cmocka_unit_test(test_small_shift_passes),
		cmocka_unit_test(test_noisy_is_inconclusive),
		cmocka_unit_test(test_too_few_samples),
		cmocka_unit_test(test_higher_is_better),
		cmocka_unit_test(test_faster_passes),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_holm),
		cmocka_unit_test(test_new_and_missing),
		cmocka_unit_test(test_false_alarms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
