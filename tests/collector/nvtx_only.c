/*
 * nvtx_only.c: a program that uses NVTX (the real nvtx3 header) and no CUDA
 * call: NVTX_INJECTION64_PATH naming the collector starts it at the first
 * push (tests/e2e/collector.t).
 */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
int main(void)
{
	nvtxRangePushA("outer");
	nvtxRangePushA("inner");
	nvtxRangePop();
	nvtxRangePop();
	puts("done");
	return 0;
}
