/*
 * metricinfo.c: what the CUPTI host API says about metric names, for the
 * CLI (metricinfo.h).  Owns the loading of libkgate-collector.so with
 * dlopen (never dlclose: libcupti must stay loaded), the per-chip cache of
 * base metric names, and the grammar of rollups and submetrics.
 *
 * The library is looked for in $KGATE_COLLECTOR (when set, only there),
 * next to the kgate binary (/proc/self/exe), then in ../lib/kgate/
 * relative to it.
 *
 * Suffix grammar, as cuptiProfilerHostGetSubMetrics lists it for GH100
 * (CUPTI 13.0): a counter takes a rollup .sum .avg .min .max, optionally
 * followed by one submetric (.peak_sustained, .peak_sustained_active,
 * .peak_sustained_active.per_second, .peak_sustained_elapsed,
 * .peak_sustained_elapsed.per_second, .per_cycle_active,
 * .per_cycle_elapsed, .per_second, .pct_of_peak_sustained_active,
 * .pct_of_peak_sustained_elapsed); a throughput takes a rollup and one of
 * the two .pct_of_peak_sustained_* submetrics; a ratio takes .ratio, .pct
 * or .max_rate.  The collector's list does not say a metric's type, so the
 * grammar accepts the union, and a name that passes it is confirmed by
 * asking the collector for its pass count (CUPTI refuses a suffix the
 * metric's type does not have).
 *
 * Names the collector confirmed are remembered per chip in a cache file
 * ($XDG_CACHE_HOME/kgate/metrics-<chip>.txt, else ~/.cache/kgate/), whose
 * first line names the collector library it came from (path, size, mtime);
 * metricinfo_known() answers from it without loading the collector, so a
 * thresholds file of known names costs what the built-in one does.  Only
 * valid names are remembered; a stale or unreadable cache is ignored and
 * rewritten.
 */
#include "kgate/metricinfo.h"
#include "kgate/records_format.h"
#include "kgate/util.h"

#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const metricinfo_derived[] = {
	KG_M_DURATION, KG_M_GRID, KG_M_BLOCK, KG_M_REGS, KG_M_SMEM_ST, KG_M_SMEM_DYN,
	KG_M_LOCAL, NULL,
};

#define COLLECTOR_SO "libkgate-collector.so"

static const char *const rollups[] = { "sum", "avg", "min", "max" };
static const char *const counter_subs[] = {
	"peak_sustained", "peak_sustained_active", "peak_sustained_active.per_second",
	"peak_sustained_elapsed", "peak_sustained_elapsed.per_second", "per_cycle_active",
	"per_cycle_elapsed", "per_second", "pct_of_peak_sustained_active",
	"pct_of_peak_sustained_elapsed",
};
static const char *const ratio_subs[] = { "ratio", "pct", "max_rate" };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The loaded library, or why it could not be loaded. */
static struct {
	int tried;
	kgate_metrics_list_fn list;
	kgate_metrics_passes_fn passes;
	char *why;
} lib;

struct chip_cache {
	char *chip;
	char **names;
	size_t n;
	char *why;              /* the list could not be had: why */
	struct chip_cache *next;
};
static struct chip_cache *chips;

static int try_open(const char *path, struct kg_buf *why)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		const char *e = dlerror();
		buf_printf(why, "%s%s", why->len ? "; " : "", e ? e : path);
		return 0;
	}
	lib.list = (kgate_metrics_list_fn)(uintptr_t)dlsym(h, KG_SYM_METRICS_LIST);
	lib.passes = (kgate_metrics_passes_fn)(uintptr_t)dlsym(h, KG_SYM_METRICS_PASSES);
	if (!lib.list || !lib.passes) {
		buf_printf(why, "%s'%s' does not export %s", why->len ? "; " : "", path,
			   !lib.list ? KG_SYM_METRICS_LIST : KG_SYM_METRICS_PASSES);
		lib.list = NULL;
		lib.passes = NULL;
		/* never dlclose: the library may have loaded libcupti */
		return 0;
	}
	return 1;
}

/* libcupti dlopens libnvperf_host.so with RTLD_DEEPBIND, which
 * AddressSanitizer refuses by aborting the process; and with libcupti
 * merely loaded, LeakSanitizer's exit-time scan can crash in its tracer
 * ("Tracer caught signal 11"), depending on where the libraries land.  So
 * in such a build the collector is never loaded: the host API is "cannot
 * tell" rather than a crash. */
#if defined(__SANITIZE_ADDRESS__)
#define KG_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KG_ASAN 1
#endif
#endif
#ifndef KG_ASAN
#define KG_ASAN 0
#endif

/* Find and open the collector library: $KGATE_COLLECTOR, else next to the
 * binary, else ../lib/kgate/.  1 when opened; else why, in why. */
static int open_collector(struct kg_buf *why)
{
	const char *env = getenv("KGATE_COLLECTOR");
	int ok;

	if (KG_ASAN) {
		buf_adds(why, "not loaded in an AddressSanitizer build (libcupti loads "
			      "libnvperf_host.so with RTLD_DEEPBIND)");
		return 0;
	}
	if (env && *env)
		return try_open(env, why);
	char *exe = kg_exe_dir();
	if (!exe) {
		buf_adds(why, "cannot find the kgate binary (/proc/self/exe)");
		return 0;
	}
	char *p = xasprintf("%s/" COLLECTOR_SO, exe);
	ok = try_open(p, why);
	free(p);
	if (!ok) {
		p = xasprintf("%s/../lib/kgate/" COLLECTOR_SO, exe);
		ok = try_open(p, why);
		free(p);
	}
	free(exe);
	return ok;
}

static int load(struct kg_buf *err)
{
	if (!lib.tried) {
		struct kg_buf why = KG_BUF_INIT;

		lib.tried = 1;
		if (!open_collector(&why))
			lib.why = xasprintf("cannot load the collector library " COLLECTOR_SO
					    " (set KGATE_COLLECTOR to its path): %s",
					    why.s ? why.s : "not found");
		buf_free(&why);
	}
	if (!lib.list) {
		buf_adds(err, lib.why);
		return -1;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *upper(const char *s)
{
	char *u = xstrdup(s);

	for (char *p = u; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	return u;
}

static struct chip_cache *chip_get(const char *chip, struct kg_buf *err)
{
	struct chip_cache *c;

	if (load(err) < 0)
		return NULL;
	for (c = chips; c; c = c->next)
		if (!strcasecmp(c->chip, chip))
			break;
	if (!c) {
		char msg[512] = "";
		char *uc = upper(chip);
		c = xcalloc(1, sizeof(*c));
		c->chip = xstrdup(chip);
		if (lib.list(uc, &c->names, &c->n, msg, sizeof(msg)) != 0) {
			msg[sizeof(msg) - 1] = '\0';
			c->why = xasprintf("no metric list for chip '%s': %s", chip,
					   *msg ? msg : "the collector gave no reason");
			c->names = NULL;
			c->n = 0;
		} else if (c->n) {
			qsort(c->names, c->n, sizeof(*c->names), cmp_str);
		}
		free(uc);
		c->next = chips;
		chips = c;
	}
	if (c->why) {
		buf_adds(err, c->why);
		return NULL;
	}
	return c;
}

int metricinfo_names(const char *chip, const char *const **names, size_t *n,
		     struct kg_buf *err)
{
	struct chip_cache *c = chip_get(chip, err);

	if (!c)
		return -1;
	*names = (const char *const *)c->names;
	*n = c->n;
	return 0;
}

static int in_list(const char *s, size_t len, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(list[i]) == len && !strncmp(list[i], s, len))
			return 1;
	return 0;
}

/* Does suffix (after the base name, without its leading '.') fit the grammar? */
static int suffix_ok(const char *suf)
{
	const char *dot = strchr(suf, '.');
	size_t rl = dot ? (size_t)(dot - suf) : strlen(suf);

	if (!dot && in_list(suf, strlen(suf), ratio_subs, COUNT(ratio_subs)))
		return 1;
	if (!in_list(suf, rl, rollups, COUNT(rollups)))
		return 0;
	return !dot || in_list(dot + 1, strlen(dot + 1), counter_subs, COUNT(counter_subs));
}

/* Length of the base name of metric: up to the first '.' after "__"
 * (base names may hold dots before it: "FBSP.TriageCompute.dramc__..."). */
static size_t base_len(const char *metric)
{
	const char *us = strstr(metric, "__");
	const char *dot = us ? strchr(us, '.') : strchr(metric, '.');

	return dot ? (size_t)(dot - metric) : strlen(metric);
}

/* ---- the cache of confirmed names ---------------------------------------- */

/* The collector library open_collector() would load first, without loading
 * it: its path, or NULL. */
static char *collector_path(void)
{
	const char *env = getenv("KGATE_COLLECTOR");

	if (env && *env)
		return access(env, R_OK) == 0 ? xstrdup(env) : NULL;
	char *exe = kg_exe_dir();
	if (!exe)
		return NULL;
	char *p = xasprintf("%s/" COLLECTOR_SO, exe);
	if (access(p, R_OK) != 0) {
		free(p);
		p = xasprintf("%s/../lib/kgate/" COLLECTOR_SO, exe);
		if (access(p, R_OK) != 0) {
			free(p);
			p = NULL;
		}
	}
	free(exe);
	return p;
}

/* "kgate metric names 1 <path> <size> <mtime>": what the cached names were
 * confirmed by; NULL without a collector library. */
static char *cache_stamp(void)
{
	char *path = collector_path();
	struct stat st;

	if (!path)
		return NULL;
	if (stat(path, &st) != 0 || strchr(path, '\n')) {
		free(path);
		return NULL;
	}
	char *s = xasprintf("kgate metric names 1 %s %lld %lld.%09ld", path, (long long)st.st_size,
			    (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	free(path);
	return s;
}

static char *cache_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");

	if (x && *x == '/')
		return xasprintf("%s/kgate", x);
	if (h && *h == '/')
		return xasprintf("%s/.cache/kgate", h);
	return NULL;
}

static char *cache_file(const char *chip)
{
	char *d = cache_dir(), *f;

	if (!d)
		return NULL;
	for (const char *p = chip; *p; p++)
		if (!isalnum((unsigned char)*p)) {
			free(d);
			return NULL;
		}
	f = xasprintf("%s/metrics-%s.txt", d, chip);
	free(d);
	return f;
}

struct known {
	char *chip;
	char **names;           /* sorted */
	size_t n;
	int loaded;
	struct known *next;
};
static struct known *knowns;

static struct known *known_get(const char *chip)
{
	struct known *k;

	for (k = knowns; k; k = k->next)
		if (!strcasecmp(k->chip, chip))
			return k;
	k = xcalloc(1, sizeof(*k));
	k->chip = xstrdup(chip);
	k->next = knowns;
	knowns = k;
	char *file = cache_file(chip), *stamp = NULL;
	FILE *f = file ? fopen(file, "r") : NULL;
	free(file);
	if (!f)
		return k;
	char line[512];
	size_t cap = 0;
	if (fgets(line, sizeof(line), f) && (stamp = cache_stamp()) != NULL &&
	    !strncmp(line, stamp, strlen(stamp)) && line[strlen(stamp)] == '\n') {
		while (fgets(line, sizeof(line), f)) {
			size_t l = strcspn(line, "\n");
			if (!l || line[l] != '\n')
				continue; /* empty, or too long to be a name */
			line[l] = '\0';
			if (k->n == cap) {
				cap = cap ? 2 * cap : 32;
				k->names = xrealloc(k->names, cap * sizeof(*k->names));
			}
			k->names[k->n++] = xstrdup(line);
		}
		if (k->n)
			qsort(k->names, k->n, sizeof(*k->names), cmp_str);
	}
	free(stamp);
	fclose(f);
	return k;
}

int metricinfo_known(const char *chip, const char *metric)
{
	for (size_t i = 0; metricinfo_derived[i]; i++)
		if (!strcmp(metric, metricinfo_derived[i]))
			return 1;
	struct known *k = known_get(chip);
	return k->n && bsearch(&metric, k->names, k->n, sizeof(*k->names), cmp_str) != NULL;
}

/* Remember a confirmed name: the file rewritten whole under a temporary
 * name and renamed into place, so readers see the old or the new. */
static void known_add(const char *chip, const char *metric)
{
	struct known *k = known_get(chip);
	char *file, *tmp, *stamp, *dir;
	FILE *f;

	if (strchr(metric, '\n') || strlen(metric) > 400 || metricinfo_known(chip, metric))
		return;
	k->names = xrealloc(k->names, (k->n + 1) * sizeof(*k->names));
	k->names[k->n++] = xstrdup(metric);
	qsort(k->names, k->n, sizeof(*k->names), cmp_str);
	if (!(file = cache_file(chip)))
		return;
	if (!(stamp = cache_stamp())) {
		free(file);
		return;
	}
	dir = cache_dir(); /* mkdir -p */
	for (char *p = dir + 1;; p++)
		if (*p == '/' || !*p) {
			char c = *p;
			*p = '\0';
			(void)mkdir(dir, 0700);
			*p = c;
			if (!c)
				break;
		}
	free(dir);
	tmp = xasprintf("%s.%ld.tmp", file, (long)getpid());
	if ((f = fopen(tmp, "w")) != NULL) {
		int ok = fprintf(f, "%s\n", stamp) > 0;
		for (size_t i = 0; i < k->n && ok; i++)
			ok = fprintf(f, "%s\n", k->names[i]) > 0;
		if (fclose(f) != 0 || !ok || rename(tmp, file) != 0)
			(void)unlink(tmp);
	}
	free(tmp);
	free(stamp);
	free(file);
}

int metricinfo_valid(const char *chip, const char *metric, struct kg_buf *err)
{
	struct chip_cache *c;
	size_t bl;
	char *base;

	for (size_t i = 0; metricinfo_derived[i]; i++)
		if (!strcmp(metric, metricinfo_derived[i]))
			return 1;
	if (!(c = chip_get(chip, err)))
		return -1;
	bl = base_len(metric);
	base = xstrndup(metric, bl);
	const char *key = base;
	int known = c->n && bsearch(&key, c->names, c->n, sizeof(*c->names), cmp_str) != NULL;
	free(base);
	if (!known) {
		buf_printf(err, "'%.*s' is not a metric of %s", (int)bl, metric, chip);
		return 0;
	}
	if (!metric[bl]) {
		buf_printf(err, "'%s' needs a rollup, such as '%s.sum'", metric, metric);
		return 0;
	}
	if (!suffix_ok(metric + bl + 1)) {
		buf_printf(err, "'%s' is not a rollup or submetric", metric + bl);
		return 0;
	}
	/* The suffix fits some metric type; CUPTI knows whether it fits this one. */
	char msg[512] = "";
	int passes = 0;
	const char *one[] = { metric };
	char *uc = upper(chip);
	int rc = lib.passes(uc, one, 1, &passes, msg, sizeof(msg));
	free(uc);
	if (rc != 0) {
		msg[sizeof(msg) - 1] = '\0';
		buf_printf(err, "'%s' is not valid on %s: %s", metric, chip,
			   *msg ? msg : "the collector refused it");
		return 0;
	}
	known_add(chip, metric);
	return 1;
}

/* kgate derives the launch__ metrics from activity records: no replay. */
static int derived_only(const char *m)
{
	for (size_t i = 0; metricinfo_derived[i]; i++)
		if (!strcmp(m, metricinfo_derived[i]))
			return strncmp(m, "launch__", 8) == 0;
	return 0;
}

int metricinfo_passes(const char *chip, const char *const *metrics, size_t n, int *passes,
		      struct kg_buf *err)
{
	const char **hw = xcalloc(n + 1, sizeof(*hw));
	size_t k = 0;
	int rc = -1;

	*passes = 0;
	for (size_t i = 0; i < n; i++) {
		if (derived_only(metrics[i]))
			continue;
		struct kg_buf why = KG_BUF_INIT;
		int v = metricinfo_valid(chip, metrics[i], &why);
		if (v != 1) {
			if (v == 0)
				buf_printf(err, "invalid metric '%s': %s", metrics[i], why.s);
			else
				buf_adds(err, why.s);
			buf_free(&why);
			goto out;
		}
		buf_free(&why);
		hw[k++] = metrics[i];
	}
	if (k) {
		char msg[512] = "";
		if (load(err) < 0)
			goto out;
		char *uc = upper(chip);
		int r = lib.passes(uc, hw, k, passes, msg, sizeof(msg));
		free(uc);
		if (r != 0) {
			msg[sizeof(msg) - 1] = '\0';
			buf_printf(err, "cannot count the passes on %s: %s", chip,
				   *msg ? msg : "the collector gave no reason");
			goto out;
		}
	}
	rc = 0;
out:
	free(hw);
	return rc;
}

/* ---- suggestions -------------------------------------------------------- */

struct cand {
	char *name;
	size_t d;
	size_t order;           /* ties: the order made (.sum first) */
};

static int cmp_cand(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;

	if (a->d != b->d)
		return a->d < b->d ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static void cand_add(struct cand **v, size_t *n, size_t *cap, char *name, size_t d)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i].name, name)) {
			free(name);
			return;
		}
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 32;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[*n] = (struct cand){ name, d, *n };
	(*n)++;
}

int metricinfo_suggest(const char *chip, const char *metric, char **out, size_t max,
		       struct kg_buf *err)
{
	struct chip_cache *c = chip_get(chip, err);
	struct cand *v = NULL;
	size_t nv = 0, cap = 0, got = 0;
	size_t bl = base_len(metric), limit = strlen(metric) / 3 + 2;
	const char *suf = metric + bl;
	char *base = xstrndup(metric, bl);

	if (!c) {
		free(base);
		return -1;
	}
	const char *key = base;
	int known = c->n && bsearch(&key, c->names, c->n, sizeof(*c->names), cmp_str) != NULL;
	if (known) {
		/* the base is right: the nearest rollups and submetrics */
		for (size_t r = 0; r < COUNT(rollups); r++) {
			char *n = xasprintf("%s.%s", base, rollups[r]);
			cand_add(&v, &nv, &cap, n, kg_levenshtein(metric, n));
			for (size_t s = 0; s < COUNT(counter_subs); s++) {
				n = xasprintf("%s.%s.%s", base, rollups[r], counter_subs[s]);
				cand_add(&v, &nv, &cap, n, kg_levenshtein(metric, n));
			}
		}
		for (size_t s = 0; s < COUNT(ratio_subs); s++) {
			char *n = xasprintf("%s.%s", base, ratio_subs[s]);
			cand_add(&v, &nv, &cap, n, kg_levenshtein(metric, n));
		}
	} else {
		/* the nearest base names, with the suffix given (or .sum) */
		size_t blimit = bl / 3 + 2;
		const char *tail = *suf && suffix_ok(suf + 1) ? suf : ".sum";
		for (size_t i = 0; i < c->n; i++) {
			size_t d = kg_levenshtein(base, c->names[i]);
			if (d <= blimit)
				cand_add(&v, &nv, &cap, xasprintf("%s%s", c->names[i], tail), d);
		}
	}
	for (size_t i = 0; metricinfo_derived[i]; i++) {
		size_t d = kg_levenshtein(metric, metricinfo_derived[i]);
		if (d <= limit)
			cand_add(&v, &nv, &cap, xstrdup(metricinfo_derived[i]), d);
	}
	if (nv)
		qsort(v, nv, sizeof(*v), cmp_cand);
	for (size_t i = 0; i < nv; i++) {
		struct kg_buf why = KG_BUF_INIT;
		if (got < max && strcmp(v[i].name, metric) &&
		    metricinfo_valid(chip, v[i].name, &why) == 1) {
			out[got++] = v[i].name;
			v[i].name = NULL;
		}
		buf_free(&why);
		free(v[i].name);
	}
	free(v);
	free(base);
	return (int)got;
}

int metricinfo_loaded(void)
{
	return lib.list != NULL;
}
