/*
 * nvtx.h: NVTX push/pop ranges per thread, seen through the CUPTI callback
 * API, as interned paths such as "step/forward/attention".
 */
#ifndef KGATE_COLL_NVTX_H
#define KGATE_COLL_NVTX_H

#include <cupti.h>

/* The CUPTI_CB_DOMAIN_NVTX callback. */
void nvtx_on_callback(CUpti_CallbackId cbid, const void *data);

/* The calling thread's current range path: an interned string that lives
 * as long as the process, "" when no range is open. */
const char *nvtx_current(void);

/* The path a launch of the calling thread carries: its own, or, when it
 * has no range open, the path open on the process's main thread (then
 * *from_main is 1). */
const char *nvtx_launch_path(int *from_main);

#endif
