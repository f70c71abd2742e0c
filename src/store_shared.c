/*
 * store_shared.c: the name caches, the open run's benchmark list and the
 * orderings that every store backend uses (store_shared.h).
 */
#include "store_shared.h"

#include "kgate/store.h"
#include "kgate/util.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a: short keys, no adversary (the names are kgate's own input). */
static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

int64_t namemap_get(struct namemap *m, const char *key)
{
	if (!m->cap)
		return 0;
	if (m->last && !strcmp(m->e[m->last - 1].key, key))
		return m->e[m->last - 1].id;
	for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].key)
			return 0;
		if (!strcmp(m->e[i].key, key)) {
			m->last = i + 1;
			return m->e[i].id;
		}
	}
}

static void namemap_grow(struct namemap *m)
{
	struct namemap_ent *old = m->e;
	size_t oldcap = m->cap;

	m->cap = oldcap ? oldcap * 2 : 64;
	m->e = xcalloc(m->cap, sizeof(*m->e));
	m->last = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].key) {
			size_t j = hash_str(old[i].key) & (m->cap - 1);
			while (m->e[j].key)
				j = (j + 1) & (m->cap - 1);
			m->e[j] = old[i];
		}
	free(old);
}

void namemap_put(struct namemap *m, const char *key, int64_t id)
{
	if ((m->n + 1) * 2 > m->cap)
		namemap_grow(m);
	size_t i = hash_str(key) & (m->cap - 1);
	while (m->e[i].key) {
		if (!strcmp(m->e[i].key, key)) {
			m->e[i].id = id;
			return;
		}
		i = (i + 1) & (m->cap - 1);
	}
	m->e[i].key = xstrdup(key);
	m->e[i].id = id;
	m->n++;
}

void namemap_clear(struct namemap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->e[i].key);
	free(m->e);
	m->e = NULL;
	m->cap = m->n = m->last = 0;
}

size_t runbench_note(struct runbench *rb, int64_t b)
{
	for (size_t i = rb->n; i-- > 0;)
		if (rb->id[i] == b)
			return i;
	if (rb->n == rb->cap) {
		size_t cap = rb->cap ? 2 * rb->cap : 16;
		rb->id = xrealloc(rb->id, cap * sizeof *rb->id);
		rb->state = xrealloc(rb->state, cap * sizeof *rb->state);
		for (size_t i = rb->cap; i < cap; i++)
			rb->state[i] = NULL;
		rb->cap = cap;
	}
	rb->id[rb->n] = b;
	free(rb->state[rb->n]);  /* a slot of an earlier run */
	rb->state[rb->n] = NULL;
	return rb->n++;
}

void runbench_set_state(struct runbench *rb, size_t i, const char *state)
{
	free(rb->state[i]);
	rb->state[i] = state ? xstrdup(state) : NULL;
}

void runbench_reset(struct runbench *rb)
{
	rb->n = 0;
}

void runbench_free(struct runbench *rb)
{
	for (size_t i = 0; i < rb->cap; i++)
		free(rb->state[i]);
	free(rb->state);
	free(rb->id);
	*rb = (struct runbench){ 0 };
}

void store_run_filter_sql(struct kg_buf *sql, const struct kg_run_filter *f, int has_commit,
			  char mark)
{
	if (has_commit)
		buf_printf(sql, " AND commit_sha = %c1", mark);
	if (f && f->branch)
		buf_printf(sql, " AND branch = %c2", mark);
	if (f && f->gpu_name)
		buf_printf(sql, " AND gpu_name = %c3", mark);
	if (f && f->driver)
		buf_printf(sql, " AND driver = %c4", mark);
	if (f && f->label)
		buf_printf(sql, " AND label = %c5", mark);
	if (f && f->no_quick)
		buf_adds(sql, " AND status = 'ok'");
	if (f && f->no_label)
		buf_adds(sql, " AND label IS NULL");
	if (f && f->since)
		buf_printf(sql, " AND time >= %c6", mark);
	buf_adds(sql, f && f->oldest_first ? " ORDER BY time, id" : " ORDER BY time DESC, id DESC");
	if (f && f->limit)
		buf_printf(sql, " LIMIT %c7", mark);
}

int store_cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int store_is_mangled(const char *name)
{
	return name && name[0] == '_' && name[1] == 'Z';
}

char **store_run_text(struct kg_run_info *run, int col)
{
#define RUN_TEXT(f) offsetof(struct kg_run_info, f)
	static const size_t off[STORE_RUN_NCOLS] = {
		SIZE_MAX, RUN_TEXT(commit), RUN_TEXT(branch), RUN_TEXT(parent), SIZE_MAX,
		RUN_TEXT(host), RUN_TEXT(gpu_name), RUN_TEXT(gpu_uuid), RUN_TEXT(gpu_chip),
		RUN_TEXT(driver), RUN_TEXT(cuda), RUN_TEXT(collector), RUN_TEXT(config_hash),
		RUN_TEXT(source), RUN_TEXT(label), RUN_TEXT(ci_url), RUN_TEXT(status),
		RUN_TEXT(devices),
	};
#undef RUN_TEXT
	if (col < 0 || col >= STORE_RUN_NCOLS || off[col] == SIZE_MAX)
		return NULL;
	return (char **)((char *)run + off[col]);
}
