/*
 * kgate.h: what every part of kgate agrees on.
 *
 * The one exit-status enum, the version string, and the small vocabulary
 * (verdicts) that the store, the gate and the output formats share.  Every
 * command returns one of enum kg_exit; main() passes it to exit().
 */
#ifndef KGATE_KGATE_H
#define KGATE_KGATE_H

#define KGATE_VERSION "0.1.0"

/* Exit status of every command (documented in kgate.1 and README.md). */
enum kg_exit {
	KG_EXIT_PASS = 0,       /* no regression                              */
	KG_EXIT_REGRESSION = 1, /* at least one FAIL verdict                  */
	KG_EXIT_USAGE = 2,      /* bad usage, config or input                 */
	KG_EXIT_RUNTIME = 3     /* benchmark crashed, database error, ...     */
};

/*
 * The verdict of one (kernel identity, metric) comparison, and of a whole
 * check (PASS, FAIL or NO_BASELINE).  Names in verdict.c's one table.
 */
enum kg_verdict {
	KG_VERDICT_PASS = 0,
	KG_VERDICT_FAIL,
	KG_VERDICT_INCONCLUSIVE,
	KG_VERDICT_NEW,      /* kernel in head, not in baseline          */
	KG_VERDICT_MISSING,  /* kernel in baseline, not in head          */
	KG_VERDICT_SKIP,     /* nothing to compare (no rule for metric)  */
	KG_VERDICT_NO_BASELINE, /* the check had nothing to compare with */
	KG_VERDICT_CHANGED   /* launch configuration changed: reported,
	                        not a regression unless a rule says so  */
};
#define KG_VERDICT_COUNT 8

#endif
