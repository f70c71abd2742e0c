/*
 * metricinfo.c: metric names as the CUPTI host API knows them, for the CLI.
 *
 * The CLI never includes CUPTI headers.  This file loads
 * libkgate-collector.so with dlopen ($KGATE_COLLECTOR, else next to the
 * kgate binary, else ../lib/kgate/ relative to it) and asks its exported
 * offline queries.  When the library cannot be loaded every answer is
 * "cannot tell" (-1), and callers fall back to a syntax check.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "kgate/collector.h"
#include "kgate/metricinfo.h"
#include "kgate/util.h"

const char *const metricinfo_derived[] = {
	KG_M_DURATION, KG_M_GRID, KG_M_BLOCK, KG_M_REGS, KG_M_SMEM_ST, KG_M_SMEM_DYN,
	KG_M_LOCAL, NULL,
};

/* Rollups and submetrics a base name takes (cuptiProfilerHostGetSubMetrics
 * gives the per-metric list; this is the grammar every counter accepts). */
static const char *const rollups[] = { "sum", "avg", "max", "min" };
static const char *const submetrics[] = {
	"", ".per_second", ".per_cycle_active", ".per_cycle_elapsed",
	".pct_of_peak_sustained_active", ".pct_of_peak_sustained_elapsed",
	".peak_sustained", ".peak_sustained_active", ".peak_sustained_elapsed",
	".pct_of_peak_burst_active", ".pct_of_peak_burst_elapsed",
};

static void *lib;
static int lib_tried;
static char lib_err[512];
static kgate_metrics_list_fn fn_list;
static kgate_metrics_passes_fn fn_passes;

/* Cached name list of one chip. */
static char *cached_chip;
static char **cached_names;
static size_t cached_n;

static void *try_open(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(lib_err, sizeof lib_err, "cannot load '%s': %s", path, e ? e : "unknown error");
	}
	return h;
}

static int load(struct kg_buf *err)
{
	if (!lib_tried) {
		lib_tried = 1;
		const char *env = getenv("KGATE_COLLECTOR");
		if (env && *env) {
			lib = try_open(env);
		} else {
			char exe[PATH_MAX];
			ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
			if (n > 0) {
				exe[n] = '\0';
				char *slash = strrchr(exe, '/');
				if (slash)
					*slash = '\0';
				char *p = xasprintf("%s/libkgate-collector.so", exe);
				lib = try_open(p);
				free(p);
				if (!lib) {
					p = xasprintf("%s/../lib/kgate/libkgate-collector.so", exe);
					lib = try_open(p);
					free(p);
				}
			} else {
				snprintf(lib_err, sizeof lib_err, "cannot find libkgate-collector.so");
			}
		}
		if (lib) {
			*(void **)&fn_list = dlsym(lib, KG_SYM_METRICS_LIST);
			*(void **)&fn_passes = dlsym(lib, KG_SYM_METRICS_PASSES);
			if (!fn_list || !fn_passes) {
				snprintf(lib_err, sizeof lib_err,
					 "the collector library does not export %s and %s",
					 KG_SYM_METRICS_LIST, KG_SYM_METRICS_PASSES);
				fn_list = NULL;
				fn_passes = NULL;
			}
		}
	}
	if (!fn_list) {
		buf_adds(err, lib_err);
		return -1;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int metricinfo_names(const char *chip, const char *const **names, size_t *n,
		     struct kg_buf *err)
{
	if (load(err) < 0)
		return -1;
	if (!cached_chip || strcasecmp(cached_chip, chip)) {
		char e[512] = "";
		char **v = NULL;
		size_t k = 0;
		if (fn_list(chip, &v, &k, e, sizeof e) != 0) {
			buf_adds(err, *e ? e : "the CUPTI host API gave no metric list");
			return -1;
		}
		for (size_t i = 0; i < cached_n; i++)
			free(cached_names[i]);
		free(cached_names);
		free(cached_chip);
		qsort(v, k, sizeof *v, cmp_str);
		cached_names = v;
		cached_n = k;
		cached_chip = xstrdup(chip);
	}
	*names = (const char *const *)cached_names;
	*n = cached_n;
	return 0;
}

static int known_base(const char *base, size_t len, const char *const *names, size_t n)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strncmp(names[mid], base, len);
		if (c == 0 && names[mid][len] != '\0')
			c = 1;
		if (c == 0)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int metricinfo_valid(const char *chip, const char *metric, struct kg_buf *err)
{
	for (size_t i = 0; metricinfo_derived[i]; i++)
		if (!strcmp(metric, metricinfo_derived[i]))
			return 1;
	const char *const *names;
	size_t n;
	if (metricinfo_names(chip, &names, &n, err) < 0)
		return -1;
	const char *dot = strchr(metric, '.');
	if (!dot)
		return 0; /* a base name alone is not a metric */
	if (!known_base(metric, (size_t)(dot - metric), names, n))
		return 0;
	const char *rest = dot + 1;
	/* Ratios and percentages are whole metrics with .ratio/.pct. */
	if (!strcmp(rest, "ratio") || !strcmp(rest, "pct") || !strcmp(rest, "max_rate"))
		return 1;
	for (size_t r = 0; r < sizeof rollups / sizeof *rollups; r++) {
		size_t rl = strlen(rollups[r]);
		if (strncmp(rest, rollups[r], rl))
			continue;
		for (size_t s = 0; s < sizeof submetrics / sizeof *submetrics; s++)
			if (!strcmp(rest + rl, submetrics[s]))
				return 1;
	}
	return 0;
}

int metricinfo_passes(const char *chip, const char *const *metrics, size_t n,
		      int *passes, struct kg_buf *err)
{
	if (load(err) < 0)
		return -1;
	char e[512] = "";
	if (fn_passes(chip, metrics, n, passes, e, sizeof e) != 0) {
		buf_adds(err, *e ? e : "the CUPTI host API cannot count the passes");
		return -1;
	}
	return 0;
}
