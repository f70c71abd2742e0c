/*
 * fuzz_gpustate.c: libFuzzer harness for the stored GPU state (gpustate.h):
 * a state and a summary read back from JSON (as check and stats read them
 * from a database another program may have written), then written again and
 * described, which must not overflow the fixed-size fields.
 */
#include "fuzz.h"

#include "kgate/gpustate.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size, JSON_ALLOW_NUL, &je);
	struct kg_gpu_state s;
	struct kg_gpu_summary sum;
	char err[200], buf[400];

	if (!j)
		return 0;
	if (gpustate_from_json(j, &s, err, sizeof(err)) == 0) {
		json_decref(gpustate_to_json(&s));
		gpustate_concerns(&s, buf, sizeof(buf));
		gpustate_clock_difference(&s, &s, buf, sizeof(buf));
	}
	if (gpustate_summary_from_json(j, &sum, err, sizeof(err)) == 0) {
		json_decref(gpustate_summary_to_json(&sum));
		gpustate_summary_line(&sum, buf, sizeof(buf));
		gpustate_summary_concerns(&sum, buf, sizeof(buf));
		gpustate_clock_difference(&sum.first, &sum.first, buf, sizeof(buf));
	}
	json_decref(j);
	return 0;
}
