/*
 * cmd_explain.c: "kgate explain": say why the FAILed kernels of a check
 * regressed, from the counters stored for both sides.
 *
 * The head and baseline are chosen as "kgate check" chooses them
 * (check_pick_baseline); the gate names the failed kernels, a kernel
 * MISSING in head and one NEW in the same benchmark and NVTX path are
 * explained as one replaced by the other; explain.c does the analysis.
 * Collecting the missing counters on a GPU (--collect) is not built: the
 * command prints what to collect and how instead.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "kgate/check.h"
#include "kgate/config.h"
#include "kgate/explain.h"
#include "kgate/gate.h"
#include "kgate/git.h"
#include "kgate/kgate.h"
#include "kgate/output.h"
#include "kgate/store.h"
#include "kgate/util.h"

static const char usage_text[] =
	"usage: kgate explain [--db PATH] [--commit SHA] [--baseline REF]\n"
	"                     [--format text|markdown|json] [--pair BASE=HEAD]... [KERNEL...]\n"
	"\n"
	"Say why kernels regressed, from the counters stored for the head run and\n"
	"its baseline (chosen as 'kgate check' chooses them): Nsight Compute's\n"
	"rules on each side (bottleneck, grid, tail effect, occupancy, issue\n"
	"slots, stalls, uncoalesced global access, bank conflicts) and the\n"
	"counters that moved.  By default every FAILed kernel is explained, and a\n"
	"kernel MISSING in head paired with the NEW one of the same benchmark and\n"
	"NVTX path (a kernel replaced by another).\n"
	"\n"
	"  --db PATH          the database (default kgate.db)\n"
	"  --commit SHA       the head commit (default: git rev-parse HEAD)\n"
	"  --baseline REF     a stored commit or a git ref (default as kgate check)\n"
	"  --format F         text (default), markdown or json\n"
	"  --pair B=H         explain base kernel B against head kernel H (any of\n"
	"                     their mangled, demangled or base names)\n"
	"  KERNEL             explain these kernels only\n"
	"\n"
	"When the stored runs lack the diagnostic counters, it names them and the\n"
	"suite setting that collects them.  Exit status: 0 done; 2 bad usage or no\n"
	"head run; 3 database error.\n";

struct ex_args {
	const char *db, *commit, *baseline;
	enum kg_format format;
	char **pairs;
	size_t n_pairs;
	char **kernels;
	size_t n_kernels;
};

static int parse(int argc, char **argv, struct ex_args *a)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "commit", required_argument, NULL, 'C' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' },
		{ "pair", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': a->db = optarg; break;
		case 'C': a->commit = optarg; break;
		case 'b': a->baseline = optarg; break;
		case 'p':
			if (!strchr(optarg, '=') || optarg[0] == '=' || !strchr(optarg, '=')[1]) {
				kg_error("--pair needs BASE=HEAD, not '%s'", optarg);
				return KG_EXIT_USAGE;
			}
			a->pairs = xrealloc(a->pairs, (a->n_pairs + 1) * sizeof *a->pairs);
			a->pairs[a->n_pairs++] = optarg;
			break;
		case 'f':
			if (output_format_parse(optarg, &a->format) < 0 ||
			    (a->format != KG_FMT_TEXT && a->format != KG_FMT_MARKDOWN && a->format != KG_FMT_JSON)) {
				kg_error("unknown format '%s' (choose from text, markdown, json)", optarg);
				return KG_EXIT_USAGE;
			}
			break;
		case ':':
			kg_error("option '%s' needs a value", argv[optind - 1]);
			return KG_EXIT_USAGE;
		default:
			kg_error("unknown option '%s'; see 'kgate explain --help'", argv[optind - 1]);
			return KG_EXIT_USAGE;
		}
	}
	a->kernels = argv + optind;
	a->n_kernels = (size_t)(argc - optind);
	return KG_EXIT_PASS;
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

int cmd_explain(int argc, char **argv)
{
	struct ex_args a = { .db = "kgate.db", .format = KG_FMT_TEXT };
	struct kg_store *st = NULL;
	struct kg_run_info *head = NULL, *base = NULL;
	size_t n_head = 0, n_base = 0;
	char *commit = NULL, *bsha = NULL, *blabel = NULL;
	struct kg_thresholds *t = NULL;
	struct kg_sampleset hs = { 0 }, bs = { 0 };
	int rc;

	if (cmd_wants_help(argc, argv)) {
		fputs(usage_text, stdout);
		return KG_EXIT_PASS;
	}
	if ((rc = parse(argc, argv, &a)) != KG_EXIT_PASS)
		goto out;
	if (access(a.db, F_OK) != 0) {
		kg_error("cannot open '%s': no such database", a.db);
		rc = KG_EXIT_USAGE;
		goto out;
	}
	if ((rc = store_open(a.db, KG_STORE_READONLY, &st)) != KG_EXIT_PASS)
		goto out;
	commit = a.commit ? xstrdup(a.commit) : git_head();
	if (!commit) {
		kg_error("no --commit given and git cannot say what HEAD is");
		rc = KG_EXIT_USAGE;
		goto out;
	}
	struct kg_run_filter f = { .commit = commit, .limit = 1 };
	if ((rc = store_find_runs(st, &f, &head, &n_head)) != KG_EXIT_PASS)
		goto out;
	if (!n_head) {
		kg_error("no run is stored for commit '%s'", commit);
		rc = KG_EXIT_USAGE;
		goto out;
	}
	t = config_default_thresholds();
	if ((rc = check_pick_baseline(st, head, a.baseline, &bsha, &blabel)) != KG_EXIT_PASS)
		goto out;
	if (bsha && (rc = check_find_baseline(st, head, bsha, (size_t)t->baseline_runs, &base, &n_base)))
		goto out;
	if (!n_base) {
		kg_error("no baseline run is stored for commit '%s': nothing to explain against", commit);
		rc = KG_EXIT_USAGE;
		goto out;
	}
	int64_t *ids = xcalloc(n_base, sizeof *ids);
	for (size_t i = 0; i < n_base; i++)
		ids[i] = base[i].id;
	rc = store_load_samples(st, &head->id, 1, &hs);
	if (rc == KG_EXIT_PASS)
		rc = store_load_samples(st, ids, n_base, &bs);
	free(ids);
	if (rc != KG_EXIT_PASS)
		goto out;

	struct kg_gate g;
	gate_compare(t, &bs, &hs, &g);
	struct kg_explain_item *it = NULL;
	size_t n = 0;
	explain_pick(&g, &bs, &hs, (const char *const *)a.pairs, a.n_pairs,
		     (const char *const *)a.kernels, a.n_kernels, &it, &n);
	const struct kg_chip *chip = explain_chip(head->gpu_chip, head->gpu_name);
	int md = a.format == KG_FMT_MARKDOWN, need_advice = 0;
	struct kg_buf out = KG_BUF_INIT;
	json_t *arr = json_array();
	if (!n)
		kg_note("nothing to explain: no kernel failed");
	if (!chip)
		kg_note("unknown chip '%s': the occupancy and tail-effect rules are skipped",
			head->gpu_chip ? head->gpu_chip : head->gpu_name ? head->gpu_name : "?");
	for (size_t i = 0; i < n; i++) {
		struct kg_metricmap mb, mh;
		struct kg_buf s = KG_BUF_INIT, d = KG_BUF_INIT;
		explain_map_from_set(&bs, it[i].bench, it[i].nvtx, it[i].bk, &mb);
		explain_map_from_set(&hs, it[i].bench, it[i].nvtx, it[i].hk, &mh);
		char *name = strcmp(it[i].bk, it[i].hk) ? xasprintf("%s -> %s", it[i].bk, it[i].hk)
							 : xstrdup(it[i].bk);
		if (!explain_kernel(name, &mb, &mh, chip, md ? KG_EXPLAIN_MARKDOWN : KG_EXPLAIN_TEXT, &s, &d))
			need_advice = 1;
		if (a.format == KG_FMT_JSON) {
			json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "benchmark", it[i].bench,
							     "nvtx", it[i].nvtx, "base_kernel", it[i].bk,
							     "head_kernel", it[i].hk, "why", s.s, "details", d.s));
		} else if (md) {
			buf_adds(&out, "**");
			output_escape_markdown(&out, s.s);
			buf_adds(&out, "**\n\n");
			buf_adds(&out, d.s);
			buf_adds(&out, "\n");
		} else {
			buf_printf(&out, "%s: %s\n%s\n", it[i].bench, s.s, d.s);
		}
		free(name);
		buf_free(&s);
		buf_free(&d);
		explain_map_free(&mb);
		explain_map_free(&mh);
	}
	if (a.format == KG_FMT_JSON) {
		json_t *o = json_pack("{s:o, s:b}", "explanations", arr, "diagnostics_missing", need_advice);
		char *js = json_dumps(o, JSON_INDENT(2));
		buf_adds(&out, js);
		buf_adds(&out, "\n");
		free(js);
		json_decref(o);
	} else {
		json_decref(arr);
		if (need_advice)
			advice(&out, md);
	}
	fwrite(out.s ? out.s : "", 1, out.len, stdout);
	buf_free(&out);
	free(it);
	gate_free(&g);
	rc = fflush(stdout) ? KG_EXIT_RUNTIME : KG_EXIT_PASS;
out:
	store_sampleset_free(&hs);
	store_sampleset_free(&bs);
	if (head)
		store_runs_free(head, n_head);
	if (base)
		store_runs_free(base, n_base);
	config_free_thresholds(t);
	free(commit);
	free(bsha);
	free(blabel);
	free(a.pairs);
	store_close(st);
	return rc;
}
