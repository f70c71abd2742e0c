/*
 * cmd_report.c: "kgate report": write the trend report (one self-contained
 * HTML file, or an index and pages of charts in a directory) and optionally
 * post its summary to a Slack-compatible webhook.  Each file is written
 * beside its final name and renamed into place, so a failed report never
 * leaves half a page.
 */
#include "cmd.h"
#include "kgate/config.h"
#include "kgate/http.h"
#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/report.h"
#include "kgate/store.h"
#include "kgate/util.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

static const char synopsis[] =
	"usage: kgate report [--db PATH] [--branch NAME] [--since 30d]\n"
	"                    [--html FILE | --dir DIR] [--charts-per-page N]\n"
	"                    [--post URL] [--link URL]\n"
	"                    [--peak-gflops X --peak-gbs Y] [--alpha P] [--min-shift 1%]\n"
	"                    [--thresholds FILE]\n"
	"\n"
	"Write the trend report.  It opens on what changed: the change points of\n"
	"the last 7 days (regressions first), the newest check's failing verdicts\n"
	"(the passing ones folded), the GPU's state.  Then per benchmark a table\n"
	"of kernels with a sparkline each, the series that never changed folded\n"
	"into one line, and a chart of each series that varies: each commit's\n"
	"median and interquartile band in the metric's unit, dates and commits on\n"
	"the x axis, the gate's limit shaded around the level now, change points\n"
	"marked; hover for a commit, drag to zoom.  A roofline where FLOP and byte\n"
	"counts exist.  --html writes one self-contained file (no network needed);\n"
	"--dir writes DIR/index.html and DIR/p1.html, p2.html, ... of the charts,\n"
	"each page one benchmark's.\n";

static const char epilogue[] =
	"Exit status: 0 written (and posted); 2 bad usage; 3 database, file or\n"
	"posting error.\n";

static int parse_age(const char *s, int64_t *out)
{
	if (!strcmp(s, "all") || !strcmp(s, "0")) {
		*out = 0;
		return 0;
	}
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	double mul = 0;
	if (!strcmp(end, "d")) mul = 86400;
	else if (!strcmp(end, "h")) mul = 3600;
	else if (!strcmp(end, "w")) mul = 7 * 86400;
	else if (!strcmp(end, "m") || !strcmp(end, "min")) mul = 60;
	if (errno || end == s || mul == 0 || !(v > 0) || v > 1e6)
		return -1;
	*out = (int64_t)time(NULL) - (int64_t)(v * mul);
	return 0;
}

static int parse_pos(const char *s, int pct, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (pct && *end == '%') {
		v /= 100;
		end++;
	}
	if (errno || end == s || *end || !(v >= 0) || isinf(v))
		return -1;
	*out = v;
	return 0;
}

/* --since AGE */
static int opt_since(const struct kg_opt *o, const char *arg)
{
	if (parse_age(arg, o->ctx)) {
		kg_error("report: --since wants an age such as 30d, 12h or 2w, or 'all'; got '%s'", arg);
		return KG_EXIT_USAGE;
	}
	return KG_EXIT_PASS;
}

/* --peak-gflops X, --peak-gbs Y */
static int opt_peak(const struct kg_opt *o, const char *arg)
{
	if (parse_pos(arg, 0, o->ctx)) {
		kg_error("report: --%s wants a positive number, got '%s'", o->name, arg);
		return KG_EXIT_USAGE;
	}
	return KG_EXIT_PASS;
}

/* --alpha P */
static int opt_alpha(const struct kg_opt *o, const char *arg)
{
	double *alpha = o->ctx;
	if (parse_pos(arg, 0, alpha) || *alpha <= 0 || *alpha >= 1) {
		kg_error("report: --alpha wants a number between 0 and 1, got '%s'", arg);
		return KG_EXIT_USAGE;
	}
	return KG_EXIT_PASS;
}

/* --min-shift R */
static int opt_min_shift(const struct kg_opt *o, const char *arg)
{
	if (parse_pos(arg, 1, o->ctx)) {
		kg_error("report: --min-shift wants a relative change such as 1%%, got '%s'", arg);
		return KG_EXIT_USAGE;
	}
	return KG_EXIT_PASS;
}

static int write_atomic(const char *path, const char *data, size_t len)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "wb");
	if (!f) {
		kg_error("cannot create '%s': %s", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	int ok = fwrite(data, 1, len, f) == len;
	ok &= fflush(f) == 0;
	ok &= fsync(fileno(f)) == 0;
	int e = errno;
	ok &= fclose(f) == 0;
	if (!ok || rename(tmp, path) != 0) {
		kg_error("cannot write '%s': %s", path, strerror(ok ? errno : e));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

static int post_summary(const char *url, const char *text)
{
	json_t *j = json_pack("{s:s}", "text", text);
	char *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!body) {
		kg_error("cannot post the summary: it is not valid UTF-8");
		return -1;
	}
	struct http_request req = { .method = "POST", .url = url, .body = body,
				    .accept = "application/json, text/plain" };
	struct http_response resp;
	int rc = http_send(&req, &resp);
	if (rc != 0) {
		char *d = http_describe(&req, &resp);
		kg_error("cannot post the summary: %s", d);
		free(d);
	} else {
		char *origin = http_origin(url);
		kg_note("posted the summary to %s", origin);
		free(origin);
	}
	http_response_free(&resp);
	free(body);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o;
	report_opts_defaults(&o);
	const char *db = store_default_db(), *html_path = NULL, *dir = NULL, *post = NULL;
	const char *thr_path = NULL;
	long per_page = 200;
	int argi;
	const struct kg_opt opts[] = {
		KG_OPT_DB(&db),
		KG_OPT_STR("branch", 0, "NAME", &o.branch,
			   "only runs of this branch (default: every branch)"),
		KG_OPT_CALL("since", 0, "AGE", opt_since, &o.since,
			    "only runs newer than AGE: 30d, 12h, 2w, or 'all' (default all)"),
		KG_OPT_STR("html", 0, "FILE", &html_path, "write the report to FILE, every chart in it"),
		KG_OPT_STR("dir", 0, "DIR", &dir,
			   "write the report into DIR (made if missing): an index and pages of "
			   "charts"),
		KG_OPT_LONG("charts-per-page", 0, "N", &per_page, 1, 1000000,
			    "charts on a page of --dir (default 200; a kernel's charts are never "
			    "split)"),
		KG_OPT_STR("post", 0, "URL", &post,
			   "post a short summary as Slack-compatible JSON (a \"text\" field)"),
		KG_OPT_STR("link", 0, "URL", &o.link,
			   "where the report can be seen, linked from the summary (default: the "
			   "GitHub Actions run, when there is one)"),
		KG_OPT_CALL("peak-gflops", 0, "X", opt_peak, &o.peak_gflops,
			    "the GPU's peak GFLOP/s: with --peak-gbs, draw the roofline's roofs"),
		KG_OPT_CALL("peak-gbs", 0, "Y", opt_peak, &o.peak_gbs,
			    "the GPU's peak GB/s: with --peak-gflops, draw the roofline's roofs"),
		KG_OPT_CALL("alpha", 0, "P", opt_alpha, &o.cp.alpha,
			    "change-point significance (default 0.005)"),
		KG_OPT_CALL("min-shift", 0, "R", opt_min_shift, &o.cp.min_shift,
			    "smallest change of the median reported (default 1%)"),
		KG_OPT_STR("thresholds", 0, "FILE",  &thr_path,
			   "the limits shaded around each series and that make a change point a"
			   " regression (default: the built-in thresholds)"),
		KG_OPT_END
	};
	const struct kg_optspec spec = { "report", synopsis, epilogue, opts, 0, 0 };
	int rc = opt_parse(&spec, argc, argv, &argi);
	if (rc != KG_OPT_GO)
		return rc;
	if (!html_path && !dir && !post) {
		kg_error("report: say where the report goes: --html FILE or --dir DIR, --post URL, or both");
		return KG_EXIT_USAGE;
	}
	if (html_path && dir) {
		kg_error("report: --html and --dir are two forms of one report: give one");
		return KG_EXIT_USAGE;
	}
	if (post && strncmp(post, "https://", 8) && strncmp(post, "http://", 7)) {
		kg_error("report: --post wants an http or https URL");
		return KG_EXIT_USAGE;
	}
	struct kg_thresholds *thr = NULL;
	if (thr_path) {
		rc = config_load_thresholds(thr_path, &thr);
		if (rc != KG_EXIT_PASS)
			return rc;
		o.thresholds = thr;
	}
	char *link = NULL;
	if (!o.link && getenv("GITHUB_SERVER_URL") && getenv("GITHUB_REPOSITORY") && getenv("GITHUB_RUN_ID")) {
		link = xasprintf("%s/%s/actions/runs/%s", getenv("GITHUB_SERVER_URL"),
				 getenv("GITHUB_REPOSITORY"), getenv("GITHUB_RUN_ID"));
		o.link = link;
	}
	char *commit_url = NULL;
	if (getenv("GITHUB_SERVER_URL") && getenv("GITHUB_REPOSITORY")) {
		commit_url = xasprintf("%s/%s/commit/", getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"));
		o.commit_url = commit_url;
	}
	struct kg_store *st;
	rc = store_open(db, KG_STORE_READONLY, &st);
	/* a branch without runs: said, with the stored ones (the report is empty) */
	if (rc == KG_EXIT_PASS && o.branch)
		(void)store_branch_known(st, o.branch, "--branch");
	if (rc != KG_EXIT_PASS) {
		free(link);
		free(commit_url);
		config_free_thresholds(thr);
		return rc;
	}
	struct report_page *pages = NULL;
	size_t npages = 0;
	struct report_summary sum;
	rc = report_pages(st, &o, dir ? (size_t)per_page : 0, &pages, &npages, &sum);
	store_close(st);
	if (rc == KG_EXIT_PASS && html_path) {
		if (write_atomic(html_path, pages[0].html, pages[0].len) != 0) {
			rc = KG_EXIT_RUNTIME;
		} else {
			kg_note("wrote '%s': %zu runs, %zu series, %zu change points, %zu bytes", html_path,
				sum.runs, sum.series, sum.change_points, pages[0].len);
			if (pages[0].len > 5000000)
				kg_note("a page over 5 MB opens slowly; --dir DIR writes the report as an index"
					" and pages of charts");
		}
	}
	if (rc == KG_EXIT_PASS && dir) {
		size_t total = 0;
		if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
			kg_error("cannot create '%s': %s", dir, strerror(errno));
			rc = KG_EXIT_RUNTIME;
		}
		/* the chart pages first, the index last: it links to them */
		for (size_t i = npages; rc == KG_EXIT_PASS && i-- > 0;) {
			char *path = xasprintf("%s/%s", dir, pages[i].name);
			if (write_atomic(path, pages[i].html, pages[i].len) != 0)
				rc = KG_EXIT_RUNTIME;
			total += pages[i].len;
			free(path);
		}
		if (rc == KG_EXIT_PASS)
			kg_note("wrote '%s/index.html' and %zu page%s: %zu runs, %zu series, %zu change points,"
				" %zu bytes", dir, npages - 1, npages == 2 ? "" : "s", sum.runs, sum.series,
				sum.change_points, total);
	}
	if (rc == KG_EXIT_PASS && post && post_summary(post, sum.text) != 0)
		rc = KG_EXIT_RUNTIME;
	report_pages_free(pages, npages);
	report_summary_free(&sum);
	free(link);
	free(commit_url);
	config_free_thresholds(thr);
	return rc;
}
