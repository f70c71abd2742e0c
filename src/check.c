/*
 * check.c: one check from stored runs to printed and stored verdicts.
 *
 * Shared by "kgate check" (head run against the runs of a baseline commit)
 * and "kgate compare" (head against base, measured interleaved in one
 * job).  The decision rules live in gate.c and the formats in output.c;
 * this file owns the glue: loading the two sample sets, the GitHub job
 * summary, and writing the verdicts table.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kgate/check.h"
#include "kgate/config.h"
#include "kgate/explain.h"
#include "kgate/gate.h"
#include "kgate/ghevent.h"
#include "kgate/git.h"
#include "kgate/util.h"

int check_find_baseline(struct kg_store *st, const struct kg_run_info *head,
			const char *ref_sha, size_t limit,
			struct kg_run_info **runs, size_t *n)
{
	struct kg_run_filter f = { 0 };
	f.commit = ref_sha;
	f.gpu_name = head->gpu_name;
	f.driver = head->driver;
	f.limit = limit;
	f.no_quick = 1;
	*runs = NULL;
	*n = 0;
	int rc = store_find_runs(st, &f, runs, n);
	if (rc != KG_EXIT_PASS)
		return rc;
	/* The head run itself never counts as its own baseline. */
	size_t k = 0;
	for (size_t i = 0; i < *n; i++) {
		if ((*runs)[i].id == head->id) {
			store_run_info_free(&(*runs)[i]);
			continue;
		}
		(*runs)[k++] = (*runs)[i];
	}
	*n = k;
	return KG_EXIT_PASS;
}

/* Newest commit of branch with runs on head's GPU, other than head's commit. */
static char *newest_branch_commit(struct kg_store *st, const struct kg_run_info *head,
				  const char *branch)
{
	struct kg_run_filter f = { 0 };
	struct kg_run_info *runs;
	size_t n;
	char *sha = NULL;

	f.branch = branch;
	f.gpu_name = head->gpu_name;
	f.driver = head->driver;
	f.no_quick = 1;
	if (store_find_runs(st, &f, &runs, &n) != KG_EXIT_PASS)
		return NULL;
	for (size_t i = 0; i < n && !sha; i++)
		if (runs[i].commit && (!head->commit || strcmp(runs[i].commit, head->commit)))
			sha = xstrdup(runs[i].commit);
	store_runs_free(runs, n);
	return sha;
}

/* Does the store hold a run of commit c (exact or unique prefix)? */
static int stored_commit(struct kg_store *st, const char *c)
{
	struct kg_run_filter f = { 0 };
	struct kg_run_info *runs;
	size_t n = 0;

	f.commit = c;
	f.limit = 1;
	f.no_quick = 1;
	if (store_find_runs(st, &f, &runs, &n) != KG_EXIT_PASS)
		return -1;
	store_runs_free(runs, n);
	return n > 0;
}

/*
 * The baseline the GitHub event implies for head (ghevent.h): 1 when the
 * event decided (*sha NULL when it names none that is stored), 0 when it
 * has nothing to say (not in Actions, another event, another commit).
 */
static int event_baseline(struct kg_store *st, const struct kg_run_info *head, char **sha,
			  char **label)
{
	struct kg_ghevent ev;
	int decided = 0;

	if (ghevent_load(&ev) != 1 || !head->commit || !ev.head_sha ||
	    strcmp(head->commit, ev.head_sha))
		goto out;
	if (ev.kind == KG_EV_PULL_REQUEST) {
		const char *br = ev.base_ref ? ev.base_ref : ev.default_branch;
		char *mb = ev.base_sha ? git_merge_base(ev.head_sha, ev.base_sha) : NULL;
		decided = 1;
		if (mb && stored_commit(st, mb) == 1) {
			*sha = mb;
			*label = xasprintf("merge base with %s", br ? br : "the base branch");
			goto out;
		}
		if (mb)
			kg_note("pull request #%ld: no run stored for the merge base %.12s with %s;"
				" using the newest stored run of %s", ev.pr, mb, br ? br : "?", br ? br : "?");
		else
			kg_note("pull request #%ld: git cannot find the merge base of %.12s and %.12s"
				" (a shallow clone? fetch with fetch-depth: 0); using the newest stored run of %s",
				ev.pr, ev.head_sha, ev.base_sha ? ev.base_sha : "?", br ? br : "?");
		free(mb);
		if (br && (*sha = newest_branch_commit(st, head, br)))
			*label = xasprintf("newest run of %s", br);
	} else if (ghevent_push_to_default(&ev)) {
		decided = 1;
		if (ev.before && strcmp(ev.before, head->commit) && stored_commit(st, ev.before) == 1) {
			*sha = xstrdup(ev.before);
			*label = xasprintf("%s before the push", ev.branch);
		} else if ((*sha = newest_branch_commit(st, head, ev.branch))) {
			if (ev.before)
				kg_note("push to %s: no run stored for %.12s (before the push); using the"
					" previous stored run of %s", ev.branch, ev.before, ev.branch);
			*label = xasprintf("previous run of %s", ev.branch);
		}
	}
out:
	ghevent_free(&ev);
	return decided;
}

/*
 * The baseline commit: *sha (malloc'd) and a label for headings.  NULL sha
 * with KG_EXIT_PASS when there is none at all (everything is then NEW).
 */
int check_pick_baseline(struct kg_store *st, const struct kg_run_info *head, const char *ref,
			 char **sha, char **label)
{
	*sha = *label = NULL;
	if (ref) {
		int s = stored_commit(st, ref);
		if (s < 0)
			return KG_EXIT_USAGE;
		if (s) {
			*sha = xstrdup(ref);
		} else if (!(*sha = git_rev_parse(ref))) {
			kg_error("baseline '%s' is neither a stored commit nor a ref git knows", ref);
			return KG_EXIT_USAGE;
		}
		*label = xstrdup(ref);
		return KG_EXIT_PASS;
	}
	if (event_baseline(st, head, sha, label))
		return KG_EXIT_PASS;
	char *def = git_default_branch();
	if (def && head->commit) {
		/* The branch as the remote has it (what CI records), else the
		 * local one. */
		char *remote = xasprintf("origin/%s", def);
		*sha = git_merge_base(head->commit, remote);
		free(remote);
		if (!*sha)
			*sha = git_merge_base(head->commit, def);
		if (*sha && strcmp(*sha, head->commit) == 0) {
			/* HEAD is on the default branch: compare with its parent. */
			free(*sha);
			*sha = git_parent(head->commit);
		}
		if (*sha && stored_commit(st, *sha) == 1) {
			*label = xasprintf("merge base with %s", def);
			free(def);
			return KG_EXIT_PASS;
		}
		if (*sha)
			kg_note("no run stored for the merge base %.12s; using the newest stored run of the default branch",
				*sha);
		free(*sha);
		*sha = NULL;
	}
	const char *br = def ? def : "main";
	if (!strncmp(br, "origin/", 7))
		br += 7;
	*sha = newest_branch_commit(st, head, br);
	if (*sha)
		*label = xasprintf("newest run of %s", br);
	free(def);
	return KG_EXIT_PASS;
}

/* Append the markdown table to the file $GITHUB_STEP_SUMMARY names. */
static void write_summary(const struct kg_check_info *info, const struct kg_gate *g)
{
	const char *path = getenv("GITHUB_STEP_SUMMARY");
	if (!path || !*path)
		return;
	struct kg_buf b = KG_BUF_INIT;
	output_render(KG_FMT_MARKDOWN, info, g, 0, &b);
	FILE *fp = fopen(path, "a");
	if (!fp) {
		kg_warn("cannot open '%s': %s (no job summary written)", path, strerror(errno));
	} else {
		/* fclose() even when fwrite() fails, or the FILE leaks */
		int bad = fwrite(b.s, 1, b.len, fp) != b.len;
		if (fclose(fp) != 0)
			bad = 1;
		if (bad)
			kg_warn("cannot write '%s': %s (job summary incomplete)", path, strerror(errno));
	}
	buf_free(&b);
}

static int store_results(struct kg_store *st, const struct kg_run_info *head,
			 const char *baseline, const struct kg_gate *g,
			 const struct kg_explanation *x, size_t nx)
{
	struct kg_verdict_row *rows = xcalloc(g->n ? g->n : 1, sizeof *rows);
	for (size_t i = 0; i < g->n; i++) {
		const struct kg_result *r = &g->r[i];
		rows[i] = (struct kg_verdict_row){
			.benchmark = r->benchmark, .nvtx = r->nvtx, .kernel = r->kernel,
			.metric = r->metric, .verdict = r->verdict, .shift = r->shift,
			.lo = r->lo, .hi = r->hi, .p = r->p_adj, .base_value = r->base,
			.head_value = r->head, .n_base = r->n_base, .n_head = r->n_head,
			.message = r->message,
		};
	}
	struct kg_explain_row *xr = xcalloc(nx ? nx : 1, sizeof *xr);
	char **details = xcalloc(nx ? nx : 1, sizeof *details);
	for (size_t i = 0; i < nx; i++) {
		details[i] = explain_to_json(&x[i]);
		xr[i] = (struct kg_explain_row){ x[i].benchmark, x[i].nvtx, x[i].base_kernel,
						 x[i].head_kernel, x[i].why, details[i] };
	}
	int rc = store_verdicts_put(st, head->id, baseline, rows, g->n, xr, nx);
	for (size_t i = 0; i < nx; i++)
		free(details[i]);
	free(details);
	free(xr);
	free(rows);
	return rc;
}

/* The explanation of every FAIL, and of each MISSING kernel paired with
 * the NEW one that replaced it (explain.c), from the stored counters. */
static void explain_failures(const struct kg_run_info *head, const struct kg_gate *g,
			     const struct kg_sampleset *bs, const struct kg_sampleset *hs,
			     struct kg_explanation **x, size_t *nx)
{
	struct kg_explain_item *it;
	size_t n;
	explain_pick(g, bs, hs, NULL, 0, NULL, 0, &it, &n);
	const struct kg_chip *chip = explain_chip(head->gpu_chip, head->gpu_name);
	*x = xcalloc(n ? n : 1, sizeof **x);
	for (size_t i = 0; i < n; i++) {
		struct kg_metricmap mb, mh;
		explain_map_from_set(bs, it[i].bench, it[i].nvtx, it[i].bk, &mb);
		explain_map_from_set(hs, it[i].bench, it[i].nvtx, it[i].hk, &mh);
		explain_kernel(&it[i], &mb, &mh, chip, &(*x)[i]);
		explain_map_free(&mb);
		explain_map_free(&mh);
	}
	*nx = n;
	free(it);
}

int check_load_thresholds(const char *thresholds, const char *suite, int suite_given,
			  struct kg_thresholds **t)
{
	if (thresholds)
		return config_load_thresholds(thresholds, t);
	if (suite_given || access(suite, F_OK) == 0) {
		struct kg_suite *s;
		int rc = config_load_suite(suite, &s);
		if (rc != KG_EXIT_PASS)
			return rc;
		if (s->thresholds) {
			rc = config_load_thresholds(s->thresholds, t);
			config_free_suite(s);
			return rc;
		}
		config_free_suite(s);
	}
	*t = config_default_thresholds();
	return KG_EXIT_PASS;
}

char *check_baseline_label(const char *sha, const char *label, const char *base_commit)
{
	const char *bc = base_commit ? base_commit : sha;
	if (!sha)
		return xstrdup("(no baseline)");
	if (!label || !strncmp(bc, label, strlen(label)))
		return xasprintf("%.12s", bc);
	return xasprintf("%.12s (%s)", bc, label);
}

int check_find_sides(struct kg_store *st, const char *commit, const char *ref, size_t limit,
		     struct kg_run_info **head, struct kg_run_info **base, size_t *n_base,
		     char **bsha, char **blabel)
{
	size_t n_head = 0;
	int rc;

	*head = *base = NULL;
	*n_base = 0;
	*bsha = *blabel = NULL;
	char *sha = commit ? xstrdup(commit) : ghevent_head_commit();
	if (!sha) {
		kg_error("no --commit given and git cannot say what HEAD is");
		return KG_EXIT_USAGE;
	}
	struct kg_run_filter f = { .commit = sha, .limit = 1 };
	rc = store_find_runs(st, &f, head, &n_head);
	if (rc == KG_EXIT_PASS && !n_head) {
		kg_error("no run is stored for commit '%s' (run 'kgate run' or 'kgate ingest' first)", sha);
		rc = KG_EXIT_USAGE;
	}
	free(sha);
	if (rc == KG_EXIT_PASS)
		rc = check_pick_baseline(st, *head, ref, bsha, blabel);
	if (rc == KG_EXIT_PASS && *bsha)
		rc = check_find_baseline(st, *head, *bsha, limit, base, n_base);
	return rc;
}

int check_load_samples(struct kg_store *st, const struct kg_run_info *head,
		       const struct kg_run_info *base, size_t n_base,
		       struct kg_sampleset *hs, struct kg_sampleset *bs)
{
	int64_t *ids = xcalloc(n_base ? n_base : 1, sizeof *ids);
	for (size_t i = 0; i < n_base; i++)
		ids[i] = base[i].id;
	int rc = store_load_samples(st, &head->id, 1, hs);
	if (rc == KG_EXIT_PASS && n_base)
		rc = store_load_samples(st, ids, n_base, bs);
	free(ids);
	return rc;
}

int check_runs(struct kg_store *st, const struct kg_thresholds *t,
	       const struct kg_run_info *head, const struct kg_run_info *base,
	       size_t n_base, const char *baseline, const struct kg_check_opts *o)
{
	struct kg_sampleset hs = { 0 }, bs = { 0 };
	int rc = check_load_samples(st, head, base, n_base, &hs, &bs);
	if (rc != KG_EXIT_PASS) {
		store_sampleset_free(&hs);
		store_sampleset_free(&bs);
		return rc;
	}

	struct kg_gate g;
	gate_compare(t, &bs, &hs, &g);

	struct kg_check_info info = {
		.head_commit = head->commit ? head->commit : "?",
		.baseline = baseline,
		.gpu = head->gpu_name,
		.n_base_runs = n_base,
		.all = o->all,
	};
	struct kg_explanation *why = NULL;
	size_t n_why = 0;
	if (o->explain)
		explain_failures(head, &g, &bs, &hs, &why, &n_why);
	info.why = why;
	info.n_why = n_why;
	struct kg_buf b = KG_BUF_INIT;
	output_render(o->format, &info, &g, o->color, &b);
	FILE *out = o->out ? o->out : stdout;
	fwrite(b.s, 1, b.len, out);
	buf_free(&b);
	if (fflush(out) != 0) {
		kg_error("cannot write the verdicts: %s", strerror(errno));
		rc = KG_EXIT_RUNTIME;
	}
	if (o->summary)
		write_summary(&info, &g);
	if (rc == KG_EXIT_PASS && o->store_verdicts && store_results(st, head, baseline, &g, why, n_why) != KG_EXIT_PASS)
		kg_warn("the verdicts were not stored; the check itself is complete");
	if (rc == KG_EXIT_PASS)
		rc = g.exit_status;
	for (size_t i = 0; i < n_why; i++)
		explain_free(&why[i]);
	free(why);
	gate_free(&g);
	store_sampleset_free(&hs);
	store_sampleset_free(&bs);
	return rc;
}
