/*
 * profiler.c: metrics mode (placeholder until the Range Profiler lands).
 */
#include "profiler.h"

#include "coll.h"

int profiler_init(void)
{
	return -1;
}

void profiler_on_context(CUcontext ctx, int created)
{
	(void)ctx;
	(void)created;
}

int profiler_launch_enter(CUcontext ctx, const char *symbol, int64_t ordinal)
{
	(void)ctx;
	(void)symbol;
	(void)ordinal;
	return 0;
}

void profiler_launch_exit(CUcontext ctx, int64_t ordinal)
{
	(void)ctx;
	(void)ordinal;
}

void profiler_finish(void)
{
}
