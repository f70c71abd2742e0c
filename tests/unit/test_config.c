/*
 * test_config.c: unit tests of config.c (suite and thresholds files).
 *
 * Good files must parse to the right values; every bad file under
 * tests/fixtures/config/ must give exactly the messages in its .err file
 * (all of them at once); the value parsers, config_rule_for() precedence
 * and kernel/NVTX matching are tested directly.
 *
 * Set KGATE_UPDATE_EXPECTED=1 to rewrite the .err files from the current
 * output (then review the diff: that is the test).
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

#include "kgate/records_format.h"
#include "kgate/config.h"
#include "kgate/metric.h"
#include "kgate/kgate.h"
#include "kgate/metricinfo.h"
#include "kgate/util.h"

#include "helpers.h"

/*
 * ---- TEST DOUBLE of metricinfo --------------------------------------------
 * The real metricinfo.c asks the CUPTI host API through the collector
 * library.  This double knows a small fixed list of base metric names and
 * rollups, so that the "valid", "invalid, with a suggestion" and "cannot
 * tell" (mi_mode = -1, no collector) paths of config.c can all be tested.
 */
static int mi_mode = 1;
static int mi_valid_calls;      /* how often metricinfo_valid() was asked */
static const char *const mi_names[] = {
	"dram__bytes", "gpu__time_duration", "sm__throughput", "smsp__inst_executed",
};
static const char *const mi_rollups[] = {
	".sum", ".avg", ".max", ".min", ".avg.pct_of_peak_sustained_elapsed",
};

const char *const metricinfo_derived[] = {
	KG_M_DURATION, KG_M_GRID, KG_M_BLOCK, KG_M_REGS, KG_M_SMEM_ST, KG_M_SMEM_DYN,
	KG_M_LOCAL, NULL,
};

int metricinfo_names(const char *chip, const char *const **names, size_t *n,
		     struct kg_buf *err)
{
	if (mi_mode < 0) {
		buf_adds(err, "test double: no collector");
		return -1;
	}
	*names = mi_names;
	*n = sizeof(mi_names) / sizeof(mi_names[0]);
	return 0;
}

int metricinfo_valid(const char *chip, const char *metric, struct kg_buf *err)
{
	const char *dot = strchr(metric, '.');
	size_t i, j, blen = dot ? (size_t)(dot - metric) : strlen(metric);

	mi_valid_calls++;
	if (mi_mode < 0)
		return -1;
	for (i = 0; i < sizeof(mi_names) / sizeof(mi_names[0]); i++) {
		if (strlen(mi_names[i]) != blen || strncmp(mi_names[i], metric, blen))
			continue;
		for (j = 0; dot && j < sizeof(mi_rollups) / sizeof(mi_rollups[0]); j++)
			if (!strcmp(dot, mi_rollups[j]))
				return 1;
	}
	return 0;
}

/* Names the double "remembers" without asking (the cache file of the real
 * one): metricinfo_valid() is not asked about them. */
static const char *mi_known_name;

int metricinfo_known(const char *chip, const char *metric)
{
	(void)chip;
	return mi_known_name && !strcmp(metric, mi_known_name);
}

int metricinfo_passes(const char *chip, const char *const *metrics, size_t n, int *passes,
		      struct kg_buf *err)
{
	buf_adds(err, "test double: no pass counts");
	return -1;
}

int metricinfo_suggest(const char *chip, const char *metric, char **out, size_t max,
		       struct kg_buf *err)
{
	buf_adds(err, "test double: no suggestions");
	return -1;
}

int metricinfo_loaded(void)
{
	return 0;
}
/*
 * The double defines every external symbol of src/metricinfo.c (checked by
 * tests/e2e/metrics.t), so the linker never takes metricinfo.o from
 * libkgate.a for this test and no symbol is defined twice.
 */
/* ---- end of the test double ---------------------------------------------- */

/* Parse text as a thresholds file named t.yaml; errs gets the messages. */
static int th(const char *text, struct kg_thresholds **t, struct kg_buf *errs)
{
	buf_reset(errs);
	return config_parse_thresholds("t.yaml", text, strlen(text), t, errs);
}

static int suite(const char *name, const char *text, struct kg_suite **s, struct kg_buf *errs)
{
	buf_reset(errs);
	return config_parse_suite(name, text, strlen(text), s, errs);
}

/* ---- good files --------------------------------------------------------- */

static const struct kg_metric_rule *find_metric(const struct kg_metric_rule *m, size_t n,
						const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(m[i].metric, name))
			return &m[i];
	return NULL;
}

static void check_default_values(const struct kg_thresholds *t)
{
	const struct kg_metric_rule *m;
	static const char *const launch[] = {
		KG_M_GRID, KG_M_BLOCK, KG_M_REGS, KG_M_SMEM_ST, KG_M_SMEM_DYN, KG_M_LOCAL,
	};
	size_t i;

	assert_true(t->alpha == 0.001);
	assert_int_equal(t->min_samples, 7);
	assert_int_equal(t->baseline_runs, 5);
	assert_int_equal(t->on_new_kernel, KG_POLICY_WARN);
	assert_int_equal(t->on_missing_kernel, KG_POLICY_FAIL);
	assert_int_equal(t->on_inconclusive, KG_POLICY_WARN);
	assert_int_equal(t->on_no_baseline, KG_POLICY_WARN);
	assert_int_equal(t->n_rules, 0);
	assert_int_equal(t->n_defaults, 8);
	m = find_metric(t->defaults, t->n_defaults, KG_M_DURATION);
	assert_non_null(m);
	assert_true(m->has_regression);
	assert_true(fabs(m->regression - 0.03) < 1e-12);
	assert_int_equal(m->deterministic, -1);
	assert_false(m->has_min || m->has_max || m->has_tolerance);
	m = find_metric(t->defaults, t->n_defaults, "smsp__inst_executed.sum");
	assert_non_null(m);
	assert_true(fabs(m->regression - 0.001) < 1e-12);
	assert_int_equal(m->deterministic, 1);
	for (i = 0; i < sizeof(launch) / sizeof(launch[0]); i++) {
		m = find_metric(t->defaults, t->n_defaults, launch[i]);
		assert_non_null(m);
		assert_int_equal(m->deterministic, 1);
		assert_false(m->has_regression);
	}
}

static void test_default_builtin(void **state)
{
	struct kg_thresholds *t = config_default_thresholds();

	check_default_values(t);
	config_free_thresholds(t);
}

/* The built-in text is the file thresholds/default.yaml, byte for byte. */
static void test_default_file_is_builtin(void **state)
{
	char *path = xasprintf("%s/thresholds/default.yaml", helper_src_dir());
	size_t len, blen;
	char *text = helper_slurp(path, &len);
	const char *builtin = config_default_thresholds_text(&blen);
	struct kg_thresholds *t = NULL;

	assert_non_null(text);
	assert_int_equal(len, blen);
	assert_memory_equal(text, builtin, len);
	assert_int_equal(config_load_thresholds(path, &t), KG_EXIT_PASS);
	check_default_values(t);
	config_free_thresholds(t);
	free(text);
	free(path);
}

static void test_examples_parse(void **state)
{
	static const char *const files[] = {
		"thresholds/example-sgemm.yaml", "thresholds/example-counters.yaml",
	};
	size_t i;

	for (i = 0; i < 2; i++) {
		char *path = xasprintf("%s/%s", helper_src_dir(), files[i]);
		struct kg_thresholds *t = NULL;
		assert_int_equal(config_load_thresholds(path, &t), KG_EXIT_PASS);
		assert_non_null(t);
		config_free_thresholds(t);
		free(path);
	}
}

static void test_example_sgemm_values(void **state)
{
	char *path = xasprintf("%s/thresholds/example-sgemm.yaml", helper_src_dir());
	struct kg_thresholds *t = NULL;
	const struct kg_rule *r;

	assert_int_equal(config_load_thresholds(path, &t), KG_EXIT_PASS);
	assert_int_equal(t->n_rules, 2);
	r = &t->rules[0];
	assert_string_equal(r->match.benchmark, "sgemm");
	assert_string_equal(r->match.kernel, "regex:^sgemm_tiled");
	assert_true(r->match.kernel_is_regex);
	assert_null(r->match.nvtx);
	assert_int_equal(r->n_metrics, 2);
	assert_true(fabs(r->metrics[0].regression - 0.02) < 1e-12);
	assert_true(r->metrics[1].has_min);
	assert_true(r->metrics[1].min == 60);
	assert_int_equal(r->line, 15);
	assert_int_equal(r->column, 5);
	r = &t->rules[1];
	assert_null(r->match.benchmark);
	assert_string_equal(r->match.nvtx, "step/forward/*");
	config_free_thresholds(t);
	free(path);
}

static void test_thresholds_values(void **state)
{
	struct kg_buf errs = KG_BUF_INIT;
	struct kg_thresholds *t = NULL;

	assert_int_equal(th("version: 1\n"
			    "statistics: { alpha: 5e-2, min_samples: 12, baseline_runs: 3 }\n"
			    "defaults:\n"
			    "  dram__bytes.sum: { min: -1.5, max: 2e3, deterministic: false }\n"
			    "  smsp__inst_executed.sum: { deterministic: true, tolerance: 0.01% }\n"
			    "on_new_kernel: ignore\n"
			    "on_missing_kernel: warn\n"
			    "on_inconclusive: fail\n"
			    "on_no_baseline: fail\n", &t, &errs), KG_EXIT_PASS);
	assert_null(errs.s);
	assert_true(t->alpha == 0.05);
	assert_int_equal(t->min_samples, 12);
	assert_int_equal(t->baseline_runs, 3);
	assert_int_equal(t->n_defaults, 2);
	assert_true(t->defaults[0].has_min && t->defaults[0].min == -1.5);
	assert_true(t->defaults[0].has_max && t->defaults[0].max == 2000);
	assert_int_equal(t->defaults[0].deterministic, 0);
	assert_int_equal(t->defaults[0].line, 4);
	assert_int_equal(t->defaults[0].column, 3);
	assert_true(t->defaults[1].has_tolerance);
	assert_true(fabs(t->defaults[1].tolerance - 0.0001) < 1e-15);
	assert_int_equal(t->on_new_kernel, KG_POLICY_IGNORE);
	assert_int_equal(t->on_missing_kernel, KG_POLICY_WARN);
	assert_int_equal(t->on_inconclusive, KG_POLICY_FAIL);
	assert_int_equal(t->on_no_baseline, KG_POLICY_FAIL);
	config_free_thresholds(t);

	/* A file that gives only the version takes the built-in scalars. */
	assert_int_equal(th("version: 1\n", &t, &errs), KG_EXIT_PASS);
	assert_true(t->alpha == 0.001);
	assert_int_equal(t->min_samples, 7);
	assert_int_equal(t->n_defaults, 0);
	assert_int_equal(t->on_missing_kernel, KG_POLICY_FAIL);
	config_free_thresholds(t);
	buf_free(&errs);
}

static void test_suite_block(void **state)
{
	char *path = xasprintf("%s/tests/fixtures/config/suite-good.yaml", helper_src_dir());
	struct kg_suite *s = NULL;
	char *dir = xasprintf("%s/tests/fixtures/config", helper_src_dir());
	const struct kg_benchmark *b;

	assert_int_equal(config_load_suite(path, &s), KG_EXIT_PASS);
	assert_string_equal(s->path, path);
	assert_string_equal(s->dir, dir);
	assert_non_null(s->thresholds);
	assert_non_null(strstr(s->thresholds, "/tests/fixtures/config/../thresholds/"
			       "example-counters.yaml"));
	assert_int_equal(s->collector.mode, KG_MODE_METRICS);
	assert_int_equal(s->collector.n_metrics, 2);
	assert_string_equal(s->collector.metrics[0],
			    "sm__throughput.avg.pct_of_peak_sustained_elapsed");
	assert_string_equal(s->collector.metrics[1], "dram__bytes.sum");
	assert_null(s->collector.metrics[2]);
	assert_string_equal(s->collector.kernels, "regex:gemm");
	assert_int_equal(s->collector.launch_skip, 2);
	assert_int_equal(s->collector.launch_count, 20);
	assert_int_equal(s->collector.replay, KG_REPLAY_APPLICATION);
	assert_int_equal(s->collector.cache_control, KG_CACHE_NONE);
	assert_int_equal(s->n_benchmarks, 2);

	b = &s->benchmarks[0];
	assert_string_equal(b->name, "saxpy");
	assert_int_equal(b->argc, 3);
	assert_string_equal(b->cmd[0], "build/benchmarks/saxpy");
	assert_string_equal(b->cmd[1], "--n");
	assert_string_equal(b->cmd[2], "67108864");
	assert_null(b->cmd[3]);
	assert_int_equal(b->repeat, 10);
	assert_int_equal(b->warmup, 1);
	assert_int_equal(b->quick_repeat, 3);
	assert_true(b->timeout_s == 60);
	assert_int_equal(b->n_env, 0);
	assert_null(b->env[0]);
	assert_null(b->workdir);
	assert_int_equal(b->line, 15);
	assert_int_equal(b->column, 5);

	b = &s->benchmarks[1];
	assert_string_equal(b->name, "sgemm");
	assert_int_equal(b->argc, 2);
	assert_string_equal(b->cmd[1], "1024");
	assert_int_equal(b->warmup, 0);
	assert_int_equal(b->quick_repeat, 2);
	assert_true(fabs(b->timeout_s - 0.25) < 1e-12);
	assert_int_equal(b->n_env, 2);
	assert_string_equal(b->env[0], "CUDA_VISIBLE_DEVICES=0");
	assert_string_equal(b->env[1], "OMP_NUM_THREADS=4");
	assert_null(b->env[2]);
	free(dir);
	dir = xasprintf("%s/tests/fixtures/config/run", helper_src_dir());
	assert_string_equal(b->workdir, dir);
	config_free_suite(s);
	free(dir);
	free(path);
}

static void test_suite_flow(void **state)
{
	struct kg_buf errs = KG_BUF_INIT;
	struct kg_suite *s = NULL;
	char *path = xasprintf("%s/tests/fixtures/config/suite-flow.yaml", helper_src_dir());
	size_t len;
	char *text = helper_slurp(path, &len);

	assert_non_null(text);
	assert_int_equal(config_parse_suite("kgate.yaml", text, len, &s, &errs), KG_EXIT_PASS);
	assert_null(errs.s);
	assert_string_equal(s->dir, ".");
	assert_null(s->thresholds);
	assert_int_equal(s->collector.mode, KG_MODE_TRACE);
	assert_null(s->collector.metrics);
	assert_int_equal(s->n_benchmarks, 1);
	assert_string_equal(s->benchmarks[0].cmd[0], "/bin/true");
	assert_true(s->benchmarks[0].timeout_s == 3600);
	config_free_suite(s);

	/* Relative paths resolve against the suite's directory. */
	assert_int_equal(suite("ci/kgate.yaml", "version: 1\nthresholds: t/x.yaml\n"
			       "benchmarks: [{name: a, cmd: [b], workdir: /abs}]\n", &s, &errs),
			 KG_EXIT_PASS);
	assert_string_equal(s->thresholds, "ci/t/x.yaml");
	assert_string_equal(s->benchmarks[0].workdir, "/abs");
	config_free_suite(s);
	free(text);
	free(path);
	buf_free(&errs);
}

/* Step replay and cache control in the collector block. */
static void test_suite_step(void **state)
{
	struct kg_buf errs = KG_BUF_INIT;
	struct kg_suite *s = NULL;

	(void)state;
	assert_int_equal(suite("kgate.yaml", "version: 1\ncollector: {mode: metrics, replay: step, "
			       "step_range: iteration, cache_control: all}\n"
			       "benchmarks: [{name: a, cmd: [b]}]\n", &s, &errs),
			 KG_EXIT_PASS);
	assert_int_equal(s->collector.replay, KG_REPLAY_STEP);
	assert_string_equal(s->collector.step_range, "iteration");
	assert_int_equal(s->collector.cache_control, KG_CACHE_ALL);
	config_free_suite(s);
	assert_int_equal(suite("kgate.yaml", "version: 1\ncollector: {mode: metrics}\n"
			       "benchmarks: [{name: a, cmd: [b]}]\n", &s, &errs),
			 KG_EXIT_PASS);
	assert_int_equal(s->collector.replay, KG_REPLAY_KERNEL);
	assert_null(s->collector.step_range);
	assert_int_equal(s->collector.cache_control, KG_CACHE_UNSET);
	config_free_suite(s);
	assert_int_not_equal(suite("kgate.yaml", "version: 1\ncollector: {mode: metrics, "
				   "cache_control: some, step_range: \"\"}\n"
				   "benchmarks: [{name: a, cmd: [b]}]\n", &s, &errs),
			     KG_EXIT_PASS);
	assert_non_null(strstr(errs.s, "cache_control"));
	assert_non_null(strstr(errs.s, "'step_range' must not be empty"));
	buf_free(&errs);
}

/* ---- bad files: exact messages ----------------------------------------- */

static const char *const bad_fixtures[] = {
	"th-ignore",
	"th-unknown-key", "th-types", "th-duplicate", "th-enum", "th-version",
	"th-version-missing", "th-regex", "th-values", "th-metric", "th-syntax", "th-tab",
	"th-alias", "th-empty", "th-rules", "th-toplevel-list", "th-two-docs", "th-utf8", "th-regex-empty", "th-regex-size",
	"th-regex-backref",
	"suite-errors", "suite-missing", "suite-collector",
};

static void test_bad_fixtures(void **state)
{
	size_t i;
	int failed = 0;

	for (i = 0; i < sizeof(bad_fixtures) / sizeof(bad_fixtures[0]); i++) {
		const char *name = bad_fixtures[i];
		char *ypath = xasprintf("%s/tests/fixtures/config/%s.yaml", helper_src_dir(), name);
		char *epath = xasprintf("%s/tests/fixtures/config/%s.err", helper_src_dir(), name);
		char *label = xasprintf("%s.yaml", name);
		struct kg_buf errs = KG_BUF_INIT;
		size_t len;
		char *text = helper_slurp(ypath, &len), *want;
		int rc;

		assert_non_null(text);
		if (!strncmp(name, "suite-", 6)) {
			struct kg_suite *s = NULL;
			rc = config_parse_suite(label, text, len, &s, &errs);
			assert_null(s);
		} else {
			struct kg_thresholds *t = NULL;
			rc = config_parse_thresholds(label, text, len, &t, &errs);
			assert_null(t);
		}
		assert_int_equal(rc, KG_EXIT_USAGE);
		assert_non_null(errs.s);
		if (getenv("KGATE_UPDATE_EXPECTED")) {
			FILE *f = fopen(epath, "w");
			assert_non_null(f);
			fputs(errs.s, f);
			fclose(f);
		}
		want = helper_slurp(epath, NULL);
		assert_non_null(want);
		if (strcmp(want, errs.s)) {
			print_error("%s: expected:\n%s\ngot:\n%s\n", name, want, errs.s);
			failed++;
		}
		free(want);
		free(text);
		buf_free(&errs);
		free(label);
		free(epath);
		free(ypath);
	}
	assert_int_equal(failed, 0);
}

/* The messages the brief names, checked inline as well. */
static void test_messages_inline(void **state)
{
	struct kg_buf errs = KG_BUF_INIT;
	struct kg_thresholds *t = NULL;

	assert_int_equal(th("version: 1\ndefaults:\n  gpu__time_duration.sum: { regresion: 3% }\n",
			    &t, &errs), KG_EXIT_USAGE);
	assert_string_equal(errs.s, "t.yaml:3:29: unknown key 'regresion'; did you mean "
			    "'regression'?\n");
	assert_int_equal(th("version: 1\non_new_kernel: warning\n", &t, &errs), KG_EXIT_USAGE);
	assert_string_equal(errs.s, "t.yaml:2:16: 'on_new_kernel' must be ignore, warn or fail, "
			    "got 'warning'; did you mean 'warn'?\n");
	assert_int_equal(th("version: 1\ndefaults:\n  gpu__time_duration.sum: { better: lowr }\n",
			    &t, &errs), KG_EXIT_USAGE);
	assert_string_equal(errs.s, "t.yaml:3:37: 'better' must be lower, higher or unchanged, "
			    "got 'lowr'; did you mean 'lower'?\n");
	assert_int_equal(th("version: 1\non_no_baseline: ignore\n", &t, &errs), KG_EXIT_USAGE);
	assert_string_equal(errs.s, "t.yaml:2:17: 'on_no_baseline' must be fail or warn, "
			    "got 'ignore'\n");
	assert_int_equal(th("version: 3\n", &t, &errs), KG_EXIT_USAGE);
	assert_string_equal(errs.s, "t.yaml:1:10: unknown version 3 (this kgate reads "
			    "version 1)\n");
	assert_int_equal(th("version: 1\nstatistics: { min_samples: 7.5 }\n", &t, &errs),
			 KG_EXIT_USAGE);
	assert_string_equal(errs.s, "t.yaml:2:28: 'min_samples' must be an integer from 3 to "
			    "1000000, got '7.5'\n");
	assert_int_equal(th("version: 1\nversion: 1\n", &t, &errs), KG_EXIT_USAGE);
	assert_string_equal(errs.s, "t.yaml:2:1: duplicate key 'version' (first given at "
			    "line 1)\n");
	assert_int_equal(th("defaults: {}\n", &t, &errs), KG_EXIT_USAGE);
	assert_string_equal(errs.s, "t.yaml:1:1: missing required key 'version'\n");
	assert_int_equal(th("version: 1\nrules:\n  - match: { kernel: \"regex:a(\" }\n"
			    "    metrics: {}\n", &t, &errs), KG_EXIT_USAGE);
	assert_string_equal(errs.s, "t.yaml:3:22: invalid regular expression 'a(': "
			    "Unmatched ( or \\(\n");
	assert_int_equal(th("version: 1\ndefaults: { a: 1\n", &t, &errs), KG_EXIT_USAGE);
	assert_non_null(strstr(errs.s, "syntax error: "));
	assert_int_equal(strncmp(errs.s, "t.yaml:3:1: ", 12), 0);
	assert_null(t);
	buf_free(&errs);
}

/* Several errors come back together, sorted by position. */
static void test_multiple_errors(void **state)
{
	struct kg_buf errs = KG_BUF_INIT;
	struct kg_thresholds *t = NULL;

	assert_int_equal(th("on_inconclusive: nope\n"
			    "statistics: { alpha: 0 }\n"
			    "defaults:\n"
			    "  gpu__time_duration.sum: { regression: 3 }\n", &t, &errs),
			 KG_EXIT_USAGE);
	assert_string_equal(errs.s,
		"t.yaml:1:1: missing required key 'version'\n"
		"t.yaml:1:18: 'on_inconclusive' must be ignore, warn or fail, got 'nope'\n"
		"t.yaml:2:22: 'alpha' must be a number greater than 0 and at most 0.5, got '0'\n"
		"t.yaml:4:41: 'regression' must be a percentage from 0% to 1000% such as 3% or "
		"0.5%, got '3'\n");
	buf_free(&errs);
}

static void test_depth_cap(void **state)
{
	struct kg_buf text = KG_BUF_INIT, errs = KG_BUF_INIT;
	struct kg_thresholds *t = NULL;
	int i;

	buf_adds(&text, "version: 1\nx: ");
	for (i = 0; i < 40; i++)
		buf_addc(&text, '[');
	for (i = 0; i < 40; i++)
		buf_addc(&text, ']');
	buf_addc(&text, '\n');
	assert_int_equal(th(text.s, &t, &errs), KG_EXIT_USAGE);
	/* The root mapping is level 1, so the 32nd '[' (column 35) is level 33. */
	assert_string_equal(errs.s, "t.yaml:2:35: nesting deeper than 32 levels\n");

	/* 31 levels under the root are fine for the parser (the schema then
	 * rejects the unknown key). */
	buf_reset(&text);
	buf_adds(&text, "version: 1\nx: ");
	for (i = 0; i < 31; i++)
		buf_addc(&text, '[');
	for (i = 0; i < 31; i++)
		buf_addc(&text, ']');
	assert_int_equal(th(text.s, &t, &errs), KG_EXIT_USAGE);
	assert_null(strstr(errs.s, "nesting"));
	assert_non_null(strstr(errs.s, "unknown key 'x'"));
	buf_free(&text);
	buf_free(&errs);
}

static void test_node_cap(void **state)
{
	struct kg_buf text = KG_BUF_INIT, errs = KG_BUF_INIT;
	struct kg_thresholds *t = NULL;
	size_t i;

	buf_adds(&text, "version: 1\nx: [");
	for (i = 0; i < KG_CONFIG_MAX_NODES; i++)
		buf_adds(&text, "1,");
	buf_adds(&text, "1]\n");
	assert_int_equal(th(text.s, &t, &errs), KG_EXIT_USAGE);
	assert_null(t);
	assert_int_equal(strncmp(errs.s, "t.yaml:2:", 9), 0);
	assert_non_null(strstr(errs.s, ": more than 262144 values in one file\n"));
	assert_null(strchr(errs.s, '\n')[1] ? "more than one message" : NULL);
	buf_free(&text);
	buf_free(&errs);
}

static void test_size_cap(void **state)
{
	size_t n = KG_CONFIG_MAX_BYTES + 1;
	char *big = xmalloc(n + 1);
	struct kg_buf errs = KG_BUF_INIT;
	struct kg_thresholds *t = NULL;

	memset(big, '#', n);
	memcpy(big, "version: 1\n", 11);
	big[n] = 0;
	assert_int_equal(config_parse_thresholds("big.yaml", big, n, &t, &errs),
			 KG_EXIT_USAGE);
	assert_string_equal(errs.s, "big.yaml:1:1: the file is larger than 4 MiB\n");
	/* One byte less (a comment) is accepted. */
	buf_reset(&errs);
	big[n - 1] = '\n';
	assert_int_equal(config_parse_thresholds("big.yaml", big, n - 1, &t, &errs),
			 KG_EXIT_PASS);
	config_free_thresholds(t);
	free(big);
	buf_free(&errs);
}

static void test_missing_file(void **state)
{
	struct kg_thresholds *t = (void *)1;
	struct kg_suite *s = (void *)1;

	assert_int_equal(config_load_thresholds("/nonexistent/t.yaml", &t), KG_EXIT_USAGE);
	assert_null(t);
	assert_int_equal(config_load_suite("/nonexistent/kgate.yaml", &s), KG_EXIT_USAGE);
	assert_null(s);
}

/* ---- metric names -------------------------------------------------------- */

/* A name the cache of confirmed names knows is accepted without asking the
 * collector (which would load CUPTI); others are still asked. */
static void test_metric_known_not_asked(void **state)
{
	struct kg_buf errs = KG_BUF_INIT;
	struct kg_thresholds *t = NULL;

	(void)state;
	mi_known_name = "smsp__inst_executed.sum";
	mi_valid_calls = 0;
	assert_int_equal(th("version: 1\ndefaults:\n  smsp__inst_executed.sum: { min: 1 }\n",
			    &t, &errs), KG_EXIT_PASS);
	assert_int_equal(mi_valid_calls, 0);
	config_free_thresholds(t);
	assert_int_equal(th("version: 1\ndefaults:\n  dram__bytes.sum: { min: 1 }\n", &t, &errs),
			 KG_EXIT_PASS);
	assert_int_equal(mi_valid_calls, 1);
	config_free_thresholds(t);
	mi_known_name = NULL;
	buf_free(&errs);
}

static void test_metric_cannot_tell(void **state)
{
	struct kg_buf errs = KG_BUF_INIT;
	struct kg_thresholds *t = NULL;

	mi_mode = -1;
	/* Without the collector: names of the right form pass... */
	assert_int_equal(th("version: 1\ndefaults:\n  made__up.sum: { min: 1 }\n"
			    "  launch__grid_size: { deterministic: true }\n", &t, &errs),
			 KG_EXIT_PASS);
	assert_int_equal(t->n_defaults, 2);
	config_free_thresholds(t);
	/* ...and others do not. */
	assert_int_equal(th("version: 1\ndefaults:\n  Bad-Name: { min: 1 }\n"
			    "  nounderscores.sum: { min: 1 }\n", &t, &errs), KG_EXIT_USAGE);
	assert_string_equal(errs.s,
		"t.yaml:3:3: 'Bad-Name' is not a metric name (expected unit__name.rollup, such "
		"as gpu__time_duration.sum)\n"
		"t.yaml:4:3: 'nounderscores.sum' is not a metric name (expected "
		"unit__name.rollup, such as gpu__time_duration.sum)\n");
	mi_mode = 1;
	/* With it, made__up.sum is unknown. */
	assert_int_equal(th("version: 1\ndefaults:\n  made__up.sum: { min: 1 }\n", &t, &errs),
			 KG_EXIT_USAGE);
	assert_non_null(strstr(errs.s, "unknown metric 'made__up.sum'"));
	buf_free(&errs);
}

/* ---- value parsers -------------------------------------------------------- */

static void test_parse_percent(void **state)
{
	static const char *const bad[] = {
		"3", "3 %", " 3%", "3% ", "-1%", "+1%", "abc", "1e999%", "1e2%", "%", ".5%",
		"5.%", "3%%", "3%x", "0x10%", "1000.0001%", "1001%", "nan%", "inf%", "",
		"99999999999999999999999999999999999999999999999999999999999999999999999%",
	};
	double v = -1;
	size_t i;

	assert_int_equal(config_parse_percent("3%", &v), 0);
	assert_true(fabs(v - 0.03) < 1e-15);
	assert_int_equal(config_parse_percent("0.5%", &v), 0);
	assert_true(fabs(v - 0.005) < 1e-15);
	assert_int_equal(config_parse_percent("0%", &v), 0);
	assert_true(v == 0);
	assert_int_equal(config_parse_percent("1000%", &v), 0);
	assert_true(v == 10);
	assert_int_equal(config_parse_percent("007%", &v), 0);
	assert_true(fabs(v - 0.07) < 1e-15);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = -7;
		if (config_parse_percent(bad[i], &v) != -1)
			fail_msg("percent '%s' was accepted", bad[i]);
		assert_true(v == -7);
	}
	assert_int_equal(config_parse_percent(NULL, &v), -1);
}

static void test_parse_duration(void **state)
{
	static const struct { const char *s; double secs; } good[] = {
		{ "60s", 60 }, { "5m", 300 }, { "1h", 3600 }, { "250ms", 0.25 },
		{ "30d", 2592000 }, { "1.5h", 5400 }, { "0s", 0 },
	};
	static const char *const bad[] = {
		"60", "60 s", " 60s", "60s ", "-1s", "+1s", "abc", "1e3s", "s", "5M", "5min",
		"1hh", "1.s", ".5s", "5sm", "", "1e999s", "ms",
		"9999999999999999999999999999999999999999999999999999999999999999999999999"
		"9999999999999999999999999999999999999999999999999999999999999999999999999"
		"9999999999999999999999999999999999999999999999999999999999999999999999999"
		"9999999999999999999999999999999999999999999999999999999999999999999999999"
		"9999999999999999999999999999999999999999999999999999999999999999999999999d",
	};
	double v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = -1;
		assert_int_equal(config_parse_duration(good[i].s, &v), 0);
		assert_true(fabs(v - good[i].secs) < 1e-9);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = -7;
		if (config_parse_duration(bad[i], &v) != -1)
			fail_msg("duration '%s' was accepted", bad[i]);
		assert_true(v == -7);
	}
}

/* ---- rule lookup ------------------------------------------------------------ */

static const char *const rules_yaml =
	"version: 1\n"
	"defaults:\n"
	"  gpu__time_duration.sum: { regression: 3%, max: 1000 }\n"
	"  smsp__inst_executed.sum: { regression: 0.1%, deterministic: true }\n"
	"rules:\n"
	"  - match: { benchmark: sgemm }\n"
	"    metrics: { gpu__time_duration.sum: { regression: 2% } }\n"
	"  - match: { benchmark: sgemm, kernel: \"regex:^_Z11sgemm_tiled\" }\n"
	"    metrics:\n"
	"      gpu__time_duration.sum: { regression: 1% }\n"
	"      sm__throughput.avg.pct_of_peak_sustained_elapsed: { min: 60 }\n"
	"  - match: { kernel: \"regex:^sgemm_naive\\\\(\" }\n"
	"    metrics: { gpu__time_duration.sum: { regression: 10% } }\n"
	"  - match: { kernel: \"saxpy(float, float const*, float*, int)\" }\n"
	"    metrics: { gpu__time_duration.sum: { min: 5 } }\n"
	"  - match: { nvtx: \"step/forward/*\" }\n"
	"    metrics: { smsp__inst_executed.sum: { deterministic: false } }\n"
	"  - match: { benchmark: sgemm, nvtx: \"step/?ackward\" }\n"
	"    metrics: { gpu__time_duration.sum: { regression: 7% } }\n";

/* better: given under defaults, overridden field by field in a rule. */
#define T_SM "sm__throughput.avg.pct_of_peak_sustained_elapsed"
static void test_better_rule(void **state)
{
	(void)state;
	struct kg_buf errs = KG_BUF_INIT;
	struct kg_thresholds *t = NULL;
	struct kg_metric_rule r;
	assert_int_equal(th("version: 1\n"
			    "defaults:\n"
			    "  sm__throughput.avg.pct_of_peak_sustained_elapsed: { regression: 3%, better: higher }\n"
			    "rules:\n"
			    "  - match: { benchmark: odd }\n"
			    "    metrics:\n"
			    "      sm__throughput.avg.pct_of_peak_sustained_elapsed: { better: lower }\n",
			    &t, &errs), KG_EXIT_PASS);
	assert_int_equal(config_rule_for(t, "b", NULL, "k", NULL, T_SM, &r), 1);
	assert_int_equal(r.better, KG_BETTER_HIGHER);
	assert_int_equal(config_rule_for(t, "odd", NULL, "k", NULL, T_SM, &r), 1);
	assert_int_equal(r.better, KG_BETTER_LOWER);
	assert_true(fabs(r.regression - 0.03) < 1e-12);
	assert_int_equal(config_rule_for(t, "b", NULL, "k", NULL, "gpu__time_duration.sum", &r), 0);
	assert_int_equal(r.better, 0);
	config_free_thresholds(t);
	buf_free(&errs);
}

/* kernel_name_base: a rule's kernel against the one name it says. */
static void test_name_base(void **state)
{
	static const char *const mangled = "_Z8tr_tiledILi32EEvPKfPfii";
	static const char *const dem = "void tr_tiled<32>(float const*, float*, int, int)";
	static const struct {
		const char *base, *kernel;
		int fits_mangled_key, fits_demangled_key;
	} cases[] = {
		{ "", "regex:^tr_tiled", 0, 0 },       /* any name: neither begins so */
		{ "", "regex:tr_tiled<32>", 1, 1 },
		{ "kernel_name_base: function\n", "regex:^tr_tiled$", 1, 1 },
		{ "kernel_name_base: function\n", "tr_tiled", 1, 1 },
		{ "kernel_name_base: demangled\n", "regex:^_Z8", 0, 0 },
		{ "kernel_name_base: demangled\n", "regex:^void tr_tiled<32>", 1, 1 },
		{ "kernel_name_base: mangled\n", "regex:^_Z8tr_tiled", 1, 0 },
		{ "kernel_name_base: mangled\n", "regex:tr_tiled<32>", 0, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kg_buf errs = KG_BUF_INIT;
		struct kg_thresholds *t = NULL;
		struct kg_metric_rule r;
		char *y = xasprintf("version: 1\n%srules:\n  - match: { kernel: \"%s\" }\n"
				    "    metrics: { gpu__time_duration.sum: { regression: 7%% } }\n",
				    cases[i].base, cases[i].kernel);
		assert_int_equal(th(y, &t, &errs), KG_EXIT_PASS);
		/* a collector's key (mangled, with its demangled form), an ncu key
		 * (demangled only) */
		if (config_rule_for(t, "b", NULL, mangled, dem, "gpu__time_duration.sum", &r) !=
		    cases[i].fits_mangled_key)
			fail_msg("case %zu (%s%s): mangled key", i, cases[i].base, cases[i].kernel);
		if (config_rule_for(t, "b", NULL, dem, dem, "gpu__time_duration.sum", &r) !=
		    cases[i].fits_demangled_key)
			fail_msg("case %zu (%s%s): demangled key", i, cases[i].base, cases[i].kernel);
		config_free_thresholds(t);
		buf_free(&errs);
		free(y);
	}
	struct kg_buf errs = KG_BUF_INIT;
	struct kg_thresholds *t = NULL;
	assert_int_equal(th("version: 1\nkernel_name_base: base\n", &t, &errs), KG_EXIT_USAGE);
	assert_non_null(strstr(errs.s, "kernel_name_base"));
	buf_free(&errs);
}

static void test_rule_for(void **state)
{
	struct kg_buf errs = KG_BUF_INIT;
	struct kg_thresholds *t = NULL;
	struct kg_metric_rule r;

	assert_int_equal(th(rules_yaml, &t, &errs), KG_EXIT_PASS);

	/* No rule matches: the defaults entry. */
	assert_int_equal(config_rule_for(t, "saxpy", NULL, "_Z5saxpyfPKfPfi", NULL,
					 "gpu__time_duration.sum", &r), 1);
	assert_string_equal(r.metric, "gpu__time_duration.sum");
	assert_true(fabs(r.regression - 0.03) < 1e-12);
	assert_true(r.has_max && r.max == 1000);
	assert_int_equal(r.line, 3);

	/* benchmark rule overrides regression only; max stays from defaults. */
	assert_int_equal(config_rule_for(t, "sgemm", NULL, "_Z10other_kerv", NULL,
					 "gpu__time_duration.sum", &r), 1);
	assert_true(fabs(r.regression - 0.02) < 1e-12);
	assert_true(r.has_max && r.max == 1000);
	assert_int_equal(r.line, 7);

	/* Two rules match: the later one wins. */
	assert_int_equal(config_rule_for(t, "sgemm", NULL, "_Z11sgemm_tiledPKfS0_Pfi",
					 "sgemm_tiled(float const*, float const*, float*, int)",
					 "gpu__time_duration.sum", &r), 1);
	assert_true(fabs(r.regression - 0.01) < 1e-12);
	/* Metric only in a rule. */
	assert_int_equal(config_rule_for(t, "sgemm", NULL, "_Z11sgemm_tiledPKfS0_Pfi", NULL,
					 "sm__throughput.avg.pct_of_peak_sustained_elapsed", &r), 1);
	assert_true(r.has_min && r.min == 60);
	assert_false(r.has_regression);
	assert_int_equal(config_rule_for(t, "saxpy", NULL, "_Z11sgemm_tiledPKfS0_Pfi", NULL,
					 "sm__throughput.avg.pct_of_peak_sustained_elapsed", &r), 0);
	assert_null(r.metric);

	/* Regex on the demangled name only. */
	assert_int_equal(config_rule_for(t, "any", NULL, "_Z11sgemm_naivePf",
					 "sgemm_naive(float*)", "gpu__time_duration.sum", &r), 1);
	assert_true(fabs(r.regression - 0.10) < 1e-12);
	assert_int_equal(config_rule_for(t, "any", NULL, "_Z11sgemm_naivePf", NULL,
					 "gpu__time_duration.sum", &r), 1);
	assert_true(fabs(r.regression - 0.03) < 1e-12);

	/* Exact kernel name: demangled, or mangled, but not a prefix. */
	config_rule_for(t, "b", NULL, "x", "saxpy(float, float const*, float*, int)",
			"gpu__time_duration.sum", &r);
	assert_true(r.has_min && r.min == 5);
	config_rule_for(t, "b", NULL, "saxpy(float, float const*, float*, int)", NULL,
			"gpu__time_duration.sum", &r);
	assert_true(r.has_min);
	config_rule_for(t, "b", NULL, "saxpy", "saxpy(float", "gpu__time_duration.sum", &r);
	assert_false(r.has_min);

	/* NVTX glob; no NVTX path never matches a rule that asks for one. */
	assert_int_equal(config_rule_for(t, "b", "step/forward/attn", "k", NULL,
					 "smsp__inst_executed.sum", &r), 1);
	assert_int_equal(r.deterministic, 0);
	assert_true(r.has_regression);
	config_rule_for(t, "b", "step/forward/attn/qk", "k", NULL, "smsp__inst_executed.sum", &r);
	assert_int_equal(r.deterministic, 0); /* '*' also matches '/' */
	config_rule_for(t, "b", "step/forward", "k", NULL, "smsp__inst_executed.sum", &r);
	assert_int_equal(r.deterministic, 1);
	config_rule_for(t, "b", "step/backward/attn", "k", NULL, "smsp__inst_executed.sum", &r);
	assert_int_equal(r.deterministic, 1);
	config_rule_for(t, "b", NULL, "k", NULL, "smsp__inst_executed.sum", &r);
	assert_int_equal(r.deterministic, 1);
	config_rule_for(t, "sgemm", "step/backward", "k", NULL, "gpu__time_duration.sum", &r);
	assert_true(fabs(r.regression - 0.07) < 1e-12);
	config_rule_for(t, "sgemm", "step/backward/x", "k", NULL, "gpu__time_duration.sum", &r);
	assert_true(fabs(r.regression - 0.02) < 1e-12);
	config_rule_for(t, "other", "step/backward", "k", NULL, "gpu__time_duration.sum", &r);
	assert_true(fabs(r.regression - 0.03) < 1e-12);

	/* An unknown metric has no rule. */
	assert_int_equal(config_rule_for(t, "sgemm", NULL, "k", NULL, "dram__bytes.sum", &r), 0);
	assert_int_equal(r.deterministic, -1);
	config_free_thresholds(t);

	/* A rule may refine the tolerance of a deterministic default... */
	assert_int_equal(th("version: 1\n"
			    "defaults: { smsp__inst_executed.sum: { deterministic: true } }\n"
			    "rules: [ { match: { benchmark: b }, metrics: { smsp__inst_executed.sum: "
			    "{ tolerance: 0.5% } } } ]\n", &t, &errs), KG_EXIT_PASS);
	assert_int_equal(config_rule_for(t, "b", NULL, "k", NULL, "smsp__inst_executed.sum", &r),
			 1);
	assert_int_equal(r.deterministic, 1);
	assert_true(r.has_tolerance && fabs(r.tolerance - 0.005) < 1e-15);
	config_rule_for(t, "c", NULL, "k", NULL, "smsp__inst_executed.sum", &r);
	assert_false(r.has_tolerance);
	config_free_thresholds(t);
	/* ...but not together with deterministic: false. */
	assert_int_equal(th("version: 1\n"
			    "rules: [ { match: {}, metrics: { smsp__inst_executed.sum: "
			    "{ tolerance: 0.5%, deterministic: false } } } ]\n", &t, &errs),
			 KG_EXIT_USAGE);
	assert_string_equal(errs.s, "t.yaml:2:59: 'tolerance' applies only with "
			    "deterministic: true\n");

	/* deterministic: false alone sets no limit. */
	assert_int_equal(th("version: 1\ndefaults: { dram__bytes.sum: { deterministic: false } }\n",
			    &t, &errs), KG_EXIT_PASS);
	assert_int_equal(config_rule_for(t, "b", NULL, "k", NULL, "dram__bytes.sum", &r), 0);
	assert_int_equal(r.deterministic, 0);
	config_free_thresholds(t);
	buf_free(&errs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_builtin),
		cmocka_unit_test(test_default_file_is_builtin),
		cmocka_unit_test(test_examples_parse),
		cmocka_unit_test(test_example_sgemm_values),
		cmocka_unit_test(test_thresholds_values),
		cmocka_unit_test(test_suite_block),
		cmocka_unit_test(test_suite_flow),
		cmocka_unit_test(test_suite_step),
		cmocka_unit_test(test_bad_fixtures),
		cmocka_unit_test(test_messages_inline),
		cmocka_unit_test(test_multiple_errors),
		cmocka_unit_test(test_depth_cap),
		cmocka_unit_test(test_node_cap),
		cmocka_unit_test(test_size_cap),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_metric_cannot_tell),
		cmocka_unit_test(test_metric_known_not_asked),
		cmocka_unit_test(test_parse_percent),
		cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_rule_for),
		cmocka_unit_test(test_name_base),
		cmocka_unit_test(test_better_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
