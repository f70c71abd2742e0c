/*
 * test_nccl.c: NCCL's kernels told apart from compute by their names
 * (nccl.c).  The names are real: as NCCL kernels appear in public Nsight
 * Systems reports, PyTorch (Kineto) traces and NCCL's generated device
 * headers, both the driver's mangled spelling and the demangled one, of
 * NCCL 2.19 and later (ncclDevKernel_*) and before (ncclKernel_*).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kgate/nccl.h"

static void test_names(void **state)
{
	(void)state;
	static const struct {
		const char *name, *coll, *op, *type, *algo, *proto;
	} cases[] = {
		{ "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)",
		  "AllReduce", "Sum", "f32", "RING", "LL" },
		{ "_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL24ncclDevKernelArgsStorageILm4096EE",
		  "AllReduce", "Sum", "bf16", "RING", "LL" },
		{ "_Z38ncclDevKernel_AllReduce_Sum_u8_RING_LL24ncclDevKernelArgsStorageILm4096EE",
		  "AllReduce", "Sum", "u8", "RING", "LL" },
		{ "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		  "AllGather", "", "", "RING", "LL" },
		{ "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		  "ReduceScatter", "Sum", "f32", "RING", "LL" },
		{ "ncclDevKernel_AllReduce_Sum_f16_TREE_LL", "AllReduce", "Sum", "f16", "TREE", "LL" },
		{ "ncclDevKernel_Broadcast_RING_LL", "Broadcast", "", "", "RING", "LL" },
		{ "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "SendRecv", "", "", "", "" },
		{ "ncclDevKernel_Reduce_Sum_u8_RING_LL", "Reduce", "Sum", "u8", "RING", "LL" },
		{ "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm *, ncclWorkElem)",
		  "AllReduce", "Sum", "float", "RING", "LL" },
		{ "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
		  "AllReduce", "Sum", "float", "RING", "LL" },
		{ "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", "Generic", "", "", "", "" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct kg_nccl k;
		assert_int_equal(nccl_parse(cases[i].name, &k), 1);
		assert_string_equal(k.collective, cases[i].coll);
		assert_string_equal(k.op, cases[i].op);
		assert_string_equal(k.type, cases[i].type);
		assert_string_equal(k.algorithm, cases[i].algo);
		assert_string_equal(k.protocol, cases[i].proto);
		assert_string_equal(nccl_category(cases[i].name), KG_CAT_COMM);
	}
}

static void test_algorithms_of_two_words(void **state)
{
	(void)state;
	struct kg_nccl k;
	assert_int_equal(nccl_parse("ncclDevKernel_AllReduce_Sum_f32_COLLNET_DIRECT_SIMPLE", &k), 1);
	assert_string_equal(k.algorithm, "COLLNET_DIRECT");
	assert_string_equal(k.protocol, "SIMPLE");
	assert_int_equal(nccl_parse("ncclDevKernel_AllReduce_Sum_bf16_NVLS_TREE_SIMPLE", &k), 1);
	assert_string_equal(k.algorithm, "NVLS_TREE");
	assert_string_equal(k.type, "bf16");
}

static void test_compute(void **state)
{
	(void)state;
	static const char *const names[] = {
		"_Z5saxpyifPKfPf",
		"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int)",
		"ampere_sgemm_64x32_sliced1x4_nn",
		"nccl_like_but_not",       /* no kernel prefix */
		"ncclDevKernel_",          /* the prefix alone */
		"_Z3fooncclDevKernel_AllReduce",
		"",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct kg_nccl k;
		assert_int_equal(nccl_parse(names[i], &k), 0);
		assert_string_equal(k.collective, "");
		assert_string_equal(nccl_category(names[i]), KG_CAT_COMPUTE);
	}
	assert_int_equal(nccl_parse(NULL, NULL), 0);
}

static void test_describe(void **state)
{
	(void)state;
	char buf[96];
	assert_string_equal(nccl_describe("ncclDevKernel_AllReduce_Sum_f32_RING_LL", buf, sizeof buf),
			    "AllReduce Sum f32 RING/LL");
	assert_string_equal(nccl_describe("ncclDevKernel_SendRecv", buf, sizeof buf), "SendRecv");
	assert_string_equal(nccl_describe("_Z5saxpyifPKfPf", buf, sizeof buf), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_algorithms_of_two_words),
		cmocka_unit_test(test_compute),
		cmocka_unit_test(test_describe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
