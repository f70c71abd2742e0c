/*
 * explain.c: why a kernel regressed, from counter deltas.
 *
 * Owns a small copy of Nsight Compute's guided-analysis rules (ncu
 * 2025.3.1: LaunchConfiguration, SOLBottleneck, TheoreticalOccupancy,
 * AchievedOccupancy, IssueSlotUtilization, CPIStall, the hardware-counter
 * form of UncoalescedGlobalAccess, SharedMemoryConflicts), the CUDA
 * occupancy calculator for one chip table, and the diff of a kernel's base
 * and head medians.  docs/EXPLAIN.md documents each rule and where kgate's
 * estimate differs from ncu's.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "kgate/escape.h"
#include "kgate/explain.h"
#include "kgate/gate.h"
#include "kgate/metric.h"
#include "kgate/stats.h"

const char *const explain_diagnostic_metrics[] = {
	"gpu__time_duration.sum",
	"sm__throughput.avg.pct_of_peak_sustained_elapsed",
	"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"lts__t_sectors.sum",
	"lts__cycles_active.sum",
	"lts__cycles_elapsed.sum",
	"l1tex__throughput.avg.pct_of_peak_sustained_active",
	"smsp__inst_executed.sum",
	"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
	"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
	"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
	"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
	"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
	"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
	"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
	"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
	"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
	"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
	"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"smsp__issue_active.avg.per_cycle_active",
	"smsp__average_warp_latency_per_inst_issued.ratio",
	"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
	"smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
	"smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
	"smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
	"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
	"smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
	"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
	"smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio",
	NULL
};

static const struct kg_chip chips[] = {
	/* GH100 (H100, H200): CC 9.0; 132 SMs on H200 SXM, 228 KiB shared memory. */
	{ "GH100", 132, 64, 65536, 233472, 32, 256, 128 },
};

const struct kg_chip *explain_chip(const char *gpu_chip, const char *gpu_name)
{
	for (size_t i = 0; i < sizeof chips / sizeof chips[0]; i++)
		if (gpu_chip && !strcasecmp(gpu_chip, chips[i].name))
			return &chips[i];
	if (gpu_name && (strstr(gpu_name, "H100") || strstr(gpu_name, "H200") ||
			 strstr(gpu_name, "GH200")))
		return &chips[0];
	return NULL;
}

/* ---- the metric map ---- */

static int name_matches(const struct kg_series *s, const char *kernel)
{
	return !strcmp(s->kernel, kernel) || (s->demangled && !strcmp(s->demangled, kernel)) ||
	       (s->base && !strcmp(s->base, kernel));
}

size_t explain_map_from_set(const struct kg_sampleset *set, const char *benchmark,
			    const char *nvtx, const char *kernel, struct kg_metricmap *m)
{
	memset(m, 0, sizeof *m);
	size_t cap = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct kg_series *s = &set->s[i];
		if (!s->n || (benchmark && strcmp(s->benchmark, benchmark)) ||
		    (nvtx && strcmp(s->nvtx, nvtx)) || !name_matches(s, kernel))
			continue;
		if (!isnan(explain_map_get(m, s->metric)))
			continue;       /* one identity only: the first NVTX path */
		if (m->n == cap) {
			cap = cap ? 2 * cap : 64;
			m->name = xrealloc(m->name, cap * sizeof *m->name);
			m->v = xrealloc(m->v, cap * sizeof *m->v);
			m->det = xrealloc(m->det, cap * sizeof *m->det);
		}
		m->name[m->n] = xstrdup(s->metric);
		m->v[m->n] = stats_median(s->v, s->n);
		/* the vocabulary, not the stored flag: an older kgate called
		 * some rates deterministic */
		m->det[m->n] = metric_deterministic(s->metric);
		m->n++;
	}
	return m->n;
}

void explain_map_free(struct kg_metricmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->name[i]);
	free(m->name);
	free(m->v);
	free(m->det);
	memset(m, 0, sizeof *m);
}

void explain_map_merge(struct kg_metricmap *m, const struct kg_metricmap *add)
{
	size_t cap = m->n;

	for (size_t j = 0; j < add->n; j++) {
		if (!isnan(explain_map_get(m, add->name[j])))
			continue;       /* m's own value wins */
		if (m->n == cap) {
			cap = cap ? 2 * cap : 64;
			m->name = xrealloc(m->name, cap * sizeof *m->name);
			m->v = xrealloc(m->v, cap * sizeof *m->v);
			m->det = xrealloc(m->det, cap * sizeof *m->det);
		}
		m->name[m->n] = xstrdup(add->name[j]);
		m->v[m->n] = add->v[j];
		m->det[m->n++] = add->det[j];
	}
}

double explain_map_get(const struct kg_metricmap *m, const char *metric)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->name[i], metric))
			return m->v[i];
	return NAN;
}

#define G(x) explain_map_get(m, x)

/* ---- the occupancy calculator ---- */

static int round_up(int v, int unit)
{
	return unit > 0 ? (v + unit - 1) / unit * unit : v;
}

int explain_blocks_per_sm(const struct kg_chip *c, int block, int regs, int smem,
			  const char **limiter)
{
	if (!c || block <= 0)
		return 0;
	int warps = (block + 31) / 32;
	int lim_warps = c->max_warps_sm / warps;
	int lim_blocks = c->max_blocks_sm;
	int lim_regs = lim_blocks;
	if (regs > 0) {
		int per_warp = round_up(regs * 32, c->reg_alloc_unit);
		int warps_regs = c->regs_sm / per_warp / 4 * 4; /* 4 schedulers */
		lim_regs = warps_regs / warps;
	}
	int lim_smem = lim_blocks;
	if (smem > 0)
		lim_smem = c->smem_sm / round_up(smem, c->smem_alloc_unit);
	int best = lim_blocks;
	const char *why = "blocks per SM";
	if (lim_warps < best) best = lim_warps, why = "warps per SM";
	if (lim_regs < best) best = lim_regs, why = "registers";
	if (lim_smem < best) best = lim_smem, why = "shared memory";
	if (limiter)
		*limiter = why;
	return best;
}

/* ---- the rules ---- */

static void set(struct kg_xrule *r, const char *id)
{
	memset(r, 0, sizeof *r);
	r->id = id;
	r->speedup = NAN;
}

static void na(struct kg_xrule *r, const char *why)
{
	r->applicable = 0;
	snprintf(r->text, sizeof r->text, "not applied: %s", why);
}

/* Whether rule r applies: it has what it needs, else why not is its text. */
static int applies(struct kg_xrule *r, int has_needs, const char *needs)
{
	if (!has_needs) {
		na(r, needs);
		return 0;
	}
	r->applicable = 1;
	return 1;
}

static const char *const stall_names[] = {
	"barrier", "branch_resolving", "dispatch_stall", "drain", "gmma", "imc_miss",
	"lg_throttle", "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle",
	"misc", "no_instruction", "not_selected", "selected", "short_scoreboard",
	"sleeping", "tex_throttle", "wait",
};

/* Uncoalesced global access for one op ("ld" or "st"): sectors, ideal sectors. */
static int coalescing(const struct kg_metricmap *m, const char *op, double *sectors,
		      double *requests, double *ideal)
{
	char a[128], b[128], c[128];
	snprintf(a, sizeof a, "l1tex__t_sectors_pipe_lsu_mem_global_op_%s.sum", op);
	snprintf(b, sizeof b, "l1tex__t_requests_pipe_lsu_mem_global_op_%s.sum", op);
	snprintf(c, sizeof c, "smsp__sass_average_data_bytes_per_sector_mem_global_op_%s.ratio", op);
	*sectors = G(a);
	*requests = G(b);
	if (isnan(*sectors) || isnan(*requests))
		return 0;
	double bps = G(c);
	/* Without the bytes-per-sector ratio, assume 32-bit accesses: 4 sectors per request. */
	*ideal = !isnan(bps) && bps > 0 ? *sectors * bps / 32 : *requests * 4;
	if (*ideal > *sectors)
		*ideal = *sectors;
	return 1;
}

void explain_rules(const struct kg_metricmap *m, const struct kg_chip *chip,
		   struct kg_xrule out[KG_RULE_COUNT])
{
	double sm = G("sm__throughput.avg.pct_of_peak_sustained_elapsed");
	double mem = G("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
	if (isnan(mem))
		mem = G("dram__throughput.avg.pct_of_peak_sustained_elapsed");
	double grid = G("launch__grid_size"), block = G("launch__block_size");
	double regs = G("launch__registers_per_thread");
	double sms = G("launch__sm_count");
	if (isnan(sms))
		sms = G("device__attribute_multiprocessor_count");
	if (isnan(sms) && chip)
		sms = chip->sms;
	double ia = G("smsp__issue_active.avg.per_cycle_active");
	double issue_speedup = NAN; /* normalized, for the children */
	struct kg_xrule *r;

	/* SOLBottleneck */
	r = &out[KG_RULE_BOTTLENECK];
	set(r, "SOLBottleneck");
	if (applies(r, !isnan(sm) && !isnan(mem),
		    "needs sm__throughput and gpu__compute_memory_throughput (pct_of_peak)")) {
		const char *cls;
		if (sm >= 80 || mem >= 80)
			cls = "high throughput";
		else if (sm < 60 && mem < 60)
			cls = "latency bound";
		else if (fabs(sm - mem) >= 10)
			cls = sm > mem ? "compute heavy" : "memory heavy";
		else
			cls = "balanced";
		r->fires = strcmp(cls, "high throughput") && strcmp(cls, "balanced");
		snprintf(r->text, sizeof r->text, "%s: SM %.1f%%, memory %.1f%% of peak", cls, sm, mem);
	}

	/* LaunchConfiguration: small grid */
	r = &out[KG_RULE_SMALL_GRID];
	set(r, "SmallGrid");
	if (applies(r, !isnan(grid) && !isnan(sms), "needs launch__grid_size and the SM count")) {
		r->fires = grid < sms;
		if (r->fires)
			r->speedup = (sms - grid) / sms * 100;
		snprintf(r->text, sizeof r->text, "grid %.0f blocks on %.0f SMs", grid, sms);
	}

	/* LaunchConfiguration: block size */
	r = &out[KG_RULE_BLOCK_SIZE];
	set(r, "BlockSize");
	if (applies(r, !isnan(block), "needs launch__block_size")) {
		int bs = (int)block;
		r->fires = bs % 32 != 0;
		if (r->fires)
			r->speedup = (1.0 / ((bs + 31) / 32)) * (1 - (bs % 32) / 32.0) * 100;
		snprintf(r->text, sizeof r->text, "block of %d threads%s", bs,
			 r->fires ? ", not a multiple of 32" : "");
	}

	/* Occupancy calculator: theoretical occupancy and waves. */
	int bpsm = 0;
	const char *limiter = NULL;
	double smem = NAN;
	if (chip && !isnan(block)) {
		double st = G("launch__shared_mem_per_block_static");
		double dy = G("launch__shared_mem_per_block_dynamic");
		double dr = G("launch__shared_mem_per_block_driver");
		smem = (isnan(st) ? 0 : st) + (isnan(dy) ? 0 : dy) + (isnan(dr) ? 0 : dr);
		struct kg_chip c = *chip;
		double cfg = G("launch__shared_mem_config_size");
		if (!isnan(cfg) && cfg > 0)
			c.smem_sm = (int)cfg;
		bpsm = explain_blocks_per_sm(&c, (int)block, isnan(regs) ? 0 : (int)regs, (int)smem,
					     &limiter);
	}
	r = &out[KG_RULE_THEORETICAL_OCC];
	set(r, "TheoreticalOccupancy");
	if (!chip) {
		na(r, "unknown chip: no occupancy table");
	} else if (!bpsm) {
		na(r, "needs launch__block_size");
	} else {
		int warps = ((int)block + 31) / 32;
		double theo = (double)bpsm * warps / chip->max_warps_sm * 100;
		if (theo > 100)
			theo = 100;
		r->applicable = 1;
		r->fires = theo < 80;
		if (r->fires)
			r->speedup = 100 - theo;
		snprintf(r->text, sizeof r->text,
			 "theoretical occupancy %.1f%% (%d blocks/SM of %d warps, limited by %s; %.0f registers/thread, %.0f B shared/block)",
			 theo, bpsm, warps, limiter, isnan(regs) ? 0 : regs, smem);
	}

	r = &out[KG_RULE_TAIL_EFFECT];
	set(r, "TailEffect");
	if (applies(r, bpsm && !isnan(grid) && !isnan(sms),
		    chip ? "needs grid, block size and the SM count" : "unknown chip: no occupancy table")) {
		double waves = grid / (bpsm * sms), whole;
		double part = modf(waves, &whole);
		double sp = whole >= 1 && part > 0 ? 100 / (1 + whole) : 0;
		r->fires = sp >= 20;
		if (r->fires)
			r->speedup = sp;
		snprintf(r->text, sizeof r->text, "%.2f waves of %d blocks/SM x %.0f SMs", waves, bpsm, sms);
	}

	/* IssueSlotUtilization */
	r = &out[KG_RULE_ISSUE_SLOTS];
	set(r, "IssueSlotUtilization");
	if (applies(r, !isnan(ia), "needs smsp__issue_active.avg.per_cycle_active")) {
		r->fires = ia < 0.6;
		if (r->fires) {
			double mx = fmax(isnan(sm) ? 0 : sm, isnan(mem) ? 0 : mem) / 100;
			issue_speedup = fmin(1 - ia, 1 - mx);
			r->speedup = issue_speedup * 100;
		}
		snprintf(r->text, sizeof r->text, "a scheduler issues %.2f instructions per cycle (one every %.1f cycles)",
			 ia, ia > 0 ? 1 / ia : INFINITY);
	}

	/* AchievedOccupancy */
	r = &out[KG_RULE_ACHIEVED_OCC];
	set(r, "AchievedOccupancy");
	double theo_pct = G("sm__maximum_warps_per_active_cycle_pct");
	double ach = G("sm__warps_active.avg.pct_of_peak_sustained_active");
	if (isnan(theo_pct) && out[KG_RULE_THEORETICAL_OCC].applicable && bpsm)
		theo_pct = fmin(100, (double)bpsm * (((int)block + 31) / 32) / chip->max_warps_sm * 100);
	if (applies(r, !isnan(ach) && !isnan(theo_pct),
		    "needs sm__warps_active.avg.pct_of_peak_sustained_active and the theoretical occupancy")) {
		r->fires = theo_pct - ach > 10;
		if (r->fires) {
			double local = (theo_pct - ach) / theo_pct;
			r->speedup = (isnan(issue_speedup) ? local : fmin(local, issue_speedup)) * 100;
		}
		snprintf(r->text, sizeof r->text, "achieved occupancy %.1f%% of theoretical %.1f%%", ach, theo_pct);
	}

	/* CPIStall: the dominant stall reason */
	r = &out[KG_RULE_STALL];
	set(r, "CPIStall");
	double cpi = G("smsp__average_warp_latency_per_inst_issued.ratio");
	const char *top = NULL;
	double topv = -1;
	for (size_t i = 0; i < sizeof stall_names / sizeof stall_names[0]; i++) {
		char n[128];
		snprintf(n, sizeof n, "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio", stall_names[i]);
		double v = G(n);
		if (!isnan(v) && v > topv && strcmp(stall_names[i], "selected"))
			topv = v, top = stall_names[i];
	}
	if (applies(r, top && !isnan(cpi) && !isnan(ia) && cpi > 0,
		    "needs the smsp__average_warps_issue_stalled_*_per_issue_active.ratio metrics, the CPI and issue_active")) {
		double ratio = topv / cpi;
		r->fires = ia < 0.8 && ratio > 0.3;
		if (r->fires)
			r->speedup = (isnan(issue_speedup) ? ratio : fmin(ratio, issue_speedup)) * 100;
		snprintf(r->text, sizeof r->text, "%s stalls %.1f of %.1f cycles between instructions (%.0f%%)",
			 top, topv, cpi, ratio * 100);
	}

	/* UncoalescedGlobalAccess (from hardware counters) */
	r = &out[KG_RULE_UNCOALESCED];
	set(r, "UncoalescedGlobalAccess");
	double ls, lr, li, ss, sr, si;
	int hl = coalescing(m, "ld", &ls, &lr, &li), hs = coalescing(m, "st", &ss, &sr, &si);
	if (applies(r, hl || hs,
		    "needs l1tex__t_{sectors,requests}_pipe_lsu_mem_global_op_{ld,st}.sum")) {
		double tot = (hl ? ls : 0) + (hs ? ss : 0), ideal = (hl ? li : 0) + (hs ? si : 0);
		double exc = tot - ideal;
		double la = G("lts__cycles_active.sum"), le = G("lts__cycles_elapsed.sum");
		double w = !isnan(la) && !isnan(le) && le > 0 ? la / le : 1;
		r->fires = tot > 0 && exc / tot > 0.001;
		if (r->fires)
			r->speedup = w * exc / tot * 100;
		char l[96] = "", s[96] = "";
		if (hl && lr > 0)
			snprintf(l, sizeof l, "load %.1f sectors/request (ideal %.1f)", ls / lr, li / lr);
		if (hs && sr > 0)
			snprintf(s, sizeof s, "store %.1f sectors/request (ideal %.1f)", ss / sr, si / sr);
		snprintf(r->text, sizeof r->text, "global %s%s%s; %.1f%% of %.0f sectors excessive", l,
			 *l && *s ? ", " : "", s, tot > 0 ? exc / tot * 100 : 0, tot);
	}

	/* SharedMemoryConflicts */
	r = &out[KG_RULE_BANK_CONFLICTS];
	set(r, "SharedMemoryConflicts");
	double cl = G("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum");
	double cs = G("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum");
	double wl = G("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum");
	double ws = G("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum");
	if (applies(r, !isnan(cl) && !isnan(wl) && !isnan(cs) && !isnan(ws),
		    "needs l1tex__data_bank_conflicts_* and l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum")) {
		double pl = wl > 0 ? cl * 100 / wl : 0, ps = ws > 0 ? cs * 100 / ws : 0;
		double p = fmax(pl, ps);
		double l1 = G("l1tex__throughput.avg.pct_of_peak_sustained_active");
		r->fires = p >= 10;
		if (r->fires)
			r->speedup = isnan(l1) ? p : p * l1 / 100;
		snprintf(r->text, sizeof r->text, "shared loads %.1f%% bank-conflict wavefronts, stores %.1f%%", pl, ps);
	}

	/* Roofline position */
	r = &out[KG_RULE_ROOFLINE];
	set(r, "Roofline");
	double fa = G("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum");
	double fm = G("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum");
	double ff = G("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
	double br = G("dram__bytes_read.sum"), bw = G("dram__bytes_write.sum");
	if (applies(r, !isnan(fa) && !isnan(fm) && !isnan(ff) && !isnan(br) && !isnan(bw),
		    "needs the fadd/fmul/ffma thread-instruction counts and DRAM bytes")) {
		double flop = fa + fm + 2 * ff, bytes = br + bw;
		snprintf(r->text, sizeof r->text, "%.3g FP32 FLOP over %.3g DRAM bytes: %.3f FLOP/byte", flop,
			 bytes, bytes > 0 ? flop / bytes : 0);
	}
}

/* ---- the diff ---- */

struct move {
	const char *name;
	double b, h, rel;
	int det;
};

static int cmp_move(const void *a, const void *b)
{
	const struct move *x = a, *y = b;
	if (x->det != y->det)
		return y->det - x->det;
	double ax = fabs(x->rel), ay = fabs(y->rel);
	if (ax != ay)
		return ax < ay ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void pct(struct kg_buf *b, double base, double head)
{
	if (base > 0 && head / base >= 2)
		buf_printf(b, "x%.1f", head / base);
	else if (base != 0)
		buf_printf(b, "%+.1f%%", (head - base) / fabs(base) * 100);
	else
		buf_printf(b, "%g -> %g", base, head);
}

static void frag(struct kg_buf *s, int *nf, const char *text)
{
	buf_adds(s, *nf ? ", " : ": ");
	buf_adds(s, text);
	(*nf)++;
}

/* "what +5.0% (more work)" as a fragment, when a measure of work (NAN:
 * not stored) moved by more than 1%; t is scratch space. */
static void work_frag(struct kg_buf *s, int *nf, struct kg_buf *t, const char *what,
		      double base, double head)
{
	if (isnan(base) || isnan(head) || base <= 0 || fabs(head - base) / base <= 0.01)
		return;
	buf_reset(t);
	buf_printf(t, "%s ", what);
	pct(t, base, head);
	if (head > base)
		buf_adds(t, " (more work)");
	frag(s, nf, t->s);
}

int explain_has_diagnostics(const struct kg_metricmap *m, const struct kg_chip *chip)
{
	/* The counter-based rules; launch attributes and SOL alone say little. */
	static const int counter_rules[] = { KG_RULE_ISSUE_SLOTS, KG_RULE_STALL, KG_RULE_UNCOALESCED,
					     KG_RULE_BANK_CONFLICTS, KG_RULE_ACHIEVED_OCC };
	struct kg_xrule r[KG_RULE_COUNT];
	int n = 0;

	explain_rules(m, chip, r);
	for (size_t i = 0; i < sizeof counter_rules / sizeof counter_rules[0]; i++)
		n += r[counter_rules[i]].applicable;
	return n > 0;
}

/* Copy a NUL-terminated string into a fixed array, cut if need be. */
static void copy_str(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

int explain_kernel(const struct kg_explain_item *it, const struct kg_metricmap *base,
		   const struct kg_metricmap *head, const struct kg_chip *chip,
		   struct kg_explanation *x)
{
	struct kg_xrule rb[KG_RULE_COUNT], rh[KG_RULE_COUNT];
	struct kg_buf t = KG_BUF_INIT, sb = KG_BUF_INIT;
	struct kg_buf *sentence = &sb;
	int nf = 0, diag = explain_has_diagnostics(head, chip);

	memset(x, 0, sizeof *x);
	x->benchmark = xstrdup(it->bench);
	x->nvtx = xstrdup(it->nvtx);
	x->base_kernel = xstrdup(it->bk);
	x->head_kernel = xstrdup(it->hk);
	x->diagnostics = diag;
	explain_rules(base, chip, rb);
	explain_rules(head, chip, rh);

	double tb = explain_map_get(base, "gpu__time_duration.sum");
	double th = explain_map_get(head, "gpu__time_duration.sum");
	buf_adds(sentence, it->bname ? it->bname : it->bk);
	if (strcmp(it->bk, it->hk))
		buf_printf(sentence, " -> %s", it->hname ? it->hname : it->hk);
	if (!isnan(tb) && !isnan(th) && tb > 0)
		buf_printf(sentence, " %+.0f%% time", (th - tb) / tb * 100);

	/* Launch configuration, registers, spills. */
	static const char *const launch[] = { "launch__grid_size", "launch__block_size",
					      "launch__registers_per_thread", "launch__local_mem_per_thread",
					      "launch__shared_mem_per_block_static",
					      "launch__shared_mem_per_block_dynamic" };
	static const char *const label[] = { "grid", "block", "registers/thread", "local memory/thread (spills)",
					     "static shared memory/block", "dynamic shared memory/block" };
	for (size_t i = 0; i < sizeof launch / sizeof launch[0]; i++) {
		double b = explain_map_get(base, launch[i]), h = explain_map_get(head, launch[i]);
		if (isnan(b) || isnan(h) || b == h)
			continue;
		if (i == 2 && h < b)
			continue;       /* fewer registers is not a cause */
		buf_reset(&t);
		buf_printf(&t, "%s %.0f -> %.0f", label[i], b, h);
		if (b > 0) {
			buf_adds(&t, " (");
			pct(&t, b, h);
			buf_adds(&t, ")");
		}
		if (i == 3 && b == 0)
			buf_adds(&t, " (new spills)");
		frag(sentence, &nf, t.s);
	}
	work_frag(sentence, &nf, &t, "instructions", explain_map_get(base, "smsp__inst_executed.sum"),
		  explain_map_get(head, "smsp__inst_executed.sum"));
	/* Memory work, which the instruction count can miss (a grid-stride
	 * loop's remainder can take fewer instructions for more elements). */
	work_frag(sentence, &nf, &t, "global memory requests",
		  explain_map_get(base, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") +
			  explain_map_get(base, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
		  explain_map_get(head, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") +
			  explain_map_get(head, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"));

	/* Rules that newly fire in head, the one with the largest estimate last. */
	int best = -1;
	for (int i = 0; i < KG_RULE_COUNT; i++) {
		if (!rh[i].fires || rb[i].fires)
			continue;
		buf_reset(&t);
		if (i == KG_RULE_UNCOALESCED) {
			double bs, br, bi, hs, hr, hi;
			for (int op = 0; op < 2; op++) {
				const char *o = op ? "st" : "ld";
				if (coalescing(base, o, &bs, &br, &bi) && coalescing(head, o, &hs, &hr, &hi) &&
				    br > 0 && hr > 0 && fabs(hs / hr - bs / br) > 0.05)
					buf_printf(&t, "%sglobal %s sectors/request %.1f -> %.1f", t.len ? ", " : "",
						   op ? "store" : "load", bs / br, hs / hr);
			}
			if (!t.len)
				buf_adds(&t, rh[i].text);
			buf_adds(&t, " (uncoalesced)");
		} else {
			buf_printf(&t, "%s", rh[i].text);
		}
		frag(sentence, &nf, t.s);
		if (!isnan(rh[i].speedup) && (best < 0 || rh[i].speedup > rh[best].speedup))
			best = i;
	}
	double db = explain_map_get(base, "dram__bytes_read.sum"), dh = explain_map_get(head, "dram__bytes_read.sum");
	if (!isnan(db) && !isnan(dh) && db > 0 && fabs(dh - db) / db > 0.1) {
		buf_reset(&t);
		buf_adds(&t, "DRAM bytes read ");
		pct(&t, db, dh);
		frag(sentence, &nf, t.s);
	}
	if (best >= 0)
		buf_printf(sentence, "; ncu rule %s, est. speed-up %.0f%%", rh[best].id, rh[best].speedup);
	if (!nf && best < 0)
		buf_adds(sentence, diag ? ": no counter or rule explains the change" : ": the diagnostic counters were not collected");
	x->why = buf_detach(sentence);

	/* Every rule on both sides. */
	for (int i = 0; i < KG_RULE_COUNT; i++) {
		struct kg_xrow *r = &x->rule[x->n_rules++];
		copy_str(r->id, sizeof r->id, rh[i].id);
		copy_str(r->base, sizeof r->base, !rb[i].applicable ? "n/a" : rb[i].fires ? "fires" : "ok");
		copy_str(r->head, sizeof r->head, !rh[i].applicable ? "n/a" : rh[i].fires ? "fires" : "ok");
		r->speedup = rh[i].speedup;
		copy_str(r->text, sizeof r->text, rh[i].text);
	}

	/* The counters that moved most: the deterministic ones first, then up
	 * to three noisy ones beyond the first five. */
	struct move *mv = xcalloc(head->n ? head->n : 1, sizeof *mv);
	size_t n = 0;
	for (size_t i = 0; i < head->n; i++) {
		if (!metric_explained(head->name[i]))
			continue;
		double b = explain_map_get(base, head->name[i]), h = head->v[i];
		if (isnan(b) || b == h || b == 0)
			continue;
		mv[n++] = (struct move){ head->name[i], b, h, (h - b) / fabs(b), head->det[i] };
	}
	qsort(mv, n, sizeof *mv, cmp_move);
	size_t noisy = 0;
	for (size_t i = 0; i < n && x->n_moved < sizeof x->moved / sizeof x->moved[0]; i++) {
		if (i >= 5 && (mv[i].det || noisy++ >= 3))
			continue;
		x->moved[x->n_moved++] = (struct kg_xmove){ xstrdup(mv[i].name), mv[i].b, mv[i].h, mv[i].det };
	}
	free(mv);
	if (diag && !explain_has_diagnostics(base, chip))
		x->note = xstrdup("The base side has no collected counters: its counter rules are n/a "
				  "('kgate explain --collect --base-dir DIR' collects them).");
	buf_free(&t);
	return diag > 0;
}

/* One moved counter's change: "x8.0" or "+5.1%". */
static void move_change(struct kg_buf *b, const struct kg_xmove *m)
{
	pct(b, m->base, m->head);
	if (m->det)
		buf_adds(b, ", deterministic");
}

/* One line of the text rendering: formatted, then through escape_text()
 * (a rule's text or a note read from a file may carry LF, CR or ESC). */
static void text_line(struct kg_buf *b, const char *fmt, ...) KG_PRINTF(2, 3);
static void text_line(struct kg_buf *b, const char *fmt, ...)
{
	struct kg_buf l = KG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&l, fmt, ap);
	va_end(ap);
	escape_text(b, l.s ? l.s : "");
	buf_addc(b, '\n');
	buf_free(&l);
}

static void render_text(const struct kg_explanation *x, struct kg_buf *b)
{
	for (size_t i = 0; i < x->n_rules; i++) {
		const struct kg_xrow *r = &x->rule[i];
		char sp[32] = "-";
		if (!isnan(r->speedup))
			snprintf(sp, sizeof sp, "%.1f%%", r->speedup);
		text_line(b, "  %-24s base %-5s head %-5s %-7s %s", r->id, r->base, r->head, sp, r->text);
	}
	if (x->n_moved)
		buf_adds(b, "  counters that moved most:\n");
	for (size_t i = 0; i < x->n_moved; i++) {
		struct kg_buf m = KG_BUF_INIT;
		move_change(&m, &x->moved[i]);
		text_line(b, "    %s %.6g -> %.6g (%s)", x->moved[i].metric, x->moved[i].base,
			  x->moved[i].head, m.s ? m.s : "");
		buf_free(&m);
	}
	if (x->note)
		text_line(b, "  %s", x->note);
}

static void render_markdown(const struct kg_explanation *x, struct kg_buf *b)
{
	buf_adds(b, "| rule | base | head | est. speed-up (head) |\n|---|---|---|---|\n");
	for (size_t i = 0; i < x->n_rules; i++) {
		const struct kg_xrow *r = &x->rule[i];
		buf_printf(b, "| %s | %s | %s: ", r->id, r->base, r->head);
		escape_markdown(b, r->text);
		if (isnan(r->speedup))
			buf_adds(b, " | - |\n");
		else
			buf_printf(b, " | %.1f%% |\n", r->speedup);
	}
	if (x->n_moved)
		buf_adds(b, "\nCounters that moved most:\n\n");
	for (size_t i = 0; i < x->n_moved; i++) {
		buf_printf(b, "- `%s` %.6g -> %.6g (", x->moved[i].metric, x->moved[i].base, x->moved[i].head);
		move_change(b, &x->moved[i]);
		buf_adds(b, ")\n");
	}
	if (x->note) {
		buf_adds(b, "\n");
		escape_markdown(b, x->note);
		buf_adds(b, "\n");
	}
}

static void render_html(const struct kg_explanation *x, struct kg_buf *b)
{
	buf_adds(b, "<table class=\"rules\"><tr><th>rule</th><th>base</th><th>head</th>"
		    "<th>est. speed-up (head)</th><th>head's numbers</th></tr>\n");
	for (size_t i = 0; i < x->n_rules; i++) {
		const struct kg_xrow *r = &x->rule[i];
		int newly = !strcmp(r->head, "fires") && strcmp(r->base, "fires");
		buf_printf(b, "<tr%s><td>", newly ? " class=\"fires\"" : "");
		escape_html(b, r->id);
		buf_adds(b, "</td><td>");
		escape_html(b, r->base);
		buf_adds(b, "</td><td>");
		escape_html(b, r->head);
		if (isnan(r->speedup))
			buf_adds(b, "</td><td>-</td><td>");
		else
			buf_printf(b, "</td><td>%.1f%%</td><td>", r->speedup);
		escape_html(b, r->text);
		buf_adds(b, "</td></tr>\n");
	}
	buf_adds(b, "</table>\n");
	if (x->n_moved)
		buf_adds(b, "<p>Counters that moved most:</p>\n<ul>\n");
	for (size_t i = 0; i < x->n_moved; i++) {
		buf_adds(b, "<li><code>");
		escape_html(b, x->moved[i].metric);
		buf_printf(b, "</code> %.6g &rarr; %.6g (", x->moved[i].base, x->moved[i].head);
		move_change(b, &x->moved[i]);
		buf_adds(b, ")</li>\n");
	}
	if (x->n_moved)
		buf_adds(b, "</ul>\n");
	if (x->note) {
		buf_adds(b, "<p class=\"note\">");
		escape_html(b, x->note);
		buf_adds(b, "</p>\n");
	}
}

void explain_render(const struct kg_explanation *x, enum kg_explain_fmt f, struct kg_buf *b)
{
	switch (f) {
	case KG_EXPLAIN_TEXT: render_text(x, b); break;
	case KG_EXPLAIN_MARKDOWN: render_markdown(x, b); break;
	case KG_EXPLAIN_HTML: render_html(x, b); break;
	}
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

char *explain_to_json(const struct kg_explanation *x)
{
	json_t *rules = json_array(), *moved = json_array();
	for (size_t i = 0; i < x->n_rules; i++) {
		const struct kg_xrow *r = &x->rule[i];
		json_array_append_new(rules, json_pack("{s:s, s:s, s:s, s:o, s:s}", "id", r->id,
						       "base", r->base, "head", r->head,
						       "speedup", jnum(r->speedup), "text", r->text));
	}
	for (size_t i = 0; i < x->n_moved; i++) {
		const struct kg_xmove *m = &x->moved[i];
		json_array_append_new(moved, json_pack("{s:s, s:o, s:o, s:b}", "metric", m->metric,
						       "base", jnum(m->base), "head", jnum(m->head),
						       "deterministic", m->det));
	}
	json_t *o = json_pack("{s:b, s:o, s:o, s:o}", "diagnostics", x->diagnostics, "rules", rules,
			      "moved", moved, "note", x->note ? json_string(x->note) : json_null());
	char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s ? s : xstrdup("{}");
}

/* A JSON number, or NAN for null or anything else. */
static double jget(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

int explain_from_json(const char *benchmark, const char *nvtx, const char *base_kernel,
		      const char *head_kernel, const char *why, const char *json,
		      struct kg_explanation *x)
{
	memset(x, 0, sizeof *x);
	json_t *o = json ? json_loads(json, 0, NULL) : NULL;
	if (!json_is_object(o)) {
		json_decref(o);
		return -1;
	}
	x->benchmark = xstrdup(benchmark ? benchmark : "");
	x->nvtx = xstrdup(nvtx ? nvtx : "");
	x->base_kernel = xstrdup(base_kernel ? base_kernel : "");
	x->head_kernel = xstrdup(head_kernel ? head_kernel : "");
	x->why = xstrdup(why ? why : "");
	x->diagnostics = json_is_true(json_object_get(o, "diagnostics"));
	const char *note = json_string_value(json_object_get(o, "note"));
	x->note = note ? xstrdup(note) : NULL;
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(o, "rules"), i, e) {
		if (x->n_rules == KG_RULE_COUNT)
			break;
		struct kg_xrow *r = &x->rule[x->n_rules++];
		copy_str(r->id, sizeof r->id, json_string_value(json_object_get(e, "id")));
		copy_str(r->base, sizeof r->base, json_string_value(json_object_get(e, "base")));
		copy_str(r->head, sizeof r->head, json_string_value(json_object_get(e, "head")));
		copy_str(r->text, sizeof r->text, json_string_value(json_object_get(e, "text")));
		r->speedup = jget(e, "speedup");
	}
	json_array_foreach(json_object_get(o, "moved"), i, e) {
		const char *m = json_string_value(json_object_get(e, "metric"));
		if (!m || x->n_moved == sizeof x->moved / sizeof x->moved[0])
			continue;
		x->moved[x->n_moved++] = (struct kg_xmove){ xstrdup(m), jget(e, "base"), jget(e, "head"),
							    json_is_true(json_object_get(e, "deterministic")) };
	}
	json_decref(o);
	return 0;
}

void explain_free(struct kg_explanation *x)
{
	free(x->benchmark);
	free(x->nvtx);
	free(x->base_kernel);
	free(x->head_kernel);
	free(x->why);
	free(x->note);
	for (size_t i = 0; i < x->n_moved; i++)
		free(x->moved[i].metric);
	memset(x, 0, sizeof *x);
}

void explain_free_all(struct kg_explanation *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		explain_free(&x[i]);
	free(x);
}

/* ---- what to explain ---- */

static const struct kg_series *find_kernel(const struct kg_sampleset *s, const char *k)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->s[i].kernel, k) || !strcmp(s->s[i].demangled, k) ||
		    (s->s[i].base && !strcmp(s->s[i].base, k)))
			return &s->s[i];
	return NULL;
}

static int wanted(const char *const *kernels, size_t n_kernels, const struct kg_result *r)
{
	if (!n_kernels)
		return 1;
	for (size_t i = 0; i < n_kernels; i++)
		if (!strcmp(kernels[i], r->kernel) || (r->demangled && !strcmp(kernels[i], r->demangled)))
			return 1;
	return 0;
}

static const char *label_of(const struct kg_result *r)
{
	return r->demangled && *r->demangled ? r->demangled : r->kernel;
}

static void add_item(struct kg_explain_item **it, size_t *n, struct kg_explain_item x)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*it)[i].bench, x.bench) && !strcmp((*it)[i].nvtx, x.nvtx) &&
		    !strcmp((*it)[i].bk, x.bk) && !strcmp((*it)[i].hk, x.hk))
			return;
	*it = xrealloc(*it, (*n + 1) * sizeof **it);
	(*it)[(*n)++] = x;
}

void explain_pick(const struct kg_gate *g, const struct kg_sampleset *bs,
		  const struct kg_sampleset *hs, const char *const *pairs, size_t n_pairs,
		  const char *const *kernels, size_t n_kernels, struct kg_explain_item **it, size_t *n)
{
	*it = NULL;
	*n = 0;
	for (size_t i = 0; i < n_pairs; i++) {
		const char *eq = strchr(pairs[i], '=');
		if (!eq)
			continue;
		char *b = xstrndup(pairs[i], (size_t)(eq - pairs[i]));
		const struct kg_series *sb = find_kernel(bs, b), *sh = find_kernel(hs, eq + 1);
		if (!sb)
			kg_warn("no kernel '%s' in the baseline runs", b);
		else if (!sh)
			kg_warn("no kernel '%s' in the head run", eq + 1);
		else
			add_item(it, n, (struct kg_explain_item){ sb->benchmark, sb->nvtx, sb->kernel, sh->kernel,
								   sb->demangled, sh->demangled });
		free(b);
	}
	if (n_pairs && !n_kernels)
		return;
	for (size_t i = 0; i < g->n; i++) {
		const struct kg_result *r = &g->r[i];
		if (r->verdict == KG_VERDICT_FAIL && r->fails && wanted(kernels, n_kernels, r))
			add_item(it, n, (struct kg_explain_item){ r->benchmark, r->nvtx, r->kernel, r->kernel,
								   label_of(r), label_of(r) });
		if (r->verdict != KG_VERDICT_MISSING)
			continue;
		for (size_t j = 0; j < g->n; j++) {
			const struct kg_result *q = &g->r[j];
			if (q->verdict == KG_VERDICT_NEW && !strcmp(q->benchmark, r->benchmark) &&
			    !strcmp(q->nvtx, r->nvtx) && (wanted(kernels, n_kernels, r) || wanted(kernels, n_kernels, q)))
				add_item(it, n, (struct kg_explain_item){ r->benchmark, r->nvtx, r->kernel, q->kernel,
									   label_of(r), label_of(q) });
		}
	}
}

