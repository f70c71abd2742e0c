/*
 * jtok.h: one JSON text as validated tokens, without building a tree: the
 * fast path of reading records files (records.c), where a jansson tree per
 * line was more than half of ingest's time.  The tokens are jsmn's
 * (Debian's libjsmn-dev, compiled in); jtok checks what jsmn does not (the
 * separators between tokens, the literals and numbers), so a text jtok
 * accepts is one jansson accepts, with the same values.
 *
 * jtok takes only a subset: one object, strings of printable ASCII without
 * escapes, at most JTOK_MAX tokens.  Any other text, valid or not, is
 * declined, and the caller parses it with jansson, which gives the values
 * or the error message as it always has.
 */
#ifndef KGATE_JTOK_H
#define KGATE_JTOK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#ifndef JTOK_IMPL
#define JSMN_HEADER
#endif
#include <jsmn.h>

/* Tokens of the longest text taken; a longer one is declined (the bound
 * on jtok's memory: 64 Ki tokens of 20 bytes and their stack, 1.75 MiB). */
#define JTOK_MAX 65536

/* The deepest nesting taken (jansson refuses texts deeper than 2048). */
#define JTOK_MAX_DEPTH 512

struct jtok {
	const char *s;          /* the text (not copied) */
	jsmntok_t *t;           /* its tokens, in the order of the text */
	int n;                  /* how many */
	unsigned cap;
	int *stack;             /* the open containers while checking */
};

void jtok_free(struct jtok *j);

/* 1 when s[0..len) is one JSON object within jtok's subset (its tokens
 * are then j->t[0..n), the object first); 0 when it is not, the text then
 * being jansson's to parse. */
int jtok_scan(struct jtok *j, const char *s, size_t len);

/* The index of the token after token i and everything inside it. */
int jtok_skip(const struct jtok *j, int i);

/* Token i is the string lit. */
int jtok_is(const struct jtok *j, int i, const char *lit);
/* The same, lit's length given (n bytes). */
int jtok_isn(const struct jtok *j, int i, const char *lit, size_t n);

/* Token i is null. */
int jtok_null(const struct jtok *j, int i);

/* 1 when token i is an integer (no fraction, no exponent) in int64 range,
 * its value in *v; else 0. */
int jtok_int(const struct jtok *j, int i, int64_t *v);

/* 1 when token i is a number, its value (as jansson's json_number_value
 * gives it) in *v; else 0. */
int jtok_number(const struct jtok *j, int i, double *v);

/* The value of token i (and what is inside it) as jansson's tree: what
 * json_loadb gives of the same text. */
json_t *jtok_json(const struct jtok *j, int i);

/* s[0..n) as jansson's tree: through jtok when it takes the text (the
 * common case, about twice as fast), else json_loadb(s, n, 0, err). */
json_t *jtok_loadb(struct jtok *j, const char *s, size_t n, json_error_t *err);

#endif
