/* test_runner.c: unit tests for runner.c: process fate, bounded output
 * tails, environment, timeout of a whole process group, describe(). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kgate/runner.h"
#include "kgate/util.h"

#include "helpers.h"

static int sh(const char *script, char *const *env, double timeout,
	      struct kg_runner_result *res)
{
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	struct kg_runner_spec spec = { .name = "t", .argv = argv, .env = env,
				       .timeout_s = timeout, .grace_s = 0.5 };
	return runner_run(&spec, res);
}

static void test_exit_status(void **state)
{
	struct kg_runner_result r;
	(void)state;
	assert_int_equal(sh("echo out; echo err >&2; exit 0", NULL, 10, &r), 0);
	assert_true(runner_ok(&r));
	assert_string_equal(r.out_tail, "out\n");
	assert_string_equal(r.err_tail, "err\n");
	runner_result_free(&r);

	assert_int_equal(sh("exit 7", NULL, 10, &r), 0);
	assert_false(runner_ok(&r));
	assert_int_equal(r.exited, 1);
	assert_int_equal(r.exit_status, 7);
	char *d = runner_describe(&r, 10);
	assert_string_equal(d, "exited with status 7");
	free(d);
	runner_result_free(&r);

	assert_int_equal(sh("kill -ABRT $$", NULL, 10, &r), 0);
	assert_int_equal(r.signal, SIGABRT);
	d = runner_describe(&r, 10);
	assert_non_null(strstr(d, "killed by signal 6"));
	free(d);
	runner_result_free(&r);
}

static void test_spawn_error(void **state)
{
	struct kg_runner_result r;
	char *argv[] = { "/nonexistent/program", NULL };
	struct kg_runner_spec spec = { .name = "t", .argv = argv };
	(void)state;
	assert_int_not_equal(runner_run(&spec, &r), 0);
	assert_false(r.spawned);
	assert_non_null(strstr(r.spawn_error, "No such file"));
	runner_result_free(&r);

	char *argv2[] = { "/bin/true", NULL };
	struct kg_runner_spec spec2 = { .name = "t", .argv = argv2, .workdir = "/nonexistent" };
	assert_int_not_equal(runner_run(&spec2, &r), 0);
	assert_non_null(strstr(r.spawn_error, "cannot change to directory '/nonexistent'"));
	runner_result_free(&r);
}

/* 3 MB of output: only the last KG_RUNNER_TAIL_BYTES are kept, in order. */
static void test_bounded_tail(void **state)
{
	struct kg_runner_result r;
	(void)state;
	assert_int_equal(sh("yes 0123456789abcdef | head -n 196608; echo LAST", NULL, 30, &r), 0);
	assert_true(runner_ok(&r));
	assert_int_equal(r.out_bytes, 196608u * 17u + 5u);
	assert_int_equal(strlen(r.out_tail), KG_RUNNER_TAIL_BYTES);
	size_t n = strlen(r.out_tail);
	assert_string_equal(r.out_tail + n - 5, "LAST\n");
	/* every whole line before it is intact */
	const char *p = r.out_tail + n - 5 - 17;
	assert_memory_equal(p, "0123456789abcdef\n", 17);
	runner_result_free(&r);
}

static void test_last_lines(void **state)
{
	(void)state;
	assert_string_equal(runner_last_lines("a\nb\nc\n", 2), "b\nc\n");
	assert_string_equal(runner_last_lines("a\nb\nc", 2), "b\nc");
	assert_string_equal(runner_last_lines("a\nb\n", 5), "a\nb\n");
	assert_string_equal(runner_last_lines("", 3), "");
	assert_string_equal(runner_last_lines("only", 1), "only");
}

static void test_env(void **state)
{
	struct kg_runner_result r;
	char **env = NULL;
	size_t n = 0;
	(void)state;
	setenv("KG_TEST_REPLACED", "old", 1);
	runner_env_add(&env, &n, "KG_TEST_REPLACED=first");
	runner_env_add(&env, &n, "KG_TEST_NEW=a b");
	runner_env_add(&env, &n, "KG_TEST_REPLACED=second");
	assert_int_equal(sh("echo \"$KG_TEST_REPLACED|$KG_TEST_NEW\"; env | grep -c '^KG_TEST_REPLACED='",
			    env, 10, &r), 0);
	assert_string_equal(r.out_tail, "second|a b\n1\n");
	runner_result_free(&r);
	runner_env_free(env, n);

	struct kg_collector_cfg cc = { .mode = KG_MODE_METRICS, .kernels = "regex:gemm",
				       .launch_skip = 2, .launch_count = 20,
				       .replay = KG_REPLAY_APPLICATION,
				       .cache_control = KG_CACHE_NONE };
	char *metrics[] = { "gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed", NULL };
	cc.metrics = metrics;
	cc.n_metrics = 2;
	env = NULL;
	n = 0;
	runner_collector_env(&env, &n, "/c.so", NULL, &cc, "/tmp/x.%p.jsonl", 1);
	const char *want[] = {
		"CUDA_INJECTION64_PATH=/c.so", "KGATE_RECORDS=/tmp/x.%p.jsonl", "KGATE_MODE=metrics",
		"KGATE_METRICS=gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed",
		"KGATE_KERNELS=regex:gemm", "KGATE_LAUNCH_SKIP=2", "KGATE_LAUNCH_COUNT=20",
		"KGATE_REPLAY=application", "KGATE_CACHE_CONTROL=none", "KGATE_PASS=1",
	};
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(env[i], want[i]);
	assert_null(env[n]);
	runner_env_free(env, n);

	/* step replay: the replay and the step's range */
	struct kg_collector_cfg cs = { .mode = KG_MODE_METRICS, .replay = KG_REPLAY_STEP,
				       .step_range = "iteration" };
	env = NULL;
	n = 0;
	runner_collector_env(&env, &n, NULL, NULL, &cs, "/tmp/x.%p.jsonl", -1);
	const char *want_step[] = {
		"KGATE_RECORDS=/tmp/x.%p.jsonl", "KGATE_MODE=metrics", "KGATE_LAUNCH_SKIP=0",
		"KGATE_LAUNCH_COUNT=0", "KGATE_REPLAY=step", "KGATE_STEP_RANGE=iteration",
	};
	assert_int_equal(n, sizeof(want_step) / sizeof(want_step[0]));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(env[i], want_step[i]);
	runner_env_free(env, n);
}

/* A timeout ends the whole group, background children included. */
static void test_timeout_group(void **state)
{
	struct kg_runner_result r;
	char *path = helper_write_tmp("pid", "");
	(void)state;
	char *script = xasprintf("sleep 1000 & echo $! > %s; sleep 1000", path);
	assert_int_equal(sh(script, NULL, 0.3, &r), 0);
	assert_true(r.timed_out);
	assert_false(runner_ok(&r));
	char *d = runner_describe(&r, 0.3);
	assert_string_equal(d, "timed out after 0.3 s");
	free(d);
	FILE *fp = fopen(path, "r");
	long pid = 0;
	assert_non_null(fp);
	assert_int_equal(fscanf(fp, "%ld", &pid), 1);
	fclose(fp);
	/* gone, or a zombie for init to reap */
	char *stat = xasprintf("/proc/%ld/stat", pid);
	fp = fopen(stat, "r");
	if (fp) {
		char st = 0;
		assert_int_equal(fscanf(fp, "%*d %*s %c", &st), 1);
		assert_int_equal(st, 'Z');
		fclose(fp);
	}
	free(stat);
	free(script);
	unlink(path);
	free(path);
	runner_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_spawn_error),
		cmocka_unit_test(test_bounded_tail),
		cmocka_unit_test(test_last_lines),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_timeout_group),
	};
	return cmocka_run_group_tests(tests, helper_tmpdir_setup, helper_tmpdir_teardown);
}
