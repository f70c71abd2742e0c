/*
 * unit.h: the units profilers print, reduced to the one unit kgate stores.
 *
 * unit.c owns the reading of a unit as an SI prefix times a base unit
 * (Nsight Compute prints "nsecond", "usecond", "ms", "Kbyte", "Gbyte/s",
 * "byte/second", "cycle/second", "cycle/nsecond", "Ghz", "Kbyte/block", ...),
 * each rate by its numerator and denominator, into a canonical unit and the
 * factor that takes a value there: time in "ns", sizes in "byte", byte
 * rates in "byte/s", frequencies ("cycle/second", "hz") in "hz".  A unit it
 * does not know ("%", "inst/cycle", "register/thread", "") is kept as it is,
 * factor 1.  It also says whether two units may describe the same metric.
 */
#ifndef KGATE_UNIT_H
#define KGATE_UNIT_H

#include <stddef.h>

/* Longest canonical unit written (longer units are kept as given, cut). */
#define KG_UNIT_MAX 64

/*
 * The canonical form of unit into out[0..KG_UNIT_MAX) and the factor that
 * converts a value given in unit into it (value * *factor).  "Gbyte/s" ->
 * "byte/s", 1e9; "cycle/nsecond" -> "hz", 1e9; "usecond" -> "ns", 1e3;
 * "%" -> "%", 1.  Returns out.
 */
const char *unit_canonical(const char *unit, char *out, double *factor);

/*
 * Whether values stored in unit a (as a store keeps it: any spelling) and
 * values given in canonical unit b are the same quantity on the same
 * scale: 1 yes (also when either is empty, which says nothing), 0 no.
 */
int unit_agrees(const char *a, const char *b);

#endif
