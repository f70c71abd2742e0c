/*
 * fuzz_jtok.c: libFuzzer harness for jtok (src/jtok.c) against jansson.  A
 * text jtok takes must be one jansson takes, read to the same value
 * (jtok_json against json_loadb, json_equal); what jtok declines is not
 * judged.  Seeds: record lines (tests/fuzz/jtok.seeds).
 */
#include "fuzz.h"

#include <jansson.h>

#include "kgate/jtok.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct jtok j;
	json_error_t e;

	if (!jtok_scan(&j, (const char *)data, size))
		return 0;
	json_t *want = json_loadb((const char *)data, size, 0, &e);
	json_t *got = jtok_json(&j, 0);
	if (!want || !json_equal(got, want))
		abort();
	json_decref(got);
	json_decref(want);
	return 0;
}
