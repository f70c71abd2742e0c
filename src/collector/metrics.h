/*
 * metrics.h: the CUPTI profiler host API (offline: a chip name is enough),
 * for the exported queries kgate_metrics_list / kgate_metrics_passes and
 * for profiler.c's config image.
 */
#ifndef KGATE_COLL_METRICS_H
#define KGATE_COLL_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include <cupti_profiler_host.h>

/* The default metric set of metrics mode: single-pass on GH100 (the pass
 * count is measured by tests/e2e/collector.t).  NULL-terminated. */
extern const char *const metrics_default[];

/* Is name one of the launch__* metrics the collector derives from activity
 * records (records_format.h)?  They are no CUPTI metrics and cost no pass. */
int metrics_derived(const char *name);

/* A host object for chip ("GH100", case-insensitive) and an optional
 * counter availability image; NULL on failure (why in err). */
CUpti_Profiler_Host_Object *metrics_host_open(const char *chip, const uint8_t *avail,
					      char *err, size_t errlen);
void metrics_host_close(CUpti_Profiler_Host_Object *h);

/* What an engine (profiler.c per context, pmsample.c per device) holds to
 * configure the counters: the host object of its chip and counter
 * availability, that availability image, and the metric set's config
 * image. */
struct metrics_cfg {
	CUpti_Profiler_Host_Object *host;
	uint8_t *avail;         /* counter availability image */
	uint8_t *config;
	size_t config_size;
};
/* Close and free what c holds (any part may be NULL). */
void metrics_cfg_free(struct metrics_cfg *c);

/* After metrics_host_open failed: 1 when libcupti could not load
 * libnvperf_host.so (the host API is missing, not the chip unknown). */
int metrics_host_missing(void);

/* Validate every name (the first bad one is named in err), add them to the
 * host object's config and build the config image (malloc'd, *img) and its
 * pass count.  0 ok, -1 error. */
int metrics_config(CUpti_Profiler_Host_Object *h, const char *chip, const char *const *names,
		   size_t n, uint8_t **img, size_t *img_size, int *passes, char *err,
		   size_t errlen);

/* Split names into groups that are each one pass on the chip (greedy, in
 * order; a metric that alone needs several passes is a group of its own):
 * group[i] is metric i's group; *ngroups their number.  0 ok, -1 error. */
int metrics_split(const char *chip, const uint8_t *avail, const char *const *names, size_t n,
		  int *group, int *ngroups, char *err, size_t errlen);

#endif
