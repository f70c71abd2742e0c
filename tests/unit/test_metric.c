/*
 * test_metric.c: the metric vocabulary of metric.c pinned for the metrics
 * whose meaning is known: time, throughput and % of peak, hit rates,
 * occupancy, IPC, bytes and bandwidth, instructions, launch configuration,
 * stalls and bank conflicts; rates are never deterministic; units.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "kgate/metric.h"

static void test_directions(void **state)
{
	(void)state;
	static const struct { const char *metric; enum kg_better better; } cases[] = {
		{ "gpu__time_duration.sum", KG_BETTER_LOWER },
		{ "gpu__time_duration.avg", KG_BETTER_LOWER },
		{ "sm__cycles_elapsed.max", KG_BETTER_LOWER },
		{ "sm__throughput.avg.pct_of_peak_sustained_elapsed", KG_BETTER_HIGHER },
		{ "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", KG_BETTER_HIGHER },
		{ "dram__throughput.avg.pct_of_peak_sustained_elapsed", KG_BETTER_HIGHER },
		{ "lts__t_sector_hit_rate.pct", KG_BETTER_HIGHER },
		{ "l1tex__t_sector_hit_rate.pct", KG_BETTER_HIGHER },
		{ "sm__warps_active.avg.pct_of_peak_sustained_active", KG_BETTER_HIGHER },
		{ "sm__maximum_warps_per_active_cycle_pct", KG_BETTER_HIGHER },
		{ "achieved_occupancy", KG_BETTER_HIGHER },
		{ "launch__occupancy_limit_registers", KG_BETTER_HIGHER },
		{ "smsp__inst_executed.avg.per_cycle_active", KG_BETTER_HIGHER },
		{ "sm__inst_executed.avg.per_cycle_elapsed", KG_BETTER_HIGHER },
		{ "dram__bytes.sum.per_second", KG_BETTER_HIGHER },
		{ "dram__bytes.sum", KG_BETTER_LOWER },
		{ "dram__bytes_read.sum", KG_BETTER_LOWER },
		{ "smsp__inst_executed.sum", KG_BETTER_LOWER },
		{ "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", KG_BETTER_LOWER },
		{ "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", KG_BETTER_LOWER },
		{ "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", KG_BETTER_LOWER },
		{ "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum", KG_BETTER_LOWER },
		{ "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct", KG_BETTER_LOWER },
		{ "launch__local_mem_per_thread", KG_BETTER_LOWER },
		{ "launch__grid_size", KG_BETTER_UNKNOWN },
		{ "launch__block_size", KG_BETTER_UNKNOWN },
		{ "launch__registers_per_thread", KG_BETTER_UNKNOWN },
		{ "launch__shared_mem_per_block_dynamic", KG_BETTER_UNKNOWN },
		{ "some_vendor__thing.sum", KG_BETTER_UNKNOWN },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (metric_better(cases[i].metric) != cases[i].better)
			fail_msg("%s: %s, want %s", cases[i].metric,
				 metric_better_name(metric_better(cases[i].metric)),
				 metric_better_name(cases[i].better));
	}
	assert_int_equal(metric_worse_sign(KG_BETTER_LOWER), 1);
	assert_int_equal(metric_worse_sign(KG_BETTER_HIGHER), -1);
	assert_int_equal(metric_worse_sign(KG_BETTER_UNCHANGED), 0);
	assert_int_equal(metric_worse_sign(KG_BETTER_UNKNOWN), 0);
}

static void test_deterministic(void **state)
{
	(void)state;
	static const char *const yes[] = {
		"launch__grid_size", "launch__block_size", "launch__registers_per_thread",
		"smsp__inst_executed.sum", "dram__bytes_read.sum",
		"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
		"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
	};
	/* Rates and ratios divide by time or cycles: never deterministic. */
	static const char *const no[] = {
		"gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
		"dram__bytes.sum.per_second", "dram__bytes_read.sum.per_second",
		"smsp__inst_executed.avg.per_cycle_active", "smsp__inst_executed.sum.per_cycle_elapsed",
		"lts__t_sector_hit_rate.pct", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum.pct_of_peak_sustained_elapsed",
		"smsp__thread_inst_executed_per_inst_executed.ratio", "launch__occupancy_limit_blocks",
		"sm__warps_active.avg.pct_of_peak_sustained_active",
	};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		if (!metric_deterministic(yes[i]))
			fail_msg("%s should be deterministic", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		if (metric_deterministic(no[i]))
			fail_msg("%s should be noisy", no[i]);
}

static void test_units(void **state)
{
	(void)state;
	assert_string_equal(metric_unit("gpu__time_duration.sum"), "ns");
	assert_string_equal(metric_unit("dram__bytes.sum"), "byte");
	assert_string_equal(metric_unit("dram__bytes.sum.per_second"), "byte/s");
	assert_string_equal(metric_unit("smsp__inst_executed.avg.per_cycle_active"), "inst/cycle");
	assert_string_equal(metric_unit("smsp__inst_executed.sum"), "inst");
	assert_string_equal(metric_unit("sm__throughput.avg.pct_of_peak_sustained_elapsed"), "%");
	assert_string_equal(metric_unit("lts__t_sector_hit_rate.pct"), "%");
	assert_string_equal(metric_unit("launch__registers_per_thread"), "register/thread");
	assert_string_equal(metric_unit("sm__cycles_elapsed.max"), "cycle");
	assert_string_equal(metric_unit("some_vendor__thing.sum"), "");
}

static void test_classify_agrees(void **state)
{
	(void)state;
	const char *m = "dram__bytes.sum.per_second";
	struct kg_metric_class c;
	metric_classify(m, &c);
	assert_string_equal(c.unit, metric_unit(m));
	assert_int_equal(c.deterministic, 0);
	assert_int_equal(c.better, KG_BETTER_HIGHER);
	assert_int_equal(c.explained, 0); /* a rate per second moves with clocks */
	metric_classify("smsp__inst_executed.sum", &c);
	assert_int_equal(c.explained, 1);
	assert_int_equal(metric_explained("device__attribute_max_threads_per_block"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_directions),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_classify_agrees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
