/*
 * report.c: the Markdown verdict table of a stored check and the nightly
 * HTML trend report (see kgate/report.h).
 *
 * Owns the grouping of each run's points into series (the points the store
 * keeps per run, or for a run without them its samples, reduced as they
 * stream by), the SVG drawing and the summary text.
 * Change points come from changepoint.c, run on each series' per-commit
 * medians.
 */
#include "kgate/check.h"
#include "kgate/escape.h"
#include "kgate/output.h"
#include "kgate/report.h"
#include "kgate/config.h"
#include "kgate/github.h"
#include "kgate/gpustate.h"
#include "kgate/kgate.h"
#include "kgate/metric.h"
#include "kgate/points.h"
#include "kgate/verdict.h"
#include "report_js.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

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
	verdict_outcome_count(&c->outcome, vd, v->fails);
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

/* "benchmark [NVTX range]" through esc, the range only when there is one. */
static void bench_label(struct kg_buf *b, void (*esc)(struct kg_buf *, const char *),
			const char *bench, const char *nvtx)
{
	esc(b, bench);
	if (nvtx && *nvtx) {
		buf_adds(b, " [");
		esc(b, nvtx);
		buf_adds(b, "]");
	}
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
	bench_label(b, escape_markdown, v->benchmark, v->nvtx);
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
	output_outcome_notes(b, o, 0);
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
		bench_label(b, escape_markdown, c->why[k].benchmark, c->why[k].nvtx);
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
	changepoint_defaults(&o->cp);
}

void report_summary_free(struct report_summary *s)
{
	free(s->text);
	memset(s, 0, sizeof *s);
}

struct run {
	int64_t id;
	char *commit;
	int64_t time;
	int gpu;
	int gpu_recorded;       /* a GPU state is stored with it */
	char *gpu_note;         /* what its GPU states worry about; NULL: nothing */
};
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
	size_t page;            /* the page that draws it (directory form); 0: none */
	int varying;            /* its commits' medians are not all the same: charted */
	double limit;           /* the gate's relative limit for it (thresholds); 0: none */
	double level;           /* the median of its medians after its last change point */
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
	const struct kg_thresholds *thr;
	struct { char *bench, *line, *worry; } *gpu_last; /* the newest run's GPU states */
	size_t ngpu_last;
	char nonce[32];         /* the script's, in the pages' Content-Security-Policy */
	struct kg_buf attrs;    /* the body's data attributes of the runs (run_attrs) */
};

/* Entries whose first member is their int64_t id (struct name, struct
 * run_pos), or an id as bsearch's key, by id. */
static int cmp_id(const void *a, const void *b)
{
	return KG_CMP(*(const int64_t *)a, *(const int64_t *)b);
}

/* The entry of id, NULL when there is none (ids are never array indexes). */
static const struct name *name_find(const struct names *t, int64_t id)
{
	return t->n ? bsearch(&id, t->v, t->n, sizeof *t->v, cmp_id) : NULL;
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
		r->gpu_recorded = 0;
		r->gpu_note = NULL;
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
		qsort(c->by_id, c->nruns, sizeof *c->by_id, cmp_id);
	return 0;
}

/* The position of run id among the selected runs; 0 when it is not one. */
static int run_pos_of(struct ctx *c, int64_t id, uint32_t *pos)
{
	const struct run_pos *r;

	if (c->last_hit < c->nruns && c->by_id[c->last_hit].id == id) {
		*pos = c->by_id[c->last_hit].pos;
		return 1;
	}
	if (!c->nruns || !(r = bsearch(&id, c->by_id, c->nruns, sizeof *c->by_id, cmp_id)))
		return 0;
	c->last_hit = (size_t)(r - c->by_id);
	*pos = r->pos;
	return 1;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

static uint64_t series_hash(int gpu, int64_t b, int64_t nv, int64_t k, int64_t m)
{
	return mix(mix(mix(mix(mix(0, (uint64_t)gpu), (uint64_t)b), (uint64_t)nv), (uint64_t)k),
		   (uint64_t)m);
}

static size_t series_slot_hash(const void *slot, const void *arg)
{
	const struct ctx *c = arg;
	const struct series *x = &c->s[*(const size_t *)slot];
	return series_hash(x->gpu, x->bench, x->nvtx, x->kernel, x->metric);
}

static struct series *series_get(struct ctx *c, int gpu, int64_t b, int64_t nv, int64_t k,
				 int64_t m)
{
	if (2 * (c->ns + 1) > c->cap) {
		static const size_t none = SIZE_MAX;
		size_t ncap = c->cap ? 2 * c->cap : 1024;
		c->slot = kg_table_grow(c->slot, c->cap, ncap, sizeof *c->slot, &none, series_slot_hash, c);
		c->s = xrealloc(c->s, (ncap / 2) * sizeof *c->s);
		c->cap = ncap;
	}
	uint64_t h = series_hash(gpu, b, nv, k, m);
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

static void series_point(struct series *x, size_t nruns, uint32_t pos, const struct kg_point *p)
{
	if (x->npt == x->cappt) {
		x->cappt = x->cappt ? 2 * x->cappt : (nruns < 64 ? nruns : 64);
		x->pt = xrealloc(x->pt, x->cappt * sizeof *x->pt);
	}
	x->pt[x->npt++] = (struct point){ pos, p->n, p->med, p->q1, p->q3, p->lo, p->hi };
}

/* The values read for the series' current commit become its point, by the
 * reduction the store's points are made with; a series has at most a point
 * per selected run. */
static void series_flush(struct series *x, size_t nruns)
{
	struct kg_point p;
	if (!x->ncur)
		return;
	points_of(x->cur, x->ncur, &p);
	series_point(x, nruns, x->cur_pos, &p);
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
 * The points of the selected runs: each run's as the store keeps them
 * (store_run_points: a blob per run, a point per series), and for a run
 * stored without them its samples, each series' values reduced to a point
 * as they are read (store_samples_stream), so memory holds points, not
 * samples.  The store streams each run's rows together, into two parts
 * that it may fill at once from two threads; each part has its own series,
 * whose points are appended to the stored points' series at the end.
 */
struct points_run {
	struct ctx *c;
	uint32_t pos;
	size_t *last;           /* per point index: the series it went to in the last run */
	size_t nlast;
};

static int point_add(void *arg, size_t i, const struct kg_point *p)
{
	struct points_run *pr = arg;
	struct ctx *c = pr->c;
	int gpu = c->runs[pr->pos].gpu;
	struct series *x = NULL;
	/* runs mostly hold the same series in the same order: try where the
	 * last run's i-th point went before hashing */
	if (i < pr->nlast && pr->last[i] < c->ns) {
		x = &c->s[pr->last[i]];
		if (x->gpu != gpu || x->bench != p->benchmark || x->nvtx != p->nvtx ||
		    x->kernel != p->kernel || x->metric != p->metric)
			x = NULL;
	}
	if (!x)
		x = series_get(c, gpu, p->benchmark, p->nvtx, p->kernel, p->metric);
	if (i >= pr->nlast) {
		size_t n = 2 * i + 64;
		pr->last = xrealloc(pr->last, n * sizeof *pr->last);
		for (size_t k = pr->nlast; k < n; k++)
			pr->last[k] = SIZE_MAX;
		pr->nlast = n;
	}
	pr->last[i] = (size_t)(x - c->s);
	series_point(x, c->nruns, pr->pos, p);
	return 0;
}

struct points_load {
	struct points_run pr;
	unsigned char *got;     /* per run position: its points were read */
};

static int run_points(void *arg, int64_t run, const void *data, size_t len)
{
	struct points_load *pl = arg;
	uint32_t pos;
	if (!run_pos_of(pl->pr.c, run, &pos))
		return 0;
	pl->pr.pos = pos;
	/* a damaged blob: the run is read sample by sample */
	if (points_decode(data, len, point_add, &pl->pr) == 0)
		pl->got[pos] = 1;
	return 0;
}

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
	struct points_load pl = { { c, 0, NULL, 0 }, xcalloc(c->nruns + 1, 1) };
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
	size_t nids = 0;
	for (size_t i = 0; i < c->nruns; i++)
		ids[i] = c->runs[i].id;
	int rc = store_run_points(c->st, ids, c->nruns, run_points, &pl);
	free(pl.pr.last);
	for (size_t i = 0; i < c->nruns; i++)
		if (!pl.got[i])
			ids[nids++] = c->runs[i].id;
	free(pl.got);
	if (rc == KG_EXIT_PASS && nids)
		rc = store_samples_stream(c->st, ids, nids, &rd);
	free(ids);
	for (int k = 0; rc == KG_EXIT_PASS && k < 2; k++)
		for (size_t i = 0; i < h[k].ns; i++) {
			series_flush(&h[k].s[i], c->nruns);
			free(h[k].s[i].cur);
			h[k].s[i].cur = NULL;
			h[k].s[i].capcur = 0;
		}
	for (int k = 0; rc == KG_EXIT_PASS && k < 2; k++) {
		/* each part's points appended to the stored points' series */
		for (size_t i = 0; i < h[k].ns; i++) {
			struct series *y = &h[k].s[i];
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

/* ---------------------------------------------------------------- numbers */

/*
 * A stored unit as the unit the report shows and the factor into it: times
 * in ns, sizes in bytes, rates in bytes/s (ncu writes usecond, Kbyte,
 * Gbyte/second, ...); any other unit as it is.
 */
static const char *unit_norm(const char *unit, double *factor)
{
	static const struct { const char *u, *base; double f; } t[] = {
		{ "ns", "ns", 1 }, { "nsecond", "ns", 1 }, { "us", "ns", 1e3 }, { "usecond", "ns", 1e3 },
		{ "ms", "ns", 1e6 }, { "msecond", "ns", 1e6 }, { "s", "ns", 1e9 }, { "second", "ns", 1e9 },
		{ "byte", "byte", 1 }, { "Kbyte", "byte", 1e3 }, { "Mbyte", "byte", 1e6 },
		{ "Gbyte", "byte", 1e9 }, { "byte/s", "byte/s", 1 }, { "byte/second", "byte/s", 1 },
		{ "Kbyte/second", "byte/s", 1e3 }, { "Mbyte/second", "byte/s", 1e6 },
		{ "Gbyte/second", "byte/s", 1e9 }, { "Tbyte/second", "byte/s", 1e12 },
	};
	*factor = 1;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(unit, t[i].u)) {
			*factor = t[i].f;
			return t[i].base;
		}
	return unit;
}

/* A value in its unit, scaled for people as kgate check prints it: 217.6
 * us, 1.2 GB, 45.2%, 3.5 GB/s (4 significant digits). */
static void fmt_human(char *out, size_t n, double v, const char *unit)
{
	static const char *const times[4] = { "s", "ms", "us", "ns" };
	static const char *const bytes[4] = { "GB", "MB", "kB", "B" };
	static const char *const rates[4] = { "GB/s", "MB/s", "kB/s", "B/s" };
	const char *const *names = NULL;
	double f;
	unit = unit_norm(unit ? unit : "", &f);
	v *= f;
	if (isnan(v)) {
		snprintf(out, n, "–");
		return;
	}
	if (!strcmp(unit, "ns"))
		names = times;
	else if (!strcmp(unit, "byte"))
		names = bytes;
	else if (!strcmp(unit, "byte/s"))
		names = rates;
	if (names) {
		double a = fabs(v), scale = 1e9;
		int i = 0;
		while (i < 3 && a < scale) {
			scale /= 1e3;
			i++;
		}
		snprintf(out, n, "%.4g %s", v / scale, names[i]);
	} else if (!strcmp(unit, "%")) {
		snprintf(out, n, "%.3g%%", v);
	} else if (fabs(v) == floor(fabs(v)) && fabs(v) < 1e15) {
		snprintf(out, n, "%.0f%s%s", v, *unit ? " " : "", unit);
	} else {
		snprintf(out, n, "%.4g%s%s", v, *unit ? " " : "", unit);
	}
}

/* "%lld" without printf's cost. */
static void add_ll(struct kg_buf *b, long long v)
{
	char t[24];
	size_t n = sizeof t;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do {
		t[--n] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		t[--n] = '-';
	buf_add(b, t + n, sizeof t - n);
}

/* A number field of a chart's data: nothing for 0. */
static void add_field(struct kg_buf *b, long long v, int first)
{
	if (!first)
		buf_addc(b, ',');
	if (v)
		add_ll(b, v);
}

/* ---------------------------------------------------------------- series */

/* Where the series' level stands now: the median of its medians after its
 * last change point. */
static double series_level(const struct series *x)
{
	size_t from = x->ncp ? x->cp[x->ncp - 1].at : 0;
	if (from >= x->npt)
		return 0;
	double *v = xmalloc((x->npt - from) * sizeof *v);
	for (size_t i = from; i < x->npt; i++)
		v[i - from] = x->pt[i].med;
	qsort(v, x->npt - from, sizeof *v, cmp_double);
	double r = v[(x->npt - from) / 2];
	free(v);
	return r;
}

/* Varying or not, the gate's limit for it, its level now. */
static void series_classify(struct ctx *c, struct series *x)
{
	x->varying = 0;
	for (size_t i = 1; i < x->npt && !x->varying; i++)
		x->varying = x->pt[i].med != x->pt[0].med;
	const struct name *k = name_find(&c->kernel, x->kernel);
	struct kg_metric_rule rule;
	config_rule_for(c->thr, name_of(&c->bench, x->bench), name_of(&c->nvtx, x->nvtx),
			k ? k->s : NULL, k ? k->demangled : NULL, name_of(&c->metric, x->metric), &rule);
	x->limit = rule.has_regression ? rule.regression
		   : rule.deterministic == 1 && rule.has_tolerance ? rule.tolerance : 0;
	x->level = x->npt ? series_level(x) : 0;
}

/* A change point's direction: +1 worse, -1 better, 0 either. */
static int cp_worse(const struct ctx *c, const struct series *x, const struct cp_result *r)
{
	int dir = metric_worse_sign(metric_better(name_of(&c->metric, x->metric)));
	double sh = isnan(r->shift) ? 0 : r->shift;
	return dir ? (dir * sh > 0 ? 1 : -1) : 0;
}

/* A regression: worse by the gate's limit or more (by the change-point
 * search's smallest shift where no limit applies). */
static int cp_regression(const struct ctx *c, const struct series *x, const struct cp_result *r)
{
	double lim = x->limit > 0 ? x->limit : c->o->cp.min_shift;
	return cp_worse(c, x, r) > 0 && fabs(r->shift) >= lim * 0.9999;
}

/* ---------------------------------------------------------------- charts */

/* The data a chart carries: a point per commit, or beyond MAXD commits a
 * column of neighbouring commits (never across a change point). */
#define MAXD 400
struct datum { uint32_t p0, p1, n; double med, q1, q3, lo, hi; };

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

/* d has room for x->npt; cpat[k] gets the datum where change point k
 * starts.  Returns the number of data. */
static size_t chart_data(const struct ctx *c, const struct series *x, struct datum *d, size_t *cpat)
{
	size_t nd = 0, k = 0;
	int agg = x->npt > MAXD;
	double *tmp = xmalloc((x->npt ? x->npt : 1) * sizeof *tmp);
	for (size_t i = 0; i < x->npt;) {
		size_t j = i + 1;
		while (k < x->ncp && x->cp[k].at <= i) {
			if (x->cp[k].at == i)
				cpat[k] = nd;
			k++;
		}
		size_t stop = k < x->ncp ? x->cp[k].at : x->npt;
		uint64_t bucket = (uint64_t)x->pt[i].pos * MAXD / (c->nruns ? c->nruns : 1);
		if (agg)
			while (j < stop && (uint64_t)x->pt[j].pos * MAXD / c->nruns == bucket)
				j++;
		struct datum *e = &d[nd++];
		e->p0 = x->pt[i].pos;
		e->p1 = x->pt[j - 1].pos;
		e->n = 0;
		e->q1 = e->lo = INFINITY;
		e->q3 = e->hi = -INFINITY;
		for (size_t t = i; t < j; t++) {
			const struct point *p = &x->pt[t];
			tmp[t - i] = p->med;
			e->n += p->n;
			e->q1 = fmin(e->q1, p->q1);
			e->q3 = fmax(e->q3, p->q3);
			e->lo = fmin(e->lo, p->lo);
			e->hi = fmax(e->hi, p->hi);
		}
		e->med = median_of(tmp, j - i);
		i = j;
	}
	free(tmp);
	return nd;
}

static void caption(const struct ctx *c, const struct series *x, struct kg_buf *b)
{
	const char *unit = unit_of(c, x->metric);
	buf_adds(b, "<b>");
	escape_html(b, kernel_label(c, x->kernel));
	buf_adds(b, "</b> · ");
	escape_html(b, name_of(&c->metric, x->metric));
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
}

/* One chart: the figure with its numbers; the page's script draws it. */
static void chart(struct ctx *c, const struct series *x, struct kg_buf *b, size_t idx)
{
	struct datum *d = xmalloc((x->npt ? x->npt : 1) * sizeof *d);
	size_t *cpat = xcalloc(x->ncp ? x->ncp : 1, sizeof *cpat);
	size_t nd = chart_data(c, x, d, cpat);
	double f, mx = 0;
	const char *unit = unit_norm(unit_of(c, x->metric), &f);
	for (size_t i = 0; i < nd; i++)
		mx = fmax(mx, fmax(fabs(d[i].lo), fmax(fabs(d[i].hi), fabs(d[i].med))));
	double q = mx > 0 && isfinite(mx) ? mx * 1e-5 : 1;
	buf_printf(b, "<figure class=\"chart\" id=\"s%zu\" data-points=\"%zu\" data-change-points=\"%zu\"",
		   idx, x->npt, x->ncp);
	if (nd < x->npt)
		buf_printf(b, " data-columns=\"%zu\"", nd);
	buf_adds(b, " data-metric=\"");
	escape_html(b, name_of(&c->metric, x->metric));
	buf_adds(b, "\" data-unit=\"");
	escape_html(b, unit);
	buf_printf(b, "\" data-limit=\"%.6g\" data-span=\"%.6g\" data-q=\"%.9g\" data-d=\"", x->limit,
		   x->limit > 0 ? x->limit : c->o->cp.min_shift, q * f);
	long long pm = 0;
	int64_t p1 = -1;
	for (size_t i = 0; i < nd; i++) {
		const struct datum *e = &d[i];
		long long m = llround(e->med / q), q1 = llround(e->q1 / q), q3 = llround(e->q3 / q);
		add_field(b, (int64_t)e->p0 - p1 - 1, i == 0);
		add_field(b, (long long)e->p1 - e->p0, 0);
		add_field(b, m - pm, 0);
		add_field(b, m - q1, 0);
		add_field(b, q3 - m, 0);
		add_field(b, q1 - llround(e->lo / q), 0);
		add_field(b, llround(e->hi / q) - q3, 0);
		add_field(b, e->n, 0);
		pm = m;
		p1 = e->p1;
	}
	buf_adds(b, "\" data-cp=\"");
	for (size_t k = 0; k < x->ncp; k++)
		buf_printf(b, "%s%zu,%.3g,%.2g", k ? ";" : "", cpat[k], 100 * x->cp[k].shift, x->cp[k].p);
	buf_adds(b, "\"><figcaption>");
	caption(c, x, b);
	if (nd < x->npt)
		buf_printf(b, " · %zu commits in %zu columns", x->npt, nd);
	buf_adds(b, " <button class=\"reset\" type=\"button\">reset zoom</button></figcaption>"
		    "<div class=\"plot\"></div><div class=\"tip\" hidden></div></figure>\n");
	free(d);
	free(cpat);
}

/* A sparkline of series x: up to 48 columns' medians, the y range at least
 * span (relative) around its level, its change points as red ticks. */
static void spark(const struct series *x, double span, struct kg_buf *b)
{
	enum { SW = 120, SH = 22, NB = 48 };
	size_t nb = x->npt < NB ? x->npt : NB;
	double v[NB], tmp[NB + 1];
	if (!nb) {
		buf_adds(b, "–");
		return;
	}
	double lo = INFINITY, hi = -INFINITY;
	for (size_t k = 0; k < nb; k++) {
		size_t i0 = k * x->npt / nb, i1 = (k + 1) * x->npt / nb, m = 0;
		double *w = i1 - i0 <= NB + 1 ? tmp : xmalloc((i1 - i0) * sizeof *w);
		for (size_t i = i0; i < i1; i++)
			w[m++] = x->pt[i].med;
		v[k] = median_of(w, m);
		if (w != tmp)
			free(w);
		lo = fmin(lo, v[k]);
		hi = fmax(hi, v[k]);
	}
	if (span > 0 && x->level != 0) {
		lo = fmin(lo, fmin(x->level * (1 - span), x->level * (1 + span)));
		hi = fmax(hi, fmax(x->level * (1 - span), x->level * (1 + span)));
	}
	if (!(hi > lo)) {
		double e = fabs(lo) * 0.01 + (lo == 0);
		lo -= e;
		hi += e;
	}
	buf_printf(b, "<svg class=\"spark\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\"><path d=\"", SW,
		   SH, SW, SH);
	for (size_t k = 0; k < nb; k++) {
		int px = nb > 1 ? (int)lround((double)k * (SW - 4) / (double)(nb - 1)) + 2 : SW / 2;
		int py = 2 + (int)lround((hi - v[k]) / (hi - lo) * (SH - 4));
		buf_addc(b, k ? 'L' : 'M');
		add_ll(b, px);
		buf_addc(b, ' ');
		add_ll(b, py);
	}
	buf_adds(b, "\"/>");
	for (size_t k = 0; k < x->ncp; k++) {
		int px = 2 + (int)lround((double)x->cp[k].at * (SW - 4) / (double)(x->npt > 1 ? x->npt - 1 : 1));
		buf_printf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"0\" y2=\"%d\"/>", px, px, SH);
	}
	buf_adds(b, "</svg>");
}

/* ---------------------------------------------------------------- roofline */

struct roof_pt { const struct series *any; double ai, gflops; };

static void fmt_pow10(char *out, size_t n, int e)
{
	static const char *const si[] = { "", "k", "M", "G", "T", "P" };
	if (e < 0 && e >= -4)
		snprintf(out, n, "%.*f", -e, pow(10, e));
	else if (e >= 0 && e < 18)
		snprintf(out, n, "%.0f%s", pow(10, e % 3), si[e / 3]);
	else
		snprintf(out, n, "1e%d", e);
}
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
	const int w = 640, h = 360, l = 64, r = 16, t = 12, bm = 40;
#define RX(v) (l + (int)lround((log10(v) - lx0) / (lx1 - lx0) * (w - l - r)))
#define RY(v) (t + (int)lround((ly1 - log10(v)) / (ly1 - ly0) * (h - t - bm)))
	buf_printf(b, "<figure class=\"roofline\" data-points=\"%zu\"><figcaption>Arithmetic intensity"
		   " (FLOP per DRAM byte) against achieved GFLOP/s, newest run of each kernel, log scales%s</figcaption>"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">",
		   np, c->o->peak_gflops > 0 && c->o->peak_gbs > 0 ? "; roofs from the given peaks" : "",
		   w, h, w, h);
	buf_printf(b, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", l, t,
		   w - l - r, h - t - bm);
	char tl[32];
	for (double e = ceil(lx0); e <= lx1; e++) {
		fmt_pow10(tl, sizeof tl, (int)e);
		buf_printf(b, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>",
			   RX(pow(10, e)), h - bm + 16, tl);
	}
	for (double e = ceil(ly0); e <= ly1; e++) {
		fmt_pow10(tl, sizeof tl, (int)e);
		buf_printf(b, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>", l - 4,
			   RY(pow(10, e)) + 4, tl);
	}
	buf_printf(b, "<text class=\"ax title\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">arithmetic"
		   " intensity (FLOP per DRAM byte)</text>", (w + l) / 2, h - 6);
	buf_printf(b, "<text class=\"ax title\" transform=\"rotate(-90)\" x=\"%d\" y=\"14\""
		   " text-anchor=\"middle\">achieved GFLOP/s</text>", -(t + (h - t - bm) / 2));
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
		/* the label: the kernel's base name, beside its dot, inside the frame */
		const char *kl = kernel_label(c, pts[i].any->kernel);
		size_t kn = strcspn(kl, "(<");
		if (kn > 28)
			kn = 28;
		char *lab = xstrndup(kl, kn);
		int right = RX(pts[i].ai) > (w + l) / 2;
		buf_printf(b, "<text class=\"rl\" x=\"%d\" y=\"%d\" text-anchor=\"%s\">",
			   RX(pts[i].ai) + (right ? -7 : 7), RY(pts[i].gflops) + 4, right ? "end" : "start");
		escape_html(b, lab);
		buf_adds(b, "</text>");
		free(lab);
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
	"text-align:left;vertical-align:top}th{background:#f4f4f4}td.num{text-align:right;white-space:nowrap}"
	".fail,.regression{color:#b00020;font-weight:bold}.inconclusive,.missing{color:#a05a00}"
	".pass,.improvement{color:#1b7a2b}.lead{font-size:15px}"
	"figure.chart{display:inline-block;margin:6px;vertical-align:top;position:relative}"
	"figcaption{font-size:12px;max-width:640px;overflow-wrap:anywhere}svg{background:#fff}"
	".plot{width:640px;height:210px}td.date{white-space:nowrap}"
	"button.reset{display:none;font-size:11px;margin-left:6px}.zoomed button.reset{display:inline}"
	".frame{fill:none;stroke:#bbb}.grid{stroke:#eee}.tick{stroke:#999}"
	".band{fill:#9ecae1;fill-opacity:.45;stroke:none}.limit{fill:#fdd49e;fill-opacity:.35}"
	".median{fill:none;stroke:#08519c;stroke-width:1.5}.pt{fill:#08519c}"
	".cp{stroke:#d62728;stroke-dasharray:4 3;stroke-width:1.5}.gpu{fill:#e6550d}"
	".ax{font-size:11px;fill:#555}.ax.title{font-size:10px;fill:#777}"
	".over{fill:transparent;cursor:crosshair}.cross{stroke:#888}.hot{fill:#08519c}"
	".sel{fill:#08519c;fill-opacity:.15}"
	".tip{position:absolute;z-index:2;background:#fff;border:1px solid #999;padding:4px 6px;"
	"font-size:12px;pointer-events:none;box-shadow:0 1px 4px rgba(0,0,0,.2);max-width:360px}"
	".spark{vertical-align:middle}.spark path{fill:none;stroke:#08519c;stroke-width:1.2}"
	".spark line{stroke:#d62728;stroke-width:1}"
	".rp{fill:#d62728;fill-opacity:.8}.rl{font-size:10px;fill:#333}"
	".roof{fill:none;stroke:#333;stroke-width:1.5}"
	".note{color:#555}code{font-size:12px}h3{font-size:15px}.why{font-weight:600}"
	".range{margin:8px 0}.range button{margin-right:4px}";

/* The unit of metric name, as stored (else the vocabulary's). */
static const char *unit_by_name(const struct ctx *c, const char *metric)
{
	for (size_t i = 0; metric && i < c->metric.n; i++)
		if (c->metric.v[i].s && !strcmp(c->metric.v[i].s, metric))
			return c->metric.v[i].unit ? c->metric.v[i].unit : "";
	return metric ? metric_unit(metric) : "";
}

static void verdict_row(const struct ctx *c, struct kg_buf *b, const struct report_verdict *v)
{
	char s1[32], s2[32], s3[32], p[32], bv[48], hv[48];
	const char *u = unit_by_name(c, v->metric);
	fmt_pct(s1, sizeof s1, v->shift);
	fmt_pct(s2, sizeof s2, v->lo);
	fmt_pct(s3, sizeof s3, v->hi);
	fmt_num(p, sizeof p, v->p);
	fmt_human(bv, sizeof bv, v->base_value, u);
	fmt_human(hv, sizeof hv, v->head_value, u);
	buf_adds(b, "<tr><td class=\"");
	escape_html(b, v->verdict);
	buf_adds(b, "\">");
	escape_html(b, v->verdict);
	buf_adds(b, v->fails && strcmp(v->verdict ? v->verdict : "", "fail") ? " (fails)" : "");
	buf_adds(b, "</td><td>");
	escape_html(b, v->benchmark);
	buf_adds(b, "</td><td>");
	escape_html(b, v->demangled ? v->demangled : v->kernel);
	buf_adds(b, "</td><td>");
	escape_html(b, v->nvtx);
	buf_adds(b, "</td><td>");
	escape_html(b, v->metric);
	buf_printf(b, "</td><td class=\"num\">%s</td><td class=\"num\">%s … %s</td><td class=\"num\">%s</td>"
		   "<td class=\"num\">", s1, s2, s3, p);
	escape_html(b, bv);
	buf_adds(b, "</td><td class=\"num\">");
	escape_html(b, hv);
	buf_adds(b, "</td><td>");
	escape_html(b, v->message);
	buf_adds(b, "</td></tr>\n");
}

static const char verdict_head[] =
	"<tr><th>verdict</th><th>benchmark</th><th>kernel</th><th>NVTX</th><th>metric</th>"
	"<th>change</th><th>interval</th><th>p</th><th>baseline</th><th>head</th><th>note</th></tr>\n";

/* The newest check: its outcome, the rows that did not pass (fails,
 * FAIL, MISSING, INCONCLUSIVE, NEW), the others one click away. */
static void html_verdicts(struct ctx *c, struct kg_buf *b, struct report_summary *sum)
{
	buf_adds(b, "<h3 id=\"verdicts\">Newest check</h3>\n");
	struct report_check chk;
	struct kg_check_filter f = { .branch = c->o->branch, .since = c->o->since };
	if (load_newest(c->st, &f, &chk) != 0) {
		buf_adds(b, "<p class=\"note\">No check is stored for these runs.</p>\n");
		return;
	}
	char sha[16], date[32];
	short_sha(sha, chk.commit);
	fmt_date(date, sizeof date, chk.time);
	buf_adds(b, "<p>Commit <code title=\"");
	escape_html(b, chk.commit);
	buf_adds(b, "\">");
	escape_html(b, sha);
	buf_adds(b, "</code> against ");
	escape_html(b, chk.baseline ? chk.baseline : "(none)");
	const struct kg_outcome *oc = &chk.outcome;
	buf_printf(b, ", checked %s: <span class=\"%s\">%s</span>: %zu fail, %zu missing, %zu inconclusive,"
		   " %zu new, %zu pass.</p>\n", date, verdict_key(oc->verdict), verdict_name(oc->verdict),
		   oc->n_fail, oc->n_missing, oc->n_inconclusive, oc->n_new, oc->n_pass);
	output_outcome_notes(b, oc, 1);
	sum->check_verdict = oc->verdict;
	sum->check_exit = oc->exit_status;
	sum->check_failing = oc->n_failing;
	sum->has_check = 1;
	const struct report_verdict **ord = xmalloc((chk.n + 1) * sizeof *ord);
	for (size_t i = 0; i < chk.n; i++)
		ord[i] = &chk.v[i];
	qsort(ord, chk.n, sizeof *ord, cmp_verdict);
	size_t i = 0;
	for (; i < chk.n && verdict_rank(ord[i]) < 5; i++) {
		if (!i)
			buf_printf(b, "<table class=\"verdicts failing\">%s", verdict_head);
		verdict_row(c, b, ord[i]);
	}
	if (i)
		buf_adds(b, "</table>\n");
	else if (chk.n)
		buf_adds(b, "<p id=\"no-failing\">Every comparison passed or was skipped.</p>\n");
	if (i < chk.n) {
		buf_printf(b, "<details class=\"passing\"><summary>%zu passing or skipped comparison%s</summary>"
			   "<table class=\"verdicts\">%s", chk.n - i, chk.n - i == 1 ? "" : "s", verdict_head);
		for (; i < chk.n; i++)
			verdict_row(c, b, ord[i]);
		buf_adds(b, "</table></details>\n");
	}
	free(ord);
	for (size_t k = 0; k < chk.n_why; k++) {
		const struct kg_explanation *x = &chk.why[k];
		buf_adds(b, k ? "" : "<h3>Why</h3>\n");
		buf_adds(b, "<p class=\"why\">");
		bench_label(b, escape_html, x->benchmark, x->nvtx);
		buf_adds(b, ": ");
		escape_html(b, x->why);
		buf_adds(b, "</p>\n<details><summary>rules and counters</summary>\n");
		explain_render(x, KG_EXPLAIN_HTML, b);
		buf_adds(b, "</details>\n");
	}
	report_check_free(&chk);
}

/* ---------------------------------------------------------------- GPU state */

/* The GPU states stored with each run: a run's concerns (throttling,
 * other processes, application clocks changed) as one note, and the
 * newest run's states as lines for the summary. */
static int load_gpu(struct ctx *c)
{
	for (size_t r = 0; r < c->nruns; r++) {
		char **names = NULL, **states = NULL;
		size_t n = 0;
		if (store_run_gpu_states(c->st, c->runs[r].id, &names, &states, &n) != KG_EXIT_PASS)
			return -1;
		struct kg_buf note = KG_BUF_INIT;
		for (size_t i = 0; i < n; i++) {
			struct kg_gpu_summary gs;
			char err[200], line[400], worry[400];
			json_t *j = json_loads(states[i], 0, NULL);
			if (!j || gpustate_summary_from_json(j, &gs, err, sizeof err) < 0) {
				json_decref(j);
				continue;
			}
			json_decref(j);
			c->runs[r].gpu_recorded = 1;
			gpustate_summary_concerns(&gs, worry, sizeof worry);
			if (*worry)
				buf_printf(&note, "%s%s: %s", note.len ? "; " : "", names[i], worry);
			if (r + 1 == c->nruns) {
				gpustate_summary_line(&gs, line, sizeof line);
				c->gpu_last = xrealloc(c->gpu_last, (c->ngpu_last + 1) * sizeof *c->gpu_last);
				c->gpu_last[c->ngpu_last].bench = xstrdup(names[i]);
				c->gpu_last[c->ngpu_last].line = xstrdup(line);
				c->gpu_last[c->ngpu_last].worry = xstrdup(worry);
				c->ngpu_last++;
			}
		}
		c->runs[r].gpu_note = note.len ? buf_detach(&note) : NULL;
		buf_free(&note);
		store_names_free(names, n);
		store_names_free(states, n);
	}
	return 0;
}

static void html_gpu(struct ctx *c, struct kg_buf *b)
{
	size_t rec = 0, worried = 0;
	for (size_t r = 0; r < c->nruns; r++) {
		rec += c->runs[r].gpu_recorded;
		worried += c->runs[r].gpu_note != NULL;
	}
	buf_adds(b, "<h3 id=\"gpu-state\">GPU state</h3>\n");
	if (!rec) {
		buf_adds(b, "<p class=\"note\">Not recorded for these runs (runs stored before kgate recorded"
			    " the GPU's state, ingested from files, or without NVML).</p>\n");
		return;
	}
	buf_printf(b, "<p>Recorded for %zu of %zu runs; %zu with something that makes timings less"
		   " comparable (throttling, another process on the GPU, application clocks changed), marked"
		   " &#9650; on the charts.</p>\n", rec, c->nruns, worried);
	if (c->ngpu_last) {
		char sha[16];
		short_sha(sha, c->runs[c->nruns - 1].commit);
		buf_adds(b, "<table class=\"gpu-state\"><tr><th colspan=\"3\">newest run, commit <code>");
		escape_html(b, sha);
		buf_adds(b, "</code></th></tr><tr><th>benchmark</th><th>clocks, temperature, power</th>"
			    "<th>seen</th></tr>\n");
		for (size_t i = 0; i < c->ngpu_last; i++) {
			buf_adds(b, "<tr><td>");
			escape_html(b, c->gpu_last[i].bench);
			buf_adds(b, "</td><td>");
			escape_html(b, c->gpu_last[i].line);
			buf_adds(b, *c->gpu_last[i].worry ? "</td><td class=\"fail\">" : "</td><td>");
			escape_html(b, *c->gpu_last[i].worry ? c->gpu_last[i].worry : "nothing");
			buf_adds(b, "</td></tr>\n");
		}
		buf_adds(b, "</table>\n");
	}
	if (worried) {
		buf_printf(b, "<details><summary>%zu run%s with a concern</summary><table class=\"gpu-runs\">"
			   "<tr><th>commit</th><th>date</th><th>seen</th></tr>\n", worried, worried == 1 ? "" : "s");
		size_t shown = 0;
		for (size_t r = c->nruns; r-- > 0 && shown < 200;) {
			if (!c->runs[r].gpu_note)
				continue;
			char sha[16], date[32];
			short_sha(sha, c->runs[r].commit);
			fmt_date(date, sizeof date, c->runs[r].time);
			buf_adds(b, "<tr><td><code>");
			escape_html(b, sha);
			buf_printf(b, "</code></td><td>%s</td><td>", date);
			escape_html(b, c->runs[r].gpu_note);
			buf_adds(b, "</td></tr>\n");
			shown++;
		}
		buf_adds(b, "</table></details>\n");
	}
}
/* ---------------------------------------------------------------- change points */

struct cp_ref { const struct series *x; const struct cp_result *r; double worse; int regression, recent; };

static int cmp_cpref(const void *a, const void *b)
{
	const struct cp_ref *x = a, *y = b;
	if (x->regression != y->regression)
		return y->regression - x->regression;
	return (y->worse > x->worse) - (y->worse < x->worse);
}

/* The link to series x's chart: on its page in the directory form. */
static void chart_href(const struct ctx *c, const struct series *x, struct kg_buf *b)
{
	buf_adds(b, "<a href=\"");
	if (c->pages)
		buf_printf(b, "p%zu.html", x->page);
	buf_printf(b, "#s%zu\">", (size_t)(x - c->s));
}

static void cp_table(struct ctx *c, struct kg_buf *b, const struct cp_ref *cps, size_t n, const char *cls)
{
	buf_printf(b, "<table class=\"change-points %s\"><tr><th></th><th>benchmark</th><th>kernel</th>"
		   "<th>NVTX</th><th>metric</th><th>commit</th><th>date</th><th>before</th><th>after</th>"
		   "<th>change</th><th>p</th></tr>\n", cls);
	for (size_t i = 0; i < n; i++) {
		const struct series *x = cps[i].x;
		const struct cp_result *r = cps[i].r;
		const struct run *run = &c->runs[x->pt[r->at].pos];
		const char *u = unit_of(c, x->metric);
		char date[32], sh[32], bf[48], af[48], ssha[16];
		fmt_date(date, sizeof date, run->time);
		fmt_pct(sh, sizeof sh, r->shift);
		fmt_human(bf, sizeof bf, r->before, u);
		fmt_human(af, sizeof af, r->after, u);
		int w = cp_worse(c, x, r);
		buf_printf(b, "<tr><td class=\"%s\">%s</td><td>",
			   cps[i].regression ? "regression" : w < 0 ? "improvement" : "change",
			   cps[i].regression ? "regression" : w < 0 ? "improvement" : w > 0 ? "worse" : "change");
		escape_html(b, name_of(&c->bench, x->bench));
		buf_adds(b, "</td><td>");
		chart_href(c, x, b);
		escape_html(b, kernel_label(c, x->kernel));
		buf_adds(b, "</a></td><td>");
		escape_html(b, name_of(&c->nvtx, x->nvtx));
		buf_adds(b, "</td><td>");
		escape_html(b, name_of(&c->metric, x->metric));
		short_sha(ssha, run->commit);
		buf_adds(b, "</td><td>");
		int linked = c->o->commit_url && run->commit &&
			     strspn(run->commit, "0123456789abcdef") == strlen(run->commit);
		if (linked) {
			buf_adds(b, "<a href=\"");
			escape_html(b, c->o->commit_url);
			escape_html(b, run->commit);
			buf_adds(b, "\">");
		}
		buf_adds(b, "<code title=\"");
		escape_html(b, run->commit);
		buf_adds(b, "\">");
		escape_html(b, ssha);
		buf_adds(b, linked ? "</code></a>" : "</code>");
		buf_printf(b, "</td><td class=\"date\">%s</td><td class=\"num\">", date);
		escape_html(b, bf);
		buf_adds(b, "</td><td class=\"num\">");
		escape_html(b, af);
		buf_printf(b, "</td><td class=\"num\">%s</td><td class=\"num\">%.3g</td></tr>\n", sh, r->p);
	}
	buf_adds(b, "</table>\n");
}

/* What changed: the change points of the last new_within seconds
 * (regressions first), every change point one click away, the newest
 * check's verdicts, the GPU's state. */
#define CP_ROWS 1000
static void html_summary(struct ctx *c, struct kg_buf *b, struct cp_ref *cps, size_t ncps,
			 struct report_summary *sum)
{
	size_t nrecent = 0, nreg = 0;
	for (size_t i = 0; i < ncps; i++) {
		nrecent += cps[i].recent;
		nreg += cps[i].recent && cps[i].regression;
	}
	char since[32] = "";
	if (c->nruns)
		fmt_date(since, sizeof since, c->runs[c->nruns - 1].time - c->o->new_within);
	buf_printf(b, "<section id=\"summary\"><h2>What changed</h2>\n<p class=\"lead\" id=\"changed\">"
		   "Since %s (%lld days before the newest run): <b>%zu new change point%s</b>, "
		   "<span class=\"%s\">%zu regression%s</span> (worse by the gate's limit or more); %zu change"
		   " point%s in all.</p>\n", since, (long long)(c->o->new_within / 86400), nrecent,
		   nrecent == 1 ? "" : "s", nreg ? "regression" : "pass", nreg, nreg == 1 ? "" : "s", ncps,
		   ncps == 1 ? "" : "s");
	struct cp_ref *recent = xmalloc((nrecent + 1) * sizeof *recent);
	size_t k = 0;
	for (size_t i = 0; i < ncps; i++)
		if (cps[i].recent)
			recent[k++] = cps[i];
	if (k)
		cp_table(c, b, recent, k < CP_ROWS ? k : CP_ROWS, "recent");
	free(recent);
	if (ncps > nrecent) {
		buf_printf(b, "<details id=\"change-points\"><summary>All %zu change points%s</summary>\n", ncps,
			   ncps > CP_ROWS ? ", the 1000 largest regressions first" : ", regressions first");
		cp_table(c, b, cps, ncps < CP_ROWS ? ncps : CP_ROWS, "all");
		buf_adds(b, "</details>\n");
	}
	html_verdicts(c, b, sum);
	html_gpu(c, b);
	buf_adds(b, "</section>\n");
}

/* ---------------------------------------------------------------- kernels */

/* The end of the group of series from i: one kernel identity (GPU,
 * benchmark, NVTX path, kernel). */
static size_t group_end(const struct ctx *c, size_t i, size_t end)
{
	size_t j = i;
	while (j < end && c->s[j].gpu == c->s[i].gpu && c->s[j].bench == c->s[i].bench &&
	       c->s[j].nvtx == c->s[i].nvtx && c->s[j].kernel == c->s[i].kernel)
		j++;
	return j;
}

#define KERNEL_ROWS 5000
#define UNCHANGED_ROWS 2000

/* A series' kernel, NVTX range, metric and value cells: from inside the
 * row's first <td> to the value, whose </td> the caller writes. */
static void series_cells(const struct ctx *c, const struct series *x, const char *value,
			 struct kg_buf *b)
{
	escape_html(b, kernel_label(c, x->kernel));
	buf_adds(b, "</td><td>");
	escape_html(b, name_of(&c->nvtx, x->nvtx));
	buf_adds(b, "</td><td>");
	escape_html(b, name_of(&c->metric, x->metric));
	buf_adds(b, "</td><td class=\"num\">");
	escape_html(b, value);
}

/* Benchmark [i0, j0)'s table: a row per kernel with its main metric (the
 * duration where measured) as a sparkline, and its series that never
 * changed collapsed into one line. */
static void kernel_table(struct ctx *c, struct kg_buf *b, size_t i0, size_t j0)
{
	size_t nconst = 0, rows = 0;
	for (size_t i = i0; i < j0; i++)
		nconst += !c->s[i].varying;
	buf_adds(b, "<table class=\"kernels\"><tr><th>kernel</th><th>NVTX</th><th>metric</th><th>now</th>"
		    "<th>since first</th><th>change points</th><th>trend</th><th>charts</th></tr>\n");
	for (size_t i = i0; i < j0;) {
		size_t j = group_end(c, i, j0), pri = i, nvar = 0, ncp = 0, first_var = SIZE_MAX;
		for (size_t k = i; k < j; k++) {
			const char *m = name_of(&c->metric, c->s[k].metric);
			if (!strcmp(m, "gpu__time_duration.sum"))
				pri = k;
			if (c->s[k].varying) {
				nvar++;
				if (first_var == SIZE_MAX)
					first_var = k;
			}
			ncp += c->s[k].ncp;
		}
		if (strcmp(name_of(&c->metric, c->s[pri].metric), "gpu__time_duration.sum") && first_var != SIZE_MAX)
			pri = first_var;
		if (rows++ >= KERNEL_ROWS) {
			i = j;
			continue;
		}
		const struct series *x = &c->s[pri];
		const char *u = unit_of(c, x->metric);
		char now[48], ch[32];
		fmt_human(now, sizeof now, x->npt ? x->pt[x->npt - 1].med : NAN, u);
		fmt_pct(ch, sizeof ch, x->npt && x->pt[0].med != 0
			? (double)x->pt[x->npt - 1].med / x->pt[0].med - 1 : NAN);
		buf_printf(b, "<tr class=\"%s\"><td>", nvar ? "varies" : "flat");
		series_cells(c, x, now, b);
		buf_printf(b, "</td><td class=\"num\">%s</td><td class=\"num\">%zu</td><td>", ch, ncp);
		spark(x, x->limit > 0 ? x->limit : c->o->cp.min_shift, b);
		buf_adds(b, "</td><td>");
		if (nvar) {
			chart_href(c, &c->s[first_var], b);
			buf_printf(b, "%zu chart%s</a>", nvar, nvar == 1 ? "" : "s");
		}
		if (j - i > nvar)
			buf_printf(b, "%s%zu unchanged", nvar ? ", " : "", j - i - nvar);
		buf_adds(b, "</td></tr>\n");
		i = j;
	}
	buf_adds(b, "</table>\n");
	if (rows > KERNEL_ROWS)
		buf_printf(b, "<p class=\"note\">and %zu more kernels (their charts are on the pages).</p>\n",
			   rows - KERNEL_ROWS);
	if (!nconst)
		return;
	buf_printf(b, "<details class=\"unchanged\" data-series=\"%zu\"><summary>%zu series unchanged over"
		   " every run (the same median each time), not charted</summary>\n<table><tr><th>kernel</th>"
		   "<th>NVTX</th><th>metric</th><th>value</th><th>runs</th></tr>\n", nconst, nconst);
	size_t shown = 0;
	for (size_t i = i0; i < j0 && shown < UNCHANGED_ROWS; i++) {
		const struct series *x = &c->s[i];
		if (x->varying)
			continue;
		char v[48];
		fmt_human(v, sizeof v, x->npt ? x->pt[0].med : NAN, unit_of(c, x->metric));
		buf_adds(b, "<tr><td>");
		series_cells(c, x, v, b);
		buf_printf(b, "</td><td class=\"num\">%zu</td></tr>\n", x->npt);
		shown++;
	}
	buf_adds(b, "</table>");
	if (nconst > shown)
		buf_printf(b, "<p class=\"note\">and %zu more.</p>", nconst - shown);
	buf_adds(b, "</details>\n");
}

/* ---------------------------------------------------------------- pages */

static void page_head(struct ctx *c, struct kg_buf *b, const char *sub, size_t ns)
{
	const struct report_opts *o = c->o;
	buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		   "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		   "style-src 'unsafe-inline'; script-src 'nonce-%s'\">"
		   "<meta name=\"generator\" content=\"kgate " KGATE_VERSION "\"><title>kgate trend report",
		   c->nonce);
	if (o->branch) {
		buf_adds(b, ": ");
		escape_html(b, o->branch);
	}
	if (sub) {
		buf_adds(b, " · ");
		escape_html(b, sub);
	}
	buf_printf(b, "</title><style>%s</style></head>\n<body data-kgate-report=\"1\" data-runs=\"%zu\""
		   " data-series=\"%zu\" data-commits=\"", css, c->nruns, ns);
	buf_add(b, c->attrs.s ? c->attrs.s : "", c->attrs.len);
	buf_adds(b, "\">\n<h1>kgate trend report");
	if (o->branch) {
		buf_adds(b, ": branch ");
		escape_html(b, o->branch);
	}
	buf_adds(b, "</h1>\n");
}

/* The runs as the script reads them (the body's data-commits, data-times
 * and data-gpu, after data-commits=" in page_head): built once. */
static void run_attrs(struct ctx *c)
{
	struct kg_buf j = KG_BUF_INIT;
	buf_addc(&j, '[');
	for (size_t i = 0; i < c->nruns; i++) {
		if (i)
			buf_addc(&j, ',');
		escape_json(&j, c->runs[i].commit ? c->runs[i].commit : "?");
	}
	buf_addc(&j, ']');
	buf_addc(&j, 0);
	escape_html(&c->attrs, j.s);
	buf_adds(&c->attrs, "\" data-times=\"");
	for (size_t i = 0; i < c->nruns; i++) {
		if (i)
			buf_addc(&c->attrs, ',');
		add_ll(&c->attrs, (long long)(c->runs[i].time - (i ? c->runs[i - 1].time : 0)));
	}
	j.len = 0;
	buf_addc(&j, '{');
	int any = 0;
	for (size_t i = 0; i < c->nruns; i++) {
		if (!c->runs[i].gpu_note)
			continue;
		buf_printf(&j, "%s\"%zu\":", any++ ? "," : "", i);
		escape_json(&j, c->runs[i].gpu_note);
	}
	buf_adds(&j, "}");
	buf_addc(&j, 0);
	buf_adds(&c->attrs, "\" data-gpu=\"");
	escape_html(&c->attrs, j.s);
	buf_free(&j);
}

static void page_foot(struct ctx *c, struct kg_buf *b)
{
	buf_printf(b, "<p class=\"note\">Made by kgate " KGATE_VERSION ".</p>\n<script nonce=\"%s\">",
		   c->nonce);
	buf_adds(b, report_js);
	buf_adds(b, "</script>\n</body></html>\n");
}

static void range_buttons(const struct ctx *c, struct kg_buf *b)
{
	static const size_t last[] = { 30, 100, 365 };
	buf_adds(b, "<div class=\"range\">Runs shown in the charts: <button type=\"button\" data-last=\"0\">"
		    "all</button>");
	for (size_t i = 0; i < sizeof last / sizeof last[0]; i++)
		if (last[i] < c->nruns)
			buf_printf(b, "<button type=\"button\" data-last=\"%zu\">last %zu</button>", last[i],
				   last[i]);
	buf_adds(b, " (drag across a chart to zoom; double-click to return)</div>\n");
}

/* The file name of chart page k (directory form). */
static void page_name(char *out, size_t n, size_t k)
{
	snprintf(out, n, "p%zu.html", k);
}

/* Directory form: the charted (varying) series go to pages of about
 * max_charts charts, a benchmark's kernels in order, a kernel's charts
 * never split; returns the number of pages. */
static size_t assign_pages(struct ctx *c, size_t max_charts)
{
	size_t page = 0, on_page = 0;
	int64_t last_bench = -1;
	int last_gpu = -1;
	for (size_t i = 0; i < c->ns;) {
		size_t j = group_end(c, i, c->ns), nvar = 0;
		for (size_t k = i; k < j; k++)
			nvar += c->s[k].varying;
		if (nvar) {
			int new_bench = c->s[i].bench != last_bench || c->s[i].gpu != last_gpu;
			if (!page || new_bench || on_page + nvar > max_charts) {
				page++;
				on_page = 0;
			}
			last_bench = c->s[i].bench;
			last_gpu = c->s[i].gpu;
			on_page += nvar;
		}
		for (size_t k = i; k < j; k++)
			c->s[k].page = c->s[k].varying ? page : 0;
		i = j;
	}
	return page;
}

/* The charts of the varying series in [i0, j0). */
static void html_charts(struct ctx *c, struct kg_buf *b, size_t i0, size_t j0)
{
	for (size_t k = i0; k < j0; k++)
		if (c->s[k].varying)
			chart(c, &c->s[k], b, k);
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

static void make_nonce(char *out, size_t n)
{
	unsigned char r[12];
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
		uint64_t t = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)out;
		for (size_t i = 0; i < sizeof r; i++, t = t * 6364136223846793005ULL + 1442695040888963407ULL)
			r[i] = (unsigned char)(t >> 56);
	}
	for (size_t i = 0; i < sizeof r && 2 * i + 2 < n; i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
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
	struct kg_thresholds *own_thr = o->thresholds ? NULL : config_default_thresholds();
	c.thr = o->thresholds ? o->thresholds : own_thr;
	make_nonce(c.nonce, sizeof c.nonce);
	int ret = KG_EXIT_RUNTIME;
	struct kg_buf b = KG_BUF_INIT;
	struct cp_ref *cps = NULL;
	size_t ncps = 0, nchart_pages = 0, ncharts = 0;
	if (load_runs(&c) || load_names(st, KG_NAMES_BENCHMARK, &c.bench) ||
	    load_names(st, KG_NAMES_NVTX, &c.nvtx) || load_names(st, KG_NAMES_KERNEL, &c.kernel) ||
	    load_names(st, KG_NAMES_METRIC, &c.metric) || load_samples(&c) || load_gpu(&c))
		goto out;
	for (size_t i = 0; i < c.ns; i++) {
		build_points(&c, &c.s[i]);
		series_classify(&c, &c.s[i]);
		sum->points += c.s[i].npt;
		ncharts += c.s[i].varying;
	}
	sort_ctx = &c;
	if (c.ns)   /* c.s is NULL when there is no series; qsort's is nonnull */
		qsort(c.s, c.ns, sizeof *c.s, cmp_series);
	if (c.pages)
		nchart_pages = assign_pages(&c, max_charts);
	sum->runs = c.nruns;
	sum->series = c.ns;
	run_attrs(&c);

	/* change points: regressions first, the worst first */
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
			int recent = c.runs[c.s[i].pt[r->at].pos].time >= newest - o->new_within;
			cps[ncps++] = (struct cp_ref){ &c.s[i], r, dir ? dir * sh : fabs(sh),
						       cp_regression(&c, &c.s[i], r), recent };
			sum->new_change_points += recent;
		}
	sum->change_points = ncps;
	qsort(cps, ncps, sizeof *cps, cmp_cpref);

	char d0[32] = "", d1[32] = "";
	if (c.nruns) {
		fmt_date(d0, sizeof d0, c.runs[0].time);
		fmt_date(d1, sizeof d1, c.runs[c.nruns - 1].time);
	}
	page_head(&c, &b, NULL, c.ns);
	if (!c.nruns)
		buf_adds(&b, "<p id=\"empty\">No runs match.</p>\n");
	else
		buf_printf(&b, "<p>%zu run%s from %s to %s; %zu series (benchmark, NVTX path, kernel, metric),"
			   " %zu of them charted, %zu unchanged over every run. A chart shows each commit's"
			   " median (line) and interquartile range (band), the gate's limit around the level now"
			   " (shaded), change points (dashed red; binary segmentation with a rank statistic and"
			   " a permutation test, p &le; %.3g, change of the median &ge; %.3g%%) and runs where"
			   " the GPU was throttled or shared (&#9650;). Beyond %d commits a chart draws columns"
			   " of neighbouring commits, never across a change point. <a href=\"#benchmarks\">"
			   "Benchmarks</a>.</p>\n", c.nruns, c.nruns == 1 ? "" : "s", d0, d1, c.ns, ncharts,
			   c.ns - ncharts, o->cp.alpha, 100 * o->cp.min_shift, MAXD);
	html_summary(&c, &b, cps, ncps, sum);
	sum->roofline_points = roofline(&c, &b);

	buf_adds(&b, "<h2 id=\"benchmarks\">Benchmarks</h2>\n");
	if (!c.pages && ncharts)
		range_buttons(&c, &b);
	for (size_t i = 0; i < c.ns;) {
		size_t j = i;
		while (j < c.ns && c.s[j].bench == c.s[i].bench)
			j++;
		size_t nvar = 0;
		for (size_t k = i; k < j; k++)
			nvar += c.s[k].varying;
		buf_printf(&b, "<section class=\"benchmark\" data-charts=\"%zu\"><h2>Benchmark ", nvar);
		escape_html(&b, name_of(&c.bench, c.s[i].bench));
		buf_adds(&b, "</h2>\n");
		kernel_table(&c, &b, i, j);
		if (!c.pages)
			html_charts(&c, &b, i, j);
		buf_adds(&b, "</section>\n");
		i = j;
	}
	if (!c.pages) {
		page_foot(&c, &b);
		page_add(pages, npages, "index.html", &b);
	} else {
		/* the index lists the chart pages; each page draws its charts */
		buf_adds(&b, "<h2 id=\"charts\">Charts</h2>\n<table class=\"pages\"><tr><th>page</th>"
			     "<th>benchmark</th><th>kernels</th><th>charts</th><th>change points</th></tr>\n");
		struct kg_buf pg = KG_BUF_INIT;
		struct report_page *cp_pages = NULL;
		size_t ncp_pages = 0;
		for (size_t i = 0; i < c.ns;) {
			if (!c.s[i].page) {
				i++;
				continue;
			}
			size_t j = i, nk = 0, ncp = 0, nch = 0, last = i;
			for (; j < c.ns && (c.s[j].page == c.s[i].page || !c.s[j].page); j++) {
				if (!c.s[j].page)
					continue;
				ncp += c.s[j].ncp;
				nch++;
				nk += j == i || c.s[j].kernel != c.s[last].kernel || c.s[j].nvtx != c.s[last].nvtx ||
				      c.s[j].gpu != c.s[last].gpu;
				last = j;
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
				escape_html(&b, kernel_label(&c, c.s[last].kernel));
			}
			buf_printf(&b, " (%zu)</td><td>%zu</td><td>%zu</td></tr>\n", nk, nch, ncp);
			char sub[64];
			snprintf(sub, sizeof sub, "page %zu of %zu", c.s[i].page, nchart_pages);
			page_head(&c, &pg, sub, nch);
			buf_printf(&pg, "<p><a href=\"index.html\">The report's index</a> (what changed, verdicts,"
				   " roofline, every kernel, every page). This is page %zu of %zu: %zu charts of",
				   c.s[i].page, nchart_pages, nch);
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
			range_buttons(&c, &pg);
			buf_printf(&pg, "<section class=\"benchmark\" data-charts=\"%zu\"><h2>Benchmark ", nch);
			escape_html(&pg, bn);
			buf_adds(&pg, "</h2>\n");
			html_charts(&c, &pg, i, j);
			buf_adds(&pg, "</section>\n");
			page_foot(&c, &pg);
			page_add(&cp_pages, &ncp_pages, pn, &pg);
			i = j;
		}
		buf_adds(&b, "</table>\n");
		page_foot(&c, &b);
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
	size_t shown = 0;
	for (size_t i = 0; i < ncps && shown < 5; i++) {
		if (cps[i].worse <= 0)
			continue;
		if (!shown++)
			buf_adds(&t, "Worst regressions:\n");
		const struct series *x = cps[i].x;
		char sha[16];
		short_sha(sha, c.runs[x->pt[cps[i].r->at].pos].commit);
		const char *full = c.runs[x->pt[cps[i].r->at].pos].commit;
		char *url = github_commit_url(full);
		buf_adds(&t, "• ");
		bench_label(&t, escape_slack, name_of(&c.bench, x->bench), name_of(&c.nvtx, x->nvtx));
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
	buf_free(&c.attrs);
	free(cps);
	for (size_t i = 0; i < c.ns; i++) {
		free(c.s[i].cur);
		free(c.s[i].pt);
		free(c.s[i].cp);
	}
	free(c.s);
	free(c.slot);
	for (size_t i = 0; i < c.nruns; i++) {
		free(c.runs[i].commit);
		free(c.runs[i].gpu_note);
	}
	free(c.runs);
	free(c.by_id);
	for (size_t i = 0; i < c.ngpus; i++)
		free(c.gpus[i]);
	free(c.gpus);
	for (size_t i = 0; i < c.ngpu_last; i++) {
		free(c.gpu_last[i].bench);
		free(c.gpu_last[i].line);
		free(c.gpu_last[i].worry);
	}
	free(c.gpu_last);
	free_names(&c.bench);
	free_names(&c.nvtx);
	free_names(&c.kernel);
	free_names(&c.metric);
	config_free_thresholds(own_thr);
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
