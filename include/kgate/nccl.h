/*
 * nccl.h: communication kernels told apart from compute by their names.
 *
 * NCCL's device kernels are named after what they do: since NCCL 2.19
 * "ncclDevKernel_<collective>[_<op>_<type>]_<algorithm>_<protocol>"
 * ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "ncclDevKernel_AllGather_RING_LL",
 * "ncclDevKernel_SendRecv"), before it
 * "ncclKernel_<collective>_<algorithm>_<protocol>[_<op>_<type>]"
 * ("ncclKernel_AllReduce_RING_LL_Sum_float"); RCCL's "ncclDevKernel_Generic_N".
 * nccl.c reads the name as the driver reports it (mangled, "_Z40ncclDev...")
 * or demangled, and says which parts the name gives.
 */
#ifndef KGATE_NCCL_H
#define KGATE_NCCL_H

/* What a kernel's name says of it; empty strings for what it does not say. */
struct kg_nccl {
	char collective[24];    /* "AllReduce", "AllGather", "ReduceScatter", "Broadcast",
	                           "Reduce", "SendRecv", "AllToAll", "Generic" ... */
	char op[16];            /* "Sum", "Prod", "Min", "Max", "PreMulSum", "SumPostDiv" */
	char type[24];          /* "f32", "bf16", "float", "half" ... as the name spells it */
	char algorithm[24];     /* "RING", "TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS",
	                           "NVLS_TREE", "PAT" */
	char protocol[16];      /* "LL", "LL128", "SIMPLE" */
};

/* The category of every kernel: KG_CAT_COMM for NCCL's, else KG_CAT_COMPUTE. */
#define KG_CAT_COMM "communication"
#define KG_CAT_COMPUTE "compute"

/* 1 and *out filled (out may be NULL) when name is an NCCL kernel's, else 0
 * and *out emptied. */
int nccl_parse(const char *name, struct kg_nccl *out);
/* KG_CAT_COMM or KG_CAT_COMPUTE. */
const char *nccl_category(const char *name);
/* "AllReduce Sum f32 RING/LL": the parts the name gives, in a short line
 * written to buf (size n); "" for a kernel that is not NCCL's. */
const char *nccl_describe(const char *name, char *buf, unsigned n);

#endif
