/*
 * cmd_compare.c: "kgate compare": an A/B comparison in one job.  The suite
 * of the base directory and the suite of the head directory run
 * interleaved (each repeat of each benchmark: base and head in a seeded
 * random order, so that drift of the machine hits both sides alike), both
 * are stored as runs labelled "base" and "head", and check_runs() gates
 * head against base.  With --confirm, what that comparison flags (FAIL or
 * INCONCLUSIVE) is decided again on confirmation rounds of just those
 * benchmarks (confirm.h), kept in a database in memory: only the verdicts
 * reach the database, not the extra runs.
 */
#include "cmd.h"
#include "kgate/check.h"
#include "kgate/config.h"
#include "kgate/confirm.h"
#include "kgate/gate.h"
#include "kgate/ghevent.h"
#include "kgate/git.h"
#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/output.h"
#include "kgate/runner.h"
#include "kgate/store.h"
#include "kgate/suiterun.h"
#include "kgate/util.h"

#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char synopsis[] =
	"usage: kgate compare --base-dir DIR --head-dir DIR [-c kgate.yaml]\n"
	"                     [-t thresholds.yaml] [--db PATH] [--only REGEX] [--quick]\n"
	"                     [--seed N] [-v] [--explain] [--confirm]\n"
	"                     [--confirm-rounds N] [--confirm-budget DURATION]\n"
	"                     [--format text|markdown|json|junit|github]\n"
	"\n"
	"Run the suite of two checkouts (two builds) interleaved on this machine,\n"
	"store both as runs labelled base and head, and check head against base.\n";

static const char epilogue[] =
	"Exit status: 0 no regression; 1 regression; 2 bad usage, suite or\n"
	"thresholds; 3 a benchmark failed (nothing stored), or a database error.\n";

/* splitmix64: a small, well-mixed generator; the same order on every machine. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* HEAD's SHA in dir (for the head side in a pull request's Actions job,
 * the pull request's head commit: ghevent.h), else the directory's name. */
static char *side_commit(const char *dir, int head_side, char **branch)
{
	int here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *sha = NULL;

	*branch = NULL;
	if (here >= 0 && chdir(dir) == 0) {
		sha = head_side ? ghevent_head_commit() : git_head();
		*branch = git_branch();
		if (fchdir(here) != 0)
			kg_warn("cannot return to the working directory: %s", strerror(errno));
	}
	if (here >= 0)
		close(here);
	if (!sha) {
		char *copy = xstrdup(dir);
		size_t l = strlen(copy);
		while (l > 1 && copy[l - 1] == '/')
			copy[--l] = '\0';
		const char *slash = strrchr(copy, '/');
		sha = xstrdup(slash && slash[1] ? slash + 1 : copy);
		free(copy);
	}
	return sha;
}

/* One benchmark, both sides: b[0] base, b[1] head; either may be NULL. */
struct pair {
	const struct kg_benchmark *b[2];
	size_t slot[2];            /* its recset on each side */
};

static const char *const label[2] = { "base", "head" };

static int name_in(char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

/*
 * Run pairs (only the benchmarks named in keep, when keep is not NULL):
 * for each, its warmups and then its repeats, each round's base and head
 * in a random order, into sets[side][pair's slot].
 */
static int run_interleaved(struct kg_suiterun *sr, struct kg_suite *const s[2],
			   const struct pair *pairs, size_t np, char *const *keep, size_t nkeep,
			   int quick, uint64_t *state, struct kg_recset *const sets[2])
{
	int rc = KG_EXIT_PASS;

	for (size_t i = 0; i < np && rc == KG_EXIT_PASS; i++) {
		const struct kg_benchmark *const *b = pairs[i].b;
		int warm[2], reps[2], most;
		if (keep && !name_in(keep, nkeep, (b[1] ? b[1] : b[0])->name))
			continue;
		for (int k = 0; k < 2; k++) {
			warm[k] = b[k] ? b[k]->warmup : 0;
			reps[k] = b[k] ? (quick ? b[k]->quick_repeat : b[k]->repeat) : 0;
		}
		/* Warmups first (-1, -2, ...), then repeats; each round in random order. */
		for (int w = 0; w < (warm[0] > warm[1] ? warm[0] : warm[1]); w++)
			for (int j = 0, first = (int)(next_rand(state) & 1); j < 2 && !rc; j++) {
				int k = j ? !first : first;
				if (w < warm[k])
					rc = suiterun_once(sr, s[k], b[k], label[k], -w - 1,
							   &sets[k][pairs[i].slot[k]]);
			}
		most = reps[0] > reps[1] ? reps[0] : reps[1];
		for (int r = 0; r < most && rc == KG_EXIT_PASS; r++)
			for (int j = 0, first = (int)(next_rand(state) & 1); j < 2 && !rc; j++) {
				int k = j ? !first : first;
				if (r < reps[k])
					rc = suiterun_once(sr, s[k], b[k], label[k], r,
							   &sets[k][pairs[i].slot[k]]);
			}
	}
	return rc;
}

static double now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * compare --confirm: screen with the gate of the stored runs, then rounds
 * of the flagged benchmarks into a database in memory, a look after each
 * (confirm.h).  Fills *c; KG_EXIT_PASS, or an error from a benchmark or
 * the store (said).
 */
static int confirm_rounds(struct kg_store *st, const struct kg_thresholds *t,
			  const struct kg_run_info run[2], struct kg_suiterun *sr,
			  struct kg_suite *const s[2], const struct pair *pairs, size_t np,
			  int quick, uint64_t *state, int rounds, double budget_s,
			  struct kg_confirm *c)
{
	struct kg_sampleset hs = { 0 }, bs = { 0 };
	struct kg_gate g;
	struct kg_recset *sets[2] = { xcalloc(np ? np : 1, sizeof(**sets)),
				      xcalloc(np ? np : 1, sizeof(**sets)) };
	const char **names[2] = { xcalloc(np ? np : 1, sizeof(**names)),
				  xcalloc(np ? np : 1, sizeof(**names)) };
	struct kg_store *mem = NULL;
	double t0 = now_mono();
	int rc = check_gate(st, t, &run[1], &run[0], 1, &hs, &bs, &g);

	memset(c, 0, sizeof(*c));
	if (rc == KG_EXIT_PASS)
		confirm_flag(c, &g, rounds);
	gate_free(&g);
	store_sampleset_free(&hs);
	store_sampleset_free(&bs);
	if (rc != KG_EXIT_PASS || !c->n)
		goto out;
	for (size_t i = 0; i < np; i++)
		for (int k = 0; k < 2; k++)
			if (pairs[i].b[k])
				names[k][pairs[i].slot[k]] = pairs[i].b[k]->name;
	if ((rc = store_open(":memory:", 0, &mem)) != KG_EXIT_PASS)
		goto out;
	for (int k = 1; k <= c->planned; k++) {
		size_t nopen = 0;
		char **open = confirm_open_benchmarks(c, &nopen);
		if (!nopen) {
			store_names_free(open, nopen);
			break;
		}
		if (k > 1 && budget_s > 0 && now_mono() - t0 >= budget_s) {
			kg_note("confirm: the budget of %.0f s is spent after %d round%s; %zu "
				"comparison%s still open", budget_s, k - 1, k == 2 ? "" : "s",
				nopen, nopen == 1 ? "" : "s");
			store_names_free(open, nopen);
			break;
		}
		kg_note("confirm: round %d of %d: %zu benchmark%s, at alpha %.4g", k, c->planned,
			nopen, nopen == 1 ? "" : "s", confirm_alpha(t->alpha, k, c->planned));
		for (size_t i = 0; i < np; i++)
			for (int sd = 0; sd < 2; sd++)
				if (pairs[i].b[sd] && name_in(open, nopen, pairs[i].b[sd]->name))
					sr->steps += pairs[i].b[sd]->warmup +
						     (quick ? pairs[i].b[sd]->quick_repeat
							    : pairs[i].b[sd]->repeat);
		rc = run_interleaved(sr, s, pairs, np, open, nopen, quick, state, sets);
		/* The rounds so far, as one pair of runs in the memory database. */
		struct kg_run_info look[2] = { { 0 }, { 0 } };
		const char **ln[2] = { xcalloc(np ? np : 1, sizeof(**ln)),
				       xcalloc(np ? np : 1, sizeof(**ln)) };
		struct kg_recset *ls[2] = { xcalloc(np ? np : 1, sizeof(**ls)),
					    xcalloc(np ? np : 1, sizeof(**ls)) };
		size_t nl[2] = { 0, 0 };
		for (size_t i = 0; i < np; i++)
			for (int sd = 0; sd < 2; sd++) {
				const struct kg_recset *rs = pairs[i].b[sd] ? &sets[sd][pairs[i].slot[sd]] : NULL;
				if (rs && rs->n) {
					ln[sd][nl[sd]] = names[sd][pairs[i].slot[sd]];
					ls[sd][nl[sd]++] = *rs;   /* shared paths: not freed here */
				}
			}
		for (int sd = 0; sd < 2 && rc == KG_EXIT_PASS; sd++) {
			look[sd].commit = xstrdup(run[sd].commit);
			look[sd].label = xasprintf("%s confirm %d", label[sd], k);
			rc = suiterun_store(mem, &look[sd], ln[sd], ls[sd], nl[sd], NULL);
		}
		if (rc == KG_EXIT_PASS) {
			struct kg_thresholds tk = *t;
			tk.alpha = confirm_alpha(t->alpha, k, c->planned);
			rc = check_gate(mem, &tk, &look[1], &look[0], 1, &hs, &bs, &g);
			if (rc == KG_EXIT_PASS)
				confirm_look(c, &g, k);
			gate_free(&g);
			store_sampleset_free(&hs);
			store_sampleset_free(&bs);
		}
		for (int sd = 0; sd < 2; sd++) {
			store_run_info_free(&look[sd]);
			free(ln[sd]);
			free(ls[sd]);
		}
		store_names_free(open, nopen);
		if (rc != KG_EXIT_PASS)
			break;
	}
out:
	store_close(mem);
	for (int k = 0; k < 2; k++) {
		suiterun_recsets_free(sets[k], np);
		free(names[k]);
	}
	return rc;
}

/* --seed N */
struct seed_opt {
	uint64_t value;
	int given;
};

static int parse_seed(const struct kg_opt *o, const char *arg)
{
	struct seed_opt *so = o->ctx;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (!arg[0] || *end || errno || arg[0] == '-') {
		kg_error("--seed '%s' is not a non-negative integer", arg);
		return KG_EXIT_USAGE;
	}
	so->value = v;
	so->given = 1;
	return KG_EXIT_PASS;
}

int cmd_compare(int argc, char **argv)
{
	const char *dir[2] = { NULL, NULL }, *cfg = "kgate.yaml", *tpath = NULL;
	const char *db = store_default_db(), *only = NULL;
	enum kg_format format = KG_FMT_TEXT;
	int quick = 0, verbose = 0, explain = 0, have_seed = 0, format_i = KG_FMT_TEXT, argi;
	int rc = KG_EXIT_USAGE;
	int confirm = 0;
	long rounds = KG_CONFIRM_ROUNDS;
	const char *budget = NULL;
	double budget_s = 0;
	struct kg_confirm conf = { 0 };
	uint64_t seed = 0;
	struct seed_opt so = { 0, 0 };
	struct kg_suite *s[2] = { NULL, NULL };
	struct kg_thresholds *t = NULL;
	struct kg_suiterun sr = { 0 };
	struct pair *pairs = NULL;
	size_t np = 0;
	struct kg_recset *sets[2] = { NULL, NULL };
	const char **names[2] = { NULL, NULL };
	struct kg_run_info run[2] = { { 0 }, { 0 } };
	struct kg_store *st = NULL;
	regex_t re;
	int have_re = 0;

	const struct kg_opt opts[] = {
		KG_OPT_STR("base-dir", 0, "DIR", &dir[0],
			   "the baseline checkout (its build must be done)"),
		KG_OPT_STR("head-dir", 0, "DIR", &dir[1], "the checkout under test"),
		KG_OPT_STR("config", 'c', "FILE", &cfg,
			   "the suite, relative to each DIR unless absolute (default kgate.yaml)"),
		KG_OPT_STR("thresholds", 't', "F", &tpath,
			   "thresholds (default: the head suite's, else built in)"),
		KG_OPT_DB(&db),
		KG_OPT_ONLY(&only),
		KG_OPT_FLAG("quick", 0, &quick, "quick_repeat repeats instead of repeat"),
		KG_OPT_CALL("seed", 0, "N", parse_seed, &so,
			    "seed of the base/head order (default: from the clock; printed, so "
			    "that an order can be repeated)"),
		KG_OPT_FLAG("verbose", 'v', &verbose, "show the benchmarks' output on stderr"),
		KG_OPT_CHOICE("format", 0, "F", &format_i, output_format_names,
			      "verdict format: text (default), markdown, json, junit, github"),
		KG_OPT_FLAG("explain", 0, &explain,
			    "say why each FAILed kernel regressed, from the counters the two runs "
			    "stored (as 'kgate check --explain'); kept with the verdicts"),
		KG_OPT_FLAG("confirm", 0, &confirm,
			    "decide each FAIL and INCONCLUSIVE again on fresh interleaved repeats "
			    "of its benchmark, in rounds, at a level that keeps the false-alarm rate "
			    "at alpha over all rounds; the verdicts say how many rounds each took"),
		KG_OPT_LONG("confirm-rounds", 0, "N", &rounds, 1, 20,
			    "at most N confirmation rounds (default 3; implies --confirm)"),
		KG_OPT_STR("confirm-budget", 0, "D", &budget,
			   "start no round after D (a duration: 10m) has passed since the first; "
			   "what is still open is INCONCLUSIVE (implies --confirm)"),
		KG_OPT_END
	};
	const struct kg_optspec spec = { "compare", synopsis, epilogue, opts, 0, 0 };
	if ((rc = opt_parse(&spec, argc, argv, &argi)) != KG_OPT_GO)
		return rc;
	format = (enum kg_format)format_i;
	seed = so.value;
	have_seed = so.given;
	if (budget && (config_parse_duration(budget, &budget_s) < 0 || budget_s <= 0)) {
		kg_error("--confirm-budget '%s' is not a duration above zero such as 90s or 10m",
			 budget);
		return KG_EXIT_USAGE;
	}
	if (budget || rounds != KG_CONFIRM_ROUNDS)
		confirm = 1;
	if (!dir[0] || !dir[1]) {
		kg_error("give both --base-dir DIR and --head-dir DIR; see 'kgate compare --help'");
		return KG_EXIT_USAGE;
	}
	if (only) {
		if ((rc = opt_regex("only", only, &re)) != KG_EXIT_PASS)
			return rc;
		have_re = 1;
	}
	for (int k = 0; k < 2; k++)
		if ((rc = suiterun_load_suite(dir[k], cfg, &s[k])) != KG_EXIT_PASS)
			goto out;
	if (tpath)
		rc = config_load_thresholds(tpath, &t);
	else if (s[1]->thresholds)
		rc = config_load_thresholds(s[1]->thresholds, &t);
	else
		t = config_default_thresholds();
	if (rc != KG_EXIT_PASS)
		goto out;

	/* The benchmarks: head's in its order, then those only base has. */
	pairs = xcalloc(s[0]->n_benchmarks + s[1]->n_benchmarks, sizeof(*pairs));
	for (size_t i = 0; i < s[1]->n_benchmarks; i++) {
		const struct kg_benchmark *h = &s[1]->benchmarks[i];
		if (!have_re || !regexec(&re, h->name, 0, NULL, 0))
			pairs[np++] = (struct pair){ .b = { config_find_benchmark(s[0], h->name), h } };
	}
	for (size_t i = 0; i < s[0]->n_benchmarks; i++) {
		const struct kg_benchmark *b = &s[0]->benchmarks[i];
		if ((!have_re || !regexec(&re, b->name, 0, NULL, 0)) && !config_find_benchmark(s[1], b->name))
			pairs[np++] = (struct pair){ .b = { b, NULL } };
	}
	if (!np) {
		kg_error("--only '%s' matches no benchmark of either suite", only);
		rc = KG_EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < np; i++)
		for (int k = 0; k < 2; k++)
			if (!pairs[i].b[k])
				kg_warn("benchmark '%s' is only in the %s suite; it runs on that side "
					"only", pairs[i].b[!k]->name, label[!k]);

	if (!have_seed)
		seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	kg_note("compare: base/head order from seed %llu (--seed reproduces it)",
		(unsigned long long)seed);
	uint64_t state = seed;

	if ((rc = suiterun_init(&sr)) != KG_EXIT_PASS)
		goto out;
	sr.passthrough = verbose;
	for (size_t i = 0; i < np; i++)
		for (int k = 0; k < 2; k++)
			if (pairs[i].b[k])
				sr.steps += pairs[i].b[k]->warmup +
					    (quick ? pairs[i].b[k]->quick_repeat : pairs[i].b[k]->repeat);
	runner_catch_signals();
	for (int k = 0; k < 2; k++) {
		sets[k] = xcalloc(np, sizeof(*sets[k]));
		names[k] = xcalloc(np, sizeof(*names[k]));
	}
	size_t nset[2] = { 0, 0 };
	for (size_t i = 0; i < np; i++)
		for (int k = 0; k < 2; k++)
			if (pairs[i].b[k]) {
				pairs[i].slot[k] = nset[k]++;
				names[k][pairs[i].slot[k]] = pairs[i].b[k]->name;
			}
	rc = run_interleaved(&sr, s, pairs, np, NULL, 0, quick, &state, sets);
	if (rc != KG_EXIT_PASS) {
		kg_error("nothing stored in '%s'", db);
		goto out;
	}

	if ((rc = store_open(db, 0, &st)) != KG_EXIT_PASS)
		goto out;
	for (int k = 0; k < 2; k++) {
		char *br = NULL;
		run[k].commit = side_commit(dir[k], k == 1, &br);
		run[k].branch = br;
		run[k].label = xstrdup(label[k]);
		rc = suiterun_store(st, &run[k], names[k], sets[k], nset[k], NULL);
		if (rc != KG_EXIT_PASS) {
			if (k == 1)
				kg_error("the base run %lld stays stored; the head run is not",
					 (long long)run[0].id);
			else
				kg_error("nothing stored in '%s'", db);
			goto out;
		}
		kg_note("stored the %s run %lld (commit %.12s)", label[k], (long long)run[k].id,
			run[k].commit);
	}

	if (confirm && (rc = confirm_rounds(st, t, run, &sr, s, pairs, np, quick, &state, (int)rounds,
					     budget_s, &conf)) != KG_EXIT_PASS) {
		kg_error("the confirmation rounds did not finish; the two runs stay stored, "
			 "no verdicts are");
		goto out;
	}
	if (confirm && !conf.n)
		kg_note("confirm: nothing to confirm (no FAIL or INCONCLUSIVE)");
	char *bl = xasprintf("%s (compare base)", run[0].commit ? run[0].commit : "?");
	struct kg_check_opts o = {
		.format = format,
		.color = format == KG_FMT_TEXT && kg_use_color(1),
		.out = stdout,
		.store_verdicts = 1,
		.summary = 1,
		.explain = explain,
		.confirm = conf.n ? &conf : NULL,
	};
	rc = check_runs(st, t, &run[1], &run[0], 1, bl, &o);
	free(bl);
out:
	confirm_free(&conf);
	store_close(st);
	for (int k = 0; k < 2; k++) {
		store_run_info_free(&run[k]);
		suiterun_recsets_free(sets[k], np);
		free(names[k]);
		config_free_suite(s[k]);
	}
	free(pairs);
	suiterun_free(&sr);
	config_free_thresholds(t);
	if (have_re)
		regfree(&re);
	return rc;
}
