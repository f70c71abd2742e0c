/*
 * trace.h: trace mode, the Activity API's CONCURRENT_KERNEL records.
 */
#ifndef KGATE_COLL_TRACE_H
#define KGATE_COLL_TRACE_H

/* Register the buffers, enable kernel records, start the periodic flush.
 * 0 ok, -1 no trace (an error record says why). */
int trace_init(void);
/* Deliver what CUPTI holds; forced=1 also returns partly filled buffers. */
void trace_flush(int forced);
/* The last flush at exit. */
void trace_finish(void);

#endif
