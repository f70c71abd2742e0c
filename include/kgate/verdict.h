/*
 * verdict.h: the names of verdicts, and the outcome of one check.
 *
 * verdict.c owns the one name table of enum kg_verdict (the word every
 * output prints, the key the verdicts and checks tables store, the badge
 * of the pull request comment) and the outcome of a check: its verdict,
 * its exit status and the policies that applied, decided once by check.c,
 * stored by the store (table checks) and only read by every rendering.
 */
#ifndef KGATE_VERDICT_H
#define KGATE_VERDICT_H

#include <stddef.h>

#include "kgate/config.h"
#include "kgate/kgate.h"

/* "PASS", "FAIL", "INCONCLUSIVE", "NEW", "MISSING", "SKIP", "NO BASELINE" */
const char *verdict_name(enum kg_verdict v);
/* The stored key: "pass", ..., "no_baseline" */
const char *verdict_key(enum kg_verdict v);
/* The comment's label: an emoji and the name */
const char *verdict_badge(enum kg_verdict v);
/* A stored key (or a name) back to the verdict: 0, or -1 when unknown. */
int verdict_parse(const char *s, enum kg_verdict *v);

/* "ignore", "warn", "fail" */
const char *verdict_policy_name(enum kg_policy p);
int verdict_policy_parse(const char *s, enum kg_policy *p);

/*
 * The outcome of one check, as decided once (check_decide in check.c) and
 * stored with its verdict rows.  verdict is PASS, FAIL or NO_BASELINE;
 * exit_status the check's (0 or 1).  The policies are those of the
 * thresholds file that applied (-1: not known, for checks stored before
 * schema 4).  Counts are of the stored rows; n_failing the rows whose
 * policy made the check fail.  note says why there was no baseline (the
 * ref tried, the default branch, a shallow clone), not_compared which
 * benchmarks were not compared and why; both NULL when there is nothing
 * to say.
 */
struct kg_outcome {
	enum kg_verdict verdict;
	int exit_status;
	int on_new_kernel, on_missing_kernel, on_inconclusive, on_no_baseline;
	size_t n_fail, n_pass, n_inconclusive, n_new, n_missing, n_skip, n_failing;
	size_t n_changed;       /* CHANGED rows (launch configuration) */
	char *note;
	char *not_compared;
};
void verdict_outcome_free(struct kg_outcome *o);
/* Count one row of verdict v into o's counts (SKIP and NO_BASELINE as
 * n_skip); fails: the row made the check fail (n_failing). */
void verdict_outcome_count(struct kg_outcome *o, enum kg_verdict v, int fails);

/* The commit status of an outcome: "success" or "failure" (from the
 * stored exit status), and a one-line description in desc. */
struct kg_buf;
const char *verdict_outcome_state(const struct kg_outcome *o, struct kg_buf *desc);
/* "3 failed, 10 passed, 0 inconclusive, 1 new, 0 missing" */
void verdict_outcome_counts(const struct kg_outcome *o, struct kg_buf *b);

#endif
