/*
 * metrics.c: metric names and pass counts from the CUPTI profiler host API.
 *
 * The host half of the Range Profiler works without a GPU for a named chip
 * (cuptiProfilerHostInitialize with no counter availability image), so the
 * CLI (`kgate metrics --chip gh100`, config validation) and CI can ask it.
 * This module exports kgate_metrics_list and kgate_metrics_passes
 * (include/kgate/records_format.h) and builds the config image profiler.c uses.
 */
#include "metrics.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/records_format.h"

/*
 * Single pass on GH100 (H100/H200), measured with metrics_config: time,
 * cycles, instructions, DRAM bytes both ways, SM issue activity and the
 * DRAM share of its peak.  sm__throughput and gpu__compute_memory_throughput
 * cost 8 and 5 passes and are left to an explicit KGATE_METRICS.
 */
const char *const metrics_default[] = {
	"gpu__time_duration.sum",
	"sm__cycles_elapsed.max",
	"smsp__inst_executed.sum",
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"sm__inst_executed.avg.pct_of_peak_sustained_elapsed",
	"smsp__issue_active.avg.pct_of_peak_sustained_active",
	"dram__throughput.avg.pct_of_peak_sustained_elapsed",
	NULL,
};

__attribute__((visibility("default"))) const char *const *kgate_metrics_default(void);

const char *const *kgate_metrics_default(void)
{
	return metrics_default;
}

int metrics_derived(const char *name)
{
	static const char *const derived[] = { KG_M_GRID, KG_M_BLOCK, KG_M_REGS, KG_M_SMEM_ST,
					       KG_M_SMEM_DYN, KG_M_LOCAL };
	for (size_t i = 0; i < sizeof(derived) / sizeof(derived[0]); i++)
		if (name && strcmp(name, derived[i]) == 0)
			return 1;
	return 0;
}

static void metrics_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void metrics_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static const char *metrics_rs(CUptiResult r)
{
	const char *s = NULL;
	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		s = "unknown CUPTI error";
	return s;
}

/* "gh100" -> "GH100" in buf; -1 when it does not fit or is empty. */
static int metrics_chip(const char *chip, char *buf, size_t n)
{
	size_t i;

	if (!chip || !*chip)
		return -1;
	for (i = 0; chip[i]; i++) {
		if (i + 1 >= n)
			return -1;
		buf[i] = (char)toupper((unsigned char)chip[i]);
	}
	buf[i] = '\0';
	return 0;
}

CUpti_Profiler_Host_Object *metrics_host_open(const char *chip, const uint8_t *avail,
					      char *err, size_t errlen)
{
	char up[64];
	CUpti_Profiler_Host_Initialize_Params p = { .structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE };
	CUptiResult r;

	if (metrics_chip(chip, up, sizeof(up))) {
		metrics_err(err, errlen, "bad chip name '%s'", chip ? chip : "");
		return NULL;
	}
	p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	p.pChipName = up;
	p.pCounterAvailabilityImage = avail;
	r = cuptiProfilerHostInitialize(&p);
	if (r != CUPTI_SUCCESS || !p.pHostObject) {
		if (metrics_host_missing())
			metrics_err(err, errlen,
				    "CUPTI's host API is unavailable: libcupti could not load "
				    "libnvperf_host.so (%s); install it beside libcupti or put its "
				    "directory on LD_LIBRARY_PATH", metrics_rs(r));
		else
			metrics_err(err, errlen, "CUPTI does not know chip '%s' (%s)", up,
				    metrics_rs(r));
		return NULL;
	}
	return p.pHostObject;
}

/* libcupti loads libnvperf_host.so at the host API's first initialization,
 * also when the chip then turns out to be unknown (seen with CUPTI 13.0);
 * so after a failed initialization, the library not being in the process
 * means libcupti could not load it. */
int metrics_host_missing(void)
{
	void *h = dlopen("libnvperf_host.so", RTLD_LAZY | RTLD_NOLOAD);

	if (!h)
		return 1;
	dlclose(h);
	return 0;
}

void metrics_host_close(CUpti_Profiler_Host_Object *h)
{
	CUpti_Profiler_Host_Deinitialize_Params p = { .structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE };

	if (!h)
		return;
	p.pHostObject = h;
	(void)cuptiProfilerHostDeinitialize(&p);
}

void metrics_cfg_free(struct metrics_cfg *c)
{
	metrics_host_close(c->host);
	free(c->avail);
	free(c->config);
	memset(c, 0, sizeof(*c));
}

/* Is name a metric of the chip?  Properties accept full names (with the
 * rollup); a base name alone is refused later by ConfigAddMetrics. */
static int metrics_valid(CUpti_Profiler_Host_Object *h, const char *name)
{
	CUpti_Profiler_Host_GetMetricProperties_Params p = { .structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE };

	p.pHostObject = h;
	p.pMetricName = name;
	return cuptiProfilerHostGetMetricProperties(&p) == CUPTI_SUCCESS;
}

/* The first metric the chip refuses on its own, or NULL. */
static const char *metrics_blame(const char *chip, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		CUpti_Profiler_Host_Object *h = metrics_host_open(chip, NULL, NULL, 0);
		CUpti_Profiler_Host_ConfigAddMetrics_Params a = { .structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE };
		const char *one[1] = { names[i] };
		CUptiResult r;
		if (!h)
			return NULL;
		a.pHostObject = h;
		a.ppMetricNames = one;
		a.numMetrics = 1;
		r = cuptiProfilerHostConfigAddMetrics(&a);
		metrics_host_close(h);
		if (r != CUPTI_SUCCESS)
			return names[i];
	}
	return NULL;
}

int metrics_config(CUpti_Profiler_Host_Object *h, const char *chip, const char *const *names,
		   size_t n, uint8_t **img, size_t *img_size, int *passes, char *err,
		   size_t errlen)
{
	CUptiResult r;

	*img = NULL;
	*img_size = 0;
	if (!n) {
		metrics_err(err, errlen, "no metrics given");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!names[i] || !metrics_valid(h, names[i])) {
			metrics_err(err, errlen, "unknown metric '%s' for chip %s",
				    names[i] ? names[i] : "(null)", chip);
			return -1;
		}
	}
	/* All in one call: metrics added in separate calls are scheduled in
	 * separate passes.  When the call fails, find the metric to blame. */
	CUpti_Profiler_Host_ConfigAddMetrics_Params a = { .structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE };
	a.pHostObject = h;
	a.ppMetricNames = (const char **)names;
	a.numMetrics = n;
	r = cuptiProfilerHostConfigAddMetrics(&a);
	if (r != CUPTI_SUCCESS) {
		const char *bad = metrics_blame(chip, names, n);
		if (bad)
			metrics_err(err, errlen,
				    "metric '%s' cannot be collected on chip %s (%s); a full name "
				    "needs a rollup such as .sum, .avg or .max",
				    bad, chip, metrics_rs(r));
		else
			metrics_err(err, errlen, "these %zu metrics cannot be collected together "
				    "on chip %s (%s)", n, chip, metrics_rs(r));
		return -1;
	}
	CUpti_Profiler_Host_GetConfigImageSize_Params gs = { .structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE };
	gs.pHostObject = h;
	r = cuptiProfilerHostGetConfigImageSize(&gs);
	if (r != CUPTI_SUCCESS || !gs.configImageSize) {
		metrics_err(err, errlen, "cuptiProfilerHostGetConfigImageSize failed: %s",
			    metrics_rs(r));
		return -1;
	}
	uint8_t *b = malloc(gs.configImageSize);
	if (!b) {
		metrics_err(err, errlen, "out of memory");
		return -1;
	}
	CUpti_Profiler_Host_GetConfigImage_Params gi = { .structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE };
	gi.pHostObject = h;
	gi.configImageSize = gs.configImageSize;
	gi.pConfigImage = b;
	r = cuptiProfilerHostGetConfigImage(&gi);
	if (r != CUPTI_SUCCESS) {
		metrics_err(err, errlen, "cuptiProfilerHostGetConfigImage failed: %s", metrics_rs(r));
		free(b);
		return -1;
	}
	CUpti_Profiler_Host_GetNumOfPasses_Params np = { .structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE };
	np.pConfigImage = b;
	np.configImageSize = gs.configImageSize;
	r = cuptiProfilerHostGetNumOfPasses(&np);
	if (r != CUPTI_SUCCESS) {
		metrics_err(err, errlen, "cuptiProfilerHostGetNumOfPasses failed: %s", metrics_rs(r));
		free(b);
		return -1;
	}
	*img = b;
	*img_size = gs.configImageSize;
	*passes = (int)np.numOfPasses;
	return 0;
}

/* Passes of one set in a fresh host object; -1 on error. */
static int metrics_passes_of(const char *chip, const uint8_t *avail, const char *const *names,
			     size_t n, char *err, size_t errlen)
{
	CUpti_Profiler_Host_Object *h = metrics_host_open(chip, avail, err, errlen);
	uint8_t *img = NULL;
	size_t sz;
	int passes = -1;

	if (!h)
		return -1;
	if (metrics_config(h, chip, names, n, &img, &sz, &passes, err, errlen) != 0)
		passes = -1;
	free(img);
	metrics_host_close(h);
	return passes;
}

int metrics_split(const char *chip, const uint8_t *avail, const char *const *names, size_t n,
		  int *group, int *ngroups, char *err, size_t errlen)
{
	const char **cur = calloc(n ? n : 1, sizeof(*cur));
	size_t ncur = 0;
	int g = 0;

	if (!cur) {
		metrics_err(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		cur[ncur] = names[i];
		int p = metrics_passes_of(chip, avail, cur, ncur + 1, err, errlen);
		if (p < 0) {
			free(cur);
			return -1;
		}
		if (p > 1 && ncur > 0) {
			/* start a new group with this metric */
			g++;
			cur[0] = names[i];
			ncur = 1;
			p = metrics_passes_of(chip, avail, cur, 1, err, errlen);
			if (p < 0) {
				free(cur);
				return -1;
			}
		} else {
			ncur++;
		}
		group[i] = g;
		if (p > 1) {
			/* alone it needs several passes: nothing joins it */
			g++;
			ncur = 0;
		}
	}
	free(cur);
	*ngroups = ncur ? g + 1 : g;
	return 0;
}

static int metrics_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

__attribute__((visibility("default"))) int kgate_metrics_list(const char *chip, char ***names,
							      size_t *n, char *err,
							      size_t errlen);

int kgate_metrics_list(const char *chip, char ***names, size_t *n, char *err, size_t errlen)
{
	static const CUpti_MetricType types[] = { CUPTI_METRIC_TYPE_COUNTER,
						  CUPTI_METRIC_TYPE_RATIO,
						  CUPTI_METRIC_TYPE_THROUGHPUT };
	CUpti_Profiler_Host_Object *h = metrics_host_open(chip, NULL, err, errlen);
	char **out = NULL;
	size_t cnt = 0;

	*names = NULL;
	*n = 0;
	if (!h)
		return -1;
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		CUpti_Profiler_Host_GetBaseMetrics_Params p = { .structSize = CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE };
		CUptiResult r;
		p.pHostObject = h;
		p.metricType = types[t];
		r = cuptiProfilerHostGetBaseMetrics(&p);
		if (r != CUPTI_SUCCESS) {
			metrics_err(err, errlen, "cuptiProfilerHostGetBaseMetrics failed: %s",
				    metrics_rs(r));
			goto fail;
		}
		char **grown = realloc(out, (cnt + p.numMetrics + 1) * sizeof(*out));
		if (!grown)
			goto oom;
		out = grown;
		for (size_t i = 0; i < p.numMetrics; i++) {
			if (!p.ppMetricNames[i])
				continue;
			out[cnt] = strdup(p.ppMetricNames[i]);
			if (!out[cnt])
				goto oom;
			cnt++;
		}
	}
	if (cnt)
		qsort(out, cnt, sizeof(*out), metrics_cmp);
	/* drop duplicates (a name may be listed under two types) */
	size_t k = 0;
	for (size_t i = 0; i < cnt; i++) {
		if (k && strcmp(out[k - 1], out[i]) == 0)
			free(out[i]);
		else
			out[k++] = out[i];
	}
	metrics_host_close(h);
	*names = out;
	*n = k;
	return 0;
oom:
	metrics_err(err, errlen, "out of memory");
fail:
	for (size_t i = 0; i < cnt; i++)
		free(out[i]);
	free(out);
	metrics_host_close(h);
	return -1;
}

__attribute__((visibility("default"))) int kgate_metrics_passes(const char *chip,
								const char *const *metrics,
								size_t n, int *passes, char *err,
								size_t errlen);

int kgate_metrics_passes(const char *chip, const char *const *metrics, size_t n, int *passes,
			 char *err, size_t errlen)
{
	char up[64];
	uint8_t *img = NULL;
	size_t sz = 0;
	int rc;
	const char **keep = calloc(n ? n : 1, sizeof(*keep));
	size_t k = 0;

	if (!keep) {
		metrics_err(err, errlen, "out of memory");
		return -1;
	}
	/* the launch__* metrics come from activity records: no pass */
	for (size_t i = 0; i < n; i++)
		if (!metrics_derived(metrics[i]))
			keep[k++] = metrics[i];
	if (n && !k) {
		free(keep);
		*passes = 0;
		return 0;
	}
	CUpti_Profiler_Host_Object *h = metrics_host_open(chip, NULL, err, errlen);
	if (!h) {
		free(keep);
		return -1;
	}
	if (metrics_chip(chip, up, sizeof(up)))
		up[0] = '\0';
	rc = metrics_config(h, up, keep, k, &img, &sz, passes, err, errlen);
	free(img);
	free(keep);
	metrics_host_close(h);
	return rc;
}
