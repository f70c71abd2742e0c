/*
 * cmd_bisect.c: "kgate bisect": the first commit at which one kernel got
 * slower.
 *
 * Between a good and a bad commit kgate drives "git bisect run" with
 * itself as the test ("kgate bisect --step"): at each commit git checks
 * out, the step reuses a stored run of that commit that has the kernel, or
 * else builds (the user's --build command, through /bin/sh) and runs the
 * suite's benchmarks that launch the kernel ("kgate run --only", stored as
 * any run, labelled "bisect"), then gates the kernel's metric against the
 * good commit's runs under the thresholds: FAIL is bad, PASS is good, and
 * an inconclusive comparison goes to the side whose median is nearer.  A
 * commit that does not build or run is skipped (git's exit status 125).
 *
 * Whatever happens, also on SIGINT, SIGTERM or SIGHUP, the repository is
 * left on the branch or commit it was on: the running step's process group
 * is ended and "git bisect reset" takes HEAD back.
 */
#include "cmd.h"
#include "kgate/escape.h"
#include "kgate/check.h"
#include "kgate/config.h"
#include "kgate/gate.h"
#include "kgate/git.h"
#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/stats.h"
#include "kgate/store.h"
#include "kgate/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char synopsis[] =
	"usage: kgate bisect --good A --bad B --kernel K [--metric M] [--build CMD]\n"
	"                    [-c kgate.yaml] [-t thresholds.yaml] [--db PATH]\n"
	"                    [--format text|json]\n"
	"\n"
	"Find the first commit between A (good) and B (bad) at which kernel K got\n"
	"slower, with git bisect.  At each commit tested, a stored run of that commit\n"
	"is reused when it has K; otherwise CMD builds the commit and kgate runs the\n"
	"suite's benchmarks that launch K (stored, labelled \"bisect\").  The commit is\n"
	"bad when K's metric FAILs against A's runs under the thresholds, good when\n"
	"it PASSes, and otherwise goes to the side whose median is nearer.  A commit\n"
	"that does not build or run is skipped.  The repository is left on the branch\n"
	"or commit it was on, also when kgate is interrupted.\n";

static const char epilogue[] =
	"Exit status: 1 the first bad commit was found (the regression named); 0 K is\n"
	"not slower at B than at A (nothing to bisect); 2 bad usage, a revision or\n"
	"kernel not found, a dirty work tree or a bisection already under way; 3 a\n"
	"database error, A or B could not be built or run, the bisection could not\n"
	"finish (too many commits skipped), or kgate was interrupted.\n";

struct bisect_args {
	const char *good, *bad, *kernel, *metric, *build;
	const char *cfg, *thresholds, *db, *format;
	int step;              /* 1: one step of "git bisect run" (internal) */
	const char *dir;       /* the directory kgate bisect was started in (step) */
};

/* ---- signals: end the running child's process group, remember why ---- */

static volatile sig_atomic_t got_signal;
static volatile pid_t child_pgid;

static void on_signal(int sig)
{
	got_signal = sig;
	if (child_pgid > 0)
		kill(-child_pgid, SIGTERM);
}

static void signals_catch(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/*
 * Run argv in a process group of its own, its stdout on our stderr, and
 * wait for it.  Its exit status, or -1 when it could not start or was
 * killed by a signal.
 */
static int spawn_wait(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	pid_t pid;
	int status;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, 2, 1);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&at, 0);
	int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc != 0) {
		kg_error("cannot run '%s': %s", argv[0], strerror(rc));
		return -1;
	}
	child_pgid = pid;
	if (got_signal)
		kill(-pid, SIGTERM);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	child_pgid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- the kernel's series ---- */

static int kernel_is(const struct kg_series *s, const char *k)
{
	return (s->kernel && strcmp(s->kernel, k) == 0) ||
	       (s->demangled && strcmp(s->demangled, k) == 0) ||
	       (s->base && strcmp(s->base, k) == 0);
}

/*
 * Which series are the kernel's: exact matches on any of its three names;
 * else, when exactly one demangled name contains k, that kernel's.  Sets
 * the chosen demangled name in *which (borrowed from set) or NULL.
 */
static const char *kernel_pick(const struct kg_sampleset *set, const char *k)
{
	const char *part = NULL;
	for (size_t i = 0; i < set->n; i++) {
		const struct kg_series *s = &set->s[i];
		if (kernel_is(s, k))
			return s->kernel;
		if (s->demangled && strstr(s->demangled, k)) {
			if (part && strcmp(part, s->kernel) != 0)
				return "";      /* ambiguous */
			part = s->kernel;
		}
	}
	return part;
}

/* The series of set that belong to mangled kernel name kernel and metric
 * (shallow copies: free only out->s). */
static void series_filter(const struct kg_sampleset *set, const char *kernel,
			  const char *metric, struct kg_sampleset *out)
{
	out->s = xcalloc(set->n ? set->n : 1, sizeof *out->s);
	out->n = 0;
	for (size_t i = 0; i < set->n; i++)
		if (set->s[i].kernel && strcmp(set->s[i].kernel, kernel) == 0 &&
		    strcmp(set->s[i].metric, metric) == 0)
			out->s[out->n++] = set->s[i];
}

static double series_median(const struct kg_sampleset *set)
{
	size_t n = 0;
	for (size_t i = 0; i < set->n; i++)
		n += set->s[i].n;
	if (!n)
		return NAN;
	double *v = xcalloc(n, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < set->n; i++)
		for (size_t j = 0; j < set->s[i].n; j++)
			v[k++] = set->s[i].v[j];
	double m = stats_median(v, n);
	free(v);
	return m;
}

/*
 * The stored run of commit sha (newest first) whose samples have kernel
 * and metric, on gpu (NULL: any); its samples in *set.  0 and *run filled,
 * 0 with run->id 0 when there is none, KG_EXIT_RUNTIME.
 */
static int run_with_kernel(struct kg_store *st, const char *sha, const char *gpu,
			   const char *kernel, const char *metric,
			   struct kg_run_info *run, struct kg_sampleset *set)
{
	struct kg_run_filter f = { 0 };
	struct kg_run_info *runs;
	size_t n;
	int rc;

	memset(run, 0, sizeof *run);
	memset(set, 0, sizeof *set);
	f.commit = sha;
	f.gpu_name = gpu;
	if ((rc = store_find_runs(st, &f, &runs, &n)) != KG_EXIT_PASS)
		return rc;
	for (size_t i = 0; i < n; i++) {
		struct kg_sampleset all = { 0 };
		if ((rc = store_load_samples(st, &runs[i].id, 1, &all)) != KG_EXIT_PASS)
			break;
		const char *k = kernel_pick(&all, kernel);
		int has = 0;
		if (k && *k)
			for (size_t j = 0; j < all.n && !has; j++)
				has = strcmp(all.s[j].kernel, k) == 0 &&
				      strcmp(all.s[j].metric, metric) == 0;
		if (has) {
			*run = runs[i];
			memset(&runs[i], 0, sizeof runs[i]);
			*set = all;
			break;
		}
		store_sampleset_free(&all);
	}
	store_runs_free(runs, n);
	return rc;
}

/* One comparison of the kernel at one commit against a reference commit. */
struct judgement {
	enum kg_verdict verdict;   /* the gate's, worst over the kernel's series */
	double shift;              /* relative change of the medians (worst series) */
	double head, base;         /* medians over all of the kernel's launches */
	char where[256];           /* "benchmark [nvtx]" of the worst series */
	char unit[32];
};

/*
 * Gate kernel k / metric m of head (its samples hs) against the runs of
 * commit ref on head's GPU.  1 and *j filled; 0 when ref has no run with
 * the kernel; KG_EXIT_RUNTIME negated (-3) on a database error.
 */
static int judge(struct kg_store *st, const struct kg_thresholds *t,
		 const struct kg_run_info *head, const struct kg_sampleset *hs,
		 const char *k, const char *m, const char *ref, struct judgement *j)
{
	struct kg_run_info *base = NULL;
	size_t n_base = 0;
	struct kg_sampleset bs = { 0 }, hf = { 0 }, bf = { 0 };
	int rc, found = 0;

	memset(j, 0, sizeof *j);
	j->shift = NAN;
	if (check_find_baseline(st, head, ref, (size_t)t->baseline_runs, &base, &n_base))
		return -KG_EXIT_RUNTIME;
	if (n_base) {
		int64_t *ids = xcalloc(n_base, sizeof *ids);
		for (size_t i = 0; i < n_base; i++)
			ids[i] = base[i].id;
		rc = store_load_samples(st, ids, n_base, &bs);
		free(ids);
		if (rc != KG_EXIT_PASS) {
			store_runs_free(base, n_base);
			return -KG_EXIT_RUNTIME;
		}
	}
	series_filter(hs, k, m, &hf);
	series_filter(&bs, k, m, &bf);
	if (bf.n && hf.n) {
		struct kg_gate g;
		double worst = -INFINITY;
		found = 1;
		gate_compare(t, &bf, &hf, &g);
		j->verdict = KG_VERDICT_PASS;
		for (size_t i = 0; i < g.n; i++) {
			const struct kg_result *r = &g.r[i];
			if (r->verdict == KG_VERDICT_FAIL ||
			    (r->verdict != KG_VERDICT_PASS && j->verdict == KG_VERDICT_PASS))
				j->verdict = r->verdict == KG_VERDICT_FAIL ? KG_VERDICT_FAIL
									   : KG_VERDICT_INCONCLUSIVE;
			double s = r->higher_is_better ? -r->shift : r->shift;
			if (isfinite(s) && s > worst) {
				worst = s;
				j->shift = r->shift;
				snprintf(j->where, sizeof j->where, "%s%s%s%s", r->benchmark,
					 r->nvtx && *r->nvtx ? " [" : "", r->nvtx ? r->nvtx : "",
					 r->nvtx && *r->nvtx ? "]" : "");
				snprintf(j->unit, sizeof j->unit, "%s", r->unit ? r->unit : "");
			}
		}
		if (!g.n)
			j->verdict = KG_VERDICT_SKIP;
		gate_free(&g);
		j->head = series_median(&hf);
		j->base = series_median(&bf);
		if (!isfinite(j->shift) && j->base > 0)
			j->shift = j->head / j->base - 1;
	}
	free(hf.s);
	free(bf.s);
	store_sampleset_free(&bs);
	store_runs_free(base, n_base);
	return found;
}

/* ---- measuring one commit ---- */

static char *self_exe(void)
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return xstrdup("kgate");
	buf[n] = '\0';
	return xstrdup(buf);
}

/* "^(a|b)$" with ERE metacharacters of the names escaped. */
static char *only_regex(char **names, size_t n)
{
	struct kg_buf b = KG_BUF_INIT;
	buf_adds(&b, "^(");
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_addc(&b, '|');
		for (const char *p = names[i]; *p; p++) {
			if (strchr("\\^$.|?*+()[]{}", *p))
				buf_addc(&b, '\\');
			buf_addc(&b, *p);
		}
	}
	buf_adds(&b, ")$");
	return buf_detach(&b);
}

/*
 * Build and measure the checked-out commit sha: the build command, then
 * "kgate run --only" of the benchmarks (all of them when n is 0).  0 when
 * a run was stored; 125 when the commit cannot be built or run (git's
 * "skip"); -1 when interrupted.
 */
static int measure(const struct bisect_args *a, const char *sha, char **benchmarks, size_t n)
{
	if (a->build) {
		char *sh[] = { (char *)"/bin/sh", (char *)"-c", (char *)a->build, NULL };
		kg_note("bisect: %.12s: building: %s", sha, a->build);
		int s = spawn_wait(sh);
		if (got_signal)
			return -1;
		if (s != 0) {
			kg_warn("bisect: %.12s: the build command failed (status %d): skipped", sha, s);
			return 125;
		}
	}
	char *self = self_exe(), *re = n ? only_regex(benchmarks, n) : NULL;
	char *argv[20];
	size_t k = 0;
	argv[k++] = self;
	argv[k++] = (char *)"run";
	argv[k++] = (char *)"--config";
	argv[k++] = (char *)a->cfg;
	argv[k++] = (char *)"--db";
	argv[k++] = (char *)a->db;
	argv[k++] = (char *)"--commit";
	argv[k++] = (char *)sha;
	argv[k++] = (char *)"--label";
	argv[k++] = (char *)"bisect";
	if (re) {
		argv[k++] = (char *)"--only";
		argv[k++] = re;
	}
	argv[k] = NULL;
	kg_note("bisect: %.12s: running %s", sha, re ? re : "the whole suite");
	int s = spawn_wait(argv);
	free(self);
	free(re);
	if (got_signal)
		return -1;
	if (s != 0) {
		kg_warn("bisect: %.12s: 'kgate run' failed (status %d): skipped", sha, s);
		return 125;
	}
	return 0;
}

/* The benchmarks whose samples have kernel k (mangled) and metric m. */
static size_t benchmarks_of(const struct kg_sampleset *set, const char *k, const char *m,
			    char ***out)
{
	char **names = xcalloc(set->n + 1, sizeof *names);
	size_t n = 0;
	for (size_t i = 0; i < set->n; i++) {
		if (strcmp(set->s[i].kernel, k) || strcmp(set->s[i].metric, m))
			continue;
		size_t j = 0;
		while (j < n && strcmp(names[j], set->s[i].benchmark))
			j++;
		if (j == n)
			names[n++] = xstrdup(set->s[i].benchmark);
	}
	*out = names;
	return n;
}

static void names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* ---- one step of git bisect run ---- */

/* The exit status git bisect run reads: 0 good, 1 bad, 125 skip; 128 to
 * abort the bisection (a database error, or interrupted). */
static int bisect_step(const struct bisect_args *a, const struct kg_thresholds *t)
{
	struct kg_store *st = NULL;
	struct kg_run_info good = { 0 }, head = { 0 }, bad = { 0 };
	struct kg_sampleset gs = { 0 }, hs = { 0 }, bs = { 0 };
	struct judgement jg, jb;
	char **names = NULL;
	size_t n_names = 0;
	int rc = 128;
	char *sha = git_head();

	signals_catch();
	if (!sha || (a->dir && chdir(a->dir) != 0)) {
		kg_error("bisect: cannot tell which commit is checked out");
		free(sha);
		return 128;
	}
	if (store_open(a->db, 0, &st) != KG_EXIT_PASS)
		goto out;
	if (run_with_kernel(st, a->good, NULL, a->kernel, a->metric, &good, &gs) != KG_EXIT_PASS ||
	    !good.id)
		goto out;
	const char *k = kernel_pick(&gs, a->kernel);
	n_names = benchmarks_of(&gs, k, a->metric, &names);
	if (run_with_kernel(st, sha, good.gpu_name, k, a->metric, &head, &hs) != KG_EXIT_PASS)
		goto out;
	if (!head.id) {
		store_close(st);
		st = NULL;
		int m = measure(a, sha, names, n_names);
		if (m)
			{ rc = m < 0 ? 128 : m; goto out; }
		if (store_open(a->db, 0, &st) != KG_EXIT_PASS ||
		    run_with_kernel(st, sha, good.gpu_name, k, a->metric, &head, &hs) != KG_EXIT_PASS)
			goto out;
		if (!head.id) {
			kg_warn("bisect: %.12s: the run has no launch of the kernel: skipped", sha);
			rc = 125;
			goto out;
		}
	} else {
		kg_note("bisect: %.12s: reusing stored run %lld", sha, (long long)head.id);
	}
	int jr = judge(st, t, &head, &hs, k, a->metric, a->good, &jg);
	if (jr < 0)
		goto out;
	const char *why;
	if (jg.verdict == KG_VERDICT_FAIL) {
		rc = 1;
		why = "FAIL against good";
	} else if (jg.verdict == KG_VERDICT_PASS) {
		rc = 0;
		why = "PASS against good";
	} else {
		/* Inconclusive: the side whose median is nearer, on log scale. */
		if (run_with_kernel(st, a->bad, good.gpu_name, k, a->metric, &bad, &bs) != KG_EXIT_PASS)
			goto out;
		int b = bad.id ? judge(st, t, &head, &hs, k, a->metric, a->bad, &jb) : 0;
		if (b < 0)
			goto out;
		double dg = fabs(log(jg.head / jg.base));
		double db = b ? fabs(log(jb.head / jb.base)) : INFINITY;
		rc = db < dg ? 1 : 0;
		why = rc ? "inconclusive against good, nearer to bad"
			 : "inconclusive against good, nearer to good";
	}
	kg_note("bisect: %.12s: %+.2f%% (%s): %s", sha, 100 * jg.shift, why,
		rc ? "bad" : "good");
out:
	if (got_signal)
		rc = 128;
	names_free(names, n_names);
	store_sampleset_free(&gs);
	store_sampleset_free(&hs);
	store_sampleset_free(&bs);
	store_run_info_free(&good);
	store_run_info_free(&head);
	store_run_info_free(&bad);
	store_close(st);
	free(sha);
	return rc;
}

/* ---- the whole bisection ---- */

struct repo_state {
	char *orig;            /* the branch, or the commit, HEAD was on */
	int moved;             /* 1 once kgate checked anything out */
	int bisecting;         /* 1 once "git bisect start" ran */
};

static void repo_restore(struct repo_state *r)
{
	if (r->bisecting) {
		const char *a[] = { "bisect", "reset", "--quiet", r->orig, NULL };
		if (git_call(a, 1) != 0) {
			const char *b[] = { "bisect", "reset", NULL };
			git_call(b, 1);
		}
		r->bisecting = 0;
		r->moved = 0;
	}
	if (r->moved) {
		const char *a[] = { "checkout", "--quiet", r->orig, NULL };
		if (git_call(a, 0) != 0)
			kg_error("cannot check out '%s' again; the repository is at another commit", r->orig);
		r->moved = 0;
	}
}

static int checkout(struct repo_state *r, const char *sha)
{
	const char *a[] = { "checkout", "--quiet", "--detach", sha, NULL };
	r->moved = 1;
	if (git_call(a, 0) != 0) {
		kg_error("cannot check out %.12s", sha);
		return KG_EXIT_RUNTIME;
	}
	return KG_EXIT_PASS;
}

/* An absolute path for a path relative to the directory kgate runs in. */
static char *absolute(const char *p)
{
	if (p[0] == '/')
		return xstrdup(p);
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		return xstrdup(p);
	return xasprintf("%s/%s", cwd, p);
}

/* Make sure sha has a stored run with the kernel, measuring it if not. */
static int endpoint(struct kg_store **st, const struct bisect_args *a, struct repo_state *r,
		    const char *sha, const char *what, const char *gpu, const char *k,
		    char **names, size_t n)
{
	struct kg_run_info run;
	struct kg_sampleset set;
	int rc = run_with_kernel(*st, sha, gpu, k ? k : a->kernel, a->metric, &run, &set);
	if (rc)
		return rc;
	int have = run.id != 0;
	store_run_info_free(&run);
	store_sampleset_free(&set);
	if (have)
		return KG_EXIT_PASS;
	kg_note("bisect: no stored run of the %s commit %.12s has the kernel: measuring it", what, sha);
	store_close(*st);
	*st = NULL;
	if ((rc = checkout(r, sha)) != KG_EXIT_PASS)
		return rc;
	int m = measure(a, sha, names, n);
	if (m != 0) {
		if (m > 0)
			kg_error("the %s commit %.12s could not be built or run", what, sha);
		return KG_EXIT_RUNTIME;
	}
	return store_open(a->db, 0, st);
}

static void print_result(const struct bisect_args *a, const char *first, const char *subject,
			 const char *kernel, const char *against, const struct judgement *j,
			 int64_t measured)
{
	if (strcmp(a->format, "json") == 0) {
		printf("{\"first_bad\":\"%s\",\"kernel\":", first);
		/* names and subjects may hold anything: escape as JSON */
		const char *strs[] = { kernel, a->metric, against, subject, j->where };
		struct kg_buf jb = KG_BUF_INIT;
		for (size_t i = 0; i < 5; i++) {
			static const char *const keys[] = { NULL, "metric", "against", "subject", "where" };
			if (i)
				buf_printf(&jb, ",\"%s\":", keys[i]);
			escape_json(&jb, strs[i]);
		}
		fwrite(jb.s, 1, jb.len, stdout);
		buf_free(&jb);
		printf(",\"base\":%.17g,\"head\":%.17g,\"shift\":%.17g,\"verdict\":\"%s\",\"runs_measured\":%lld}\n",
		       isfinite(j->base) ? j->base : 0, isfinite(j->head) ? j->head : 0,
		       isfinite(j->shift) ? j->shift : 0, gate_verdict_name(j->verdict),
		       (long long)measured);
		return;
	}
	printf("first bad commit: %s %s\n", first, subject);
	printf("  %s: %s  %s  %.6g -> %.6g %s (%+.2f%%, %s) against %.12s\n", j->where, kernel,
	       a->metric, j->base, j->head, j->unit, 100 * j->shift, gate_verdict_name(j->verdict),
	       against);
	printf("  %lld run%s measured by this bisection\n", (long long)measured,
	       measured == 1 ? "" : "s");
}

static int bisect_main(const struct bisect_args *a, const struct kg_thresholds *t)
{
	struct kg_store *st = NULL;
	struct repo_state repo = { 0 };
	struct kg_run_info run = { 0 };
	struct kg_sampleset set = { 0 };
	struct judgement j;
	char *good = NULL, *bad = NULL, *k = NULL, *first = NULL, *parent = NULL, *subject = NULL;
	char **names = NULL;
	size_t n_names = 0;
	int rc = KG_EXIT_USAGE;

	if (!(good = git_rev_parse(a->good)) || !(bad = git_rev_parse(a->bad))) {
		kg_error("'%s' is not a commit git knows here", good ? a->bad : a->good);
		goto out;
	}
	const char *anc[] = { "merge-base", "--is-ancestor", good, bad, NULL };
	if (strcmp(good, bad) == 0 || git_call(anc, 1) != 0) {
		kg_error("the good commit %.12s is not an ancestor of the bad commit %.12s", good, bad);
		goto out;
	}
	const char *inprog[] = { "bisect", "log", NULL };
	if (git_call(inprog, 1) == 0) {
		kg_error("a git bisect is already under way here; end it with 'git bisect reset'");
		goto out;
	}
	if (git_is_dirty()) {
		kg_error("the work tree has changes to tracked files; commit or stash them first");
		goto out;
	}
	const char *sym[] = { "symbolic-ref", "--quiet", "--short", "HEAD", NULL };
	if (!(repo.orig = git_output(sym)) && !(repo.orig = git_head())) {
		kg_error("cannot tell which commit is checked out");
		goto out;
	}
	if ((rc = store_open(a->db, 0, &st)) != KG_EXIT_PASS)
		goto out;
	int64_t runs_before = store_run_count(st);
	signals_catch();

	/* The kernel, and the benchmarks that launch it, from a stored run of
	 * the bad commit, else of the good one, else by running the whole suite
	 * at the bad commit. */
	if ((rc = run_with_kernel(st, bad, NULL, a->kernel, a->metric, &run, &set)))
		goto out;
	if (!run.id && (rc = run_with_kernel(st, good, NULL, a->kernel, a->metric, &run, &set)))
		goto out;
	if (!run.id) {
		if ((rc = endpoint(&st, a, &repo, bad, "bad", NULL, NULL, NULL, 0)) ||
		    (rc = run_with_kernel(st, bad, NULL, a->kernel, a->metric, &run, &set)))
			goto out;
		if (!run.id) {
			struct kg_run_filter f = { .commit = bad, .limit = 1 };
			struct kg_run_info *r1;
			size_t n1;
			struct kg_sampleset all = { 0 };
			kg_error("no kernel '%s' with metric %s in the run of %.12s", a->kernel, a->metric, bad);
			if (store_find_runs(st, &f, &r1, &n1) == KG_EXIT_PASS && n1 &&
			    store_load_samples(st, &r1[0].id, 1, &all) == KG_EXIT_PASS && all.n) {
				const char **cand = xcalloc(all.n, sizeof *cand);
				for (size_t i = 0; i < all.n; i++)
					cand[i] = all.s[i].demangled ? all.s[i].demangled : all.s[i].kernel;
				const char *s = kg_suggest(a->kernel, cand, all.n);
				if (s)
					fprintf(stderr, "kgate: did you mean '%s'?\n", s);
				free(cand);
			}
			store_sampleset_free(&all);
			if (n1)
				store_runs_free(r1, n1);
			rc = KG_EXIT_USAGE;
			goto out;
		}
	}
	const char *kp = kernel_pick(&set, a->kernel);
	if (!kp || !*kp) {
		kg_error("'%s' names %s kernel in the stored runs; give its mangled name", a->kernel,
			 kp ? "more than one" : "no");
		rc = KG_EXIT_USAGE;
		goto out;
	}
	k = xstrdup(kp);
	n_names = benchmarks_of(&set, k, a->metric, &names);
	char *gpu = run.gpu_name ? xstrdup(run.gpu_name) : NULL;
	store_sampleset_free(&set);
	store_run_info_free(&run);
	memset(&run, 0, sizeof run);
	if ((rc = endpoint(&st, a, &repo, good, "good", gpu, k, names, n_names)) ||
	    (rc = endpoint(&st, a, &repo, bad, "bad", gpu, k, names, n_names))) {
		free(gpu);
		goto out;
	}
	free(gpu);

	/* Is the bad commit slower at all? */
	if ((rc = run_with_kernel(st, bad, NULL, k, a->metric, &run, &set)))
		goto out;
	int jr = judge(st, t, &run, &set, k, a->metric, good, &j);
	if (jr < 0) {
		rc = KG_EXIT_RUNTIME;
		goto out;
	}
	if (!jr || j.verdict != KG_VERDICT_FAIL) {
		kg_note("bisect: %s at %.12s against %.12s: %s (%+.2f%%): nothing to bisect",
			a->metric, bad, good, jr ? gate_verdict_name(j.verdict) : "not compared",
			100 * j.shift);
		rc = KG_EXIT_PASS;
		goto out;
	}
	store_sampleset_free(&set);
	store_run_info_free(&run);
	memset(&run, 0, sizeof run);
	store_close(st);
	st = NULL;

	/* git bisect run, with this kgate as the test. */
	const char *start[] = { "bisect", "start", bad, good, NULL };
	repo.bisecting = 1;
	if (got_signal || git_call(start, 0) != 0) {
		kg_error("'git bisect start' failed");
		rc = KG_EXIT_RUNTIME;
		goto out;
	}
	char *self = self_exe(), *db = absolute(a->db), *cfg = absolute(a->cfg);
	char *thr = a->thresholds ? absolute(a->thresholds) : NULL, *dir = absolute(".");
	char *argv[32];
	size_t n = 0;
	argv[n++] = (char *)"git";
	argv[n++] = (char *)"bisect";
	argv[n++] = (char *)"run";
	argv[n++] = self;
	argv[n++] = (char *)"bisect";
	argv[n++] = (char *)"--step";
	argv[n++] = (char *)"--dir";
	argv[n++] = dir;
	argv[n++] = (char *)"--good";
	argv[n++] = good;
	argv[n++] = (char *)"--bad";
	argv[n++] = bad;
	argv[n++] = (char *)"--kernel";
	argv[n++] = k;
	argv[n++] = (char *)"--metric";
	argv[n++] = (char *)a->metric;
	argv[n++] = (char *)"--db";
	argv[n++] = db;
	argv[n++] = (char *)"--config";
	argv[n++] = cfg;
	if (thr) {
		argv[n++] = (char *)"--thresholds";
		argv[n++] = thr;
	}
	if (a->build) {
		argv[n++] = (char *)"--build";
		argv[n++] = (char *)a->build;
	}
	argv[n] = NULL;
	int s = spawn_wait(argv);
	free(self);
	free(db);
	free(cfg);
	free(thr);
	free(dir);
	const char *badref[] = { "rev-parse", "--verify", "--quiet", "refs/bisect/bad", NULL };
	if (got_signal) {
		rc = KG_EXIT_RUNTIME;
		goto out;
	}
	first = git_output(badref);
	if (s != 0 || !first) {
		kg_error("the bisection did not finish ('git bisect run' exit status %d)", s);
		rc = KG_EXIT_RUNTIME;
		goto out;
	}
	const char *subj[] = { "log", "-1", "--format=%s", first, NULL };
	subject = git_output(subj);
	repo_restore(&repo);

	/* The shift at the first bad commit: against its parent when that has
	 * a run (it was tested, or is the good commit), else against good. */
	if ((rc = store_open(a->db, KG_STORE_READONLY, &st)) ||
	    (rc = run_with_kernel(st, first, NULL, k, a->metric, &run, &set)))
		goto out;
	parent = git_parent(first);
	const char *against = parent ? parent : good;
	jr = run.id ? judge(st, t, &run, &set, k, a->metric, against, &j) : 0;
	if (jr <= 0) {
		against = good;
		jr = run.id ? judge(st, t, &run, &set, k, a->metric, good, &j) : 0;
	}
	if (jr <= 0) {
		kg_error("no stored run of %.12s to measure the shift at", first);
		rc = KG_EXIT_RUNTIME;
		goto out;
	}
	print_result(a, first, subject ? subject : "", k, against, &j,
		     store_run_count(st) - runs_before);
	rc = KG_EXIT_REGRESSION;
out:
	repo_restore(&repo);
	if (got_signal) {
		kg_error("interrupted (signal %d); the repository is back on '%s'", (int)got_signal,
			 repo.orig ? repo.orig : "?");
		rc = KG_EXIT_RUNTIME;
	}
	store_sampleset_free(&set);
	store_run_info_free(&run);
	store_close(st);
	names_free(names, n_names);
	free(repo.orig);
	free(good);
	free(bad);
	free(k);
	free(first);
	free(parent);
	free(subject);
	return rc;
}

int cmd_bisect(int argc, char **argv)
{
	struct bisect_args a = {
		.metric = "gpu__time_duration.sum", .cfg = config_default_suite(), .db = store_default_db(),
		.format = "text",
	};
	struct kg_thresholds *t = NULL;
	int argi, rc;
	const struct kg_opt opts[] = {
		KG_OPT_STR("good", 0, "A", &a.good, "a commit without the slowdown (any git revision)"),
		KG_OPT_STR("bad", 0, "B", &a.bad, "a later commit with it"),
		KG_OPT_STR("kernel", 0, "K", &a.kernel,
			   "the kernel: its mangled, demangled or function name, or a part of its "
			   "demangled name that only it has"),
		KG_OPT_STR("metric", 0, "M", &a.metric, "the metric (default gpu__time_duration.sum)"),
		KG_OPT_STR("build", 0, "CMD", &a.build,
			   "the build command, run by /bin/sh at each commit measured (default: "
			   "none)"),
		KG_OPT_STR("config", 'c', "FILE", &a.cfg, "the suite (default kgate.yaml)"),
		KG_OPT_STR("thresholds", 't', "F", &a.thresholds,
			   "the thresholds (default: the suite's, else built-in)"),
		KG_OPT_DB(&a.db),
		KG_OPT_TEXT_JSON(&a.format, "text (default) or json: the result on stdout"),
		/* one step of "git bisect run", and the directory it was started in */
		KG_OPT_FLAG("step", 0, &a.step, NULL),
		KG_OPT_STR("dir", 0, "DIR", &a.dir, NULL),
		KG_OPT_END
	};
	const struct kg_optspec spec = { "bisect", synopsis, epilogue, opts, 0, 0 };

	if ((rc = opt_parse(&spec, argc, argv, &argi)) != KG_OPT_GO)
		return rc;
	if (!a.good || !a.bad || !a.kernel) {
		kg_error("bisect needs --good, --bad and --kernel; see 'kgate bisect --help'");
		return a.step ? 128 : KG_EXIT_USAGE;
	}
	if ((rc = check_load_thresholds(a.thresholds, a.cfg, 0, &t)) != KG_EXIT_PASS)
		return a.step ? 128 : rc;
	rc = a.step ? bisect_step(&a, t) : bisect_main(&a, t);
	config_free_thresholds(t);
	return rc;
}
