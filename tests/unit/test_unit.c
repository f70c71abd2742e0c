/*
 * test_unit.c: unit tests of unit.c: every unit Nsight Compute printed in
 * the fixtures' exports (2020-2025, both pages) to its stored unit and
 * factor, rates and prefixed denominators included; units kgate does not
 * know kept as given; which stored and given units agree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "kgate/unit.h"

static void check(const char *in, const char *want, double factor)
{
	char out[KG_UNIT_MAX];
	double f = -1;

	assert_string_equal(unit_canonical(in, out, &f), want);
	if (fabs(f - factor) > factor * 1e-12) {
		print_error("'%s': factor %.17g, want %.17g\n", in, f, factor);
		fail();
	}
}

static void test_canonical(void **state)
{
	(void)state;
	/* time, as ns */
	check("nsecond", "ns", 1);
	check("ns", "ns", 1);
	check("usecond", "ns", 1e3);
	check("us", "ns", 1e3);
	check("msecond", "ns", 1e6);
	check("ms", "ns", 1e6);
	check("second", "ns", 1e9);
	check("s", "ns", 1e9);
	/* sizes, decimal prefixes as ncu uses them (65,536 bytes print as 65.54 Kbyte) */
	check("byte", "byte", 1);
	check("Kbyte", "byte", 1e3);
	check("Mbyte", "byte", 1e6);
	check("Gbyte", "byte", 1e9);
	check("Kibyte", "byte", 1024);
	check("Kbyte/block", "byte/block", 1e3);
	check("byte/block", "byte/block", 1);
	/* rates */
	check("byte/second", "byte/s", 1);
	check("byte/s", "byte/s", 1);
	check("Mbyte/s", "byte/s", 1e6);
	check("Gbyte/s", "byte/s", 1e9);
	check("Gbyte/second", "byte/s", 1e9);
	check("Tbyte/s", "byte/s", 1e12);
	check("sector/s", "sector/s", 1);
	/* frequencies: hz, whichever way ncu spells them */
	check("hz", "hz", 1);
	check("Ghz", "hz", 1e9);
	check("Mhz", "hz", 1e6);
	check("cycle/second", "hz", 1);
	check("cycle/usecond", "hz", 1e6);
	check("cycle/nsecond", "hz", 1e9);
	/* kept */
	check("cycle", "cycle", 1);
	check("inst/cycle", "inst/cycle", 1);
	check("warp/cycle", "warp/cycle", 1);
	check("register/thread", "register/thread", 1);
	check("%", "%", 1);
	check("", "", 1);
	check("%/register", "%/register", 1);
	check("SM", "SM", 1);
	check("branches", "branches", 1);
	check("a/b/c", "a/b/c", 1);
	check("Kfoo", "Kfoo", 1);
	/* m, u and n scale seconds only */
	check("mbyte", "mbyte", 1);
}

static void test_agrees(void **state)
{
	(void)state;
	assert_true(unit_agrees("byte/second", "byte/s"));    /* an older kgate's spelling */
	assert_true(unit_agrees("cycle/second", "hz"));
	assert_true(unit_agrees("ns", "ns"));
	assert_true(unit_agrees("", "ns"));                   /* no unit says nothing */
	assert_true(unit_agrees("ns", ""));
	assert_true(unit_agrees(NULL, "ns"));
	assert_false(unit_agrees("Gbyte/s", "byte/s"));       /* values stored 1e9 apart */
	assert_false(unit_agrees("usecond", "ns"));
	assert_false(unit_agrees("ns", "byte"));
	assert_false(unit_agrees("warp/cycle", "warp"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonical),
		cmocka_unit_test(test_agrees),
	};
	return cmocka_run_group_tests_name("unit", tests, NULL, NULL);
}
