/*
 * cmd_check.c: "kgate check": compare the newest stored run of a commit
 * against its baseline and print the verdicts.
 *
 * This file owns the choice of the two sides.  The head is the newest run
 * of --commit (default: git's HEAD).  The baseline is the stored runs of
 * --baseline (a stored commit, or a ref git resolves), by default the merge
 * base of HEAD with the default branch, falling back to the newest stored
 * commit of the default branch; only runs on the head's GPU model and
 * driver count, at most baseline_runs of them (check_pick_baseline in
 * check.c, shared with kgate explain).  check.c does the rest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "kgate/check.h"
#include "kgate/config.h"
#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/store.h"
#include "kgate/util.h"

static const char synopsis[] =
	"usage: kgate check [--db PATH] [-t thresholds.yaml] [-c kgate.yaml]\n"
	"                   [--commit SHA] [--baseline REF] [--all] [--no-store]\n"
	"                   [--explain] [--pool-ranks]\n"
	"                   [--format text|markdown|json|junit|github]\n"
	"                   [--output FORMAT=FILE]...\n"
	"\n"
	"Compare the newest stored run of a commit against the stored runs of its\n"
	"baseline on the same GPU model and driver, and print one verdict per\n"
	"kernel and metric: PASS, FAIL, INCONCLUSIVE, NEW or MISSING, and the\n"
	"check's verdict: PASS, FAIL, or NO BASELINE when there is nothing to\n"
	"compare with.  Only benchmarks both sides ran are compared; the others\n"
	"are named.  The verdict is stored with the verdicts, for 'kgate comment'.\n"
	"The processes of a distributed job (records with a rank) are judged rank\n"
	"by rank, with a \"slowest rank\" line per kernel; runs of different device\n"
	"sets are never compared.\n";

static const char epilogue[] =
	"In a GitHub Actions job the event decides both defaults: a pull request's\n"
	"head commit (not GitHub's merge commit) against its merge base with the\n"
	"base commit; a push to the default branch against the push's before (else\n"
	"the branch's previous stored run).  Quick runs are never a baseline.\n"
	"With $GITHUB_STEP_SUMMARY set, the markdown table is appended to that file.\n"
	"Exit status: 0 no regression (PASS, or NO BASELINE under on_no_baseline:\n"
	"warn); 1 regression (FAIL, or NO BASELINE under on_no_baseline: fail);\n"
	"2 bad usage, input, no head run, or a --baseline with no run on this GPU;\n"
	"3 database error.\n";

#define MAX_OUTPUTS 8

struct check_args {
	const char *db, *thresholds, *suite, *commit, *baseline;
	enum kg_format format;
	int all, no_store, suite_given, explain, pool_ranks;
	struct kg_check_output out[MAX_OUTPUTS];
	size_t n_out;
};

/* --output FORMAT=FILE */
static int parse_output(const struct kg_opt *o, const char *arg)
{
	struct check_args *a = o->ctx;
	const char *eq = strchr(arg, '=');
	char fmt[32];
	if (!eq || eq == arg || !eq[1] || (size_t)(eq - arg) >= sizeof fmt) {
		kg_error("--output wants FORMAT=FILE, got '%s'", arg);
		return KG_EXIT_USAGE;
	}
	memcpy(fmt, arg, (size_t)(eq - arg));
	fmt[eq - arg] = '\0';
	if (a->n_out == MAX_OUTPUTS) {
		kg_error("at most %d --output options", MAX_OUTPUTS);
		return KG_EXIT_USAGE;
	}
	if (output_format_parse(fmt, &a->out[a->n_out].format) < 0) {
		kg_error("unknown format '%s' in --output (choose from %s)", fmt, output_format_choices());
		return KG_EXIT_USAGE;
	}
	a->out[a->n_out++].path = eq + 1;
	return KG_EXIT_PASS;
}

static int parse_args(int argc, char **argv, struct check_args *a)
{
	const char *suite = NULL;
	int format = KG_FMT_TEXT, argi;
	const struct kg_opt opts[] = {
		KG_OPT_DB(&a->db),
		KG_OPT_STR("thresholds", 't', "F", &a->thresholds,
			   "thresholds file (default: the suite's, else the built-in "
			   "thresholds/default.yaml)"),
		KG_OPT_STR("config", 'c', "F", &suite,
			   "suite file naming the thresholds (default kgate.yaml, when it exists)"),
		KG_OPT_STR("commit", 0, "SHA", &a->commit,
			   "the head commit (default: git rev-parse HEAD); a short SHA or ref git "
			   "resolves, or a unique prefix of a stored commit"),
		KG_OPT_STR("baseline", 0, "REF", &a->baseline,
			   "a stored commit or a git ref; it must have a stored run on the head's "
			   "GPU model and driver (else exit 2) (default: the merge base with the "
			   "default branch, else the newest stored run of the default branch)"),
		KG_OPT_CHOICE("format", 0, "F", &format, output_format_names,
			      "text (default), markdown, json, junit or github (workflow-command "
			      "annotations)"),
		KG_OPT_CALL("output", 0, "F=FILE", parse_output, a,
			    "also write format F to FILE (repeatable, up to 8): every rendering of "
			    "the one verdict from one check"),
		KG_OPT_FLAG("all", 0, &a->all, "list passing comparisons too (text, markdown)"),
		KG_OPT_FLAG("no-store", 0, &a->no_store, "do not store the verdicts"),
		KG_OPT_FLAG("pool-ranks", 0, &a->pool_ranks,
			    "judge the ranks of a distributed job as one (default: each rank "
			    "on its own; thresholds: statistics: pool_ranks: true)"),
		KG_OPT_FLAG("explain", 0, &a->explain,
			    "say why each FAILed kernel regressed, from the stored counters (as "
			    "'kgate explain'; a \"why\" field in json)"),
		KG_OPT_END
	};
	const struct kg_optspec spec = { "check", synopsis, epilogue, opts, 0, 0 };
	int rc = opt_parse(&spec, argc, argv, &argi);

	a->format = (enum kg_format)format;
	if (suite) {
		a->suite = suite;
		a->suite_given = 1;
	}
	return rc;
}

int cmd_check(int argc, char **argv)
{
	struct check_args a = { .db = store_default_db(), .suite = config_default_suite(), .format = KG_FMT_TEXT };
	struct kg_thresholds *t = NULL;
	struct kg_store *st = NULL;
	struct kg_run_info *head = NULL, *base = NULL;
	size_t n_base = 0;
	char *bsha = NULL, *blabel = NULL, *note = NULL;
	int rc;

	if ((rc = parse_args(argc, argv, &a)) != KG_OPT_GO)
		return rc;
	if ((rc = check_load_thresholds(a.thresholds, a.suite, a.suite_given, &t)) != KG_EXIT_PASS)
		return rc;
	if (a.pool_ranks)
		t->pool_ranks = 1;
	if ((rc = store_require(a.db)) != KG_EXIT_PASS)
		goto out;
	if ((rc = store_open(a.db, 0, &st)) != KG_EXIT_PASS) {
		/* A read-only database can still be checked. */
		if (store_writable(a.db) || store_open(a.db, KG_STORE_READONLY, &st) != KG_EXIT_PASS)
			goto out;
		kg_warn("'%s' is read-only: the verdicts will not be stored", a.db);
		a.no_store = 1;
	}

	if ((rc = check_find_sides(st, a.commit, a.baseline, (size_t)t->baseline_runs, &head, &base,
				   &n_base, &bsha, &blabel, &note)) != KG_EXIT_PASS)
		goto out;
	if (!n_base)
		kg_warn("no baseline: %s; nothing is compared (on_no_baseline: %s)", note ? note : "?",
			t->on_no_baseline == KG_POLICY_FAIL ? "fail" : "warn");
	char *label = check_baseline_label(bsha, blabel, n_base ? base[0].commit : NULL);
	struct kg_check_opts o = {
		.format = a.format,
		.color = a.format == KG_FMT_TEXT && kg_use_color(1),
		.out = stdout,
		.store_verdicts = !a.no_store,
		.summary = 1,
		.all = a.all,
		.explain = a.explain,
		.no_baseline_note = note,
		.outputs = a.out,
		.n_outputs = a.n_out,
	};
	rc = check_runs(st, t, head, base, n_base, label, &o);
	free(label);
out:
	check_sides_free(head, base, n_base, bsha, blabel, note);
	store_close(st);
	config_free_thresholds(t);
	return rc;
}
