/*
 * report.c: the Markdown verdict table of a stored check and the nightly
 * HTML trend report (see kgate/report.h).
 *
 * Owns the report's read-only queries (through store_db()), the grouping of
 * samples into per-commit series, the SVG drawing and the summary text.
 * Change points come from changepoint.c, run on each series' per-commit
 * medians.
 */
#include "kgate/report.h"
#include "kgate/github.h"
#include "kgate/kgate.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- helpers */

void report_html_escape(struct kg_buf *b, const char *s)
{
	for (const char *p = s ? s : ""; *p; p++) {
		switch (*p) {
		case '&': buf_adds(b, "&amp;"); break;
		case '<': buf_adds(b, "&lt;"); break;
		case '>': buf_adds(b, "&gt;"); break;
		case '"': buf_adds(b, "&quot;"); break;
		case '\'': buf_adds(b, "&#39;"); break;
		default: buf_addc(b, *p);
		}
	}
}

/* Markdown table cell: HTML-escaped, pipes escaped, no newlines. */
static void md_cell(struct kg_buf *b, const char *s)
{
	for (const char *p = s ? s : ""; *p; p++) {
		switch (*p) {
		case '|': buf_adds(b, "\\|"); break;
		case '\n': case '\r': buf_addc(b, ' '); break;
		case '`': buf_adds(b, "&#96;"); break;
		case '*': buf_adds(b, "\\*"); break;
		case '_': buf_adds(b, "\\_"); break;
		case '[': buf_adds(b, "\\["); break;
		case ']': buf_adds(b, "\\]"); break;
		case '&': buf_adds(b, "&amp;"); break;
		case '<': buf_adds(b, "&lt;"); break;
		case '>': buf_adds(b, "&gt;"); break;
		default: buf_addc(b, *p);
		}
	}
}

static char *col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return t ? xstrdup((const char *)t) : NULL;
}

static double col_num(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static int db_fail(sqlite3 *db, const char *what)
{
	kg_error("cannot %s: %s", what, sqlite3_errmsg(db));
	return -1;
}

static void fmt_date(char *out, size_t n, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, n, "%Y-%m-%d %H:%M UTC", &tm);
}

static void short_sha(char *out, const char *sha)
{
	snprintf(out, 11, "%s", sha ? sha : "?");
}

/* ---------------------------------------------------------------- checks */

static int load_check_rows(sqlite3 *db, struct report_check *c)
{
	sqlite3_stmt *s;
	const char *sql =
		"SELECT v.benchmark, v.nvtx, v.kernel, COALESCE(k.demangled, v.kernel), v.metric,"
		" v.verdict, v.message, v.shift, v.lo, v.hi, v.p, v.base_value, v.head_value,"
		" v.n_base, v.n_head FROM verdicts v LEFT JOIN kernels k ON k.mangled = v.kernel"
		" WHERE v.run = ?1 AND v.time = ?2 AND v.baseline IS ?3 ORDER BY v.id";
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_fail(db, "read the stored verdicts");
	sqlite3_bind_int64(s, 1, c->run);
	sqlite3_bind_int64(s, 2, c->time);
	if (c->baseline)
		sqlite3_bind_text(s, 3, c->baseline, -1, SQLITE_STATIC);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (c->n == cap) {
			cap = cap ? 2 * cap : 16;
			c->v = xrealloc(c->v, cap * sizeof *c->v);
		}
		struct report_verdict *v = &c->v[c->n++];
		v->benchmark = col_text(s, 0);
		v->nvtx = col_text(s, 1);
		v->kernel = col_text(s, 2);
		v->demangled = col_text(s, 3);
		v->metric = col_text(s, 4);
		v->verdict = col_text(s, 5);
		v->message = col_text(s, 6);
		v->shift = col_num(s, 7);
		v->lo = col_num(s, 8);
		v->hi = col_num(s, 9);
		v->p = col_num(s, 10);
		v->base_value = col_num(s, 11);
		v->head_value = col_num(s, 12);
		v->n_base = sqlite3_column_int64(s, 13);
		v->n_head = sqlite3_column_int64(s, 14);
		const char *vd = v->verdict ? v->verdict : "";
		if (!strcmp(vd, "fail")) c->n_fail++;
		else if (!strcmp(vd, "inconclusive")) c->n_inconclusive++;
		else if (!strcmp(vd, "pass")) c->n_pass++;
		else if (!strcmp(vd, "new")) c->n_new++;
		else if (!strcmp(vd, "missing")) c->n_missing++;
		else c->n_skip++;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_fail(db, "read the stored verdicts");
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

/* The explanations of c's run, newest first, one per kernel pair, of the
 * kernels c flags; then put back in the order they were stored. */
static int load_check_why(sqlite3 *db, struct report_check *c)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, "SELECT benchmark, nvtx, base_kernel, head_kernel, why, details"
				   " FROM explanations WHERE run = ?1 ORDER BY id DESC", -1, &s, NULL) != SQLITE_OK)
		return db_fail(db, "read the stored explanations");
	sqlite3_bind_int64(s, 1, c->run);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *t[6];
		for (int i = 0; i < 6; i++)
			t[i] = (const char *)sqlite3_column_text(s, i);
		if (!t[0] || !t[1] || !t[2] || !t[3] ||
		    !(check_flags(c, t[0], t[1], t[2]) || check_flags(c, t[0], t[1], t[3])))
			continue;
		int seen = 0;
		for (size_t i = 0; i < c->n_why && !seen; i++)
			seen = !strcmp(c->why[i].benchmark, t[0]) && !strcmp(c->why[i].nvtx, t[1]) &&
			       !strcmp(c->why[i].base_kernel, t[2]) && !strcmp(c->why[i].head_kernel, t[3]);
		if (seen)
			continue;
		if (c->n_why == cap) {
			cap = cap ? 2 * cap : 4;
			c->why = xrealloc(c->why, cap * sizeof *c->why);
		}
		if (explain_from_json(t[0], t[1], t[2], t[3], t[4], t[5], &c->why[c->n_why]) == 0)
			c->n_why++;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_fail(db, "read the stored explanations");
	for (size_t i = 0; i < c->n_why / 2; i++) {
		struct kg_explanation t = c->why[i];
		c->why[i] = c->why[c->n_why - 1 - i];
		c->why[c->n_why - 1 - i] = t;
	}
	return 0;
}

/* The newest check among runs chosen by where_sql (binds ?1 to arg). */
static int load_newest(sqlite3 *db, const char *where_sql, const char *arg,
		       int64_t since, struct report_check *out)
{
	memset(out, 0, sizeof *out);
	char *sql = xasprintf("SELECT v.run, v.baseline, v.time, r.commit_sha FROM verdicts v"
			      " JOIN runs r ON r.id = v.run WHERE %s ORDER BY v.id DESC LIMIT 1",
			      where_sql);
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return db_fail(db, "find the stored check");
	if (arg)
		sqlite3_bind_text(s, 1, arg, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, since);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		sqlite3_finalize(s);
		return 1;
	}
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(s);
		return db_fail(db, "find the stored check");
	}
	out->run = sqlite3_column_int64(s, 0);
	out->baseline = col_text(s, 1);
	out->time = sqlite3_column_int64(s, 2);
	out->commit = col_text(s, 3);
	sqlite3_finalize(s);
	rc = load_check_rows(db, out);
	return rc ? rc : load_check_why(db, out);
}

int report_check_load(struct kg_store *st, const char *commit, struct report_check *out)
{
	return load_newest(store_db(st),
			   "(r.commit_sha = ?1 OR substr(r.commit_sha, 1, length(?1)) = ?1)"
			   " AND ?2 >= 0", commit, 0, out);
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
	memset(c, 0, sizeof *c);
}

static int verdict_rank(const char *v)
{
	static const char *const order[] = { "fail", "missing", "inconclusive", "new", "pass", "skip" };
	for (int i = 0; i < 6; i++)
		if (v && !strcmp(v, order[i]))
			return i;
	return 6;
}

static const char *verdict_label(const char *v)
{
	switch (verdict_rank(v)) {
	case 0: return "\xE2\x9D\x8C FAIL";
	case 1: return "\xE2\x9D\x93 MISSING";
	case 2: return "\xE2\x9A\xA0\xEF\xB8\x8F INCONCLUSIVE";
	case 3: return "\xF0\x9F\x86\x95 NEW";
	case 4: return "\xE2\x9C\x85 PASS";
	default: return "SKIP";
	}
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
	fmt_num(bv, sizeof bv, v->base_value);
	fmt_num(hv, sizeof hv, v->head_value);
	buf_printf(b, "| %s | ", verdict_label(v->verdict));
	md_cell(b, v->benchmark);
	buf_adds(b, " | ");
	md_cell(b, v->demangled ? v->demangled : v->kernel);
	if (v->nvtx && *v->nvtx) {
		buf_adds(b, " (");
		md_cell(b, v->nvtx);
		buf_adds(b, ")");
	}
	buf_adds(b, " | ");
	md_cell(b, v->metric);
	if (isnan(v->lo) || isnan(v->hi))
		buf_printf(b, " | %s | %s | %s → %s | ", shift, p, bv, hv);
	else
		buf_printf(b, " | %s [%s, %s] | %s | %s → %s | ", shift, lo, hi, p, bv, hv);
	md_cell(b, v->message);
	buf_adds(b, " |\n");
}

static int cmp_verdict(const void *a, const void *b)
{
	const struct report_verdict *x = *(struct report_verdict *const *)a;
	const struct report_verdict *y = *(struct report_verdict *const *)b;
	int d = verdict_rank(x->verdict) - verdict_rank(y->verdict);
	if (d)
		return d;
	double sx = isnan(x->shift) ? 0 : x->shift, sy = isnan(y->shift) ? 0 : y->shift;
	return (sy > sx) - (sy < sx);
}

void report_check_markdown(const struct report_check *c, struct kg_buf *b)
{
	char sha[16];
	short_sha(sha, c->commit);
	buf_adds(b, KG_GITHUB_MARKER "\n");
	if (c->n_fail)
		buf_printf(b, "### kgate: %zu regression%s\n\n", c->n_fail, c->n_fail == 1 ? "" : "s");
	else
		buf_adds(b, "### kgate: no regression\n\n");
	buf_printf(b, "Commit `%s` against ", sha);
	buf_adds(b, "baseline ");
	md_cell(b, c->baseline ? c->baseline : "(none)");
	buf_printf(b, ": %zu fail, %zu missing, %zu inconclusive, %zu new, %zu pass.\n\n",
		   c->n_fail, c->n_missing, c->n_inconclusive, c->n_new, c->n_pass);
	const struct report_verdict **ord = xmalloc((c->n + 1) * sizeof *ord);
	for (size_t i = 0; i < c->n; i++)
		ord[i] = &c->v[i];
	qsort(ord, c->n, sizeof *ord, cmp_verdict);
	static const char head[] =
		"| verdict | benchmark | kernel | metric | change [CI] | p | baseline → head | note |\n"
		"| --- | --- | --- | --- | --- | --- | --- | --- |\n";
	size_t i = 0, shown = 0;
	for (; i < c->n && verdict_rank(ord[i]->verdict) < 4; i++) {
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
		md_cell(b, c->why[k].benchmark);
		if (*c->why[k].nvtx) {
			buf_adds(b, " [");
			md_cell(b, c->why[k].nvtx);
			buf_adds(b, "]");
		}
		buf_adds(b, ": ");
		md_cell(b, c->why[k].why);
		buf_adds(b, "\n\n<details><summary>rules and counters</summary>\n\n");
		explain_render(&c->why[k], KG_EXPLAIN_MARKDOWN, b);
		buf_adds(b, "\n</details>\n");
	}
}

const char *report_check_state(const struct report_check *c, struct kg_buf *desc)
{
	if (desc)
		buf_printf(desc, "%zu fail, %zu inconclusive, %zu pass of %zu", c->n_fail,
			   c->n_inconclusive, c->n_pass, c->n);
	return c->n_fail || c->n_missing ? "failure" : "success";
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
struct name { char *s, *demangled; char *unit; int det; };
struct names { struct name *v; size_t n; };

struct pv { uint32_t pos; double v; };
struct point { uint32_t pos; double med, q1, q3, lo, hi; uint32_t n; };
struct series {
	int gpu;
	int64_t bench, nvtx, kernel, metric;
	struct pv *pv;
	size_t n, cap;
	struct point *pt;
	size_t npt;
	struct cp_result *cp;
	size_t ncp;
};

struct ctx {
	sqlite3 *db;
	const struct report_opts *o;
	struct run *runs;
	size_t nruns;
	int64_t max_run_id;
	uint32_t *pos_of;       /* run id -> position + 1, 0 when not selected */
	char **gpus;
	size_t ngpus;
	struct names bench, nvtx, kernel, metric;
	struct series *s;       /* hash table, then compacted */
	size_t ns, cap;
	size_t *slot;
};

static const char *name_of(const struct names *t, int64_t id)
{
	return id >= 0 && (size_t)id < t->n && t->v[id].s ? t->v[id].s : "?";
}

static int load_names(sqlite3 *db, const char *sql, struct names *t)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_fail(db, "read the name tables");
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);
		if (id < 0 || id > 100000000)
			continue;
		if ((size_t)id >= t->n) {
			size_t n = (size_t)id + 1 > 2 * t->n ? (size_t)id + 1 : 2 * t->n;
			t->v = xrealloc(t->v, n * sizeof *t->v);
			memset(t->v + t->n, 0, (n - t->n) * sizeof *t->v);
			t->n = n;
		}
		struct name *nm = &t->v[id];
		nm->s = col_text(s, 1);
		if (sqlite3_column_count(s) > 2)
			nm->demangled = col_text(s, 2);
		if (sqlite3_column_count(s) > 3)
			nm->unit = col_text(s, 3);
		if (sqlite3_column_count(s) > 4)
			nm->det = sqlite3_column_int(s, 4);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : db_fail(db, "read the name tables");
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

static const char run_where[] =
	" FROM runs WHERE (?1 IS NULL OR branch = ?1) AND time >= ?2 AND label IS NULL"
	" AND status <> 'quick'";

static int load_runs(struct ctx *c)
{
	char *sql = xasprintf("SELECT id, commit_sha, time, COALESCE(gpu_name, '')%s"
			      " ORDER BY time, id", run_where);
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(c->db, sql, -1, &s, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return db_fail(c->db, "read the runs");
	if (c->o->branch)
		sqlite3_bind_text(s, 1, c->o->branch, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, c->o->since);
	size_t cap = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (c->nruns == cap) {
			cap = cap ? 2 * cap : 64;
			c->runs = xrealloc(c->runs, cap * sizeof *c->runs);
		}
		struct run *r = &c->runs[c->nruns++];
		r->id = sqlite3_column_int64(s, 0);
		r->commit = col_text(s, 1);
		r->time = sqlite3_column_int64(s, 2);
		const char *g = (const char *)sqlite3_column_text(s, 3);
		size_t k;
		for (k = 0; k < c->ngpus; k++)
			if (!strcmp(c->gpus[k], g ? g : ""))
				break;
		if (k == c->ngpus) {
			c->gpus = xrealloc(c->gpus, (c->ngpus + 1) * sizeof *c->gpus);
			c->gpus[c->ngpus++] = xstrdup(g ? g : "");
		}
		r->gpu = (int)k;
		if (r->id > c->max_run_id)
			c->max_run_id = r->id;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_fail(c->db, "read the runs");
	c->pos_of = xcalloc((size_t)c->max_run_id + 1, sizeof *c->pos_of);
	for (size_t i = 0; i < c->nruns; i++)
		c->pos_of[c->runs[i].id] = (uint32_t)i + 1;
	return 0;
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

static int load_samples(struct ctx *c)
{
	char *sql = xasprintf("SELECT run, benchmark, nvtx, kernel, metric, value FROM samples"
			      " WHERE run IN (SELECT id%s)", run_where);
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(c->db, sql, -1, &s, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return db_fail(c->db, "read the samples");
	if (c->o->branch)
		sqlite3_bind_text(s, 1, c->o->branch, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, c->o->since);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t run = sqlite3_column_int64(s, 0);
		if (run < 0 || run > c->max_run_id || !c->pos_of[run])
			continue;
		uint32_t pos = c->pos_of[run] - 1;
		struct series *x = series_get(c, c->runs[pos].gpu, sqlite3_column_int64(s, 1),
					      sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3),
					      sqlite3_column_int64(s, 4));
		if (x->n == x->cap) {
			x->cap = x->cap ? 2 * x->cap : 16;
			x->pv = xrealloc(x->pv, x->cap * sizeof *x->pv);
		}
		x->pv[x->n++] = (struct pv){ pos, sqlite3_column_double(s, 5) };
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return db_fail(c->db, "read the samples");
	return 0;
}

static int cmp_pv(const void *a, const void *b)
{
	const struct pv *x = a, *y = b;
	if (x->pos != y->pos)
		return (x->pos > y->pos) - (x->pos < y->pos);
	return (x->v > y->v) - (x->v < y->v);
}

/* quantile of sorted v[0..n) by linear interpolation */
static double quant(const struct pv *v, size_t n, double q)
{
	double h = q * (double)(n - 1);
	size_t i = (size_t)h;
	if (i + 1 >= n)
		return v[n - 1].v;
	return v[i].v + (h - (double)i) * (v[i + 1].v - v[i].v);
}

static void build_points(struct ctx *c, struct series *x)
{
	qsort(x->pv, x->n, sizeof *x->pv, cmp_pv);
	x->pt = xmalloc((x->n ? x->n : 1) * sizeof *x->pt);
	for (size_t i = 0; i < x->n;) {
		size_t j = i;
		while (j < x->n && x->pv[j].pos == x->pv[i].pos)
			j++;
		const struct pv *v = x->pv + i;
		size_t m = j - i;
		x->pt[x->npt++] = (struct point){ v[0].pos, quant(v, m, 0.5), quant(v, m, 0.25),
			quant(v, m, 0.75), v[0].v, v[m - 1].v, (uint32_t)m };
		i = j;
	}
	if (x->npt >= 2 * c->o->cp.min_seg) {
		double *med = xmalloc(x->npt * sizeof *med);
		for (size_t i = 0; i < x->npt; i++)
			med[i] = x->pt[i].med;
		x->cp = xmalloc(x->npt * sizeof *x->cp);
		x->ncp = changepoint_find(med, x->npt, &c->o->cp, x->cp, x->npt);
		free(med);
	}
	free(x->pv);
	x->pv = NULL;
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

/* +1 when a higher value is worse (time, counts), -1 when better, 0 unknown */
static int worse_dir(const char *metric)
{
	if (strstr(metric, "pct_of_peak") || strstr(metric, "throughput") ||
	    strstr(metric, "per_second") || strstr(metric, "achieved"))
		return -1;
	if (strstr(metric, "duration") || strstr(metric, "time") || strstr(metric, "cycles") ||
	    strstr(metric, "bytes") || strstr(metric, "inst_executed") || strstr(metric, "sectors"))
		return 1;
	return 0;
}

static const char *kernel_label(const struct ctx *c, int64_t k)
{
	if (k >= 0 && (size_t)k < c->kernel.n && c->kernel.v[k].demangled && *c->kernel.v[k].demangled)
		return c->kernel.v[k].demangled;
	return name_of(&c->kernel, k);
}

static const char *unit_of(const struct ctx *c, int64_t m)
{
	if (m >= 0 && (size_t)m < c->metric.n && c->metric.v[m].unit)
		return c->metric.v[m].unit;
	return "";
}

/* ---------------------------------------------------------------- SVG */

#define W 640
#define H 170
#define ML 72
#define MR 12
#define MT 10
#define MB 30

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
			buf_printf(b, "%d", d[k]);
		}
	}
}

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
	int *xs = xmalloc(x->npt * sizeof *xs), *y1 = xmalloc(x->npt * sizeof *y1);
	int *y3 = xmalloc(x->npt * sizeof *y3), *ym = xmalloc(x->npt * sizeof *ym);
	for (size_t i = 0; i < x->npt; i++) {
		xs[i] = c->nruns > 1 ? ML + (int)lround((double)x->pt[i].pos / span * (W - ML - MR))
			: ML + (W - ML - MR) / 2;
		ym[i] = MT + (int)lround((hi - x->pt[i].med) / (hi - lo) * (H - MT - MB));
		y1[i] = MT + (int)lround((hi - x->pt[i].q1) / (hi - lo) * (H - MT - MB));
		y3[i] = MT + (int)lround((hi - x->pt[i].q3) / (hi - lo) * (H - MT - MB));
	}
	const char *metric = name_of(&c->metric, x->metric);
	const char *unit = unit_of(c, x->metric);
	buf_printf(b, "<figure class=\"chart\" id=\"s%zu\" data-points=\"%zu\" data-change-points=\"%zu\""
		   " data-metric=\"", idx, x->npt, x->ncp);
	report_html_escape(b, metric);
	buf_adds(b, "\"><figcaption><b>");
	report_html_escape(b, kernel_label(c, x->kernel));
	buf_adds(b, "</b> · ");
	report_html_escape(b, metric);
	if (*unit) {
		buf_adds(b, " (");
		report_html_escape(b, unit);
		buf_adds(b, ")");
	}
	const char *nv = name_of(&c->nvtx, x->nvtx);
	if (*nv && strcmp(nv, "?")) {
		buf_adds(b, " · NVTX ");
		report_html_escape(b, nv);
	}
	if (c->ngpus > 1 && *c->gpus[x->gpu]) {
		buf_adds(b, " · ");
		report_html_escape(b, c->gpus[x->gpu]);
	}
	buf_printf(b, "</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
		   " viewBox=\"0 0 %d %d\" role=\"img\">", W, H, W, H);
	buf_printf(b, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", ML, MT,
		   W - ML - MR, H - MT - MB);
	/* enough digits that the two axis labels differ */
	int prec = 4;
	char lhi[40], llo[40];
	do {
		snprintf(lhi, sizeof lhi, "%.*g", prec, hi);
		snprintf(llo, sizeof llo, "%.*g", prec, lo);
	} while (!strcmp(lhi, llo) && ++prec < 12);
	buf_printf(b, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>", ML - 4,
		   MT + 10, lhi);
	buf_printf(b, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>", ML - 4,
		   H - MB, llo);
	char sha[16];
	short_sha(sha, c->runs[x->pt[0].pos].commit);
	buf_printf(b, "<text class=\"ax\" x=\"%d\" y=\"%d\">", ML, H - MB + 16);
	report_html_escape(b, sha);
	buf_adds(b, "</text>");
	short_sha(sha, c->runs[x->pt[x->npt - 1].pos].commit);
	buf_printf(b, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", W - MR, H - MB + 16);
	report_html_escape(b, sha);
	buf_adds(b, "</text>");
	/* the spread band: interquartile range of each commit's values */
	buf_adds(b, "<path class=\"band\" d=\"");
	path_rel(b, xs, y3, x->npt, 1);
	int *rx = xmalloc(x->npt * sizeof *rx), *ry = xmalloc(x->npt * sizeof *ry);
	for (size_t i = 0; i < x->npt; i++) {
		rx[i] = xs[x->npt - 1 - i];
		ry[i] = y1[x->npt - 1 - i];
	}
	path_rel(b, rx, ry, x->npt, 0);
	buf_adds(b, "Z\"/><path class=\"median\" d=\"");
	path_rel(b, xs, ym, x->npt, 1);
	buf_adds(b, "\"/>");
	free(rx);
	free(ry);
	for (size_t k = 0; k < x->ncp; k++) {
		const struct cp_result *r = &x->cp[k];
		int cx = (xs[r->at - 1] + xs[r->at]) / 2;
		short_sha(sha, c->runs[x->pt[r->at].pos].commit);
		buf_printf(b, "<line class=\"cp\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"><title>change point at ",
			   cx, MT, cx, H - MB);
		report_html_escape(b, sha);
		buf_printf(b, ": %.6g → %.6g (%+.2f%%), p = %.3g</title></line>", r->before, r->after,
			   100 * r->shift, r->p);
	}
	for (size_t i = 0; i < x->npt; i++) {
		int is_cp = 0;
		for (size_t k = 0; k < x->ncp; k++)
			if (x->cp[k].at == i)
				is_cp = 1;
		if (!hover_all && !is_cp && i + 1 != x->npt)
			continue;
		const struct point *p = &x->pt[i];
		const struct run *r = &c->runs[p->pos];
		char date[32];
		fmt_date(date, sizeof date, r->time);
		short_sha(sha, r->commit);
		buf_printf(b, "<circle class=\"pt%s\" cx=\"%d\" cy=\"%d\" r=\"3\"><title>", is_cp ? " cpt" : "",
			   xs[i], ym[i]);
		report_html_escape(b, sha);
		buf_printf(b, " (%s): median %.6g, IQR %.6g–%.6g, range %.6g–%.6g, n = %u</title></circle>",
			   date, p->med, p->q1, p->q3, p->lo, p->hi, p->n);
	}
	buf_adds(b, "</svg></figure>\n");
	free(xs);
	free(y1);
	free(y3);
	free(ym);
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
		report_html_escape(b, name_of(&c->bench, pts[i].any->bench));
		buf_adds(b, ": ");
		report_html_escape(b, kernel_label(c, pts[i].any->kernel));
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
	int rc = load_newest(c->db, "v.run IN (SELECT id FROM runs WHERE (?1 IS NULL OR branch = ?1)"
			     " AND time >= ?2)", c->o->branch, c->o->since, &chk);
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
	report_html_escape(b, sha);
	buf_adds(b, "</code> against ");
	report_html_escape(b, chk.baseline ? chk.baseline : "(none)");
	buf_printf(b, ", checked %s: %zu fail, %zu missing, %zu inconclusive, %zu new, %zu pass.</p>\n",
		   date, chk.n_fail, chk.n_missing, chk.n_inconclusive, chk.n_new, chk.n_pass);
	sum->check_fail = chk.n_fail;
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
		report_html_escape(b, v->verdict);
		buf_adds(b, "\">");
		report_html_escape(b, v->verdict);
		buf_adds(b, "</td><td>");
		report_html_escape(b, v->benchmark);
		buf_adds(b, "</td><td>");
		report_html_escape(b, v->demangled ? v->demangled : v->kernel);
		buf_adds(b, "</td><td>");
		report_html_escape(b, v->nvtx);
		buf_adds(b, "</td><td>");
		report_html_escape(b, v->metric);
		buf_printf(b, "</td><td>%s</td><td>%s … %s</td><td>%s</td><td>%s</td><td>%s</td><td>",
			   s1, s2, s3, p, bv, hv);
		report_html_escape(b, v->message);
		buf_adds(b, "</td></tr>\n");
	}
	buf_adds(b, "</table>\n");
	free(ord);
	for (size_t i = 0; i < chk.n_why; i++) {
		const struct kg_explanation *x = &chk.why[i];
		buf_adds(b, i ? "" : "<h3>Why</h3>\n");
		buf_adds(b, "<p class=\"why\">");
		report_html_escape(b, x->benchmark);
		if (*x->nvtx) {
			buf_adds(b, " [");
			report_html_escape(b, x->nvtx);
			buf_adds(b, "]");
		}
		buf_adds(b, ": ");
		report_html_escape(b, x->why);
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

int report_html(struct kg_store *st, const struct report_opts *o, char **html, size_t *len,
		struct report_summary *sum)
{
	memset(sum, 0, sizeof *sum);
	struct ctx c;
	memset(&c, 0, sizeof c);
	c.db = store_db(st);
	c.o = o;
	int ret = KG_EXIT_RUNTIME;
	struct kg_buf b = KG_BUF_INIT;
	struct cp_ref *cps = NULL;
	size_t ncps = 0;
	if (load_runs(&c) || load_names(c.db, "SELECT id, name FROM benchmarks", &c.bench) ||
	    load_names(c.db, "SELECT id, path FROM nvtx", &c.nvtx) ||
	    load_names(c.db, "SELECT id, mangled, demangled FROM kernels", &c.kernel) ||
	    load_names(c.db, "SELECT id, name, NULL, unit, deterministic FROM metrics", &c.metric) ||
	    load_samples(&c))
		goto out;
	for (size_t i = 0; i < c.ns; i++) {
		build_points(&c, &c.s[i]);
		sum->points += c.s[i].npt;
	}
	sort_ctx = &c;
	if (c.ns)   /* c.s is NULL when there is no series; qsort's is nonnull */
		qsort(c.s, c.ns, sizeof *c.s, cmp_series);
	sum->runs = c.nruns;
	sum->series = c.ns;
	int hover_all = sum->points <= o->max_hover;

	char d0[32] = "", d1[32] = "";
	if (c.nruns) {
		fmt_date(d0, sizeof d0, c.runs[0].time);
		fmt_date(d1, sizeof d1, c.runs[c.nruns - 1].time);
	}
	buf_adds(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		     "<meta name=\"generator\" content=\"kgate " KGATE_VERSION "\"><title>kgate trend report");
	if (o->branch) {
		buf_adds(&b, ": ");
		report_html_escape(&b, o->branch);
	}
	buf_printf(&b, "</title><style>%s</style></head>\n<body data-kgate-report=\"1\" data-runs=\"%zu\""
		   " data-series=\"%zu\">\n<h1>kgate trend report", css, c.nruns, c.ns);
	if (o->branch) {
		buf_adds(&b, ": branch ");
		report_html_escape(&b, o->branch);
	}
	buf_adds(&b, "</h1>\n");
	if (!c.nruns) {
		buf_adds(&b, "<p id=\"empty\">No runs match.</p>\n");
	} else {
		buf_printf(&b, "<p>%zu run%s from %s to %s; %zu series (benchmark, NVTX path, kernel,"
			   " metric). Each chart: the median of each commit's values (line), their"
			   " interquartile range (band), and change points (dashed red lines) found by"
			   " binary segmentation with a rank statistic and a permutation test (p &le; %.3g,"
			   " change of the median &ge; %.3g%%).%s</p>\n",
			   c.nruns, c.nruns == 1 ? "" : "s", d0, d1, c.ns, o->cp.alpha,
			   100 * o->cp.min_shift,
			   hover_all ? " Hover over a point for its commit." :
			   " This report is large: hover marks are drawn only at change points and at"
			   " the newest commit of each chart.");
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
			int dir = worse_dir(name_of(&c.metric, c.s[i].metric));
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
			char date[32], sh[32];
			fmt_date(date, sizeof date, run->time);
			fmt_pct(sh, sizeof sh, r->shift);
			buf_printf(&b, "<tr><td>");
			report_html_escape(&b, name_of(&c.bench, x->bench));
			buf_printf(&b, "</td><td><a href=\"#s%zu\">", (size_t)(x - c.s));
			report_html_escape(&b, kernel_label(&c, x->kernel));
			buf_adds(&b, "</a></td><td>");
			report_html_escape(&b, name_of(&c.nvtx, x->nvtx));
			buf_adds(&b, "</td><td>");
			report_html_escape(&b, name_of(&c.metric, x->metric));
			char ssha[16];
			short_sha(ssha, run->commit);
			buf_adds(&b, "</td><td><code title=\"");
			report_html_escape(&b, run->commit);
			buf_adds(&b, "\">");
			report_html_escape(&b, ssha);
			buf_printf(&b, "</code></td><td>%s</td><td>%.6g</td><td>%.6g</td><td>%s</td>"
				   "<td>%.3g</td></tr>\n", date, r->before, r->after, sh, r->p);
		}
		buf_adds(&b, "</table>\n");
	} else {
		buf_adds(&b, "<p class=\"note\">No change point found.</p>\n");
	}
	sum->roofline_points = roofline(&c, &b);

	/* charts, one section per benchmark */
	for (size_t i = 0; i < c.ns;) {
		size_t j = i;
		while (j < c.ns && c.s[j].bench == c.s[i].bench)
			j++;
		buf_printf(&b, "<section class=\"benchmark\" data-charts=\"%zu\"><h2>Benchmark ", j - i);
		report_html_escape(&b, name_of(&c.bench, c.s[i].bench));
		buf_adds(&b, "</h2>\n");
		for (size_t k = i; k < j; k++)
			chart(&c, &c.s[k], &b, hover_all, k);
		buf_adds(&b, "</section>\n");
		i = j;
	}
	buf_adds(&b, "<p class=\"note\">Made by kgate " KGATE_VERSION ".</p>\n</body></html>\n");

	/* the summary */
	struct kg_buf t = KG_BUF_INIT;
	buf_adds(&t, "*kgate trend report*");
	if (o->branch)
		buf_printf(&t, " for `%s`", o->branch);
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
		buf_printf(&t, "• %s / %s / %s: %+.1f%% at `%s`\n", name_of(&c.bench, x->bench),
			   kernel_label(&c, x->kernel), name_of(&c.metric, x->metric),
			   100 * cps[i].r->shift, sha);
	}
	if (sum->check_fail)
		buf_printf(&t, "Newest check: %zu FAIL.\n", sum->check_fail);
	if (o->link)
		buf_printf(&t, "<%s|Open the report>\n", o->link);
	sum->text = buf_detach(&t);
	if (!sum->text)
		sum->text = xstrdup("");
	*len = b.len;
	*html = buf_detach(&b);
	ret = KG_EXIT_PASS;
out:
	buf_free(&b);
	free(cps);
	for (size_t i = 0; i < c.ns; i++) {
		free(c.s[i].pv);
		free(c.s[i].pt);
		free(c.s[i].cp);
	}
	free(c.s);
	free(c.slot);
	for (size_t i = 0; i < c.nruns; i++)
		free(c.runs[i].commit);
	free(c.runs);
	free(c.pos_of);
	for (size_t i = 0; i < c.ngpus; i++)
		free(c.gpus[i]);
	free(c.gpus);
	free_names(&c.bench);
	free_names(&c.nvtx);
	free_names(&c.kernel);
	free_names(&c.metric);
	return ret;
}
