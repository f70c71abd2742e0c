/*
 * metric.h: what a metric's name says about it.
 *
 * metric.c owns kgate's one metric vocabulary: the unit a metric is stored
 * in when its source gives none, whether it is a deterministic counter
 * (compared launch by launch, exactly or within a tolerance) or a noisy
 * measurement (compared with statistics), which direction of change is the
 * worse one, and whether explain weighs it.  Importers, the store, the
 * gate, the report and explain all ask here; a thresholds file may
 * override the direction (`better:`) and the kind (`deterministic:`) for
 * any metric (config.c, gate.c).
 */
#ifndef KGATE_METRIC_H
#define KGATE_METRIC_H

/* Which direction of change is the better one. */
enum kg_better {
	KG_BETTER_UNKNOWN = 0,  /* not known (grid, block): the gate treats growth as the worse */
	KG_BETTER_LOWER,        /* time, instructions, bytes, stalls, conflicts */
	KG_BETTER_HIGHER,       /* throughput, % of peak, rates, hit rates, occupancy, IPC */
	KG_BETTER_UNCHANGED,    /* only from a thresholds file: any change is the worse */
};

struct kg_metric_class {
	const char *unit;       /* "ns", "byte", "byte/s", "inst/cycle", "%", or "" */
	int deterministic;      /* 1: a counter that does not vary between runs */
	enum kg_better better;
	int explained;          /* 1: explain lists its moves */
};

/* Everything the name says, at once. */
void metric_classify(const char *metric, struct kg_metric_class *out);

/* 1 for deterministic counters (launch__* configuration, instructions,
 * bytes, sectors, requests); never for rates or ratios (.per_second,
 * .per_cycle_*, pct, ratio, hit rates, throughput, occupancy). */
int metric_deterministic(const char *metric);
/* The unit of a metric whose source gives none; "" when unknown, never NULL. */
const char *metric_unit(const char *metric);
enum kg_better metric_better(const char *metric);
/* 0 for device attributes, peaks, rates per second and elapsed cycles,
 * which move with clocks and configuration rather than with the code. */
int metric_explained(const char *metric);

/* 1 when the name is of an importer's own vocabulary, not a CUPTI metric:
 * an nvbench summary tag ("nv/cold/time/gpu/mean"), or a Google Benchmark
 * name (real_time, cpu_time, iterations, a user counter: a letter, then
 * letters, digits and single '_'s); thresholds accept those without the collector's metric tables. */
int metric_imported(const char *metric);

/* "lower", "higher", "unchanged", "unknown". */
const char *metric_better_name(enum kg_better b);
/* +1 when growth is worse, -1 when a fall is worse, 0 unknown or either. */
int metric_worse_sign(enum kg_better b);

#endif
