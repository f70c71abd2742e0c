/*
 * points.c: a run's points (see kgate/points.h).
 *
 * Owns the reduction of a series' values in one run to its point, the
 * accumulator the store fills as a run's samples are added, and the blob
 * the points are stored as:
 *
 *   byte 1 (the format), a varint count, then per point, sorted by
 *   (benchmark, NVTX path, kernel, metric): the four ids as zigzag varints
 *   of their difference from the previous point's, the count as a varint,
 *   then the median alone when the count is 1, else the median, quartiles,
 *   least and greatest as little-endian IEEE floats.
 *
 * About 25 bytes a point where a sample row takes about 40.
 */
#include "kgate/points.h"
#include "kgate/util.h"

#include <stdlib.h>
#include <string.h>

struct points_series {
	int64_t key[4];
	double *v;
	size_t n, cap;
};

/* quantile of sorted v[0..n) by linear interpolation */
static double quant(const double *v, size_t n, double q)
{
	double h = q * (double)(n - 1);
	size_t i = (size_t)h;
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (h - (double)i) * (v[i + 1] - v[i]);
}

static void swap_double(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

/* Reorder v[0..n) so that v[k] is its k-th smallest value, with no larger
 * value before it and no smaller one after it (Hoare's selection, the
 * median of three as pivot): O(n) where sorting is O(n log n). */
static void select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		if (v[mid] < v[lo])
			swap_double(&v[mid], &v[lo]);
		if (v[hi] < v[lo])
			swap_double(&v[hi], &v[lo]);
		if (v[hi] < v[mid])
			swap_double(&v[hi], &v[mid]);
		double pivot = v[mid];
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				swap_double(&v[i], &v[j]);
				i++;
				if (j-- == 0)
					break;
			}
		}
		/* v[lo..j] <= pivot <= v[i..hi], and v[j+1..i-1] == pivot */
		if (k <= j && j != (size_t)-1)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

/* What quant() gives of v[0..n) sorted, by selection (v is reordered). */
static double quant_select(double *v, size_t n, double q)
{
	double h = q * (double)(n - 1);
	size_t i = (size_t)h;
	select_kth(v, n, i);
	if (i + 1 >= n)
		return v[i];
	double next = v[i + 1];     /* the next order statistic: the least after v[i] */
	for (size_t j = i + 2; j < n; j++)
		if (v[j] < next)
			next = v[j];
	return v[i] + (h - (double)i) * (next - v[i]);
}

void points_of(double *v, size_t m, struct kg_point *p)
{
	p->n = (uint32_t)m;
	if (m > 16) {
		/* a run's many launches: three selections, not a sort */
		double lo = v[0], hi = v[0];
		for (size_t i = 1; i < m; i++) {
			if (v[i] < lo)
				lo = v[i];
			if (v[i] > hi)
				hi = v[i];
		}
		p->med = (float)quant_select(v, m, 0.5);
		p->q1 = (float)quant_select(v, m, 0.25);
		p->q3 = (float)quant_select(v, m, 0.75);
		p->lo = (float)lo;
		p->hi = (float)hi;
		return;
	}
	/* a commit's few launches */
	for (size_t i = 1; i < m; i++)
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--)
			swap_double(&v[j], &v[j - 1]);
	p->med = (float)quant(v, m, 0.5);
	p->q1 = (float)quant(v, m, 0.25);
	p->q3 = (float)quant(v, m, 0.75);
	p->lo = (float)v[0];
	p->hi = (float)v[m - 1];
}

static uint64_t hash_key(const int64_t *k)
{
	uint64_t h = 0;
	for (int i = 0; i < 4; i++)
		h ^= (uint64_t)k[i] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h;
}

static size_t slot_hash(const void *slot, const void *arg)
{
	const struct points_acc *a = arg;
	return hash_key(a->s[*(const size_t *)slot].key);
}

static void grow(struct points_acc *a)
{
	static const size_t none = SIZE_MAX;
	size_t ncap = a->cap ? 2 * a->cap : 256;

	a->slot = kg_table_grow(a->slot, a->cap, ncap, sizeof *a->slot, &none, slot_hash, a);
	a->s = xrealloc(a->s, (ncap / 2) * sizeof *a->s);
	a->cap = ncap;
}

void points_add(struct points_acc *a, int64_t benchmark, int64_t nvtx, int64_t kernel,
		int64_t metric, double v)
{
	const int64_t key[4] = { benchmark, nvtx, kernel, metric };
	struct points_series *x = NULL;

	if (a->over)
		return;
	if (a->nvalues >= POINTS_MAX_VALUES) {
		/* memory stays bounded: this run is read sample by sample */
		points_reset(a);
		a->over = 1;
		return;
	}
	if (a->last < a->ns && !memcmp(a->s[a->last].key, key, sizeof key)) {
		x = &a->s[a->last];
	} else {
		if (2 * (a->ns + 1) > a->cap)
			grow(a);
		size_t j = hash_key(key) & (a->cap - 1);
		while (a->slot[j] != SIZE_MAX && memcmp(a->s[a->slot[j]].key, key, sizeof key))
			j = (j + 1) & (a->cap - 1);
		if (a->slot[j] == SIZE_MAX) {
			a->slot[j] = a->ns;
			x = &a->s[a->ns++];
			memset(x, 0, sizeof *x);
			memcpy(x->key, key, sizeof key);
		} else {
			x = &a->s[a->slot[j]];
		}
		a->last = (size_t)(x - a->s);
	}
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 4;
		x->v = xrealloc(x->v, x->cap * sizeof *x->v);
	}
	x->v[x->n++] = v;
	a->nvalues++;
}

void points_reset(struct points_acc *a)
{
	for (size_t i = 0; i < a->ns; i++)
		free(a->s[i].v);
	free(a->s);
	free(a->slot);
	memset(a, 0, sizeof *a);
}

static int cmp_series(const void *pa, const void *pb)
{
	const struct points_series *x = pa, *y = pb;
	for (int i = 0; i < 4; i++)
		if (x->key[i] != y->key[i])
			return x->key[i] < y->key[i] ? -1 : 1;
	return 0;
}

static void put_varint(struct kg_buf *b, uint64_t v)
{
	char t[10];
	size_t n = 0;
	do {
		t[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	buf_add(b, t, n);
}

static void put_float(struct kg_buf *b, float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	char t[4] = { (char)(u & 0xff), (char)((u >> 8) & 0xff), (char)((u >> 16) & 0xff),
		       (char)(u >> 24) };
	buf_add(b, t, 4);
}

int points_encode(struct points_acc *a, struct kg_buf *out)
{
	buf_reset(out);
	if (a->over || !a->ns)
		return -1;
	/* the hash slots are no longer needed: sort the series themselves */
	qsort(a->s, a->ns, sizeof *a->s, cmp_series);
	free(a->slot);
	a->slot = NULL;
	a->cap = 0;
	a->last = SIZE_MAX;
	buf_addc(out, 1);
	put_varint(out, a->ns);
	uint64_t prev[4] = { 0, 0, 0, 0 };
	for (size_t i = 0; i < a->ns; i++) {
		struct points_series *x = &a->s[i];
		struct kg_point p;
		for (int k = 0; k < 4; k++) {
			uint64_t d = (uint64_t)x->key[k] - prev[k];
			put_varint(out, (d << 1) ^ (uint64_t)-(int64_t)(d >> 63));
			prev[k] = (uint64_t)x->key[k];
		}
		points_of(x->v, x->n, &p);
		put_varint(out, p.n);
		put_float(out, p.med);
		if (p.n > 1) {
			put_float(out, p.q1);
			put_float(out, p.q3);
			put_float(out, p.lo);
			put_float(out, p.hi);
		}
	}
	/* encoding sorted the series: adding more would need the slots again */
	points_reset(a);
	return 0;
}

static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	uint64_t r = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (*p == end)
			return -1;
		unsigned c = *(*p)++;
		r |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

static int get_float(const unsigned char **p, const unsigned char *end, float *f)
{
	if (end - *p < 4)
		return -1;
	const unsigned char *q = *p;
	uint32_t u = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
	memcpy(f, &u, sizeof *f);
	*p += 4;
	return 0;
}

/* decode, to fn when it is not NULL */
static int decode(const void *data, size_t len,
		  int (*fn)(void *arg, size_t i, const struct kg_point *p), void *arg)
{
	const unsigned char *p = data, *end = p + len;
	uint64_t count, prev[4] = { 0, 0, 0, 0 };

	if (!len || *p++ != 1 || get_varint(&p, end, &count) || count > len / 9)
		return -1;
	for (uint64_t i = 0; i < count; i++) {
		struct kg_point pt;
		uint64_t v[5];
		for (int k = 0; k < 5; k++)
			if (get_varint(&p, end, &v[k]))
				return -1;
		for (int k = 0; k < 4; k++)
			prev[k] += (v[k] >> 1) ^ (uint64_t)-(int64_t)(v[k] & 1);
		if (!v[4] || v[4] > UINT32_MAX || get_float(&p, end, &pt.med))
			return -1;
		pt.benchmark = (int64_t)prev[0];
		pt.nvtx = (int64_t)prev[1];
		pt.kernel = (int64_t)prev[2];
		pt.metric = (int64_t)prev[3];
		pt.n = (uint32_t)v[4];
		if (pt.n == 1) {
			pt.q1 = pt.q3 = pt.lo = pt.hi = pt.med;
		} else if (get_float(&p, end, &pt.q1) || get_float(&p, end, &pt.q3) ||
			   get_float(&p, end, &pt.lo) || get_float(&p, end, &pt.hi)) {
			return -1;
		}
		if (fn && fn(arg, (size_t)i, &pt))
			return 0;
	}
	return p == end ? 0 : -1;
}

int points_decode(const void *data, size_t len,
		  int (*fn)(void *arg, size_t i, const struct kg_point *p), void *arg)
{
	/* the whole blob checked before the first point is passed */
	if (decode(data, len, NULL, NULL))
		return -1;
	return decode(data, len, fn, arg);
}
