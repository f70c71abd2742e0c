/*
 * kname.c: one kernel identity across sources (kname.h).
 *
 * At ingest (kname_key, called by the importers' sink): a kernel is keyed
 * by its mangled name when the source gives it (kgate's collector, ncu
 * --print-kernel-base mangled), else by its demangled name in kgate's
 * canonical spelling (demangle.c), else by the name as given (a bare
 * function name: ncu --print-kernel-base function, nvbench states).
 *
 * At comparison (kname_unify, called by check before the gate): the two
 * sides of a benchmark may come from different sources, whose names of
 * one kernel differ: a mangled name against ncu's demangled spelling
 * (which differs from __cxa_demangle's in lambdas, namespaces, literal
 * suffixes and parameter lists), or against ncu's bare function name; and
 * NVTX paths that one source records and the other does not.  Per
 * benchmark, a kernel of one side that the other side lacks is paired:
 *  1. by equal demangled names;
 *  2. a bare function name (no parameter list) on one side stands for
 *     every kernel of that base name on the other, which are pooled under
 *     it (the source pooled them already);
 *  3. by base name and the most words shared, when the pairing is mutual
 *     and shares at least half the words of the two names (or is the one
 *     kernel of its base left on each side), unless both names are mangled
 *     (one source: a kernel whose template arguments changed is another);
 * the side without a mangled name takes the other's key.  When one side
 * has no NVTX path at all in a benchmark, the other side's paths are
 * pooled: the kernel is compared over all its launches.  Pooled series
 * keep their samples; their order is the set's order.
 */
#include "kgate/kname.h"
#include "kgate/demangle.h"
#include "kgate/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int kname_is_mangled(const char *name)
{
	return name[0] == '_' && name[1] == 'Z';
}

int kname_is_bare(const char *name)
{
	return !strchr(name, '(') && !strchr(name, ' ') && !kname_is_mangled(name);
}

const char *kname_key(const char *given, const char *demangled, enum kname_source src)
{
	if (src == KNAME_AS_GIVEN || kname_is_mangled(given))
		return given;
	return demangled;
}

/* ------------------------------------------------------------------ */
/* Renaming a set's series                                             */

/* Point *field at a copy of value owned by the set. */
static void set_name(struct kg_sampleset *set, char **field, const char *value)
{
	char *copy = xstrdup(value);

	if (set->pool) {
		set->pool = xrealloc(set->pool, (set->n_pool + 1) * sizeof(*set->pool));
		set->pool[set->n_pool++] = copy;
	} else {
		free(*field);
	}
	*field = copy;
}

/* ------------------------------------------------------------------ */
/* Pairing                                                             */

/* A distinct kernel of one side of a benchmark (its names copied: the
 * series' names change under it). */
struct kern {
	char *key, *dem, *base;
	int matched;            /* the other side has its key */
	const char *to;         /* its new key, or NULL */
};

static int kern_cmp(const void *pa, const void *pb)
{
	return strcmp(((const struct kern *)pa)->key, ((const struct kern *)pb)->key);
}

/* Whether the sorted k[0..n) has key (binary search). */
static int has_kernel(const struct kern *k, size_t n, const char *key)
{
	struct kern want = { (char *)key, NULL, NULL, 0, NULL };

	return n && bsearch(&want, k, n, sizeof(*k), kern_cmp) != NULL;
}

/* The distinct kernels of benchmark b in set, sorted by key. */
static struct kern *kernels_of(const struct kg_sampleset *set, const char *b, size_t *n)
{
	size_t cap = 16, m = 0;
	struct kern *k = xmalloc(cap * sizeof(*k));

	for (size_t i = 0; i < set->n; i++) {
		const struct kg_series *s = &set->s[i];
		if (strcmp(s->benchmark, b) || (m && !strcmp(k[m - 1].key, s->kernel)))
			continue;
		if (m == cap) {
			cap *= 2;
			k = xrealloc(k, cap * sizeof(*k));
		}
		/* borrowed names for now; the distinct ones are copied below */
		k[m++] = (struct kern){ s->kernel, s->demangled ? s->demangled : s->kernel,
					s->base ? s->base : s->kernel, 0, NULL };
	}
	qsort(k, m, sizeof(*k), kern_cmp);
	*n = 0;
	for (size_t i = 0; i < m; i++) {
		if (*n && !strcmp(k[*n - 1].key, k[i].key))
			continue;
		k[(*n)++] = k[i];
	}
	for (size_t i = 0; i < *n; i++)
		k[i] = (struct kern){ xstrdup(k[i].key), xstrdup(k[i].dem), xstrdup(k[i].base), 0,
				      NULL };
	return k;
}

/* A name's words: runs of letters, digits and '_', lambda and operator
 * spellings and integer suffixes aside, as a sorted list. */
static size_t words(const char *s, char ***out)
{
	char **w = NULL;
	size_t n = 0, cap = 0;

	while (*s) {
		if (!isalnum((unsigned char)*s) && *s != '_') {
			s++;
			continue;
		}
		const char *b = s;
		while (isalnum((unsigned char)*s) || *s == '_')
			s++;
		size_t l = (size_t)(s - b);
		/* 2ul -> 2 */
		if (isdigit((unsigned char)*b))
			while (l > 1 && (b[l - 1] == 'u' || b[l - 1] == 'l' || b[l - 1] == 'U' ||
					 b[l - 1] == 'L'))
				l--;
		char *x = xstrndup(b, l);
		if (!strcmp(x, "instance") || !strcmp(x, "native") || !strcmp(x, "void") ||
		    !strcmp(x, "const") || !strcmp(x, "anonymous") || !strcmp(x, "namespace") ||
		    !strcmp(x, "unnamed")) {
			free(x);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			w = xrealloc(w, cap * sizeof(*w));
		}
		w[n++] = x;
	}
	for (size_t i = 1; i < n; i++)          /* insertion sort: short lists */
		for (size_t j = i; j > 0 && strcmp(w[j - 1], w[j]) > 0; j--) {
			char *t = w[j];
			w[j] = w[j - 1];
			w[j - 1] = t;
		}
	*out = w;
	return n;
}

static void words_free(char **w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(w[i]);
	free(w);
}

/* Shared words over the words of both (a multiset Jaccard), 0..1. */
static double similarity(const char *a, const char *b)
{
	char **wa, **wb;
	size_t na = words(a, &wa), nb = words(b, &wb), i = 0, j = 0, common = 0;

	while (i < na && j < nb) {
		int c = strcmp(wa[i], wb[j]);
		if (!c) {
			common++;
			i++;
			j++;
		} else if (c < 0) {
			i++;
		} else {
			j++;
		}
	}
	words_free(wa, na);
	words_free(wb, nb);
	return na + nb - common ? (double)common / (double)(na + nb - common) : 0;
}

/* The key both sides use for a pair: the mangled one, else y's. */
static const char *pair_key(const struct kern *x, const struct kern *y)
{
	return kname_is_mangled(x->key) ? x->key : y->key;
}

static void kerns_free_one(struct kern *k)
{
	free(k->key);
	free(k->dem);
	free(k->base);
}

static void kerns_free(struct kern *k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		kerns_free_one(&k[i]);
	free(k);
}

/* One pass of pairing rule 3 over the kernels not yet paired; 1 when it
 * paired any (a pair can leave one kernel of its base on each side). */
static int pair_by_words(struct kern *ka, size_t na, struct kern *kb, size_t nb, const double *sim)
{
	int changed = 0;

	for (size_t i = 0; i < na; i++) {
		size_t best = nb, cands = 0, rivals = 0;
		for (size_t j = 0; j < nb; j++)
			if (!ka[i].matched && !kb[j].matched && sim[i * nb + j] >= 0) {
				cands++;
				if (best == nb || sim[i * nb + j] > sim[i * nb + best])
					best = j;
			}
		for (size_t i2 = 0; best < nb && i2 < na; i2++)
			rivals += !ka[i2].matched && sim[i2 * nb + best] >= 0;
		/* the one kernel of its base left on each side pairs whatever its
		 * spelling; among several, half the words shared at least */
		if (best == nb || (!(cands == 1 && rivals == 1) && sim[i * nb + best] < 0.5))
			continue;
		size_t back = na;
		for (size_t i2 = 0; i2 < na; i2++)
			if (!ka[i2].matched && sim[i2 * nb + best] >= 0 &&
			    (back == na || sim[i2 * nb + best] > sim[back * nb + best]))
				back = i2;
		if (back != i)
			continue;
		ka[i].to = kb[best].to = pair_key(&ka[i], &kb[best]);
		ka[i].matched = kb[best].matched = 1;
		changed = 1;
	}
	return changed;
}

static void pair_benchmark(struct kg_sampleset *a, struct kg_sampleset *b, const char *bench)
{
	size_t na, nb;
	struct kern *ka = kernels_of(a, bench, &na), *kb = kernels_of(b, bench, &nb);

	for (size_t i = 0; i < na; i++)
		ka[i].matched = has_kernel(kb, nb, ka[i].key);
	for (size_t j = 0; j < nb; j++)
		kb[j].matched = has_kernel(ka, na, kb[j].key);

	/* The rules pair only kernels the other side lacks: on those alone
	 * (most checks have none, and the matrix below is theirs only). */
	size_t ua = 0, ub = 0;
	for (size_t i = 0; i < na; i++)
		if (!ka[i].matched)
			ka[ua++] = ka[i];
		else
			kerns_free_one(&ka[i]);
	for (size_t j = 0; j < nb; j++)
		if (!kb[j].matched)
			kb[ub++] = kb[j];
		else
			kerns_free_one(&kb[j]);
	na = ua;
	nb = ub;
	if (!na || !nb) {
		kerns_free(ka, na);
		kerns_free(kb, nb);
		return;
	}

	/* 1. equal demangled names */
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb && !ka[i].matched; j++)
			if (!kb[j].matched && !strcmp(ka[i].dem, kb[j].dem)) {
				ka[i].to = kb[j].to = pair_key(&ka[i], &kb[j]);
				ka[i].matched = kb[j].matched = 1;
			}
	/* 2. a bare function name stands for its base on the other side */
	for (int side = 0; side < 2; side++) {
		struct kern *x = side ? kb : ka, *y = side ? ka : kb;
		size_t nx = side ? nb : na, ny = side ? na : nb;
		for (size_t i = 0; i < nx; i++) {
			if (x[i].matched || !kname_is_bare(x[i].key))
				continue;
			for (size_t j = 0; j < ny; j++)
				if (!y[j].matched && !strcmp(y[j].base, x[i].key)) {
					y[j].to = x[i].key;
					y[j].matched = x[i].matched = 1;
				}
		}
	}
	/* 3. by base name and the most words shared, mutually */
	double *sim = xcalloc(na * nb + 1, sizeof(*sim));
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			if (!ka[i].matched && !kb[j].matched && !strcmp(ka[i].base, kb[j].base) &&
			    !(kname_is_mangled(ka[i].key) && kname_is_mangled(kb[j].key)))
				sim[i * nb + j] = similarity(ka[i].dem, kb[j].dem);
			else
				sim[i * nb + j] = -1;   /* not a candidate */
	while (pair_by_words(ka, na, kb, nb, sim))
		;
	free(sim);

	/* the new keys into the series */
	for (int side = 0; side < 2; side++) {
		struct kg_sampleset *set = side ? b : a;
		struct kern *x = side ? kb : ka;
		size_t nx = side ? nb : na;
		for (size_t i = 0; i < set->n; i++) {
			struct kg_series *s = &set->s[i];
			if (strcmp(s->benchmark, bench))
				continue;
			for (size_t k = 0; k < nx; k++)
				if (x[k].to && !strcmp(x[k].key, s->kernel)) {
					if (strcmp(x[k].to, s->kernel))
						set_name(set, &s->kernel, x[k].to);
					break;
				}
		}
	}
	kerns_free(ka, na);
	kerns_free(kb, nb);
}

/* Has the set a series of benchmark b (with an NVTX path, when paths)? */
static int has_series(const struct kg_sampleset *set, const char *b, int paths)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->s[i].benchmark, b) &&
		    (!paths || (set->s[i].nvtx && *set->s[i].nvtx)))
			return 1;
	return 0;
}

static void drop_paths(struct kg_sampleset *set, const char *b)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->s[i].benchmark, b) && set->s[i].nvtx && *set->s[i].nvtx)
			set_name(set, &set->s[i].nvtx, "");
}

void kname_unify(struct kg_sampleset *a, struct kg_sampleset *b)
{
	char **benches = NULL;
	size_t nb = 0;

	for (size_t i = 0; i < a->n; i++) {
		size_t j;
		for (j = 0; j < nb && strcmp(benches[j], a->s[i].benchmark); j++)
			;
		if (j == nb) {
			benches = xrealloc(benches, (nb + 1) * sizeof(*benches));
			benches[nb++] = xstrdup(a->s[i].benchmark);
		}
	}
	for (size_t i = 0; i < nb; i++) {
		if (!has_series(b, benches[i], 0)) {
			free(benches[i]);
			continue;
		}
		int pa = has_series(a, benches[i], 1), pb = has_series(b, benches[i], 1);
		if (pa && !pb)
			drop_paths(a, benches[i]);
		else if (pb && !pa)
			drop_paths(b, benches[i]);
		pair_benchmark(a, b, benches[i]);
		free(benches[i]);
	}
	free(benches);
	store_sampleset_merge(a);
	store_sampleset_merge(b);
}
