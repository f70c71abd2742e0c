/*
 * kname.h: one kernel identity across sources (kname.c): how an importer
 * keys a kernel name, and how a check pairs the kernels of two sides that
 * different sources named differently.
 */
#ifndef KGATE_KNAME_H
#define KGATE_KNAME_H

#include "kgate/store.h"

/* How a source names kernels: as given (kgate's collector: mangled, or the
 * driver's name; nvbench states), or demangled in its own spelling (ncu,
 * nsys, Kineto), keyed by kgate's canonical demangled form unless mangled. */
enum kname_source { KNAME_AS_GIVEN, KNAME_DEMANGLED };

/* A mangled C++ name ("_Z...")? */
int kname_is_mangled(const char *name);
/* A bare function name (no parameter list, not mangled), such as ncu's
 * --print-kernel-base function prints? */
int kname_is_bare(const char *name);
/* The key of a kernel: given when mangled or the source names as given,
 * else demangled (the canonical form of given, demangle_name). */
const char *kname_key(const char *given, const char *demangled, enum kname_source src);

/* Pair the kernels of a (baseline) and b (head) that their sources named
 * differently, per benchmark, and pool what one source could not tell apart
 * (NVTX paths, one function name's instantiations); both sets come back
 * sorted as the gate wants them. */
void kname_unify(struct kg_sampleset *a, struct kg_sampleset *b);

#endif
