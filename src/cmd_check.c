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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "kgate/check.h"
#include "kgate/config.h"
#include "kgate/kgate.h"
#include "kgate/store.h"
#include "kgate/util.h"

static const char usage_text[] =
	"usage: kgate check [--db PATH] [-t thresholds.yaml] [-c kgate.yaml]\n"
	"                   [--commit SHA] [--baseline REF] [--all] [--no-store] [--explain]\n"
	"                   [--format text|markdown|json|junit|github]\n"
	"                   [--output FORMAT=FILE]...\n"
	"\n"
	"Compare the newest stored run of a commit against the stored runs of its\n"
	"baseline on the same GPU model and driver, and print one verdict per\n"
	"kernel and metric: PASS, FAIL, INCONCLUSIVE, NEW or MISSING, and the\n"
	"check's verdict: PASS, FAIL, or NO BASELINE when there is nothing to\n"
	"compare with.  Only benchmarks both sides ran are compared; the others\n"
	"are named.  The verdict is stored with the verdicts, for 'kgate comment'.\n"
	"\n"
	"  --db PATH          the database (default kgate.db)\n"
	"  -t, --thresholds F thresholds file (default: the suite's, else the\n"
	"                     built-in thresholds/default.yaml)\n"
	"  -c, --config F     suite file naming the thresholds (default kgate.yaml,\n"
	"                     when it exists)\n"
	"  --commit SHA       the head commit (default: git rev-parse HEAD); a short\n"
	"                     SHA or ref git resolves, or a unique prefix of a\n"
	"                     stored commit\n"
	"  --baseline REF     a stored commit or a git ref; it must have a stored run\n"
	"                     on the head's GPU model and driver (else exit 2)\n"
	"                     (default: the merge base with the default branch,\n"
	"                     else the newest stored run of the default branch)\n"
	"  --format F         text (default), markdown, json, junit or github\n"
	"                     (workflow-command annotations)\n"
	"  --output F=FILE    also write format F to FILE (repeatable, up to 8):\n"
	"                     every rendering of the one verdict from one check\n"
	"  --all              list passing comparisons too (text, markdown)\n"
	"  --no-store         do not store the verdicts\n"
	"  --explain          say why each FAILed kernel regressed, from the stored\n"
	"                     counters (as 'kgate explain'; a \"why\" field in json)\n"
	"\n"
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
	int all, no_store, suite_given, explain;
	struct kg_check_output out[MAX_OUTPUTS];
	size_t n_out;
};

/* --output FORMAT=FILE */
static int parse_output(const char *arg, struct check_args *a)
{
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
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "thresholds", required_argument, NULL, 't' },
		{ "config", required_argument, NULL, 'c' },
		{ "commit", required_argument, NULL, 'C' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' },
		{ "all", no_argument, NULL, 'a' },
		{ "no-store", no_argument, NULL, 'n' },
		{ "explain", no_argument, NULL, 'x' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ht:c:", opts, NULL)) != -1) {
		switch (c) {
		case 'd': a->db = optarg; break;
		case 't': a->thresholds = optarg; break;
		case 'c': a->suite = optarg; a->suite_given = 1; break;
		case 'C': a->commit = optarg; break;
		case 'b': a->baseline = optarg; break;
		case 'a': a->all = 1; break;
		case 'n': a->no_store = 1; break;
		case 'x': a->explain = 1; break;
		case 'o':
			if (parse_output(optarg, a) != KG_EXIT_PASS)
				return KG_EXIT_USAGE;
			break;
		case 'f':
			if (output_format_parse(optarg, &a->format) < 0) {
				kg_error("unknown format '%s' (choose from %s)", optarg,
					 output_format_choices());
				return KG_EXIT_USAGE;
			}
			break;
		default:
			return cmd_option_error("check", c, argv);
		}
	}
	if (optind < argc) {
		kg_error("unexpected argument '%s'; see 'kgate check --help'", argv[optind]);
		return KG_EXIT_USAGE;
	}
	return KG_EXIT_PASS;
}

int cmd_check(int argc, char **argv)
{
	struct check_args a = { .db = store_default_db(), .suite = "kgate.yaml", .format = KG_FMT_TEXT };
	struct kg_thresholds *t = NULL;
	struct kg_store *st = NULL;
	struct kg_run_info *head = NULL, *base = NULL;
	size_t n_base = 0;
	char *bsha = NULL, *blabel = NULL, *note = NULL;
	int rc;

	if (cmd_wants_help(argc, argv)) {
		fputs(usage_text, stdout);
		return KG_EXIT_PASS;
	}
	if ((rc = parse_args(argc, argv, &a)) != KG_EXIT_PASS)
		return rc;
	if ((rc = check_load_thresholds(a.thresholds, a.suite, a.suite_given, &t)) != KG_EXIT_PASS)
		return rc;
	if (!store_exists(a.db)) {
		kg_error("cannot open '%s': no such database (store runs first with 'kgate run' or 'kgate ingest')",
			 a.db);
		rc = KG_EXIT_USAGE;
		goto out;
	}
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
	if (head)
		store_runs_free(head, 1);
	if (base)
		store_runs_free(base, n_base);
	free(bsha);
	free(blabel);
	free(note);
	store_close(st);
	config_free_thresholds(t);
	return rc;
}
