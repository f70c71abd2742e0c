/*
 * nccl.c: NCCL's kernels named as such (nccl.h): the collective, reduction
 * operator, data type, algorithm and protocol that a kernel's name gives,
 * and the category (communication or compute) that kgate stats and check
 * print beside every kernel.
 */
#include "kgate/nccl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const collectives[] = {
	"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "SendRecv",
	"AllToAll", "AlltoAll", "Send", "Recv", "Gather", "Scatter", "Generic", NULL,
};
/* two-part names first, so that "NVLS_TREE" is not read as "NVLS" */
static const char *const algorithms[] = {
	"COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS_TREE", "RING", "TREE", "COLLNET", "NVLS",
	"PAT", NULL,
};
static const char *const protocols[] = { "LL128", "LL", "SIMPLE", NULL };
static const char *const ops[] = {
	"Sum", "Prod", "Min", "Max", "PreMulSum", "SumPostDiv", "Avg", NULL,
};
static const char *const types[] = {
	"i8", "u8", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "bf16", "f8e4m3",
	"f8e5m2", "int8_t", "uint8_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "half",
	"float", "double", "__nv_bfloat16", "bfloat16", "rccl_bfloat16", NULL,
};

/* The index of the word of list that s[0..n) is, or -1. */
static int word_in(const char *const *list, const char *s, size_t n)
{
	for (int i = 0; list[i]; i++)
		if (strlen(list[i]) == n && !strncmp(list[i], s, n))
			return i;
	return -1;
}

static void put(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* The function's own name in name: from a mangled "_Z<len><ident>...", the
 * identifier; from a demangled "void f(...)", "f"; *len its length. */
static const char *ident_of(const char *name, size_t *len)
{
	if (!strncmp(name, "_Z", 2) && isdigit((unsigned char)name[2])) {
		char *end;
		unsigned long n = strtoul(name + 2, &end, 10);
		if (n && strlen(end) >= n) {
			*len = n;
			return end;
		}
	}
	if (!strncmp(name, "void ", 5))
		name += 5;
	size_t n = 0;
	while (name[n] && (isalnum((unsigned char)name[n]) || name[n] == '_'))
		n++;
	*len = n;
	return name;
}

int nccl_parse(const char *name, struct kg_nccl *out)
{
	struct kg_nccl dummy;
	size_t len, pre;
	const char *id;

	if (!out)
		out = &dummy;
	memset(out, 0, sizeof(*out));
	if (!name)
		return 0;
	id = ident_of(name, &len);
	if (len > 14 && !strncmp(id, "ncclDevKernel_", 14))
		pre = 14;
	else if (len > 11 && !strncmp(id, "ncclKernel_", 11))
		pre = 11;
	else
		return 0;
	/* the words between '_', two-part algorithms taken whole */
	const char *p = id + pre, *end = id + len;
	while (p < end) {
		const char *q = p;
		while (q < end && *q != '_')
			q++;
		size_t n = (size_t)(q - p);
		int two = 0;
		if (q < end) {
			const char *r = q + 1;
			while (r < end && *r != '_')
				r++;
			if (word_in(algorithms, p, (size_t)(r - p)) >= 0) {
				put(out->algorithm, sizeof out->algorithm, p, (size_t)(r - p));
				p = r < end ? r + 1 : r;
				two = 1;
			}
		}
		if (two)
			continue;
		if (!out->collective[0] && word_in(collectives, p, n) >= 0)
			put(out->collective, sizeof out->collective, p, n);
		else if (!out->algorithm[0] && word_in(algorithms, p, n) >= 0)
			put(out->algorithm, sizeof out->algorithm, p, n);
		else if (!out->protocol[0] && word_in(protocols, p, n) >= 0)
			put(out->protocol, sizeof out->protocol, p, n);
		else if (!out->op[0] && word_in(ops, p, n) >= 0)
			put(out->op, sizeof out->op, p, n);
		else if (!out->type[0] && word_in(types, p, n) >= 0)
			put(out->type, sizeof out->type, p, n);
		else if (!out->collective[0] && n)
			put(out->collective, sizeof out->collective, p, n);  /* a newer one */
		p = q < end ? q + 1 : q;
	}
	return 1;
}

const char *nccl_category(const char *name)
{
	return nccl_parse(name, NULL) ? KG_CAT_COMM : KG_CAT_COMPUTE;
}

const char *nccl_describe(const char *name, char *buf, unsigned n)
{
	struct kg_nccl k;

	if (!n)
		return buf;
	buf[0] = '\0';
	if (!nccl_parse(name, &k))
		return buf;
	snprintf(buf, n, "%s%s%s%s%s%s%s%s%s", k.collective[0] ? k.collective : "collective",
		 k.op[0] ? " " : "", k.op, k.type[0] ? " " : "", k.type,
		 k.algorithm[0] || k.protocol[0] ? " " : "", k.algorithm,
		 k.algorithm[0] && k.protocol[0] ? "/" : "", k.protocol);
	return buf;
}
