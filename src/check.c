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

#include "kgate/check.h"
#include "kgate/explain.h"
#include "kgate/gate.h"
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
	if (store_find_runs(st, &f, &runs, &n) != KG_EXIT_PASS)
		return -1;
	store_runs_free(runs, n);
	return n > 0;
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
	char *def = git_default_branch();
	if (def && head->commit) {
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
			 const char *baseline, const struct kg_gate *g)
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
	int rc = store_verdicts_put(st, head->id, baseline, rows, g->n);
	free(rows);
	return rc;
}

/* The explanation of every FAIL (explain.c), after the verdicts or, in
 * json, as a "why" field of each result of an explained kernel. */
static void add_explanations(const struct kg_run_info *head, const struct kg_gate *g,
			     const struct kg_sampleset *bs, const struct kg_sampleset *hs,
			     enum kg_format f, struct kg_buf *b)
{
	struct kg_explain_item *it;
	size_t n;
	explain_pick(g, bs, hs, NULL, 0, NULL, 0, &it, &n);
	if (!n || (f != KG_FMT_TEXT && f != KG_FMT_MARKDOWN && f != KG_FMT_JSON)) {
		free(it);
		return;
	}
	const struct kg_chip *chip = explain_chip(head->gpu_chip, head->gpu_name);
	int md = f == KG_FMT_MARKDOWN;
	char **why = xcalloc(n, sizeof *why);
	struct kg_buf x = KG_BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		struct kg_metricmap mb, mh;
		struct kg_buf s = KG_BUF_INIT, d = KG_BUF_INIT;
		explain_map_from_set(bs, it[i].bench, it[i].nvtx, it[i].bk, &mb);
		explain_map_from_set(hs, it[i].bench, it[i].nvtx, it[i].hk, &mh);
		char *name = strcmp(it[i].bk, it[i].hk) ? xasprintf("%s -> %s", it[i].bk, it[i].hk)
							 : xstrdup(it[i].bk);
		explain_kernel(name, &mb, &mh, chip, md ? KG_EXPLAIN_MARKDOWN : KG_EXPLAIN_TEXT, &s, &d);
		if (md) {
			buf_adds(&x, "\n**Why:** ");
			output_escape_markdown(&x, s.s);
			buf_adds(&x, "\n\n");
			buf_adds(&x, d.s);
		} else {
			buf_printf(&x, "\nwhy: %s\n%s", s.s, d.s);
		}
		why[i] = buf_detach(&s);
		free(name);
		buf_free(&d);
		explain_map_free(&mb);
		explain_map_free(&mh);
	}
	if (f != KG_FMT_JSON) {
		buf_add(b, x.s, x.len);
	} else {
		json_t *root = json_loadb(b->s, b->len, 0, NULL);
		json_t *res = root ? json_object_get(root, "results") : NULL;
		size_t k;
		json_t *r;
		json_array_foreach(res, k, r) {
			const char *bn = json_string_value(json_object_get(r, "benchmark"));
			const char *nv = json_string_value(json_object_get(r, "nvtx"));
			const char *kn = json_string_value(json_object_get(r, "kernel"));
			for (size_t i = 0; bn && nv && kn && i < n; i++)
				if (!strcmp(bn, it[i].bench) && !strcmp(nv, it[i].nvtx) &&
				    (!strcmp(kn, it[i].bk) || !strcmp(kn, it[i].hk))) {
					json_object_set_new(r, "why", json_string(why[i]));
					break;
				}
		}
		char *js = root ? json_dumps(root, JSON_INDENT(2)) : NULL;
		if (js) {
			buf_reset(b);
			buf_adds(b, js);
			buf_adds(b, "\n");
			free(js);
		}
		json_decref(root);
	}
	for (size_t i = 0; i < n; i++)
		free(why[i]);
	free(why);
	buf_free(&x);
	free(it);
}

int check_runs(struct kg_store *st, const struct kg_thresholds *t,
	       const struct kg_run_info *head, const struct kg_run_info *base,
	       size_t n_base, const char *baseline, const struct kg_check_opts *o)
{
	struct kg_sampleset hs = { 0 }, bs = { 0 };
	int64_t *ids = xcalloc(n_base ? n_base : 1, sizeof *ids);
	for (size_t i = 0; i < n_base; i++)
		ids[i] = base[i].id;
	int rc = store_load_samples(st, &head->id, 1, &hs);
	if (rc == KG_EXIT_PASS && n_base)
		rc = store_load_samples(st, ids, n_base, &bs);
	free(ids);
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
	struct kg_buf b = KG_BUF_INIT;
	output_render(o->format, &info, &g, o->color, &b);
	if (o->explain)
		add_explanations(head, &g, &bs, &hs, o->format, &b);
	FILE *out = o->out ? o->out : stdout;
	fwrite(b.s, 1, b.len, out);
	buf_free(&b);
	if (fflush(out) != 0) {
		kg_error("cannot write the verdicts: %s", strerror(errno));
		rc = KG_EXIT_RUNTIME;
	}
	if (o->summary)
		write_summary(&info, &g);
	if (rc == KG_EXIT_PASS && o->store_verdicts && store_results(st, head, baseline, &g) != KG_EXIT_PASS)
		kg_warn("the verdicts were not stored; the check itself is complete");
	if (rc == KG_EXIT_PASS)
		rc = g.exit_status;
	gate_free(&g);
	store_sampleset_free(&hs);
	store_sampleset_free(&bs);
	return rc;
}
