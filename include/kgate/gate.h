/*
 * gate.h: the comparison of a head sample set against a baseline.
 *
 * gate.c owns the decision rules of docs/ARCHITECTURE.md, "The gate": for each
 * (benchmark, NVTX path, kernel) identity and each metric a rule applies
 * to, noisy metrics get a Hodges-Lehmann shift on log values with its
 * distribution-free interval and a one-sided exact Mann-Whitney U test
 * (Holm-corrected across the check); deterministic counters are compared
 * launch by launch, exactly or within their tolerance; min/max bounds are
 * checked on the head median; kernels that appear or vanish get the
 * configured policy.  What a metric is (deterministic, which direction is
 * worse) comes from metric.h unless the thresholds say it.
 */
#ifndef KGATE_GATE_H
#define KGATE_GATE_H

#include <stddef.h>

#include "kgate/config.h"
#include "kgate/kgate.h"
#include "kgate/store.h"

struct kg_result {
	const char *benchmark, *nvtx, *kernel, *demangled, *metric, *unit;
	int ranked, rank;       /* the rank of a distributed job compared (ranked 1) */
	enum kg_verdict verdict;
	int deterministic;
	int higher_is_better;
	int better;             /* enum kg_better: the thresholds' or metric.h's */
	double base, head;      /* medians */
	double shift;           /* relative change of head against base; NAN if none */
	double lo, hi;          /* its interval (noisy metrics); NAN if none */
	double p, p_adj;        /* one-sided p-value, Holm-adjusted; NAN if none */
	double threshold;       /* relative regression limit; NAN if none */
	size_t n_base, n_head;
	double bad_shift;       /* change in the worse direction (internal) */
	double bad_bound;       /* worse end of the interval (internal) */
	double bad_low;         /* better end of the interval, as a worsening (internal) */
	int zero_base;          /* every baseline value 0, growth worse (internal) */
	char group[64];         /* the launch configuration judged, when by configuration */
	double cycle_shift;     /* a time's change in SM cycles (check's clock view); NAN if none */
	const char *cycle_source; /* the cycles metric it came from, or "recorded SM clock" */
	int fails;              /* 1 when this result makes the check fail */
	char message[160];      /* why, in a few words */
};

struct kg_gate {
	struct kg_result *r;
	size_t n;
	size_t n_fail, n_pass, n_inconclusive, n_new, n_missing, n_changed;
	int exit_status;        /* KG_EXIT_PASS or KG_EXIT_REGRESSION */
};

/* Compare head against base under t.  Results point into base/head/t. */
void gate_compare(const struct kg_thresholds *t, const struct kg_sampleset *base,
		  const struct kg_sampleset *head, struct kg_gate *out);
void gate_free(struct kg_gate *g);
/* Count g's verdicts, set each result's fails and g's exit status under t
 * (gate_compare does; call again after changing verdicts). */
void gate_count(const struct kg_thresholds *t, struct kg_gate *g);

/* "PASS", "FAIL", ... */
const char *gate_verdict_name(enum kg_verdict v);

#endif
