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
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kgate/check.h"
#include "kgate/kname.h"
#include "kgate/config.h"
#include "kgate/confirm.h"
#include "kgate/explain.h"
#include "kgate/gate.h"
#include "kgate/ghevent.h"
#include "kgate/git.h"
#include "kgate/gpustate.h"
#include "kgate/shard.h"
#include "kgate/stats.h"
#include "kgate/util.h"
#include "kgate/verdict.h"

char *check_device_set(const char *devices)
{
	json_error_t err;
	json_t *a = devices ? json_loads(devices, 0, &err) : NULL;
	size_t i, n = json_array_size(a), m = 0;
	json_t *d;
	const char **names;
	struct kg_buf b = KG_BUF_INIT;

	if (!json_is_array(a) || !n) {
		json_decref(a);
		return NULL;
	}
	names = xcalloc(n, sizeof(*names));
	json_array_foreach(a, i, d) {
		const char *nm = json_string_value(json_object_get(d, "name"));
		names[m++] = nm ? nm : "unnamed device";
	}
	/* by name, each name once with its count: "2 x NVIDIA H200" */
	for (i = 1; i < m; i++)
		for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			const char *x = names[j];
			names[j] = names[j - 1];
			names[j - 1] = x;
		}
	for (i = 0; i < m;) {
		size_t j = i;
		while (j < m && !strcmp(names[j], names[i]))
			j++;
		buf_printf(&b, "%s%zu x %s", b.len ? " + " : "", j - i, names[i]);
		i = j;
	}
	free(names);
	json_decref(a);
	return buf_detach(&b);
}

/* 1 when runs a and b were measured on different device sets (both known). */
static int other_devices(const struct kg_run_info *a, const struct kg_run_info *b)
{
	char *x = check_device_set(a->devices), *y = check_device_set(b->devices);
	int other = x && y && strcmp(x, y) != 0;
	free(x);
	free(y);
	return other;
}

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
	/* The head run itself never counts as its own baseline, nor a run of
	 * another device set (a job on two GPUs against one on one). */
	size_t k = 0;
	for (size_t i = 0; i < *n; i++) {
		if ((*runs)[i].id == head->id || other_devices(head, &(*runs)[i])) {
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

/* Does the store hold a run of commit c (exact or unique prefix), on
 * head's GPU model and driver when head is not NULL? */
static int stored_commit(struct kg_store *st, const char *c, const struct kg_run_info *head)
{
	struct kg_run_filter f = { 0 };
	struct kg_run_info *runs;
	size_t n = 0;

	f.commit = c;
	f.limit = 1;
	f.no_quick = 1;
	if (head) {
		f.gpu_name = head->gpu_name;
		f.driver = head->driver;
	}
	if (store_find_runs(st, &f, &runs, &n) != KG_EXIT_PASS)
		return -1;
	store_runs_free(runs, n);
	return n > 0;
}

/* Is a run stored under exactly this commit text? */
static int stored_exactly(struct kg_store *st, const char *c)
{
	struct kg_run_filter f = { .commit = c, .limit = 1 };
	struct kg_run_info *runs;
	size_t n = 0;
	int yes = 0;

	if (store_find_runs(st, &f, &runs, &n) != KG_EXIT_PASS)
		return 0;
	yes = n && runs[0].commit && !strcmp(runs[0].commit, c);
	store_runs_free(runs, n);
	return yes;
}

char *check_resolve_commit(struct kg_store *st, const char *c)
{
	if (!c)
		return NULL;
	if (stored_exactly(st, c))
		return xstrdup(c);
	return git_resolve(c);
}

/* What the store holds for head's GPU model: the newest few commits, with
 * their branch and driver, into b ("nothing" when none). */
static void describe_stored(struct kg_store *st, const struct kg_run_info *head, struct kg_buf *b)
{
	struct kg_run_filter f = { .gpu_name = head->gpu_name, .limit = 200 };
	struct kg_run_info *runs = NULL;
	size_t n = 0, shown = 0;

	buf_printf(b, "stored for %s: ", head->gpu_name ? head->gpu_name : "this GPU");
	if (store_find_runs(st, &f, &runs, &n) != KG_EXIT_PASS)
		n = 0;
	for (size_t i = 0; i < n && shown < 5; i++) {
		int seen = !runs[i].commit || (head->commit && !strcmp(runs[i].commit, head->commit));
		for (size_t j = 0; j < i && !seen; j++)
			seen = runs[j].commit && !strcmp(runs[j].commit, runs[i].commit);
		if (seen)
			continue;
		buf_printf(b, "%s%.12s (%s%s, driver %s)", shown ? ", " : "", runs[i].commit,
			   runs[i].branch ? "branch " : "no branch", runs[i].branch ? runs[i].branch : "",
			   runs[i].driver ? runs[i].driver : "?");
		shown++;
	}
	if (!shown)
		buf_adds(b, "no other commit");
	store_runs_free(runs, n);
}

/* The runs of commit sha on other GPU models or drivers than head's, said
 * in b ("; its runs are on driver X" ...); nothing when there are none. */
static void describe_other_fingerprint(struct kg_store *st, const struct kg_run_info *head,
				       const char *sha, struct kg_buf *b)
{
	struct kg_run_filter f = { .commit = sha, .limit = 1 };
	struct kg_run_info *runs = NULL;
	size_t n = 0;

	if (store_find_runs(st, &f, &runs, &n) != KG_EXIT_PASS || !n)
		return;
	/* the same model and driver on another set of devices */
	if (runs[0].gpu_name && head->gpu_name && !strcmp(runs[0].gpu_name, head->gpu_name) &&
	    runs[0].driver && head->driver && !strcmp(runs[0].driver, head->driver) &&
	    other_devices(head, &runs[0])) {
		char *x = check_device_set(runs[0].devices), *y = check_device_set(head->devices);
		buf_printf(b, "; %.12s was recorded on %s, the head run on %s, and runs of different"
			   " device sets are never compared", sha, x, y);
		free(x);
		free(y);
		store_runs_free(runs, n);
		return;
	}
	buf_printf(b, "; %.12s has runs on %s with driver %s, and runs of another GPU model or"
		   " driver are never compared (after a driver update, record a baseline run again)",
		   sha, runs[0].gpu_name ? runs[0].gpu_name : "?", runs[0].driver ? runs[0].driver : "?");
	store_runs_free(runs, n);
}

/* The shallow-clone hint, when git says the clone is shallow. */
static void shallow_hint(struct kg_buf *b)
{
	if (git_is_shallow() == 1)
		buf_adds(b, "; this is a shallow clone, so the merge base may not be in it: fetch the"
			    " history (actions/checkout with 'fetch-depth: 0', or 'git fetch --unshallow')");
}

/*
 * The baseline the GitHub event implies for head (ghevent.h): 1 when the
 * event decided (*sha NULL when it names none that is stored, and *note
 * then says why), 0 when it has nothing to say (not in Actions, another
 * event, another commit).
 */
static int event_baseline(struct kg_store *st, const struct kg_run_info *head, char **sha,
			  char **label, char **note)
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
		if (mb && stored_commit(st, mb, head) == 1) {
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
		if (br && (*sha = newest_branch_commit(st, head, br))) {
			*label = xasprintf("newest run of %s", br);
		} else {
			struct kg_buf why = KG_BUF_INIT;
			buf_printf(&why, "pull request #%ld: ", ev.pr);
			if (mb)
				buf_printf(&why, "the merge base %.12s of its head %.12s with %s has no"
					   " stored run on this GPU and driver", mb, ev.head_sha,
					   br ? br : "the base branch");
			else
				buf_printf(&why, "git knows no merge base of its head %.12s with %.12s",
					   ev.head_sha, ev.base_sha ? ev.base_sha : "the base commit");
			buf_printf(&why, ", and no run of branch %s is stored for %s with driver %s",
				   br ? br : "?", head->gpu_name ? head->gpu_name : "this GPU",
				   head->driver ? head->driver : "?");
			shallow_hint(&why);
			*note = buf_detach(&why);
		}
		free(mb);
	} else if (ghevent_push_to_default(&ev)) {
		decided = 1;
		if (ev.before && strcmp(ev.before, head->commit) && stored_commit(st, ev.before, head) == 1) {
			*sha = xstrdup(ev.before);
			*label = xasprintf("%s before the push", ev.branch);
		} else if ((*sha = newest_branch_commit(st, head, ev.branch))) {
			if (ev.before)
				kg_note("push to %s: no run stored for %.12s (before the push); using the"
					" previous stored run of %s", ev.branch, ev.before, ev.branch);
			*label = xasprintf("previous run of %s", ev.branch);
		} else {
			char *bef = ev.before ? xasprintf("%.12s (before the push)", ev.before)
					      : xstrdup("the commit before the push (a new branch)");
			*note = xasprintf("push to %s: %s has no stored run on this GPU and driver,"
					  " and no other run of %s is stored for %s with driver %s",
					  ev.branch, bef, ev.branch,
					  head->gpu_name ? head->gpu_name : "this GPU",
					  head->driver ? head->driver : "?");
			free(bef);
		}
	}
out:
	ghevent_free(&ev);
	return decided;
}

/*
 * The baseline commit: *sha (malloc'd) and a label for headings.  NULL sha
 * with KG_EXIT_PASS when there is none at all; *note then says why.
 */
int check_pick_baseline(struct kg_store *st, const struct kg_run_info *head, const char *ref,
			char **sha, char **label, char **note)
{
	char *dummy = NULL;
	if (!note)
		note = &dummy;
	*sha = *label = *note = NULL;
	if (ref) {
		int s = stored_commit(st, ref, NULL);
		if (s < 0)
			return KG_EXIT_USAGE;
		if (s && stored_exactly(st, ref)) {
			*sha = xstrdup(ref);
		} else if (!(*sha = git_rev_parse(ref)) && s) {
			*sha = xstrdup(ref);
		} else if (!*sha) {
			char **br = NULL;
			size_t nb = 0;
			const char *near = store_branches(st, &br, &nb) == KG_EXIT_PASS
					   ? kg_suggest(ref, (const char *const *)br, nb) : NULL;
			if (near)
				kg_error("baseline '%s' is neither a stored commit nor a ref git knows;"
					 " did you mean the branch '%s'?", ref, near);
			else
				kg_error("baseline '%s' is neither a stored commit nor a ref git knows", ref);
			store_names_free(br, nb);
			return KG_EXIT_USAGE;
		}
		*label = xstrdup(ref);
		return KG_EXIT_PASS;
	}
	if (event_baseline(st, head, sha, label, note))
		return KG_EXIT_PASS;
	struct kg_buf why = KG_BUF_INIT;
	int said = 0;           /* a note about the merge base was printed */
	char *def = git_default_branch();
	const char *br = def ? def : "main";
	if (!strncmp(br, "origin/", 7))
		br += 7;
	if (def && head->commit) {
		/* The branch as the remote has it (what CI records), else the
		 * local one. */
		char *remote = xasprintf("origin/%s", def);
		char *mb = git_merge_base(head->commit, remote);
		free(remote);
		if (!mb)
			mb = git_merge_base(head->commit, def);
		if (mb && strcmp(mb, head->commit) == 0) {
			/* HEAD is on the default branch: compare with its parent. */
			free(mb);
			mb = git_parent(head->commit);
			if (mb)
				buf_printf(&why, "HEAD is on the default branch %s; its parent %.12s", def, mb);
		} else if (mb) {
			buf_printf(&why, "the merge base %.12s of %.12s with the default branch %s", mb,
				   head->commit, def);
		}
		if (mb && stored_commit(st, mb, head) == 1) {
			*sha = mb;
			*label = xasprintf("merge base with %s", def);
			free(def);
			buf_free(&why);
			return KG_EXIT_PASS;
		}
		if (mb) {
			buf_adds(&why, " has no stored run on this GPU and driver");
			describe_other_fingerprint(st, head, mb, &why);
			kg_note("no run stored for the merge base %.12s on this GPU and driver; using the"
				" newest stored run of the default branch %s", mb, br);
			said = 1;
		} else {
			buf_printf(&why, "git knows no merge base of %.12s with the default branch %s",
				   head->commit, def);
		}
		free(mb);
	} else if (!def) {
		buf_adds(&why, "git knows no default branch here (no origin/HEAD, main or master)");
	} else {
		buf_adds(&why, "the head run has no commit");
	}
	*sha = newest_branch_commit(st, head, br);
	if (*sha) {
		*label = xasprintf("newest run of %s", br);
		if (!said) {
			/* no merge base at all: say why, and where it came from */
			shallow_hint(&why);
			kg_note("%s; using the newest stored run of %s, %.12s", why.s ? why.s : "?", br,
				*sha);
		}
		buf_free(&why);
	} else {
		buf_printf(&why, ", and no run of branch %s%s is stored for %s with driver %s", br,
			   def ? "" : " (assumed)", head->gpu_name ? head->gpu_name : "this GPU",
			   head->driver ? head->driver : "?");
		shallow_hint(&why);
		*note = buf_detach(&why);
	}
	free(def);
	free(dummy);
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
			 const char *baseline, const struct kg_outcome *oc, const struct kg_gate *g,
			 const struct kg_explanation *x, size_t nx)
{
	struct kg_verdict_row *rows = xcalloc(g->n ? g->n : 1, sizeof *rows);
	int *ranks = xcalloc(g->n ? g->n : 1, sizeof *ranks);
	for (size_t i = 0; i < g->n; i++) {
		const struct kg_result *r = &g->r[i];
		rows[i] = (struct kg_verdict_row){
			.benchmark = r->benchmark, .nvtx = r->nvtx, .kernel = r->kernel,
			.metric = r->metric, .verdict = r->verdict, .shift = r->shift,
			.lo = r->lo, .hi = r->hi, .p = r->p_adj, .base_value = r->base,
			.head_value = r->head, .n_base = r->n_base, .n_head = r->n_head,
			.message = r->message, .fails = r->fails,
		};
		ranks[i] = r->ranked ? r->rank : -1;
	}
	struct kg_explain_row *xr = xcalloc(nx ? nx : 1, sizeof *xr);
	char **details = xcalloc(nx ? nx : 1, sizeof *details);
	for (size_t i = 0; i < nx; i++) {
		details[i] = explain_to_json(&x[i]);
		xr[i] = (struct kg_explain_row){ x[i].benchmark, x[i].nvtx, x[i].base_kernel,
						 x[i].head_kernel, x[i].why, details[i] };
	}
	int rc = store_verdicts_put_ranked(st, head->id, baseline, oc, rows, ranks, g->n, xr, nx);
	for (size_t i = 0; i < nx; i++)
		free(details[i]);
	free(details);
	free(xr);
	free(rows);
	free(ranks);
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
		return xstrdup(bc);
	return xasprintf("%s (%s)", bc, label);
}

void check_baseline_split(const char *label, char **sha, char **reason)
{
	*sha = *reason = NULL;
	if (!label || !*label)
		return;
	if (label[0] == '(') {
		/* "(no baseline)" */
		size_t n = strlen(label);
		*reason = xstrndup(label + 1, n > 1 && label[n - 1] == ')' ? n - 2 : n - 1);
		return;
	}
	const char *sp = strstr(label, " (");
	size_t n = strlen(label);
	if (sp && label[n - 1] == ')') {
		*sha = xstrndup(label, (size_t)(sp - label));
		*reason = xstrndup(sp + 2, n - (size_t)(sp - label) - 3);
	} else {
		*sha = xstrdup(label);
	}
}

void check_sides_free(struct kg_run_info *head, struct kg_run_info *base, size_t n_base,
		      char *bsha, char *blabel, char *note)
{
	if (head)
		store_runs_free(head, 1);
	if (base)
		store_runs_free(base, n_base);
	free(bsha);
	free(blabel);
	free(note);
}

int check_find_sides(struct kg_store *st, const char *commit, const char *ref, size_t limit,
		     struct kg_run_info **head, struct kg_run_info **base, size_t *n_base,
		     char **bsha, char **blabel, char **note)
{
	size_t n_head = 0;
	int rc, si, sn, sq;
	char *dummy = NULL;

	if (!note)
		note = &dummy;
	*head = *base = NULL;
	*n_base = 0;
	*bsha = *blabel = *note = NULL;
	char *sha = commit ? check_resolve_commit(st, commit) : ghevent_head_commit();
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
	if (rc == KG_EXIT_PASS && shard_of_status((*head)->status, &si, &sn, &sq)) {
		kg_error("the newest run of commit %.12s, run %lld, is shard %d/%d of a sharded "
			 "run: put the shards together first ('kgate merge --commit %.12s')", sha,
			 (long long)(*head)->id, si, sn, sha);
		rc = KG_EXIT_USAGE;
	}
	free(sha);
	if (rc == KG_EXIT_PASS)
		rc = check_pick_baseline(st, *head, ref, bsha, blabel, note);
	if (rc == KG_EXIT_PASS && *bsha)
		rc = check_find_baseline(st, *head, *bsha, limit, base, n_base);
	if (rc == KG_EXIT_PASS && *bsha && !*n_base) {
		struct kg_buf b = KG_BUF_INIT;
		if (ref)
			buf_printf(&b, "baseline '%s' (%.12s) has no stored run", ref, *bsha);
		else
			buf_printf(&b, "the baseline %.12s (%s) has no stored run", *bsha,
				   *blabel ? *blabel : "?");
		buf_printf(&b, " on %s with driver %s", (*head)->gpu_name ? (*head)->gpu_name : "this GPU",
			   (*head)->driver ? (*head)->driver : "?");
		describe_other_fingerprint(st, *head, *bsha, &b);
		if (ref) {
			/* An explicit baseline that cannot be compared with is an error. */
			buf_adds(&b, "; ");
			describe_stored(st, *head, &b);
			kg_error("%s", b.s);
			buf_free(&b);
			rc = KG_EXIT_USAGE;
		} else {
			free(*note);
			*note = buf_detach(&b);
		}
	}
	free(dummy);
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

/* 1 when name is in the sorted NULL-terminated list v of n. */
static int name_in(char *const *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return 1;
	return 0;
}

int check_partial(struct kg_store *st, const struct kg_run_info *head,
		  const struct kg_run_info *base, size_t n_base, char ***common, size_t *n_common,
		  char **not_compared)
{
	char **hb = NULL, **bb = NULL;
	size_t nh = 0, nb = 0;
	*common = NULL;
	*n_common = 0;
	*not_compared = NULL;
	int rc = store_run_benchmarks(st, head->id, &hb, &nh);
	for (size_t i = 0; i < n_base && rc == KG_EXIT_PASS; i++) {
		char **v;
		size_t n;
		rc = store_run_benchmarks(st, base[i].id, &v, &n);
		for (size_t j = 0; j < n && rc == KG_EXIT_PASS; j++) {
			if (name_in(bb, nb, v[j]))
				continue;
			bb = xrealloc(bb, (nb + 2) * sizeof *bb);
			bb[nb++] = xstrdup(v[j]);
			bb[nb] = NULL;
		}
		if (rc == KG_EXIT_PASS)
			store_names_free(v, n);
	}
	if (rc != KG_EXIT_PASS) {
		store_names_free(hb, nh);
		store_names_free(bb, nb);
		return rc;
	}
	struct kg_buf only_head = KG_BUF_INIT, only_base = KG_BUF_INIT;
	*common = xcalloc(nh + 1, sizeof **common);
	for (size_t i = 0; i < nh; i++) {
		if (name_in(bb, nb, hb[i]))
			(*common)[(*n_common)++] = xstrdup(hb[i]);
		else
			buf_printf(&only_head, "%s%s", only_head.len ? ", " : "", hb[i]);
	}
	for (size_t i = 0; i < nb; i++)
		if (!name_in(hb, nh, bb[i]))
			buf_printf(&only_base, "%s%s", only_base.len ? ", " : "", bb[i]);
	if (only_head.len || only_base.len) {
		struct kg_buf b = KG_BUF_INIT;
		if (only_base.len)
			buf_printf(&b, "not run by the head run: %s", only_base.s);
		if (only_head.len)
			buf_printf(&b, "%snot run by the baseline run%s: %s", b.len ? "; " : "",
				   n_base == 1 ? "" : "s", only_head.s);
		*not_compared = buf_detach(&b);
	}
	buf_free(&only_head);
	buf_free(&only_base);
	store_names_free(hb, nh);
	store_names_free(bb, nb);
	return KG_EXIT_PASS;
}

/* Does a limit on the metric's value apply through this rule (a regression
 * limit or bounds; deterministic alone checks a launch's structure, which
 * many sources do not record)? */
static int gates(const struct kg_metric_rule *m)
{
	return m->metric && (m->has_regression || m->has_min || m->has_max);
}

static int in_sets(const struct kg_sampleset *a, const struct kg_sampleset *b,
		   const char *bench, const char *metric)
{
	for (int k = 0; k < 2; k++) {
		const struct kg_sampleset *set = k ? b : a;
		for (size_t i = 0; i < set->n; i++)
			if (!strcmp(set->s[i].metric, metric) && !strcmp(set->s[i].benchmark, bench))
				return 1;
	}
	return 0;
}

/* Add metric to list (", "-separated) unless it is there. */
static void list_add(struct kg_buf *list, const char *metric)
{
	size_t l = strlen(metric);
	for (const char *p = list->s; p && (p = strstr(p, metric)); p += l)
		if ((p == list->s || p[-1] == ' ') && (!p[l] || p[l] == ','))
			return;
	buf_printf(list, "%s%s", list->len ? ", " : "", metric);
}

/*
 * Metrics the thresholds gate that neither run of a compared benchmark
 * has, so that its PASS says nothing of them: a metric a rule naming the
 * benchmark limits, and the metrics the defaults and the rules for any
 * benchmark limit when the benchmark has none of them (its performance was
 * gated by nothing).  One warning a benchmark, unless on_ungated_metric is
 * ignore, and added to *not_compared.  The count of benchmarks so.
 */
static size_t ungated_metrics(const struct kg_thresholds *t, const struct kg_sampleset *hs,
			      const struct kg_sampleset *bs, char **common, size_t n_common,
			      char **not_compared)
{
	struct kg_buf all = KG_BUF_INIT;
	size_t count = 0;

	for (size_t b = 0; b < n_common; b++) {
		struct kg_buf named = KG_BUF_INIT, general = KG_BUF_INIT;
		int general_met = 0;
		for (size_t i = 0; i < t->n_defaults; i++)
			if (gates(&t->defaults[i])) {
				general_met |= in_sets(hs, bs, common[b], t->defaults[i].metric);
				list_add(&general, t->defaults[i].metric);
			}
		for (size_t r = 0; r < t->n_rules; r++) {
			const char *rb = t->rules[r].match.benchmark;
			if (rb && strcmp(rb, common[b]))
				continue;
			for (size_t j = 0; j < t->rules[r].n_metrics; j++) {
				const struct kg_metric_rule *m = &t->rules[r].metrics[j];
				if (!gates(m))
					continue;
				int there = in_sets(hs, bs, common[b], m->metric);
				general_met |= there;
				if (rb && !there)
					list_add(&named, m->metric);
				else if (!rb)
					list_add(&general, m->metric);
			}
		}
		if (!general_met && general.len) {
			const char *p = general.s;
			while (*p) {
				const char *e = strchr(p, ',');
				char *one = e ? xstrndup(p, (size_t)(e - p)) : xstrdup(p);
				list_add(&named, one);
				free(one);
				p = e ? e + 2 : p + strlen(p);
			}
		}
		if (named.len) {
			if (t->on_ungated_metric != KG_POLICY_IGNORE)
				kg_warn("benchmark '%s': %s, gated by the thresholds, in neither run: "
					"nothing gated %s (on_ungated_metric: %s)", common[b], named.s,
					strchr(named.s, ',') ? "them" : "it",
					t->on_ungated_metric == KG_POLICY_FAIL ? "fail" : "warn");
			buf_printf(&all, "%s%s of benchmark '%s'", all.len ? "; " : "", named.s,
				   common[b]);
			count++;
		}
		buf_free(&named);
		buf_free(&general);
	}
	if (count && t->on_ungated_metric != KG_POLICY_IGNORE) {
		char *old = *not_compared;
		*not_compared = xasprintf("%s%sgated by the thresholds but in neither run: %s",
					  old ? old : "", old ? "; " : "", all.s);
		free(old);
	}
	buf_free(&all);
	return count;
}

void check_decide(const struct kg_thresholds *t, const struct kg_gate *g, int no_baseline,
		  struct kg_outcome *o)
{
	o->on_new_kernel = (int)t->on_new_kernel;
	o->on_missing_kernel = (int)t->on_missing_kernel;
	o->on_inconclusive = (int)t->on_inconclusive;
	o->on_no_baseline = (int)t->on_no_baseline;
	o->n_fail = o->n_pass = o->n_inconclusive = o->n_new = o->n_missing = o->n_changed = 0;
	o->n_skip = o->n_failing = 0;
	for (size_t i = 0; i < g->n; i++)
		verdict_outcome_count(o, g->r[i].verdict, g->r[i].fails);
	if (no_baseline) {
		o->verdict = KG_VERDICT_NO_BASELINE;
		o->exit_status = t->on_no_baseline == KG_POLICY_FAIL ? KG_EXIT_REGRESSION : KG_EXIT_PASS;
	} else if (o->n_failing || g->exit_status != KG_EXIT_PASS) {
		o->verdict = KG_VERDICT_FAIL;
		o->exit_status = KG_EXIT_REGRESSION;
	} else {
		o->verdict = KG_VERDICT_PASS;
		o->exit_status = KG_EXIT_PASS;
	}
}

/* The series of set with r's identity and metric m, or NULL. */
static const struct kg_series *series_of(const struct kg_sampleset *set, const struct kg_result *r,
					 const char *m)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct kg_series *s = &set->s[i];
		if (!strcmp(s->metric, m) && !strcmp(s->benchmark, r->benchmark) &&
		    !strcmp(s->nvtx ? s->nvtx : "", r->nvtx ? r->nvtx : "") &&
		    !strcmp(s->kernel, r->kernel) && s->ranked == r->ranked &&
		    (!r->ranked || s->rank == r->rank) && s->n && !s->deterministic)
			return s;
	}
	return NULL;
}

/* The GPU states stored with one run, by benchmark (store_run_gpu_states). */
struct run_states {
	char **names, **states;
	size_t n;
};

/* The states of head (s[0]) and of each baseline run (s[1 + i]); a run
 * whose states cannot be read has none. */
static struct run_states *states_load(struct kg_store *st, const struct kg_run_info *head,
				      const struct kg_run_info *base, size_t n_base)
{
	struct run_states *s = xcalloc(n_base + 1, sizeof(*s));

	for (size_t i = 0; i <= n_base; i++) {
		const struct kg_run_info *r = i ? &base[i - 1] : head;
		if (store_run_gpu_states(st, r->id, &s[i].names, &s[i].states, &s[i].n) !=
		    KG_EXIT_PASS)
			s[i].n = 0;
	}
	return s;
}

static void states_free(struct run_states *s, size_t n_base)
{
	for (size_t i = 0; s && i <= n_base; i++) {
		store_names_free(s[i].names, s[i].n);
		store_names_free(s[i].states, s[i].n);
	}
	free(s);
}

/* The recorded GPU state of benchmark name in rs: 1 and *sum, or 0. */
static int summary_of(const struct run_states *rs, const char *name, struct kg_gpu_summary *sum)
{
	char err[200];

	for (size_t i = 0; i < rs->n; i++) {
		if (strcmp(rs->names[i], name))
			continue;
		json_t *j = json_loads(rs->states[i], 0, NULL);
		int ok = j && gpustate_summary_from_json(j, sum, err, sizeof(err)) == 0 &&
			 sum->recorded;
		json_decref(j);
		return ok;
	}
	return 0;
}

/* The middle of the SM clock recorded for benchmark b in rs, or 0. */
static double state_clock(const struct run_states *rs, const char *b)
{
	struct kg_gpu_summary sum;

	if (!summary_of(rs, b, &sum) || sum.sm_mhz_min <= 0)
		return 0;
	return (sum.sm_mhz_min + sum.sm_mhz_max) / 2.0;
}

/*
 * The clock view: for each time comparison that did not PASS, its change
 * in SM cycles beside the change in time, so a clock difference is told
 * apart from a change of the work.  From sm__cycles_elapsed (.max, else
 * .avg) where both sides measured it, else from the SM clocks the head run
 * and the newest baseline run recorded (head and base), when they differ
 * by more than 1%.  The message gets the cycles; when the cycles stay
 * under half the limit while the time is over it, it says the clock
 * changed, not the work.
 */
static void clock_view(const struct run_states *head, const struct run_states *base,
		       struct kg_gate *g, const struct kg_sampleset *bs,
		       const struct kg_sampleset *hs)
{
	static const char *const cycles[] = { "sm__cycles_elapsed.max", "sm__cycles_elapsed.avg" };

	for (size_t i = 0; i < g->n; i++) {
		struct kg_result *r = &g->r[i];
		if (r->deterministic || r->verdict == KG_VERDICT_PASS || isnan(r->shift) ||
		    strncmp(r->metric, "gpu__time_duration", 18))
			continue;
		for (size_t k = 0; k < 2 && isnan(r->cycle_shift); k++) {
			const struct kg_series *b = series_of(bs, r, cycles[k]);
			const struct kg_series *h = series_of(hs, r, cycles[k]);
			double mb = b && h ? stats_median(b->v, b->n) : NAN;
			double mh = b && h ? stats_median(h->v, h->n) : NAN;
			if (mb > 0 && mh > 0) {
				r->cycle_shift = mh / mb - 1;
				r->cycle_source = cycles[k];
			}
		}
		if (isnan(r->cycle_shift)) {
			double ch = state_clock(head, r->benchmark);
			double cb = state_clock(base, r->benchmark);
			if (ch > 0 && cb > 0 && fabs(ch / cb - 1) > 0.01) {
				r->cycle_shift = (1 + r->shift) * ch / cb - 1;
				r->cycle_source = "recorded SM clock";
			}
		}
		if (isnan(r->cycle_shift))
			continue;
		size_t len = strlen(r->message);
		int clock = !isnan(r->threshold) && fabs(r->shift) >= r->threshold &&
			    fabs(r->cycle_shift) < r->threshold / 2;
		snprintf(r->message + len, sizeof(r->message) - len, "; in SM cycles %+.2f%%%s",
			 100 * r->cycle_shift, clock ? " (the clock changed, not the work)" : "");
	}
}

/*
 * Warnings on stderr when what the GPU was doing makes the compared
 * benchmarks' timings less comparable: throttling or another compute
 * process on either side, or the two sides under different clocks.
 * s: states_load()'s states of head and of each baseline run.
 */
static void gpu_warnings(const struct run_states *s, const struct kg_run_info *head,
			 const struct kg_run_info *base, size_t n_base, char *const *common,
			 size_t n_common)
{
	if (!s[0].n)
		return;
	for (size_t b = 0; b < n_base; b++) {
		for (size_t i = 0; i < n_common; i++) {
			struct kg_gpu_summary h, bl;
			char what[400];
			int have_h = summary_of(&s[0], common[i], &h);
			int have_b = summary_of(&s[1 + b], common[i], &bl);

			if (have_h && b == 0 && *gpustate_summary_concerns(&h, what, sizeof(what)))
				kg_warn("benchmark '%s', head run %lld: %s; its timings may not "
					"compare", common[i], (long long)head->id, what);
			if (have_b && *gpustate_summary_concerns(&bl, what, sizeof(what)))
				kg_warn("benchmark '%s', baseline run %lld: %s; its timings may "
					"not compare", common[i], (long long)base[b].id, what);
			if (have_h && have_b &&
			    *gpustate_clock_difference(&h.first, &bl.first, what, sizeof(what)))
				kg_warn("benchmark '%s': head run %lld and baseline run %lld ran "
					"under different clocks (%s)", common[i],
					(long long)head->id, (long long)base[b].id, what);
		}
	}
}

int check_gate(struct kg_store *st, const struct kg_thresholds *t,
	       const struct kg_run_info *head, const struct kg_run_info *base, size_t n_base,
	       struct kg_sampleset *hs, struct kg_sampleset *bs, struct kg_gate *g)
{
	char **common = NULL;
	size_t n_common = 0;
	char *not_compared = NULL;
	int rc = check_load_samples(st, head, base, n_base, hs, bs);

	if (t->pool_ranks) {
		store_sampleset_pool_ranks(hs);
		store_sampleset_pool_ranks(bs);
	}

	memset(g, 0, sizeof(*g));
	if (rc == KG_EXIT_PASS && n_base)
		rc = check_partial(st, head, base, n_base, &common, &n_common, &not_compared);
	if (rc == KG_EXIT_PASS && n_common) {
		store_sampleset_keep(hs, common, n_common);
		store_sampleset_keep(bs, common, n_common);
		kname_unify(bs, hs);
		gate_compare(t, bs, hs, g);
	}
	store_names_free(common, n_common);
	free(not_compared);
	return rc;
}

int check_runs(struct kg_store *st, const struct kg_thresholds *t,
	       const struct kg_run_info *head, const struct kg_run_info *base,
	       size_t n_base, const char *baseline, const struct kg_check_opts *o)
{
	struct kg_sampleset hs = { 0 }, bs = { 0 };
	struct kg_outcome oc = { 0 };
	char **common = NULL;
	size_t n_common = 0;
	char *devices_note = NULL;
	/* Runs of different device sets are never compared: such a baseline is
	 * no baseline, and the note names both sets. */
	for (size_t i = 0; i < n_base; i++)
		if (other_devices(head, &base[i])) {
			char *x = check_device_set(base[i].devices), *y = check_device_set(head->devices);
			devices_note = xasprintf("the baseline run %lld was recorded on %s, the head run"
						 " on %s; runs of different device sets are never"
						 " compared", (long long)base[i].id, x, y);
			kg_warn("%s", devices_note);
			free(x);
			free(y);
			n_base = 0;
			break;
		}
	int rc = check_load_samples(st, head, base, n_base, &hs, &bs);
	if (t->pool_ranks) {
		store_sampleset_pool_ranks(&hs);
		store_sampleset_pool_ranks(&bs);
	}
	if (rc == KG_EXIT_PASS && n_base)
		rc = check_partial(st, head, base, n_base, &common, &n_common, &oc.not_compared);
	if (rc != KG_EXIT_PASS) {
		store_sampleset_free(&hs);
		store_sampleset_free(&bs);
		verdict_outcome_free(&oc);
		free(devices_note);
		return rc;
	}
	/* Only benchmarks both sides ran are compared; nothing in common, or
	 * no baseline run at all, is no baseline. */
	int no_baseline = !n_base || !n_common;
	size_t ungated = 0;
	struct kg_gate g;
	if (no_baseline) {
		memset(&g, 0, sizeof g);
		if (devices_note)
			oc.note = xstrdup(devices_note);
		else if (o->no_baseline_note)
			oc.note = xstrdup(o->no_baseline_note);
		else if (n_base)
			oc.note = xasprintf("the baseline run%s ran none of the head run's benchmarks",
					    n_base == 1 ? "" : "s");
		else
			oc.note = xstrdup("no baseline run is stored");
	} else {
		store_sampleset_keep(&hs, common, n_common);
		store_sampleset_keep(&bs, common, n_common);
		kname_unify(&bs, &hs);
		gate_compare(t, &bs, &hs, &g);
		ungated = ungated_metrics(t, &hs, &bs, common, n_common, &oc.not_compared);
		if (o->confirm)
			confirm_apply(o->confirm, t, &g);
		struct run_states *rs = states_load(st, head, base, n_base);
		clock_view(&rs[0], &rs[1], &g, &bs, &hs);
		gpu_warnings(rs, head, base, n_base, common, n_common);
		states_free(rs, n_base);
	}
	store_names_free(common, n_common);
	check_decide(t, &g, no_baseline, &oc);
	if (ungated && t->on_ungated_metric == KG_POLICY_FAIL && oc.verdict == KG_VERDICT_PASS) {
		oc.verdict = KG_VERDICT_FAIL;
		oc.exit_status = KG_EXIT_REGRESSION;
	}

	char *bl_sha, *bl_reason;
	check_baseline_split(baseline, &bl_sha, &bl_reason);
	struct kg_check_info info = {
		.head_commit = head->commit ? head->commit : "?",
		.baseline = baseline,
		.baseline_sha = bl_sha,
		.baseline_reason = bl_reason,
		.gpu = head->gpu_name,
		.n_base_runs = n_base,
		.all = o->all,
		.outcome = &oc,
	};
	struct kg_explanation *why = NULL;
	size_t n_why = 0;
	if (o->explain && !no_baseline)
		explain_failures(head, &g, &bs, &hs, &why, &n_why);
	info.why = why;
	info.n_why = n_why;
	FILE *out = o->out ? o->out : stdout;
	output_write(o->format, &info, &g, o->color, out);
	if (fflush(out) != 0 || ferror(out)) {
		kg_error("cannot write the verdicts: %s", strerror(errno));
		rc = KG_EXIT_RUNTIME;
	}
	for (size_t i = 0; i < o->n_outputs && rc == KG_EXIT_PASS; i++) {
		struct kg_buf ob = KG_BUF_INIT;
		output_render(o->outputs[i].format, &info, &g, 0, &ob);
		FILE *fp = fopen(o->outputs[i].path, "w");
		int bad = !fp;
		if (fp) {
			bad = fwrite(ob.s, 1, ob.len, fp) != ob.len;
			bad |= fclose(fp) != 0;
		}
		if (bad) {
			kg_error("cannot write '%s': %s", o->outputs[i].path, strerror(errno));
			rc = KG_EXIT_RUNTIME;
		}
		buf_free(&ob);
	}
	if (o->summary)
		write_summary(&info, &g);
	if (rc == KG_EXIT_PASS && o->store_verdicts &&
	    store_results(st, head, baseline, &oc, &g, why, n_why) != KG_EXIT_PASS)
		kg_warn("the verdicts were not stored; the check itself is complete");
	if (rc == KG_EXIT_PASS)
		rc = oc.exit_status;
	explain_free_all(why, n_why);
	free(bl_sha);
	free(bl_reason);
	gate_free(&g);
	verdict_outcome_free(&oc);
	store_sampleset_free(&hs);
	store_sampleset_free(&bs);
	free(devices_note);
	return rc;
}
