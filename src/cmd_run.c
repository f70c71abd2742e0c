/*
 * cmd_run.c: "kgate run": run the suite of kgate.yaml under the collector
 * and store every repeat of every benchmark as one run of the commit, in
 * one transaction.  Any failed repeat fails the whole run: nothing stored.
 */
#include "cmd.h"
#include "kgate/config.h"
#include "kgate/ghevent.h"
#include "kgate/git.h"
#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/runner.h"
#include "kgate/shard.h"
#include "kgate/store.h"
#include "kgate/suiterun.h"
#include "kgate/util.h"

#include <jansson.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char synopsis[] =
	"usage: kgate run [-c kgate.yaml] [--db PATH] [--commit SHA] [--branch NAME]\n"
	"                 [--only REGEX] [--quick] [--label L] [-v] [--format text|json]\n"
	"                 [--shard I/N [--balance time|count]]\n"
	"\n"
	"Run every benchmark of the suite under the collector (warmup runs, then\n"
	"the measured repeats) and store all of their records as one run.  With\n"
	"--shard I/N, run only the I-th of N slices of the suite and store it as a\n"
	"shard, which 'kgate merge' puts together with the others as one run.\n";

static const char epilogue[] =
	"Environment: KGATE_COLLECTOR (the collector library), KGATE_CUPTI (a\n"
	"libcupti.so for NVTX instead of the collector), TMPDIR (scratch records files).\n"
	"\n"
	"Exit status: 0 stored; 2 bad usage or suite file; 3 a benchmark failed\n"
	"(crashed, exit status not 0, timed out, no or broken records file), the\n"
	"collector is missing, or a database error: nothing stored.\n";

static const char *const balance_choices[] = { "time", "count", NULL };

/* Keep in sel[0 .. *nsel) the benchmarks of shard i of n (shard.h's plan,
 * from the wall times db holds when balance is "time"). */
static int pick_shard(const char *db, const struct kg_benchmark **sel, size_t *nsel, int quick,
		      int i, int n, const char *balance, char *basis, size_t len)
{
	struct kg_store *st = NULL;
	const char **names;
	int *steps, *shard, rc = KG_EXIT_PASS;
	size_t k = 0;

	if ((size_t)n > *nsel) {
		kg_error("--shard %d/%d: the suite has %zu benchmark%s to share out, fewer than %d "
			 "shards", i, n, *nsel, *nsel == 1 ? "" : "s", n);
		return KG_EXIT_USAGE;
	}
	if (!strcmp(balance, "time") && store_exists(db) &&
	    (rc = store_open(db, KG_STORE_READONLY, &st)) != KG_EXIT_PASS)
		return rc;
	names = xcalloc(*nsel, sizeof *names);
	steps = xcalloc(*nsel, sizeof *steps);
	shard = xcalloc(*nsel, sizeof *shard);
	for (size_t j = 0; j < *nsel; j++) {
		names[j] = sel[j]->name;
		steps[j] = sel[j]->warmup + (quick ? sel[j]->quick_repeat : sel[j]->repeat);
	}
	rc = shard_plan(st, names, steps, *nsel, n, shard, basis, len);
	store_close(st);
	for (size_t j = 0; j < *nsel; j++)
		if (shard[j] == i - 1)
			sel[k++] = sel[j];
	kg_note("shard %d/%d: %zu of %zu benchmarks, balanced by %s", i, n, k, *nsel, basis);
	*nsel = k;
	free(names);
	free(steps);
	free(shard);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	const char *cfg = NULL, *db = store_default_db(), *commit = NULL, *branch = NULL;
	const char *only = NULL, *label = NULL, *format = "text";
	const char *shard_arg = NULL, *balance = "time";
	int quick = 0, verbose = 0, argi, rc = KG_EXIT_USAGE, shard_i = 0, shard_n = 0;
	char basis[160] = "";
	struct kg_suite *s = NULL;
	struct kg_suiterun sr = { 0 };
	struct kg_recset *sets = NULL;
	const char **names = NULL;
	struct kg_bench_summary *sum = NULL;
	struct kg_store *st = NULL;
	struct kg_run_info run = { 0 };
	char *gitsha = NULL, *gitbranch = NULL;
	regex_t re;
	int have_re = 0;
	size_t nsel = 0;

	const struct kg_opt opts[] = {
		KG_OPT_STR("config", 'c', "FILE", &cfg, "the suite (default kgate.yaml)"),
		KG_OPT_DB(&db),
		KG_OPT_HEAD_COMMIT(&commit, "measured",
				   "; a short SHA or ref is stored as the full SHA git gives"),
		KG_OPT_STR("branch", 0, "NAME", &branch,
			   "its branch (default: from git or GITHUB_HEAD_REF)"),
		KG_OPT_ONLY(&only),
		KG_OPT_FLAG("quick", 0, &quick,
			    "quick_repeat repeats instead of repeat (pre-push); a quick run is "
			    "never a baseline"),
		KG_OPT_STR("label", 0, "L", &label, "a label for the run"),
		KG_OPT_FLAG("verbose", 'v', &verbose, "show the benchmarks' output on stderr"),
		KG_OPT_STR("shard", 0, "I/N", &shard_arg,
			   "run the I-th of N slices of the suite (after --only), balanced by each "
			   "benchmark's wall time in the newest complete run of --db that recorded "
			   "them, else by count; stored as shard I/N of the commit, never a "
			   "baseline until 'kgate merge'"),
		KG_OPT_ONEOF("balance", 0, "B", &balance, balance_choices,
			     "time (default): balance the shards by the stored wall times; count: by "
			     "the number of benchmarks alone"),
		KG_OPT_TEXT_JSON(&format, "text (default) or json: the summary on stdout"),
		KG_OPT_END
	};
	const struct kg_optspec spec = { "run", synopsis, epilogue, opts, 0, 0 };
	if ((rc = opt_parse(&spec, argc, argv, &argi)) != KG_OPT_GO)
		return rc;
	if (shard_arg && (rc = shard_parse(shard_arg, &shard_i, &shard_n)) != KG_EXIT_PASS)
		return rc;
	if (only) {
		if ((rc = opt_regex("only", only, &re)) != KG_EXIT_PASS)
			return rc;
		have_re = 1;
	}
	if (!cfg)
		cfg = config_default_suite();
	if ((rc = config_load_suite(cfg, &s)) != KG_EXIT_PASS)
		goto out;
	rc = KG_EXIT_USAGE;
	if (!commit && !(commit = gitsha = ghevent_default_commit()))
		goto out;
	if (!branch)
		branch = gitbranch = git_branch();

	/* The benchmarks chosen. */
	const struct kg_benchmark **sel = xcalloc(s->n_benchmarks + 1, sizeof(*sel));
	for (size_t i = 0; i < s->n_benchmarks; i++)
		if (!have_re || regexec(&re, s->benchmarks[i].name, 0, NULL, 0) == 0)
			sel[nsel++] = &s->benchmarks[i];
	if (!nsel) {
		struct kg_buf b = KG_BUF_INIT;
		for (size_t i = 0; i < s->n_benchmarks; i++)
			buf_printf(&b, "%s%s", i ? ", " : "", s->benchmarks[i].name);
		kg_error("--only '%s' matches no benchmark of '%s' (it has: %s)", only, cfg, b.s);
		buf_free(&b);
		free(sel);
		goto out;
	}
	if (shard_n && (rc = pick_shard(db, sel, &nsel, quick, shard_i, shard_n, balance, basis,
					sizeof basis)) != KG_EXIT_PASS) {
		free(sel);
		goto out;
	}

	if ((rc = suiterun_init(&sr)) != KG_EXIT_PASS) {
		free(sel);
		goto out;
	}
	sr.passthrough = verbose;
	for (size_t i = 0; i < nsel; i++)
		sr.steps += sel[i]->warmup + (quick ? sel[i]->quick_repeat : sel[i]->repeat);
	runner_catch_signals();

	sets = xcalloc(nsel, sizeof(*sets));
	names = xcalloc(nsel, sizeof(*names));
	sum = xcalloc(nsel, sizeof(*sum));
	for (size_t i = 0; i < nsel && rc == KG_EXIT_PASS; i++) {
		const struct kg_benchmark *b = sel[i];
		int reps = quick ? b->quick_repeat : b->repeat;
		names[i] = b->name;
		for (int w = 0; w < b->warmup && rc == KG_EXIT_PASS; w++)
			rc = suiterun_once(&sr, s, b, NULL, -w - 1, &sets[i]);
		for (int r = 0; r < reps && rc == KG_EXIT_PASS; r++)
			rc = suiterun_once(&sr, s, b, NULL, r, &sets[i]);
	}
	free(sel);
	if (rc != KG_EXIT_PASS) {
		kg_error("nothing stored in '%s'", db);
		goto out;
	}

	run.commit = git_resolve_commit_arg(commit);
	run.branch = branch ? xstrdup(branch) : NULL;
	run.parent = git_parent(commit);
	run.label = label ? xstrdup(label) : NULL;
	if (shard_n)
		run.status = shard_status(shard_i, shard_n, quick);
	else if (quick)
		run.status = xstrdup("quick");
	if ((rc = store_open(db, 0, &st)) != KG_EXIT_PASS)
		goto out;
	if ((rc = suiterun_store(st, &run, names, sets, nsel, sum)) != KG_EXIT_PASS) {
		kg_error("nothing stored in '%s'", db);
		goto out;
	}
	kg_note("stored run %lld (commit %.12s, %s%s%zu benchmark%s%s%s)", (long long)run.id,
		run.commit, shard_n ? run.status : "", shard_n ? ": " : "", nsel,
		nsel == 1 ? "" : "s", run.gpu_name ? ", " : "", run.gpu_name ? run.gpu_name : "");
	if (!strcmp(format, "json")) {
		json_t *arr = json_array();
		for (size_t i = 0; i < nsel; i++)
			json_array_append_new(arr, json_pack("{s:s, s:i, s:I, s:I, s:I, s:f}",
				"name", sum[i].name, "processes", sum[i].processes,
				"kernels", (json_int_t)sum[i].kernels,
				"launches", (json_int_t)sum[i].launches,
				"samples", (json_int_t)sum[i].samples, "wall_s", sum[i].wall_s));
		json_t *o = json_pack("{s:I, s:s, s:s?, s:s?, s:s?, s:s?, s:s?, s:o}",
				      "run", (json_int_t)run.id, "commit", run.commit,
				      "branch", run.branch, "gpu", run.gpu_name, "uuid", run.gpu_uuid,
				      "chip", run.gpu_chip, "driver", run.driver, "benchmarks", arr);
		if (shard_n)
			json_object_set_new(o, "shard", json_pack("{s:i, s:i, s:s}", "index", shard_i,
								  "of", shard_n, "balanced_by", basis));
				kg_json_print(o, JSON_COMPACT);
	} else {
		int w = 9;
		for (size_t i = 0; i < nsel; i++)
			if ((int)strlen(sum[i].name) > w)
				w = (int)strlen(sum[i].name);
		for (size_t i = 0; i < nsel; i++)
			printf("%-*s  %3d run%s  %4zu kernel%s  %8zu launches  %9.3f s\n", w,
			       sum[i].name, sum[i].processes, sum[i].processes == 1 ? " " : "s",
			       sum[i].kernels, sum[i].kernels == 1 ? " " : "s", sum[i].launches,
			       sum[i].wall_s);
	}
	rc = KG_EXIT_PASS;
out:
	store_close(st);
	store_run_info_free(&run);
	suiterun_recsets_free(sets, nsel);
	free(names);
	free(sum);
	suiterun_free(&sr);
	config_free_suite(s);
	if (have_re)
		regfree(&re);
	free(gitsha);
	free(gitbranch);
	return rc;
}
