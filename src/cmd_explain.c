/*
 * cmd_explain.c: "kgate explain": say why the FAILed kernels of a check
 * regressed, from the counters stored for both sides.
 *
 * The head and baseline are chosen as "kgate check" chooses them
 * (check_pick_baseline); the gate names the failed kernels, a kernel
 * MISSING in head and one NEW in the same benchmark and NVTX path are
 * explained as one replaced by the other; explain.c does the analysis.
 *
 * When the stored runs lack the diagnostic counters, --collect runs the
 * benchmark of each such kernel once more (no warmup, one repeat) under the
 * collector in metrics mode, restricted to those kernels (a "regex:" of
 * their exact names) and --launches launches, the head side from the suite
 * of the current tree and, with --base-dir, the base side from that
 * checkout's suite.  What was collected goes into a scratch database in the
 * suiterun scratch directory, never into the user's database (a later
 * "kgate check" would take it for the newest run), and fills the metrics
 * the stored samples lack.  Without --collect the command prints what to
 * collect and how.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "kgate/escape.h"
#include "kgate/check.h"
#include "kgate/records_format.h"
#include "kgate/config.h"
#include "kgate/explain.h"
#include "kgate/gate.h"
#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/output.h"
#include "kgate/runner.h"
#include "kgate/store.h"
#include "kgate/suiterun.h"
#include "kgate/util.h"

static const char synopsis[] =
	"usage: kgate explain [--db PATH] [--commit SHA] [--baseline REF] [-t F] [-c F]\n"
	"                     [--format text|markdown|json] [--pair BASE=HEAD]...\n"
	"                     [--collect [--base-dir DIR] [--launches N]]\n"
	"                     [--no-store]\n"
	"                     [KERNEL...]\n"
	"\n"
	"Say why kernels regressed, from the counters stored for the head run and\n"
	"its baseline (chosen as 'kgate check' chooses them): Nsight Compute's\n"
	"rules on each side (bottleneck, grid, tail effect, occupancy, issue\n"
	"slots, stalls, uncoalesced global access, bank conflicts) and the\n"
	"counters that moved.  By default every FAILed kernel is explained, and a\n"
	"kernel MISSING in head paired with the NEW one of the same benchmark and\n"
	"NVTX path (a kernel replaced by another).\n";

static const char epilogue[] =
	"Without --collect, when the stored runs lack the diagnostic counters, it\n"
	"names them and the suite setting that collects them.  Exit status: 0\n"
	"done; 2 bad usage, suite or no head run; 3 a benchmark failed under\n"
	"--collect, or a database error.\n";

/* the formats of explain, a part of enum kg_format's */
static const char *const formats[] = { "text", "markdown", "json", NULL };

struct ex_args {
	const char *db, *commit, *baseline, *thresholds;
	enum kg_format format;
	char **pairs;
	size_t n_pairs;
	char **kernels;
	size_t n_kernels;
	int collect, no_store;
	const char *cfg, *base_dir;   /* cfg NULL: not given */
	long launches;
};

/* --pair BASE=HEAD */
static int add_pair(const struct kg_opt *o, const char *arg)
{
	struct ex_args *a = o->ctx;
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1]) {
		kg_error("--pair needs BASE=HEAD, not '%s'", arg);
		return KG_EXIT_USAGE;
	}
	a->pairs = xrealloc(a->pairs, (a->n_pairs + 1) * sizeof *a->pairs);
	a->pairs[a->n_pairs++] = (char *)arg;
	return KG_EXIT_PASS;
}

static int parse(int argc, char **argv, struct ex_args *a)
{
	int format = 0, argi;
	long launches = 0;
	const struct kg_opt opts[] = {
		KG_OPT_DB(&a->db),
		KG_OPT_STR("commit", 0, "SHA", &a->commit,
			   "the head commit (default: git rev-parse HEAD)"),
		KG_OPT_STR("baseline", 0, "REF", &a->baseline,
			   "a stored commit or a git ref (default as kgate check)"),
		KG_OPT_CHOICE("format", 0, "F", &format, formats, "text (default), markdown or json"),
		KG_OPT_CALL("pair", 0, "B=H", add_pair, a,
			    "explain base kernel B against head kernel H (any of their mangled, "
			    "demangled or base names)"),
		KG_OPT_FLAG("collect", 0, &a->collect,
			    "when the stored runs lack the diagnostic counters, run the benchmarks "
			    "of those kernels once more under the collector in metrics mode, for "
			    "those kernels only, and explain from what they collected (the counters "
			    "are not stored in --db)"),
		KG_OPT_STR("thresholds", 't', "F", &a->thresholds,
			   "thresholds that decide which kernels failed (default: the suite's, else "
			   "the built-in thresholds, as check)"),
		KG_OPT_STR("config", 'c', "FILE", &a->cfg,
			   "the suite (default kgate.yaml, when it exists): its thresholds, and with "
			   "--collect the head side's benchmarks"),
		KG_OPT_STR("base-dir", 0, "DIR", &a->base_dir,
			   "with --collect: a checkout (built) of the baseline; its suite (-c, "
			   "relative to DIR) collects the base side too (default: the base side has "
			   "only what is stored)"),
		KG_OPT_LONG("launches", 0, "N", &launches, 1, LONG_MAX,
			    "with --collect: launches profiled per kernel (default 3)"),
		KG_OPT_FLAG("no-store", 0, &a->no_store,
			    "do not keep the explanations in the database (by default they are kept "
			    "beside the head run's verdicts, for 'kgate comment' and 'kgate report')"),
		KG_OPT_OPERAND("KERNEL", "explain these kernels only"),
		KG_OPT_END
	};
	const struct kg_optspec spec = { "explain", synopsis, epilogue, opts, 1, 0 };
	int rc = opt_parse(&spec, argc, argv, &argi);

	if (rc != KG_OPT_GO)
		return rc;
	output_format_parse(formats[format], &a->format);
	a->kernels = argv + argi;
	a->n_kernels = (size_t)(argc - argi);
	if (!a->collect && (a->base_dir || launches)) {
		kg_error("%s is an option of --collect; give --collect too",
			 a->base_dir ? "--base-dir" : "--launches");
		return KG_EXIT_USAGE;
	}
	if (launches)
		a->launches = launches;
	return KG_OPT_GO;
}

static void advice(struct kg_buf *b, int md)
{
	buf_adds(b, md ? "\nThe stored runs lack the diagnostic counters. Collect them with the suite's\n"
			 "collector in metrics mode (check the metric names and the pass count with\n"
			 "`kgate metrics --chip gh100 NAME...`), then `kgate run -c kgate.yaml --only BENCHMARK`:\n\n```yaml\n"
		       : "\nThe stored runs lack the diagnostic counters.  Collect them with the suite's\n"
			 "collector in metrics mode (check the names and the pass count with\n"
			 "'kgate metrics --chip gh100 NAME...'), then 'kgate run -c kgate.yaml --only BENCHMARK':\n\n");
	buf_adds(b, "collector:\n  mode: metrics\n  metrics:\n");
	for (size_t i = 0; explain_diagnostic_metrics[i]; i++)
		buf_printf(b, "    - %s\n", explain_diagnostic_metrics[i]);
	if (md)
		buf_adds(b, "```\n");
}

/* Keep the explanations beside the head run's verdicts, for "kgate
 * comment" and the report; a failure is a warning, the output stands. */
static void store_explanations(struct kg_store *st, int64_t run, const char *baseline,
			       const struct kg_explanation *x, size_t n)
{
	struct kg_explain_row *r = xcalloc(n, sizeof *r);
	char **d = xcalloc(n, sizeof *d);
	for (size_t i = 0; i < n; i++) {
		d[i] = explain_to_json(&x[i]);
		r[i] = (struct kg_explain_row){ x[i].benchmark, x[i].nvtx, x[i].base_kernel,
						x[i].head_kernel, x[i].why, d[i] };
	}
	if (store_explanations_put(st, run, baseline, r, n) != KG_EXIT_PASS)
		kg_warn("the explanations were not stored; the output above is complete");
	for (size_t i = 0; i < n; i++)
		free(d[i]);
	free(d);
	free(r);
}

/* ---- --collect ---- */

enum { BASE, HEAD };
static const char *const side_name[2] = { "base", "head" };

/* The kernel an item names on side k, and its demangled name in set. */
static const char *item_kernel(const struct kg_explain_item *it, int k)
{
	return k == HEAD ? it->hk : it->bk;
}

static const char *demangled_of(const struct kg_sampleset *set, const char *bench,
				const char *kernel)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->s[i].benchmark, bench) && !strcmp(set->s[i].kernel, kernel))
			return set->s[i].demangled;
	return NULL;
}

/* name with every POSIX ERE metacharacter escaped. */
static void regex_quote(struct kg_buf *b, const char *name)
{
	for (const char *p = name; *p; p++) {
		if (strchr(".[]()*+?{}|^$\\", *p))
			buf_addc(b, '\\');
		buf_addc(b, *p);
	}
}

/* Add one alternative to "regex:^(a|b)$", unless it is there. */
static void regex_alt(struct kg_buf *b, const char ***seen, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*seen)[i], name))
			return;
	*seen = xrealloc(*seen, (*n + 1) * sizeof **seen);
	(*seen)[(*n)++] = name;
	buf_adds(b, *n > 1 ? "|" : "regex:^(");
	regex_quote(b, name);
}

/*
 * The "regex:" that matches exactly the kernels of benchmark bench that
 * side k must collect: each one's mangled and demangled name (the collector
 * matches the demangled name when it can demangle, else the mangled one).
 */
static char *kernel_regex(const struct kg_explain_item *it, size_t n, const int *need,
			  int k, const char *bench, const struct kg_sampleset *set)
{
	struct kg_buf b = KG_BUF_INIT;
	const char **seen = NULL;
	size_t ns = 0;

	for (size_t i = 0; i < n; i++) {
		if (!need[i] || strcmp(it[i].bench, bench))
			continue;
		const char *m = item_kernel(&it[i], k), *d = demangled_of(set, bench, m);
		regex_alt(&b, &seen, &ns, m);
		if (d)
			regex_alt(&b, &seen, &ns, d);
	}
	buf_adds(&b, ")$");
	free(seen);
	return b.s;
}

/* The benchmarks of the items side k needs, each once, in item order. */
static const char **need_benches(const struct kg_explain_item *it, size_t n, const int *need,
				 size_t *nb)
{
	const char **b = xcalloc(n ? n : 1, sizeof *b);

	*nb = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j;
		if (!need[i])
			continue;
		for (j = 0; j < *nb && strcmp(b[j], it[i].bench); j++)
			;
		if (j == *nb)
			b[(*nb)++] = it[i].bench;
	}
	return b;
}

/*
 * Collect side k: run each of the nb benchmarks once under the collector in
 * metrics mode (the diagnostic metrics, the items' kernels, launches
 * launches), store the records as one run in the scratch database sc, load
 * them into *got.  0, or the exit status (the failure said).
 */
static int collect_side(struct kg_suiterun *sr, const struct kg_suite *s, int k,
			const struct kg_explain_item *it, size_t n, const int *need,
			const char **benches, size_t nb,
			const struct kg_sampleset *stored, long launches, const char *commit,
			struct kg_store *sc, struct kg_sampleset *got)
{
	size_t nm = 0;
	struct kg_recset *sets = xcalloc(nb ? nb : 1, sizeof *sets);
	struct kg_run_info run = { .commit = xstrdup(commit), .label = xstrdup(side_name[k]) };
	int rc = KG_EXIT_PASS;

	while (explain_diagnostic_metrics[nm])
		nm++;
	char **metrics = xcalloc(nm + 1, sizeof *metrics);
	for (size_t i = 0; i < nm; i++)
		metrics[i] = xstrdup(explain_diagnostic_metrics[i]);
	for (size_t i = 0; i < nb && rc == KG_EXIT_PASS; i++) {
		char *re = kernel_regex(it, n, need, k, benches[i], stored);
		struct kg_suite one = *s;
		one.collector.mode = KG_MODE_METRICS;
		one.collector.metrics = metrics;
		one.collector.n_metrics = nm;
		one.collector.kernels = re;
		one.collector.launch_count = launches;
		kg_note("collecting the diagnostic counters of benchmark '%s' (%s side)", benches[i],
			side_name[k]);
		rc = suiterun_once(sr, &one, config_find_benchmark(s, benches[i]), side_name[k], 0, &sets[i]);
		free(re);
	}
	if (rc == KG_EXIT_PASS)
		rc = suiterun_store(sc, &run, benches, sets, nb, NULL);
	if (rc == KG_EXIT_PASS)
		rc = store_load_samples(sc, &run.id, 1, got);
	suiterun_recsets_free(sets, nb);
	for (size_t i = 0; i < nm; i++)
		free(metrics[i]);
	free(metrics);
	store_run_info_free(&run);
	return rc;
}

/* Launch configuration metrics that must agree before counters of one
 * NVTX path may stand in for another's. */
static const char *const same_launch[] = {
	KG_M_GRID, KG_M_BLOCK, KG_M_REGS, KG_M_SMEM_ST, KG_M_SMEM_DYN,
};

/*
 * The metrics of kernel in benchmark bench, at NVTX path nvtx, and what that
 * path lacks from the same kernel at another path of the same run, when
 * that one was launched with the same configuration: a profiled launch
 * (launch_skip, launch_count) may fall in a warm-up range while the gate
 * failed the kernel's launches in another one.
 */
static size_t map_for_item(const struct kg_sampleset *set, const char *bench, const char *nvtx,
			   const char *kernel, struct kg_metricmap *m)
{
	struct kg_metricmap any = { 0 };

	explain_map_from_set(set, bench, nvtx, kernel, m);
	if (nvtx && explain_map_from_set(set, bench, NULL, kernel, &any)) {
		int same = 1;
		for (size_t i = 0; i < sizeof same_launch / sizeof *same_launch; i++) {
			double a = explain_map_get(m, same_launch[i]);
			double b = explain_map_get(&any, same_launch[i]);
			if (!isnan(a) && !isnan(b) && a != b)
				same = 0;
		}
		if (same)
			explain_map_merge(m, &any);
	}
	explain_map_free(&any);
	return m->n;
}

/* Fill m's missing metrics from what side k collected for kernel. */
static int merge_collected(struct kg_metricmap *m, const struct kg_sampleset *got,
			   const struct kg_explain_item *it, int k)
{
	struct kg_metricmap c;
	const char *kernel = item_kernel(it, k);

	map_for_item(got, it->bench, it->nvtx, kernel, &c);
	int found = c.n > 0;
	if (!found)
		kg_warn("the %s side's collected records have no launch of kernel '%s' of "
			"benchmark '%s'", side_name[k], kernel, it->bench);
	explain_map_merge(m, &c);
	explain_map_free(&c);
	return found;
}

/*
 * --collect: for the items whose side lacks the diagnostic counters (the
 * base side only with --base-dir), collect them and merge them into mb/mh.
 * got[k] is set when side k collected anything.
 */
static int collect(const struct ex_args *a, const struct kg_explain_item *it, size_t n,
		   struct kg_metricmap *mb, struct kg_metricmap *mh, const struct kg_chip *chip,
		   const struct kg_sampleset *stored[2], const char *commit[2], int *got_k[2])
{
	const char *cfg = a->cfg ? a->cfg : config_default_suite();
	struct kg_suite *s[2] = { NULL, NULL };
	int *need[2] = { xcalloc(n ? n : 1, sizeof(int)), xcalloc(n ? n : 1, sizeof(int)) };
	int any[2] = { 0, 0 }, rc = KG_EXIT_PASS;
	const char **benches[2] = { NULL, NULL };
	size_t nb[2] = { 0, 0 };
	struct kg_suiterun sr = { 0 };
	struct kg_store *sc = NULL;
	struct kg_sampleset got[2] = { { 0 }, { 0 } };

	for (size_t i = 0; i < n; i++) {
		need[HEAD][i] = !explain_has_diagnostics(&mh[i], chip);
		need[BASE][i] = a->base_dir && !explain_has_diagnostics(&mb[i], chip);
		any[HEAD] |= need[HEAD][i];
		any[BASE] |= need[BASE][i];
	}
	if (!any[HEAD] && !any[BASE]) {
		if (n)
			kg_note("the stored runs have the diagnostic counters: nothing to collect");
		goto out;
	}
	/* Every suite and benchmark first: nothing runs when one is missing. */
	for (int k = 0; k < 2 && rc == KG_EXIT_PASS; k++) {
		if (!any[k])
			continue;
		rc = k == HEAD ? config_load_suite(cfg, &s[k]) : suiterun_load_suite(a->base_dir, cfg, &s[k]);
		for (size_t i = 0; i < n && rc == KG_EXIT_PASS; i++)
			if (need[k][i] && !config_find_benchmark(s[k], it[i].bench)) {
				kg_error("benchmark '%s' is not in the %s suite '%s': cannot collect "
					 "its counters", it[i].bench, side_name[k], s[k]->path);
				rc = KG_EXIT_USAGE;
			}
	}
	if (rc != KG_EXIT_PASS || (rc = suiterun_init(&sr)) != KG_EXIT_PASS)
		goto out;
	char *path = xasprintf("%s/collected.db", sr.scratch);
	rc = store_open(path, 0, &sc);
	free(path);
	runner_catch_signals();
	for (int k = 0; k < 2; k++) {
		benches[k] = need_benches(it, n, need[k], &nb[k]);
		sr.steps += (int)nb[k];
	}
	for (int k = 0; k < 2 && rc == KG_EXIT_PASS; k++) {
		if (!any[k])
			continue;
		rc = collect_side(&sr, s[k], k, it, n, need[k], benches[k], nb[k], stored[k],
				  a->launches, commit[k], sc, &got[k]);
	}
	for (size_t i = 0; i < n && rc == KG_EXIT_PASS; i++) {
		if (need[BASE][i])
			got_k[BASE][i] = merge_collected(&mb[i], &got[BASE], &it[i], BASE);
		if (need[HEAD][i])
			got_k[HEAD][i] = merge_collected(&mh[i], &got[HEAD], &it[i], HEAD);
	}
out:
	store_sampleset_free(&got[0]);
	store_sampleset_free(&got[1]);
	store_close(sc);
	suiterun_free(&sr);
	config_free_suite(s[0]);
	config_free_suite(s[1]);
	free(need[0]);
	free(need[1]);
	free(benches[0]);
	free(benches[1]);
	return rc;
}

int cmd_explain(int argc, char **argv)
{
	struct ex_args a = { .db = store_default_db(), .format = KG_FMT_TEXT, .launches = 3 };
	struct kg_store *st = NULL;
	struct kg_run_info *head = NULL, *base = NULL;
	size_t n_base = 0;
	char *bsha = NULL, *blabel = NULL, *note = NULL;
	struct kg_thresholds *t = NULL;
	struct kg_sampleset hs = { 0 }, bs = { 0 };
	int rc;

	if ((rc = parse(argc, argv, &a)) != KG_OPT_GO)
		goto out;
	if ((rc = store_require(a.db)) != KG_EXIT_PASS)
		goto out;
	if ((rc = store_open(a.db, a.no_store ? KG_STORE_READONLY : 0, &st)) != KG_EXIT_PASS) {
		/* A read-only database can still be explained from. */
		if (a.no_store || store_writable(a.db) ||
		    store_open(a.db, KG_STORE_READONLY, &st) != KG_EXIT_PASS)
			goto out;
		kg_warn("'%s' is read-only: the explanations will not be stored", a.db);
		a.no_store = 1;
	}
	if ((rc = check_load_thresholds(a.thresholds, a.cfg ? a.cfg : config_default_suite(), a.cfg != NULL, &t)))
		goto out;
	if ((rc = check_find_sides(st, a.commit, a.baseline, (size_t)t->baseline_runs, &head, &base,
				   &n_base, &bsha, &blabel, &note)) != KG_EXIT_PASS)
		goto out;
	if (!n_base) {
		kg_error("no baseline run is stored for commit '%s': nothing to explain against (%s)",
			 head->commit, note ? note : "?");
		rc = KG_EXIT_USAGE;
		goto out;
	}
	if ((rc = check_load_samples(st, head, base, n_base, &hs, &bs)) != KG_EXIT_PASS)
		goto out;
	{
		/* as check does: only the benchmarks both sides ran */
		char **common = NULL, *skipped = NULL;
		size_t n_common = 0;
		if ((rc = check_partial(st, head, base, n_base, &common, &n_common, &skipped)) != KG_EXIT_PASS)
			goto out;
		if (skipped)
			kg_note("not compared: %s", skipped);
		store_sampleset_keep(&hs, common, n_common);
		store_sampleset_keep(&bs, common, n_common);
		store_names_free(common, n_common);
		free(skipped);
	}

	struct kg_gate g;
	gate_compare(t, &bs, &hs, &g);
	struct kg_explain_item *it = NULL;
	size_t n = 0;
	explain_pick(&g, &bs, &hs, (const char *const *)a.pairs, a.n_pairs,
		     (const char *const *)a.kernels, a.n_kernels, &it, &n);
	const struct kg_chip *chip = explain_chip(head->gpu_chip, head->gpu_name);
	int md = a.format == KG_FMT_MARKDOWN, need_advice = 0;
	if (!n)
		kg_note("nothing to explain: no kernel failed");
	if (!chip)
		kg_note("unknown chip '%s': the occupancy and tail-effect rules are skipped",
			head->gpu_chip ? head->gpu_chip : head->gpu_name ? head->gpu_name : "?");
	struct kg_metricmap *mb = xcalloc(n ? n : 1, sizeof *mb), *mh = xcalloc(n ? n : 1, sizeof *mh);
	int *got[2] = { xcalloc(n ? n : 1, sizeof(int)), xcalloc(n ? n : 1, sizeof(int)) };
	for (size_t i = 0; i < n; i++) {
		map_for_item(&bs, it[i].bench, it[i].nvtx, it[i].bk, &mb[i]);
		map_for_item(&hs, it[i].bench, it[i].nvtx, it[i].hk, &mh[i]);
	}
	if (a.collect) {
		const struct kg_sampleset *stored[2] = { &bs, &hs };
		const char *sides[2] = { bsha, head->commit };
		rc = collect(&a, it, n, mb, mh, chip, stored, sides, got);
	}
	struct kg_buf out = KG_BUF_INIT;
	json_t *arr = json_array();
	struct kg_explanation *x = xcalloc(n ? n : 1, sizeof *x);
	size_t nx = 0;
	for (size_t i = 0; i < n && rc == KG_EXIT_PASS; i++, nx++) {
		if (!explain_kernel(&it[i], &mb[i], &mh[i], chip, &x[i]))
			need_advice = 1;
		if (a.format == KG_FMT_JSON) {
			char *d = explain_to_json(&x[i]);
			json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:b, s:b, s:b}",
							     "benchmark", it[i].bench, "nvtx", it[i].nvtx,
							     "base_kernel", it[i].bk, "head_kernel", it[i].hk,
							     "why", x[i].why, "details", json_loads(d, 0, NULL),
							     "base_diagnostics", explain_has_diagnostics(&mb[i], chip),
							     "collected_base", got[0][i], "collected_head", got[1][i]));
			free(d);
		} else if (md) {
			buf_adds(&out, "**");
			escape_markdown(&out, x[i].why);
			buf_adds(&out, "**\n\n");
			explain_render(&x[i], KG_EXPLAIN_MARKDOWN, &out);
			buf_adds(&out, "\n");
		} else {
			/* names and the sentence come from files: no control character */
			char *line = xasprintf("%s%s%s%s: %s", it[i].bench, *it[i].nvtx ? " [" : "",
					       it[i].nvtx, *it[i].nvtx ? "]" : "", x[i].why);
			escape_text(&out, line);
			buf_addc(&out, '\n');
			free(line);
			explain_render(&x[i], KG_EXPLAIN_TEXT, &out);
			buf_adds(&out, "\n");
		}
	}
	if (rc == KG_EXIT_PASS && nx && !a.no_store) {
		char *label = check_baseline_label(bsha, blabel, base[0].commit);
		store_explanations(st, head->id, label, x, nx);
		free(label);
	}
	explain_free_all(x, nx);
	for (size_t i = 0; i < n; i++) {
		explain_map_free(&mb[i]);
		explain_map_free(&mh[i]);
	}
	free(mb);
	free(mh);
	free(got[0]);
	free(got[1]);
	if (rc == KG_EXIT_PASS && a.format == KG_FMT_JSON) {
		json_t *o = json_pack("{s:o, s:b}", "explanations", arr, "diagnostics_missing", need_advice);
		char *js = escape_json_dumped(json_dumps(o, JSON_INDENT(2)));
		buf_adds(&out, js);
		kg_json_document_written();
		buf_adds(&out, "\n");
		free(js);
		json_decref(o);
	} else {
		json_decref(arr);
		if (rc == KG_EXIT_PASS && need_advice && !a.collect)
			advice(&out, md);
	}
	if (rc == KG_EXIT_PASS && need_advice && a.collect)
		kg_warn("the collected records hold no diagnostic counters for some kernels "
			"(see the collector's messages above)");
	if (rc == KG_EXIT_PASS)
		fwrite(out.s ? out.s : "", 1, out.len, stdout);
	buf_free(&out);
	free(it);
	gate_free(&g);
	if (rc != KG_EXIT_PASS)
		goto out;
	rc = fflush(stdout) ? KG_EXIT_RUNTIME : KG_EXIT_PASS;
out:
	store_sampleset_free(&hs);
	store_sampleset_free(&bs);
	check_sides_free(head, base, n_base, bsha, blabel, note);
	config_free_thresholds(t);
	free(a.pairs);
	store_close(st);
	return rc;
}
