/*
 * test_shard.c: the plan of a sharded run and the identity of a run
 * (shard.c, runcopy.c): --shard's syntax, a shard's status, the plan by
 * count and by stored wall time, and the content digest: independent of
 * the order samples are written in, changed by any value, kept by a copy
 * into another store.  The samples and wall times are SYNTHETIC.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "helpers.h"
#include "kgate/kgate.h"
#include "kgate/runcopy.h"
#include "kgate/shard.h"
#include "kgate/store.h"

static void test_parse(void **state)
{
	int i, n;
	(void)state;
	assert_int_equal(shard_parse("2/3", &i, &n), KG_EXIT_PASS);
	assert_int_equal(i, 2);
	assert_int_equal(n, 3);
	assert_int_equal(shard_parse("1/1", &i, &n), KG_EXIT_PASS);
	const char *bad[] = { "0/3", "4/3", "3", "/3", "1/", "a/b", "1/0", "-1/3", "+1/3",
			      "1/+3", "1/3x", "1/1001", "" };
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
		assert_int_equal(shard_parse(bad[k], &i, &n), KG_EXIT_USAGE);
}

static void test_status(void **state)
{
	int i, n, q;
	(void)state;
	char *s = shard_status(2, 5, 0);
	assert_string_equal(s, "shard 2/5");
	assert_int_equal(shard_of_status(s, &i, &n, &q), 1);
	assert_true(i == 2 && n == 5 && q == 0);
	free(s);
	s = shard_status(1, 3, 1);
	assert_int_equal(shard_of_status(s, &i, &n, &q), 1);
	assert_true(i == 1 && n == 3 && q == 1);
	free(s);
	const char *not[] = { "ok", "quick", "shard 0/3", "shard 4/3", "shard 1/3x",
			      "shard 1/3 quickly", "shard", NULL };
	for (size_t k = 0; not[k]; k++)
		assert_int_equal(shard_of_status(not[k], &i, &n, &q), 0);
	assert_int_equal(shard_of_status(NULL, &i, &n, &q), 0);
}

static const char *const names[] = { "a", "b", "c", "d", "e" };
static const int steps[] = { 2, 2, 2, 2, 2 };

static void test_plan_count(void **state)
{
	int shard[5];
	char basis[160];
	(void)state;
	assert_int_equal(shard_plan(NULL, names, steps, 5, 2, shard, basis, sizeof basis),
			 KG_EXIT_PASS);
	/* equal costs: dealt out in name order */
	assert_int_equal(shard[0], 0);
	assert_int_equal(shard[1], 1);
	assert_int_equal(shard[2], 0);
	assert_int_equal(shard[3], 1);
	assert_int_equal(shard[4], 0);
	assert_non_null(strstr(basis, "count"));
}

/* One run of commit c in st, benchmark name[k] with wall time wall[k] over
 * 2 processes (wall[k] <= 0: no time), and a sample each. */
static int64_t put_run(struct kg_store *st, const char *c, const double *wall, size_t n,
		       int reverse, double bump)
{
	struct kg_run_info r = { 0 };
	struct kg_kernel_name k = { "_Z1kv", "k()", "k" };
	r.commit = (char *)c;
	r.time = 1764720000;
	r.gpu_name = (char *)"Synthetic GPU";
	assert_int_equal(store_run_begin(st, &r), KG_EXIT_PASS);
	for (size_t j = 0; j < n; j++) {
		size_t i = reverse ? n - 1 - j : j;
		char js[128];
		if (wall[i] > 0)
			snprintf(js, sizeof js, "{\"processes\":2,\"recorded\":0,\"wall_s\":%g}", wall[i]);
		else
			snprintf(js, sizeof js, "{\"processes\":2,\"recorded\":0}");
		assert_int_equal(store_run_benchmark_state(st, names[i], js), KG_EXIT_PASS);
		for (int rep = 0; rep < 2; rep++)
			assert_int_equal(store_sample_add(st, names[i], "", &k, "gpu__time_duration.sum",
							  "ns", 0, rep, (int64_t)i,
							  1000.0 + (double)i + rep + (i == 0 ? bump : 0)),
					 KG_EXIT_PASS);
	}
	assert_int_equal(store_run_commit(st), KG_EXIT_PASS);
	return r.id;
}

static void test_plan_time(void **state)
{
	char *p = helper_path("plan.db");
	struct kg_store *st;
	int shard[5];
	char basis[160];
	/* a is slow, d has no time (counts as the mean of the others) */
	const double wall[] = { 40, 2, 2, 0, 2 };
	(void)state;
	assert_int_equal(store_open(p, 0, &st), KG_EXIT_PASS);
	put_run(st, "c1", wall, 5, 0, 0);
	assert_int_equal(shard_plan(st, names, steps, 5, 2, shard, basis, sizeof basis),
			 KG_EXIT_PASS);
	assert_non_null(strstr(basis, "wall times of run 1 (4 of 5 benchmarks)"));
	assert_int_equal(shard[0], 0);          /* a alone */
	for (int i = 1; i < 5; i++)
		assert_int_equal(shard[i], 1);
	/* the same history, the same plan */
	int again[5];
	assert_int_equal(shard_plan(st, names, steps, 5, 2, again, basis, sizeof basis),
			 KG_EXIT_PASS);
	assert_memory_equal(shard, again, sizeof shard);
	store_close(st);
	free(p);
}

static void test_digest(void **state)
{
	char *p = helper_path("digest.db"), *q = helper_path("copy.db");
	struct kg_store *st, *dst;
	struct kg_run_digest d1, d2, d3, d4;
	const double wall[] = { 1, 2, 3, 4, 5 };
	(void)state;
	assert_int_equal(store_open(p, 0, &st), KG_EXIT_PASS);
	int64_t r1 = put_run(st, "c1", wall, 5, 0, 0);
	int64_t r2 = put_run(st, "c1", wall, 5, 1, 0);      /* the same, in reverse order */
	int64_t r3 = put_run(st, "c1", wall, 5, 0, 0.5);    /* one value changed */
	assert_int_equal(runcopy_digest(st, r1, &d1), KG_EXIT_PASS);
	assert_int_equal(runcopy_digest(st, r2, &d2), KG_EXIT_PASS);
	assert_int_equal(runcopy_digest(st, r3, &d3), KG_EXIT_PASS);
	assert_int_equal(d1.samples, 10);
	assert_true(runcopy_digest_equal(&d1, &d2));
	assert_false(runcopy_digest_equal(&d1, &d3));

	/* a copy into another store has the same digest, and is found there */
	struct kg_run_info info;
	assert_int_equal(store_run_get(st, r1, &info), KG_EXIT_PASS);
	assert_int_equal(store_open(q, 0, &dst), KG_EXIT_PASS);
	int64_t id = info.id;
	info.id = 0;
	size_t got = 0;
	assert_int_equal(store_run_begin(dst, &info), KG_EXIT_PASS);
	assert_int_equal(runcopy_contents(st, id, dst, &got, NULL), KG_EXIT_PASS);
	assert_int_equal(store_run_commit(dst), KG_EXIT_PASS);
	assert_int_equal(got, 10);
	assert_int_equal(runcopy_digest(dst, info.id, &d4), KG_EXIT_PASS);
	assert_true(runcopy_digest_equal(&d1, &d4));
	char **b = NULL;
	size_t nb = 0;
	int64_t dup, conflict;
	assert_int_equal(store_run_benchmarks(st, r1, &b, &nb), KG_EXIT_PASS);
	assert_int_equal(runcopy_find(dst, &info, b, nb, &d1, &dup, &conflict), KG_EXIT_PASS);
	assert_true(dup == info.id && conflict == 0);
	assert_int_equal(runcopy_find(dst, &info, b, nb, &d3, &dup, &conflict), KG_EXIT_PASS);
	assert_true(dup == 0 && conflict == info.id);
	/* another benchmark set is another run */
	assert_int_equal(runcopy_find(dst, &info, b, nb - 1, &d1, &dup, &conflict), KG_EXIT_PASS);
	assert_true(dup == 0 && conflict == 0);
	/* the digest of parts added is the digest of the whole */
	struct kg_run_digest sum = { 0 };
	runcopy_digest_add(&sum, &d1);
	runcopy_digest_add(&sum, &d2);
	assert_int_equal(sum.samples, 20);
	store_names_free(b, nb);
	store_run_info_free(&info);
	store_close(dst);
	store_close(st);
	free(p);
	free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_plan_count),
		cmocka_unit_test(test_plan_time),
		cmocka_unit_test(test_digest),
	};
	return cmocka_run_group_tests(tests, helper_tmpdir_setup, helper_tmpdir_teardown);
}
