/*
 * launch.h: kernel launches seen through the CUPTI callback API, and the
 * join that turns an activity record (trace.c) plus the launch's NVTX path
 * and, in metrics mode, the profiler's values (profiler.c) into one kernel
 * record.
 */
#ifndef KGATE_COLL_LAUNCH_H
#define KGATE_COLL_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "coll.h"

/* Enable the launch callbacks (runtime and driver) on the subscriber. */
void launch_enable(CUpti_SubscriberHandle sub);
void launch_on_callback(CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
			const CUpti_CallbackData *cb);
/* The stream a launch call's parameters name (CU_STREAM_PER_THREAD for
 * the per-thread default stream, NULL for the legacy one) into *out: 1, or
 * 0 when the call is no launch known here. */
int launch_stream_of(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const CUpti_CallbackData *cb,
		     CUstream *out);
/* A kernel activity record arrived (any thread). */
void launch_on_kernel(const struct coll_kernel *k);
/* The profiler's values for a profiled launch: one per coll_cfg.metrics,
 * NaN for a value it could not give; NULL when profiling the launch failed. */
void launch_set_values(int64_t ordinal, const double *values);
/* Step replay: the launch's values came from the passes of steps step ..
 * step + passes - 1 (before launch_set_values). */
void launch_set_steps(int64_t ordinal, int64_t step, int passes);
/* Metrics mode: is some stream of the process being captured now? */
int launch_capture_active(void);
/* Write what is still waiting (at exit, after the last flush). */
void launch_finish(void);
/* A launch meant to be profiled goes without counters and makes no
 * profiled record (its engine stopped): counted into the footer's
 * "no_counters" with the profiled records written without them. */
void launch_missed_counters(void);
/* Extra footer counts: "unmatched", "replayed", "no_timestamp", "no_counters". */
void launch_footer_fields(struct jw *w);

#endif
