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
#include "kgate/metric.h"
#include "kgate/verdict.h"
#include "kgate/util.h"

#include "rng.h"

static uint64_t rng = 88172645463325252ull;
static double normal(void) { return rng_normal(&rng); }

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
	s->unit = xstrdup(metric_unit(sp->metric));
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


/* One kernel, one metric, from given values (synthetic, as above). */
static enum kg_verdict vals(const char *ttext, const char *metric, int det, const double *bv,
			    size_t nb, const double *hv, size_t nh, struct kg_result *out)
{
	struct kg_thresholds *t = thresholds(ttext);
	struct spec sb = { "k", metric, det, nb, 1, 0 }, sh = { "k", metric, det, nh, 1, 0 };
	struct kg_sampleset bs, hs;
	struct kg_gate g;
	set_make(&bs, &sb, 1);
	set_make(&hs, &sh, 1);
	memcpy(bs.s[0].v, bv, nb * sizeof *bv);
	memcpy(hs.s[0].v, hv, nh * sizeof *hv);
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
	/* "deterministic: true" alone means exactly equal; a change of the
	 * launch configuration is CHANGED, not a FAIL ... */
	const char *regs = "launch__registers_per_thread";
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", regs, 1, 3, 32, 0 },
			     (struct spec){ "k", regs, 1, 3, 40, 0 }, &r), KG_VERDICT_CHANGED);
	assert_int_equal(one(T_DEFAULT, (struct spec){ "k", regs, 1, 3, 32, 0 },
			     (struct spec){ "k", regs, 1, 3, 32, 0 }, &r), KG_VERDICT_PASS);
	/* ... unless a rule says on_change: fail */
	const char *tf = "version: 1\ndefaults:\n"
			 "  launch__registers_per_thread: { deterministic: true, on_change: fail }\n";
	assert_int_equal(one(tf, (struct spec){ "k", regs, 1, 3, 32, 0 },
			 (struct spec){ "k", regs, 1, 3, 40, 0 }, &r), KG_VERDICT_FAIL);
}

/* The launch configuration: block size 32 to 256 is "+700%" but a change of
 * its own, reported as CHANGED and counted apart; it fails nothing.  A
 * counter that is not launch configuration (local memory: spills) still
 * fails on growth. */
static void test_launch_config_changed(void **state)
{
	(void)state;
	struct kg_result r;
	const char *blk = "launch__block_size";
	const char *T_LAUNCH = "version: 1\ndefaults:\n"
			       "  launch__block_size: { deterministic: true }\n"
			       "  launch__local_mem_per_thread: { deterministic: true }\n";
	assert_int_equal(one(T_LAUNCH, (struct spec){ "k", blk, 1, 10, 32, 0 },
			     (struct spec){ "k", blk, 1, 10, 256, 0 }, &r), KG_VERDICT_CHANGED);
	assert_false(r.fails);
	assert_non_null(strstr(r.message, "launch configuration changed"));
	assert_non_null(strstr(r.message, "32 -> 256"));
	assert_int_equal(one(T_LAUNCH, (struct spec){ "k", blk, 1, 10, 256, 0 },
			     (struct spec){ "k", blk, 1, 10, 32, 0 }, &r), KG_VERDICT_CHANGED);
	const char *lm = "launch__local_mem_per_thread";
	assert_int_equal(one(T_LAUNCH, (struct spec){ "k", lm, 1, 10, 0, 0 },
			     (struct spec){ "k", lm, 1, 10, 16, 0 }, &r), KG_VERDICT_FAIL);
	/* the gate's counts and exit status */
	struct kg_thresholds *t = thresholds(T_LAUNCH);
	struct spec b = { "k", blk, 1, 10, 32, 0 }, h = { "k", blk, 1, 10, 256, 0 };
	struct kg_sampleset bs, hs;
	struct kg_gate g;
	set_make(&bs, &b, 1);
	set_make(&hs, &h, 1);
	gate_compare(t, &bs, &hs, &g);
	assert_int_equal(g.n_changed, 1);
	assert_int_equal(g.n_fail, 0);
	assert_int_equal(g.exit_status, KG_EXIT_PASS);
	gate_free(&g);
	set_free(&bs);
	set_free(&hs);
	config_free_thresholds(t);
}

/* ignore: a kernel that an entry matches is neither compared nor reported
 * missing or new; another kernel still is. */
static void test_ignore(void **state)
{
	(void)state;
	const char *ti = "version: 1\ndefaults:\n  gpu__time_duration.sum: { regression: 3% }\n"
			 "ignore:\n  - { kernel: \"regex:^gone\" }\n  - { benchmark: b, kernel: k }\n";
	struct kg_thresholds *t = thresholds(ti);
	struct spec b[2] = { { "gone", TIME, 0, 10, 1000, 0 }, { "k", TIME, 0, 10, 1000, 0 } };
	struct spec h[2] = { { "k", TIME, 0, 10, 2000, 0 }, { "kept", TIME, 0, 10, 1000, 0 } };
	struct kg_sampleset bs, hs;
	struct kg_gate g;
	set_make(&bs, b, 2);
	set_make(&hs, h, 2);
	gate_compare(t, &bs, &hs, &g);
	/* "gone" (missing) and "k" (twice as slow) ignored; "kept" is new */
	assert_int_equal(g.n, 1);
	assert_int_equal(g.r[0].verdict, KG_VERDICT_NEW);
	assert_string_equal(g.r[0].kernel, "kept");
	assert_int_equal(config_ignored(t, "b", "", "k", "k", -1), 1);
	assert_int_equal(config_ignored(t, "other", "", "k", "k", -1), 0);
	gate_free(&g);
	set_free(&bs);
	set_free(&hs);
	config_free_thresholds(t);
}

/* ignore: an entry naming a rank ignores that rank's kernel (neither
 * compared nor reported missing); the same kernel of another rank is still
 * compared. */
static void test_ignore_rank(void **state)
{
	(void)state;
	const char *ti = "version: 1\ndefaults:\n  gpu__time_duration.sum: { regression: 3% }\n"
			 "ignore:\n  - { rank: 1 }\n";
	struct kg_thresholds *t = thresholds(ti);
	struct spec b[3] = { { "gone", TIME, 0, 10, 1000, 0 }, { "k", TIME, 0, 10, 1000, 0 },
			     { "k", TIME, 0, 10, 1000, 0 } };
	struct spec h[2] = { { "k", TIME, 0, 10, 1000, 0 }, { "k", TIME, 0, 10, 1000, 0 } };
	struct kg_sampleset bs, hs;
	struct kg_gate g;
	set_make(&bs, b, 3);     /* gone, k, k: ranks 1, 0, 1 */
	set_make(&hs, h, 2);     /* k, k: ranks 0, 1; rank 1 twice as slow */
	for (size_t i = 0; i < 3; i++)
		bs.s[i].ranked = 1;
	bs.s[0].rank = bs.s[2].rank = 1;
	hs.s[0].ranked = hs.s[1].ranked = hs.s[1].rank = 1;
	for (size_t i = 0; i < hs.s[1].n; i++)
		hs.s[1].v[i] *= 2;
	gate_compare(t, &bs, &hs, &g);
	/* rank 1's "gone" (missing) and "k" (twice as slow) ignored */
	assert_int_equal(g.n, 1);
	assert_string_equal(g.r[0].kernel, "k");
	assert_int_equal(g.r[0].rank, 0);
	assert_int_equal(g.r[0].verdict, KG_VERDICT_PASS);
	gate_free(&g);
	set_free(&bs);
	set_free(&hs);
	config_free_thresholds(t);
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
		assert_non_null(strstr(g.r[i].message, "the whole interval is over it"));
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

/*
 * A kernel launched at two sizes (4 launches of 1e6 instructions, 3 of
 * 4e6): the median over all launches hides a change to the 3 larger
 * launches, or to one launch, and a launch configuration that changed for
 * some launches only.  Launch by launch, each is a FAIL that says how many
 * launches changed.
 */
static void test_deterministic_per_launch(void **state)
{
	(void)state;
	const char *m = "smsp__inst_executed.sum";
	double base[7] = { 1e6, 4e6, 1e6, 4e6, 1e6, 4e6, 1e6 };
	double head[7];
	struct kg_result r;
	memcpy(head, base, sizeof head);
	assert_int_equal(vals(T_DEFAULT, m, 1, base, 7, head, 7, &r), KG_VERDICT_PASS);
	assert_string_equal(r.message, "unchanged");
	head[1] = head[3] = head[5] = 6e6;      /* +50% on 3 of 7 */
	assert_int_equal(vals(T_DEFAULT, m, 1, base, 7, head, 7, &r), KG_VERDICT_FAIL);
	assert_non_null(strstr(r.message, "in 3 of 7 launches"));
	assert_non_null(strstr(r.message, "4000000 -> 6000000"));
	assert_float_equal(r.shift, 0.5, 1e-12);
	memcpy(head, base, sizeof head);
	head[6] = 11e6;                         /* 11x on one launch */
	assert_int_equal(vals(T_DEFAULT, m, 1, base, 7, head, 7, &r), KG_VERDICT_FAIL);
	assert_non_null(strstr(r.message, "in 1 of 7 launches"));
	/* Three baseline runs against one head run: matched by rank. */
	double base3[21];
	for (int i = 0; i < 21; i++)
		base3[i] = base[i % 7];
	memcpy(head, base, sizeof head);
	assert_int_equal(vals(T_DEFAULT, m, 1, base3, 21, head, 7, &r), KG_VERDICT_PASS);
	head[0] = 1.5e6;
	assert_int_equal(vals(T_DEFAULT, m, 1, base3, 21, head, 7, &r), KG_VERDICT_FAIL);
	/* Launch configuration under on_change: fail: a larger grid on some
	 * launches fails; a smaller one passes unless the thresholds say
	 * better: unchanged.  Without on_change it is CHANGED either way. */
	const char *grid = "launch__grid_size";
	const char *tgrid = "version: 1\ndefaults: { launch__grid_size: { deterministic: true,"
			    " on_change: fail } }\n";
	const char *tsame = "version: 1\n"
			    "defaults: { launch__grid_size: { deterministic: true, better: unchanged,"
			    " on_change: fail } }\n";
	const char *treport = "version: 1\ndefaults: { launch__grid_size: { deterministic: true } }\n";
	double gb[7] = { 128, 128, 128, 128, 4096, 4096, 4096 }, gh[7];
	memcpy(gh, gb, sizeof gh);
	gh[4] = gh[5] = gh[6] = 6144;
	assert_int_equal(vals(treport, grid, 1, gb, 7, gh, 7, &r), KG_VERDICT_CHANGED);
	assert_non_null(strstr(r.message, "in 3 of 7 launches"));
	assert_int_equal(vals(tgrid, grid, 1, gb, 7, gh, 7, &r), KG_VERDICT_FAIL);
	assert_non_null(strstr(r.message, "in 3 of 7 launches"));
	gh[4] = gh[5] = gh[6] = 2048;
	assert_int_equal(vals(tgrid, grid, 1, gb, 7, gh, 7, &r), KG_VERDICT_PASS);
	assert_non_null(strstr(r.message, "in 3 of 7 launches"));
	assert_int_equal(vals(tsame, grid, 1, gb, 7, gh, 7, &r), KG_VERDICT_FAIL);
	/* Fewer instructions in some launches: a PASS that says so. */
	memcpy(head, base, sizeof head);
	head[1] = 3e6;
	assert_int_equal(vals(T_DEFAULT, m, 1, base, 7, head, 7, &r), KG_VERDICT_PASS);
	assert_non_null(strstr(r.message, "in 1 of 7 launches"));
}

/* A counter that is 0 when the code is right: its appearance is the
 * regression, for a noisy and for a deterministic metric, and the
 * verdict shows "0 -> ...". */
static void test_zero_baseline(void **state)
{
	(void)state;
	const char *bank = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
	const char *tb = "version: 1\ndefaults:\n"
			 "  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum: { regression: 3% }\n";
	double zero[10] = { 0 }, head[10];
	struct kg_result r;
	for (int i = 0; i < 10; i++)
		head[i] = 1000 + 10 * i;
	assert_int_equal(vals(tb, bank, 0, zero, 10, head, 10, &r), KG_VERDICT_FAIL);
	assert_true(r.fails);
	assert_non_null(strstr(r.message, "0 -> "));
	assert_true(isinf(r.shift) && r.shift > 0);
	/* ... also when only some launches show it */
	double some[10] = { 0, 0, 0, 0, 700, 0, 900, 0, 800, 650 };
	double zeros40[40] = { 0 };
	double some40[40];
	for (int i = 0; i < 40; i++)
		some40[i] = some[i % 10];
	assert_int_equal(vals(tb, bank, 0, zeros40, 40, some40, 40, &r), KG_VERDICT_FAIL);
	assert_non_null(strstr(r.message, "in 16 of 40 launches"));
	/* zero against zero is no change */
	assert_int_equal(vals(tb, bank, 0, zero, 10, zero, 10, &r), KG_VERDICT_PASS);
	/* deterministic: the same */
	const char *td = "version: 1\ndefaults:\n"
			 "  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum: { deterministic: true }\n";
	assert_int_equal(vals(td, bank, 1, zero, 10, head, 10, &r), KG_VERDICT_FAIL);
	assert_non_null(strstr(r.message, "0 -> "));
}

/* Rates are noisy and most are higher-is-better: a bandwidth stored as
 * deterministic by an older kgate is still compared with statistics; IPC
 * halving is a regression. */
static void test_rates(void **state)
{
	(void)state;
	const char *bw = "dram__bytes.sum.per_second";
	const char *ipc = "smsp__inst_executed.avg.per_cycle_active";
	const char *t = "version: 1\ndefaults:\n"
			"  dram__bytes.sum.per_second: { regression: 3% }\n"
			"  smsp__inst_executed.avg.per_cycle_active: { regression: 3% }\n";
	struct kg_result r;
	/* A/A, stored as deterministic (the old flag): never compared exactly */
	for (int i = 0; i < 40; i++) {
		enum kg_verdict v = one(t, (struct spec){ "k", bw, 1, 10, 2e12, 0.01 },
					(struct spec){ "k", bw, 1, 10, 2e12, 0.01 }, &r);
		assert_int_not_equal(v, KG_VERDICT_FAIL);
		assert_false(r.deterministic);
	}
	assert_int_equal(one(t, (struct spec){ "k", ipc, 0, 20, 2.0, 0.01 },
			     (struct spec){ "k", ipc, 0, 20, 1.0, 0.01 }, &r), KG_VERDICT_FAIL);
	assert_true(r.higher_is_better);
	assert_int_equal(one(t, (struct spec){ "k", bw, 0, 20, 2e12, 0.01 },
			     (struct spec){ "k", bw, 0, 20, 1e12, 0.01 }, &r), KG_VERDICT_FAIL);
}

/* better: in the thresholds overrides the vocabulary, either way. */
static void test_better_key(void **state)
{
	(void)state;
	const char *m = "sm__ctas_launched.sum";
	const char *higher = "version: 1\ndefaults: { sm__ctas_launched.sum: { regression: 3%, better: higher } }\n";
	const char *lower = "version: 1\ndefaults: { sm__ctas_launched.sum: { regression: 3%, better: lower } }\n";
	struct kg_result r;
	assert_int_equal(one(higher, (struct spec){ "k", m, 0, 20, 100, 0.01 },
			     (struct spec){ "k", m, 0, 20, 80, 0.01 }, &r), KG_VERDICT_FAIL);
	assert_int_equal(one(lower, (struct spec){ "k", m, 0, 20, 100, 0.01 },
			     (struct spec){ "k", m, 0, 20, 80, 0.01 }, &r), KG_VERDICT_PASS);
	/* a hit rate said to be lower-is-better: a falling one passes */
	const char *hit = "lts__t_sector_hit_rate.pct";
	const char *hl = "version: 1\ndefaults: { lts__t_sector_hit_rate.pct: { regression: 3%, better: lower } }\n";
	const char *hd = "version: 1\ndefaults: { lts__t_sector_hit_rate.pct: { regression: 3% } }\n";
	assert_int_equal(one(hl, (struct spec){ "k", hit, 0, 20, 90, 0.01 },
			     (struct spec){ "k", hit, 0, 20, 60, 0.01 }, &r), KG_VERDICT_PASS);
	assert_int_equal(one(hd, (struct spec){ "k", hit, 0, 20, 90, 0.01 },
			     (struct spec){ "k", hit, 0, 20, 60, 0.01 }, &r), KG_VERDICT_FAIL);
}

/* regression: 0% on two identical runs: no change, so no FAIL (constant
 * values and noisy ones alike). */
static void test_zero_percent_identical(void **state)
{
	(void)state;
	const char *t0 = "version: 1\ndefaults: { gpu__time_duration.sum: { regression: 0% } }\n";
	double c[10], v[10];
	struct kg_result r;
	for (int i = 0; i < 10; i++) {
		c[i] = 1000;
		v[i] = 1000 + (double)(i * 37 % 11);
	}
	assert_int_equal(vals(t0, TIME, 0, c, 10, c, 10, &r), KG_VERDICT_PASS);
	assert_int_not_equal(vals(t0, TIME, 0, v, 10, v, 10, &r), KG_VERDICT_FAIL);
	/* Durations tick in 32 ns: two runs of the same code put a few more
	 * launches on the upper tick.  The test is significant, but the
	 * shift is exactly 0 (most differences are 0): no FAIL. */
	enum { N = 500 };
	double *qb = xcalloc(N, sizeof *qb), *qh = xcalloc(N, sizeof *qh);
	for (int i = 0; i < N; i++) {
		qb[i] = i % 20 < 12 ? 1000 : 1032;   /* 40% on the upper tick */
		qh[i] = i % 20 < 9 ? 1000 : 1032;    /* 55% */
	}
	assert_int_not_equal(vals(t0, TIME, 0, qb, N, qh, N, &r), KG_VERDICT_FAIL);
	assert_true(r.p < 0.001);
	assert_float_equal(r.shift, 0, 1e-12);
	free(qb);
	free(qh);
}

/*
 * The mutation test of the gate, on synthetic samples: every combination
 * of noisy or deterministic metric, zero or non-zero baseline, one or
 * three launch sizes, one or three baseline runs, and 3 to 2,000 launches
 * a side, with a known injected change: none (A/A), 10% better, 10% and
 * 50% worse (from a zero baseline: the counter appears).  A noisy change
 * is injected into every launch; a deterministic one into the launches of
 * one size only.  No A/A comparison and no improvement may FAIL; no
 * regression of 10% or more may PASS; with enough samples for alpha
 * (noisy: 10 a side, 100 when three launch sizes mix in one sample)
 * every regression FAILs.
 */
static void test_mutation(void **state)
{
	(void)state;
	const char *tt = "version: 1\n"
			 "defaults:\n"
			 "  gpu__time_duration.sum: { regression: 3% }\n"
			 "  smsp__inst_executed.sum: { regression: 0.1%, deterministic: true }\n"
			 "  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum: { regression: 3% }\n"
			 "  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum:"
			 " { deterministic: true }\n";
	static const size_t ns[] = { 3, 5, 7, 10, 20, 100, 2000 };
	static const double changes[] = { 0, -0.10, 0.10, 0.50 };
	static const double sizes[] = { 1, 4, 16 };
	struct kg_thresholds *t = thresholds(tt);
	size_t combos = 0, bad = 0;
	for (int det = 0; det <= 1; det++)
	for (int zero = 0; zero <= 1; zero++)
	for (int nsz = 1; nsz <= 3; nsz += 2)
	for (int runs = 1; runs <= 3; runs += 2)
	for (size_t in = 0; in < sizeof ns / sizeof ns[0]; in++)
	for (size_t ic = 0; ic < sizeof changes / sizeof changes[0]; ic++) {
		size_t n = ns[in], nb = n * (size_t)runs;
		double change = changes[ic];
		if (zero && change < 0)
			continue;       /* nothing is below zero */
		if (runs > 1 && n > 100)
			continue;       /* 6,000 a side adds nothing but time */
		const char *metric = det ? (zero ? "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
					   : "smsp__inst_executed.sum")
				   : (zero ? "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
				      : TIME);
		double cv = det ? 0 : 0.01, center = 1e5;
		/* Several sizes come with their launch configuration (a grid
		 * size per launch), and the change hits one size only. */
		struct spec sb[2] = { { "k", metric, det, nb, 1, 0 },
				      { "k", "launch__grid_size", 1, nb, 1, 0 } };
		struct spec sh[2] = { { "k", metric, det, n, 1, 0 },
				      { "k", "launch__grid_size", 1, n, 1, 0 } };
		struct kg_sampleset bs, hs;
		size_t ns_ = nsz > 1 ? 2 : 1;
		set_make(&bs, sb, ns_);
		set_make(&hs, sh, ns_);
		struct kg_series *mb = &bs.s[0], *mh = &hs.s[0];
		if (ns_ == 2 && strcmp(mb->metric, metric)) {
			mb = &bs.s[1];
			mh = &hs.s[1];
		}
		for (size_t i = 0; i < ns_; i++)
			if (&bs.s[i] != mb) {
				for (size_t j = 0; j < nb; j++)
					bs.s[i].v[j] = 64 * sizes[j % (size_t)nsz];
				for (size_t j = 0; j < n; j++)
					hs.s[i].v[j] = 64 * sizes[j % (size_t)nsz];
			}
		for (size_t i = 0; i < nb; i++) {
			double v = center * sizes[i % (size_t)nsz];
			mb->v[i] = zero ? 0 : cv > 0 ? v * exp(cv * normal()) : v;
		}
		for (size_t i = 0; i < n; i++) {
			double v = center * sizes[i % (size_t)nsz];
			int hit = (int)(i % (size_t)nsz) == nsz - 1;
			double c = hit ? change : 0;
			double noise = cv > 0 ? exp(cv * normal()) : 1;
			mh->v[i] = zero ? (c > 0 ? v * noise : 0) : v * (1 + c) * noise;
		}
		struct kg_gate g;
		gate_compare(t, &bs, &hs, &g);
		assert_int_equal(g.n, 1);
		enum kg_verdict v = g.r[0].verdict;
		int ok = 1;
		if (change <= 0)
			ok = v != KG_VERDICT_FAIL;
		else if (det || (nsz == 1 && n >= 10) || n >= 100)
			ok = v == KG_VERDICT_FAIL;
		else
			ok = v != KG_VERDICT_PASS;
		if (!ok && ++bad)
			print_error("%s, %s baseline, %d size(s), %d run(s), %zu a side, change %+g%%: %s (%s)\n",
				 det ? "deterministic" : "noisy", zero ? "zero" : "non-zero", nsz, runs,
				 n, 100 * change, gate_verdict_name(v), g.r[0].message);
		gate_free(&g);
		set_free(&bs);
		set_free(&hs);
		combos++;
	}
	print_message("%zu combinations\n", combos);
	assert_int_equal(bad, 0);
	assert_true(combos > 200);
	config_free_thresholds(t);
}

/* Durations of a kernel launched at two grid sizes, one of them 10%
 * slower: judged by configuration, it FAILs and says which; a
 * configuration too rarely launched to judge keeps the check from PASS. */
static void test_noisy_by_config(void **state)
{
	(void)state;
	struct kg_thresholds *t = thresholds(T_DEFAULT);
	enum { N = 40 };
	struct spec sb[2] = { { "k", TIME, 0, N, 1, 0 }, { "k", "launch__grid_size", 1, N, 1, 0 } };
	struct spec sh[2] = { { "k", TIME, 0, N, 1, 0 }, { "k", "launch__grid_size", 1, N, 1, 0 } };
	struct kg_sampleset bs, hs;
	struct kg_gate g;
	for (int rare = 0; rare <= 1; rare++) {
		set_make(&bs, sb, 2);
		set_make(&hs, sh, 2);
		/* sorted: gpu__time_duration.sum, then launch__grid_size */
		for (size_t i = 0; i < N; i++) {
			int big = rare ? i % 10 == 9 : i % 2 == 1;
			bs.s[1].v[i] = hs.s[1].v[i] = big ? 1024 : 64;
			bs.s[0].v[i] = (big ? 16000 : 1000) * exp(0.005 * normal());
			hs.s[0].v[i] = (big ? 16000 * (rare ? 1 : 1.10) : 1000) * exp(0.005 * normal());
		}
		gate_compare(t, &bs, &hs, &g);
		assert_int_equal(g.n, 1);   /* no rule for the grid size */
		if (!rare) {
			assert_int_equal(g.r[0].verdict, KG_VERDICT_FAIL);
			assert_non_null(strstr(g.r[0].message, "(launches of grid 1024)"));
			assert_true(fabs(g.r[0].shift - 0.10) < 0.01);
		} else {
			/* 4 launches of grid 1024 a side: cannot be judged */
			assert_int_equal(g.r[0].verdict, KG_VERDICT_INCONCLUSIVE);
		}
		gate_free(&g);
		set_free(&bs);
		set_free(&hs);
	}
	config_free_thresholds(t);
}

/* An outcome's counts from its rows: one counter per verdict, skips and
 * no-baseline rows as skips, and the rows that failed the check. */
static void test_outcome_count(void **state)
{
	static const enum kg_verdict v[] = {
		KG_VERDICT_FAIL, KG_VERDICT_FAIL, KG_VERDICT_PASS, KG_VERDICT_INCONCLUSIVE,
		KG_VERDICT_NEW, KG_VERDICT_MISSING, KG_VERDICT_CHANGED, KG_VERDICT_SKIP,
		KG_VERDICT_NO_BASELINE,
	};
	static const int fails[] = { 1, 1, 0, 1, 0, 1, 0, 0, 0 };
	struct kg_outcome o = { 0 };
	(void)state;

	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		verdict_outcome_count(&o, v[i], fails[i]);
	assert_int_equal(o.n_fail, 2);
	assert_int_equal(o.n_pass, 1);
	assert_int_equal(o.n_inconclusive, 1);
	assert_int_equal(o.n_new, 1);
	assert_int_equal(o.n_missing, 1);
	assert_int_equal(o.n_changed, 1);
	assert_int_equal(o.n_skip, 2);
	assert_int_equal(o.n_failing, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_distribution_passes),
		cmocka_unit_test(test_launch_config_changed),
		cmocka_unit_test(test_ignore),
		cmocka_unit_test(test_ignore_rank),
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
		cmocka_unit_test(test_deterministic_per_launch),
		cmocka_unit_test(test_zero_baseline),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_better_key),
		cmocka_unit_test(test_zero_percent_identical),
		cmocka_unit_test(test_mutation),
		cmocka_unit_test(test_noisy_by_config),
		cmocka_unit_test(test_outcome_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
