/*
 * jsonw.h: a tiny JSON writer for the collector's records (the collector may
 * not link jansson).  A jw is a growable byte buffer; strings are escaped so
 * that the result is always valid JSON in UTF-8.
 */
#ifndef KGATE_COLL_JSONW_H
#define KGATE_COLL_JSONW_H

#include <stddef.h>
#include <stdint.h>

struct jw {
	char *buf;
	size_t len, cap;
	int oom;        /* an allocation failed: the buffer is incomplete */
	int need_comma; /* the next value inside an object or array needs ',' */
};

void jw_init(struct jw *w);
void jw_free(struct jw *w);
void jw_reset(struct jw *w);
void jw_raw(struct jw *w, const char *s, size_t n);
/* Append s as a JSON string: quotes, \" \\ escaped, control characters as
 * \u00XX, invalid UTF-8 bytes replaced by U+FFFD.  NULL writes null. */
void jw_str(struct jw *w, const char *s);
void jw_strn(struct jw *w, const char *s, size_t n);

/* Structure helpers: they insert the commas. */
void jw_obj_open(struct jw *w);
void jw_obj_close(struct jw *w);
void jw_arr_open(struct jw *w);
void jw_arr_close(struct jw *w);
void jw_key(struct jw *w, const char *key);
void jw_kstr(struct jw *w, const char *key, const char *val);
void jw_kint(struct jw *w, const char *key, int64_t val);
void jw_kdbl(struct jw *w, const char *key, double val);  /* non-finite: null */
void jw_int(struct jw *w, int64_t val);
void jw_vstr(struct jw *w, const char *val);
void jw_vstrn(struct jw *w, const char *val, size_t n);

#endif
