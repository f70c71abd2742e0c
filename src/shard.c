/*
 * shard.c: the plan of a sharded suite run and the merge of its shards
 * (shard.h).  Only the store API and runcopy.h: the shards may sit in any
 * backend, and the merged run go to any other.
 */
#include "kgate/shard.h"
#include "kgate/kgate.h"
#include "kgate/runcopy.h"
#include "kgate/util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int shard_parse(const char *arg, int *i, int *n)
{
	char *end;
	long a, b;

	a = strtol(arg, &end, 10);
	if (end == arg || *end != '/' || arg[0] == '-' || arg[0] == '+')
		goto bad;
	const char *q = end + 1;
	b = strtol(q, &end, 10);
	if (end == q || *end || q[0] == '-' || q[0] == '+' || b < 1 || b > KG_SHARD_MAX ||
	    a < 1 || a > b)
		goto bad;
	*i = (int)a;
	*n = (int)b;
	return KG_EXIT_PASS;
bad:
	kg_error("--shard '%s': not I/N with 1 <= I <= N <= %d (e.g. 2/3)", arg, KG_SHARD_MAX);
	return KG_EXIT_USAGE;
}

char *shard_status(int i, int n, int quick)
{
	return xasprintf("shard %d/%d%s", i, n, quick ? " quick" : "");
}

int shard_of_status(const char *status, int *i, int *n, int *quick)
{
	int a, b, used = 0;
	if (!status || sscanf(status, "shard %d/%d%n", &a, &b, &used) != 2 || a < 1 || a > b)
		return 0;
	if (strcmp(status + used, "") && strcmp(status + used, " quick"))
		return 0;
	*i = a;
	*n = b;
	*quick = status[used] != '\0';
	return 1;
}

/* ------------------------------------------------------------------ */
/* The plan                                                            */

/* The recorded wall time per measured process of each of names[], from the
 * newest complete runs that recorded it (<= 0: none). */
static int recorded_times(struct kg_store *st, const char *const *names, size_t n,
			  double *per_proc, int64_t *from)
{
	struct kg_run_filter f = { .no_quick = 1, .no_label = 1, .limit = 50 };
	struct kg_run_info *runs = NULL;
	size_t nr = 0, known = 0;
	int rc;

	*from = 0;
	if ((rc = store_find_runs(st, &f, &runs, &nr)) != KG_EXIT_PASS)
		return rc;
	/* the newest run that recorded any of them: one run, so that every shard
	 * reading this history plans alike */
	for (size_t r = 0; r < nr && !known && rc == KG_EXIT_PASS; r++) {
		char **bn = NULL, **js = NULL;
		size_t k = 0;
		if ((rc = store_run_gpu_states(st, runs[r].id, &bn, &js, &k)) != KG_EXIT_PASS)
			break;
		for (size_t j = 0; j < k; j++) {
			json_t *o = json_loads(js[j], 0, NULL);
			double w = json_number_value(json_object_get(o, "wall_s"));
			json_int_t p = json_integer_value(json_object_get(o, "processes"));
			json_decref(o);
			if (w <= 0 || p <= 0)
				continue;
			for (size_t i = 0; i < n; i++)
				if (!strcmp(names[i], bn[j])) {
					per_proc[i] = w / (double)p;
					known++;
				}
		}
		if (known)
			*from = runs[r].id;
		store_names_free(bn, k);
		store_names_free(js, k);
	}
	store_runs_free(runs, nr);
	return rc;
}

struct item {
	const char *name;
	double cost;
	size_t i;
};

static int item_cmp(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;
	if (a->cost != b->cost)
		return a->cost > b->cost ? -1 : 1;
	return strcmp(a->name, b->name);
}

int shard_plan(struct kg_store *st, const char *const *names, const int *steps, size_t n,
	       int nshards, int *shard, char *basis, size_t len)
{
	double *per = xcalloc(n ? n : 1, sizeof *per), *load;
	struct item *it = xcalloc(n ? n : 1, sizeof *it);
	int64_t from = 0;
	double sum = 0;
	size_t known = 0;
	int rc = KG_EXIT_PASS;

	if (st)
		rc = recorded_times(st, names, n, per, &from);
	for (size_t i = 0; i < n; i++)
		if (per[i] > 0) {
			sum += per[i];
			known++;
		}
	for (size_t i = 0; i < n; i++) {
		it[i].name = names[i];
		it[i].i = i;
		/* a benchmark without a time: the mean of those with one */
		it[i].cost = known ? (per[i] > 0 ? per[i] : sum / (double)known) * steps[i] : 1;
	}
	if (known)
		snprintf(basis, len, "wall times of run %lld (%zu of %zu benchmarks)",
			 (long long)from, known, n);
	else
		snprintf(basis, len, "count (no wall time stored)");
	/* longest first, each to the least loaded shard (the first of equals) */
	qsort(it, n, sizeof *it, item_cmp);
	load = xcalloc((size_t)nshards, sizeof *load);
	for (size_t k = 0; k < n; k++) {
		int best = 0;
		for (int s = 1; s < nshards; s++)
			if (load[s] < load[best])
				best = s;
		load[best] += it[k].cost;
		shard[it[k].i] = best;
	}
	free(load);
	free(per);
	free(it);
	return rc;
}

/* ------------------------------------------------------------------ */
/* The merge                                                           */

struct part {
	struct kg_store *st;
	const char *db;
	struct kg_run_info run;
	int index, of, quick;
	char **bench;
	size_t nb;
	struct kg_run_digest d;
};

static void part_free(struct part *p)
{
	store_run_info_free(&p->run);
	store_names_free(p->bench, p->nb);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The shards of commit in st (named db) appended to *ps. */
static int collect(struct kg_store *st, const char *db, const char *commit, struct part **ps,
		   size_t *np, size_t *cap)
{
	struct kg_run_filter f = { .commit = commit, .oldest_first = 1 };
	struct kg_run_info *runs = NULL;
	size_t n = 0;
	int rc;

	if ((rc = store_find_runs(st, &f, &runs, &n)) != KG_EXIT_PASS)
		return rc;
	for (size_t i = 0; i < n && rc == KG_EXIT_PASS; i++) {
		struct part p = { .st = st, .db = db };
		if (!runs[i].commit || strcmp(runs[i].commit, commit) ||
		    !shard_of_status(runs[i].status, &p.index, &p.of, &p.quick))
			continue;
		p.run = runs[i];
		memset(&runs[i], 0, sizeof runs[i]);
		rc = store_run_benchmarks(st, p.run.id, &p.bench, &p.nb);
		if (rc == KG_EXIT_PASS)
			rc = runcopy_digest(st, p.run.id, &p.d);
		if (*np == *cap) {
			*cap = *cap ? 2 * *cap : 8;
			*ps = xrealloc(*ps, *cap * sizeof **ps);
		}
		(*ps)[(*np)++] = p;
	}
	store_runs_free(runs, n);
	return rc;
}

static json_t *part_json(const struct part *p)
{
	json_t *b = json_array();
	for (size_t i = 0; i < p->nb; i++)
		json_array_append_new(b, json_string(p->bench[i]));
	return json_pack("{s:i, s:i, s:s, s:I, s:s?, s:s?, s:I, s:o}", "shard", p->index, "of", p->of,
			 "db", p->db, "run", (json_int_t)p->run.id, "host", p->run.host,
			 "gpu_uuid", p->run.gpu_uuid, "samples", (json_int_t)p->d.samples,
			 "benchmarks", b);
}

/* What differs between the fingerprints of a and b ("" when nothing). */
static const char *fingerprint_diff(const struct kg_run_info *a, const struct kg_run_info *b)
{
	/* the fingerprint's fields, in the order they are checked */
	static const struct {
		size_t off;
		const char *what;
	} fields[] = {
		{ offsetof(struct kg_run_info, gpu_name), "GPU model" },
		{ offsetof(struct kg_run_info, gpu_chip), "GPU chip" },
		{ offsetof(struct kg_run_info, driver), "driver" },
		{ offsetof(struct kg_run_info, cuda), "CUDA version" },
		{ offsetof(struct kg_run_info, collector), "collector" },
		{ offsetof(struct kg_run_info, config_hash), "suite (kgate.yaml)" },
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *fa = *(char *const *)((const char *)a + fields[i].off);
		const char *fb = *(char *const *)((const char *)b + fields[i].off);
		if (!same(fa, fb))
			return fields[i].what;
	}
	return "";
}

static const char *nz(const char *s)
{
	return s ? s : "none";
}

/* The checks of the chosen shards chosen[0 .. of): said; KG_EXIT_USAGE. */
static int validate(struct part **chosen, int of, char *const *expect, size_t nexpect,
		    json_t *report)
{
	int rc = KG_EXIT_PASS;
	struct part *a = chosen[0];

	for (int s = 1; s < of; s++) {
		struct part *b = chosen[s];
		const char *what = fingerprint_diff(&a->run, &b->run);
		if (*what) {
			kg_error("shard %d/%d (run %lld of '%s': %s, driver %s, CUDA %s) and shard %d/%d "
				 "(run %lld of '%s': %s, driver %s, CUDA %s) differ in their %s: "
				 "shards of one run must run on one GPU model and software",
				 a->index, of, (long long)a->run.id, a->db, nz(a->run.gpu_name),
				 nz(a->run.driver), nz(a->run.cuda), b->index, of, (long long)b->run.id,
				 b->db, nz(b->run.gpu_name), nz(b->run.driver), nz(b->run.cuda), what);
			json_object_set_new(report, "mismatch", json_string(what));
			return KG_EXIT_USAGE;
		}
	}
	/* each benchmark in one shard */
	json_t *twice = json_array(), *none = json_array();
	for (int s = 0; s < of; s++)
		for (size_t i = 0; i < chosen[s]->nb; i++)
			for (int t = s + 1; t < of; t++)
				if (bsearch(&chosen[s]->bench[i], chosen[t]->bench, chosen[t]->nb,
					    sizeof(char *), str_cmp)) {
					kg_error("benchmark '%s' is in shard %d/%d and in shard %d/%d",
						 chosen[s]->bench[i], s + 1, of, t + 1, of);
					json_array_append_new(twice, json_string(chosen[s]->bench[i]));
				}
	for (size_t e = 0; e < nexpect; e++) {
		int found = 0;
		for (int s = 0; s < of && !found; s++)
			found = bsearch(&expect[e], chosen[s]->bench, chosen[s]->nb, sizeof(char *),
					str_cmp) != NULL;
		if (!found) {
			kg_error("benchmark '%s' of the suite is in no shard", expect[e]);
			json_array_append_new(none, json_string(expect[e]));
		}
	}
	if (json_array_size(twice) || json_array_size(none)) {
		kg_note("did every shard run this suite, and read the same history (the plan is "
			"balanced by the stored wall times)?  'kgate run --shard I/N --balance count' "
			"plans by count alone");
		rc = KG_EXIT_USAGE;
	}
	json_object_set_new(report, "in_two_shards", twice);
	json_object_set_new(report, "in_no_shard", none);
	return rc;
}

int shard_merge(struct kg_store *dst, const char *dst_name, char *const *parts, size_t nparts,
		const char *commit, char *const *expect, size_t nexpect, json_t *report,
		int64_t *run)
{
	struct kg_store **opened = xcalloc(nparts ? nparts : 1, sizeof *opened);
	struct part *ps = NULL, **chosen = NULL;
	size_t np = 0, cap = 0;
	int rc = KG_EXIT_PASS, of = 0, quick = 0;
	json_t *jparts = json_array(), *dups = json_array(), *missing = json_array();
	struct kg_run_info m = { 0 };
	char **all = NULL;
	size_t nall = 0;

	*run = 0;
	json_object_set_new(report, "commit", json_string(commit));
	if (!nparts)
		rc = collect(dst, dst_name, commit, &ps, &np, &cap);
	for (size_t i = 0; i < nparts && rc == KG_EXIT_PASS; i++)
		if ((rc = store_open(parts[i], KG_STORE_READONLY, &opened[i])) == KG_EXIT_PASS)
			rc = collect(opened[i], parts[i], commit, &ps, &np, &cap);
	if (rc != KG_EXIT_PASS)
		goto out;
	if (!np) {
		if (nparts)
			kg_error("no shard of commit %.12s is stored in the %zu part database%s given",
				 commit, nparts, nparts == 1 ? "" : "s");
		else
			kg_error("no shard of commit %.12s is stored in '%s'", commit, dst_name);
		rc = KG_EXIT_USAGE;
		goto out;
	}
	/* one count of shards */
	of = ps[0].of;
	for (size_t i = 1; i < np; i++)
		if (ps[i].of != of || ps[i].quick != ps[0].quick) {
			kg_error("run %lld of '%s' is shard %d/%d%s, run %lld of '%s' shard %d/%d%s: "
				 "one commit, two ways of sharding", (long long)ps[0].run.id, ps[0].db,
				 ps[0].index, of, ps[0].quick ? " (quick)" : "", (long long)ps[i].run.id,
				 ps[i].db, ps[i].index, ps[i].of, ps[i].quick ? " (quick)" : "");
			rc = KG_EXIT_USAGE;
			goto out;
		}
	quick = ps[0].quick;
	json_object_set_new(report, "shards", json_integer(of));
	/* the newest of each index; the others said */
	chosen = xcalloc((size_t)of, sizeof *chosen);
	for (size_t i = 0; i < np; i++) {
		struct part **c = &chosen[ps[i].index - 1];
		if (*c) {
			struct part *old = *c, *nw = &ps[i];
			if (nw->run.time < old->run.time) {
				struct part *t = old;
				old = nw;
				nw = t;
			}
			int ident = old->d.samples_hash == nw->d.samples_hash &&
				    old->d.samples == nw->d.samples;
			kg_warn("shard %d/%d is stored twice: run %lld of '%s' and run %lld of '%s'%s; "
				"taking the newer, run %lld", nw->index, of, (long long)old->run.id,
				old->db, (long long)nw->run.id, nw->db,
				ident ? " (the same samples)" : " (other samples: a shard run again?)",
				(long long)nw->run.id);
			json_array_append_new(dups, json_pack("{s:i, s:I, s:s, s:I, s:s, s:b}",
				"shard", nw->index, "taken", (json_int_t)nw->run.id, "taken_db", nw->db,
				"left", (json_int_t)old->run.id, "left_db", old->db, "same_samples", ident));
			*c = nw;
		} else {
			*c = &ps[i];
		}
	}
	json_object_set_new(report, "duplicates", dups);
	dups = NULL;
	for (int s = 0; s < of; s++)
		if (!chosen[s])
			json_array_append_new(missing, json_integer(s + 1));
	if (json_array_size(missing)) {
		struct kg_buf b = KG_BUF_INIT;
		for (size_t i = 0; i < json_array_size(missing); i++)
			buf_printf(&b, "%s%lld/%d", i ? ", " : "",
				   (long long)json_integer_value(json_array_get(missing, i)), of);
		kg_error("commit %.12s: shard%s %s missing (%zu of %d stored); nothing merged", commit,
			 json_array_size(missing) == 1 ? "" : "s", b.s, (size_t)of - json_array_size(missing), of);
		buf_free(&b);
		rc = KG_EXIT_USAGE;
	}
	json_object_set_new(report, "missing", missing);
	missing = NULL;
	if (rc != KG_EXIT_PASS)
		goto out;
	for (int s = 0; s < of; s++)
		json_array_append_new(jparts, part_json(chosen[s]));
	if ((rc = validate(chosen, of, expect, nexpect, report)) != KG_EXIT_PASS)
		goto out;

	/* the merged run: the first shard's fields; what the shards do not share, left out */
	struct kg_run_digest sum = { 0 };
	const struct kg_run_info *f = &chosen[0]->run;
	m.commit = xstrdup(f->commit);
	m.branch = f->branch ? xstrdup(f->branch) : NULL;
	m.parent = f->parent ? xstrdup(f->parent) : NULL;
	m.gpu_name = f->gpu_name ? xstrdup(f->gpu_name) : NULL;
	m.gpu_chip = f->gpu_chip ? xstrdup(f->gpu_chip) : NULL;
	m.driver = f->driver ? xstrdup(f->driver) : NULL;
	m.cuda = f->cuda ? xstrdup(f->cuda) : NULL;
	m.collector = f->collector ? xstrdup(f->collector) : NULL;
	m.config_hash = f->config_hash ? xstrdup(f->config_hash) : NULL;
	m.source = f->source ? xstrdup(f->source) : NULL;
	m.ci_url = f->ci_url ? xstrdup(f->ci_url) : NULL;
	m.status = xstrdup(quick ? "quick" : "ok");
	int one_host = 1, one_uuid = 1;
	for (int s = 0; s < of; s++) {
		const struct kg_run_info *r = &chosen[s]->run;
		if (r->time > m.time)
			m.time = r->time;
		one_host &= same(r->host, f->host);
		one_uuid &= same(r->gpu_uuid, f->gpu_uuid);
		runcopy_digest_add(&sum, &chosen[s]->d);
		all = xrealloc(all, (nall + chosen[s]->nb + 1) * sizeof *all);
		for (size_t i = 0; i < chosen[s]->nb; i++)
			all[nall++] = chosen[s]->bench[i];
	}
	qsort(all, nall, sizeof *all, str_cmp);
	m.host = one_host && f->host ? xstrdup(f->host) : NULL;
	m.gpu_uuid = one_uuid && f->gpu_uuid ? xstrdup(f->gpu_uuid) : NULL;
	if (!one_uuid)
		kg_note("the shards ran on different GPUs of one model (%s): the merged run names "
			"no GPU UUID", nz(m.gpu_name));

	int64_t dup = 0, conflict = 0;
	if ((rc = runcopy_find(dst, &m, all, nall, &sum, &dup, &conflict)) != KG_EXIT_PASS)
		goto out;
	if (dup) {
		kg_note("these shards are already merged as run %lld of '%s'; nothing stored",
			(long long)dup, dst_name);
		json_object_set_new(report, "already_merged", json_true());
		*run = dup;
		goto out;
	}
	if (conflict) {
		kg_error("run %lld of '%s' is a merge of these shards with other samples; nothing "
			 "stored", (long long)conflict, dst_name);
		json_object_set_new(report, "conflict", json_integer(conflict));
		rc = KG_EXIT_USAGE;
		goto out;
	}
	json_object_set_new(report, "already_merged", json_false());
	if ((rc = store_run_begin(dst, &m)) != KG_EXIT_PASS)
		goto out;
	for (int s = 0; s < of && rc == KG_EXIT_PASS; s++)
		rc = runcopy_contents(chosen[s]->st, chosen[s]->run.id, dst, NULL, NULL);
	if (rc != KG_EXIT_PASS) {
		store_run_abort(dst);
		goto out;
	}
	if ((rc = store_run_commit(dst)) != KG_EXIT_PASS)
		goto out;
	*run = m.id;
	json_object_set_new(report, "samples", json_integer(sum.samples));
out:
	json_object_set_new(report, "parts", jparts);
	json_decref(dups);
	json_decref(missing);
	free(all);
	store_run_info_free(&m);
	free(chosen);
	for (size_t i = 0; i < np; i++)
		part_free(&ps[i]);
	free(ps);
	for (size_t i = 0; i < nparts; i++)
		store_close(opened[i]);
	free(opened);
	return rc;
}
