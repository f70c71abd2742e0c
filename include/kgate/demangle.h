/*
 * demangle.h: kernel names.  A driver reports a kernel's mangled name
 * (_Z5saxpyifPKfPf); Nsight Compute prints it demangled in its own style
 * ("saxpy(int, float, const float *, float *)").  demangle.c turns both
 * into one canonical demangled form, so that the two sources meet on one
 * kernel row, and derives ncu's "function" base name.
 */
#ifndef KGATE_DEMANGLE_H
#define KGATE_DEMANGLE_H

/* The demangled name (via __cxa_demangle) in canonical form; a name that
 * is not mangled is canonicalised as is.  malloc'd. */
char *demangle_name(const char *name);

/* Canonical form of an already demangled name: "const T *" -> "T const*",
 * no space before '*' or '&', ", " between parameters (the style of
 * __cxa_demangle).  malloc'd. */
char *demangle_canonical(const char *demangled);

/* ncu's "function" base name: no return type, namespaces, template
 * arguments or parameter list ("void ns::gemm<4>(int)" -> "gemm").
 * malloc'd. */
char *demangle_base(const char *demangled);

#endif
