/*
 * explain.h: why a kernel regressed, from counter deltas.
 *
 * explain.c owns a small copy of Nsight Compute's guided-analysis rules
 * (thresholds and speed-up estimates of ncu 2025.3.1, docs/EXPLAIN.md),
 * applied to the median of every stored metric of one kernel on each side,
 * and the diff of the two sides: rules that newly fire, counters that moved
 * most, launch configuration, registers, spills.
 */
#ifndef KGATE_EXPLAIN_H
#define KGATE_EXPLAIN_H

#include <stddef.h>

#include "kgate/store.h"
#include "kgate/util.h"

/* Median of every metric of one kernel identity (names sorted). */
struct kg_metricmap {
	size_t n;
	char **name;
	double *v;
	int *det;               /* deterministic counter */
};

/* Fill m from the series of set whose benchmark, NVTX path and kernel
 * (mangled, demangled or base name) match; nvtx NULL matches any.
 * Returns the number of metrics found. */
size_t explain_map_from_set(const struct kg_sampleset *set, const char *benchmark,
			    const char *nvtx, const char *kernel, struct kg_metricmap *m);
void explain_map_free(struct kg_metricmap *m);
/* Add to m every metric of add that m lacks (m's own values win). */
void explain_map_merge(struct kg_metricmap *m, const struct kg_metricmap *add);
/* The value of a metric, or NAN when absent. */
double explain_map_get(const struct kg_metricmap *m, const char *metric);

/* Per-chip facts the occupancy rules need. */
struct kg_chip {
	const char *name;       /* "GH100" */
	int sms;
	int max_warps_sm, regs_sm, smem_sm, max_blocks_sm;
	int reg_alloc_unit;     /* registers per warp allocation granule */
	int smem_alloc_unit;    /* bytes */
};
/* The chip of a run: gpu_chip, else derived from gpu_name; NULL when unknown. */
const struct kg_chip *explain_chip(const char *gpu_chip, const char *gpu_name);

enum kg_rule_id {
	KG_RULE_BOTTLENECK, KG_RULE_SMALL_GRID, KG_RULE_TAIL_EFFECT, KG_RULE_BLOCK_SIZE,
	KG_RULE_THEORETICAL_OCC, KG_RULE_ACHIEVED_OCC, KG_RULE_ISSUE_SLOTS, KG_RULE_STALL,
	KG_RULE_UNCOALESCED, KG_RULE_BANK_CONFLICTS, KG_RULE_ROOFLINE, KG_RULE_COUNT
};

struct kg_xrule {
	const char *id;         /* ncu's rule name, "UncoalescedGlobalAccess" */
	int applicable;         /* its metrics were stored */
	int fires;
	double speedup;         /* ncu-style estimate in percent; NAN when ncu has none */
	char text[240];         /* its numbers, or why it could not be applied */
};

/* Apply every rule to one side.  chip may be NULL (rules needing it are
 * marked not applicable, saying so). */
void explain_rules(const struct kg_metricmap *m, const struct kg_chip *chip,
		   struct kg_xrule out[KG_RULE_COUNT]);

/* Theoretical blocks per SM from registers, shared memory and block size
 * (the CUDA occupancy calculator); 0 when unknown. *limiter names the
 * tightest limit. */
int explain_blocks_per_sm(const struct kg_chip *c, int block, int regs, int smem,
			  const char **limiter);

/* 1 when m holds the counters of at least one counter-based rule
 * (issue slots, stalls, coalescing, bank conflicts, achieved occupancy):
 * what explain_kernel needs to explain more than the launch changes. */
int explain_has_diagnostics(const struct kg_metricmap *m, const struct kg_chip *chip);

enum kg_explain_fmt { KG_EXPLAIN_TEXT, KG_EXPLAIN_MARKDOWN };

/*
 * Explain head against base for one kernel: the one-sentence summary and
 * then the details.  name labels the kernel ("tr_tiled" or
 * "tr_tiled -> tr_naive").  Returns 1 when anything explained the change,
 * 0 when the diagnostic counters are missing.
 */
int explain_kernel(const char *name, const struct kg_metricmap *base,
		   const struct kg_metricmap *head, const struct kg_chip *chip,
		   enum kg_explain_fmt f, struct kg_buf *sentence, struct kg_buf *details);

/* One kernel to explain: base kernel bk against head kernel hk (equal
 * unless one replaced the other).  Strings point into the sample sets. */
struct kg_explain_item {
	const char *bench, *nvtx, *bk, *hk;
};
struct kg_gate;
/*
 * What to explain after a gate run: each pair "BASE=HEAD" of pairs (found
 * by any of the kernel's names), then, unless only pairs are given, every
 * FAILed kernel and each MISSING base kernel paired with the NEW head
 * kernels of the same benchmark and NVTX path; kernels (if any) restricts
 * these to the named ones.  *it is malloc'd (array of *n).
 */
void explain_pick(const struct kg_gate *g, const struct kg_sampleset *bs,
		  const struct kg_sampleset *hs, const char *const *pairs, size_t n_pairs,
		  const char *const *kernels, size_t n_kernels, struct kg_explain_item **it, size_t *n);

/* The diagnostic metric set (docs/EXPLAIN.md), NULL-terminated. */
extern const char *const explain_diagnostic_metrics[];

#endif
