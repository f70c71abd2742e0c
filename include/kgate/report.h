/*
 * report.h: what kgate shows people: the verdict table of a stored check
 * (Markdown, for the pull request comment) and the nightly trend report
 * (one self-contained HTML page with inline SVG, or an index page and pages
 * of charts in a directory) with its short summary
 * (Slack-compatible JSON).
 *
 * report.c reads the database through the store's functions (stored
 * checks, the name tables, the samples streamed run by run, the GPU states).
 * Every name that reaches the HTML is escaped; a page loads nothing from the
 * network (its Content-Security-Policy allows none) and holds one inline
 * script, kgate's own (report_js.h, allowed by a nonce), which draws the
 * charts from the numbers the page carries.
 */
#ifndef KGATE_REPORT_H
#define KGATE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kgate/changepoint.h"
#include "kgate/config.h"
#include "kgate/explain.h"
#include "kgate/store.h"
#include "kgate/util.h"
#include "kgate/verdict.h"

/* One stored verdict row (NAN where a number does not apply). */
struct report_verdict {
	char *benchmark, *nvtx, *kernel, *demangled, *metric, *verdict, *message;
	double shift, lo, hi, p, base_value, head_value;
	long n_base, n_head;
	int fails;              /* 1 when the row made the check fail (as stored) */
};

/* The rows of one check: one run, one baseline, one time. */
struct report_check {
	int64_t id;             /* checks.id */
	int64_t run;
	char *commit;
	char *baseline;
	int64_t time;
	struct report_verdict *v;
	size_t n;
	/* The outcome as stored (table checks): its verdict, exit status and
	 * policies; its counts are those of the rows. */
	struct kg_outcome outcome;
	/* Why its failed kernels regressed: the newest explanation stored
	 * for the run of each kernel that failed, went missing or is new
	 * in this check (kgate check --explain, kgate explain). */
	struct kg_explanation *why;
	size_t n_why;
};

/*
 * The newest check stored for commit (full SHA or a prefix).  Returns 0 and
 * fills *out; 1 when none is stored (nothing printed); -1 on a database
 * error (printed).
 */
int report_check_load(struct kg_store *st, const char *commit, struct report_check *out);
void report_check_free(struct report_check *c);

/* The Markdown verdict table, with KG_GITHUB_MARKER's hidden marker first. */
void report_check_markdown(const struct report_check *c, struct kg_buf *out);

/* Commit status for a check: "failure" when its stored exit status is not
 * 0, else "success"; desc gets a line. */
/* The kernels (benchmark and kernel, over NVTX ranges and metrics) with a
 * comparison that fails the check: one code change is one count. */
size_t report_check_failing_kernels(const struct report_check *c);
const char *report_check_state(const struct report_check *c, struct kg_buf *desc);

struct report_opts {
	const char *branch;     /* NULL for every branch */
	int64_t since;          /* unix seconds, 0 for all */
	const char *link;       /* where the report will be seen, for the summary; may be NULL */
	const char *commit_url; /* a commit's page is this followed by its SHA
				   (https://github.com/o/r/commit/); NULL: commits are not linked */
	double peak_gflops;     /* roofline roofs; 0 when unknown (no roof drawn) */
	double peak_gbs;
	int64_t new_within;     /* a change point is "new" within this many seconds of the newest run */
	const struct kg_thresholds *thresholds; /* the limits shown around each series; NULL: the built-in */
	struct cp_opts cp;
};
void report_opts_defaults(struct report_opts *o);

struct report_summary {
	size_t runs, series, points, change_points, new_change_points, roofline_points;
	int has_check;          /* a check is stored for the report's runs */
	enum kg_verdict check_verdict; /* the newest one's, as stored */
	int check_exit;
	size_t check_failing;
	char *text;             /* the summary, Slack mrkdwn; malloc'd */
};
void report_summary_free(struct report_summary *s);

/* Write the HTML report to *html (malloc'd) and fill *sum.  Returns an enum kg_exit. */
int report_html(struct kg_store *st, const struct report_opts *o, char **html, size_t *len,
		struct report_summary *sum);

/* The report as pages: index.html first.  max_charts 0: one page holding
 * every chart (what report_html writes); else the index (verdicts, change
 * points, roofline, a table of the pages) and pages p1.html, p2.html, ...
 * of about max_charts charts each (a kernel's charts are never split, a
 * page holds one benchmark).  Returns an enum kg_exit. */
struct report_page {
	char *name;             /* file name, no directory */
	char *html;
	size_t len;
};
int report_pages(struct kg_store *st, const struct report_opts *o, size_t max_charts,
		 struct report_page **pages, size_t *npages, struct report_summary *sum);
void report_pages_free(struct report_page *pages, size_t n);

#endif
