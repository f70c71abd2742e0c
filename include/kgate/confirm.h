/*
 * confirm.h: "kgate compare --confirm": a FAIL or INCONCLUSIVE decided
 * again on fresh repeats before it is believed.
 *
 * confirm.c owns the procedure.  The first comparison only screens: each
 * noisy comparison it flags (FAIL or INCONCLUSIVE; deterministic counters
 * are exact and never flagged) is decided on confirmation rounds alone,
 * new interleaved repeats of its benchmark, never on the data that flagged
 * it.  Look k of at most K is the gate on the rounds 1..k at level
 * alpha_k = alpha * ((k/K)^2 - ((k-1)/K)^2), a quadratic alpha-spending
 * schedule (early looks strict, as O'Brien and Fleming's): sum alpha_k =
 * alpha, so by the union bound over looks the chance that a comparison
 * with no real change ends FAIL stays at most alpha, whatever the looks'
 * correlation and whatever the screen did.  A flagged comparison is
 * settled at the first look whose gate says FAIL (confirmed) or PASS (its
 * interval rules out the limit: cleared); stopping for PASS spends no
 * alpha.  One still open after K looks, or when the time budget ends the
 * rounds, is INCONCLUSIVE.
 */
#ifndef KGATE_CONFIRM_H
#define KGATE_CONFIRM_H

#include <stddef.h>

#include "kgate/config.h"
#include "kgate/gate.h"

#define KG_CONFIRM_ROUNDS 3      /* default K */

/* The level of look k (1-based) of K. */
double confirm_alpha(double alpha, int k, int K);

struct kg_confirm_item {
	char *benchmark, *nvtx, *kernel, *metric;
	char group[64];
	enum kg_verdict first;     /* the screening verdict */
	enum kg_verdict verdict;   /* after confirmation */
	int rounds;                /* the look that settled it; 0: still open */
	double shift, lo, hi, p, base, head;  /* the settling look's numbers */
	size_t n_base, n_head;
};

struct kg_confirm {
	struct kg_confirm_item *it;
	size_t n;
	int looks;                 /* looks taken */
	int planned;               /* K */
};

/* The items g flags, with K = rounds.  Returns how many. */
size_t confirm_flag(struct kg_confirm *c, const struct kg_gate *g, int rounds);
/* The benchmarks of the items still open, sorted, unique (free with
 * store_names_free). */
char **confirm_open_benchmarks(const struct kg_confirm *c, size_t *n);
/* Take look k (1-based): g is the gate of the confirmation rounds 1..k at
 * confirm_alpha(alpha, k, planned).  Returns the items still open. */
size_t confirm_look(struct kg_confirm *c, const struct kg_gate *g, int k);
/* Put the settled verdicts into g (a gate of the screening data), their
 * numbers and a message that says how many rounds each took, and recount
 * g's totals and exit status under t. */
void confirm_apply(const struct kg_confirm *c, const struct kg_thresholds *t, struct kg_gate *g);
void confirm_free(struct kg_confirm *c);

#endif
