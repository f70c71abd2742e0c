/*
 * fuzz_suite.c: libFuzzer harness for the suite file parser
 * (config_parse_suite), on the input's bytes as they are.
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kg_buf errs = KG_BUF_INIT;
	struct kg_suite *s = NULL;
	int rc = config_parse_suite("suite/kgate.yaml", (const char *)data, size, &s, &errs);

	/* the contract: PASS with a suite and no messages, or USAGE with messages */
	if (rc == KG_EXIT_PASS ? !s || errs.len : s || !errs.len)
		abort();
	config_free_suite(s);
	buf_free(&errs);
	return 0;
}
