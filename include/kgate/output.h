/*
 * output.h: verdict tables in the formats of "kgate check --format".
 *
 * output.c owns rendering and escaping: text (aligned, coloured on a
 * terminal unless NO_COLOR), markdown (PR comments, job summary), json,
 * junit XML and GitHub workflow-command annotations.  Kernel names can hold
 * anything, so every format escapes what its reader would interpret.
 */
#ifndef KGATE_OUTPUT_H
#define KGATE_OUTPUT_H

#include <stdio.h>

#include "kgate/gate.h"
#include "kgate/util.h"
#include "kgate/verdict.h"

struct kg_explanation;

enum kg_format { KG_FMT_TEXT, KG_FMT_MARKDOWN, KG_FMT_JSON, KG_FMT_JUNIT, KG_FMT_GITHUB };

/* What the check compared, for headings. */
struct kg_check_info {
	const char *head_commit;
	const char *baseline;   /* label of the baseline: "<sha> (<reason>)" */
	const char *baseline_sha;    /* its full commit, or NULL */
	const char *baseline_reason; /* why it was chosen, or NULL */
	const char *gpu;
	size_t n_base_runs;
	int all;                /* 1: list passing comparisons too (text, markdown) */
	/* Why the failed kernels regressed (kgate check --explain), or none:
	 * after the table in text and markdown, a "why" of each result of
	 * the kernel in json, in the failure body in junit, in the first
	 * annotation of the kernel in github. */
	const struct kg_explanation *why;
	size_t n_why;
	/* The check's outcome (verdict.h), decided once by check.c: every
	 * format shows its verdict and never decides one of its own. */
	const struct kg_outcome *outcome;
};

/* The names of enum kg_format in its order, NULL-terminated. */
extern const char *const output_format_names[];
int output_format_parse(const char *s, enum kg_format *out); /* 0 ok, -1 unknown */
const char *output_format_choices(void);                     /* "text, markdown, ..." */
void output_render(enum kg_format f, const struct kg_check_info *info, const struct kg_gate *g,
		   int color, struct kg_buf *out);
/* The same, written to fp as it is made (the JSON never held whole). */
void output_write(enum kg_format f, const struct kg_check_info *info, const struct kg_gate *g,
		  int color, FILE *fp);

/* A commit in Markdown: its short form in code spans, a link to the commit
 * where the server is known (github_commit_url). */
void output_commit_markdown(struct kg_buf *b, const char *sha);
/* What a check's outcome says beside its verdicts, as Markdown paragraphs
 * (html 0) or HTML ones (html 1): why there was no baseline, what was not
 * compared (nothing when neither). */
void output_outcome_notes(struct kg_buf *b, const struct kg_outcome *o, int html);

#endif
