/*
 * metricinfo.h: what the CUPTI host API says about metric names, for the CLI.
 *
 * The CLI never includes CUPTI headers: metricinfo.c loads
 * libkgate-collector.so with dlopen (from $KGATE_COLLECTOR, next to the kgate
 * binary, or from ../lib/kgate/) and calls its exported offline queries.
 * These work without a GPU for a named chip ("gh100").
 */
#ifndef KGATE_METRICINFO_H
#define KGATE_METRICINFO_H

#include <stddef.h>

#include "kgate/util.h"

/* Every base metric name the chip knows, sorted (cached; do not free).
 * 0 on success; -1 when the collector or CUPTI is unavailable (why in err). */
int metricinfo_names(const char *chip, const char *const **names, size_t *n,
		     struct kg_buf *err);

/* Is this a valid full metric name (base name plus a rollup/submetric such
 * as ".sum" or ".avg.pct_of_peak_sustained_elapsed") for the chip?
 * 1 yes, 0 no, -1 cannot tell (collector unavailable). */
int metricinfo_valid(const char *chip, const char *metric, struct kg_buf *err);

/* 1 when the name is derived or was confirmed valid for the chip before, by
 * this collector library (the per-chip cache file); 0 when it cannot say
 * without asking the collector.  Never loads the collector. */
int metricinfo_known(const char *chip, const char *metric);

/* Replay passes a set of metrics needs on the chip; 0 ok, -1 error (in err,
 * naming the first invalid metric). */
int metricinfo_passes(const char *chip, const char *const *metrics, size_t n,
		      int *passes, struct kg_buf *err);

/* Up to max valid names near an invalid one, nearest first (the base name
 * corrected, or the rollup/submetric; derived names too); each malloc'd
 * into out.  Returns how many, or -1 when the collector cannot tell. */
int metricinfo_suggest(const char *chip, const char *metric, char **out, size_t max,
		       struct kg_buf *err);

/* Metrics kgate derives itself from activity records (launch__grid_size,
 * gpu__time_duration.sum in trace mode, ...): always valid, deterministic
 * unless noted.  NULL-terminated. */
extern const char *const metricinfo_derived[];

/* 1 once the collector library (and with it libcupti) has been loaded. */
int metricinfo_loaded(void);

#endif
