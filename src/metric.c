/*
 * metric.c: kgate's one metric vocabulary (metric.h): unit, deterministic
 * or noisy, which direction is worse, worth explaining, from the metric's
 * name alone.
 *
 * Names are CUPTI/Nsight Compute metric names, "<unit>__<counter>.<rollup>
 * [.<submetric>]" (gpu__time_duration.sum, dram__bytes.sum.per_second,
 * smsp__inst_executed.avg.per_cycle_active), or the launch__* names kgate
 * derives itself.  The rules below are ordered: the first that fits wins.
 * A rate or a ratio (a submetric .per_second or .per_cycle_*, a percentage,
 * a ratio, a hit rate, a throughput, occupancy) is never deterministic: it
 * divides by time or cycles, which vary between runs.
 */
#include <ctype.h>
#include <string.h>

#include "kgate/metric.h"

static int has(const char *m, const char *part)
{
	return strstr(m, part) != NULL;
}

/* part as a whole word of the name: between '_', '.' or the ends
 * ("ratio" in "foo.ratio", not in "duration"). */
static int word(const char *m, const char *part)
{
	size_t n = strlen(part);
	for (const char *p = strstr(m, part); p; p = strstr(p + 1, part)) {
		int before = p == m || p[-1] == '_' || p[-1] == '.';
		int after = !p[n] || p[n] == '_' || p[n] == '.';
		if (before && after)
			return 1;
	}
	return 0;
}

/* Google Benchmark's times (import/gbench.c) */
static int is_host_time(const char *m)
{
	return !strcmp(m, "real_time") || !strcmp(m, "cpu_time");
}

static int is_launch(const char *m)
{
	return !strncmp(m, "launch__", 8);
}

/* Divides by time or cycles, or is a proportion. */
static int is_rate(const char *m)
{
	return has(m, "per_second") || has(m, ".per_cycle") || word(m, "pct") ||
	       word(m, "ratio") || has(m, "hit_rate") || has(m, "throughput") ||
	       has(m, "occupancy") || has(m, "per_elapsed") || word(m, "ipc") ||
	       has(m, "efficiency") || has(m, "utilization");
}

/* A count of work done or data moved: the same on every run of the same code. */
static int is_count(const char *m)
{
	return has(m, "inst_executed") || has(m, "bytes") || has(m, "sectors") ||
	       has(m, "requests");
}

int metric_deterministic(const char *m)
{
	if (is_launch(m))
		return !has(m, "occupancy");
	return !is_rate(m) && is_count(m);
}

enum kg_better metric_better(const char *m)
{
	if (is_launch(m)) {
		if (has(m, "occupancy"))
			return KG_BETTER_HIGHER;   /* launch__occupancy_limit_*, ... */
		if (has(m, "local_mem"))
			return KG_BETTER_LOWER;    /* more local memory: register spills */
		/* grid, block, registers, shared memory: no direction is
		 * better in general (the gate treats growth as the worse; a
		 * thresholds file may say `better: unchanged`) */
		return KG_BETTER_UNKNOWN;
	}
	/* What is wasted is worse when it grows, whatever its rollup. */
	if (has(m, "stall") || has(m, "miss") || has(m, "bank_conflict") || has(m, "spill") ||
	    has(m, "replay") || has(m, "latency"))
		return KG_BETTER_LOWER;
	/* Rates of work and proportions of a peak. */
	if (has(m, "hit_rate") || has(m, "pct_of_peak") || has(m, "throughput") ||
	    has(m, "per_second") || has(m, ".per_cycle") || has(m, "occupancy") ||
	    has(m, "warps_active") || has(m, "warps_per") || word(m, "ipc") ||
	    has(m, "efficiency") ||
	    has(m, "utilization") || has(m, "achieved"))
		return KG_BETTER_HIGHER;
	/* Time, cycles and amounts of work. */
	if (has(m, "duration") || has(m, "__time") || is_host_time(m) || has(m, "cycles") ||
	    is_count(m) ||
	    has(m, "inst_issued") || has(m, "wavefronts") || has(m, "transactions"))
		return KG_BETTER_LOWER;
	return KG_BETTER_UNKNOWN;
}

/* The unit of the counter a rate divides, "" when unknown. */
static const char *count_unit(const char *m)
{
	if (has(m, "bytes"))
		return "byte";
	if (has(m, "inst_executed") || has(m, "inst_issued"))
		return "inst";
	if (has(m, "sectors"))
		return "sector";
	if (has(m, "requests"))
		return "request";
	if (has(m, "wavefronts"))
		return "wavefront";
	return "";
}

const char *metric_unit(const char *m)
{
	static const struct { const char *count, *per_second, *per_cycle; } rates[] = {
		{ "byte", "byte/s", "byte/cycle" },
		{ "inst", "inst/s", "inst/cycle" },
		{ "sector", "sector/s", "sector/cycle" },
		{ "request", "request/s", "request/cycle" },
		{ "wavefront", "wavefront/s", "wavefront/cycle" },
	};
	if (word(m, "pct"))
		return "%";
	if (word(m, "ratio"))
		return "";
	if (has(m, "per_second") || has(m, ".per_cycle")) {
		const char *c = count_unit(m);
		for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
			if (!strcmp(rates[i].count, c))
				return has(m, "per_second") ? rates[i].per_second : rates[i].per_cycle;
		return "";
	}
	if (!strncmp(m, "gpu__time_duration", 18) || has(m, "__time") || is_host_time(m))
		return "ns";
	if (!strncmp(m, "launch__shared_mem", 18))
		return "byte/block";
	if (!strncmp(m, "launch__local_mem", 17))
		return "byte/thread";
	if (!strcmp(m, "launch__registers_per_thread"))
		return "register/thread";
	if (has(m, "cycles"))
		return "cycle";
	return count_unit(m);
}

int metric_explained(const char *m)
{
	return !(!strncmp(m, "device__", 8) || !strncmp(m, "profiler__", 10) ||
		 !strncmp(m, "numa__", 6) || !strncmp(m, "nvlink__", 8) ||
		 has(m, ".peak_sustained") || has(m, "per_second") ||
		 !strncmp(m, "launch__occupancy_per_", 22) || has(m, "cycles_elapsed"));
}

int metric_imported(const char *m)
{
	if (!strncmp(m, "nv/", 3) && m[3])
		return 1;
	if (!isalpha((unsigned char)*m) || strstr(m, "__"))
		return 0;
	for (; *m; m++)
		if (!isalnum((unsigned char)*m) && *m != '_')
			return 0;
	return 1;
}

void metric_classify(const char *m, struct kg_metric_class *out)
{
	out->unit = metric_unit(m);
	out->deterministic = metric_deterministic(m);
	out->better = metric_better(m);
	out->explained = metric_explained(m);
}

const char *metric_better_name(enum kg_better b)
{
	switch (b) {
	case KG_BETTER_LOWER: return "lower";
	case KG_BETTER_HIGHER: return "higher";
	case KG_BETTER_UNCHANGED: return "unchanged";
	case KG_BETTER_UNKNOWN: break;
	}
	return "unknown";
}

int metric_worse_sign(enum kg_better b)
{
	return b == KG_BETTER_LOWER ? 1 : b == KG_BETTER_HIGHER ? -1 : 0;
}
