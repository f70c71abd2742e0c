/*
 * jsonw.c: the collector's JSON writer (see jsonw.h).  Owns string escaping
 * and UTF-8 repair, so that `kgate ingest` never sees bad JSON from us.
 */
#include "jsonw.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jw_init(struct jw *w)
{
	memset(w, 0, sizeof(*w));
}

void jw_free(struct jw *w)
{
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

void jw_reset(struct jw *w)
{
	w->len = 0;
	w->oom = 0;
	w->need_comma = 0;
}

static int jw_grow(struct jw *w, size_t more)
{
	if (w->oom)
		return -1;
	if (w->len + more + 1 <= w->cap)
		return 0;
	size_t cap = w->cap ? w->cap : 256;
	while (cap < w->len + more + 1)
		cap *= 2;
	char *b = realloc(w->buf, cap);
	if (!b) {
		w->oom = 1;
		return -1;
	}
	w->buf = b;
	w->cap = cap;
	return 0;
}

void jw_raw(struct jw *w, const char *s, size_t n)
{
	if (jw_grow(w, n))
		return;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t jw_utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
		cp = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		cp = c & 0x0F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	/* overlong forms, surrogates and values past U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

void jw_strn(struct jw *w, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	jw_raw(w, "\"", 1);
	while (i < n) {
		unsigned char c = p[i];
		size_t run = i;
		/* copy runs of plain bytes at once */
		while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
			run++;
		if (run > i) {
			jw_raw(w, s + i, run - i);
			i = run;
			continue;
		}
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			jw_raw(w, e, 2);
			i++;
		} else if (c < 0x20) {
			char e[8];
			snprintf(e, sizeof(e), "\\u%04x", c);
			jw_raw(w, e, 6);
			i++;
		} else {
			size_t l = jw_utf8_len(p + i, n - i);
			if (l) {
				jw_raw(w, s + i, l);
				i += l;
			} else {
				jw_raw(w, "\xEF\xBF\xBD", 3); /* U+FFFD */
				i++;
			}
		}
	}
	jw_raw(w, "\"", 1);
}

void jw_str(struct jw *w, const char *s)
{
	if (!s)
		jw_raw(w, "null", 4);
	else
		jw_strn(w, s, strlen(s));
}

static void jw_comma(struct jw *w)
{
	if (w->need_comma)
		jw_raw(w, ",", 1);
	w->need_comma = 1;
}

static void jw_open(struct jw *w, const char *bracket)
{
	jw_comma(w);
	jw_raw(w, bracket, 1);
	w->need_comma = 0;
}

static void jw_close(struct jw *w, const char *bracket)
{
	jw_raw(w, bracket, 1);
	w->need_comma = 1;
}

void jw_obj_open(struct jw *w)
{
	jw_open(w, "{");
}

void jw_obj_close(struct jw *w)
{
	jw_close(w, "}");
}

void jw_arr_open(struct jw *w)
{
	jw_open(w, "[");
}

void jw_arr_close(struct jw *w)
{
	jw_close(w, "]");
}

void jw_key(struct jw *w, const char *key)
{
	jw_comma(w);
	jw_str(w, key);
	jw_raw(w, ":", 1);
	w->need_comma = 0;
}

void jw_int(struct jw *w, int64_t val)
{
	char b[32];
	int n = snprintf(b, sizeof(b), "%lld", (long long)val);
	jw_comma(w);
	jw_raw(w, b, (size_t)n);
}

void jw_vstr(struct jw *w, const char *val)
{
	jw_comma(w);
	jw_str(w, val);
}

void jw_vstrn(struct jw *w, const char *val, size_t n)
{
	jw_comma(w);
	jw_strn(w, val, n);
}

void jw_kstr(struct jw *w, const char *key, const char *val)
{
	jw_key(w, key);
	jw_vstr(w, val);
}

void jw_kint(struct jw *w, const char *key, int64_t val)
{
	jw_key(w, key);
	jw_int(w, val);
}

static locale_t jw_c_locale;
static pthread_once_t jw_locale_once = PTHREAD_ONCE_INIT;

static void jw_locale_init(void)
{
	jw_c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

void jw_kdbl(struct jw *w, const char *key, double val)
{
	char b[40];
	jw_key(w, key);
	jw_comma(w);
	if (!isfinite(val)) {
		jw_raw(w, "null", 4);
		return;
	}
	/* The host program may have set a locale with a decimal comma: format
	 * in the C locale.  The shortest of %.15g / %.17g that reads back. */
	pthread_once(&jw_locale_once, jw_locale_init);
	locale_t old = jw_c_locale ? uselocale(jw_c_locale) : (locale_t)0;
	int n = snprintf(b, sizeof(b), "%.15g", val);
	if (strtod(b, NULL) != val)
		n = snprintf(b, sizeof(b), "%.17g", val);
	if (old)
		uselocale(old);
	/* keep it a JSON number that reads back as a real ("3300" -> "3300.0") */
	if (!strpbrk(b, ".eE") && n < 36) {
		memcpy(b + n, ".0", 3);
		n += 2;
	}
	jw_raw(w, b, (size_t)n);
}
