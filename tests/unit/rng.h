/*
 * rng.h: the reproducible random numbers of the unit tests' simulations
 * (xorshift64*, then Box-Muller), with the state kept by each test so that
 * a test's sequence does not depend on another's.  Header-only.
 */
#ifndef KGATE_TEST_RNG_H
#define KGATE_TEST_RNG_H

#include <math.h>
#include <stdint.h>

/* Uniform on [0, 1). */
static inline double rng_uniform(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return (double)((*s * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* Standard normal. */
static inline double rng_normal(uint64_t *s)
{
	double u = rng_uniform(s), v = rng_uniform(s);
	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

#endif
