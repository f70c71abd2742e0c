/*
 * output.c: renders the verdicts of one check in the formats of
 * "kgate check --format": text, markdown, json, junit and github.
 *
 * Every name a format carries goes through the format's escaper in
 * escape.c (Markdown, XML, JSON, GitHub workflow commands, terminal text).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/escape.h"
#include "kgate/nccl.h"
#include "kgate/ranks.h"
#include "kgate/explain.h"
#include "kgate/github.h"
#include "kgate/metric.h"
#include "kgate/output.h"
#include "kgate/util.h"

const char *const output_format_names[] = { "text", "markdown", "json", "junit", "github", NULL };

int output_format_parse(const char *s, enum kg_format *out)
{
	for (size_t i = 0; output_format_names[i]; i++)
		if (strcmp(s, output_format_names[i]) == 0) {
			*out = (enum kg_format)i;
			return 0;
		}
	return -1;
}

const char *output_format_choices(void)
{
	return "text, markdown, json, junit, github";
}

/* ---- numbers ---- */

/* A value in its unit, as every output writes it (metric.c). */
static void fmt_value(struct kg_buf *b, double v, const char *unit)
{
	metric_format_value(b, v, unit);
}

static void fmt_pct(struct kg_buf *b, double x)
{
	if (isnan(x))
		buf_adds(b, "-");
	else if (isinf(x))
		buf_adds(b, x > 0 ? "+inf" : "-inf");
	else
		buf_printf(b, "%+.2f%%", 100 * x);
}

static void fmt_interval(struct kg_buf *b, const struct kg_result *r)
{
	if (isnan(r->lo) || isnan(r->hi)) {
		buf_adds(b, "-");
		return;
	}
	buf_printf(b, "[%+.2f%%, %+.2f%%]", 100 * r->lo, 100 * r->hi);
}

static void fmt_p(struct kg_buf *b, double p)
{
	if (isnan(p))
		buf_adds(b, "-");
	else if (p < 1e-4)
		buf_printf(b, "%.1e", p);
	else
		buf_printf(b, "%.4f", p);
}

static const char *kernel_label(const struct kg_result *r)
{
	return r->demangled && *r->demangled ? r->demangled : r->kernel;
}

/* Shown in short outputs: everything but passes (unless asked). */
static int result_shown(const struct kg_check_info *info, const struct kg_result *r)
{
	return info->all || r->verdict != KG_VERDICT_PASS;
}

static void summary_line(struct kg_buf *b, const struct kg_check_info *info)
{
	verdict_outcome_counts(info->outcome, b);
}

/* The policy that made a row other than FAIL fail the check, or NULL. */
static const char *policy_of(const struct kg_result *r)
{
	if (!r->fails || r->verdict == KG_VERDICT_FAIL)
		return NULL;
	switch (r->verdict) {
	case KG_VERDICT_NEW: return "on_new_kernel: fail";
	case KG_VERDICT_MISSING: return "on_missing_kernel: fail";
	case KG_VERDICT_INCONCLUSIVE: return "on_inconclusive: fail";
	default: return NULL;
	}
}

/* The check's verdict with what decided its exit status, for the
 * no-baseline case: "NO BASELINE (on_no_baseline: warn)". */
static void verdict_words(struct kg_buf *b, const struct kg_outcome *o)
{
	buf_adds(b, verdict_name(o->verdict));
	if (o->verdict == KG_VERDICT_NO_BASELINE)
		buf_printf(b, " (on_no_baseline: %s)", o->exit_status ? "fail" : "warn");
}

/* The explanation of result r's kernel, or NULL; *idx gets its index. */
static const struct kg_explanation *why_of(const struct kg_check_info *info,
					   const struct kg_result *r, size_t *idx)
{
	for (size_t i = 0; i < info->n_why; i++) {
		const struct kg_explanation *x = &info->why[i];
		if (!strcmp(x->benchmark, r->benchmark) && !strcmp(x->nvtx, r->nvtx) &&
		    (!strcmp(x->base_kernel, r->kernel) || !strcmp(x->head_kernel, r->kernel))) {
			if (idx)
				*idx = i;
			return x;
		}
	}
	return NULL;
}

/* ---- text ---- */

#define TEXT_COLS 7
#define NAME_MAX_TEXT 60

static const char *verdict_color(enum kg_verdict v)
{
	switch (v) {
	case KG_VERDICT_FAIL: return "\033[1;31m";
	case KG_VERDICT_PASS: return "\033[32m";
	case KG_VERDICT_INCONCLUSIVE: return "\033[33m";
	case KG_VERDICT_MISSING: return "\033[35m";
	case KG_VERDICT_NEW: return "\033[36m";
	case KG_VERDICT_CHANGED: return "\033[34m";
	default: return "";
	}
}

/* The "slowest rank" lines: per kernel and metric compared on several
 * ranks, the rank whose median moved most; those with a rank not PASS
 * (every one with --all). */
static void text_slowest(struct kg_buf *out, const struct kg_check_info *info,
			 const struct kg_gate *g)
{
	struct kg_slowest *sl;
	size_t n;

	ranks_slowest(g, info->all, &sl, &n);
	for (size_t i = 0; i < n; i++) {
		const struct kg_slowest *s = &sl[i];
		char *kn = escape_fit_dup(kernel_label(s->slow), 2 * NAME_MAX_TEXT);
		struct kg_buf a = KG_BUF_INIT, b = KG_BUF_INIT;
		fmt_pct(&a, s->slow->shift);
		fmt_pct(&b, s->fast->shift);
		buf_adds(out, "slowest rank: ");
		escape_text(out, s->slow->benchmark);
		buf_adds(out, ": ");
		buf_adds(out, kn);
		buf_printf(out, " %s: rank %d %s (of %zu ranks; rank %d %s)\n", s->slow->metric,
			   s->slow->rank, a.s, s->n_ranks, s->fast->rank, b.s);
		buf_free(&a);
		buf_free(&b);
		free(kn);
	}
	if (n)
		buf_addc(out, '\n');
	free(sl);
}

/* The communication kernels shown, each with what its name says
 * (nccl.h): "communication: KERNEL: AllReduce Sum f32 RING/LL". */
static void text_communication(struct kg_buf *out, const struct kg_check_info *info,
			       const struct kg_result *const *shown, size_t ns)
{
	size_t said = 0;
	(void)info;
	for (size_t i = 0; i < ns; i++) {
		char d[96];
		const struct kg_result *r = shown[i];
		if (*nccl_describe(r->kernel, d, sizeof d) == '\0')
			continue;
		int dup = 0;
		for (size_t j = 0; j < i && !dup; j++)
			dup = !strcmp(shown[j]->kernel, r->kernel);
		if (dup)
			continue;
		char *kn = escape_fit_dup(kernel_label(r), 2 * NAME_MAX_TEXT);
		buf_adds(out, KG_CAT_COMM ": ");
		buf_adds(out, kn);
		buf_printf(out, ": %s\n", d);
		free(kn);
		said++;
	}
	if (said)
		buf_addc(out, '\n');
}

static void render_text(const struct kg_check_info *info, const struct kg_gate *g, int color,
			struct kg_buf *out)
{
	static const char *const head[TEXT_COLS] = { "VERDICT", "KERNEL", "METRIC", "BASE", "HEAD",
						      "CHANGE", "INTERVAL" };
	size_t rows = 0;
	for (size_t i = 0; i < g->n; i++)
		rows += result_shown(info, &g->r[i]);
	char **cell = xcalloc((rows + 1) * TEXT_COLS, sizeof *cell);
	size_t width[TEXT_COLS];
	for (int c = 0; c < TEXT_COLS; c++) {
		cell[c] = xstrdup(head[c]);
		width[c] = strlen(head[c]);
	}
	size_t k = TEXT_COLS;
	const struct kg_result **shown = xcalloc(rows + 1, sizeof *shown);
	size_t ns = 0;
	for (size_t i = 0; i < g->n; i++) {
		const struct kg_result *r = &g->r[i];
		if (!result_shown(info, r))
			continue;
		shown[ns++] = r;
		struct kg_buf b = KG_BUF_INIT;
		cell[k++] = xstrdup(gate_verdict_name(r->verdict));
		char *name = xasprintf("%s%s%s%s", r->benchmark, *r->nvtx ? " [" : "", r->nvtx,
				       *r->nvtx ? "]" : "");
		char *kname = r->ranked ? xasprintf("%s (rank %d): %s", name, r->rank, kernel_label(r))
					: xasprintf("%s: %s", name, kernel_label(r));
		cell[k++] = escape_fit_dup(kname, NAME_MAX_TEXT);
		free(name);
		free(kname);
		cell[k++] = escape_fit_dup(*r->metric ? r->metric : "-", NAME_MAX_TEXT);
		fmt_value(&b, r->base, r->unit);
		cell[k++] = buf_detach(&b);
		fmt_value(&b, r->head, r->unit);
		cell[k++] = buf_detach(&b);
		fmt_pct(&b, r->shift);
		cell[k++] = buf_detach(&b);
		fmt_interval(&b, r);
		cell[k++] = buf_detach(&b);
	}
	for (size_t i = 0; i < k; i++) {
		if (!cell[i])
			cell[i] = xstrdup("");
		size_t w = escape_width(cell[i]);
		if (w > width[i % TEXT_COLS])
			width[i % TEXT_COLS] = w;
	}

	char hs[KG_SHA_SHORT_BUF], bs[KG_SHA_SHORT_BUF];
	buf_adds(out, "kgate check: ");
	escape_text(out, kg_sha_short(hs, info->head_commit));
	buf_adds(out, " against ");
	escape_text(out, kg_sha_short(bs, info->baseline));
	if (info->n_base_runs)
		buf_printf(out, " (%zu run%s)", info->n_base_runs, info->n_base_runs == 1 ? "" : "s");
	if (info->gpu) {
		buf_adds(out, " on ");
		escape_text(out, info->gpu);
	}
	buf_adds(out, "\n\n");
	if (rows) {
		for (size_t row = 0; row <= rows; row++) {
			for (int c = 0; c < TEXT_COLS; c++) {
				const char *s = cell[row * TEXT_COLS + (size_t)c];
				int paint = color && row > 0 && c == 0;
				if (paint)
					buf_adds(out, verdict_color(shown[row - 1]->verdict));
				buf_adds(out, s);
				if (paint)
					buf_adds(out, "\033[0m");
				if (c < TEXT_COLS - 1) {
					size_t pad = width[c] - escape_width(s) + 2;
					for (size_t p = 0; p < pad; p++)
						buf_addc(out, ' ');
				}
			}
			buf_addc(out, '\n');
		}
		buf_addc(out, '\n');
	}
	for (size_t i = 0; i < ns; i++) {
		const struct kg_result *r = shown[i];
		if (r->verdict == KG_VERDICT_PASS)
			continue;
		char *bn = xasprintf("%s%s%s%s", r->benchmark, *r->nvtx ? " [" : "", r->nvtx,
				     *r->nvtx ? "]" : "");
		char *bc = escape_fit_dup(bn, 2 * NAME_MAX_TEXT);
		char *kn = escape_fit_dup(kernel_label(r), 2 * NAME_MAX_TEXT);
		buf_printf(out, "%s %s: %s", gate_verdict_name(r->verdict), bc, kn);
		if (r->ranked)
			buf_printf(out, " (rank %d)", r->rank);
		buf_printf(out, "%s%s: %s", *r->metric ? " " : "", r->metric, r->message);
		free(bn);
		free(bc);
		if (policy_of(r))
			buf_printf(out, " (fails: %s)", policy_of(r));
		if (!isnan(r->p_adj)) {
			buf_adds(out, " (p = ");
			fmt_p(out, r->p_adj);
			buf_addc(out, ')');
		}
		buf_addc(out, '\n');
		free(kn);
	}
	if (ns && shown[0]->verdict != KG_VERDICT_PASS)
		buf_addc(out, '\n');
	text_communication(out, info, shown, ns);
	text_slowest(out, info, g);
	if (!info->all && g->n_pass)
		buf_printf(out, "(%zu passing comparison%s not shown; --all shows them)\n", g->n_pass,
			   g->n_pass == 1 ? "" : "s");
	const struct kg_outcome *oc = info->outcome;
	if (oc->verdict == KG_VERDICT_NO_BASELINE)
		buf_printf(out, "no baseline: %s\n", oc->note ? oc->note : "nothing to compare with");
	if (oc->not_compared)
		buf_printf(out, "not compared: %s\n", oc->not_compared);
	summary_line(out, info);
	buf_adds(out, ": ");
	verdict_words(out, oc);
	buf_addc(out, '\n');
	for (size_t i = 0; i < info->n_why; i++) {
		buf_adds(out, "\nwhy: ");
		escape_text(out, info->why[i].why);   /* it names the kernel */
		buf_addc(out, '\n');
		explain_render(&info->why[i], KG_EXPLAIN_TEXT, out);
	}
	for (size_t i = 0; i < k; i++)
		free(cell[i]);
	free(cell);
	free(shown);
}

/* ---- markdown ---- */

void output_outcome_notes(struct kg_buf *b, const struct kg_outcome *o, int html)
{
	static const char *const lead[2][2] = {
		{ "**No baseline:** ", "**Not compared:** " },
		{ "<p>No baseline: ", "<p>Not compared: " },
	};
	const char *text[2] = {
		o->verdict != KG_VERDICT_NO_BASELINE ? NULL
		: o->note ? o->note : "nothing to compare with",
		o->not_compared,
	};

	html = !!html;
	for (int i = 0; i < 2; i++) {
		if (!text[i])
			continue;
		buf_adds(b, lead[html][i]);
		(html ? escape_html : escape_markdown)(b, text[i]);
		buf_adds(b, html ? ".</p>\n" : ".\n\n");
	}
}

void output_commit_markdown(struct kg_buf *b, const char *sha)
{
	char sh[KG_SHA_SHORT_BUF];
	char *url = github_commit_url(sha);
	if (url)
		buf_adds(b, "[");
	buf_adds(b, "`");
	escape_markdown_code(b, kg_sha_short(sh, sha));
	buf_adds(b, "`");
	if (url)
		buf_printf(b, "](%s)", url);
	free(url);
}

static void render_markdown(const struct kg_check_info *info, const struct kg_gate *g,
			    struct kg_buf *out)
{
	const struct kg_outcome *oc = info->outcome;
	int failed = oc->exit_status != KG_EXIT_PASS;
	buf_printf(out, "### kgate: %s\n\n",
		   oc->verdict == KG_VERDICT_NO_BASELINE
			   ? (failed ? ":x: NO BASELINE: nothing compared (on\\_no\\_baseline: fail)"
				     : ":warning: NO BASELINE: nothing compared")
		   : failed ? ":x: FAIL: performance regression"
			    : ":white_check_mark: PASS: no regression");
	buf_adds(out, "Head ");
	output_commit_markdown(out, info->head_commit);
	buf_adds(out, " against ");
	output_commit_markdown(out, info->baseline_sha ? info->baseline_sha : info->baseline);
	if (info->baseline_reason) {
		buf_adds(out, " (");
		escape_markdown(out, info->baseline_reason);
		buf_adds(out, ")");
	}
	buf_printf(out, " (%zu baseline run%s)", info->n_base_runs, info->n_base_runs == 1 ? "" : "s");
	if (info->gpu) {
		buf_adds(out, " on ");
		escape_markdown(out, info->gpu);
	}
	buf_adds(out, ". ");
	summary_line(out, info);
	buf_adds(out, ".\n\n");
	output_outcome_notes(out, oc, 0);
	size_t shown = 0;
	for (size_t i = 0; i < g->n; i++)
		shown += result_shown(info, &g->r[i]);
	if (shown) {
		buf_adds(out, "| Verdict | Benchmark | Kernel | Metric | Base | Head | Change | Interval | p |\n"
			      "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
		for (size_t i = 0; i < g->n; i++) {
			const struct kg_result *r = &g->r[i];
			if (!result_shown(info, r))
				continue;
			buf_printf(out, "| %s%s%s%s | ", r->fails ? "**" : "",
				   gate_verdict_name(r->verdict), r->fails ? "**" : "",
				   policy_of(r) ? " (fails)" : "");
			escape_markdown(out, r->benchmark);
			if (*r->nvtx) {
				buf_adds(out, " <sub>");
				escape_markdown(out, r->nvtx);
				buf_adds(out, "</sub>");
			}
			buf_adds(out, " | <code>");
			escape_markdown_code(out, kernel_label(r));
			buf_adds(out, "</code>");
			if (r->ranked)
				buf_printf(out, " rank %d", r->rank);
			char d[96];
			if (*nccl_describe(r->kernel, d, sizeof d)) {
				buf_adds(out, " <sub>" KG_CAT_COMM ": ");
				escape_markdown(out, d);
				buf_adds(out, "</sub>");
			}
			buf_adds(out, " | ");
			if (*r->metric) {
				buf_adds(out, "<code>");
				escape_markdown_code(out, r->metric);
				buf_adds(out, "</code>");
			} else {
				buf_adds(out, "-");
			}
			buf_adds(out, " | ");
			fmt_value(out, r->base, r->unit);
			buf_adds(out, " | ");
			fmt_value(out, r->head, r->unit);
			buf_adds(out, " | ");
			fmt_pct(out, r->shift);
			buf_adds(out, " | ");
			fmt_interval(out, r);
			buf_adds(out, " | ");
			fmt_p(out, r->p_adj);
			buf_adds(out, " |\n");
		}
		buf_addc(out, '\n');
	}
	struct kg_slowest *sl;
	size_t n_sl;
	ranks_slowest(g, info->all, &sl, &n_sl);
	for (size_t i = 0; i < n_sl; i++) {
		const struct kg_slowest *s = &sl[i];
		buf_adds(out, i ? "" : "**Slowest rank** (the rank whose median moved most):\n\n");
		buf_adds(out, "- ");
		escape_markdown(out, s->slow->benchmark);
		buf_adds(out, ": <code>");
		escape_markdown_code(out, kernel_label(s->slow));
		buf_adds(out, "</code> <code>");
		escape_markdown_code(out, s->slow->metric);
		buf_printf(out, "</code>: **rank %d** ", s->slow->rank);
		fmt_pct(out, s->slow->shift);
		buf_printf(out, " (of %zu ranks; rank %d ", s->n_ranks, s->fast->rank);
		fmt_pct(out, s->fast->shift);
		buf_adds(out, ")\n");
	}
	if (n_sl)
		buf_addc(out, '\n');
	free(sl);
	if (!info->all && g->n_pass)
		buf_printf(out, "%zu passing comparison%s not shown.\n", g->n_pass, g->n_pass == 1 ? "" : "s");
	for (size_t i = 0; i < info->n_why; i++) {
		buf_adds(out, "\n**Why:** ");
		escape_markdown(out, info->why[i].why);
		buf_adds(out, "\n\n");
		explain_render(&info->why[i], KG_EXPLAIN_MARKDOWN, out);
	}
}

/* ---- json ---- */

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *jstr(const char *s)
{
	char *c = escape_utf8_dup(s);
	json_t *j = json_string(c);
	free(c);
	return j ? j : json_string("");
}

#define JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))

/* Where the JSON goes: a buffer, or a stream written as it is made. */
struct jsink {
	struct kg_buf *buf;
	FILE *fp;
};

static void jput(struct jsink *k, const char *s, size_t n)
{
	if (k->buf)
		buf_add(k->buf, s, n);
	else if (k->fp)
		fwrite(s, 1, n, k->fp);
}

static void jputs(struct jsink *k, const char *s)
{
	jput(k, s, strlen(s));
}

/* s (one dumped value) at a deeper level: each line break indented more. */
static void jput_indented(struct jsink *k, const char *s, const char *indent)
{
	const char *p;
	size_t il = strlen(indent);
	while ((p = strchr(s, '\n')) != NULL) {
		jput(k, s, (size_t)(p - s) + 1);
		jput(k, indent, il);
		s = p + 1;
	}
	jput(k, s, strlen(s));
}

static json_t *json_result(const struct kg_check_info *info, const struct kg_result *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "benchmark", jstr(r->benchmark));
	json_object_set_new(o, "nvtx", jstr(r->nvtx));
	json_object_set_new(o, "kernel", jstr(r->kernel));
	json_object_set_new(o, "demangled", jstr(kernel_label(r)));
	json_object_set_new(o, "rank", r->ranked ? json_integer(r->rank) : json_null());
	json_object_set_new(o, "category", json_string(nccl_category(r->kernel)));
	struct kg_nccl nc;
	if (nccl_parse(r->kernel, &nc)) {
		json_t *c = json_object();
		json_object_set_new(c, "collective", jstr(nc.collective));
		json_object_set_new(c, "op", nc.op[0] ? jstr(nc.op) : json_null());
		json_object_set_new(c, "type", nc.type[0] ? jstr(nc.type) : json_null());
		json_object_set_new(c, "algorithm", nc.algorithm[0] ? jstr(nc.algorithm) : json_null());
		json_object_set_new(c, "protocol", nc.protocol[0] ? jstr(nc.protocol) : json_null());
		json_object_set_new(o, "nccl", c);
	}
	json_object_set_new(o, "metric", *r->metric ? jstr(r->metric) : json_null());
	json_object_set_new(o, "unit", jstr(r->unit));
	json_object_set_new(o, "verdict", json_string(gate_verdict_name(r->verdict)));
	json_object_set_new(o, "fails", json_boolean(r->fails));
	json_object_set_new(o, "deterministic", json_boolean(r->deterministic));
	json_object_set_new(o, "higher_is_better", json_boolean(r->higher_is_better));
	json_object_set_new(o, "base", jnum(r->base));
	json_object_set_new(o, "head", jnum(r->head));
	json_object_set_new(o, "shift", jnum(r->shift));
	json_object_set_new(o, "lo", jnum(r->lo));
	json_object_set_new(o, "hi", jnum(r->hi));
	json_object_set_new(o, "p", jnum(r->p));
	json_object_set_new(o, "p_adj", jnum(r->p_adj));
	json_object_set_new(o, "threshold", jnum(r->threshold));
	json_object_set_new(o, "n_base", json_integer((json_int_t)r->n_base));
	json_object_set_new(o, "n_head", json_integer((json_int_t)r->n_head));
	json_object_set_new(o, "message", jstr(r->message));
	if (!isnan(r->cycle_shift)) {
		json_object_set_new(o, "cycle_shift", jnum(r->cycle_shift));
		json_object_set_new(o, "cycle_source", jstr(r->cycle_source));
	}
	const struct kg_explanation *x = why_of(info, r, NULL);
	if (x)
		json_object_set_new(o, "why", jstr(x->why));
	return o;
}

/* The document jansson would print for the whole tree, written part by
 * part: the head fields, then each result as its own small tree (a check's
 * results would otherwise all be held as one tree, about 5.7 KB each). */
static void render_json_to(const struct kg_check_info *info, const struct kg_gate *g,
			   struct jsink *k)
{
	json_t *root = json_object();
	json_object_set_new(root, "format", json_integer(1));
	json_object_set_new(root, "head", info->head_commit ? jstr(info->head_commit) : json_null());
	json_object_set_new(root, "baseline", info->baseline_sha ? jstr(info->baseline_sha) : json_null());
	json_object_set_new(root, "baseline_reason",
			    info->baseline_reason ? jstr(info->baseline_reason) : json_null());
	json_object_set_new(root, "gpu", info->gpu ? jstr(info->gpu) : json_null());
	json_object_set_new(root, "baseline_runs", json_integer((json_int_t)info->n_base_runs));
	const struct kg_outcome *oc = info->outcome;
	json_object_set_new(root, "verdict", json_string(verdict_name(oc->verdict)));
	json_object_set_new(root, "exit_status", json_integer(oc->exit_status));
	json_t *pol = json_object();
	json_object_set_new(pol, "on_new_kernel", json_string(verdict_policy_name((enum kg_policy)oc->on_new_kernel)));
	json_object_set_new(pol, "on_missing_kernel",
			    json_string(verdict_policy_name((enum kg_policy)oc->on_missing_kernel)));
	json_object_set_new(pol, "on_inconclusive",
			    json_string(verdict_policy_name((enum kg_policy)oc->on_inconclusive)));
	json_object_set_new(pol, "on_no_baseline",
			    json_string(verdict_policy_name((enum kg_policy)oc->on_no_baseline)));
	json_object_set_new(root, "policies", pol);
	json_object_set_new(root, "no_baseline", oc->verdict == KG_VERDICT_NO_BASELINE && oc->note
			    ? jstr(oc->note) : json_null());
	json_object_set_new(root, "not_compared", oc->not_compared ? jstr(oc->not_compared) : json_null());
	json_t *sum = json_object();
	json_object_set_new(sum, "failed", json_integer((json_int_t)oc->n_fail));
	json_object_set_new(sum, "passed", json_integer((json_int_t)oc->n_pass));
	json_object_set_new(sum, "inconclusive", json_integer((json_int_t)oc->n_inconclusive));
	json_object_set_new(sum, "new", json_integer((json_int_t)oc->n_new));
	json_object_set_new(sum, "missing", json_integer((json_int_t)oc->n_missing));
	json_object_set_new(sum, "failing", json_integer((json_int_t)oc->n_failing));
	json_object_set_new(sum, "changed", json_integer((json_int_t)oc->n_changed));
	json_object_set_new(root, "summary", sum);
	struct kg_slowest *sl;
	size_t n_sl;
	ranks_slowest(g, 1, &sl, &n_sl);
	if (n_sl || ranks_any(g)) {
		json_t *a = json_array();
		for (size_t i = 0; i < n_sl; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "benchmark", jstr(sl[i].slow->benchmark));
			json_object_set_new(o, "nvtx", jstr(sl[i].slow->nvtx));
			json_object_set_new(o, "kernel", jstr(sl[i].slow->kernel));
			json_object_set_new(o, "metric", jstr(sl[i].slow->metric));
			json_object_set_new(o, "rank", json_integer(sl[i].slow->rank));
			json_object_set_new(o, "shift", jnum(sl[i].slow->shift));
			json_object_set_new(o, "fastest_rank", json_integer(sl[i].fast->rank));
			json_object_set_new(o, "fastest_shift", jnum(sl[i].fast->shift));
			json_object_set_new(o, "ranks", json_integer((json_int_t)sl[i].n_ranks));
			json_array_append_new(a, o);
		}
		json_object_set_new(root, "slowest_ranks", a);
	}
	free(sl);
	char *s = escape_json_dumped(json_dumps(root, JSON_FLAGS));
	json_decref(root);
	size_t l = strlen(s);
	jput(k, s, l - 2); /* without the closing "\n}" */
	free(s);
	if (!g->n) {
		jputs(k, ",\n  \"results\": []");
	} else {
		jputs(k, ",\n  \"results\": [\n    ");
		for (size_t i = 0; i < g->n; i++) {
			json_t *o = json_result(info, &g->r[i]);
			s = escape_json_dumped(json_dumps(o, JSON_FLAGS));
			json_decref(o);
			if (i)
				jputs(k, ",\n    ");
			jput_indented(k, s, "    ");
			free(s);
		}
		jputs(k, "\n  ]");
	}
	if (info->n_why) {
		json_t *xs = json_array(), *w = json_object();
		for (size_t i = 0; i < info->n_why; i++) {
			const struct kg_explanation *x = &info->why[i];
			char *d = explain_to_json(x);
			json_t *o = json_object();
			json_object_set_new(o, "benchmark", jstr(x->benchmark));
			json_object_set_new(o, "nvtx", jstr(x->nvtx));
			json_object_set_new(o, "base_kernel", jstr(x->base_kernel));
			json_object_set_new(o, "head_kernel", jstr(x->head_kernel));
			json_object_set_new(o, "why", jstr(x->why));
			json_object_set_new(o, "details", json_loads(d, 0, NULL));
			json_array_append_new(xs, o);
			free(d);
		}
		json_object_set_new(w, "explanations", xs);
		s = escape_json_dumped(json_dumps(w, JSON_FLAGS));
		json_decref(w);
		l = strlen(s);
		jputs(k, ",");
		jput(k, s + 1, l - 3); /* "\n  \"explanations\": [...]" */
		free(s);
	}
	jputs(k, "\n}\n");
}

static void render_json(const struct kg_check_info *info, const struct kg_gate *g,
			struct kg_buf *out)
{
	struct jsink k = { out, NULL };
	render_json_to(info, g, &k);
}

/* ---- junit ---- */

static void render_junit(const struct kg_check_info *info, const struct kg_gate *g,
			 struct kg_buf *out)
{
	size_t fails = 0, skipped = 0;
	char *told = xcalloc(info->n_why + 1, 1);
	const struct kg_outcome *oc = info->outcome;
	int nb = oc->verdict == KG_VERDICT_NO_BASELINE;
	for (size_t i = 0; i < g->n; i++) {
		fails += g->r[i].fails;
		skipped += !g->r[i].fails && g->r[i].verdict != KG_VERDICT_PASS &&
			   g->r[i].verdict != KG_VERDICT_CHANGED;
	}
	/* no baseline is one test case of its own: a failure under
	 * on_no_baseline: fail, else skipped */
	fails += nb && oc->exit_status;
	skipped += nb && !oc->exit_status;
	size_t tests = g->n + (size_t)nb;
	buf_adds(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	buf_printf(out, "<testsuites name=\"kgate\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n",
		   tests, fails, skipped);
	char hs[KG_SHA_SHORT_BUF], bs[KG_SHA_SHORT_BUF];
	buf_adds(out, "  <testsuite name=\"kgate check ");
	escape_xml(out, kg_sha_short(hs, info->head_commit));
	buf_adds(out, " against ");
	escape_xml(out, kg_sha_short(bs, info->baseline));
	buf_printf(out, "\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n", tests, fails, skipped);
	if (nb) {
		const char *tag = oc->exit_status ? "failure" : "skipped";
		buf_printf(out, "    <testcase classname=\"kgate\" name=\"baseline\">\n      <%s type=\"%s\""
			   " message=\"", tag, verdict_name(oc->verdict));
		escape_xml(out, oc->note ? oc->note : "nothing to compare with");
		buf_printf(out, "\"/>\n    </testcase>\n");
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct kg_result *r = &g->r[i];
		buf_adds(out, "    <testcase classname=\"");
		escape_xml(out, r->benchmark);
		if (*r->nvtx) {
			buf_addc(out, '/');
			escape_xml(out, r->nvtx);
		}
		buf_adds(out, "\" name=\"");
		escape_xml(out, kernel_label(r));
		if (r->ranked)
			buf_printf(out, " (rank %d)", r->rank);
		if (*r->metric) {
			buf_addc(out, ' ');
			escape_xml(out, r->metric);
		}
		buf_adds(out, "\"");
		if (r->verdict == KG_VERDICT_PASS) {
			buf_adds(out, "/>\n");
			continue;
		}
		if (r->verdict == KG_VERDICT_CHANGED && !r->fails) {
			/* a change that passes: said, not skipped */
			buf_adds(out, ">\n      <system-out>CHANGED: ");
			escape_xml(out, r->message);
			buf_adds(out, "</system-out>\n    </testcase>\n");
			continue;
		}
		buf_adds(out, ">\n      <");
		const char *tag = r->fails ? "failure" : "skipped";
		buf_printf(out, "%s type=\"%s\" message=\"", tag, gate_verdict_name(r->verdict));
		escape_xml(out, r->message);
		if (policy_of(r)) {
			escape_xml(out, " (fails: ");
			escape_xml(out, policy_of(r));
			escape_xml(out, ")");
		}
		buf_adds(out, "\">");
		struct kg_buf d = KG_BUF_INIT;
		buf_adds(&d, "base ");
		fmt_value(&d, r->base, r->unit);
		buf_adds(&d, ", head ");
		fmt_value(&d, r->head, r->unit);
		buf_adds(&d, ", change ");
		fmt_pct(&d, r->shift);
		buf_adds(&d, ", interval ");
		fmt_interval(&d, r);
		buf_adds(&d, ", p ");
		fmt_p(&d, r->p_adj);
		size_t xi;
		const struct kg_explanation *x = r->fails ? why_of(info, r, &xi) : NULL;
		if (x) {
			/* the details once per kernel, with its first failure */
			buf_printf(&d, "\nwhy: %s\n", x->why);
			if (!told[xi])
				explain_render(x, KG_EXPLAIN_TEXT, &d);
			told[xi] = 1;
		}
		escape_xml(out, d.s);
		buf_free(&d);
		buf_printf(out, "</%s>\n    </testcase>\n", tag);
	}
	buf_adds(out, "  </testsuite>\n</testsuites>\n");
	free(told);
}

/* ---- github ---- */

static void render_github(const struct kg_check_info *info, const struct kg_gate *g,
			  struct kg_buf *out)
{
	char *told = xcalloc(info->n_why + 1, 1);
	for (size_t i = 0; i < g->n; i++) {
		const struct kg_result *r = &g->r[i];
		if (r->verdict == KG_VERDICT_PASS || r->verdict == KG_VERDICT_SKIP)
			continue;
		buf_printf(out, "::%s title=", r->fails ? "error"
			   : r->verdict == KG_VERDICT_CHANGED ? "notice" : "warning");
		struct kg_buf t = KG_BUF_INIT;
		buf_printf(&t, "kgate %s: %s", gate_verdict_name(r->verdict), r->benchmark);
		if (r->ranked)
			buf_printf(&t, " rank %d", r->rank);
		escape_workflow(out, t.s, 1);
		buf_free(&t);
		buf_adds(out, "::");
		struct kg_buf m = KG_BUF_INIT;
		buf_printf(&m, "%s%s%s%s: %s%s%s%s (base ", kernel_label(r), *r->nvtx ? " [" : "",
			   r->nvtx, *r->nvtx ? "]" : "", r->message, policy_of(r) ? " (fails: " : "",
			   policy_of(r) ? policy_of(r) : "", policy_of(r) ? ")" : "");
		fmt_value(&m, r->base, r->unit);
		buf_adds(&m, ", head ");
		fmt_value(&m, r->head, r->unit);
		buf_adds(&m, ", change ");
		fmt_pct(&m, r->shift);
		if (*r->metric)
			buf_printf(&m, ", %s", r->metric);
		buf_adds(&m, ")");
		size_t xi;
		const struct kg_explanation *x = why_of(info, r, &xi);
		if (x && !told[xi]) {
			buf_printf(&m, "\nwhy: %s", x->why);
			told[xi] = 1;
		}
		escape_workflow(out, m.s, 0);
		buf_free(&m);
		buf_addc(out, '\n');
	}
	const struct kg_outcome *oc = info->outcome;
	if (oc->verdict == KG_VERDICT_NO_BASELINE) {
		buf_printf(out, "::%s title=", oc->exit_status ? "error" : "warning");
		escape_workflow(out, "kgate NO BASELINE", 1);
		buf_adds(out, "::");
		struct kg_buf m = KG_BUF_INIT;
		buf_printf(&m, "nothing compared: %s (on_no_baseline: %s)",
			   oc->note ? oc->note : "no baseline", oc->exit_status ? "fail" : "warn");
		escape_workflow(out, m.s, 0);
		buf_free(&m);
		buf_addc(out, '\n');
	}
	if (oc->not_compared) {
		buf_adds(out, "::notice title=kgate not compared::");
		escape_workflow(out, oc->not_compared, 0);
		buf_addc(out, '\n');
	}
	struct kg_buf s = KG_BUF_INIT;
	char hs[KG_SHA_SHORT_BUF], bs[KG_SHA_SHORT_BUF];
	buf_printf(&s, "kgate: %s against %s: ", kg_sha_short(hs, info->head_commit),
		   kg_sha_short(bs, info->baseline));
	summary_line(&s, info);
	buf_adds(&s, ": ");
	verdict_words(&s, oc);
	buf_adds(out, "::notice title=kgate::");
	escape_workflow(out, s.s, 0);
	buf_addc(out, '\n');
	buf_free(&s);
	free(told);
}

void output_write(enum kg_format f, const struct kg_check_info *info, const struct kg_gate *g,
		  int color, FILE *fp)
{
	if (f == KG_FMT_JSON) {
		struct jsink k = { NULL, fp };
		render_json_to(info, g, &k);
		if (fp == stdout)
			kg_json_document_written();
		return;
	}
	struct kg_buf b = KG_BUF_INIT;
	output_render(f, info, g, color, &b);
	fwrite(b.s, 1, b.len, fp);
	buf_free(&b);
}

void output_render(enum kg_format f, const struct kg_check_info *info, const struct kg_gate *g,
		   int color, struct kg_buf *out)
{
	switch (f) {
	case KG_FMT_TEXT: render_text(info, g, color, out); break;
	case KG_FMT_MARKDOWN: render_markdown(info, g, out); break;
	case KG_FMT_JSON: render_json(info, g, out); break;
	case KG_FMT_JUNIT: render_junit(info, g, out); break;
	case KG_FMT_GITHUB: render_github(info, g, out); break;
	}
	if (out && !out->s)
		buf_adds(out, "");
}
