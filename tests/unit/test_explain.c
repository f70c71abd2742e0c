/*
 * test_explain.c: explain.c's explanation of one kernel, on metric maps
 * built here: the sentence names what changed, the rules table covers every
 * rule, the stored form (explain_to_json / explain_from_json) gives back the
 * same explanation, each rendering escapes what its reader would interpret,
 * and the occupancy calculator gives the CUDA calculator's figures.
 *
 * The numbers are made up to make each rule's decision plain; the rules'
 * agreement with Nsight Compute on real counters is tested end to end
 * (tests/e2e/diagnosis.t, explain.t).
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

#include "kgate/explain.h"
#include "kgate/util.h"

struct kv {
	const char *name;
	double v;
};

/* A metric map from pairs (names must come sorted, as explain's are). */
static void map_make(struct kg_metricmap *m, const struct kv *kv, size_t n)
{
	m->n = n;
	m->name = xcalloc(n, sizeof *m->name);
	m->v = xcalloc(n, sizeof *m->v);
	m->det = xcalloc(n, sizeof *m->det);
	for (size_t i = 0; i < n; i++) {
		m->name[i] = xstrdup(kv[i].name);
		m->v[i] = kv[i].v;
		m->det[i] = strncmp(kv[i].name, "gpu__time", 9) != 0;
	}
}

/* Base: coalesced 4 sectors per request; head: 32 (a transpose gone naive). */
static void sides(struct kg_metricmap *b, struct kg_metricmap *h)
{
	const struct kv base[] = {
		{ "gpu__time_duration.sum", 100000 },
		{ "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 1000 },
		{ "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 1000 },
		{ "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 4000 },
		{ "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 4000 },
		{ "launch__block_size", 256 },
		{ "launch__grid_size", 65536 },
		{ "launch__registers_per_thread", 16 },
		{ "smsp__inst_executed.sum", 1e6 },
	};
	const struct kv head[] = {
		{ "gpu__time_duration.sum", 400000 },
		{ "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 1000 },
		{ "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 1000 },
		{ "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 4000 },
		{ "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 32000 },
		{ "launch__block_size", 256 },
		{ "launch__grid_size", 65536 },
		{ "launch__registers_per_thread", 24 },
		{ "smsp__inst_executed.sum", 1e6 },
	};
	map_make(b, base, sizeof base / sizeof base[0]);
	map_make(h, head, sizeof head / sizeof head[0]);
}

static const struct kg_explain_item item = { "transpose", "step/<fwd>", "_Z8tr_tiledv", "_Z8tr_naivev",
					     "tr_tiled()", "tr_naive()" };

static const struct kg_xrow *rule(const struct kg_explanation *x, const char *id)
{
	for (size_t i = 0; i < x->n_rules; i++)
		if (!strcmp(x->rule[i].id, id))
			return &x->rule[i];
	return NULL;
}

static void test_sentence_and_rules(void **state)
{
	(void)state;
	struct kg_metricmap b, h;
	struct kg_explanation x;
	sides(&b, &h);
	int diag = explain_kernel(&item, &b, &h, explain_chip(NULL, "NVIDIA H200"), &x);
	assert_int_equal(diag, 1);
	assert_int_equal(x.diagnostics, 1);
	assert_string_equal(x.benchmark, "transpose");
	assert_string_equal(x.head_kernel, "_Z8tr_naivev");
	assert_non_null(strstr(x.why, "tr_tiled() -> tr_naive() +300% time"));   /* demangled */
	assert_string_equal(x.base_kernel, "_Z8tr_tiledv");                     /* stored mangled */
	assert_non_null(strstr(x.why, "registers/thread 16 -> 24 (+50.0%)"));
	assert_non_null(strstr(x.why, "global store sectors/request 4.0 -> 32.0 (uncoalesced)"));
	assert_non_null(strstr(x.why, "ncu rule UncoalescedGlobalAccess"));
	assert_null(strstr(x.why, "more work"));        /* the same instructions and requests */
	assert_int_equal(x.n_rules, KG_RULE_COUNT);
	const struct kg_xrow *u = rule(&x, "UncoalescedGlobalAccess");
	assert_non_null(u);
	assert_string_equal(u->base, "ok");
	assert_string_equal(u->head, "fires");
	/* 28000 of 36000 sectors excessive */
	assert_true(fabs(u->speedup - 100.0 * 28000 / 36000) < 0.1);
	assert_string_equal(rule(&x, "SharedMemoryConflicts")->head, "n/a");
	/* Counters that moved: the store sectors x8 first (deterministic). */
	assert_true(x.n_moved >= 1);
	assert_string_equal(x.moved[0].metric, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum");
	assert_null(x.note);
	explain_free(&x);
	explain_map_free(&b);
	explain_map_free(&h);
}

static void test_no_counters(void **state)
{
	(void)state;
	const struct kv t0[] = { { "gpu__time_duration.sum", 100 } };
	const struct kv t1[] = { { "gpu__time_duration.sum", 150 } };
	struct kg_metricmap b, h;
	struct kg_explanation x;
	map_make(&b, t0, 1);
	map_make(&h, t1, 1);
	const struct kg_explain_item same = { "b", "", "_Z1kv", "_Z1kv", NULL, NULL };
	assert_int_equal(explain_kernel(&same, &b, &h, NULL, &x), 0);
	/* no demangled names: the mangled one, once (the same kernel on both sides) */
	assert_string_equal(x.why, "_Z1kv +50% time: the diagnostic counters were not collected");
	explain_free(&x);
	explain_map_free(&b);
	explain_map_free(&h);
}

static void test_base_without_counters(void **state)
{
	(void)state;
	struct kg_metricmap b, h;
	struct kg_explanation x;
	const struct kv t0[] = { { "gpu__time_duration.sum", 100000 } };
	sides(&b, &h);
	explain_map_free(&b);
	map_make(&b, t0, 1);
	explain_kernel(&item, &b, &h, NULL, &x);
	assert_non_null(x.note);
	assert_non_null(strstr(x.note, "base side has no collected counters"));
	assert_string_equal(rule(&x, "UncoalescedGlobalAccess")->base, "n/a");
	explain_free(&x);
	explain_map_free(&b);
	explain_map_free(&h);
}

static void test_json_round_trip(void **state)
{
	(void)state;
	struct kg_metricmap b, h;
	struct kg_explanation x, y;
	sides(&b, &h);
	explain_kernel(&item, &b, &h, explain_chip("GH100", NULL), &x);
	char *js = explain_to_json(&x);
	assert_int_equal(explain_from_json(x.benchmark, x.nvtx, x.base_kernel, x.head_kernel, x.why, js, &y), 0);
	assert_string_equal(y.why, x.why);
	assert_string_equal(y.nvtx, "step/<fwd>");
	assert_int_equal(y.diagnostics, x.diagnostics);
	assert_int_equal(y.n_rules, x.n_rules);
	for (size_t i = 0; i < x.n_rules; i++) {
		assert_string_equal(y.rule[i].id, x.rule[i].id);
		assert_string_equal(y.rule[i].base, x.rule[i].base);
		assert_string_equal(y.rule[i].head, x.rule[i].head);
		assert_string_equal(y.rule[i].text, x.rule[i].text);
		assert_int_equal(isnan(y.rule[i].speedup), isnan(x.rule[i].speedup));
		if (!isnan(x.rule[i].speedup))
			assert_true(fabs(y.rule[i].speedup - x.rule[i].speedup) < 1e-9);
	}
	assert_int_equal(y.n_moved, x.n_moved);
	for (size_t i = 0; i < x.n_moved; i++) {
		assert_string_equal(y.moved[i].metric, x.moved[i].metric);
		assert_true(y.moved[i].base == x.moved[i].base && y.moved[i].head == x.moved[i].head);
	}
	/* The same details, rendered from either. */
	struct kg_buf r1 = KG_BUF_INIT, r2 = KG_BUF_INIT;
	explain_render(&x, KG_EXPLAIN_TEXT, &r1);
	explain_render(&y, KG_EXPLAIN_TEXT, &r2);
	assert_string_equal(r1.s, r2.s);
	buf_free(&r1);
	buf_free(&r2);
	free(js);
	explain_free(&x);
	explain_free(&y);
	explain_map_free(&b);
	explain_map_free(&h);
}

static void test_bad_json(void **state)
{
	(void)state;
	struct kg_explanation y;
	assert_int_equal(explain_from_json("b", "", "k", "k", "why", "[1,2]", &y), -1);
	assert_null(y.why);
	assert_int_equal(explain_from_json("b", "", "k", "k", "why", "{\"rules\":", &y), -1);
	assert_int_equal(explain_from_json("b", "", "k", "k", "why", NULL, &y), -1);
	/* An object with odd members: what is usable is taken, the rest skipped. */
	assert_int_equal(explain_from_json("b", "", "k", "k", "why",
					   "{\"rules\":[{\"id\":7}],\"moved\":[{\"base\":1}],\"note\":3}", &y), 0);
	assert_int_equal(y.n_rules, 1);
	assert_string_equal(y.rule[0].id, "");
	assert_true(isnan(y.rule[0].speedup));
	assert_int_equal(y.n_moved, 0);
	assert_null(y.note);
	explain_free(&y);
}

static void test_render_escapes(void **state)
{
	(void)state;
	struct kg_explanation x;
	memset(&x, 0, sizeof x);
	x.n_rules = 1;
	snprintf(x.rule[0].id, sizeof x.rule[0].id, "Rule");
	snprintf(x.rule[0].base, sizeof x.rule[0].base, "ok");
	snprintf(x.rule[0].head, sizeof x.rule[0].head, "fires");
	snprintf(x.rule[0].text, sizeof x.rule[0].text, "a|b <script>&");
	x.rule[0].speedup = 12.5;
	x.note = xstrdup("note <b>");
	struct kg_buf b = KG_BUF_INIT;
	explain_render(&x, KG_EXPLAIN_HTML, &b);
	assert_null(strstr(b.s, "<script>"));
	assert_null(strstr(b.s, "<b>"));
	assert_non_null(strstr(b.s, "&lt;script&gt;&amp;"));
	assert_non_null(strstr(b.s, "<tr class=\"fires\"><td>Rule</td>"));
	assert_non_null(strstr(b.s, "12.5%"));
	buf_reset(&b);
	explain_render(&x, KG_EXPLAIN_MARKDOWN, &b);
	assert_non_null(strstr(b.s, "a&#124;b"));      /* the pipe cannot end the cell */
	assert_null(strstr(b.s, "<script>"));
	buf_free(&b);
	free(x.note);
}

static void test_occupancy(void **state)
{
	(void)state;
	const struct kg_chip *c = explain_chip("GH100", NULL);
	const char *lim = NULL;
	assert_non_null(c);
	/* 256 threads, 32 registers: 8 warps a block, 64 warps an SM -> 8 blocks. */
	assert_int_equal(explain_blocks_per_sm(c, 256, 32, 0, &lim), 8);
	/* 255 registers: 256 * 255 rounded up per warp exceeds half the file -> 1 block. */
	assert_int_equal(explain_blocks_per_sm(c, 256, 255, 0, &lim), 1);
	assert_non_null(lim);
	/* 32-thread blocks stop at 32 blocks an SM. */
	assert_int_equal(explain_blocks_per_sm(c, 32, 16, 0, &lim), 32);
	assert_null(explain_chip("XYZ", "Some GPU"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sentence_and_rules),
		cmocka_unit_test(test_no_counters),
		cmocka_unit_test(test_base_without_counters),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_bad_json),
		cmocka_unit_test(test_render_escapes),
		cmocka_unit_test(test_occupancy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
