/*
 * test_kname.c: one kernel identity across sources (src/kname.c).  Sample
 * sets built here (the names are spellings the H200 fixtures hold: the
 * collector's mangled names and __cxa_demangle forms, ncu's demangled and
 * function names): kname_key keys as the source names; kname_unify pairs a
 * mangled name with ncu's other spelling of it, pools a bare function
 * name's instantiations and the NVTX paths one side lacks, and leaves two
 * mangled names of one source apart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kgate/demangle.h"
#include "kgate/kname.h"
#include "kgate/util.h"

/* Add a series of n values v0, v0+1, ... to set (names owned by the series). */
static void add(struct kg_sampleset *set, const char *bench, const char *nvtx,
		const char *kernel, const char *dem, const char *metric, size_t n, double v0)
{
	set->s = xrealloc(set->s, (set->n + 1) * sizeof(*set->s));
	struct kg_series *s = &set->s[set->n++];
	memset(s, 0, sizeof(*s));
	s->benchmark = xstrdup(bench);
	s->nvtx = xstrdup(nvtx);
	s->kernel = xstrdup(kernel);
	s->demangled = dem ? xstrdup(dem) : demangle_name(kernel);
	s->base = demangle_base(s->demangled);
	s->metric = xstrdup(metric);
	s->unit = xstrdup("ns");
	s->v = xmalloc(n * sizeof(*s->v));
	for (size_t i = 0; i < n; i++)
		s->v[i] = v0 + (double)i;
	s->n = n;
}

/* The series of kernel in set (one), or NULL. */
static const struct kg_series *find(const struct kg_sampleset *set, const char *kernel)
{
	const struct kg_series *f = NULL;
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->s[i].kernel, kernel)) {
			assert_null(f);
			f = &set->s[i];
		}
	return f;
}

static void test_key(void **state)
{
	(void)state;
	assert_string_equal(kname_key("_Z5saxpyifPKfPf", "saxpy(int, float, float const*, float*)",
				      KNAME_DEMANGLED), "_Z5saxpyifPKfPf");
	assert_string_equal(kname_key("saxpy(int, float, const float *, float *)",
				      "saxpy(int, float, float const*, float*)", KNAME_DEMANGLED),
			    "saxpy(int, float, float const*, float*)");
	assert_string_equal(kname_key("Device=0 N=1", "Device=0 N=1", KNAME_AS_GIVEN),
			    "Device=0 N=1");
	assert_true(kname_is_bare("Fan2"));
	assert_false(kname_is_bare("Fan2(float*, int)"));
	assert_false(kname_is_bare("_Z4Fan2Pfi"));
}

/* The collector's mangled Gelu kernels against ncu's demangled spelling
 * (namespaces, lambdas and parameter lists spelt otherwise). */
static void test_pair_spellings(void **state)
{
	static const char *const m1 = "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_18"
		"GeluCUDAKernelImplERNS_18TensorIteratorBaseENS0_8GeluTypeEENKUlvE0_clEvENKUlvE0_clEv"
		"EUlfE_St5arrayIPcLm2EEEEviT0_T1_";
	static const char *const d1 = "void at::native::vectorized_elementwise_kernel<4, at::native::"
		"GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::"
		"operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, "
		"std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
		"at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() "
		"const::{lambda(float)#1}, std::array<char*, 2ul>)";
	static const char *const n1 = "void at::vectorized_elementwise_kernel<4, at::GeluCUDAKernelImpl"
		"(at::TensorIteratorBase &, at::GeluType)::[lambda() (instance 2)]::operator ()() const::"
		"[lambda() (instance 2)]::operator ()() const::[lambda(float) (instance 1)], "
		"std::array<char *, 2>>(int, T2, T3)";
	static const char *const m2 = "_Z4spinPjl";
	struct kg_sampleset a = { 0 }, b = { 0 };
	(void)state;
	add(&a, "torch", "", m1, d1, "gpu__time_duration.sum", 3, 10);
	add(&a, "torch", "", m2, NULL, "gpu__time_duration.sum", 3, 20);
	add(&b, "torch", "", n1, NULL, "gpu__time_duration.sum", 2, 11);
	add(&b, "torch", "", "spin(unsigned int*, long)", NULL, "gpu__time_duration.sum", 2, 21);
	kname_unify(&a, &b);
	assert_int_equal(b.n, 2);
	assert_non_null(find(&b, m1));          /* ncu's spelling took the mangled key */
	assert_non_null(find(&b, m2));          /* equal demangled names */
	assert_int_equal(find(&b, m1)->n, 2);
	assert_true(find(&b, m1)->v[0] == 11);
	store_sampleset_free(&a);
	store_sampleset_free(&b);
}

/* ncu --print-kernel-base function: one name for two instantiations, which
 * the other side's series pool under; and NVTX paths one side lacks. */
static void test_pool(void **state)
{
	struct kg_sampleset a = { 0 }, b = { 0 };
	(void)state;
	add(&a, "t", "step/forward", "_Z8tr_tiledILi32EEvPKfPfii", NULL, "m", 3, 1);
	add(&a, "t", "step/backward", "_Z8tr_tiledILi64EEvPKfPfii", NULL, "m", 2, 5);
	add(&a, "t", "step/forward", "_Z4spinPjl", NULL, "m", 1, 9);
	add(&b, "t", "", "tr_tiled", "tr_tiled", "m", 4, 100);
	add(&b, "t", "", "spin", "spin", "m", 1, 200);
	kname_unify(&a, &b);
	assert_int_equal(a.n, 2);
	const struct kg_series *s = find(&a, "tr_tiled");
	assert_non_null(s);
	assert_int_equal(s->n, 5);              /* both instantiations, both paths */
	assert_string_equal(s->nvtx, "");
	assert_non_null(find(&a, "spin"));
	assert_int_equal(b.n, 2);
	store_sampleset_free(&a);
	store_sampleset_free(&b);
}

/* One source (mangled on both sides): a kernel whose template argument
 * changed is another kernel; and a benchmark one side lacks is left alone. */
static void test_same_source(void **state)
{
	struct kg_sampleset a = { 0 }, b = { 0 };
	(void)state;
	add(&a, "t", "c", "_Z8tr_tiledILi32EEvPKfPfii", NULL, "m", 2, 1);
	add(&a, "only_base", "c", "_Z4spinPjl", NULL, "m", 2, 1);
	add(&b, "t", "c", "_Z8tr_tiledILi64EEvPKfPfii", NULL, "m", 2, 1);
	kname_unify(&a, &b);
	assert_non_null(find(&a, "_Z8tr_tiledILi32EEvPKfPfii"));
	assert_non_null(find(&b, "_Z8tr_tiledILi64EEvPKfPfii"));
	assert_string_equal(find(&a, "_Z4spinPjl")->nvtx, "c");
	store_sampleset_free(&a);
	store_sampleset_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_pair_spellings),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_same_source),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
