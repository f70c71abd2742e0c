/*
 * test_metricinfo.c: unit tests of metricinfo.c without the collector
 * library (KGATE_COLLECTOR names a file that does not exist): every CUPTI
 * question is "cannot tell" with the reason, while the metrics kgate
 * derives itself stay valid and need no replay pass.  The answers with the
 * library are tested end to end in tests/e2e/metrics.t.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kgate/records_format.h"
#include "kgate/metricinfo.h"
#include "kgate/util.h"

static int setup(void **state)
{
	setenv("KGATE_COLLECTOR", "/nonexistent/libkgate-collector.so", 1);
	return 0;
}

static void test_derived_list(void **state)
{
	const char *const want[] = { KG_M_DURATION, KG_M_GRID, KG_M_BLOCK, KG_M_REGS,
				     KG_M_SMEM_ST, KG_M_SMEM_DYN, KG_M_LOCAL };
	size_t n = 0;

	while (metricinfo_derived[n])
		n++;
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(metricinfo_derived[i], want[i]);
}

static void test_no_collector_cannot_tell(void **state)
{
	struct kg_buf err = KG_BUF_INIT;
	const char *const *names = NULL;
	size_t n = 99;

	assert_int_equal(metricinfo_valid("gh100", "dram__bytes_read.sum", &err), -1);
	assert_non_null(strstr(err.s, "cannot load the collector library"));
	/* an AddressSanitizer build never loads the collector, and says so */
	if (!strstr(err.s, "not loaded in an AddressSanitizer build"))
		assert_non_null(strstr(err.s, "/nonexistent/libkgate-collector.so"));
	buf_reset(&err);
	assert_int_equal(metricinfo_names("gh100", &names, &n, &err), -1);
	assert_non_null(strstr(err.s, "KGATE_COLLECTOR"));
	buf_reset(&err);
	char *out[3];
	assert_int_equal(metricinfo_suggest("gh100", "dram__bytes_reed.sum", out, 3, &err), -1);
	buf_free(&err);
}

static void test_derived_valid_without_collector(void **state)
{
	struct kg_buf err = KG_BUF_INIT;

	for (size_t i = 0; metricinfo_derived[i]; i++)
		assert_int_equal(metricinfo_valid("gh100", metricinfo_derived[i], &err), 1);
	assert_null(err.s);
	/* a near miss of a derived name is not derived: cannot tell */
	assert_int_equal(metricinfo_valid("gh100", "launch__grid_sizes", &err), -1);
	buf_free(&err);
}

static void test_passes(void **state)
{
	struct kg_buf err = KG_BUF_INIT;
	const char *launch[] = { KG_M_GRID, KG_M_BLOCK, KG_M_REGS };
	const char *hw[] = { KG_M_GRID, "smsp__inst_executed.sum" };
	int passes = -1;

	/* launch configuration comes from activity records: no replay */
	assert_int_equal(metricinfo_passes("gh100", launch, 3, &passes, &err), 0);
	assert_int_equal(passes, 0);
	/* a profiler metric needs the host API */
	assert_int_equal(metricinfo_passes("gh100", hw, 2, &passes, &err), -1);
	assert_non_null(strstr(err.s, "cannot load the collector library"));
	buf_free(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_derived_list),
		cmocka_unit_test(test_no_collector_cannot_tell),
		cmocka_unit_test(test_derived_valid_without_collector),
		cmocka_unit_test(test_passes),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
