/*
 * fuzz_values.c: libFuzzer harness for the strict value parsers shared by
 * the config files and the command line (config_parse_percent,
 * config_parse_duration).  An accepted value must be finite and within the
 * parser's documented range.
 */
#include "fuzz.h"

#include <math.h>

#include "kgate/config.h"
#include "kgate/util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = xstrndup((const char *)data, size);
	double v = -1;

	if (config_parse_percent(s, &v) == 0 && !(isfinite(v) && v >= 0 && v <= 10))
		abort();
	v = -1;
	if (config_parse_duration(s, &v) == 0 && !(isfinite(v) && v >= 0))
		abort();
	free(s);
	return 0;
}
