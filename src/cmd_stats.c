/*
 * cmd_stats.c: "kgate stats": the summary tables of one stored run, in the
 * style of "nsys stats": kernel_sum (one row per benchmark and kernel) and
 * nvtx_sum (one row per benchmark and NVTX path, over the kernels launched
 * inside the range).  Owns the choice of run, the statistics of each row and
 * the three output formats (aligned text, RFC 4180 CSV, JSON via jansson).
 * The queries are the store's (store_summary_values).
 */
#include "cmd.h"
#include "kgate/escape.h"
#include "kgate/ghevent.h"
#include "kgate/gpustate.h"
#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/stats.h"
#include "kgate/check.h"
#include "kgate/store.h"
#include "kgate/util.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char synopsis[] =
	"usage: kgate stats [--db PATH] [--commit SHA | --run ID]\n"
	"                   --report kernel_sum|nvtx_sum|gpu_state [--metric NAME]\n"
	"                   [--format text|json|csv]\n"
	"\n"
	"Summary tables of one stored run, in the style of nsys stats, sorted by\n"
	"total descending.  Each row gives Time (%) (its share of the table's\n"
	"total), the total, the number of instances, and the average, median,\n"
	"minimum, maximum and sample standard deviation of the metric.\n"
	"\n"
	"  kernel_sum   one row per benchmark and kernel (demangled name); the\n"
	"               instances are the kernel's launches over all repeats\n"
	"  nvtx_sum     one row per benchmark and NVTX path: it summarises the\n"
	"               kernel time grouped by the NVTX path active at launch\n"
	"               (the instances are kernel launches, not range instances;\n"
	"               kgate does not store the time of a range itself); kernels\n"
	"               launched outside any range are the row '(none)'\n"
	"  gpu_state    one row per benchmark: what the GPU was doing around its\n"
	"               processes, as NVML reported it (SM clock range, hottest\n"
	"               temperature, most power drawn, and any throttling or other\n"
	"               compute process seen); 'not recorded' and why without NVML\n";

static const char epilogue[] =
	"Exit status: 0 printed; 2 bad usage, no such run or metric;\n"
	"3 database error (or no such database).\n";

static const char *const reports[] = { "kernel_sum", "nvtx_sum", "gpu_state", NULL };
static const char *const formats[] = { "text", "json", "csv", NULL };

#define DEFAULT_METRIC "gpu__time_duration.sum"
#define NAME_WIDTH 60
#define BENCH_WIDTH 24

enum fmt { FMT_TEXT, FMT_JSON, FMT_CSV };

struct row {
	const char *benchmark, *name;
	double pct, total, avg, med, min, max, sd;
	size_t n;
};

static int row_cmp(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	int c;

	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	if ((c = strcmp(a->benchmark, b->benchmark)) != 0)
		return c;
	return strcmp(a->name, b->name);
}

/* ---- number formatting ---------------------------------------------- */

/* v with a thousands separator and the given decimals: "1,179,968.0". */
static void fmt_grouped(char *out, size_t len, double v, int decimals)
{
	char raw[64], *dot;
	size_t o = 0, i = 0, ndig;

	if (!isfinite(v)) {
		snprintf(out, len, "%s", isnan(v) ? "n/a" : v > 0 ? "inf" : "-inf");
		return;
	}
	snprintf(raw, sizeof(raw), "%.*f", decimals, v);
	if (raw[0] == '-' && o + 1 < len) {
		out[o++] = '-';
		i = 1;
	}
	dot = strchr(raw + i, '.');
	ndig = dot ? (size_t)(dot - (raw + i)) : strlen(raw + i);
	for (size_t k = 0; k < ndig && o + 2 < len; k++) {
		if (k && (ndig - k) % 3 == 0)
			out[o++] = ',';
		out[o++] = raw[i + k];
	}
	if (dot)
		for (const char *p = dot; *p && o + 1 < len; p++)
			out[o++] = *p;
	out[o] = '\0';
}

/* The shortest %g form that reads back as v (for CSV and exactness). */
static void fmt_exact(char *out, size_t len, double v)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(out, len, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

/* ---- text columns ----------------------------------------------------- */

#define NCOLS 10

static void print_text(const struct row *rows, size_t n, const char *const *head, int int_vals)
{
	char **cell = xcalloc((n + 1) * NCOLS, sizeof(*cell));
	size_t width[NCOLS] = { 0 };
	char num[80];

	for (int c = 0; c < NCOLS; c++)
		cell[c] = xstrdup(head[c]);
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		char **rc = &cell[(i + 1) * NCOLS];
		int d = int_vals ? 0 : 2, da = int_vals ? 1 : 3;

		fmt_grouped(num, sizeof(num), r->pct, 1);
		rc[0] = xstrdup(num);
		fmt_grouped(num, sizeof(num), r->total, d);
		rc[1] = xstrdup(num);
		rc[2] = xasprintf("%zu", r->n);
		fmt_grouped(num, sizeof(num), r->avg, da);
		rc[3] = xstrdup(num);
		fmt_grouped(num, sizeof(num), r->med, da);
		rc[4] = xstrdup(num);
		fmt_grouped(num, sizeof(num), r->min, d);
		rc[5] = xstrdup(num);
		fmt_grouped(num, sizeof(num), r->max, d);
		rc[6] = xstrdup(num);
		fmt_grouped(num, sizeof(num), r->sd, da);
		rc[7] = xstrdup(num);
		rc[8] = escape_fit_dup(r->benchmark, BENCH_WIDTH);
		rc[9] = escape_fit_dup(*r->name ? r->name : "(none)", NAME_WIDTH);
	}
	for (size_t i = 0; i <= n; i++)
		for (int c = 0; c < NCOLS; c++)
			if (escape_width(cell[i * NCOLS + c]) > width[c])
				width[c] = escape_width(cell[i * NCOLS + c]);
	for (size_t i = 0; i <= n; i++) {
		struct kg_buf line = KG_BUF_INIT;
		for (int c = 0; c < NCOLS; c++) {
			const char *t = cell[i * NCOLS + c];
			size_t pad = width[c] - escape_width(t);
			if (c)
				buf_adds(&line, "  ");
			if (c < 8) {                   /* numbers: right-aligned */
				for (size_t k = 0; k < pad; k++)
					buf_addc(&line, ' ');
				buf_adds(&line, t);
			} else {
				buf_adds(&line, t);
				if (c < NCOLS - 1)
					for (size_t k = 0; k < pad; k++)
						buf_addc(&line, ' ');
			}
		}
		puts(line.s);
		if (i == 0) {
			buf_reset(&line);
			for (int c = 0; c < NCOLS; c++) {
				if (c)
					buf_adds(&line, "  ");
				for (size_t k = 0; k < width[c]; k++)
					buf_addc(&line, '-');
			}
			puts(line.s);
		}
		buf_free(&line);
	}
	for (size_t i = 0; i < (n + 1) * NCOLS; i++)
		free(cell[i]);
	free(cell);
}

static void print_csv(const struct row *rows, size_t n, const char *const *head)
{
	struct kg_buf b = KG_BUF_INIT;
	char num[64];

	for (int c = 0; c < NCOLS; c++) {
		if (c)
			buf_addc(&b, ',');
		escape_csv(&b, head[c]);
	}
	buf_adds(&b, "\r\n");
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		const double v[] = { r->pct, r->total, (double)r->n, r->avg, r->med, r->min,
				     r->max, r->sd };
		for (int c = 0; c < 8; c++) {
			fmt_exact(num, sizeof(num), v[c]);
			buf_adds(&b, num);
			buf_addc(&b, ',');
		}
		escape_csv(&b, r->benchmark);
		buf_addc(&b, ',');
		escape_csv(&b, r->name);
		buf_adds(&b, "\r\n");
	}
	fwrite(b.s, 1, b.len, stdout);
	buf_free(&b);
}

static void print_json(const struct row *rows, size_t n, const struct kg_run_info *run,
		       const char *report, const char *metric, const char *unit)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		/* jansson refuses a string that is not UTF-8: repaired first */
		char *bench = escape_utf8_dup(r->benchmark), *name = escape_utf8_dup(r->name);
		json_array_append_new(arr, json_pack("{s:s, s:s, s:f, s:f, s:I, s:f, s:f, s:f, s:f, s:f}",
						     "benchmark", bench, "name", name,
						     "pct", r->pct, "total", r->total,
						     "instances", (json_int_t)r->n, "avg", r->avg,
						     "med", r->med, "min", r->min, "max", r->max,
						     "stddev", r->sd));
		free(bench);
		free(name);
	}
	char *commit = run->commit ? escape_utf8_dup(run->commit) : NULL;
	char *gpu = run->gpu_name ? escape_utf8_dup(run->gpu_name) : NULL;
	char *m = escape_utf8_dup(metric), *u = escape_utf8_dup(unit);
	json_t *o = json_pack("{s:I, s:s?, s:s?, s:s, s:s, s:s, s:o}", "run", (json_int_t)run->id,
			      "commit", commit, "gpu", gpu, "report", report,
			      "metric", m, "unit", u, "rows", arr);
	char *s = escape_json_dumped(json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(17)));
	puts(s);
	free(s);
	free(commit);
	free(gpu);
	free(m);
	free(u);
	json_decref(o);
}

/* ---- gpu_state: what the GPU was doing ---------------------------------- */

static int print_gpu_state(struct kg_store *st, const struct kg_run_info *run, enum fmt fmt)
{
	char **names = NULL, **states = NULL;
	size_t n = 0;
	int rc = store_run_gpu_states(st, run->id, &names, &states, &n);
	json_t *arr = json_array();
	struct kg_buf csv = KG_BUF_INIT;

	if (rc != KG_EXIT_PASS) {
		json_decref(arr);
		return rc;
	}
	if (fmt == FMT_TEXT) {
		char *sha = escape_text_dup(run->commit);
		printf("run %lld, commit %.12s: the GPU's state around each benchmark's processes\n\n",
		       (long long)run->id, sha);
		free(sha);
		if (!n)
			printf("(not recorded: the run was stored before kgate recorded GPU state, "
			       "or was ingested from files)\n");
	} else if (fmt == FMT_CSV) {
		buf_printf(&csv, "benchmark,processes,recorded,state,concerns\r\n");
	}
	for (size_t i = 0; i < n; i++) {
		struct kg_gpu_summary sum;
		char err[200], line[400], worry[400];
		json_error_t je;
		json_t *j = json_loads(states[i], 0, &je);

		if (!j || gpustate_summary_from_json(j, &sum, err, sizeof(err)) < 0) {
			kg_warn("run %lld, benchmark '%s': unreadable GPU state (%s)",
				(long long)run->id, names[i], j ? err : je.text);
			json_decref(j);
			continue;
		}
		gpustate_summary_line(&sum, line, sizeof(line));
		gpustate_summary_concerns(&sum, worry, sizeof(worry));
		if (fmt == FMT_TEXT) {
			char *b = escape_text_dup(names[i]), *l = escape_text_dup(line);
			char *w = escape_text_dup(worry);
			printf("%s: %s%s%s\n", b, l, *w ? "\n    seen: " : "", w);
			free(b);
			free(l);
			free(w);
		} else if (fmt == FMT_CSV) {
			escape_csv(&csv, names[i]);
			buf_printf(&csv, ",%d,%d,", sum.processes, sum.recorded);
			escape_csv(&csv, line);
			buf_addc(&csv, ',');
			escape_csv(&csv, worry);
			buf_printf(&csv, "\r\n");
		} else {
			json_object_set_new(j, "benchmark", json_string(names[i]));
			json_object_set_new(j, "summary", json_string(line));
			json_object_set_new(j, "concerns", json_string(worry));
			json_array_append(arr, j);
		}
		json_decref(j);
	}
	if (fmt == FMT_CSV) {
		fwrite(csv.s ? csv.s : "", 1, csv.len, stdout);
	} else if (fmt == FMT_JSON) {
		char *commit = run->commit ? escape_utf8_dup(run->commit) : NULL;
		char *gpu = run->gpu_name ? escape_utf8_dup(run->gpu_name) : NULL;
		json_t *o = json_pack("{s:I, s:s?, s:s?, s:s, s:O}", "run", (json_int_t)run->id,
				      "commit", commit, "gpu", gpu, "report", "gpu_state", "rows", arr);
		char *text = escape_json_dumped(json_dumps(o, JSON_INDENT(2)));
		puts(text);
		free(text);
		free(commit);
		free(gpu);
		json_decref(o);
	}
	buf_free(&csv);
	json_decref(arr);
	store_names_free(names, n);
	store_names_free(states, n);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		kg_error("cannot write the table to stdout");
		return KG_EXIT_RUNTIME;
	}
	return KG_EXIT_PASS;
}

/* ---- choosing the run --------------------------------------------------- */

static int newest_run(struct kg_store *st, const char *commit, struct kg_run_info *out,
		      int *found)
{
	struct kg_run_filter f = { 0 };
	struct kg_run_info *runs;
	size_t n;
	int rc;

	char *full = check_resolve_commit(st, commit);
	f.commit = full;
	f.limit = 1;
	*found = 0;
	rc = store_find_runs(st, &f, &runs, &n);
	free(full);
	if (rc != KG_EXIT_PASS)
		return rc;
	if (n) {
		*out = runs[0];
		memset(&runs[0], 0, sizeof(runs[0]));
		*found = 1;
	}
	store_runs_free(runs, n);
	return KG_EXIT_PASS;
}

static int pick_run(struct kg_store *st, const char *db, const char *commit, const char *run_s,
		    struct kg_run_info *run)
{
	int rc, found;

	if (run_s) {
		char *end;
		long long id = strtoll(run_s, &end, 10);
		if (*end || end == run_s || id <= 0) {
			kg_error("--run '%s' is not a run id (a positive integer)", run_s);
			return KG_EXIT_USAGE;
		}
		return store_run_get(st, (int64_t)id, run);
	}
	if (commit) {
		if ((rc = newest_run(st, commit, run, &found)) != KG_EXIT_PASS)
			return rc;
		if (!found) {
			kg_error("database '%s' has no run of commit '%s'", db, commit);
			return KG_EXIT_USAGE;
		}
		return KG_EXIT_PASS;
	}
	char *head = ghevent_head_commit();
	if (head) {
		rc = newest_run(st, head, run, &found);
		if (rc != KG_EXIT_PASS || found) {
			free(head);
			return rc;
		}
	}
	if ((rc = newest_run(st, NULL, run, &found)) != KG_EXIT_PASS) {
		free(head);
		return rc;
	}
	if (!found) {
		kg_error("database '%s' holds no runs; store one with 'kgate run' or 'kgate ingest'",
			 db);
		free(head);
		return KG_EXIT_USAGE;
	}
	if (head)
		kg_note("no run of HEAD (%.12s) in '%s'; showing the newest run, %lld (commit %.12s)",
			head, db, (long long)run->id, run->commit);
	else
		kg_note("not in a git repository; showing the newest run in '%s', %lld (commit %.12s)",
			db, (long long)run->id, run->commit);
	free(head);
	return KG_EXIT_PASS;
}

/* ---- the command -------------------------------------------------------- */

static void column_heads(const char *unit, const char *report, char **head)
{
	int is_time = !strcmp(unit, "ns");
	char u[64];

	if (*unit)
		snprintf(u, sizeof(u), " (%s)", unit);
	else
		u[0] = '\0';
	head[0] = xstrdup(is_time ? "Time (%)" : "Share (%)");
	head[1] = xasprintf("%s%s", is_time ? "Total Time" : "Total", u);
	head[2] = xstrdup("Instances");
	head[3] = xasprintf("Avg%s", u);
	head[4] = xasprintf("Med%s", u);
	head[5] = xasprintf("Min%s", u);
	head[6] = xasprintf("Max%s", u);
	head[7] = xasprintf("StdDev%s", u);
	head[8] = xstrdup("Benchmark");
	head[9] = xstrdup(strcmp(report, "nvtx_sum") ? "Name" : "Range");
}

int cmd_stats(int argc, char **argv)
{
	const char *db = store_default_db(), *commit = NULL, *run_s = NULL, *report = NULL;
	const char *metric = DEFAULT_METRIC;
	struct kg_store *st = NULL;
	struct kg_run_info run = { 0 };
	struct kg_summary_group *g = NULL;
	struct row *rows = NULL;
	size_t ng = 0;
	int fmt = FMT_TEXT, argi, rc;
	const struct kg_opt opts[] = {
		KG_OPT_STR("db", 0, "PATH", &db, "the database (default $KGATE_DB, else kgate.db), opened read-only"),
		KG_OPT_STR("commit", 0, "SHA", &commit,
			   "the newest run of this commit (default: git HEAD, or a pull request's "
			   "head commit in its Actions job; when there is no repository or no run of "
			   "HEAD, the newest run in the database, with a note on stderr)"),
		KG_OPT_STR("run", 0, "ID", &run_s, "the run with this id instead"),
		KG_OPT_ONEOF("report", 0, "R", &report, reports, "kernel_sum, nvtx_sum or gpu_state"),
		KG_OPT_STR("metric", 0, "NAME", &metric,
			   "the metric summarised (default gpu__time_duration.sum)"),
		KG_OPT_CHOICE("format", 0, "F", &fmt, formats,
			      "text (default: aligned columns, long names shortened with an "
			      "ellipsis), csv (RFC 4180, full names) or json"),
		KG_OPT_END
	};
	const struct kg_optspec spec = { "stats", synopsis, epilogue, opts, 0, 0 };

	if ((rc = opt_parse(&spec, argc, argv, &argi)) != KG_OPT_GO)
		return rc;
	if (!report) {
		kg_error("give --report kernel_sum, nvtx_sum or gpu_state");
		return KG_EXIT_USAGE;
	}
	if (commit && run_s) {
		kg_error("give --commit or --run, not both");
		return KG_EXIT_USAGE;
	}
	if (!*metric) {
		kg_error("--metric needs a metric name");
		return KG_EXIT_USAGE;
	}

	if ((rc = store_open(db, KG_STORE_READONLY, &st)) != KG_EXIT_PASS)
		goto out;
	if ((rc = pick_run(st, db, commit, run_s, &run)) != KG_EXIT_PASS)
		goto out;
	if (!strcmp(report, "gpu_state")) {
		rc = print_gpu_state(st, &run, fmt);
		goto out;
	}
	rc = store_summary_values(st, run.id, metric,
				  strcmp(report, "nvtx_sum") ? KG_SUMMARY_KERNEL : KG_SUMMARY_NVTX,
				  &g, &ng);
	if (rc != KG_EXIT_PASS)
		goto out;
	if (!ng) {
		char **names;
		size_t nn;
		if ((rc = store_run_metrics(st, run.id, &names, &nn)) != KG_EXIT_PASS)
			goto out;
		const char *near = kg_suggest(metric, (const char *const *)names, nn);
		struct kg_buf list = KG_BUF_INIT;
		for (size_t i = 0; i < nn; i++)
			buf_printf(&list, "%s%s", i ? ", " : "", names[i]);
		if (near)
			kg_error("run %lld has no samples of '%s'; did you mean '%s'?",
				 (long long)run.id, metric, near);
		else
			kg_error("run %lld has no samples of '%s'; it has: %s", (long long)run.id,
				 metric, nn ? list.s : "(none)");
		buf_free(&list);
		store_names_free(names, nn);
		rc = KG_EXIT_USAGE;
		goto out;
	}

	/* One row per group; Time (%) is the share of the table's total. */
	rows = xcalloc(ng, sizeof(*rows));
	double grand = 0;
	int int_vals = 1;
	for (size_t i = 0; i < ng; i++) {
		struct row *r = &rows[i];
		double sum = 0;
		for (size_t k = 0; k < g[i].n; k++) {
			sum += g[i].v[k];
			int_vals &= g[i].v[k] == floor(g[i].v[k]);
		}
		r->benchmark = g[i].benchmark;
		r->name = g[i].name;
		r->n = g[i].n;
		r->total = sum;
		r->avg = sum / (double)g[i].n;
		r->med = stats_median(g[i].v, g[i].n);
		r->min = g[i].v[0];
		r->max = g[i].v[g[i].n - 1];
		r->sd = stats_stddev(g[i].v, g[i].n);
		grand += sum;
	}
	for (size_t i = 0; i < ng; i++)
		rows[i].pct = grand != 0 ? 100.0 * rows[i].total / grand : 0.0;
	qsort(rows, ng, sizeof(*rows), row_cmp);

	char *head[NCOLS];
	column_heads(g[0].unit, report, head);
	switch (fmt) {
	case FMT_TEXT: {
		char *sha = escape_text_dup(run.commit), *gpu = escape_text_dup(run.gpu_name);
		char *m = escape_text_dup(metric);
		printf("run %lld, commit %.12s%s%s: %s by %s\n\n", (long long)run.id, sha,
		       run.gpu_name ? ", " : "", run.gpu_name ? gpu : "", m,
		       strcmp(report, "nvtx_sum") ? "kernel" : "NVTX range");
		free(sha);
		free(gpu);
		free(m);
		print_text(rows, ng, (const char *const *)head, int_vals);
		break;
	}
	case FMT_CSV:
		print_csv(rows, ng, (const char *const *)head);
		break;
	case FMT_JSON:
		print_json(rows, ng, &run, report, metric, g[0].unit);
		break;
	}
	for (int i = 0; i < NCOLS; i++)
		free(head[i]);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		kg_error("cannot write the table to stdout");
		rc = KG_EXIT_RUNTIME;
	}
out:
	free(rows);
	store_summary_free(g, ng);
	store_run_info_free(&run);
	store_close(st);
	return rc;
}
