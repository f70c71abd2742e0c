/*
 * jtok.c: one JSON text as validated tokens (jtok.h).
 *
 * jsmn splits the text into tokens (objects and arrays with their extent,
 * strings, primitives) but, even in its strict mode, takes texts JSON does
 * not: missing or doubled commas ("[1 2]", "[1,,2]"), a trailing comma,
 * a primitive such as "nulls" or "1.2.3", control characters in strings.
 * So jtok walks the tokens in the order of the text with a stack of the
 * open containers, as a pushdown automaton for JSON's grammar, and checks
 * the bytes between two tokens (only blanks and the one ':' or ',' the
 * grammar wants there), each primitive (true, false, null, or a number by
 * RFC 8259's grammar, within the range jansson takes) and each string
 * (printable ASCII, no escape).  What passes is valid JSON that jansson
 * reads to the same values; anything else is declined, not judged, and
 * left to jansson.  The checks are written here because no Debian library
 * both validates and leaves the tree unbuilt; they are pinned against
 * jansson by tests/unit/test_jtok.c on valid, broken and mutated texts.
 *
 * kgate never sets a locale, so strtod reads '.' as JSON's decimal point,
 * as jansson's own conversion does.
 */
#define JTOK_IMPL
#define JSMN_STATIC
#include "kgate/jtok.h"

#include "kgate/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void jtok_free(struct jtok *j)
{
	free(j->t);
	free(j->stack);
	memset(j, 0, sizeof(*j));
}

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The bytes [from, to) are blanks around at most one punctuation mark: 1
 * when they hold exactly punct (or nothing but blanks when punct is 0). */
static int gap_is(const char *s, int from, int to, char punct)
{
	int seen = 0;
	for (int i = from; i < to; i++) {
		if (blank(s[i]))
			continue;
		if (!punct || seen || s[i] != punct)
			return 0;
		seen = 1;
	}
	return !punct || seen;
}

static int digit(char c)
{
	return c >= '0' && c <= '9';
}

/* s[a, b) is a JSON number; *is_int when it has no fraction or exponent. */
static int number_ok(const char *s, int a, int b, int *is_int)
{
	int i = a;
	*is_int = 1;
	if (i < b && s[i] == '-')
		i++;
	if (i >= b || !digit(s[i]))
		return 0;
	if (s[i] == '0')
		i++;
	else
		while (i < b && digit(s[i]))
			i++;
	if (i < b && s[i] == '.') {
		*is_int = 0;
		if (++i >= b || !digit(s[i]))
			return 0;
		while (i < b && digit(s[i]))
			i++;
	}
	if (i < b && (s[i] == 'e' || s[i] == 'E')) {
		*is_int = 0;
		if (++i < b && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= b || !digit(s[i]))
			return 0;
		while (i < b && digit(s[i]))
			i++;
	}
	return i == b;
}

/* An integer's value, as strtoll would give it: 0 when out of range. */
static int int_value(const char *s, int a, int b, int64_t *v)
{
	int neg = s[a] == '-';
	uint64_t x = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (int i = a + neg; i < b; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (x > (lim - d) / 10)
			return 0;
		x = x * 10 + d;
	}
	*v = neg ? (int64_t)(0 - x) : (int64_t)x;
	return 1;
}

/* The primitive token t is true, false, null or a number jansson takes. */
static int primitive_ok(const char *s, const jsmntok_t *t)
{
	int a = t->start, b = t->end, is_int;
	size_t n = (size_t)(b - a);

	switch (s[a]) {
	case 't':
		return n == 4 && !memcmp(s + a, "true", 4);
	case 'f':
		return n == 5 && !memcmp(s + a, "false", 5);
	case 'n':
		return n == 4 && !memcmp(s + a, "null", 4);
	}
	if (!number_ok(s, a, b, &is_int))
		return 0;
	if (is_int) {
		int64_t v;
		return int_value(s, a, b, &v);  /* jansson: "too big integer" */
	}
	/* jansson refuses a real that overflows; one that underflows it
	 * takes as strtod gives it */
	return isfinite(strtod(s + a, NULL));
}

/* The string token t: printable ASCII, no escape. */
static int string_ok(const char *s, const jsmntok_t *t)
{
	for (int i = t->start; i < t->end; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e || s[i] == '\\')
			return 0;
	return 1;
}

/* Where a container's members are, for the automaton. */
enum { IN_OBJECT_FIRST, IN_OBJECT_KEY, IN_OBJECT_VALUE, IN_ARRAY_FIRST, IN_ARRAY_VALUE };

/*
 * The grammar, over the tokens in the order of the text.  stack[k] is an
 * open container's token; state[k] where its members are: at the first,
 * after a key, after a value.  A container closes (its '}' or ']' at
 * end - 1) before the first token that starts after it.
 */
static int grammar_ok(struct jtok *j, size_t len)
{
	const char *s = j->s;
	int *stack = j->stack, depth = 0;
	int *state = j->stack + j->n;
	int cursor = 0;             /* just after the last thing read */

	for (int i = 0; i <= j->n; i++) {
		const jsmntok_t *t = i < j->n ? &j->t[i] : NULL;
		int at = t ? (t->type == JSMN_STRING ? t->start - 1 : t->start) : (int)len;

		/* the containers that end before this token */
		while (depth && j->t[stack[depth - 1]].end <= at) {
			const jsmntok_t *c = &j->t[stack[depth - 1]];
			int st = state[depth - 1];
			int close = c->end - 1;
			/* "{}" or a member last: blanks only before the close */
			if (st == IN_OBJECT_KEY || !gap_is(s, cursor, close, 0))
				return 0;
			cursor = c->end;
			depth--;    /* its parent was set "after a value" when it opened */
		}
		if (!t)
			return depth == 0 && gap_is(s, cursor, (int)len, 0);
		if (!depth) {
			/* the one top-level value, an object */
			if (i != 0 || t->type != JSMN_OBJECT || !gap_is(s, cursor, at, 0))
				return 0;
		} else {
			int st = state[depth - 1];
			char punct = st == IN_OBJECT_KEY ? ':' :
				     st == IN_OBJECT_VALUE || st == IN_ARRAY_VALUE ? ',' : 0;
			if (!gap_is(s, cursor, at, punct))
				return 0;
			int key = st == IN_OBJECT_FIRST || st == IN_OBJECT_VALUE;
			if (key && t->type != JSMN_STRING)
				return 0;
			if (key)
				state[depth - 1] = IN_OBJECT_KEY;
			else if (st == IN_OBJECT_KEY)
				state[depth - 1] = IN_OBJECT_VALUE;
			else
				state[depth - 1] = IN_ARRAY_VALUE;
		}
		switch (t->type) {
		case JSMN_OBJECT:
		case JSMN_ARRAY:
			if (depth == JTOK_MAX_DEPTH)
				return 0;   /* jansson stops at 2048; jtok_json recurses */
			stack[depth] = i;
			state[depth] = t->type == JSMN_OBJECT ? IN_OBJECT_FIRST : IN_ARRAY_FIRST;
			depth++;
			cursor = t->start + 1;
			break;
		case JSMN_STRING:
			if (!string_ok(s, t))
				return 0;
			cursor = t->end + 1;
			break;
		case JSMN_PRIMITIVE:
			if (!primitive_ok(s, t))
				return 0;
			cursor = t->end;
			break;
		default:
			return 0;
		}
	}
	return 0;
}

int jtok_scan(struct jtok *j, const char *s, size_t len)
{
	jsmn_parser p;
	int n;

	if (len > (size_t)INT32_MAX / 2)
		return 0;
	if (!j->cap) {
		j->cap = 256;
		j->t = xmalloc(j->cap * sizeof(*j->t));
		j->stack = xmalloc(2 * j->cap * sizeof(*j->stack));
	}
	j->s = s;
	j->n = 0;
	for (;;) {
		jsmn_init(&p);
		n = jsmn_parse(&p, s, len, j->t, j->cap);
		if (n != JSMN_ERROR_NOMEM)
			break;
		if (j->cap >= JTOK_MAX)
			return 0;
		j->cap *= 4;
		j->t = xrealloc(j->t, j->cap * sizeof(*j->t));
		j->stack = xrealloc(j->stack, 2 * j->cap * sizeof(*j->stack));
	}
	if (n <= 0)
		return 0;
	j->n = n;
	return grammar_ok(j, len);
}

int jtok_skip(const struct jtok *j, int i)
{
	int end = j->t[i].end, k = i + 1;
	while (k < j->n && j->t[k].start < end)
		k++;
	return k;
}

int jtok_isn(const struct jtok *j, int i, const char *lit, size_t n)
{
	const jsmntok_t *t = &j->t[i];
	return t->type == JSMN_STRING && (size_t)(t->end - t->start) == n &&
	       !memcmp(j->s + t->start, lit, n);
}

int jtok_is(const struct jtok *j, int i, const char *lit)
{
	return jtok_isn(j, i, lit, strlen(lit));
}

int jtok_null(const struct jtok *j, int i)
{
	return j->t[i].type == JSMN_PRIMITIVE && j->s[j->t[i].start] == 'n';
}

int jtok_int(const struct jtok *j, int i, int64_t *v)
{
	const jsmntok_t *t = &j->t[i];
	int is_int;
	return t->type == JSMN_PRIMITIVE &&
	       number_ok(j->s, t->start, t->end, &is_int) && is_int &&
	       int_value(j->s, t->start, t->end, v);
}

int jtok_number(const struct jtok *j, int i, double *v)
{
	const jsmntok_t *t = &j->t[i];
	int64_t iv;
	int is_int;

	if (t->type != JSMN_PRIMITIVE || !number_ok(j->s, t->start, t->end, &is_int))
		return 0;
	if (is_int) {
		if (!int_value(j->s, t->start, t->end, &iv))
			return 0;
		*v = (double)iv;
	} else {
		*v = strtod(j->s + t->start, NULL);
	}
	return 1;
}

json_t *jtok_json(const struct jtok *j, int i)
{
	const jsmntok_t *t = &j->t[i];
	const char *s = j->s + t->start;
	int64_t iv;
	double dv;

	switch (t->type) {
	case JSMN_OBJECT: {
		json_t *o = json_object();
		char small[128];
		for (int k = i + 1; k < j->n && j->t[k].start < t->end; k = jtok_skip(j, k + 1)) {
			size_t len = (size_t)(j->t[k].end - j->t[k].start);
			char *key = len < sizeof small ? small : xmalloc(len + 1);
			memcpy(key, j->s + j->t[k].start, len);
			key[len] = '\0';
			json_object_set_new_nocheck(o, key, jtok_json(j, k + 1));
			if (key != small)
				free(key);
		}
		return o;
	}
	case JSMN_ARRAY: {
		json_t *a = json_array();
		for (int k = i + 1; k < j->n && j->t[k].start < t->end; k = jtok_skip(j, k))
			json_array_append_new(a, jtok_json(j, k));
		return a;
	}
	case JSMN_STRING:
		return json_stringn_nocheck(s, (size_t)(t->end - t->start));
	default:
		if (*s == 't')
			return json_true();
		if (*s == 'f')
			return json_false();
		if (*s == 'n')
			return json_null();
		if (jtok_int(j, i, &iv))
			return json_integer((json_int_t)iv);
		jtok_number(j, i, &dv);
		return json_real(dv);
	}
}

json_t *jtok_loadb(struct jtok *j, const char *s, size_t n, json_error_t *err)
{
	if (jtok_scan(j, s, n))
		return jtok_json(j, 0);
	return json_loadb(s, n, 0, err);
}
