/*
 * report.c: the Markdown verdict table of a stored check and the nightly
 * HTML trend report (see kgate/report.h).
 *
 * Owns the grouping of samples into per-commit series (read from the store
 * as they stream by), the SVG drawing and the summary text.
 * Change points come from changepoint.c, run on each series' per-commit
 * medians.
 */
#include "kgate/check.h"
#include "kgate/escape.h"
#include "kgate/output.h"
#include "kgate/report.h"
#include "kgate/github.h"
#include "kgate/kgate.h"
#include "kgate/metric.h"
#include "kgate/verdict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- helpers */

static void fmt_date(char *out, size_t n, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, n, "%Y-%m-%d %H:%M UTC", &tm);
}

/* A commit as every human output writes it (kg_sha_short); out holds 16. */
static void short_sha(char *out, const char *sha)
{
	char t[KG_SHA_SHORT_BUF];
	snprintf(out, KG_SHA_SHORT + 1, "%s", kg_sha_short(t, sha));
}

/* ---------------------------------------------------------------- checks */

static char *dup_or_null(const char *t)
{
	return t ? xstrdup(t) : NULL;
}

/* A stored verdict row into check arg's rows, counted in its outcome. */
static int add_check_row(void *arg, const struct kg_verdict_rec *r)
{
	struct report_check *c = arg;
	if (c->n % 16 == 0)
		c->v = xrealloc(c->v, (c->n + 16) * sizeof *c->v);
	struct report_verdict *v = &c->v[c->n++];
	v->benchmark = dup_or_null(r->benchmark);
	v->nvtx = dup_or_null(r->nvtx);
	v->kernel = dup_or_null(r->kernel);
	v->demangled = dup_or_null(r->demangled);
	v->metric = dup_or_null(r->metric);
	v->verdict = dup_or_null(r->verdict);
	v->message = dup_or_null(r->message);
	v->shift = r->shift;
	v->lo = r->lo;
	v->hi = r->hi;
	v->p = r->p;
	v->base_value = r->base_value;
	v->head_value = r->head_value;
	v->n_base = (long)r->n_base;
	v->n_head = (long)r->n_head;
	v->fails = r->fails;
	enum kg_verdict vd = KG_VERDICT_SKIP;
	verdict_parse(v->verdict, &vd);
	struct kg_outcome *o = &c->outcome;
	switch (vd) {
	case KG_VERDICT_FAIL: o->n_fail++; break;
	case KG_VERDICT_INCONCLUSIVE: o->n_inconclusive++; break;
	case KG_VERDICT_PASS: o->n_pass++; break;
	case KG_VERDICT_NEW: o->n_new++; break;
	case KG_VERDICT_MISSING: o->n_missing++; break;
	case KG_VERDICT_CHANGED: o->n_changed++; break;
	default: o->n_skip++; break;
	}
	o->n_failing += v->fails != 0;
	return 0;
}

/* 1 when check c has a verdict other than pass or skip for kernel k of
 * benchmark b at NVTX path nv. */
static int check_flags(const struct report_check *c, const char *b, const char *nv, const char *k)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct report_verdict *v = &c->v[i];
		if (v->benchmark && v->nvtx && v->kernel && v->verdict && !strcmp(v->benchmark, b) &&
		    !strcmp(v->nvtx, nv) && !strcmp(v->kernel, k) &&
		    (!strcmp(v->verdict, "fail") || !strcmp(v->verdict, "missing") ||
		     !strcmp(v->verdict, "new")))
			return 1;
	}
	return 0;
}

/* A stored explanation (newest first) into check arg's, when it is of a
 * kernel the check flags and the first of its kernel pair. */
static int add_check_why(void *arg, const struct kg_explain_row *x)
{
	struct report_check *c = arg;
	const char *t[6] = { x->benchmark, x->nvtx, x->base_kernel, x->head_kernel, x->why,
			     x->details };
	if (!t[0] || !t[1] || !t[2] || !t[3] ||
	    !(check_flags(c, t[0], t[1], t[2]) || check_flags(c, t[0], t[1], t[3])))
		return 0;
	for (size_t i = 0; i < c->n_why; i++)
		if (!strcmp(c->why[i].benchmark, t[0]) && !strcmp(c->why[i].nvtx, t[1]) &&
		    !strcmp(c->why[i].base_kernel, t[2]) && !strcmp(c->why[i].head_kernel, t[3]))
			return 0;
	if (c->n_why % 4 == 0)
		c->why = xrealloc(c->why, (c->n_why + 4) * sizeof *c->why);
	if (explain_from_json(t[0], t[1], t[2], t[3], t[4], t[5], &c->why[c->n_why]) == 0)
		c->n_why++;
	return 0;
}

/* The newest check that f chooses, its rows, and the explanations of the
 * kernels it flags (in the order they were stored): 0, 1 when there is
 * none, -1 on a database error (printed). */
static int load_newest(struct kg_store *st, const struct kg_check_filter *f,
		       struct report_check *out)
{
	struct kg_stored_check ci;

	memset(out, 0, sizeof *out);
	if (store_check_newest(st, f, &ci) != KG_EXIT_PASS)
		return -1;
	if (!ci.id)
		return 1;
	out->id = ci.id;
	out->run = ci.run;
	out->commit = ci.commit;
	out->baseline = ci.baseline;
	out->time = ci.time;
	out->outcome = ci.outcome;
	if (store_check_verdicts(st, out->id, add_check_row, out) != KG_EXIT_PASS ||
	    store_run_explanations(st, out->run, add_check_why, out) != KG_EXIT_PASS) {
		report_check_free(out);
		return -1;
	}
	for (size_t i = 0; i < out->n_why / 2; i++) {
		struct kg_explanation t = out->why[i];
		out->why[i] = out->why[out->n_why - 1 - i];
		out->why[out->n_why - 1 - i] = t;
	}
	return 0;
}

int report_check_load(struct kg_store *st, const char *commit, struct report_check *out)
{
	struct kg_check_filter f = { .commit = commit };
	return load_newest(st, &f, out);
}

void report_check_free(struct report_check *c)
{
	for (size_t i = 0; i < c->n; i++) {
		struct report_verdict *v = &c->v[i];
		free(v->benchmark); free(v->nvtx); free(v->kernel); free(v->demangled);
		free(v->metric); free(v->verdict); free(v->message);
	}
	free(c->v);
	for (size_t i = 0; i < c->n_why; i++)
		explain_free(&c->why[i]);
	free(c->why);
	free(c->commit);
	free(c->baseline);
	verdict_outcome_free(&c->outcome);
	memset(c, 0, sizeof *c);
}

/* Rows in the order the comment shows them: those that fail the check,
 * then FAIL, MISSING, INCONCLUSIVE, NEW, PASS, SKIP. */
static int verdict_rank(const struct report_verdict *r)
{
	static const enum kg_verdict order[] = { KG_VERDICT_FAIL, KG_VERDICT_MISSING,
						 KG_VERDICT_INCONCLUSIVE, KG_VERDICT_NEW,
						 KG_VERDICT_PASS, KG_VERDICT_SKIP };
	enum kg_verdict v;
	if (r->fails)
		return 0;
	if (verdict_parse(r->verdict, &v) == 0)
		for (int i = 0; i < 6; i++)
			if (v == order[i])
				return i + 1;
	return 7;
}

static const char *verdict_label(const char *s)
{
	enum kg_verdict v;
	return verdict_parse(s, &v) == 0 ? verdict_badge(v) : "?";
}

static void fmt_pct(char *out, size_t n, double x)
{
	if (isnan(x))
		snprintf(out, n, "–");
	else
		snprintf(out, n, "%+.2f%%", 100 * x);
}

static void fmt_num(char *out, size_t n, double x)
{
	if (isnan(x))
		snprintf(out, n, "–");
	else
		snprintf(out, n, "%.6g", x);
}

static void md_row(struct kg_buf *b, const struct report_verdict *v)
{
	char shift[32], lo[32], hi[32], p[32], bv[32], hv[32];
	fmt_pct(shift, sizeof shift, v->shift);
	fmt_pct(lo, sizeof lo, v->lo);
	fmt_pct(hi, sizeof hi, v->hi);
	if (isnan(v->p))
		snprintf(p, sizeof p, "–");
	else
		snprintf(p, sizeof p, "%.2g", v->p);
	struct kg_buf vb = KG_BUF_INIT, vh = KG_BUF_INIT;
	metric_format_value(&vb, v->base_value, metric_unit(v->metric ? v->metric : ""));
	metric_format_value(&vh, v->head_value, metric_unit(v->metric ? v->metric : ""));
	snprintf(bv, sizeof bv, "%s", vb.s);
	snprintf(hv, sizeof hv, "%s", vh.s);
	buf_free(&vb);
	buf_free(&vh);
	buf_printf(b, "| %s%s | ", verdict_label(v->verdict),
		   v->fails && strcmp(v->verdict ? v->verdict : "", "fail") ? " (fails)" : "");
	escape_markdown(b, v->benchmark);
	if (v->nvtx && *v->nvtx) {
		buf_adds(b, " [");
		escape_markdown(b, v->nvtx);
		buf_adds(b, "]");
	}
	buf_adds(b, " | ");
	escape_markdown(b, v->demangled ? v->demangled : v->kernel);
	buf_adds(b, " | ");
	escape_markdown(b, v->metric);
	if (isnan(v->lo) || isnan(v->hi))
		buf_printf(b, " | %s | %s | %s → %s | ", shift, p, bv, hv);
	else
		buf_printf(b, " | %s [%s, %s] | %s | %s → %s | ", shift, lo, hi, p, bv, hv);
	escape_markdown(b, v->message);
	buf_adds(b, " |\n");
}

static int cmp_verdict(const void *a, const void *b)
{
	const struct report_verdict *x = *(struct report_verdict *const *)a;
	const struct report_verdict *y = *(struct report_verdict *const *)b;
	int d = verdict_rank(x) - verdict_rank(y);
	if (d)
		return d;
	double sx = isnan(x->shift) ? 0 : x->shift, sy = isnan(y->shift) ? 0 : y->shift;
	return (sy > sx) - (sy < sx);
}

void report_check_markdown(const struct report_check *c, struct kg_buf *b)
{
	buf_adds(b, KG_GITHUB_MARKER "\n");
	const struct kg_outcome *o = &c->outcome;
	size_t nk = report_check_failing_kernels(c);
	if (o->verdict == KG_VERDICT_NO_BASELINE)
		buf_printf(b, "### kgate: %s NO BASELINE: nothing compared%s\n\n",
			   o->exit_status ? "\xE2\x9D\x8C" : "\xE2\x9A\xA0\xEF\xB8\x8F",
			   o->exit_status ? " (on\\_no\\_baseline: fail)" : "");
	else if (o->verdict == KG_VERDICT_FAIL && o->n_failing == o->n_fail)
		buf_printf(b, "### kgate: \xE2\x9D\x8C FAIL: %zu regressed kernel%s (%zu failing"
			   " comparison%s)\n\n", nk, nk == 1 ? "" : "s", o->n_failing,
			   o->n_failing == 1 ? "" : "s");
	else if (o->verdict == KG_VERDICT_FAIL)
		buf_printf(b, "### kgate: \xE2\x9D\x8C FAIL: %zu failing kernel%s (%zu failing"
			   " comparison%s)\n\n", nk, nk == 1 ? "" : "s", o->n_failing,
			   o->n_failing == 1 ? "" : "s");
	else
		buf_adds(b, "### kgate: \xE2\x9C\x85 PASS: no regression\n\n");
	char *bl_sha, *bl_reason;
	check_baseline_split(c->baseline, &bl_sha, &bl_reason);
	buf_adds(b, "Commit ");
	output_commit_markdown(b, c->commit);
	buf_adds(b, " against baseline ");
	if (bl_sha)
		output_commit_markdown(b, bl_sha);
	else
		buf_adds(b, "(none)");
	if (bl_reason) {
		buf_adds(b, " (");
		escape_markdown(b, bl_reason);
		buf_adds(b, ")");
	}
	free(bl_sha);
	free(bl_reason);
	buf_printf(b, ": %zu fail, %zu missing, %zu inconclusive, %zu new, %zu pass",
		   o->n_fail, o->n_missing, o->n_inconclusive, o->n_new, o->n_pass);
	if (o->n_changed)
		buf_printf(b, ", %zu changed (launch configuration; not a regression)", o->n_changed);
	if (o->n_failing != o->n_fail)
		buf_printf(b, "; %zu failing the check", o->n_failing);
	buf_adds(b, ".\n\n");
	if (o->verdict == KG_VERDICT_NO_BASELINE) {
		buf_adds(b, "**No baseline:** ");
		escape_markdown(b, o->note ? o->note : "nothing to compare with");
		buf_adds(b, ".\n\n");
	}
	if (o->not_compared) {
		buf_adds(b, "**Not compared:** ");
		escape_markdown(b, o->not_compared);
		buf_adds(b, ".\n\n");
	}
	const struct report_verdict **ord = xmalloc((c->n + 1) * sizeof *ord);
	for (size_t i = 0; i < c->n; i++)
		ord[i] = &c->v[i];
	qsort(ord, c->n, sizeof *ord, cmp_verdict);
	static const char head[] =
		"| verdict | benchmark | kernel | metric | change [CI] | p | baseline → head | note |\n"
		"| --- | --- | --- | --- | --- | --- | --- | --- |\n";
	size_t i = 0, shown = 0;
	for (; i < c->n && verdict_rank(ord[i]) < 5; i++) {
		if (!shown++)
			buf_adds(b, head);
		md_row(b, ord[i]);
	}
	if (i < c->n) {
		buf_printf(b, "\n<details><summary>%zu more (pass or skipped)</summary>\n\n%s",
			   c->n - i, head);
		for (; i < c->n; i++)
			md_row(b, ord[i]);
		buf_adds(b, "\n</details>\n");
	}
	if (!c->n)
		buf_adds(b, "No comparison was made.\n");
	free(ord);
	if (c->n_why)
		buf_adds(b, "\n#### Why\n");
	for (size_t k = 0; k < c->n_why; k++) {
		buf_adds(b, "\n");
		escape_markdown(b, c->why[k].benchmark);
		if (*c->why[k].nvtx) {
			buf_adds(b, " [");
			escape_markdown(b, c->why[k].nvtx);
			buf_adds(b, "]");
		}
		buf_adds(b, ": ");
		escape_markdown(b, c->why[k].why);
		buf_adds(b, "\n\n<details><summary>rules and counters</summary>\n\n");
		explain_render(&c->why[k], KG_EXPLAIN_MARKDOWN, b);
		buf_adds(b, "\n</details>\n");
	}
}

size_t report_check_failing_kernels(const struct report_check *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct report_verdict *v = &c->v[i];
		if (!v->fails)
			continue;
		size_t j = 0;
		for (; j < i; j++) {
			const struct report_verdict *w = &c->v[j];
			if (w->fails && !strcmp(w->benchmark ? w->benchmark : "", v->benchmark ? v->benchmark : "") &&
			    !strcmp(w->kernel ? w->kernel : "", v->kernel ? v->kernel : ""))
				break;
		}
		n += j == i;
	}
	return n;
}

const char *report_check_state(const struct report_check *c, struct kg_buf *desc)
{
	return verdict_outcome_state(&c->outcome, desc);
}

/* ---------------------------------------------------------------- trends */

void report_opts_defaults(struct report_opts *o)
{
	memset(o, 0, sizeof *o);
	o->new_within = 7 * 86400;
	o->max_hover = 20000;
	changepoint_defaults(&o->cp);
}

void report_summary_free(struct report_summary *s)
{
	free(s->text);
	memset(s, 0, sizeof *s);
}

struct run { int64_t id; char *commit; int64_t time; int gpu; };
struct name { int64_t id; char *s, *demangled; char *unit; int det; };
struct names { struct name *v; size_t n; };   /* sorted by id */

/* One commit of a series: its values reduced as they are read (floats:
 * 28 bytes a point, so that a million points take 28 MB). */
struct point { uint32_t pos, n; float med, q1, q3, lo, hi; };
struct series {
	int gpu;
	int64_t bench, nvtx, kernel, metric;
	double *cur;            /* the values of the commit being read */
	size_t ncur, capcur;
	uint32_t cur_pos;
	struct point *pt;
	size_t npt, cappt;
	struct cp_result *cp;
	size_t ncp;
	size_t page;            /* the page that draws it (directory form) */
};

struct run_pos {
	int64_t id;
	uint32_t pos;
};

struct ctx {
	struct kg_store *st;
	const struct report_opts *o;
	struct run *runs;
	size_t nruns;
	struct run_pos *by_id;  /* the selected runs' ids, sorted, with positions */
	size_t last_hit;        /* by_id index of the last lookup (samples come run by run) */
	char **gpus;
	size_t ngpus;
	struct names bench, nvtx, kernel, metric;
	struct series *s;       /* hash table, then compacted */
	size_t ns, cap;
	size_t *slot;
	int pages;              /* the directory form: charts on pages of their own */
};

/* The entry of id, NULL when there is none (ids are never array indexes). */
static const struct name *name_find(const struct names *t, int64_t id)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && t->v[lo].id == id ? &t->v[lo] : NULL;
}

static const char *name_of(const struct names *t, int64_t id)
{
	const struct name *nm = name_find(t, id);
	return nm && nm->s ? nm->s : "?";
}

static int add_name(void *arg, const struct kg_name_row *r)
{
	struct names *t = arg;
	if (t->n % 64 == 0)
		t->v = xrealloc(t->v, (t->n + 64) * sizeof *t->v);
	t->v[t->n++] = (struct name){ r->id, dup_or_null(r->name), dup_or_null(r->demangled),
				      dup_or_null(r->unit), r->deterministic };
	return 0;
}

static int load_names(struct kg_store *st, enum kg_name_table which, struct names *t)
{
	return store_names_each(st, which, add_name, t) == KG_EXIT_PASS ? 0 : -1;
}

static void free_names(struct names *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].s);
		free(t->v[i].demangled);
		free(t->v[i].unit);
	}
	free(t->v);
}

static int cmp_run_pos(const void *a, const void *b)
{
	const struct run_pos *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

static int load_runs(struct ctx *c)
{
	struct kg_run_filter f = { .branch = c->o->branch, .since = c->o->since, .no_quick = 1,
				   .no_label = 1, .oldest_first = 1 };
	struct kg_run_info *ri;
	size_t n;
	if (store_find_runs(c->st, &f, &ri, &n) != KG_EXIT_PASS)
		return -1;
	c->runs = xmalloc((n ? n : 1) * sizeof *c->runs);
	for (size_t i = 0; i < n; i++) {
		struct run *r = &c->runs[c->nruns++];
		r->id = ri[i].id;
		r->commit = ri[i].commit;
		ri[i].commit = NULL;
		r->time = ri[i].time;
		const char *g = ri[i].gpu_name ? ri[i].gpu_name : "";
		size_t k;
		for (k = 0; k < c->ngpus; k++)
			if (!strcmp(c->gpus[k], g))
				break;
		if (k == c->ngpus) {
			c->gpus = xrealloc(c->gpus, (c->ngpus + 1) * sizeof *c->gpus);
			c->gpus[c->ngpus++] = xstrdup(g);
		}
		r->gpu = (int)k;
	}
	store_runs_free(ri, n);
	/* never an array indexed by an id read from the file: ids are any int64 */
	c->by_id = xmalloc((c->nruns ? c->nruns : 1) * sizeof *c->by_id);
	for (size_t i = 0; i < c->nruns; i++)
		c->by_id[i] = (struct run_pos){ c->runs[i].id, (uint32_t)i };
	if (c->nruns)
		qsort(c->by_id, c->nruns, sizeof *c->by_id, cmp_run_pos);
	return 0;
}

/* The position of run id among the selected runs; 0 when it is not one. */
static int run_pos_of(struct ctx *c, int64_t id, uint32_t *pos)
{
	size_t lo = 0, hi = c->nruns;

	if (c->last_hit < c->nruns && c->by_id[c->last_hit].id == id) {
		*pos = c->by_id[c->last_hit].pos;
		return 1;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->by_id[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->nruns || c->by_id[lo].id != id)
		return 0;
	c->last_hit = lo;
	*pos = c->by_id[lo].pos;
	return 1;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

static struct series *series_get(struct ctx *c, int gpu, int64_t b, int64_t nv, int64_t k,
				 int64_t m)
{
	if (2 * (c->ns + 1) > c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 1024;
		size_t *slot = xmalloc(ncap * sizeof *slot);
		for (size_t i = 0; i < ncap; i++)
			slot[i] = SIZE_MAX;
		for (size_t i = 0; i < c->ns; i++) {
			struct series *x = &c->s[i];
			uint64_t h = mix(mix(mix(mix(mix(0, (uint64_t)x->gpu), (uint64_t)x->bench),
						 (uint64_t)x->nvtx), (uint64_t)x->kernel), (uint64_t)x->metric);
			size_t j = h & (ncap - 1);
			while (slot[j] != SIZE_MAX)
				j = (j + 1) & (ncap - 1);
			slot[j] = i;
		}
		free(c->slot);
		c->slot = slot;
		c->s = xrealloc(c->s, (ncap / 2) * sizeof *c->s);
		c->cap = ncap;
	}
	uint64_t h = mix(mix(mix(mix(mix(0, (uint64_t)gpu), (uint64_t)b), (uint64_t)nv),
			     (uint64_t)k), (uint64_t)m);
	size_t j = h & (c->cap - 1);
	while (c->slot[j] != SIZE_MAX) {
		struct series *x = &c->s[c->slot[j]];
		if (x->gpu == gpu && x->bench == b && x->nvtx == nv && x->kernel == k && x->metric == m)
			return x;
		j = (j + 1) & (c->cap - 1);
	}
	c->slot[j] = c->ns;
	struct series *x = &c->s[c->ns++];
	memset(x, 0, sizeof *x);
	x->gpu = gpu;
	x->bench = b;
	x->nvtx = nv;
	x->kernel = k;
	x->metric = m;
	return x;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* quantile of sorted v[0..n) by linear interpolation */
static double quant(const double *v, size_t n, double q)
{
	double h = q * (double)(n - 1);
	size_t i = (size_t)h;
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (h - (double)i) * (v[i + 1] - v[i]);
}

/* The values read for the series' current commit become its point; a
 * series has at most a point per selected run. */
static void series_flush(struct series *x, size_t nruns)
{
	if (!x->ncur)
		return;
	if (x->npt == x->cappt) {
		x->cappt = x->cappt ? 2 * x->cappt : (nruns < 64 ? nruns : 64);
		x->pt = xrealloc(x->pt, x->cappt * sizeof *x->pt);
	}
	double *v = x->cur;
	size_t m = x->ncur;
	if (m <= 16)   /* a commit's few launches */
		for (size_t i = 1; i < m; i++)
			for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
				double t = v[j];
				v[j] = v[j - 1];
				v[j - 1] = t;
			}
	else
		qsort(v, m, sizeof *v, cmp_double);
	x->pt[x->npt++] = (struct point){ x->cur_pos, (uint32_t)m, (float)quant(v, m, 0.5),
		(float)quant(v, m, 0.25), (float)quant(v, m, 0.75), (float)v[0], (float)v[m - 1] };
	x->ncur = 0;
}

static void series_reset(struct ctx *c)
{
	for (size_t i = 0; i < c->ns; i++) {
		free(c->s[i].cur);
		free(c->s[i].pt);
	}
	free(c->s);
	free(c->slot);
	c->s = NULL;
	c->slot = NULL;
	c->ns = c->cap = 0;
}

/*
 * The samples of the selected runs, each series' values reduced to a point
 * per commit as they are read, so memory holds points, not samples: the
 * store streams each run's rows together (store_samples_stream), into two
 * parts that it may fill at once from two threads.  Each part has its own
 * series; the second's points are appended to the first's at the end.
 */
static void sample_row(void *part, int64_t run, int64_t b, int64_t nv, int64_t k, int64_t m,
		       double v)
{
	struct ctx *c = part;
	uint32_t pos;
	if (!run_pos_of(c, run, &pos))
		return;
	struct series *x = series_get(c, c->runs[pos].gpu, b, nv, k, m);
	if (x->ncur && x->cur_pos != pos)
		series_flush(x, c->nruns);
	x->cur_pos = pos;
	if (x->ncur == x->capcur) {
		x->capcur = x->capcur ? 2 * x->capcur : 8;
		x->cur = xrealloc(x->cur, x->capcur * sizeof *x->cur);
	}
	x->cur[x->ncur++] = v;
}

static void sample_reset(void *part)
{
	series_reset(part);
}

static int load_samples(struct ctx *c)
{
	struct ctx h[2];
	for (int k = 0; k < 2; k++) {
		h[k] = *c;
		h[k].s = NULL;
		h[k].slot = NULL;
		h[k].ns = h[k].cap = 0;
		h[k].last_hit = 0;
	}
	void *parts[2] = { &h[0], &h[1] };
	struct kg_sample_reader rd = { parts, 2, sample_row, sample_reset };
	int64_t *ids = xmalloc((c->nruns ? c->nruns : 1) * sizeof *ids);
	for (size_t i = 0; i < c->nruns; i++)
		ids[i] = c->runs[i].id;
	int rc = store_samples_stream(c->st, ids, c->nruns, &rd);
	free(ids);
	for (int k = 0; rc == KG_EXIT_PASS && k < 2; k++)
		for (size_t i = 0; i < h[k].ns; i++) {
			series_flush(&h[k].s[i], c->nruns);
			free(h[k].s[i].cur);
			h[k].s[i].cur = NULL;
			h[k].s[i].capcur = 0;
		}
	if (rc == KG_EXIT_PASS) {
		/* the first part's series, then the second's points appended */
		c->s = h[0].s;
		c->slot = h[0].slot;
		c->ns = h[0].ns;
		c->cap = h[0].cap;
		h[0].s = NULL;
		h[0].slot = NULL;
		h[0].ns = 0;
		for (size_t i = 0; i < h[1].ns; i++) {
			struct series *y = &h[1].s[i];
			struct series *x = series_get(c, y->gpu, y->bench, y->nvtx, y->kernel, y->metric);
			if (!x->npt) {
				x->pt = y->pt;
				x->npt = y->npt;
				x->cappt = y->cappt;
				y->pt = NULL;
				continue;
			}
			if (x->npt + y->npt > x->cappt) {
				x->cappt = x->npt + y->npt;
				x->pt = xrealloc(x->pt, x->cappt * sizeof *x->pt);
			}
			memcpy(x->pt + x->npt, y->pt, y->npt * sizeof *y->pt);
			x->npt += y->npt;
		}
	}
	series_reset(&h[0]);
	series_reset(&h[1]);
	return rc == KG_EXIT_PASS ? 0 : -1;
}

static int cmp_point(const void *a, const void *b)
{
	const struct point *x = a, *y = b;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static void build_points(struct ctx *c, struct series *x)
{
	for (size_t i = 1; i < x->npt; i++)
		if (x->pt[i].pos < x->pt[i - 1].pos) {
			qsort(x->pt, x->npt, sizeof *x->pt, cmp_point);
			break;
		}
	if (x->npt >= 2 * c->o->cp.min_seg) {
		double *med = xmalloc(x->npt * sizeof *med);
		for (size_t i = 0; i < x->npt; i++)
			med[i] = x->pt[i].med;
		size_t cap = 8;
		x->cp = xmalloc(cap * sizeof *x->cp);
		x->ncp = changepoint_find(med, x->npt, &c->o->cp, x->cp, cap);
		if (x->ncp > cap) {   /* rare: search again with room for all */
			x->cp = xrealloc(x->cp, x->ncp * sizeof *x->cp);
			x->ncp = changepoint_find(med, x->npt, &c->o->cp, x->cp, x->ncp);
		}
		free(med);
	}
}

static struct ctx *sort_ctx;

static int cmp_series(const void *a, const void *b)
{
	const struct series *x = a, *y = b;
	const struct ctx *c = sort_ctx;
	int d = strcmp(name_of(&c->bench, x->bench), name_of(&c->bench, y->bench));
	if (!d) d = x->gpu - y->gpu;
	if (!d) d = strcmp(name_of(&c->nvtx, x->nvtx), name_of(&c->nvtx, y->nvtx));
	if (!d) d = strcmp(name_of(&c->kernel, x->kernel), name_of(&c->kernel, y->kernel));
	if (!d) d = strcmp(name_of(&c->metric, x->metric), name_of(&c->metric, y->metric));
	return d;
}

static const char *kernel_label(const struct ctx *c, int64_t k)
{
	const struct name *nm = name_find(&c->kernel, k);
	if (nm && nm->demangled && *nm->demangled)
		return nm->demangled;
	return name_of(&c->kernel, k);
}

static const char *unit_of(const struct ctx *c, int64_t m)
{
	const struct name *nm = name_find(&c->metric, m);
	return nm && nm->unit ? nm->unit : "";
}

/* ---------------------------------------------------------------- SVG */

#define W 640
#define H 170
#define ML 72
#define MR 12
#define MT 10
#define MB 30

/* "%d" without printf's cost: a chart's paths are most of the report. */
static void add_int(struct kg_buf *b, int v)
{
	char t[16];
	size_t n = sizeof t;
	unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
	do {
		t[--n] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		t[--n] = '-';
	buf_add(b, t + n, sizeof t - n);
}

static void path_rel(struct kg_buf *b, const int *xs, const int *ys, size_t n, int move)
{
	if (!n)
		return;
	/* "l" once, then relative pairs; a minus sign needs no separator */
	buf_printf(b, "%c%d %d", move ? 'M' : 'L', xs[0], ys[0]);
	if (n > 1)
		buf_addc(b, 'l');
	for (size_t i = 1; i < n; i++) {
		int d[2] = { xs[i] - xs[i - 1], ys[i] - ys[i - 1] };
		for (int k = 0; k < 2; k++) {
			if ((i > 1 || k > 0) && d[k] >= 0)
				buf_addc(b, ' ');
			add_int(b, d[k]);
		}
	}
}

/*
 * A y-axis label: the value with an SI prefix and 3 to 11 significant
 * digits, in the metric's unit where that is short (ns shown as s, ms, us
 * or ns; byte as B; %), so that it fits the margin: "4.295 GB", not
 * "4.29498e+09".
 */
static void fmt_axis(char *out, size_t n, double v, const char *unit, int prec)
{
	static const struct { double f; const char *p; } si[] = {
		{ 1e15, "P" }, { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "k" },
		{ 1, "" }, { 1e-3, "m" }, { 1e-6, "u" }, { 1e-9, "n" },
	};
	const char *u = "";
	if (!strcmp(unit, "ns")) {
		v *= 1e-9;
		u = "s";
	} else if (!strcmp(unit, "byte")) {
		u = "B";
	} else if (!strcmp(unit, "%")) {
		snprintf(out, n, "%.*g%%", prec, v);
		return;
	}
	double a = fabs(v);
	size_t i = 0;
	if (a == 0 || a >= 1e18 || a < 1e-12) {
		snprintf(out, n, "%.*g%s%s", prec, v, *u ? " " : "", u);
		return;
	}
	while (i + 1 < sizeof si / sizeof si[0] && a < si[i].f * 0.9995)
		i++;
	if (!*u && !*si[i].p && a >= 1e-3) {
		snprintf(out, n, "%.*g", prec, v);
		return;
	}
	snprintf(out, n, "%.*g%s%s%s", prec, v / si[i].f, *u || *si[i].p ? " " : "", si[i].p, u);
}

/* A drawn column of a chart: the commits that fall on it, between change
 * points; their medians' median (the line) and the lowest first and highest
 * third quartile (the band). */
struct col { int x, ymed, yq1, yq3; };

static double median_of(double *v, size_t n)
{
	for (size_t i = 1; i < n; i++)   /* a column holds a few commits */
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define PW (W - ML - MR)
#define COLW 2          /* pixels a drawn column spans when commits outnumber them */

static void chart(struct ctx *c, const struct series *x, struct kg_buf *b, int hover_all,
		  size_t idx)
{
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < x->npt; i++) {
		if (x->pt[i].q1 < lo) lo = x->pt[i].q1;
		if (x->pt[i].q3 > hi) hi = x->pt[i].q3;
		if (x->pt[i].med < lo) lo = x->pt[i].med;
		if (x->pt[i].med > hi) hi = x->pt[i].med;
	}
	if (!(hi > lo)) {
		double d = fabs(lo) * 0.01 + (lo == 0 ? 1 : 0);
		lo -= d;
		hi += d;
	}
	double pad = (hi - lo) * 0.08;
	lo -= pad;
	hi += pad;
	double span = c->nruns > 1 ? (double)(c->nruns - 1) : 1;
#define XOF(pos) (c->nruns > 1 ? (double)(pos) / span * PW : PW / 2.0)
#define YOF(v) (MT + (int)lround((hi - (v)) / (hi - lo) * (H - MT - MB)))
#define COLUMN(pos) ((int)(XOF(pos) / COLW) < PW / COLW ? (int)(XOF(pos) / COLW) : PW / COLW - 1)
	/* columns: one per commit, or, with more commits than PW / COLW, one
	 * per COLW pixels, never across a change point */
	int aggregate = x->npt > PW / COLW;
	struct col *col = xmalloc((x->npt ? x->npt : 1) * sizeof *col);
	double *tmp = xmalloc((x->npt ? x->npt : 1) * sizeof *tmp);
	size_t ncol = 0, k = 0;
	for (size_t i = 0; i < x->npt;) {
		size_t j = i + 1;
		int ci = COLUMN(x->pt[i].pos);
		while (k < x->ncp && x->cp[k].at <= i)
			k++;
		size_t stop = k < x->ncp ? x->cp[k].at : x->npt;
		if (aggregate)
			while (j < stop && COLUMN(x->pt[j].pos) == ci)
				j++;
		double q1 = INFINITY, q3 = -INFINITY;
		for (size_t t = i; t < j; t++) {
			tmp[t - i] = x->pt[t].med;
			if (x->pt[t].q1 < q1) q1 = x->pt[t].q1;
			if (x->pt[t].q3 > q3) q3 = x->pt[t].q3;
		}
		double med = median_of(tmp, j - i);
		int px = aggregate ? ci * COLW + COLW / 2 : (int)lround(XOF(x->pt[i].pos));
		col[ncol++] = (struct col){ ML + px, YOF(med), YOF(q1), YOF(q3) };
		i = j;
	}
	free(tmp);
	const char *metric = name_of(&c->metric, x->metric);
	const char *unit = unit_of(c, x->metric);
	buf_printf(b, "<figure class=\"chart\" id=\"s%zu\" data-points=\"%zu\" data-change-points=\"%zu\"",
		   idx, x->npt, x->ncp);
	if (aggregate)
		buf_printf(b, " data-columns=\"%zu\"", ncol);
	buf_adds(b, " data-metric=\"");
	escape_html(b, metric);
	buf_adds(b, "\"><figcaption><b>");
	escape_html(b, kernel_label(c, x->kernel));
	buf_adds(b, "</b> · ");
	escape_html(b, metric);
	if (*unit) {
		buf_adds(b, " (");
		escape_html(b, unit);
		buf_adds(b, ")");
	}
	const char *nv = name_of(&c->nvtx, x->nvtx);
	if (*nv && strcmp(nv, "?")) {
		buf_adds(b, " · NVTX ");
		escape_html(b, nv);
	}
	if (c->ngpus > 1 && *c->gpus[x->gpu]) {
		buf_adds(b, " · ");
		escape_html(b, c->gpus[x->gpu]);
	}
	if (aggregate)
		buf_printf(b, " · %zu commits in %zu columns", x->npt, ncol);
	buf_printf(b, "</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
		   " viewBox=\"0 0 %d %d\" role=\"img\">", W, H, W, H);
	buf_printf(b, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", ML, MT,
		   PW, H - MT - MB);
	/* enough digits that the two axis labels differ */
	int prec = 4;
	char lhi[48], llo[48];
	do {
		fmt_axis(lhi, sizeof lhi, hi, unit, prec);
		fmt_axis(llo, sizeof llo, lo, unit, prec);
	} while (!strcmp(lhi, llo) && ++prec < 12);
	buf_printf(b, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", ML - 4, MT + 10);
	escape_html(b, lhi);
	buf_printf(b, "</text><text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", ML - 4, H - MB);
	escape_html(b, llo);
	buf_adds(b, "</text>");
	char sha[16];
	short_sha(sha, c->runs[x->pt[0].pos].commit);
	buf_printf(b, "<text class=\"ax\" x=\"%d\" y=\"%d\">", ML, H - MB + 16);
	escape_html(b, sha);
	buf_adds(b, "</text>");
	short_sha(sha, c->runs[x->pt[x->npt - 1].pos].commit);
	buf_printf(b, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", W - MR, H - MB + 16);
	escape_html(b, sha);
	buf_adds(b, "</text>");
	/* the spread band, then the median line */
	int *xs = xmalloc(ncol * sizeof *xs), *ys = xmalloc(ncol * sizeof *ys);
	for (size_t i = 0; i < ncol; i++) {
		xs[i] = col[i].x;
		ys[i] = col[i].yq3;
	}
	buf_adds(b, "<path class=\"band\" d=\"");
	path_rel(b, xs, ys, ncol, 1);
	for (size_t i = 0; i < ncol; i++) {
		xs[i] = col[ncol - 1 - i].x;
		ys[i] = col[ncol - 1 - i].yq1;
	}
	path_rel(b, xs, ys, ncol, 0);
	buf_adds(b, "Z\"/><path class=\"median\" d=\"");
	for (size_t i = 0; i < ncol; i++) {
		xs[i] = col[i].x;
		ys[i] = col[i].ymed;
	}
	path_rel(b, xs, ys, ncol, 1);
	buf_adds(b, "\"/>");
	free(xs);
	free(ys);
	free(col);
	for (size_t k2 = 0; k2 < x->ncp; k2++) {
		const struct cp_result *r = &x->cp[k2];
		int cx = ML + (int)lround((XOF(x->pt[r->at - 1].pos) + XOF(x->pt[r->at].pos)) / 2);
		short_sha(sha, c->runs[x->pt[r->at].pos].commit);
		buf_printf(b, "<line class=\"cp\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"><title>change point at ",
			   cx, MT, cx, H - MB);
		escape_html(b, sha);
		buf_printf(b, ": %.6g → %.6g (%+.2f%%), p = %.3g</title></line>", r->before, r->after,
			   100 * r->shift, r->p);
	}
	/* hover marks: every commit while the report is small and the chart
	 * not aggregated; else the change points and the newest commit */
	size_t k3 = 0;
	for (size_t i = 0; i < x->npt; i++) {
		while (k3 < x->ncp && x->cp[k3].at < i)
			k3++;
		int is_cp = k3 < x->ncp && x->cp[k3].at == i;
		if ((!hover_all || aggregate) && !is_cp && i + 1 != x->npt)
			continue;
		const struct point *p = &x->pt[i];
		const struct run *r = &c->runs[p->pos];
		char date[32];
		fmt_date(date, sizeof date, r->time);
		short_sha(sha, r->commit);
		buf_printf(b, "<circle class=\"pt%s\" cx=\"%d\" cy=\"%d\" r=\"3\"><title>", is_cp ? " cpt" : "",
			   ML + (int)lround(XOF(p->pos)), YOF(p->med));
		escape_html(b, sha);
		buf_printf(b, " (%s): median %.6g, IQR %.6g–%.6g, range %.6g–%.6g, n = %u</title></circle>",
			   date, p->med, p->q1, p->q3, p->lo, p->hi, p->n);
	}
#undef XOF
#undef YOF
#undef COLUMN
	buf_adds(b, "</svg></figure>\n");
}

/* ---------------------------------------------------------------- roofline */

struct roof_pt { const struct series *any; double ai, gflops; };

static double series_last(const struct series *x, uint32_t pos, int *ok)
{
	if (x->npt && x->pt[x->npt - 1].pos == pos) {
		*ok = 1;
		return x->pt[x->npt - 1].med;
	}
	return 0;
}

static double time_scale(const char *unit)
{
	if (!strcmp(unit, "s") || !strcmp(unit, "second")) return 1;
	if (!strcmp(unit, "ms") || !strcmp(unit, "msecond")) return 1e-3;
	if (!strcmp(unit, "us") || !strcmp(unit, "usecond")) return 1e-6;
	return 1e-9;
}

static size_t roofline(struct ctx *c, struct kg_buf *b)
{
	static const struct { const char *name; double w; } flop_metrics[] = {
		{ "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 2 },
		{ "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 1 },
		{ "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 1 },
		{ "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", 2 },
		{ "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", 1 },
		{ "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", 1 },
		{ "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", 2 },
		{ "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", 1 },
		{ "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum", 1 },
	};
	struct roof_pt *pts = NULL;
	size_t np = 0;
	for (size_t i = 0; i < c->ns;) {
		size_t j = i;
		while (j < c->ns && c->s[j].gpu == c->s[i].gpu && c->s[j].bench == c->s[i].bench &&
		       c->s[j].nvtx == c->s[i].nvtx && c->s[j].kernel == c->s[i].kernel)
			j++;
		uint32_t last = 0;
		for (size_t k = i; k < j; k++)
			if (c->s[k].npt && c->s[k].pt[c->s[k].npt - 1].pos > last)
				last = c->s[k].pt[c->s[k].npt - 1].pos;
		double t = 0, bytes = 0, flops = 0;
		int have_t = 0, have_b = 0, have_f = 0;
		for (size_t k = i; k < j; k++) {
			const char *m = name_of(&c->metric, c->s[k].metric);
			int ok = 0;
			double v = series_last(&c->s[k], last, &ok);
			if (!ok)
				continue;
			if (!strcmp(m, "gpu__time_duration.sum")) {
				t = v * time_scale(unit_of(c, c->s[k].metric));
				have_t = 1;
			} else if (!strcmp(m, "dram__bytes_read.sum") || !strcmp(m, "dram__bytes_write.sum")) {
				bytes += v;
				have_b = 1;
			} else {
				for (size_t f = 0; f < sizeof flop_metrics / sizeof flop_metrics[0]; f++)
					if (!strcmp(m, flop_metrics[f].name)) {
						flops += flop_metrics[f].w * v;
						have_f = 1;
					}
			}
		}
		if (have_t && have_b && have_f && t > 0 && bytes > 0 && flops > 0) {
			pts = xrealloc(pts, (np + 1) * sizeof *pts);
			pts[np++] = (struct roof_pt){ &c->s[i], flops / bytes, flops / t / 1e9 };
		}
		i = j;
	}
	buf_adds(b, "<h2 id=\"roofline\">Roofline</h2>\n");
	if (!np) {
		buf_adds(b, "<p class=\"note\" id=\"no-roofline\">No run in this report has both FLOP counts"
			    " (<code>smsp__sass_thread_inst_executed_op_*_pred_on.sum</code>) and DRAM byte counts"
			    " (<code>dram__bytes_read.sum</code>, <code>dram__bytes_write.sum</code>) with"
			    " <code>gpu__time_duration.sum</code>; collect them in metrics mode to see this chart.</p>\n");
		return 0;
	}
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
	for (size_t i = 0; i < np; i++) {
		if (pts[i].ai < xlo) xlo = pts[i].ai;
		if (pts[i].ai > xhi) xhi = pts[i].ai;
		if (pts[i].gflops < ylo) ylo = pts[i].gflops;
		if (pts[i].gflops > yhi) yhi = pts[i].gflops;
	}
	if (c->o->peak_gflops > 0 && c->o->peak_gflops > yhi)
		yhi = c->o->peak_gflops;
	double lx0 = floor(log10(xlo)) - 0.5, lx1 = ceil(log10(xhi)) + 0.5;
	double ly0 = floor(log10(ylo)) - 0.5, ly1 = ceil(log10(yhi)) + 0.5;
	const int w = 640, h = 360, l = 72, r = 16, t = 12, bm = 40;
#define RX(v) (l + (int)lround((log10(v) - lx0) / (lx1 - lx0) * (w - l - r)))
#define RY(v) (t + (int)lround((ly1 - log10(v)) / (ly1 - ly0) * (h - t - bm)))
	buf_printf(b, "<figure class=\"roofline\" data-points=\"%zu\"><figcaption>Arithmetic intensity"
		   " (FLOP per DRAM byte) against achieved GFLOP/s, newest run of each kernel, log scales%s</figcaption>"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">",
		   np, c->o->peak_gflops > 0 && c->o->peak_gbs > 0 ? "; roofs from the given peaks" : "",
		   w, h, w, h);
	buf_printf(b, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", l, t,
		   w - l - r, h - t - bm);
	for (double e = ceil(lx0); e <= lx1; e++)
		buf_printf(b, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">1e%d</text>",
			   RX(pow(10, e)), h - bm + 16, (int)e);
	for (double e = ceil(ly0); e <= ly1; e++)
		buf_printf(b, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"end\">1e%d</text>", l - 4,
			   RY(pow(10, e)) + 4, (int)e);
	buf_printf(b, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">FLOP/byte</text>",
		   (w + l) / 2, h - 6);
	if (c->o->peak_gflops > 0 && c->o->peak_gbs > 0) {
		double ridge = c->o->peak_gflops / c->o->peak_gbs;
		double x0 = pow(10, lx0), x1 = pow(10, lx1);
		buf_printf(b, "<path class=\"roof\" d=\"M%d %dL%d %dL%d %d\"><title>peaks: %.6g GFLOP/s,"
			   " %.6g GB/s</title></path>", RX(x0), RY(x0 * c->o->peak_gbs), RX(ridge),
			   RY(c->o->peak_gflops), RX(x1), RY(c->o->peak_gflops), c->o->peak_gflops,
			   c->o->peak_gbs);
	}
	for (size_t i = 0; i < np; i++) {
		buf_printf(b, "<circle class=\"rp\" cx=\"%d\" cy=\"%d\" r=\"4\"><title>", RX(pts[i].ai),
			   RY(pts[i].gflops));
		escape_html(b, name_of(&c->bench, pts[i].any->bench));
		buf_adds(b, ": ");
		escape_html(b, kernel_label(c, pts[i].any->kernel));
		buf_printf(b, ": %.4g FLOP/byte, %.4g GFLOP/s</title></circle>", pts[i].ai, pts[i].gflops);
	}
#undef RX
#undef RY
	buf_adds(b, "</svg></figure>\n");
	free(pts);
	return np;
}

/* ---------------------------------------------------------------- page */

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}"
	"h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 6px;"
	"text-align:left;vertical-align:top}th{background:#f4f4f4}"
	".fail{color:#b00020;font-weight:bold}.inconclusive,.missing{color:#a05a00}.pass{color:#1b7a2b}"
	"figure.chart{display:inline-block;margin:6px;vertical-align:top}figcaption{font-size:12px;"
	"max-width:640px;overflow-wrap:anywhere}svg{background:#fff}"
	".frame{fill:none;stroke:#bbb}.band{fill:#9ecae1;fill-opacity:.45;stroke:none}"
	".median{fill:none;stroke:#08519c;stroke-width:1.5}.pt{fill:#08519c}.cpt{fill:#d62728}"
	".cp{stroke:#d62728;stroke-dasharray:4 3;stroke-width:1.5}.ax{font-size:11px;fill:#555}"
	".rp{fill:#d62728;fill-opacity:.8}.roof{fill:none;stroke:#333;stroke-width:1.5}"
	".note{color:#555}code{font-size:12px}h3{font-size:15px}.why{font-weight:600}"
	"tr.fires td{background:#fdecea}";

static void html_verdicts(struct ctx *c, struct kg_buf *b, struct report_summary *sum)
{
	buf_adds(b, "<h2 id=\"verdicts\">Newest verdicts</h2>\n");
	struct report_check chk;
	struct kg_check_filter f = { .branch = c->o->branch, .since = c->o->since };
	int rc = load_newest(c->st, &f, &chk);
	if (rc != 0) {
		buf_adds(b, "<p class=\"note\">No check is stored for these runs.</p>\n");
		if (rc == 0 || rc == 1)
			return;
		return;
	}
	char sha[16], date[32];
	short_sha(sha, chk.commit);
	fmt_date(date, sizeof date, chk.time);
	buf_adds(b, "<p>Commit <code>");
	escape_html(b, sha);
	buf_adds(b, "</code> against ");
	escape_html(b, chk.baseline ? chk.baseline : "(none)");
	const struct kg_outcome *oc = &chk.outcome;
	buf_printf(b, ", checked %s: <span class=\"%s\">%s</span>: %zu fail, %zu missing, %zu inconclusive,"
		   " %zu new, %zu pass.</p>\n", date, verdict_key(oc->verdict), verdict_name(oc->verdict),
		   oc->n_fail, oc->n_missing, oc->n_inconclusive, oc->n_new, oc->n_pass);
	if (oc->verdict == KG_VERDICT_NO_BASELINE) {
		buf_adds(b, "<p>No baseline: ");
		escape_html(b, oc->note ? oc->note : "nothing to compare with");
		buf_adds(b, ".</p>\n");
	}
	if (oc->not_compared) {
		buf_adds(b, "<p>Not compared: ");
		escape_html(b, oc->not_compared);
		buf_adds(b, ".</p>\n");
	}
	sum->check_verdict = oc->verdict;
	sum->check_exit = oc->exit_status;
	sum->check_failing = oc->n_failing;
	sum->has_check = 1;
	const struct report_verdict **ord = xmalloc((chk.n + 1) * sizeof *ord);
	for (size_t i = 0; i < chk.n; i++)
		ord[i] = &chk.v[i];
	qsort(ord, chk.n, sizeof *ord, cmp_verdict);
	buf_adds(b, "<table class=\"verdicts\"><tr><th>verdict</th><th>benchmark</th><th>kernel</th>"
		    "<th>NVTX</th><th>metric</th><th>change</th><th>interval</th><th>p</th>"
		    "<th>baseline</th><th>head</th><th>note</th></tr>\n");
	for (size_t i = 0; i < chk.n; i++) {
		const struct report_verdict *v = ord[i];
		char s1[32], s2[32], s3[32], p[32], bv[32], hv[32];
		fmt_pct(s1, sizeof s1, v->shift);
		fmt_pct(s2, sizeof s2, v->lo);
		fmt_pct(s3, sizeof s3, v->hi);
		fmt_num(p, sizeof p, v->p);
		fmt_num(bv, sizeof bv, v->base_value);
		fmt_num(hv, sizeof hv, v->head_value);
		buf_adds(b, "<tr><td class=\"");
		escape_html(b, v->verdict);
		buf_adds(b, "\">");
		escape_html(b, v->verdict);
		buf_adds(b, "</td><td>");
		escape_html(b, v->benchmark);
		buf_adds(b, "</td><td>");
		escape_html(b, v->demangled ? v->demangled : v->kernel);
		buf_adds(b, "</td><td>");
		escape_html(b, v->nvtx);
		buf_adds(b, "</td><td>");
		escape_html(b, v->metric);
		buf_printf(b, "</td><td>%s</td><td>%s … %s</td><td>%s</td><td>%s</td><td>%s</td><td>",
			   s1, s2, s3, p, bv, hv);
		escape_html(b, v->message);
		buf_adds(b, "</td></tr>\n");
	}
	buf_adds(b, "</table>\n");
	free(ord);
	for (size_t i = 0; i < chk.n_why; i++) {
		const struct kg_explanation *x = &chk.why[i];
		buf_adds(b, i ? "" : "<h3>Why</h3>\n");
		buf_adds(b, "<p class=\"why\">");
		escape_html(b, x->benchmark);
		if (*x->nvtx) {
			buf_adds(b, " [");
			escape_html(b, x->nvtx);
			buf_adds(b, "]");
		}
		buf_adds(b, ": ");
		escape_html(b, x->why);
		buf_adds(b, "</p>\n<details><summary>rules and counters</summary>\n");
		explain_render(x, KG_EXPLAIN_HTML, b);
		buf_adds(b, "</details>\n");
	}
	report_check_free(&chk);
}

struct cp_ref { const struct series *x; const struct cp_result *r; double worse; };

static int cmp_cpref(const void *a, const void *b)
{
	const struct cp_ref *x = a, *y = b;
	return (y->worse > x->worse) - (y->worse < x->worse);
}

static void page_head(struct kg_buf *b, const struct report_opts *o, const char *sub,
		      size_t nruns, size_t ns)
{
	buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		    "<meta name=\"generator\" content=\"kgate " KGATE_VERSION "\"><title>kgate trend report");
	if (o->branch) {
		buf_adds(b, ": ");
		escape_html(b, o->branch);
	}
	if (sub) {
		buf_adds(b, " · ");
		escape_html(b, sub);
	}
	buf_printf(b, "</title><style>%s</style></head>\n<body data-kgate-report=\"1\" data-runs=\"%zu\""
		   " data-series=\"%zu\">\n<h1>kgate trend report", css, nruns, ns);
	if (o->branch) {
		buf_adds(b, ": branch ");
		escape_html(b, o->branch);
	}
	buf_adds(b, "</h1>\n");
}

static const char page_foot[] = "<p class=\"note\">Made by kgate " KGATE_VERSION ".</p>\n</body></html>\n";

/* The file name of chart page k (directory form). */
static void page_name(char *out, size_t n, size_t k)
{
	snprintf(out, n, "p%zu.html", k);
}

/* Directory form: the series go to pages of about max_charts charts, a
 * benchmark's kernels in order, a kernel's charts never split; returns the
 * number of pages. */
static size_t assign_pages(struct ctx *c, size_t max_charts)
{
	size_t page = 0, on_page = 0;
	for (size_t i = 0; i < c->ns;) {
		size_t j = i;
		while (j < c->ns && c->s[j].gpu == c->s[i].gpu && c->s[j].bench == c->s[i].bench &&
		       c->s[j].nvtx == c->s[i].nvtx && c->s[j].kernel == c->s[i].kernel)
			j++;
		int new_bench = i == 0 || c->s[i].bench != c->s[i - 1].bench;
		if (i == 0 || new_bench || on_page + (j - i) > max_charts) {
			page++;
			on_page = 0;
		}
		for (size_t k = i; k < j; k++)
			c->s[k].page = page;
		on_page += j - i;
		i = j;
	}
	return page;
}

/* The charts of series [i, j), one section per benchmark; a hover mark on
 * every commit while they hold at most max_hover points. */
static void html_charts(struct ctx *c, struct kg_buf *b, size_t i0, size_t j0)
{
	size_t points = 0;
	for (size_t i = i0; i < j0; i++)
		points += c->s[i].npt;
	int hover_all = points <= c->o->max_hover;
	for (size_t i = i0; i < j0;) {
		size_t j = i;
		while (j < j0 && c->s[j].bench == c->s[i].bench)
			j++;
		buf_printf(b, "<section class=\"benchmark\" data-charts=\"%zu\"><h2>Benchmark ", j - i);
		escape_html(b, name_of(&c->bench, c->s[i].bench));
		buf_adds(b, "</h2>\n");
		for (size_t k = i; k < j; k++)
			chart(c, &c->s[k], b, hover_all, k);
		buf_adds(b, "</section>\n");
		i = j;
	}
}

static void page_add(struct report_page **pages, size_t *n, const char *name, struct kg_buf *b)
{
	*pages = xrealloc(*pages, (*n + 1) * sizeof **pages);
	(*pages)[*n].name = xstrdup(name);
	(*pages)[*n].len = b->len;
	(*pages)[*n].html = buf_detach(b);
	if (!(*pages)[*n].html)
		(*pages)[*n].html = xstrdup("");
	(*n)++;
}

void report_pages_free(struct report_page *pages, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(pages[i].name);
		free(pages[i].html);
	}
	free(pages);
}

int report_pages(struct kg_store *st, const struct report_opts *o, size_t max_charts,
		 struct report_page **pages, size_t *npages, struct report_summary *sum)
{
	memset(sum, 0, sizeof *sum);
	*pages = NULL;
	*npages = 0;
	struct ctx c;
	memset(&c, 0, sizeof c);
	c.st = st;
	c.o = o;
	c.pages = max_charts > 0;
	int ret = KG_EXIT_RUNTIME;
	struct kg_buf b = KG_BUF_INIT;
	struct cp_ref *cps = NULL;
	size_t ncps = 0, nchart_pages = 0;
	if (load_runs(&c) || load_names(st, KG_NAMES_BENCHMARK, &c.bench) ||
	    load_names(st, KG_NAMES_NVTX, &c.nvtx) || load_names(st, KG_NAMES_KERNEL, &c.kernel) ||
	    load_names(st, KG_NAMES_METRIC, &c.metric) || load_samples(&c))
		goto out;
	for (size_t i = 0; i < c.ns; i++) {
		build_points(&c, &c.s[i]);
		sum->points += c.s[i].npt;
	}
	sort_ctx = &c;
	if (c.ns)   /* c.s is NULL when there is no series; qsort's is nonnull */
		qsort(c.s, c.ns, sizeof *c.s, cmp_series);
	if (c.pages)
		nchart_pages = assign_pages(&c, max_charts);
	sum->runs = c.nruns;
	sum->series = c.ns;

	char d0[32] = "", d1[32] = "";
	if (c.nruns) {
		fmt_date(d0, sizeof d0, c.runs[0].time);
		fmt_date(d1, sizeof d1, c.runs[c.nruns - 1].time);
	}
	page_head(&b, o, NULL, c.nruns, c.ns);
	if (!c.nruns) {
		buf_adds(&b, "<p id=\"empty\">No runs match.</p>\n");
	} else {
		buf_printf(&b, "<p>%zu run%s from %s to %s; %zu series (benchmark, NVTX path, kernel,"
			   " metric). Each chart: the median of each commit's values (line), their"
			   " interquartile range (band), and change points (dashed red lines) found by"
			   " binary segmentation with a rank statistic and a permutation test (p &le; %.3g,"
			   " change of the median &ge; %.3g%%). A chart of more commits than it has"
			   " pixels for draws a column per %d pixels, never across a change point: the"
			   " median of its commits' medians, and from the lowest first to the highest"
			   " third quartile among them. Hover over a point for its commit; in charts"
			   " drawn in columns and on pages of more than %zu points, only the change"
			   " points and each chart's newest commit have a hover mark.</p>\n",
			   c.nruns, c.nruns == 1 ? "" : "s", d0, d1, c.ns, o->cp.alpha,
			   100 * o->cp.min_shift, COLW, o->max_hover);
	}
	html_verdicts(&c, &b, sum);

	/* change points, newest first */
	for (size_t i = 0; i < c.ns; i++)
		ncps += c.s[i].ncp;
	cps = xmalloc((ncps + 1) * sizeof *cps);
	ncps = 0;
	int64_t newest = c.nruns ? c.runs[c.nruns - 1].time : 0;
	for (size_t i = 0; i < c.ns; i++)
		for (size_t k = 0; k < c.s[i].ncp; k++) {
			const struct cp_result *r = &c.s[i].cp[k];
			int dir = metric_worse_sign(metric_better(name_of(&c.metric, c.s[i].metric)));
			double sh = isnan(r->shift) ? 0 : r->shift;
			cps[ncps++] = (struct cp_ref){ &c.s[i], r, dir ? dir * sh : fabs(sh) };
			if (c.runs[c.s[i].pt[r->at].pos].time >= newest - o->new_within)
				sum->new_change_points++;
		}
	sum->change_points = ncps;
	buf_printf(&b, "<h2 id=\"change-points\">Change points (%zu)</h2>\n", ncps);
	if (ncps) {
		buf_adds(&b, "<table class=\"change-points\"><tr><th>benchmark</th><th>kernel</th>"
			     "<th>NVTX</th><th>metric</th><th>commit</th><th>date</th><th>before</th>"
			     "<th>after</th><th>change</th><th>p</th></tr>\n");
		for (size_t i = 0; i < ncps; i++) {
			const struct series *x = cps[i].x;
			const struct cp_result *r = cps[i].r;
			const struct run *run = &c.runs[x->pt[r->at].pos];
			char date[32], sh[32], pn[32] = "";
			fmt_date(date, sizeof date, run->time);
			fmt_pct(sh, sizeof sh, r->shift);
			if (c.pages)
				page_name(pn, sizeof pn, x->page);
			buf_printf(&b, "<tr><td>");
			escape_html(&b, name_of(&c.bench, x->bench));
			buf_printf(&b, "</td><td><a href=\"%s#s%zu\">", pn, (size_t)(x - c.s));
			escape_html(&b, kernel_label(&c, x->kernel));
			buf_adds(&b, "</a></td><td>");
			escape_html(&b, name_of(&c.nvtx, x->nvtx));
			buf_adds(&b, "</td><td>");
			escape_html(&b, name_of(&c.metric, x->metric));
			char ssha[16];
			short_sha(ssha, run->commit);
			buf_adds(&b, "</td><td><code title=\"");
			escape_html(&b, run->commit);
			buf_adds(&b, "\">");
			escape_html(&b, ssha);
			buf_printf(&b, "</code></td><td>%s</td><td>%.6g</td><td>%.6g</td><td>%s</td>"
				   "<td>%.3g</td></tr>\n", date, r->before, r->after, sh, r->p);
		}
		buf_adds(&b, "</table>\n");
	} else {
		buf_adds(&b, "<p class=\"note\">No change point found.</p>\n");
	}
	sum->roofline_points = roofline(&c, &b);

	if (!c.pages) {
		html_charts(&c, &b, 0, c.ns);
		buf_adds(&b, page_foot);
		page_add(pages, npages, "index.html", &b);
	} else {
		/* the index lists the chart pages; each page draws its charts */
		buf_adds(&b, "<h2 id=\"charts\">Charts</h2>\n<table class=\"pages\"><tr><th>page</th>"
			     "<th>benchmark</th><th>kernels</th><th>charts</th><th>change points</th></tr>\n");
		struct kg_buf pg = KG_BUF_INIT;
		struct report_page *cp_pages = NULL;
		size_t ncp_pages = 0;
		for (size_t i = 0; i < c.ns;) {
			size_t j = i, nk = 0, ncp = 0;
			for (; j < c.ns && c.s[j].page == c.s[i].page; j++) {
				ncp += c.s[j].ncp;
				nk += j == i || c.s[j].kernel != c.s[j - 1].kernel ||
				      c.s[j].nvtx != c.s[j - 1].nvtx || c.s[j].gpu != c.s[j - 1].gpu;
			}
			char pn[32];
			page_name(pn, sizeof pn, c.s[i].page);
			const char *bn = name_of(&c.bench, c.s[i].bench);
			buf_printf(&b, "<tr><td><a href=\"%s\">%s</a></td><td>", pn, pn);
			escape_html(&b, bn);
			buf_adds(&b, "</td><td>");
			escape_html(&b, kernel_label(&c, c.s[i].kernel));
			if (nk > 1) {
				buf_adds(&b, " … ");
				escape_html(&b, kernel_label(&c, c.s[j - 1].kernel));
			}
			buf_printf(&b, " (%zu)</td><td>%zu</td><td>%zu</td></tr>\n", nk, j - i, ncp);
			char sub[64];
			snprintf(sub, sizeof sub, "page %zu of %zu", c.s[i].page, nchart_pages);
			page_head(&pg, o, sub, c.nruns, j - i);
			buf_printf(&pg, "<p><a href=\"index.html\">The report's index</a> (verdicts, change"
				   " points, roofline, every page). This is page %zu of %zu: %zu charts of",
				   c.s[i].page, nchart_pages, j - i);
			buf_adds(&pg, " benchmark ");
			escape_html(&pg, bn);
			buf_printf(&pg, ", %zu run%s from %s to %s.", c.nruns, c.nruns == 1 ? "" : "s", d0, d1);
			if (c.s[i].page > 1) {
				char prev[32];
				page_name(prev, sizeof prev, c.s[i].page - 1);
				buf_printf(&pg, " <a href=\"%s\">Previous page</a>.", prev);
			}
			if (c.s[i].page < nchart_pages) {
				char next[32];
				page_name(next, sizeof next, c.s[i].page + 1);
				buf_printf(&pg, " <a href=\"%s\">Next page</a>.", next);
			}
			buf_adds(&pg, "</p>\n");
			html_charts(&c, &pg, i, j);
			buf_adds(&pg, page_foot);
			page_add(&cp_pages, &ncp_pages, pn, &pg);
			i = j;
		}
		buf_adds(&b, "</table>\n");
		buf_adds(&b, page_foot);
		page_add(pages, npages, "index.html", &b);
		*pages = xrealloc(*pages, (1 + ncp_pages) * sizeof **pages);
		if (ncp_pages)
			memcpy(*pages + 1, cp_pages, ncp_pages * sizeof *cp_pages);
		*npages += ncp_pages;
		free(cp_pages);
	}

	/* the summary */
	struct kg_buf t = KG_BUF_INIT;
	buf_adds(&t, "*kgate trend report*");
	if (o->branch) {
		buf_adds(&t, " for `");
		escape_slack(&t, o->branch);
		buf_adds(&t, "`");
	}
	buf_printf(&t, ": %zu runs, %zu series", c.nruns, c.ns);
	if (c.nruns)
		buf_printf(&t, " (%s to %s)", d0, d1);
	buf_printf(&t, ".\n%zu change point%s, %zu new in the last %lld days.\n", ncps,
		   ncps == 1 ? "" : "s", sum->new_change_points, (long long)(o->new_within / 86400));
	qsort(cps, ncps, sizeof *cps, cmp_cpref);
	size_t shown = 0;
	for (size_t i = 0; i < ncps && shown < 5; i++) {
		if (cps[i].worse <= 0)
			break;
		if (!shown++)
			buf_adds(&t, "Worst regressions:\n");
		const struct series *x = cps[i].x;
		char sha[16];
		short_sha(sha, c.runs[x->pt[cps[i].r->at].pos].commit);
		const char *full = c.runs[x->pt[cps[i].r->at].pos].commit;
		char *url = github_commit_url(full);
		buf_adds(&t, "• ");
		escape_slack(&t, name_of(&c.bench, x->bench));
		if (*name_of(&c.nvtx, x->nvtx)) {
			buf_adds(&t, " [");
			escape_slack(&t, name_of(&c.nvtx, x->nvtx));
			buf_adds(&t, "]");
		}
		buf_adds(&t, " / ");
		escape_slack(&t, kernel_label(&c, x->kernel));
		buf_adds(&t, " / ");
		escape_slack(&t, name_of(&c.metric, x->metric));
		struct kg_buf vb = KG_BUF_INIT, va = KG_BUF_INIT;
		metric_format_value(&vb, cps[i].r->before, unit_of(&c, x->metric));
		metric_format_value(&va, cps[i].r->after, unit_of(&c, x->metric));
		buf_adds(&t, ": ");
		escape_slack(&t, vb.s);
		buf_adds(&t, " \xE2\x86\x92 ");
		escape_slack(&t, va.s);
		buf_printf(&t, " (%+.1f%%) at ", 100 * cps[i].r->shift);
		buf_free(&vb);
		buf_free(&va);
		if (url) {
			buf_printf(&t, "<%s|", url);
			escape_slack(&t, sha);
			buf_adds(&t, ">\n");
		} else {
			buf_adds(&t, "`");
			escape_slack(&t, sha);
			buf_adds(&t, "`\n");
		}
		free(url);
	}
	if (sum->has_check)
		buf_printf(&t, "Newest check: %s%s (%zu failing, exit status %d).\n",
			   verdict_name(sum->check_verdict),
			   sum->check_verdict == KG_VERDICT_NO_BASELINE ? ", nothing compared" : "",
			   sum->check_failing, sum->check_exit);
	if (o->link)
		buf_printf(&t, "<%s|Open the report>\n", o->link);
	sum->text = buf_detach(&t);
	if (!sum->text)
		sum->text = xstrdup("");
	ret = KG_EXIT_PASS;
out:
	buf_free(&b);
	free(cps);
	for (size_t i = 0; i < c.ns; i++) {
		free(c.s[i].cur);
		free(c.s[i].pt);
		free(c.s[i].cp);
	}
	free(c.s);
	free(c.slot);
	for (size_t i = 0; i < c.nruns; i++)
		free(c.runs[i].commit);
	free(c.runs);
	free(c.by_id);
	for (size_t i = 0; i < c.ngpus; i++)
		free(c.gpus[i]);
	free(c.gpus);
	free_names(&c.bench);
	free_names(&c.nvtx);
	free_names(&c.kernel);
	free_names(&c.metric);
	if (ret != KG_EXIT_PASS) {
		report_pages_free(*pages, *npages);
		*pages = NULL;
		*npages = 0;
	}
	return ret;
}

int report_html(struct kg_store *st, const struct report_opts *o, char **html, size_t *len,
		struct report_summary *sum)
{
	struct report_page *pages;
	size_t n;
	int rc = report_pages(st, o, 0, &pages, &n, sum);
	if (rc != KG_EXIT_PASS)
		return rc;
	*html = pages[0].html;
	*len = pages[0].len;
	pages[0].html = NULL;
	report_pages_free(pages, n);
	return rc;
}
