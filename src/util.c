/*
 * util.c: allocation wrappers, struct kg_buf and "did you mean"
 * suggestions (kgate's messages are msg.c's).  Owns nothing global except the program name
 * used in messages ("kgate").
 */
#include "kgate/util.h"
#include "kgate/kgate.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void oom(void)
{
	fputs("kgate: out of memory\n", stderr);
	exit(KG_EXIT_RUNTIME);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	struct kg_buf b = KG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	return buf_detach(&b);
}

long kg_lines_next(struct kg_lines *l, char **line, size_t max, int *newline)
{
	size_t scan = l->beg; /* bytes before it hold no '\n' */

	for (;;) {
		char *nl = l->end > scan ? memchr(l->buf + scan, '\n', l->end - scan) : NULL;
		if (nl) {
			size_t n = (size_t)(nl - (l->buf + l->beg));
			if (n + 1 > max)
				return -2;
			*nl = '\0';
			*line = l->buf + l->beg;
			*newline = 1;
			l->beg += n + 1;
			return (long)n;
		}
		size_t have = l->end - l->beg;
		if (have > max)
			return -2;
		if (l->eof) {
			if (!have)
				return -1;
			l->buf[l->end] = '\0'; /* the byte kept for it */
			*line = l->buf + l->beg;
			*newline = 0;
			l->beg = l->end;
			return (long)have;
		}
		/* the partial line to the front, room for a block after it */
		if (l->beg) {
			memmove(l->buf, l->buf + l->beg, have);
			l->beg = 0;
			l->end = have;
		}
		if (l->cap - l->end < KG_LINES_BLOCK) {
			size_t want = l->end + KG_LINES_BLOCK;
			if (want < 2 * l->cap)
				want = 2 * l->cap;
			if (want > max + 1 + KG_LINES_BLOCK)
				want = max + 1 + KG_LINES_BLOCK;
			if (want > l->cap) {
				l->buf = xrealloc(l->buf, want + 1);
				l->cap = want;
			}
		}
		scan = l->end;
		size_t got = fread(l->buf + l->end, 1, l->cap - l->end, l->fp);
		l->end += got;
		if (got == 0)
			l->eof = 1;
	}
}

void kg_lines_free(struct kg_lines *l)
{
	free(l->buf);
	memset(l, 0, sizeof(*l));
}

int kg_use_color(int fd)
{
	const char *nc = getenv("NO_COLOR");
	const char *term = getenv("TERM");

	if (nc && *nc)
		return 0;
	if (term && !strcmp(term, "dumb"))
		return 0;
	return isatty(fd);
}

static void buf_grow(struct kg_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (need <= b->cap)
		return;
	if (b->cap == 0)
		b->cap = 64;
	while (b->cap < need)
		b->cap *= 2;
	b->s = xrealloc(b->s, b->cap);
}

void buf_add(struct kg_buf *b, const char *s, size_t n)
{
	buf_grow(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void buf_adds(struct kg_buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_addc(struct kg_buf *b, char c)
{
	buf_add(b, &c, 1);
}

void buf_vprintf(struct kg_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	buf_grow(b, (size_t)n);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void buf_printf(struct kg_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void buf_reset(struct kg_buf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

char *buf_detach(struct kg_buf *b)
{
	char *s = b->s ? b->s : xstrdup("");

	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

void buf_free(struct kg_buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

void *kg_table_grow(void *old, size_t oldcap, size_t cap, size_t size, const void *empty,
		    size_t (*hash)(const void *slot, const void *arg), const void *arg)
{
	unsigned char *t = xmalloc(cap * size);
	const unsigned char *o = old;

	for (size_t j = 0; j < cap; j++)
		memcpy(t + j * size, empty, size);
	for (size_t i = 0; i < oldcap; i++) {
		const unsigned char *e = o + i * size;
		if (!memcmp(e, empty, size))
			continue;
		size_t j = hash(e, arg) & (cap - 1);
		while (memcmp(t + j * size, empty, size))
			j = (j + 1) & (cap - 1);
		memcpy(t + j * size, e, size);
	}
	free(old);
	return t;
}

size_t kg_levenshtein(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t *row = xmalloc((lb + 1) * sizeof(*row));
	size_t d;

	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = diag + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	d = row[lb];
	free(row);
	return d;
}

const char *kg_suggest(const char *word, const char *const *candidates, size_t n)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1, i;
	size_t limit = strlen(word) / 3 + 2;

	for (i = 0; i < n; i++) {
		size_t d = kg_levenshtein(word, candidates[i]);
		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	return best_d <= limit ? best : NULL;
}

const char *kg_suggest_close(const char *word, const char *const *candidates, size_t n)
{
	const char *s = kg_suggest(word, candidates, n);

	if (s && 2 * kg_levenshtein(word, s) > strlen(word))
		return NULL;
	return s;
}

char *kg_exe_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	return xstrdup(buf[0] ? buf : "/");
}

/* ---- commits ---- */

static size_t hex_run(const char *s)
{
	size_t n = 0;
	while ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f') ||
	       (s[n] >= 'A' && s[n] <= 'F'))
		n++;
	return n;
}

const char *kg_sha_short(char *out, const char *sha)
{
	if (!sha)
		sha = "?";
	size_t h = hex_run(sha);
	if (h > KG_SHA_SHORT && (sha[h] == '\0' || sha[h] == ' '))
		snprintf(out, KG_SHA_SHORT_BUF, "%.*s%s", KG_SHA_SHORT, sha, sha + h);
	else
		snprintf(out, KG_SHA_SHORT_BUF, "%s", sha);
	return out;
}

int kg_is_sha(const char *s)
{
	size_t h = s ? hex_run(s) : 0;
	return (h == 40 || h == 64) && s[h] == '\0';
}

/* ---- files found from a subdirectory ---- */

/* 1 when dir is one of GIT_CEILING_DIRECTORIES (colon-separated absolute
 * paths): a search going up does not enter it, as git's does not. */
static int at_ceiling(const char *dir)
{
	const char *c = getenv("GIT_CEILING_DIRECTORIES");
	size_t n = strlen(dir);
	while (c && *c) {
		const char *e = strchr(c, ':');
		size_t l = e ? (size_t)(e - c) : strlen(c);
		while (l > 1 && c[l - 1] == '/')
			l--;
		if (l == n && !strncmp(c, dir, n))
			return 1;
		c = e ? e + 1 : NULL;
	}
	return 0;
}

char *kg_find_up(const char *name, char **top)
{
	char dir[PATH_MAX];
	if (top)
		*top = NULL;
	if (access(name, F_OK) == 0)
		return xstrdup(name);
	if (!getcwd(dir, sizeof dir))
		return NULL;
	for (;;) {
		char *git = xasprintf("%s/.git", dir);
		int is_top = access(git, F_OK) == 0;
		free(git);
		if (is_top) {
			if (top)
				*top = xstrdup(dir);
			return NULL;   /* the working directory's repository: not above it */
		}
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return NULL;
		*slash = '\0';
		if (at_ceiling(dir))
			return NULL;
		char *p = xasprintf("%s/%s", dir, name);
		if (access(p, F_OK) == 0) {
			if (top) {
				char *g = xasprintf("%s/.git", dir);
				if (access(g, F_OK) == 0)
					*top = xstrdup(dir);
				free(g);
			}
			return p;
		}
		free(p);
	}
}
