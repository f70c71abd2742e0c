/*
 * test_gpustate.c: unit tests of gpustate.c.  NVML is the synthetic
 * stand-in of tests/nvml/nvml_double.c (its values come from the
 * environment set here), or a library that does not exist: NVML absent,
 * NVML that fails to start, and queries NVML does not support all leave a
 * state that says "not recorded" or -1, never a failure; throttle reasons,
 * other processes and clock differences are named; the JSON form reads
 * back what it wrote and refuses values out of range.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/gpustate.h"

static char double_path[4096];

static void use_double(void)
{
	const char *b = getenv("KGATE_BUILD");

	snprintf(double_path, sizeof(double_path), "%s/tests/libnvml-double.so", b ? b : "build");
	setenv("KGATE_NVML_LIBRARY", double_path, 1);
	unsetenv("NVML_DOUBLE_INIT");
	unsetenv("NVML_DOUBLE_UNSUPPORTED");
	unsetenv("NVML_DOUBLE_PROCS");
	unsetenv("NVML_DOUBLE_EVENTS");
	unsetenv("NVML_DOUBLE_SM");
	unsetenv("NVML_DOUBLE_APP_SM");
	unsetenv("NVML_DOUBLE_DEVICES");
}

static void test_absent(void **state)
{
	struct kg_nvml *nv;
	struct kg_gpu_state s;

	(void)state;
	setenv("KGATE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	nv = gpustate_open();
	assert_non_null(nv);
	assert_false(gpustate_available(nv));
	assert_non_null(strstr(gpustate_why(nv), "NVML not loaded"));
	assert_int_equal(gpustate_read(nv, NULL, &s), -1);
	assert_false(s.recorded);
	assert_non_null(strstr(s.why, "NVML not loaded"));
	assert_int_equal(gpustate_read_all(nv, &s, 1), 0);
	gpustate_close(nv);
}

static void test_init_fails(void **state)
{
	struct kg_nvml *nv;
	struct kg_gpu_state s;

	(void)state;
	use_double();
	setenv("NVML_DOUBLE_INIT", "fail", 1);
	nv = gpustate_open();
	assert_false(gpustate_available(nv));
	assert_string_equal(gpustate_why(nv), "NVML did not start: Unknown Error");
	assert_int_equal(gpustate_read(nv, NULL, &s), -1);
	assert_false(s.recorded);
	gpustate_close(nv);
}

static void test_read(void **state)
{
	struct kg_nvml *nv;
	struct kg_gpu_state s, all[4];
	char buf[300];

	(void)state;
	use_double();
	setenv("NVML_DOUBLE_DEVICES", "2", 1);
	setenv("NVML_DOUBLE_SM", "1755", 1);
	nv = gpustate_open();
	assert_true(gpustate_available(nv));
	assert_int_equal(gpustate_read(nv, NULL, &s), 0);
	assert_true(s.recorded);
	assert_string_equal(s.name, "Stand-in GPU 0");
	assert_int_equal(s.sm_mhz, 1755);
	assert_int_equal(s.mem_mhz, 2619);
	assert_int_equal(s.power_limit_mw, 700000);
	assert_int_equal(s.clock_events, 0);
	assert_int_equal(s.nprocs, 0);
	assert_string_equal(gpustate_concerns(&s, buf, sizeof(buf)), "");

	assert_int_equal(gpustate_read(nv, "GPU-00000000-0000-0000-0000-000000000001", &s), 0);
	assert_string_equal(s.name, "Stand-in GPU 1");
	assert_int_equal(gpustate_read(nv, "GPU-ffffffff-0000-0000-0000-000000000001", &s), -1);
	assert_non_null(strstr(s.why, "does not know device"));
	assert_int_equal(gpustate_read_all(nv, all, 4), 2);
	assert_string_equal(all[1].uuid, "GPU-00000000-0000-0000-0000-000000000001");
	gpustate_close(nv);
}

static void test_unsupported(void **state)
{
	struct kg_nvml *nv;
	struct kg_gpu_state s;
	char buf[300];

	(void)state;
	use_double();
	setenv("NVML_DOUBLE_UNSUPPORTED", "1", 1);
	nv = gpustate_open();
	assert_int_equal(gpustate_read(nv, NULL, &s), 0);
	assert_true(s.recorded);
	assert_int_equal(s.sm_mhz, -1);
	assert_int_equal(s.temp_c, -1);
	assert_int_equal(s.clock_events, -1);
	assert_int_equal(s.nprocs, -1);
	assert_int_equal(gpustate_throttle_bits(&s), 0);
	assert_string_equal(gpustate_concerns(&s, buf, sizeof(buf)), "");
	gpustate_close(nv);
}

static void test_concerns(void **state)
{
	struct kg_nvml *nv;
	struct kg_gpu_state s;
	char buf[300];
	unsigned ours[] = { 4242 }, first = 0;

	(void)state;
	use_double();
	/* gpu_idle (0x1) is not a slowdown; sw_power_cap (0x4) and
	 * hw_thermal_slowdown (0x40) are. */
	setenv("NVML_DOUBLE_EVENTS", "0x45", 1);
	setenv("NVML_DOUBLE_PROCS", "4242:1048576,777:0", 1);
	nv = gpustate_open();
	assert_int_equal(gpustate_read(nv, NULL, &s), 0);
	assert_int_equal(gpustate_throttle_bits(&s), 0x44);
	assert_string_equal(gpustate_reason_names(0x45, buf, sizeof(buf)),
			    "gpu_idle, sw_power_cap, hw_thermal_slowdown");
	assert_string_equal(gpustate_reason_names(0x10000, buf, sizeof(buf)), "unknown 0x10000");
	assert_int_equal(s.nprocs, 2);
	assert_int_equal(gpustate_others(&s, ours, 1, &first), 1);
	assert_int_equal(first, 777);
	assert_string_equal(gpustate_concerns(&s, buf, sizeof(buf)),
			    "clocks slowed (sw_power_cap, hw_thermal_slowdown); "
			    "2 other processes computing (pid 4242)");
	gpustate_close(nv);
}

static void test_many_procs(void **state)
{
	struct kg_nvml *nv;
	struct kg_gpu_state s;
	char procs[2000] = "";
	size_t used = 0;

	(void)state;
	use_double();
	for (int i = 0; i < 70; i++)
		used += (size_t)snprintf(procs + used, sizeof(procs) - used, "%s%d:1",
					 i ? "," : "", 1000 + i);
	setenv("NVML_DOUBLE_PROCS", procs, 1);
	nv = gpustate_open();
	assert_int_equal(gpustate_read(nv, NULL, &s), 0);
	/* More than NVML was asked to list: counted, none listed. */
	assert_int_equal(s.nprocs, 70);
	assert_int_equal(s.nlisted, 0);
	assert_int_equal(gpustate_others(&s, NULL, 0, NULL), 70);
	gpustate_close(nv);
}

static int stop_calls;
static int stop_after_two(void)
{
	/* the other process "ends" after the second look */
	if (++stop_calls == 2)
		unsetenv("NVML_DOUBLE_PROCS");
	return 0;
}

static void test_wait_idle(void **state)
{
	struct kg_nvml *nv;
	struct kg_gpu_state s;

	(void)state;
	use_double();
	nv = gpustate_open();
	assert_int_equal(gpustate_wait_idle(nv, NULL, 0, 0.01, NULL, &s), 0);
	setenv("NVML_DOUBLE_PROCS", "555:1", 1);
	assert_int_equal(gpustate_wait_idle(nv, NULL, 0.05, 0.01, NULL, &s), 1);
	assert_int_equal(s.procs[0].pid, 555);
	stop_calls = 0;
	assert_int_equal(gpustate_wait_idle(nv, NULL, 30, 0.01, stop_after_two, &s), 0);
	assert_int_equal(stop_calls, 2);
	assert_int_equal(gpustate_wait_idle(nv, "GPU-nope", 1, 0.01, NULL, &s), -1);
	gpustate_close(nv);
	setenv("KGATE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	nv = gpustate_open();
	assert_int_equal(gpustate_wait_idle(nv, NULL, 1, 0.01, NULL, &s), -1);
	assert_non_null(strstr(s.why, "NVML not loaded"));
	gpustate_close(nv);
}

static void test_clock_difference(void **state)
{
	struct kg_gpu_state a, b;
	char buf[300];

	(void)state;
	memset(&a, 0, sizeof(a));
	a.recorded = 1;
	a.sm_app_mhz = 1980, a.mem_app_mhz = 2619, a.sm_max_mhz = 1980, a.sm_mhz = 1980;
	b = a;
	assert_string_equal(gpustate_clock_difference(&a, &b, buf, sizeof(buf)), "");
	b.sm_mhz = 1900; /* within 5% */
	assert_string_equal(gpustate_clock_difference(&a, &b, buf, sizeof(buf)), "");
	b.sm_mhz = 1400;
	assert_string_equal(gpustate_clock_difference(&a, &b, buf, sizeof(buf)),
			    "SM clocks differ: 1980 MHz against 1400 MHz");
	b.sm_app_mhz = 1410;
	assert_non_null(strstr(gpustate_clock_difference(&a, &b, buf, sizeof(buf)),
			       "application clocks differ"));
	b.recorded = 0;
	assert_string_equal(gpustate_clock_difference(&a, &b, buf, sizeof(buf)), "");
}

static void test_json_round_trip(void **state)
{
	struct kg_nvml *nv;
	struct kg_gpu_state s, t;
	json_t *j;
	char err[200];

	(void)state;
	use_double();
	setenv("NVML_DOUBLE_EVENTS", "0x4", 1);
	setenv("NVML_DOUBLE_PROCS", "31:4096", 1);
	nv = gpustate_open();
	assert_int_equal(gpustate_read(nv, NULL, &s), 0);
	j = gpustate_to_json(&s);
	assert_int_equal(gpustate_from_json(j, &t, err, sizeof(err)), 0);
	assert_true(t.recorded);
	assert_string_equal(t.uuid, s.uuid);
	assert_int_equal(t.sm_mhz, s.sm_mhz);
	assert_int_equal(t.power_mw, s.power_mw);
	assert_int_equal(t.clock_events, 4);
	assert_int_equal(t.nprocs, 1);
	assert_int_equal(t.nlisted, 1);
	assert_int_equal(t.procs[0].pid, 31);
	assert_int_equal(t.procs[0].used_bytes, 4096);
	json_decref(j);
	gpustate_close(nv);

	/* Not recorded: the reason survives. */
	memset(&s, 0, sizeof(s));
	snprintf(s.why, sizeof(s.why), "NVML not loaded (x)");
	j = gpustate_to_json(&s);
	assert_int_equal(gpustate_from_json(j, &t, err, sizeof(err)), 0);
	assert_false(t.recorded);
	assert_string_equal(t.why, "NVML not loaded (x)");
	json_decref(j);
}

static void test_summary(void **state)
{
	struct kg_gpu_summary sum, back;
	struct kg_gpu_state a, b, none;
	char buf[400], err[200];
	json_t *j;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.recorded = 1;
	a.sm_mhz = 1980, a.sm_app_mhz = 1980, a.mem_app_mhz = 2619, a.sm_max_mhz = 1980;
	a.temp_c = 35, a.power_mw = 80000, a.power_limit_mw = 700000;
	a.clock_events = 1, a.nprocs = 0;
	b = a;
	b.sm_mhz = 1410, b.temp_c = 61, b.power_mw = 690000, b.clock_events = 0x4;
	b.nprocs = 1, b.nlisted = 1, b.procs[0].pid = 99;
	memset(&none, 0, sizeof(none));
	snprintf(none.why, sizeof(none.why), "NVML not loaded (gone)");

	gpustate_summary_init(&sum);
	assert_string_equal(gpustate_summary_line(&sum, buf, sizeof(buf)), "not recorded");
	gpustate_summary_add(&sum, &a, &a);
	assert_string_equal(gpustate_summary_concerns(&sum, buf, sizeof(buf)), "");
	assert_string_equal(gpustate_summary_line(&sum, buf, sizeof(buf)),
			    "SM 1980 MHz (max 1980), up to 35 C, up to 80 W of 700 W");
	gpustate_summary_add(&sum, &a, &b);
	gpustate_summary_add(&sum, &none, &a);
	assert_int_equal(sum.processes, 3);
	assert_int_equal(sum.recorded, 2);
	assert_string_equal(gpustate_summary_line(&sum, buf, sizeof(buf)),
			    "SM 1410-1980 MHz (max 1980), up to 61 C, up to 690 W of 700 W, "
			    "2 of 3 processes read");
	assert_string_equal(gpustate_summary_concerns(&sum, buf, sizeof(buf)),
			    "clocks slowed (sw_power_cap); 1 other process computing (pid 99)");

	j = gpustate_summary_to_json(&sum);
	assert_int_equal(gpustate_summary_from_json(j, &back, err, sizeof(err)), 0);
	json_decref(j);
	assert_int_equal(back.processes, 3);
	assert_int_equal(back.recorded, 2);
	assert_int_equal(back.sm_mhz_min, 1410);
	assert_int_equal(back.others_max, 1);
	assert_int_equal(back.other_pid, 99);
	assert_int_equal(back.clock_events, 0x5);
	assert_int_equal(back.first.sm_app_mhz, 1980);
	assert_string_equal(back.why, "NVML not loaded (gone)");

	b.sm_app_mhz = 1410;
	gpustate_summary_add(&sum, &b, &b);
	assert_non_null(strstr(gpustate_summary_concerns(&sum, buf, sizeof(buf)),
			       "application clocks changed during the run"));

	j = json_loads("{\"processes\": 1, \"recorded\": 2}", 0, NULL);
	assert_int_equal(gpustate_summary_from_json(j, &back, err, sizeof(err)), -1);
	json_decref(j);
	j = json_loads("{\"first\": {\"sm_mhz\": -3}}", 0, NULL);
	assert_int_equal(gpustate_summary_from_json(j, &back, err, sizeof(err)), -1);
	json_decref(j);
}

static void test_json_hostile(void **state)
{
	static const char *bad[] = {
		"[]",
		"{\"recorded\": 1}",
		"{\"sm_mhz\": -5}",
		"{\"sm_mhz\": 1e300}",
		"{\"util_gpu\": 101}",
		"{\"temp_c\": \"hot\"}",
		"{\"when\": -1}",
		"{\"compute_processes\": 1, \"processes\": [{\"pid\": 1}, {\"pid\": 2}]}",
		"{\"processes\": [{\"pid\": 1}]}",
		"{\"compute_processes\": 1, \"processes\": [{\"used_bytes\": 1}]}",
		"{\"uuid\": \"GPU-\\u0000x\"}",
		"{\"name\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}",
	};
	struct kg_gpu_state s;
	char err[200];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_error_t je;
		json_t *j = json_loads(bad[i], JSON_ALLOW_NUL, &je);

		assert_non_null(j);
		err[0] = '\0';
		if (gpustate_from_json(j, &s, err, sizeof(err)) != -1)
			fail_msg("accepted: %s", bad[i]);
		assert_non_null(strstr(err, "gpu_state"));
		json_decref(j);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_init_fails),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_unsupported),
		cmocka_unit_test(test_concerns),
		cmocka_unit_test(test_many_procs),
		cmocka_unit_test(test_wait_idle),
		cmocka_unit_test(test_clock_difference),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_json_hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
