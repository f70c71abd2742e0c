/* test_ghevent.c: unit tests for ghevent.c: the event payloads GitHub
 * sends (pull_request, push, schedule), what is taken from them, and bad
 * payloads, which are a warning and leave nothing behind. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kgate/ghevent.h"
#include "kgate/util.h"

#include "helpers.h"

#define HEAD "1111111111111111111111111111111111111111"
#define BASE "2222222222222222222222222222222222222222"
#define ZERO "0000000000000000000000000000000000000000"

static char *path;

/* TEXT as the event file; its path (the scratch directory's event.json). */
static const char *payload(const char *text)
{
	free(path);
	path = helper_write_tmp("event.json", text);
	return path;
}

static void test_pull_request(void **state)
{
	struct kg_ghevent ev;
	(void)state;
	const char *p = payload(
		"{\"action\": \"synchronize\", \"number\": 7, \"pull_request\": {\"number\": 7,"
		" \"head\": {\"ref\": \"slow\", \"sha\": \"" HEAD "\"},"
		" \"base\": {\"ref\": \"main\", \"sha\": \"" BASE "\"}},"
		" \"repository\": {\"default_branch\": \"main\"}}");
	assert_int_equal(ghevent_parse(p, "pull_request", &ev), 1);
	assert_int_equal(ev.kind, KG_EV_PULL_REQUEST);
	assert_string_equal(ev.head_sha, HEAD);
	assert_string_equal(ev.head_ref, "slow");
	assert_string_equal(ev.base_sha, BASE);
	assert_string_equal(ev.base_ref, "main");
	assert_int_equal(ev.pr, 7);
	assert_false(ghevent_push_to_default(&ev));
	ghevent_free(&ev);
	assert_int_equal(ghevent_parse(p, "pull_request_target", &ev), 1);
	assert_int_equal(ev.kind, KG_EV_PULL_REQUEST);
	ghevent_free(&ev);
	unlink(p);
}

static void test_push(void **state)
{
	struct kg_ghevent ev;
	(void)state;
	const char *p = payload("{\"ref\": \"refs/heads/main\", \"before\": \"" BASE "\","
				" \"after\": \"" HEAD "\", \"repository\": {\"default_branch\": \"main\"}}");
	assert_int_equal(ghevent_parse(p, "push", &ev), 1);
	assert_int_equal(ev.kind, KG_EV_PUSH);
	assert_string_equal(ev.head_sha, HEAD);
	assert_string_equal(ev.before, BASE);
	assert_string_equal(ev.branch, "main");
	assert_true(ghevent_push_to_default(&ev));
	ghevent_free(&ev);
	unlink(p);

	/* a new branch: before is all zeros, and not the default branch */
	p = payload("{\"ref\": \"refs/heads/topic\", \"before\": \"" ZERO "\","
		    " \"after\": \"" HEAD "\", \"repository\": {\"default_branch\": \"main\"}}");
	assert_int_equal(ghevent_parse(p, "push", &ev), 1);
	assert_null(ev.before);
	assert_string_equal(ev.branch, "topic");
	assert_false(ghevent_push_to_default(&ev));
	ghevent_free(&ev);
	unlink(p);

	/* a tag push names no branch */
	p = payload("{\"ref\": \"refs/tags/v1\", \"after\": \"" HEAD "\","
		    " \"repository\": {\"default_branch\": \"main\"}}");
	assert_int_equal(ghevent_parse(p, "push", &ev), 1);
	assert_null(ev.branch);
	assert_false(ghevent_push_to_default(&ev));
	ghevent_free(&ev);
	unlink(p);
}

static void test_schedule(void **state)
{
	struct kg_ghevent ev;
	(void)state;
	const char *p = payload("{\"schedule\": \"17 3 * * *\", \"repository\": {\"default_branch\": \"trunk\"}}");
	assert_int_equal(ghevent_parse(p, "schedule", &ev), 1);
	assert_int_equal(ev.kind, KG_EV_OTHER);
	assert_null(ev.head_sha);
	assert_string_equal(ev.default_branch, "trunk");
	ghevent_free(&ev);
	unlink(p);
}

static void test_bad_payloads(void **state)
{
	struct kg_ghevent ev;
	(void)state;
	static const char *const bad[] = {
		"{\"pull_request\": ",                                      /* truncated */
		"[1, 2]",                                                   /* not an object */
		"{\"pull_request\": {\"head\": {\"sha\": \"abc\"}}}",       /* not a SHA */
		"{\"pull_request\": {\"head\": {\"sha\": 5}}}",             /* not a string */
		"{\"pull_request\": {\"head\": {\"sha\": \"" ZERO "\"}}}",  /* all zeros */
		"{\"number\": 1, \"number\": 2}",                           /* duplicate key */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *p = payload(bad[i]);
		assert_int_equal(ghevent_parse(p, "pull_request", &ev), -1);
		assert_int_equal(ev.kind, KG_EV_NONE);
		assert_null(ev.head_sha);
		assert_null(ev.name);
		unlink(p);
	}
	assert_int_equal(ghevent_parse("/nonexistent/event.json", "push", &ev), -1);
	assert_null(ev.name);
}

static void test_load_only_in_actions(void **state)
{
	struct kg_ghevent ev;
	(void)state;
	const char *p = payload("{\"ref\": \"refs/heads/main\", \"after\": \"" HEAD "\"}");
	setenv("GITHUB_EVENT_PATH", p, 1);
	setenv("GITHUB_EVENT_NAME", "push", 1);
	unsetenv("GITHUB_ACTIONS");
	assert_int_equal(ghevent_load(&ev), 0);
	assert_int_equal(ev.kind, KG_EV_NONE);
	setenv("GITHUB_ACTIONS", "true", 1);
	assert_int_equal(ghevent_load(&ev), 1);
	assert_int_equal(ev.kind, KG_EV_PUSH);
	ghevent_free(&ev);
	unsetenv("GITHUB_EVENT_PATH");
	assert_int_equal(ghevent_load(&ev), 0);
	unsetenv("GITHUB_ACTIONS");
	unsetenv("GITHUB_EVENT_NAME");
	unlink(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pull_request),
		cmocka_unit_test(test_push),
		cmocka_unit_test(test_schedule),
		cmocka_unit_test(test_bad_payloads),
		cmocka_unit_test(test_load_only_in_actions),
	};
	return cmocka_run_group_tests(tests, helper_tmpdir_setup, helper_tmpdir_teardown);
}
