/*
 * import/jstream.c: the streaming JSON reader of the JSON importers
 * (jstream.h): zlib's gzread decompresses on a thread of its own (a plain
 * file reads through it as it is), the reader copies into a window, and a
 * small scanner splits the top-level object
 * and an array's elements into values, strings found with memchr; a value
 * is parsed with jansson only when asked.  The window holds at least the
 * value being read (JSTREAM_VALUE_MAX at most), so memory does not grow
 * with the file.  A truncated gzip stream, a document cut short or bytes
 * after it are errors naming the file and the byte offset (of the
 * decompressed text).
 */
#include "jstream.h"

#include "kgate/kgate.h"
#include "kgate/util.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/*
 * The inflater: gzread on a thread of its own, into ZPIPE_BLOCKS blocks the
 * reader takes from in order (jr_fill), so that inflating a .json.gz (half
 * of a Kineto import's CPU) runs beside the scanning and parsing.  Memory:
 * the blocks, 1 MiB.
 */
static void *zpipe_run(void *arg)
{
	struct zpipe *z = arg;

	for (;;) {
		pthread_mutex_lock(&z->mu);
		while (z->count == ZPIPE_BLOCKS && !z->stop)
			pthread_cond_wait(&z->cv, &z->mu);
		size_t slot = (z->head + z->count) % ZPIPE_BLOCKS;
		int stop = z->stop;
		pthread_mutex_unlock(&z->mu);
		if (stop)
			return NULL;
		/* the slot is the inflater's until it is counted in */
		errno = 0;
		int n = gzread(z->gz, z->blk[slot], ZPIPE_BLOCK);
		int err_no = errno, zerr = Z_OK;
		const char *msg = gzerror(z->gz, &zerr);
		pthread_mutex_lock(&z->mu);
		if (n < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
			z->failed = 1;
			z->zerr = zerr;
			z->err_no = err_no;
			snprintf(z->msg, sizeof z->msg, "%s", msg ? msg : "");
			z->done = 1;
		} else if (n == 0) {
			z->done = 1;
		} else {
			z->len[slot] = (size_t)n;
			z->count++;
		}
		int done = z->done;
		pthread_cond_broadcast(&z->cv);
		pthread_mutex_unlock(&z->mu);
		if (done)
			return NULL;
	}
}

static void jstream_close(struct jstream *r);

static int jstream_open(struct jstream *r, const char *path, const char *what)
{
	struct zpipe *z = &r->z;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->what = what;
	if (!(z->gz = gzopen(path, "rb"))) {
		kg_error("cannot open '%s': %s", path, errno ? strerror(errno) : "out of memory");
		return KG_EXIT_USAGE;
	}
	gzbuffer(z->gz, 256 * 1024);
	r->cap = JSTREAM_WINDOW;
	r->b = xmalloc(r->cap);
	for (size_t i = 0; i < ZPIPE_BLOCKS; i++)
		z->blk[i] = xmalloc(ZPIPE_BLOCK);
	pthread_mutex_init(&z->mu, NULL);
	pthread_cond_init(&z->cv, NULL);
	if (pthread_create(&z->tid, NULL, zpipe_run, z) != 0) {
		kg_error("cannot read '%s': cannot start a thread", path);
		jstream_close(r);
		return KG_EXIT_RUNTIME;
	}
	z->started = 1;
	return KG_EXIT_PASS;
}

static void jstream_close(struct jstream *r)
{
	struct zpipe *z = &r->z;

	if (z->started) {
		pthread_mutex_lock(&z->mu);
		z->stop = 1;
		pthread_cond_broadcast(&z->cv);
		pthread_mutex_unlock(&z->mu);
		pthread_join(z->tid, NULL);
	}
	if (z->gz) {
		pthread_mutex_destroy(&z->mu);
		pthread_cond_destroy(&z->cv);
		gzclose(z->gz);
	}
	for (size_t i = 0; i < ZPIPE_BLOCKS; i++)
		free(z->blk[i]);
	free(r->b);
	jtok_free(&r->jt);
	memset(r, 0, sizeof(*r));
}

/* Up to want inflated bytes into dst: how many (0 at the end), or -1
 * after saying what went wrong. */
static long zpipe_take(struct jstream *r, unsigned char *dst, size_t want)
{
	struct zpipe *z = &r->z;
	size_t got = 0;

	pthread_mutex_lock(&z->mu);
	while (!z->count && !z->done)
		pthread_cond_wait(&z->cv, &z->mu);
	while (z->count && got < want) {
		size_t n = z->len[z->head] - z->off;
		if (n > want - got)
			n = want - got;
		memcpy(dst + got, z->blk[z->head] + z->off, n);
		got += n;
		z->off += n;
		if (z->off == z->len[z->head]) {
			z->head = (z->head + 1) % ZPIPE_BLOCKS;
			z->count--;
			z->off = 0;
			pthread_cond_broadcast(&z->cv);
		}
	}
	int failed = !got && z->failed;
	int zerr = z->zerr, err_no = z->err_no;
	char msg[sizeof z->msg];
	memcpy(msg, z->msg, sizeof msg);
	pthread_mutex_unlock(&z->mu);
	if (failed) {
		if (zerr == Z_BUF_ERROR)
			kg_error("%s: truncated: the gzip stream ends before its end (the file was "
				 "cut short); nothing imported", r->path);
		else
			kg_error("cannot read '%s': %s", r->path,
				 zerr == Z_ERRNO ? strerror(err_no) : msg);
		return -1;
	}
	return (long)got;
}

static uint64_t pos_offset(const struct jstream *r)
{
	return r->dropped + r->pos;
}

/* More bytes: 1 when some came, 0 at the end, -1 on an error said. */
static int jr_fill(struct jstream *r)
{
	if (r->eof)
		return 0;
	if (r->mark) {
		memmove(r->b, r->b + r->mark, r->len - r->mark);
		r->len -= r->mark;
		r->pos -= r->mark;
		r->dropped += r->mark;
		r->mark = 0;
	}
	if (r->len == r->cap) {
		if (r->cap >= JSTREAM_VALUE_MAX) {
			kg_error("%s: byte %llu: a value over %u MiB; not a trace kgate reads",
				 r->path, (unsigned long long)pos_offset(r), JSTREAM_VALUE_MAX >> 20);
			return -1;
		}
		r->cap *= 2;
		r->b = xrealloc(r->b, r->cap);
	}
	long n = zpipe_take(r, r->b + r->len, r->cap - r->len);
	if (n < 0)
		return -1;
	if (n == 0) {
		r->eof = 1;
		return 0;
	}
	r->len += (size_t)n;
	return 1;
}

/* The byte at pos (filling), or -1 at the end, -2 on an error said. */
static int jr_peek(struct jstream *r)
{
	while (r->pos >= r->len) {
		int f = jr_fill(r);
		if (f <= 0)
			return f < 0 ? -2 : -1;
	}
	return r->b[r->pos];
}

static int is_ws(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The next byte that is not white space (not consumed). */
static int jr_next(struct jstream *r)
{
	int c;
	while ((c = jr_peek(r)) >= 0 && is_ws(c))
		r->pos++;
	return c;
}

static int jr_bad(struct jstream *r, int c, const char *want)
{
	if (c == -2)
		return KG_EXIT_USAGE;
	if (c == -1)
		kg_error("%s: truncated: the JSON document ends at byte %llu where %s was due "
			 "(the file was cut short); nothing imported", r->path,
			 (unsigned long long)pos_offset(r), want);
	else
		kg_error("%s: byte %llu: bad %s JSON: %s expected", r->path,
			 (unsigned long long)pos_offset(r), r->what, want);
	return KG_EXIT_USAGE;
}

void jstream_probe(struct jstream *r, const char *key)
{
	r->probe = key;
	r->probe_len = key ? strlen(key) : 0;
}

/* A string of an element at its top level, [s, e) its text without the
 * quotes, seen by jr_value's scan for the probe (jstream_probe): a key
 * (*key set) is compared with the probe's name, and the string after a
 * matching key (*take set) is its value. */
static void probe_string(struct jstream *r, const unsigned char *s, const unsigned char *e,
			 int *key, int *take)
{
	size_t n = (size_t)(e - s);
	int esc = memchr(s, '\\', n) != NULL;

	if (*key) {
		*key = 0;
		if (esc) {
			r->pr.unsure = 1;       /* a key with escapes could spell it */
		} else if (n == r->probe_len && !memcmp(s, r->probe, n)) {
			r->pr.hits++;
			*take = 1;
		}
		return;
	}
	if (*take) {
		*take = 0;
		if (esc)
			r->pr.unsure = 1;
		r->pr.off = (size_t)(s - (r->b + r->mark));
		r->pr.len = n;
	}
}

/*
 * Pass over one value starting at pos (white space skipped); *start is its
 * first byte.  keep: the value's bytes stay in the window (from *start to
 * pos); else they may be dropped as it is read.  0, or an exit status said.
 */
static int jr_value(struct jstream *r, int keep, size_t *start)
{
	int c = jr_next(r), depth = 0;
	/* the probe (jstream_probe): the element's top-level keys and values */
	int pk = keep && r->probe, key = 0, take = 0;

	if (c < 0)
		return jr_bad(r, c, "a value");
	*start = r->pos;
	if (keep)
		r->mark = r->pos;
	if (pk) {
		memset(&r->pr, 0, sizeof(r->pr));
		r->pr.unsure = c != '{';
	}
	if (c != '{' && c != '[' && c != '"') {
		/* a number, true, false, null */
		while ((c = jr_peek(r)) >= 0 && c != ',' && c != '}' && c != ']' && !is_ws(c)) {
			r->pos++;
			if (!keep)
				r->mark = r->pos;
		}
		if (c == -2)
			return KG_EXIT_USAGE;
		*start = keep ? r->mark : r->pos;
		return r->pos > *start || !keep ? KG_EXIT_PASS : jr_bad(r, c, "a value");
	}
	for (;;) {
		/* scan what the window holds without refilling byte by byte */
		unsigned char *p = r->b + r->pos, *e = r->b + r->len;
		while (p < e) {
			unsigned char ch = *p++;
			if (ch == '"') {
				unsigned char *open = p;
				/* the closing quote: one not escaped by an odd run of
				 * backslashes */
				for (;;) {
					unsigned char *q = memchr(p, '"', (size_t)(e - p));
					if (!q) {
						p = NULL;       /* the string goes on past the window */
						break;
					}
					size_t bs = 0;
					while (q - bs > p && q[-1 - (ptrdiff_t)bs] == '\\')
						bs++;
					p = q + 1;
					if (bs % 2 == 0)
						break;
				}
				if (!p)
					break;
				if (pk && depth == 1)
					probe_string(r, open, p - 1, &key, &take);
				if (depth == 0) {
					r->pos = (size_t)(p - r->b);
					goto done;
				}
			} else if (ch == '{' || ch == '[') {
				if (pk && depth == 0)
					key = 1;        /* the element's first key is due */
				depth++;
			} else if (pk && ch == ',' && depth == 1) {
				key = 1;
				r->pr.unsure |= take;   /* the value after the key was no string */
				take = 0;
			} else if (ch == '}' || ch == ']') {
				if (--depth == 0) {
					if (pk)
						r->pr.unsure |= take;
					r->pos = (size_t)(p - r->b);
					goto done;
				}
				if (depth < 0)
					return jr_bad(r, ch, "a value");
			}
			r->pos = (size_t)(p - r->b);
		}
		/* (p NULL: a string goes on past the window; pos is at its
		 * opening quote, and the scan starts there again) */
		if (!keep)
			r->mark = r->pos;
		int f = jr_fill(r);
		if (f < 0)
			return KG_EXIT_USAGE;
		if (f == 0) {
			r->pos = r->len;
			return jr_bad(r, -1, "the end of a value");
		}
	}
done:
	if (keep)
		*start = r->mark;
	return KG_EXIT_PASS;
}

/*
 * The top-level object, key by key: fn is called with each key and the
 * reader at its value, and must consume the value.  0, or an exit status.
 */
static int jstream_object(struct jstream *r, jstream_key_fn fn, void *ctx)
{
	int c = jr_next(r), rc;

	if (c != '{')
		return jr_bad(r, c, "a JSON object ('{')");
	r->pos++;
	if ((c = jr_next(r)) == '}') {
		r->pos++;
		goto end;
	}
	for (;;) {
		size_t ks;
		if ((c = jr_next(r)) != '"')
			return jr_bad(r, c, "a key");
		if ((rc = jr_value(r, 1, &ks)) != KG_EXIT_PASS)
			return rc;
		char key[64];
		size_t kl = r->pos - ks - 2;
		snprintf(key, sizeof(key), "%.*s", (int)(kl < 63 ? kl : 63), r->b + ks + 1);
		r->mark = r->pos;
		if ((c = jr_next(r)) != ':')
			return jr_bad(r, c, "':'");
		r->pos++;
		if ((rc = fn(r, key, ctx)) != KG_EXIT_PASS)
			return rc;
		c = jr_next(r);
		if (c == ',') {
			r->pos++;
			continue;
		}
		if (c == '}') {
			r->pos++;
			break;
		}
		return jr_bad(r, c, "',' or '}'");
	}
end:
	r->mark = r->pos;
	if ((c = jr_next(r)) != -1)
		return c == -2 ? KG_EXIT_USAGE : jr_bad(r, c, "the end of the file");
	return KG_EXIT_PASS;
}

/* A value skipped. */
int jstream_skip(struct jstream *r)
{
	size_t s;
	int rc = jr_value(r, 0, &s);
	r->mark = r->pos;
	return rc;
}

/* A value parsed with jansson (NULL after an error said). */
json_t *jstream_json(struct jstream *r)
{
	size_t s;

	if (jr_value(r, 1, &s) != KG_EXIT_PASS)
		return NULL;
	json_t *v = jstream_parse(r, r->b + s, r->pos - s);
	r->mark = r->pos;
	return v;
}

/* The elements of an array, each handed to fn with its bytes [s, e). */
int jstream_array(struct jstream *r, jstream_elem_fn fn, void *ctx)
{
	int c = jr_next(r), rc;

	if (c != '[')
		return jr_bad(r, c, "an array ('[')");
	r->pos++;
	r->mark = r->pos;
	if ((c = jr_next(r)) == ']') {
		r->pos++;
		r->mark = r->pos;
		return KG_EXIT_PASS;
	}
	for (;;) {
		size_t s;
		if ((rc = jr_value(r, 1, &s)) != KG_EXIT_PASS)
			return rc;
		if ((rc = fn(r, r->b + s, r->pos - s, ctx)) != KG_EXIT_PASS)
			return rc;
		r->mark = r->pos;
		c = jr_next(r);
		if (c == ',') {
			r->pos++;
			r->mark = r->pos;
			continue;
		}
		if (c == ']') {
			r->pos++;
			r->mark = r->pos;
			return KG_EXIT_PASS;
		}
		return jr_bad(r, c, "',' or ']'");
	}
}

int jstream_peek(struct jstream *r)
{
	return jr_next(r);
}

json_t *jstream_parse(struct jstream *r, const unsigned char *s, size_t n)
{
	json_error_t err;
	json_t *v = jtok_loadb(&r->jt, (const char *)s, n, &err);

	if (!v)
		kg_error("%s: byte %llu: bad %s JSON: %s", r->path,
			 (unsigned long long)(jstream_offset(r, s) +
					      (size_t)(err.position > 0 ? err.position : 0)),
			 r->what, err.text);
	return v;
}

uint64_t jstream_offset(const struct jstream *r, const unsigned char *at)
{
	return r->dropped + (uint64_t)(at - r->b);
}

int jstream_walk(const char *path, const char *what, jstream_key_fn fn, void *ctx)
{
	struct jstream r;
	int rc;

	if ((rc = jstream_open(&r, path, what)) != KG_EXIT_PASS)
		return rc;
	rc = jstream_object(&r, fn, ctx);
	jstream_close(&r);
	return rc == JSTREAM_STOP ? KG_EXIT_PASS : rc;
}
