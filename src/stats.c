/*
 * stats.c: statistics for the gate: descriptive statistics, Holm step-down
 * correction, the one-sided Mann-Whitney U test and the Hodges-Lehmann shift
 * with its interval, all from one null distribution of U.
 *
 * The null distribution is the permutation distribution of U given the
 * pooled sample's tie structure (the sizes of its groups of equal values, in
 * order), so ties keep an exact test.  U is counted in half units (U2 = 2U:
 * a pair y > x counts 2, a tie 1).  It is computed exactly by a dynamic
 * programme over the tie groups where that costs at most EXACT_BUDGET cell
 * updates (about 12 a side), exactly by enumerating the counts per tie group
 * where there are few distinct values (ENUM_BUDGET), and otherwise by
 * Skovgaard's double saddlepoint approximation with a continuity correction
 * on the lattice of attainable values (relative error in the tails 0.1%
 * without ties, up to 8% with 8 or more distinct values, up to 35% with 3;
 * checked against the exact distribution in the unit tests).  With at most
 * TAIL_GROUPS distinct values, a p that a verdict may hang on is computed
 * exactly in the tail (branch and bound over the tie groups, below) where
 * that search is cheap.  Distributions and
 * their critical values are cached per (n, m, tie structure) for the life of
 * the process, so a check's many series of one shape share them.
 *
 * The interval's ends are order statistics of the pairwise differences
 * y[j] - x[i], chosen from the same distribution's critical values, and
 * found by selection in the sorted samples without materialising the n*m
 * differences (randomised Johnson-Mizoguchi).  So the test and the interval
 * agree: the lower end is at or above 0 exactly when p <= (1 - conf) / 2.
 */
#include "kgate/stats.h"
#include "kgate/util.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Largest exact dynamic programme, in cell updates, and largest exact
 * enumeration, in count vectors: each well under a millisecond. */
#define EXACT_BUDGET 300000.0
#define ENUM_BUDGET 30000.0
/* Pairwise differences few enough to select among directly. */
#define DIFF_DIRECT 4096
/* Cached distributions kept at once. */
#define CACHE_SLOTS 64

/* Ascending, in place: quicksort (median of three, the smaller side first)
 * with insertion sort for short ranges and heapsort past a depth limit; the
 * comparison inline, which is what makes it several times faster than
 * qsort() on the gate's arrays. */
static void insertion_sort(double *s, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		double v = s[i];
		size_t j = i;
		while (j > 0 && s[j - 1] > v) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = v;
	}
}

static void sift_down(double *s, size_t root, size_t n)
{
	double v = s[root];
	for (size_t c; (c = 2 * root + 1) < n; root = c) {
		if (c + 1 < n && s[c + 1] > s[c])
			c++;
		if (!(s[c] > v))
			break;
		s[root] = s[c];
	}
	s[root] = v;
}

static void heap_sort(double *s, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(s, i, n);
	for (size_t i = n; i-- > 1;) {
		double t = s[0]; s[0] = s[i]; s[i] = t;
		sift_down(s, 0, i);
	}
}

static void intro_sort(double *s, size_t n, int depth)
{
	while (n > 24) {
		if (depth-- == 0) {
			heap_sort(s, n);
			return;
		}
		size_t mid = n / 2;
		double a = s[0], b = s[mid], c = s[n - 1];
		double pv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		size_t i = 0, j = n - 1;
		for (;;) { /* Hoare: s[0..j] <= pv <= s[j+1..n) */
			while (s[i] < pv) i++;
			while (s[j] > pv) j--;
			if (i >= j)
				break;
			double t = s[i]; s[i] = s[j]; s[j] = t;
			i++;
			j--;
		}
		size_t left = j + 1;
		if (left < n - left) {
			intro_sort(s, left, depth);
			s += left;
			n -= left;
		} else {
			intro_sort(s + left, n - left, depth);
			n = left;
		}
	}
	insertion_sort(s, n);
}

void stats_sort(double *x, size_t n)
{
	size_t i = 1;
	while (i < n && !(x[i] < x[i - 1]))
		i++;
	if (i >= n)
		return; /* sorted already */
	int depth = 0;
	for (size_t k = n; k; k >>= 1)
		depth += 2;
	intro_sort(x, n, depth);
}

double stats_median_sorted(const double *s, size_t n)
{
	if (n == 0)
		return NAN;
	double pos = 0.5 * (double)(n - 1); /* as stats_percentile(s, n, 50) */
	size_t lo = (size_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
	return s[lo] + (pos - (double)lo) * (s[hi] - s[lo]);
}

static double *sorted_copy(const double *x, size_t n)
{
	double *s = xmalloc((n ? n : 1) * sizeof *s);
	memcpy(s, x, n * sizeof *s);
	stats_sort(s, n);
	return s;
}

/* The k-th smallest (0-based) of s[0..n), which it reorders so that what
 * is before k is at most s[k] and what is after at least.  Quickselect with
 * branch-free partitions (the comparisons of a selection are unpredictable,
 * and the partition's cost was their mispredictions): a pass splits the
 * range at the pivot (the median of three spread positions) into "less"
 * and "not less", and when k is in the second, a pass over it splits off
 * the values equal to the pivot, which ends the search on ties. */
static double select_kth(double *s, size_t n, size_t k)
{
	size_t lo = 0, hi = n;
	while (hi - lo > 16) {
		size_t len = hi - lo;
		double a = s[lo + len / 4], b = s[lo + len / 2], c = s[lo + 3 * len / 4];
		double pv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		size_t w = lo;
		for (size_t i = lo; i < hi; i++) {
			double v = s[i];
			s[i] = s[w];
			s[w] = v;
			w += v < pv;
		}
		if (k < w) {
			hi = w;
			continue;
		}
		size_t e = w;
		for (size_t i = w; i < hi; i++) {
			double v = s[i];
			s[i] = s[e];
			s[e] = v;
			e += v <= pv;
		}
		if (k < e)
			return pv; /* s[w..e) hold the pivot's value */
		lo = e;
	}
	for (size_t i = lo + 1; i < hi; i++) { /* insertion sort of the rest */
		double v = s[i];
		size_t j = i;
		while (j > lo && s[j - 1] > v) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = v;
	}
	return s[k];
}

double stats_percentile(const double *x, size_t n, double p)
{
	if (n == 0)
		return NAN;
	double *s = xmalloc(n * sizeof *s);
	memcpy(s, x, n * sizeof *s);
	double pos = p / 100.0 * (double)(n - 1);
	size_t lo = (size_t)floor(pos);
	size_t hi = lo + 1 < n ? lo + 1 : lo;
	double a = select_kth(s, n, lo), b = a;
	if (hi != lo) { /* the least of those above lo */
		b = s[hi];
		for (size_t i = hi + 1; i < n; i++)
			if (s[i] < b)
				b = s[i];
	}
	double r = a + (pos - (double)lo) * (b - a);
	free(s);
	return r;
}

double stats_median(const double *x, size_t n)
{
	return stats_percentile(x, n, 50.0);
}

double stats_mean(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

double stats_stddev(const double *x, size_t n)
{
	if (n < 2)
		return 0.0;
	double m = stats_mean(x, n), s = 0;
	for (size_t i = 0; i < n; i++)
		s += (x[i] - m) * (x[i] - m);
	return sqrt(s / (double)(n - 1));
}

struct holm_key {
	double p;
	size_t i;
};

static int holm_cmp(const void *a, const void *b)
{
	const struct holm_key *x = a, *y = b;
	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i); /* stable */
}

void stats_holm(const double *p, double *adj, size_t n)
{
	struct holm_key *k = xmalloc((n ? n : 1) * sizeof *k);
	for (size_t i = 0; i < n; i++)
		k[i] = (struct holm_key){p[i], i};
	qsort(k, n, sizeof *k, holm_cmp);
	double run = 0;
	for (size_t r = 0; r < n; r++) {
		double a = (double)(n - r) * k[r].p;
		if (a > 1)
			a = 1;
		if (a < run)
			a = run;
		run = a;
		adj[k[r].i] = a;
	}
	free(k);
}

/* ---- the null distribution of U2 given n, m and the tie groups ---- */

struct nulldist {
	size_t n, m, ng;
	size_t *g;              /* group sizes in pooled order (the key) */
	uint64_t hash;
	int exact;
	size_t max2;            /* 2nm */
	size_t nv;              /* exact: the attainable values of U2, ascending, */
	double *vals, *lo_cum, *up_cum; /* P(U2 <= vals[i]), P(U2 >= vals[i]) */
	/* saddlepoint: distinct doubled midranks (centred) and their counts */
	double *a, *w;
	double span;            /* lattice span of U2 */
	double s0, kss0, k0;    /* the null saddlepoint (t = 0) */
	double offset;          /* U2 = S2 - offset, S2 the centred score sum */
	double sd2;             /* standard deviation of U2 */
	double u2min, u2max;    /* attainable U2 range */
	double a2;              /* level of the cached critical values */
	long c_hi, c_lo;        /* -1: none at that level */
};

static struct nulldist *cache[CACHE_SLOTS];
static size_t cache_next;

static uint64_t key_hash(size_t n, size_t m, const size_t *g, size_t ng)
{
	uint64_t h = 1469598103934665603ull;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
	MIX(n);
	MIX(m);
	for (size_t i = 0; i < ng; i++)
		MIX(g[i]);
#undef MIX
	return h;
}

static void dist_free(struct nulldist *d)
{
	if (!d)
		return;
	free(d->g);
	free(d->vals);
	free(d->lo_cum);
	free(d->up_cum);
	free(d->a);
	free(d->w);
	free(d);
}

void stats_cache_clear(void)
{
	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		dist_free(cache[i]);
		cache[i] = NULL;
	}
	cache_next = 0;
}

static double exact_cost(size_t n, size_t m, size_t ng)
{
	size_t c = n < m ? n : m;
	return (double)(n + m + ng) * (double)(c + 1) * (double)(2 * n * m + 1);
}

struct vp {
	double v, p;
};

static int vp_cmp(const void *a, const void *b)
{
	double x = ((const struct vp *)a)->v, y = ((const struct vp *)b)->v;
	return (x > y) - (x < y);
}

/* The exact distribution from its (value, probability) pairs, in any order
 * and with repeats; takes the two arrays. */
static void dist_set_pmf(struct nulldist *d, double *val, double *pmf, size_t k)
{
	struct vp *q = xmalloc((k ? k : 1) * sizeof *q);
	for (size_t i = 0; i < k; i++)
		q[i] = (struct vp){val[i], pmf[i]};
	free(val);
	free(pmf);
	qsort(q, k, sizeof *q, vp_cmp);
	size_t nv = 0;
	for (size_t i = 0; i < k; i++) {
		if (nv && q[nv - 1].v == q[i].v)
			q[nv - 1].p += q[i].p;
		else
			q[nv++] = q[i];
	}
	d->nv = nv;
	d->vals = xmalloc((nv ? nv : 1) * sizeof *d->vals);
	d->lo_cum = xmalloc((nv ? nv : 1) * sizeof *d->lo_cum);
	d->up_cum = xmalloc((nv ? nv : 1) * sizeof *d->up_cum);
	double s = 0;
	for (size_t i = 0; i < nv; i++) {
		d->vals[i] = q[i].v;
		s += q[i].p;
		d->lo_cum[i] = s < 1 ? s : 1;
	}
	s = 0;
	for (size_t i = nv; i-- > 0;) {
		s += q[i].p;
		d->up_cum[i] = s < 1 ? s : 1;
	}
	free(q);
}

/* log C(N, k) */
static double lchoose(double N, double k)
{
	return lgamma(N + 1) - lgamma(k + 1) - lgamma(N - k + 1);
}

/* Few tie groups: every way of taking k[g] of the m y's from group g
 * (multivariate hypergeometric), the last group's count forced. */
struct enum_state {
	const struct nulldist *d;
	double lnorm;
	double **lc;            /* lc[g][k] = log C(t_g, k) */
	double *val, *pmf;
	size_t k, cap;
};

static void enum_groups(struct enum_state *e, size_t g, size_t taken, size_t xs_before,
			size_t rest, double u2, double lp)
{
	const struct nulldist *d = e->d;
	size_t t = d->g[g], m = d->m;
	size_t need = m - taken;
	size_t kmin = need > rest - t ? need - (rest - t) : 0, kmax = t < need ? t : need;
	if (g + 1 == d->ng)
		kmin = kmax = need; /* rest == t here */
	for (size_t k = kmin; k <= kmax; k++) {
		double u = u2 + (double)k * (2.0 * (double)xs_before + (double)(t - k));
		double l = lp + e->lc[g][k];
		if (g + 1 == d->ng) {
			if (e->k == e->cap) {
				e->cap = e->cap ? 2 * e->cap : 1024;
				e->val = xrealloc(e->val, e->cap * sizeof *e->val);
				e->pmf = xrealloc(e->pmf, e->cap * sizeof *e->pmf);
			}
			e->val[e->k] = u;
			e->pmf[e->k++] = exp(l - e->lnorm);
		} else {
			enum_groups(e, g + 1, taken + k, xs_before + (t - k), rest - t, u, l);
		}
	}
}

/* The number of count vectors enum_groups() visits, or more than limit. */
static double enum_cost(const struct nulldist *d, double limit)
{
	double c = 1;
	for (size_t g = 0; g + 1 < d->ng && c <= limit; g++)
		c *= (double)((d->g[g] < d->m ? d->g[g] : d->m) + 1);
	return c;
}

static void dist_enum(struct nulldist *d)
{
	struct enum_state e = {.d = d, .lnorm = lchoose((double)(d->n + d->m), (double)d->m)};
	e.lc = xmalloc(d->ng * sizeof *e.lc);
	for (size_t g = 0; g < d->ng; g++) {
		size_t t = d->g[g];
		e.lc[g] = xmalloc((t + 1) * sizeof **e.lc);
		for (size_t k = 0; k <= t; k++)
			e.lc[g][k] = lchoose((double)t, (double)k);
	}
	enum_groups(&e, 0, 0, 0, d->n + d->m, 0, 0);
	for (size_t g = 0; g < d->ng; g++)
		free(e.lc[g]);
	free(e.lc);
	dist_set_pmf(d, e.val, e.pmf, e.k);
}

/* Exact: choose c = min(n, m) of the N elements; f[j][u] counts the ways
 * with j chosen so far and U2 (of the chosen side) u. */
static void dist_exact(struct nulldist *d)
{
	size_t n = d->n, m = d->m, N = n + m;
	int chose_y = m <= n;
	size_t c = chose_y ? m : n, others = N - c;
	size_t W = d->max2 + 1;
	double *f = xcalloc((c + 1) * W, sizeof *f), *h = xcalloc((c + 1) * W, sizeof *h);
	size_t *umax = xcalloc(c + 1, sizeof *umax), *hmax = xcalloc(c + 1, sizeof *hmax);
	f[0] = 1;
	size_t before = 0;
	for (size_t gi = 0; gi < d->ng; gi++) {
		size_t t = d->g[gi];
		memset(h, 0, (c + 1) * W * sizeof *h);
		memset(hmax, 0, (c + 1) * sizeof *hmax);
		for (size_t j = 0; j <= c && j <= before; j++) {
			if (before - j > others)
				continue;
			const double *src = &f[j * W];
			double coef = 1; /* C(t, k) */
			for (size_t k = 0; k <= t && j + k <= c; k++) {
				if (k > 0)
					coef = coef * (double)(t - k + 1) / (double)k;
				if (before + t - (j + k) > others)
					continue;
				size_t add = k * (2 * (before - j) + (t - k));
				double *dst = &h[(j + k) * W + add];
				for (size_t u = 0; u <= umax[j]; u++)
					dst[u] += coef * src[u];
				if (umax[j] + add > hmax[j + k])
					hmax[j + k] = umax[j] + add;
			}
		}
		double *tmp = f; f = h; h = tmp;
		size_t *tm = umax; umax = hmax; hmax = tm;
		before += t;
	}
	double tot = 0;
	const double *cnt = &f[c * W];
	for (size_t u = 0; u < W; u++)
		tot += cnt[u];
	double *pmf = xmalloc(W * sizeof *pmf), *val = xmalloc(W * sizeof *val);
	size_t k = 0;
	for (size_t u = 0; u < W; u++) /* U2 of y = 2nm - U2 of x */
		if (cnt[u] > 0) {
			val[k] = (double)(chose_y ? u : W - 1 - u);
			pmf[k++] = cnt[u] / tot;
		}
	dist_set_pmf(d, val, pmf, k);
	free(f);
	free(h);
	free(umax);
	free(hmax);
}

static size_t gcd_size(size_t a, size_t b)
{
	while (b) {
		size_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static void dist_saddle(struct nulldist *d)
{
	size_t n = d->n, m = d->m, N = n + m, G = d->ng;
	d->a = xmalloc(G * sizeof *d->a);
	d->w = xmalloc(G * sizeof *d->w);
	size_t before = 0, g = 0, r0 = 0;
	double mean = (double)(N + 1); /* mean doubled midrank */
	for (size_t i = 0; i < G; i++) {
		size_t r2 = 2 * before + d->g[i] + 1;
		if (i == 0)
			r0 = r2;
		else
			g = gcd_size(g, r2 - r0);
		d->a[i] = (double)r2 - mean;
		d->w[i] = (double)d->g[i];
		before += d->g[i];
	}
	d->span = g ? (double)g : 1.0;
	double tsum = 0, dN = (double)N;
	for (size_t i = 0; i < G; i++) {
		double t = (double)d->g[i];
		tsum += t * t * t - t;
	}
	d->sd2 = 2 * sqrt((double)n * (double)m / 12.0 * ((dN + 1) - tsum / (dN * (dN - 1))));
	/* S2 (centred) = sum over y of a = U2 + m(m+1) - m(N+1) */
	d->offset = (double)m * (double)(m + 1) - (double)m * mean;
	/* attainable range: the m lowest and the m highest scores */
	double lo = 0, hi = 0;
	size_t left = m;
	for (size_t i = 0; i < G && left; i++) {
		size_t k = d->g[i] < left ? d->g[i] : left;
		lo += (double)k * d->a[i];
		left -= k;
	}
	left = m;
	for (size_t i = G; i-- > 0 && left;) {
		size_t k = d->g[i] < left ? d->g[i] : left;
		hi += (double)k * d->a[i];
		left -= k;
	}
	d->u2min = lo - d->offset;
	d->u2max = hi - d->offset;
	double pi = (double)m / (double)N;
	d->s0 = log(pi / (1 - pi));
	d->kss0 = (double)N * pi * (1 - pi);
	d->k0 = (double)N * log1p(exp(d->s0));
}

static double log1pexp(double x)
{
	return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

/*
 * E = exp(-(s + t v)) for the scores v in order: along equal gaps between
 * scores (all of them without ties) by a running product, with a fresh exp
 * every 32 scores and whenever the gap changes or E leaves a safe range.
 */
struct expwalk {
	double E, ratio, gap, vprev;
};
#define EXPWALK_INIT { 1, NAN, NAN, 0 }

static inline double expwalk_next(struct expwalk *w, size_t i, double v, double s, double t)
{
	double gi = v - w->vprev;

	w->vprev = v;
	if (i % 32 && gi == w->gap && w->E > 1e-250 && w->E < 1e250) {
		if (isnan(w->ratio))
			w->ratio = exp(-t * w->gap);
		w->E *= w->ratio;
	} else {
		w->E = exp(-(s + t * v));
		if (gi != w->gap)
			w->ratio = NAN;
		w->gap = gi;
	}
	return w->E;
}

/* P(sum of sign*a over a random m-subset >= tau), the scores a (weights w)
 * centred; span the lattice span.  st: warm start (s, t), updated. */
static double saddle_upper(const struct nulldist *d, double sign, double tau, double *st)
{
	size_t G = d->ng, m = d->m;
	double N = (double)(d->n + d->m);
	/* attainable maximum of the signed sum */
	double hi = 0, cnt_l = 0;
	size_t left = m;
	for (size_t r = 0; r < G && left; r++) {
		size_t i = sign > 0 ? G - 1 - r : r;
		size_t k = d->g[i] < left ? d->g[i] : left;
		hi += (double)k * sign * d->a[i];
		left -= k;
		if (!left)
			cnt_l = lchoose((double)d->g[i], (double)k);
	}
	double eps = 1e-7 * (1 + fabs(hi));
	if (tau > hi + eps)
		return 0;
	if (tau > hi - eps)
		return exp(cnt_l - lchoose(N, (double)m));
	double tc = tau - d->span / 2;
	/* Hoeffding's bound (it holds for sampling without replacement): far
	 * enough out the tail is 0 in doubles, and Newton need not go there */
	double amin = sign > 0 ? d->a[0] : -d->a[G - 1], amax = sign > 0 ? d->a[G - 1] : -d->a[0];
	if (tc > 0 && -2 * tc * tc / ((double)m * (amax - amin) * (amax - amin)) < -745)
		return 0;
	double s = st[0], t = st[1];
	if (t == 0 && d->sd2 > 0) /* start from the normal tilt */
		t = tc / (d->sd2 * d->sd2);
	double kss = 0, kst = 0, ktt = 0;
	for (int it = 0; it < 100; it++) {
		double ks = 0, kt = 0;
		kss = kst = ktt = 0;
		struct expwalk ew = EXPWALK_INIT;
		for (size_t i = 0; i < G; i++) {
			double v = sign * d->a[i], E = expwalk_next(&ew, i, v, s, t);
			double p = 1 / (1 + E), q = d->w[i] * E * p * p;
			if (!(E < INFINITY))
				p = q = 0;
			ks += d->w[i] * p;
			kt += d->w[i] * p * v;
			kss += q;
			kst += q * v;
			ktt += q * v * v;
		}
		double g1 = ks - (double)m, g2 = kt - tc, det = kss * ktt - kst * kst;
		if (!(det > 0))
			break;
		double ds = (ktt * g1 - kst * g2) / det, dt = (-kst * g1 + kss * g2) / det;
		double lim = 4.0 / (d->span * N), lam = 1;
		while (fabs(lam * dt) > lim * 64 || fabs(lam * ds) > 8)
			lam /= 2;
		s -= lam * ds;
		t -= lam * dt;
		if (lam == 1 && fabs(ds) < 1e-7 && fabs(dt) * N * d->span < 1e-7)
			break; /* quadratic convergence: the point is good to 1e-14 */
	}
	st[0] = s;
	st[1] = t;
	double kv = 0;
	struct expwalk ew = EXPWALK_INIT;
	for (size_t i = 0; i < G; i++) { /* log(1 + e^z), E = e^-z */
		double v = sign * d->a[i], z = s + t * v, E = expwalk_next(&ew, i, v, s, t);
		kv += d->w[i] * (z > 0 ? z + log1p(E) : E < INFINITY ? log1p(1 / E) : log1pexp(z));
	}
	double det = kss * ktt - kst * kst;
	double w2 = 2 * ((d->k0 - d->s0 * (double)m) - (kv - s * (double)m - t * tc));
	double w = copysign(sqrt(w2 > 0 ? w2 : 0), t);
	double var = kss > 0 ? det / kss : 0;
	if (fabs(w) < 1e-4 || !(det > 0)) /* at the centre: normal */
		return 0.5 * erfc(tc / sqrt(var > 0 ? var : 1) / sqrt(2.0));
	double u = 2 * sinh(t * d->span / 2) / d->span * sqrt(det / d->kss0);
	double p = 0.5 * erfc(w / sqrt(2.0)) - exp(-w * w / 2) / sqrt(2 * M_PI) * (1 / w - 1 / u);
	return p < 0 ? 0 : p > 1 ? 1 : p;
}

/* P(U2 >= u) */
static double dist_upper(const struct nulldist *d, double u, double *st)
{
	if (d->exact == 2)
		return u <= (double)(d->n * d->m) ? 1 : 0;
	if (d->exact) { /* the first attainable value >= u */
		size_t lo = 0, hi = d->nv;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (d->vals[mid] < u - 1e-9) lo = mid + 1; else hi = mid;
		}
		return lo < d->nv ? d->up_cum[lo] : 0;
	}
	return saddle_upper(d, 1, u + d->offset, st);
}

/* P(U2 <= u) */
static double dist_lower(const struct nulldist *d, double u, double *st)
{
	if (d->exact == 2)
		return u >= (double)(d->n * d->m) ? 1 : 0;
	if (d->exact) { /* the last attainable value <= u */
		size_t lo = 0, hi = d->nv;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (d->vals[mid] <= u + 1e-9) lo = mid + 1; else hi = mid;
		}
		return lo ? d->lo_cum[lo - 1] : 0;
	}
	return saddle_upper(d, -1, -(u + d->offset), st);
}

static struct nulldist *dist_get(size_t n, size_t m, const size_t *g, size_t ng)
{
	uint64_t h = key_hash(n, m, g, ng);
	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		struct nulldist *d = cache[i];
		if (d && d->hash == h && d->n == n && d->m == m && d->ng == ng &&
		    !memcmp(d->g, g, ng * sizeof *g))
			return d;
	}
	struct nulldist *d = xcalloc(1, sizeof *d);
	d->n = n;
	d->m = m;
	d->ng = ng;
	d->g = xmalloc(ng * sizeof *g);
	memcpy(d->g, g, ng * sizeof *g);
	d->hash = h;
	d->max2 = 2 * n * m;
	d->a2 = -1;
	if (ng < 2)
		d->exact = 2; /* all equal: U2 = nm whatever the labels */
	else if (exact_cost(n, m, ng) <= EXACT_BUDGET)
		d->exact = 1, dist_exact(d);
	else if (enum_cost(d, ENUM_BUDGET) <= ENUM_BUDGET)
		d->exact = 1, dist_enum(d);
	else
		dist_saddle(d);
	dist_free(cache[cache_next]);
	cache[cache_next] = d;
	cache_next = (cache_next + 1) % CACHE_SLOTS;
	return d;
}

/* The edge of {k : P(k) <= a2} on the lattice k = 0..K of U2 values,
 * P the upper tail (decreasing in k) or the lower one (increasing), from
 * the bracket P(bad) > a2 >= P(good) until |good - bad| = 1.  Probes are
 * Newton steps on log P, whose slope is the saddlepoint's tilt, while they
 * fall inside the bracket (two or three evaluations from the normal
 * quantile), bisection otherwise. */
static double crit_saddle(struct nulldist *d, double a2, int upper, double bad, double good)
{
	double st[2] = {d->s0, 0}, la = log(a2);
	double zl = 0, zh = 40; /* the normal quantile: 0.5 erfc(z / sqrt 2) = a2 */
	for (int i = 0; i < 60; i++) {
		double z = (zl + zh) / 2;
		if (0.5 * erfc(z / sqrt(2.0)) > a2) zl = z; else zh = z;
	}
	double mean = (double)d->n * (double)d->m;
	double probe = (mean + (upper ? zh : -zh) * d->sd2 - d->u2min) / d->span;
	for (int it = 0; fabs(good - bad) > 1; it++) {
		double lo = fmin(bad, good), hi = fmax(bad, good), k = round(probe);
		if (!(k > lo && k < hi) || it > 12)
			k = floor((lo + hi) / 2);
		double u = d->u2min + k * d->span;
		double P = upper ? dist_upper(d, u, st) : dist_lower(d, u, st);
		int ok = P <= a2;
		if (ok) good = k; else bad = k;
		double slope = (upper ? -1 : 1) * st[1] * d->span;
		probe = NAN;
		if (P > 0 && slope != 0 && isfinite(slope)) {
			probe = k + (la - log(P)) / slope;
			if (fabs(probe - k) < 1) /* next to the edge: its neighbour */
				probe = k + ((ok == upper) ? -1 : 1);
		}
	}
	return good;
}

/* ---- exact tails with few tie groups: branch and bound ----
 *
 * With heavy ties (few distinct values) the saddlepoint is least accurate
 * (up to a factor 1.35 on p with 3 or 4 values a side), and the dynamic
 * programme and the enumeration cost too much beyond small sizes.  But a
 * gate needs the exact distribution only in its tails, and there a search
 * over the counts of y per tie group, lowest group first, prunes almost
 * everything: a y in group g adds the group's doubled midrank r2 to S2 (so
 * U2 = S2 - m(m+1)), and for the groups still open the least and the most
 * that the y's left can add are known (the lowest or the highest places
 * left), so a branch wholly inside the tail adds its probability in closed
 * form (Vandermonde: C(elements left, y's left) ways) and one wholly outside
 * adds nothing.  Only branches across the tail's edge are opened, up to
 * TAIL_NODES of them; beyond that the saddlepoint stands.  Used for the p of
 * a comparison of at most TAIL_SIZE values with at most TAIL_GROUPS distinct
 * ones whose saddlepoint p is at most twice the interval's tail level (a
 * verdict may hang on it); the interval's critical values stay the
 * saddlepoint's.  (With more values the saddlepoint is closer, and the
 * search's branches too many to finish.) */
#define TAIL_GROUPS 24
#define TAIL_NODES 10000
#define TAIL_SIZE 400           /* n + m: beyond, the search is cut off */

struct tail {
	const struct nulldist *d;
	double *r2;             /* doubled midrank per group */
	size_t *rest;           /* elements in groups g.. */
	double *mins, *maxs;    /* [g * (m + 1) + k]: least / most k y's add from g on */
	double *lf;             /* log k! */
	double lnorm;           /* log C(N, m) */
	double T;               /* the edge, on S2 */
	long nodes;
};

static void tail_init(struct tail *b, const struct nulldist *d)
{
	size_t G = d->ng, m = d->m, N = d->n + d->m, W = m + 1;
	b->d = d;
	b->nodes = 0;
	b->r2 = xmalloc(G * sizeof *b->r2);
	b->rest = xmalloc((G + 1) * sizeof *b->rest);
	b->mins = xmalloc((G + 1) * W * sizeof *b->mins);
	b->maxs = xmalloc((G + 1) * W * sizeof *b->maxs);
	b->lf = xmalloc((N + 1) * sizeof *b->lf);
	b->lf[0] = 0;
	for (size_t k = 1; k <= N; k++)
		b->lf[k] = b->lf[k - 1] + log((double)k);
	b->lnorm = b->lf[N] - b->lf[m] - b->lf[N - m];
	size_t before = 0;
	for (size_t g = 0; g < G; g++) {
		b->r2[g] = (double)(2 * before + d->g[g] + 1);
		before += d->g[g];
	}
	b->rest[G] = 0;
	for (size_t g = G; g-- > 0;)
		b->rest[g] = b->rest[g + 1] + d->g[g];
	for (size_t g = 0; g <= G; g++) {
		double *mn = &b->mins[g * W], *mx = &b->maxs[g * W];
		mn[0] = mx[0] = 0;
		size_t lo = g, lo_used = 0, hi = G, hi_used = 0;
		for (size_t k = 1; k <= m; k++) {
			if (k > b->rest[g]) { /* cannot happen on a path: fill */
				mn[k] = mn[k - 1];
				mx[k] = mx[k - 1];
				continue;
			}
			while (lo < G && lo_used == d->g[lo])
				lo++, lo_used = 0;
			mn[k] = mn[k - 1] + b->r2[lo];
			lo_used++;
			while (hi > g && hi_used == d->g[hi - 1])
				hi--, hi_used = 0;
			mx[k] = mx[k - 1] + b->r2[hi - 1];
			hi_used++;
		}
	}
}

static void tail_free(struct tail *b)
{
	free(b->r2);
	free(b->rest);
	free(b->mins);
	free(b->maxs);
	free(b->lf);
}

/* log C(a, k) */
static double tail_lc(const struct tail *b, size_t a, size_t k)
{
	return b->lf[a] - b->lf[k] - b->lf[a - k];
}

/* P(S2 >= T) (upper) or P(S2 <= T) over the branch: groups from g, need y's
 * still to place, s their sum so far, lw the log of the ways so far; NAN
 * past the node budget. */
static double tail_sum(struct tail *b, int upper, size_t g, size_t need, double s, double lw)
{
	if (++b->nodes > TAIL_NODES)
		return NAN;
	size_t W = b->d->m + 1, rest = b->rest[g];
	double lo = s + b->mins[g * W + need], hi = s + b->maxs[g * W + need];
	int all = upper ? lo >= b->T : hi <= b->T, none = upper ? hi < b->T : lo > b->T;
	if (all)
		return exp(lw + tail_lc(b, rest, need) - b->lnorm);
	if (none)
		return 0;
	size_t t = b->d->g[g];
	size_t kmin = need > rest - t ? need - (rest - t) : 0, kmax = t < need ? t : need;
	double sum = 0;
	for (size_t k = kmin; k <= kmax; k++) {
		double v = tail_sum(b, upper, g + 1, need - k, s + (double)k * b->r2[g],
				    lw + tail_lc(b, t, k));
		if (isnan(v))
			return NAN;
		sum += v;
	}
	return sum;
}

/* P(U2 >= u) (upper) or P(U2 <= u), exact; NAN past the budget. */
static double tail_p(struct tail *b, int upper, double u)
{
	size_t m = b->d->m;
	b->T = u + (double)m * (double)(m + 1);
	b->nodes = 0;
	double p = tail_sum(b, upper, 0, m, 0, 0);
	return isnan(p) ? p : p < 1 ? p : 1;
}

/* c_hi: the least attainable U2 with P(U2 >= c_hi) <= a2; c_lo: the largest
 * with P(U2 <= c_lo) <= a2; -1 where there is none. */
static void dist_crit(struct nulldist *d, double a2)
{
	if (d->a2 == a2)
		return;
	d->a2 = a2;
	d->c_hi = d->c_lo = -1;
	if (d->exact == 2)
		return;
	if (d->exact) {
		for (size_t i = d->nv; i-- > 0 && d->up_cum[i] <= a2;)
			d->c_hi = (long)llround(d->vals[i]);
		for (size_t i = 0; i < d->nv && d->lo_cum[i] <= a2; i++)
			d->c_lo = (long)llround(d->vals[i]);
		return;
	}
	double K = floor((d->u2max - d->u2min) / d->span + 0.5);
	double st[2] = {d->s0, 0};
	if (dist_upper(d, d->u2max, st) <= a2)
		d->c_hi = (long)llround(d->u2min + crit_saddle(d, a2, 1, 0, K) * d->span);
	st[0] = d->s0;
	st[1] = 0;
	if (dist_lower(d, d->u2min, st) <= a2)
		d->c_lo = (long)llround(d->u2min + crit_saddle(d, a2, 0, K, 0) * d->span);
}

/* ---- order statistics of the pairwise differences ---- */

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* One sweep of diff_select(): count the differences under v and at v (two
 * monotone pointers), then narrow every row to the side of v that holds
 * rank k.  Returns 1 when v itself is the k-th (second: the (k+1)-th). */
static int diff_sweep(const double *x, size_t n, const double *y, size_t m, size_t k, double v,
		      size_t *L, size_t *R, size_t *P, size_t *Q, double *second)
{
	size_t lt = 0, le = 0, nlt = 0, nle = 0;
	for (size_t i = 0; i < n; i++) {
		while (lt < m && y[lt] - x[i] < v)
			lt++;
		if (le < lt)
			le = lt;
		while (le < m && y[le] - x[i] <= v)
			le++;
		P[i] = lt;
		Q[i] = le;
		nlt += lt;
		nle += le;
	}
	if (k > nlt && k <= nle) {
		if (k < nle) {
			*second = v;
		} else {
			*second = INFINITY;
			for (size_t i = 0; i < n; i++)
				if (Q[i] < m && y[Q[i]] - x[i] < *second)
					*second = y[Q[i]] - x[i];
		}
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (k <= nlt) {
			if (P[i] < R[i]) R[i] = P[i];
			if (L[i] > R[i]) L[i] = R[i];
		} else {
			if (Q[i] > L[i]) L[i] = Q[i];
			if (R[i] < L[i]) R[i] = L[i];
		}
	}
	return 0;
}

/* The k-th smallest (1-based) of y[j] - x[i], x and y sorted ascending,
 * without forming them (Johnson and Mizoguchi's selection): row i's
 * candidates are j in [L[i], R[i]); sweeps around pivot values narrow the
 * rows to the side that holds rank k, until few candidates are left.  The
 * pivots are two quantiles of a random sample of candidates that bracket
 * rank k (Floyd and Rivest's idea), so a round of two sweeps keeps about a
 * tenth of them.  With next, also the (k+1)-th. */
static double diff_select(const double *x, size_t n, const double *y, size_t m, size_t k,
			  double *next)
{
	enum { SAMPLE = 255 };
	size_t *L = xmalloc((5 * n + 1) * sizeof *L), *R = L + n, *P = L + 2 * n, *Q = L + 3 * n,
	       *pre = L + 4 * n;
	double smp[SAMPLE] = { 0 };
	for (size_t i = 0; i < n; i++) {
		L[i] = 0;
		R[i] = m;
	}
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)k;
	double result = NAN, second = NAN;
	for (;;) {
		size_t below = 0, C;
		pre[0] = 0;
		for (size_t i = 0; i < n; i++) {
			below += L[i];
			pre[i + 1] = pre[i] + (R[i] - L[i]);
		}
		C = pre[n];
		if (C <= n + m + 64 || C <= DIFF_DIRECT) {
			double *c = xmalloc((C + 1) * sizeof *c);
			size_t q = 0;
			for (size_t i = 0; i < n; i++)
				for (size_t j = L[i]; j < R[i]; j++)
					c[q++] = y[j] - x[i];
			result = select_kth(c, C, k - below - 1);
			if (k - below < C) { /* the least of those above it */
				second = c[k - below];
				for (size_t i = k - below + 1; i < C; i++)
					if (c[i] < second)
						second = c[i];
			} else { /* the least difference right of the candidates */
				second = INFINITY;
				for (size_t i = 0; i < n; i++)
					if (R[i] < m && y[R[i]] - x[i] < second)
						second = y[R[i]] - x[i];
			}
			free(c);
			break;
		}
		for (int q = 0; q < SAMPLE; q++) {
			/* a candidate at random (C < 2^32: n, m <= 2,000 a side) */
			size_t r = (size_t)(((rng_next(&seed) >> 32) * (uint64_t)C) >> 32), lo, hi;
			if (C == n * m) { /* every row whole */
				lo = r / m;
			} else {
				for (lo = 0, hi = n; hi - lo > 1;) { /* pre[lo] <= r < pre[lo + 1] */
					size_t mid = (lo + hi) / 2;
					if (pre[mid] <= r) lo = mid; else hi = mid;
				}
			}
			smp[q] = y[L[lo] + (r - pre[lo])] - x[lo];
		}
		double f = ((double)(k - below) - 0.5) / (double)C, at = f * SAMPLE;
		double d = 2 * sqrt(SAMPLE * f * (1 - f)) + 1;
		size_t ia = at - d > 0 ? (size_t)(at - d) : 0;
		size_t ib = at + d < SAMPLE - 1 ? (size_t)(at + d) : SAMPLE - 1;
		double va = select_kth(smp, SAMPLE, ia), vb = select_kth(smp, SAMPLE, ib);
		if (diff_sweep(x, n, y, m, k, va, L, R, P, Q, &second)) {
			result = va;
			break;
		}
		if (vb != va && diff_sweep(x, n, y, m, k, vb, L, R, P, Q, &second)) {
			result = vb;
			break;
		}
	}
	free(L);
	if (next)
		*next = second;
	return result;
}

static double hl_sorted(const double *x, size_t n, const double *y, size_t m)
{
	size_t nm = n * m;
	if (nm % 2)
		return diff_select(x, n, y, m, nm / 2 + 1, NULL);
	double b, a = diff_select(x, n, y, m, nm / 2, &b);
	return (a + b) / 2;
}

/* ---- the test and the interval ---- */

/* Pooled tie groups of sorted x and y, and U2 (y over x). */
static size_t tie_groups(const double *x, size_t n, const double *y, size_t m, size_t *g,
			 double *u2, int *ties)
{
	size_t i = 0, j = 0, ng = 0;
	double u = 0;
	*ties = 0;
	while (i < n || j < m) {
		double v = j >= m || (i < n && x[i] <= y[j]) ? x[i] : y[j];
		size_t a = 0, b = 0;
		while (i < n && x[i] == v)
			i++, a++;
		while (j < m && y[j] == v)
			j++, b++;
		/* the b y's at v beat the i - a x's before and tie with a */
		u += (double)b * (2.0 * (double)(i - a) + (double)a);
		g[ng++] = a + b;
		if (a + b > 1)
			*ties = 1;
	}
	*u2 = u;
	return ng;
}

/* The r-th smallest (0-based) of d[0..nm), which select_kth() left
 * partitioned around rank mid (value med): the two sides are disjoint, so
 * a selection in one leaves the other as it was. */
static double diff_pick(double *d, size_t nm, size_t mid, double med, size_t r)
{
	if (r < mid)
		return select_kth(d, mid, r);
	if (r == mid)
		return med;
	return select_kth(d + mid + 1, nm - mid - 1, r - mid - 1);
}

int stats_shift_test(const double *x0, size_t n, const double *y0, size_t m, double conf,
		     struct stats_shift *out)
{
	out->shift = out->lo = out->hi = NAN;
	out->p = 1.0;
	out->ties = 0;
	out->exact = 1;
	if (n == 0 || m == 0)
		return -1;
	double *x = sorted_copy(x0, n), *y = sorted_copy(y0, m);
	size_t *g = xmalloc((n + m) * sizeof *g), ng;
	double u2;
	ng = tie_groups(x, n, y, m, g, &u2, &out->ties);
	struct nulldist *d = dist_get(n, m, g, ng);
	double st[2] = {d->s0, 0};
	double a2 = (1.0 - conf) / 2.0;
	out->exact = d->exact != 0;
	out->p = dist_upper(d, u2, st);
	if (!d->exact && d->ng <= TAIL_GROUPS && n + m <= TAIL_SIZE && out->p <= 2 * a2 &&
	    out->p >= a2 * 1e-7) {
		/* heavy ties, and a p that a verdict may hang on: exact where the
		 * search is cheap.  None hangs on a p above 2 a2 nor under a2
		 * 1e-7 (under any Holm threshold of up to a million comparisons),
		 * the saddlepoint being off by less than a factor 2. */
		struct tail b;
		tail_init(&b, d);
		double pe = tail_p(&b, 1, u2);
		if (!isnan(pe))
			out->p = pe;
		tail_free(&b);
	}
	size_t nm = n * m, mid = (nm - 1) / 2;
	double *dd = NULL, dmed = NAN; /* all the differences, when few: selected in place */
	if (nm <= DIFF_DIRECT) {
		dd = xmalloc(nm * sizeof *dd);
		for (size_t i = 0, q = 0; i < n; i++)
			for (size_t j = 0; j < m; j++)
				dd[q++] = y[j] - x[i];
		double a = dmed = select_kth(dd, nm, mid);
		if (nm % 2) {
			out->shift = a;
		} else {
			double b = dd[nm / 2];
			for (size_t i = nm / 2 + 1; i < nm; i++)
				b = dd[i] < b ? dd[i] : b;
			out->shift = (a + b) / 2;
		}
	} else {
		out->shift = hl_sorted(x, n, y, m);
	}
	dist_crit(d, a2);
	long c_hi = d->c_hi, c_lo = d->c_lo;
	int clamp_lo = 0, clamp_hi = 0;
	if ((c_hi < 0 || c_lo < 0) && out->ties) {
		/* The tie structure cannot reach a2 in a tail (the test cannot
		 * reject there): that end comes from the tie-free distribution,
		 * kept on the side of 0 the test says. */
		for (size_t k = 0; k < n + m; k++)
			g[k] = 1;
		struct nulldist *c = dist_get(n, m, g, n + m);
		dist_crit(c, a2);
		if (c_hi < 0)
			c_hi = c->c_hi, clamp_lo = 1;
		if (c_lo < 0)
			c_lo = c->c_lo, clamp_hi = 1;
	}
	free(g);
	int rc = -1;
	if (c_hi >= 0 && c_lo >= 0) {
		double dnm = (double)n * (double)m;
		size_t jl = (size_t)floor(dnm - (double)c_hi / 2) + 1;
		size_t jh = (size_t)ceil(dnm - (double)c_lo / 2);
		if (jl < 1) jl = 1;
		if (jh < 1) jh = 1;
		if (jl > nm) jl = nm;
		if (jh > nm) jh = nm;
		if (dd) {
			/* dd is partitioned around its median (rank mid):
			 * each end is selected on its side */
			out->lo = diff_pick(dd, nm, mid, dmed, jl - 1);
			out->hi = diff_pick(dd, nm, mid, dmed, jh - 1);
		} else {
			out->lo = diff_select(x, n, y, m, jl, NULL);
			out->hi = diff_select(x, n, y, m, jh, NULL);
		}
		if (clamp_lo && out->lo > 0)
			out->lo = 0;
		if (clamp_hi && out->hi < 0)
			out->hi = 0;
		rc = 0;
	}
	free(dd);
	free(x);
	free(y);
	return rc;
}

/* The one-sided p of U for x over y under the null distribution of the
 * check's cache (method < 0), or one built by method (0 exact, 1
 * saddlepoint, 2 enumeration) for the tests that compare them. */
static double mwu_upper(const double *x, size_t n, const double *y, size_t m, int method)
{
	if (n == 0 || m == 0)
		return 1.0;
	double *xs = sorted_copy(x, n), *ys = sorted_copy(y, m);
	size_t *g = xmalloc((n + m) * sizeof *g);
	double u2;
	int ties;
	size_t ng = tie_groups(xs, n, ys, m, g, &u2, &ties);
	free(xs);
	free(ys);

	struct nulldist *d;
	if (method < 0) {
		d = dist_get(n, m, g, ng);
		free(g);
	} else {
		d = xcalloc(1, sizeof *d);
		*d = (struct nulldist){ .n = n, .m = m, .ng = ng, .g = g, .max2 = 2 * n * m,
					.a2 = -1 };
		d->exact = method != 1;
		if (method == 0)
			dist_exact(d);
		else if (method == 2)
			dist_enum(d);
		else
			dist_saddle(d);
	}
	double st[2] = { d->s0, 0 };
	double p = dist_upper(d, u2, st);
	if (method >= 0)
		dist_free(d);
	return p;
}

double stats_mwu_greater(const double *x, size_t n, const double *y, size_t m)
{
	return mwu_upper(x, n, y, m, -1);
}

double stats_hodges_lehmann(const double *x, size_t n, const double *y, size_t m)
{
	if (n == 0 || m == 0)
		return NAN;
	double *xs = sorted_copy(x, n), *ys = sorted_copy(y, m);
	double r = hl_sorted(xs, n, ys, m);
	free(xs);
	free(ys);
	return r;
}

int stats_hl_ci(const double *x, size_t n, const double *y, size_t m,
                double conf, double *lo, double *hi)
{
	struct stats_shift s;
	int rc = stats_shift_test(x, n, y, m, conf, &s);
	*lo = s.lo;
	*hi = s.hi;
	return rc;
}

double stats_mwu_upper_method(const double *x, size_t n, const double *y, size_t m, int method)
{
	return mwu_upper(x, n, y, m, method);
}
