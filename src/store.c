/*
 * store.c: the store's public functions (include/kgate/store.h), thin
 * wrappers over the backend the database's name picks.
 *
 * Owns the choice of backend by scheme (a path, "sqlite:" or "file:": the
 * SQLite file of store_sqlite.c; "postgresql://", "postgres://": PostgreSQL,
 * store_pg.c), the database's name as messages show it (a
 * URL's password hidden), the default database (KGATE_DB), the checks
 * every backend shares (a read-only store is not written, one run open at
 * a time), and the freeing of what the store hands out.  No query is here:
 * each backend holds its own (store_backend.h).
 */
#include "store_backend.h"
#include "store_shared.h"

#include "kgate/store.h"
#include "kgate/util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ */
/* Choosing the backend                                                */

/* Database names by their scheme.  be NULL: a kind kgate knows but this
 * build lacks.  strip: the backend takes what follows the prefix. */
static const struct scheme {
	const char *prefix;
	const struct kg_store_backend *be;
	const char *what;
	int strip;
} schemes[] = {
	{ "postgresql://", &store_pg_backend, "PostgreSQL", 0 },
	{ "postgres://", &store_pg_backend, "PostgreSQL", 0 },
	{ "sqlite:", &store_sqlite_backend, "SQLite", 1 },
	{ "file:", &store_sqlite_backend, "SQLite", 1 },
};

const char *store_default_db(void)
{
	static char *found;     /* found once per process, kept to its end */
	const char *e = getenv("KGATE_DB");
	if (e && *e)
		return e;
	if (!found && !(found = kg_find_up(KGATE_DB, NULL))) {
		/* none yet: beside the kgate.yaml found above, else here */
		char *suite = kg_find_up("kgate.yaml", NULL);
		const char *slash = suite ? strrchr(suite, '/') : NULL;
		found = slash ? xasprintf("%.*s/%s", (int)(slash - suite), suite, KGATE_DB)
			      : xstrdup(KGATE_DB);
		free(suite);
	}
	return found;
}

/* Replace s[from, to) of b's text by "***". */
static void hide(struct kg_buf *b, size_t from, size_t to)
{
	struct kg_buf t = KG_BUF_INIT;
	buf_printf(&t, "%.*s***%s", (int)from, b->s, b->s + to);
	buf_free(b);
	*b = t;
}

char *store_target_shown(const char *target)
{
	struct kg_buf b = KG_BUF_INIT;
	const char *sep = strstr(target, "://");

	buf_adds(&b, target);
	if (!sep)
		return b.s;
	/* the authority's user:password@ */
	size_t auth = (size_t)(sep - target) + 3;
	size_t end = auth + strcspn(b.s + auth, "/?#");
	size_t at = end;
	while (at > auth && b.s[at - 1] != '@')
		at--;
	if (at > auth) {
		const char *colon = memchr(b.s + auth, ':', at - 1 - auth);
		if (colon)
			hide(&b, (size_t)(colon - b.s) + 1, at - 1);
	}
	/* a password=... parameter, any number of times */
	for (size_t i = 0; b.s[i]; i++) {
		if ((b.s[i] == '?' || b.s[i] == '&') && !strncasecmp(b.s + i + 1, "password=", 9)) {
			size_t v = i + 10, e = v + strcspn(b.s + v, "&#");
			hide(&b, v, e);
			i = v + 2;
		}
	}
	return b.s;
}

/* The backend of db and the target it takes; NULL when none (said unless
 * quiet). */
static const struct kg_store_backend *backend_of(const char *db, const char **target, int quiet)
{
	*target = db;
	for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) {
		const struct scheme *sc = &schemes[i];
		size_t n = strlen(sc->prefix);
		if (strncasecmp(db, sc->prefix, n) != 0)
			continue;
		if (!sc->be) {
			if (quiet)
				return NULL;
			char *shown = store_target_shown(db);
			kg_error("cannot open '%s': this kgate was built without %s support", shown,
				 sc->what);
			free(shown);
			return NULL;
		}
		if (sc->strip) {
			*target = db + n;
			if (!strncmp(*target, "///", 3))   /* file:///abs/path */
				*target += 2;
		}
		return sc->be;
	}
	/* scheme://... of no kind kgate knows: not taken for a path */
	size_t sn = strspn(db, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-");
	if (sn > 0 && !strncmp(db + sn, "://", 3)) {
		if (quiet)
			return NULL;
		char *shown = store_target_shown(db);
		kg_error("cannot open '%s': no database of scheme '%.*s' (kgate takes a path, "
			 "sqlite:PATH or a postgresql:// URL)", shown, (int)sn, db);
		free(shown);
		return NULL;
	}
	return &store_sqlite_backend;
}

/* ------------------------------------------------------------------ */
/* Opening                                                             */

int store_require(const char *db)
{
	if (store_exists(db))
		return KG_EXIT_PASS;
	char *shown = store_target_shown(db);
	kg_error("cannot open '%s': no such database (store runs first with 'kgate run' or"
		 " 'kgate ingest', or name one with --db or KGATE_DB)", shown);
	free(shown);
	return KG_EXIT_USAGE;
}

int store_open(const char *db, int flags, struct kg_store **out)
{
	const char *target;
	const struct kg_store_backend *be = backend_of(db, &target, 0);

	*out = NULL;
	if (!be)
		return KG_EXIT_RUNTIME;
	/* Only a writer creates a database: a reader of one that is not there
	 * says so the one way, whichever command it is. */
	if ((flags & KG_STORE_READONLY) && strcmp(db, ":memory:") && !be->exists(target))
		return store_require(db);
	char *shown = store_target_shown(target);
	int rc = be->open(target, shown, flags, be->schema_version(), out);
	if (*out)
		(*out)->name = shown;
	else
		free(shown);
	return rc;
}

void store_close(struct kg_store *st)
{
	if (!st)
		return;
	if (st->in_run)
		st->be->run_abort(st);
	free(st->name);
	free(st->devices);
	st->devices = NULL;
	st->be->close(st);
}

int store_exists(const char *db)
{
	const char *target;
	const struct kg_store_backend *be = backend_of(db, &target, 1);
	return !be || be->exists(target);   /* none: store_open says why */
}

int store_writable(const char *db)
{
	const char *target;
	const struct kg_store_backend *be = backend_of(db, &target, 1);
	return !be || be->writable(target);
}

int store_schema_version(void)
{
	return store_sqlite_backend.schema_version();
}

int store_create_at_version(const char *db, int version)
{
	const char *target;
	const struct kg_store_backend *be = backend_of(db, &target, 0);

	if (!be)
		return KG_EXIT_RUNTIME;
	char *shown = store_target_shown(target);
	int rc = be->create_at_version(target, shown, version);
	free(shown);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */

static int writable(struct kg_store *st)
{
	if (!st->readonly)
		return 1;
	kg_error("database '%s' was opened read-only", st->name);
	return 0;
}

static int run_open(struct kg_store *st)
{
	if (st->in_run)
		return 1;
	kg_error("database '%s': no run is open", st->name);
	return 0;
}

int store_run_begin(struct kg_store *st, struct kg_run_info *run)
{
	if (!writable(st))
		return KG_EXIT_RUNTIME;
	if (st->in_run) {
		kg_error("database '%s': a run is already open", st->name);
		return KG_EXIT_RUNTIME;
	}
	st->rank = -1;
	free(st->devices);
	st->devices = run->devices ? xstrdup(run->devices) : NULL;
	return st->be->run_begin(st, run);
}

void store_run_rank(struct kg_store *st, int rank)
{
	st->rank = rank >= 0 ? rank : -1;
}

void store_run_device(struct kg_store *st, const char *name, const char *uuid)
{
	json_error_t err;
	json_t *a = st->devices ? json_loads(st->devices, 0, &err) : json_array();
	size_t i, at;
	json_t *d;

	if (!json_is_array(a)) {
		json_decref(a);
		a = json_array();
	}
	/* one entry per device (by uuid, else by name), sorted by uuid then name */
	at = json_array_size(a);
	json_array_foreach(a, i, d) {
		const char *u = json_string_value(json_object_get(d, "uuid"));
		const char *n = json_string_value(json_object_get(d, "name"));
		int c = strcmp(u ? u : "", uuid ? uuid : "");
		if (!c)
			c = strcmp(n ? n : "", name ? name : "");
		if (!c) {
			json_decref(a);
			return;
		}
		if (c > 0 && at == json_array_size(a))
			at = i;
	}
	d = json_object();
	if (name)
		json_object_set_new(d, "name", json_string(name));
	if (uuid)
		json_object_set_new(d, "uuid", json_string(uuid));
	json_array_insert_new(a, at, d);
	free(st->devices);
	char *js = json_dumps(a, JSON_COMPACT);
	st->devices = js ? xstrdup(js) : NULL;
	free(js);
	json_decref(a);
}

int store_sample_add(struct kg_store *st, const char *benchmark, const char *nvtx,
		     const struct kg_kernel_name *kernel, const char *metric,
		     const char *unit, int deterministic, int repeat, int64_t ordinal,
		     double value)
{
	if (!run_open(st))
		return KG_EXIT_RUNTIME;
	return st->be->sample_add(st, benchmark, nvtx, kernel, metric, unit, deterministic,
				  repeat, ordinal, value);
}

int store_run_benchmark_add(struct kg_store *st, const char *benchmark)
{
	if (!run_open(st))
		return KG_EXIT_RUNTIME;
	return st->be->run_benchmark_add(st, benchmark);
}

int store_run_benchmark_state(struct kg_store *st, const char *benchmark, const char *gpu_state)
{
	if (!run_open(st))
		return KG_EXIT_RUNTIME;
	return st->be->run_benchmark_state(st, benchmark, gpu_state);
}

int store_run_commit(struct kg_store *st)
{
	if (!run_open(st))
		return KG_EXIT_RUNTIME;
	return st->be->run_commit(st);
}

void store_run_abort(struct kg_store *st)
{
	if (st->in_run)
		st->be->run_abort(st);
}

int store_verdicts_put(struct kg_store *st, int64_t head_run, const char *baseline,
		       const struct kg_outcome *o, const struct kg_verdict_row *rows, size_t n,
		       const struct kg_explain_row *x, size_t nx)
{
	return store_verdicts_put_ranked(st, head_run, baseline, o, rows, NULL, n, x, nx);
}

int store_verdicts_put_ranked(struct kg_store *st, int64_t head_run, const char *baseline,
			      const struct kg_outcome *o, const struct kg_verdict_row *rows,
			      const int *ranks, size_t n, const struct kg_explain_row *x, size_t nx)
{
	if (!writable(st))
		return KG_EXIT_RUNTIME;
	return st->be->verdicts_put(st, head_run, baseline, o, rows, ranks, n, x, nx);
}

int store_explanations_put(struct kg_store *st, int64_t head_run, const char *baseline,
			   const struct kg_explain_row *x, size_t nx)
{
	if (!writable(st))
		return KG_EXIT_RUNTIME;
	return st->be->explanations_put(st, head_run, baseline, x, nx);
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */

int64_t store_run_count(struct kg_store *st)
{
	return st->be->run_count(st);
}

int store_find_runs(struct kg_store *st, const struct kg_run_filter *f,
		    struct kg_run_info **runs, size_t *n)
{
	return st->be->find_runs(st, f, runs, n);
}

int store_run_get(struct kg_store *st, int64_t id, struct kg_run_info *out)
{
	return st->be->run_get(st, id, out);
}

int store_run_gpu_states(struct kg_store *st, int64_t run, char ***names, char ***states,
			 size_t *n)
{
	return st->be->run_gpu_states(st, run, names, states, n);
}

int store_run_benchmarks(struct kg_store *st, int64_t run, char ***names, size_t *n)
{
	return st->be->run_benchmarks(st, run, names, n);
}

int store_run_metrics(struct kg_store *st, int64_t run, char ***names, size_t *n)
{
	return st->be->run_metrics(st, run, names, n);
}

int store_load_samples(struct kg_store *st, const int64_t *run_ids, size_t n_runs,
		       struct kg_sampleset *out)
{
	return st->be->load_samples(st, run_ids, n_runs, out);
}

int store_summary_values(struct kg_store *st, int64_t run, const char *metric,
			 enum kg_summary_by by, struct kg_summary_group **groups, size_t *n)
{
	return st->be->summary_values(st, run, metric, by, groups, n);
}

int store_names_each(struct kg_store *st, enum kg_name_table t, kg_name_fn fn, void *arg)
{
	return st->be->names_each(st, t, fn, arg);
}

int store_samples_stream(struct kg_store *st, const int64_t *run_ids, size_t n_runs,
			 const struct kg_sample_reader *rd)
{
	return st->be->samples_stream(st, run_ids, n_runs, rd);
}

int store_run_points(struct kg_store *st, const int64_t *run_ids, size_t n_runs,
		     kg_points_fn fn, void *arg)
{
	return st->be->run_points(st, run_ids, n_runs, fn, arg);
}

int store_check_newest(struct kg_store *st, const struct kg_check_filter *f,
		       struct kg_stored_check *out)
{
	return st->be->check_newest(st, f, out);
}

int store_check_verdicts(struct kg_store *st, int64_t check_id, kg_verdict_fn fn, void *arg)
{
	return st->be->check_verdicts(st, check_id, fn, arg);
}

int store_run_samples_each(struct kg_store *st, int64_t run, kg_sample_fn fn, void *arg)
{
	return st->be->run_samples_each(st, run, fn, arg);
}

int store_run_explanations(struct kg_store *st, int64_t run, kg_explain_fn fn, void *arg)
{
	return st->be->run_explanations(st, run, fn, arg);
}

/* ------------------------------------------------------------------ */
/* Freeing what the store hands out                                    */

void store_check_free(struct kg_stored_check *c)
{
	free(c->commit);
	free(c->baseline);
	verdict_outcome_free(&c->outcome);
	memset(c, 0, sizeof *c);
}

void store_run_info_free(struct kg_run_info *r)
{
	if (!r)
		return;
	for (int i = 0; i < STORE_RUN_NCOLS; i++) {
		char **t = store_run_text(r, i);
		if (t)
			free(*t);
	}
	memset(r, 0, sizeof(*r));
}


void store_runs_free(struct kg_run_info *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		store_run_info_free(&runs[i]);
	free(runs);
}


/* A series' own memory; its names too unless the set's pool owns them. */
static void series_free(const struct kg_sampleset *set, struct kg_series *x)
{
	if (!set->pool) {
		free(x->benchmark);
		free(x->nvtx);
		free(x->kernel);
		free(x->demangled);
		free(x->base);
		free(x->metric);
		free(x->unit);
	}
	free(x->v);
	free(x->run_of);
}


void store_sampleset_keep(struct kg_sampleset *set, char *const *benchmarks, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < set->n; i++) {
		int keep = 0;
		for (size_t j = 0; j < n && !keep; j++)
			keep = !strcmp(set->s[i].benchmark, benchmarks[j]);
		if (keep)
			set->s[k++] = set->s[i];
		else
			series_free(set, &set->s[i]);
	}
	set->n = k;
}


/* A series' names: benchmark, NVTX path (NULL: ""), kernel. */
static int names_cmp(const struct kg_series *a, const struct kg_series *b)
{
	int c = strcmp(a->benchmark, b->benchmark);
	if (!c)
		c = strcmp(a->nvtx ? a->nvtx : "", b->nvtx ? b->nvtx : "");
	if (!c)
		c = strcmp(a->kernel, b->kernel);
	return c;
}

/* The rank is part of the identity: none first. */
static int rank_cmp(const struct kg_series *a, const struct kg_series *b)
{
	return a->ranked != b->ranked ? a->ranked - b->ranked
				      : (a->rank > b->rank) - (a->rank < b->rank);
}

int store_series_identity_cmp(const struct kg_series *a, const struct kg_series *b)
{
	int c = names_cmp(a, b);
	return c ? c : rank_cmp(a, b);
}

int store_series_cmp(const void *pa, const void *pb)
{
	const struct kg_series *a = pa, *b = pb;
	int c = store_series_identity_cmp(a, b);
	return c ? c : strcmp(a->metric, b->metric);
}

/* The names, the metric, then the rank: for pooling. */
static int pool_cmp(const void *pa, const void *pb)
{
	const struct kg_series *a = pa, *b = pb;
	int c = names_cmp(a, b);
	if (!c)
		c = strcmp(a->metric, b->metric);
	return c ? c : rank_cmp(a, b);
}

/* Append x's values to d's and free x. */
static void series_absorb(const struct kg_sampleset *set, struct kg_series *d,
			  struct kg_series *x)
{
	d->v = xrealloc(d->v, (d->n + x->n + 1) * sizeof(*d->v));
	memcpy(d->v + d->n, x->v, x->n * sizeof(*d->v));
	if (d->run_of && x->run_of) {
		d->run_of = xrealloc(d->run_of, (d->n + x->n + 1) * sizeof(*d->run_of));
		memcpy(d->run_of + d->n, x->run_of, x->n * sizeof(*d->run_of));
	} else {
		free(d->run_of);
		d->run_of = NULL;
	}
	d->n += x->n;
	series_free(set, x);
}

void store_sampleset_merge(struct kg_sampleset *set)
{
	size_t k = 0;

	if (!set->n)
		return;
	qsort(set->s, set->n, sizeof(*set->s), store_series_cmp);
	for (size_t i = 1; i < set->n; i++) {
		if (store_series_cmp(&set->s[k], &set->s[i]))
			set->s[++k] = set->s[i];
		else
			series_absorb(set, &set->s[k], &set->s[i]);
	}
	set->n = k + 1;
}

void store_sampleset_pool_ranks(struct kg_sampleset *set)
{
	size_t k = 0, any = 0;

	for (size_t i = 0; i < set->n; i++)
		any |= (size_t)set->s[i].ranked;
	if (!any)
		return;
	qsort(set->s, set->n, sizeof(*set->s), pool_cmp);
	for (size_t i = 0; i < set->n; i++) {
		struct kg_series *x = &set->s[i];
		struct kg_series *y = k ? &set->s[k - 1] : NULL;
		if (y && x->ranked && !names_cmp(y, x) && !strcmp(y->metric, x->metric)) {
			series_absorb(set, y, x);
			continue;
		}
		set->s[k++] = *x;
	}
	set->n = k;
	for (size_t i = 0; i < set->n; i++)
		set->s[i].ranked = set->s[i].rank = 0;
	qsort(set->s, set->n, sizeof(*set->s), store_series_cmp);
}

void store_sampleset_free(struct kg_sampleset *set)
{
	for (size_t i = 0; i < set->n; i++)
		series_free(set, &set->s[i]);
	for (size_t i = 0; i < set->n_pool; i++)
		free(set->pool[i]);
	free(set->pool);
	set->pool = NULL;
	set->n_pool = 0;
	free(set->s);
	set->s = NULL;
	set->n = 0;
}


void store_summary_free(struct kg_summary_group *groups, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(groups[i].benchmark);
		free(groups[i].name);
		free(groups[i].unit);
		free(groups[i].v);
	}
	free(groups);
}


void store_names_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

int store_branches(struct kg_store *st, char ***names, size_t *n)
{
	struct kg_run_filter f = { 0 };
	struct kg_run_info *runs = NULL;
	size_t nr = 0;
	*names = NULL;
	*n = 0;
	int rc = store_find_runs(st, &f, &runs, &nr);
	if (rc != KG_EXIT_PASS)
		return rc;
	char **b = xcalloc(nr + 1, sizeof *b);
	size_t k = 0;
	for (size_t i = 0; i < nr; i++) {
		if (!runs[i].branch)
			continue;
		size_t j;
		for (j = 0; j < k && strcmp(b[j], runs[i].branch); j++)
			;
		if (j == k)
			b[k++] = xstrdup(runs[i].branch);
	}
	store_runs_free(runs, nr);
	*names = b;
	*n = k;
	return KG_EXIT_PASS;
}

int store_branch_known(struct kg_store *st, const char *branch, const char *what)
{
	char **b;
	size_t n;
	if (store_branches(st, &b, &n) != KG_EXIT_PASS)
		return -1;
	int known = 0;
	for (size_t i = 0; i < n && !known; i++)
		known = !strcmp(b[i], branch);
	if (!known) {
		struct kg_buf list = KG_BUF_INIT;
		for (size_t i = 0; i < n; i++)
			buf_printf(&list, "%s%s", i ? ", " : "", b[i]);
		const char *near = kg_suggest(branch, (const char *const *)b, n);
		if (near)
			kg_warn("%s '%s' has no stored run; did you mean '%s'? (stored branches: %s)",
				what, branch, near, list.s);
		else
			kg_warn("%s '%s' has no stored run (stored branches: %s)", what, branch,
				n ? list.s : "none");
		buf_free(&list);
	}
	store_names_free(b, n);
	return known;
}
