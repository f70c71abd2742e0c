/*
 * pmsample.h: metrics mode's PM-sampling engine (KGATE_ENGINE=sampling):
 * CUPTI 13's cuptiPmSampling* per device, every launch serialised and
 * followed by an idle gap, the samples between the gaps' midpoints summed
 * into the launch they surround.  profiler.c hands its calls here when the
 * engine is sampling; launch.c tells it where each launch's stream is.
 */
#ifndef KGATE_COLL_PMSAMPLE_H
#define KGATE_COLL_PMSAMPLE_H

#include <stdint.h>

#include <cupti.h>

/* KGATE_ENGINE=sampling was asked for (coll_cfg.engine). */
int pmsample_engine(void);
/* Settings and the metric set (additive counters only); 0 ok. */
int pmsample_init(void);
/* The first launch in ctx: NVML's check for other processes, the host API's
 * config image, sampling enabled and started on the device. */
void pmsample_prepare(CUcontext ctx);
/* Launch entry and exit, with profiler.h's decisions (PROF_*); graph 1 a
 * graph launch, 2 a memory operation (both fenced, their samples dropped). */
int pmsample_launch_enter(CUcontext ctx, const char *symbol, int64_t ordinal, int graph);
void pmsample_launch_exit(CUcontext ctx, int64_t ordinal, int decision, int failed);
/* Every API entry of a launch being sampled (runtime and the nested driver
 * call): the first one that names the stream records the start event. */
void pmsample_on_enter(CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
		       const CUpti_CallbackData *cb);
/* Let the decoder catch up with everything launched so far (teardown,
 * capture begin). */
void pmsample_sync(void);
void pmsample_on_context_destroy(CUcontext ctx);
void pmsample_finish(void);
int pmsample_usable(void);

#endif
