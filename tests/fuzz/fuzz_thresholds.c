/*
 * fuzz_thresholds.c: libFuzzer harness for the thresholds file parser
 * (config_parse_thresholds); a file that parses is also asked for the rule
 * of a few kernel identities, which runs its regexes and NVTX globs.
 */
#include "fuzz.h"

#include "kgate/config.h"
#include "kgate/kgate.h"
#include "kgate/util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

static const char *const metrics[] = {
	"gpu__time_duration.sum", "smsp__inst_executed.sum", "launch__registers_per_thread",
	"dram__bytes_read.sum",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kg_buf errs = KG_BUF_INIT;
	struct kg_thresholds *t = NULL;
	int rc = config_parse_thresholds("thresholds.yaml", (const char *)data, size, &t, &errs);

	if (rc == KG_EXIT_PASS ? !t || errs.len : t || !errs.len)
		abort();
	for (size_t i = 0; t && i < sizeof(metrics) / sizeof(metrics[0]); i++) {
		struct kg_metric_rule r;
		config_rule_for(t, "sgemm", "step/inner", "_Z6kernelPfi", "kernel(float*, int)",
				metrics[i], &r);
		config_rule_for(t, NULL, NULL, "saxpy", NULL, metrics[i], &r);
	}
	config_free_thresholds(t);
	buf_free(&errs);
	return 0;
}
