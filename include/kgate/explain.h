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

enum kg_explain_fmt { KG_EXPLAIN_TEXT, KG_EXPLAIN_MARKDOWN, KG_EXPLAIN_HTML };

/* One rule's row of an explanation: its state on each side ("ok",
 * "fires", "n/a") and the head side's numbers and estimate. */
struct kg_xrow {
	char id[32];
	char base[8], head[8];
	double speedup;         /* percent; NAN when none */
	char text[240];
};

/* A counter that moved, base median -> head median. */
struct kg_xmove {
	char *metric;
	double base, head;
	int det;                /* deterministic counter */
};

/*
 * Why one kernel regressed: the one-sentence summary, every rule on both
 * sides, the counters that moved most.  Computed by explain_kernel, kept
 * in the database as explain_to_json's text (with why beside it), read
 * back by explain_from_json, shown by explain_render.  All strings are
 * owned (explain_free).
 */
struct kg_explanation {
	char *benchmark, *nvtx, *base_kernel, *head_kernel;
	char *why;              /* "k +38% time: ...; ncu rule X, est. speed-up 70%" */
	char *note;             /* a further remark, or NULL */
	int diagnostics;        /* the head side had the diagnostic counters */
	struct kg_xrow rule[KG_RULE_COUNT];
	size_t n_rules;
	struct kg_xmove moved[8];
	size_t n_moved;
};

struct kg_explain_item;

/*
 * Explain head against base for one kernel (it names it; "bk -> hk" when
 * one replaced the other) into *x.  Returns 1 when the head side had the
 * diagnostic counters (x->diagnostics), 0 when they are missing and only
 * the launch changes could be read.
 */
int explain_kernel(const struct kg_explain_item *it, const struct kg_metricmap *base,
		   const struct kg_metricmap *head, const struct kg_chip *chip,
		   struct kg_explanation *x);

/* Append the details of x (rules table, moved counters, note) to b in
 * format f: indented text, Markdown or an HTML fragment (escaped). */
void explain_render(const struct kg_explanation *x, enum kg_explain_fmt f, struct kg_buf *b);

/* The details of x (everything but its names and why) as one JSON object,
 * malloc'd; and back: fills *x from the names, why and that JSON.
 * explain_from_json returns 0, or -1 when the JSON is not such an object
 * (x is then empty). */
char *explain_to_json(const struct kg_explanation *x);
int explain_from_json(const char *benchmark, const char *nvtx, const char *base_kernel,
		      const char *head_kernel, const char *why, const char *json,
		      struct kg_explanation *x);
void explain_free(struct kg_explanation *x);
/* explain_free on each of the n in x, then free(x). */
void explain_free_all(struct kg_explanation *x, size_t n);

/* One kernel to explain: base kernel bk against head kernel hk (equal
 * unless one replaced the other).  Strings point into the sample sets. */
struct kg_explain_item {
	const char *bench, *nvtx, *bk, *hk;
	const char *bname, *hname;  /* their demangled names, for people */
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
