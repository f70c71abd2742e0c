/*
 * config.c: the suite file (kgate.yaml) and thresholds files.
 *
 * Owns reading these files (size-capped), turning libyaml's events into a
 * small node tree (no anchors or aliases, nesting capped), walking that tree
 * through static schema tables (key name, node type, required, and either
 * the kind of value and its place in the object, or a handler of its own),
 * the strict value parsers (percent, duration, integer, number), metric name
 * validation (through metricinfo), the built-in thresholds (the text of
 * thresholds/default.yaml, assembled into the binary) and config_rule_for().
 * Every problem is collected with its position and reported at once.
 */
#include "kgate/config.h"
#include "kgate/demangle.h"
#include "kgate/kgate.h"
#include "kgate/metric.h"
#include "kgate/metricinfo.h"
#include "kgate/util.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

/* thresholds/default.yaml, embedded at build time (one source of truth). */
__asm__(".pushsection .rodata\n"
	".balign 8\n"
	".hidden kg_default_yaml_begin\n"
	".globl kg_default_yaml_begin\n"
	"kg_default_yaml_begin:\n"
	".incbin \"thresholds/default.yaml\"\n"
	".hidden kg_default_yaml_end\n"
	".globl kg_default_yaml_end\n"
	"kg_default_yaml_end:\n"
	".byte 0\n"
	".popsection\n");
extern const char kg_default_yaml_begin[];
extern const char kg_default_yaml_end[];

#define METRIC_CHIP "gh100"
#define METRIC_GRAMMAR "^[a-z0-9_]+__[a-z0-9_]+(\\.[a-z0-9_]+)*$"

/* ---- the node tree ---------------------------------------------------- */

enum ykind { Y_SCALAR, Y_SEQ, Y_MAP, Y_BAD };

struct ynode {
	enum ykind kind;
	char *str;              /* Y_SCALAR: the value, NUL-terminated */
	int plain;              /* Y_SCALAR: unquoted */
	int line, col;          /* 1-based */
	struct ynode **items;   /* Y_SEQ: items; Y_MAP: key, value, key, ... */
	size_t n, cap;
};

static void node_free(struct ynode *n)
{
	size_t i;

	if (!n)
		return;
	for (i = 0; i < n->n; i++)
		node_free(n->items[i]);
	free(n->items);
	free(n->str);
	free(n);
}

static struct ynode *node_new(enum ykind kind, yaml_mark_t m)
{
	struct ynode *n = xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->line = (int)m.line + 1;
	n->col = (int)m.column + 1;
	return n;
}

static void node_add(struct ynode *parent, struct ynode *child)
{
	if (parent->n == parent->cap) {
		parent->cap = parent->cap ? parent->cap * 2 : 8;
		parent->items = xrealloc(parent->items, parent->cap * sizeof(*parent->items));
	}
	parent->items[parent->n++] = child;
}

/* A null scalar: empty and plain, or ~ / null. */
static int node_is_null(const struct ynode *n)
{
	return n->kind == Y_SCALAR && n->plain &&
	       (!n->str[0] || !strcmp(n->str, "~") || !strcmp(n->str, "null"));
}

/* ---- problems --------------------------------------------------------- */

struct problem {
	int line, col;
	size_t seq;
	char *msg;
};

struct ctx {
	const char *file;
	struct problem *p;
	size_t np, cap;
	int grammar_ready;
	regex_t grammar;
	int trusted;            /* built-in text: metric names checked by syntax only */
};

static void problem(struct ctx *c, int line, int col, const char *fmt, ...) KG_PRINTF(4, 5);

static void problem(struct ctx *c, int line, int col, const char *fmt, ...)
{
	struct kg_buf b = KG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (c->np == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 8;
		c->p = xrealloc(c->p, c->cap * sizeof(*c->p));
	}
	c->p[c->np].line = line;
	c->p[c->np].col = col;
	c->p[c->np].seq = c->np;
	c->p[c->np].msg = buf_detach(&b);
	c->np++;
}

static int problem_cmp(const void *a, const void *b)
{
	const struct problem *x = a, *y = b;
	int c = KG_CMP(x->line, y->line);

	if (!c)
		c = KG_CMP(x->col, y->col);
	return c ? c : KG_CMP(x->seq, y->seq);
}

/* Sort the problems into errs; free them.  Returns how many there were. */
static size_t ctx_finish(struct ctx *c, struct kg_buf *errs)
{
	size_t i, n = c->np;

	if (c->np)
		qsort(c->p, c->np, sizeof(*c->p), problem_cmp);
	for (i = 0; i < c->np; i++) {
		if (errs)
			buf_printf(errs, "%s:%d:%d: %s\n", c->file, c->p[i].line,
				   c->p[i].col, c->p[i].msg);
		free(c->p[i].msg);
	}
	free(c->p);
	c->p = NULL;
	c->np = c->cap = 0;
	if (c->grammar_ready)
		regfree(&c->grammar);
	c->grammar_ready = 0;
	return n;
}

/* ---- events to tree --------------------------------------------------- */

/* Line and column (1-based) of a byte offset, for reader errors. */
static void offset_pos(const char *text, size_t len, size_t off, int *line, int *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)text[i] & 0xC0) != 0x80) {
			(*col)++;
		}
	}
}

static void syntax_problem(struct ctx *c, yaml_parser_t *p, const char *text, size_t len)
{
	int line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;
	const char *what = p->problem ? p->problem : "unreadable input";

	if (p->error == YAML_READER_ERROR) {
		offset_pos(text, len, p->problem_offset, &line, &col);
		problem(c, line, col, "syntax error: %s", what);
	} else if (p->context) {
		problem(c, line, col, "syntax error: %s (%s at line %d, column %d)", what,
			p->context, (int)p->context_mark.line + 1,
			(int)p->context_mark.column + 1);
	} else {
		problem(c, line, col, "syntax error: %s", what);
	}
}

/* Attach a finished node to the open collection, or make it the root. */
static void tree_attach(struct ynode **stack, size_t depth, struct ynode **root,
			struct ynode *n)
{
	if (depth)
		node_add(stack[depth - 1], n);
	else if (!*root)
		*root = n;
	else
		node_free(n);
}

static void anchor_problem(struct ctx *c, const yaml_event_t *ev, const yaml_char_t *anchor)
{
	problem(c, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
		"anchors are not supported (&%s): write the value out", (const char *)anchor);
}

/*
 * Parse text into a tree.  Returns the root (NULL for an empty file) and
 * sets *fatal when parsing had to stop (syntax error, too deep, a second
 * document).
 */
static struct ynode *tree_parse(struct ctx *c, const char *text, size_t len, int *fatal)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct ynode *stack[KG_CONFIG_MAX_DEPTH];
	struct ynode *root = NULL, *n;
	size_t depth = 0, nodes = 0;
	int docs = 0, done = 0;

	*fatal = 0;
	if (!yaml_parser_initialize(&p)) {
		problem(c, 1, 1, "cannot start the YAML parser");
		*fatal = 1;
		return NULL;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			syntax_problem(c, &p, text, len);
			*fatal = 1;
			break;
		}
		if ((ev.type == YAML_SCALAR_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
		     ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_ALIAS_EVENT) &&
		    ++nodes > KG_CONFIG_MAX_NODES) {
			problem(c, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
				"more than %u values in one file", KG_CONFIG_MAX_NODES);
			*fatal = 1;
			yaml_event_delete(&ev);
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1) {
				problem(c, (int)ev.start_mark.line + 1,
					(int)ev.start_mark.column + 1,
					"only one YAML document is allowed");
				*fatal = 1;
				done = 1;
			}
			break;
		case YAML_ALIAS_EVENT:
			problem(c, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
				"aliases are not supported (*%s): write the value out",
				(const char *)ev.data.alias.anchor);
			tree_attach(stack, depth, &root, node_new(Y_BAD, ev.start_mark));
			break;
		case YAML_SCALAR_EVENT:
			if (ev.data.scalar.anchor)
				anchor_problem(c, &ev, ev.data.scalar.anchor);
			n = node_new(Y_SCALAR, ev.start_mark);
			n->str = xstrndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
			n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			if (strlen(n->str) != ev.data.scalar.length)
				problem(c, n->line, n->col, "NUL character in a value");
			tree_attach(stack, depth, &root, n);
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT: {
			const yaml_char_t *anchor = ev.type == YAML_SEQUENCE_START_EVENT ?
				ev.data.sequence_start.anchor : ev.data.mapping_start.anchor;
			if (anchor)
				anchor_problem(c, &ev, anchor);
			if (depth == KG_CONFIG_MAX_DEPTH) {
				problem(c, (int)ev.start_mark.line + 1,
					(int)ev.start_mark.column + 1,
					"nesting deeper than %d levels", KG_CONFIG_MAX_DEPTH);
				*fatal = 1;
				done = 1;
				break;
			}
			stack[depth++] = node_new(ev.type == YAML_SEQUENCE_START_EVENT ?
						  Y_SEQ : Y_MAP, ev.start_mark);
			break;
		}
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth) {
				n = stack[--depth];
				tree_attach(stack, depth, &root, n);
			}
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	while (depth)
		node_free(stack[--depth]);
	yaml_parser_delete(&p);
	if (*fatal) {
		node_free(root);
		return NULL;
	}
	return root;
}

/* ---- strict value parsers --------------------------------------------- */

/* digits [ . digits ]: returns the length matched, 0 if none. */
static size_t scan_decimal(const char *s)
{
	size_t i = 0;

	while (s[i] >= '0' && s[i] <= '9')
		i++;
	if (!i)
		return 0;
	if (s[i] == '.') {
		size_t j = i + 1;
		while (s[j] >= '0' && s[j] <= '9')
			j++;
		if (j == i + 1)
			return 0;
		i = j;
	}
	return i;
}

/* strtod on exactly n bytes of s that scan_decimal accepted. */
static int decimal_value(const char *s, size_t n, double *out)
{
	char *tmp = xstrndup(s, n), *end;
	double v;

	errno = 0;
	v = strtod(tmp, &end);
	free(tmp);
	if (errno == ERANGE || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int config_parse_percent(const char *s, double *out)
{
	size_t n;
	double v;

	if (!s)
		return -1;
	n = scan_decimal(s);
	if (!n || strcmp(s + n, "%") != 0)
		return -1;
	if (decimal_value(s, n, &v) < 0 || v < 0 || v > 1000)
		return -1;
	*out = v / 100.0;
	return 0;
}

int config_parse_duration(const char *s, double *out)
{
	static const struct { const char *unit; double secs; } units[] = {
		{ "ms", 0.001 }, { "s", 1 }, { "m", 60 }, { "h", 3600 }, { "d", 86400 },
	};
	size_t n, i;
	double v;

	if (!s)
		return -1;
	n = scan_decimal(s);
	if (!n)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(s + n, units[i].unit)) {
			if (decimal_value(s, n, &v) < 0 || !isfinite(v * units[i].secs))
				return -1;
			*out = v * units[i].secs;
			return 0;
		}
	}
	return -1;
}

/* A decimal integer, optional leading '-', nothing else. */
static int parse_long(const char *s, long lo, long hi, long *out)
{
	const char *d = s[0] == '-' ? s + 1 : s;
	char *end;
	long v;

	if (!*d || strspn(d, "0123456789") != strlen(d))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno == ERANGE || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* A finite real number: [-+] digits [. digits] [e [-+] digits], or .5 */
static int parse_number(const char *s, double *out)
{
	const char *q = s;
	char *end;
	double v;
	int digits = 0;

	if (*q == '-' || *q == '+')
		q++;
	while (*q >= '0' && *q <= '9')
		q++, digits++;
	if (*q == '.') {
		q++;
		while (*q >= '0' && *q <= '9')
			q++, digits++;
	}
	if (!digits)
		return -1;
	if (*q == 'e' || *q == 'E') {
		q++;
		if (*q == '-' || *q == '+')
			q++;
		if (!(*q >= '0' && *q <= '9'))
			return -1;
		while (*q >= '0' && *q <= '9')
			q++;
	}
	if (*q)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno == ERANGE || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

/* ---- schema tables ---------------------------------------------------- */

typedef void (*field_fn)(struct ctx *c, const struct ynode *key, const struct ynode *val,
			 void *obj);

/* What a key's value is, and so how one handler takes it for every key of
 * that kind (field_take). */
enum fkind {
	K_CALL,         /* fn takes it (a value of its own rules) */
	K_VERSION,      /* version: 1 */
	K_INT,          /* an int from lo to hi */
	K_LONG,         /* a long from lo to hi */
	K_BOOL,         /* true or false, as an int 1 or 0 */
	K_NUMBER,       /* a finite double */
	K_PERCENT,      /* "3%" as the double 0.03 */
	K_STRING,       /* a non-empty malloc'd char * (replacing the one there) */
	K_ENUM,         /* one of choices' names, stored as its value in an int
			 * or an enum the size of an int */
};

struct choices {
	const char *const *names;
	size_t n;
	const int *values;      /* names[i] is stored as values[i] */
};

struct field {
	const char *name;
	enum ykind type;        /* Y_SCALAR, Y_SEQ or Y_MAP */
	int required;
	enum fkind kind;
	size_t off;             /* where the value goes in the object (not K_CALL) */
	size_t has;             /* 1 + where an int set to 1 once a value is taken
				 * is; 0: none */
	long lo, hi;            /* K_INT, K_LONG */
	const struct choices *choices; /* K_ENUM */
	field_fn fn;            /* K_CALL */
};

#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

/* offsetof(T, m), and a compile error when T's member m is not of type
 * type (distinct pointer types compared). */
#define MEMBER(T, m, type) (offsetof(T, m) + 0 * sizeof(&((T *)0)->m == (type *)0))
/* offsetof(T, m), and a compile error when T's member m is not an int's size. */
#define INT_SIZED(T, m) \
	(offsetof(T, m) + 0 * sizeof(char[sizeof(((T *)0)->m) == sizeof(int) ? 1 : -1]))

/* The table's rows: key name, required, where in T it goes (and where the
 * flag that says it was given is), and the kind's limits. */
/* A K_ENUM's names and values, as many of each (else a compile error). */
#define CHOICES(names, values) \
	{ names, NFIELDS(names) + 0 * sizeof(char[NFIELDS(names) == NFIELDS(values) ? 1 : -1]), values }
#define F_CALL(n, type, req, f) { n, type, req, K_CALL, 0, 0, 0, 0, NULL, f }
#define F_VERSION() { "version", Y_SCALAR, 1, K_VERSION, 0, 0, 0, 0, NULL, NULL }
#define F_INT(T, n, m, l, h) { n, Y_SCALAR, 0, K_INT, MEMBER(T, m, int), 0, l, h, NULL, NULL }
#define F_INT_HAS(T, n, m, has, l, h) \
	{ n, Y_SCALAR, 0, K_INT, MEMBER(T, m, int), 1 + MEMBER(T, has, int), l, h, NULL, NULL }
#define F_LONG(T, n, m, l, h) { n, Y_SCALAR, 0, K_LONG, MEMBER(T, m, long), 0, l, h, NULL, NULL }
#define F_BOOL(T, n, m) { n, Y_SCALAR, 0, K_BOOL, MEMBER(T, m, int), 0, 0, 0, NULL, NULL }
#define F_NUMBER(T, n, m, has) \
	{ n, Y_SCALAR, 0, K_NUMBER, MEMBER(T, m, double), 1 + MEMBER(T, has, int), 0, 0, NULL, NULL }
#define F_PERCENT(T, n, m, has) \
	{ n, Y_SCALAR, 0, K_PERCENT, MEMBER(T, m, double), 1 + MEMBER(T, has, int), 0, 0, NULL, NULL }
#define F_STRING(T, n, m) { n, Y_SCALAR, 0, K_STRING, MEMBER(T, m, char *), 0, 0, 0, NULL, NULL }
#define F_ENUM(T, n, m, ch) { n, Y_SCALAR, 0, K_ENUM, INT_SIZED(T, m), 0, 0, 0, &ch, NULL }

static void field_take(struct ctx *c, const struct field *f, const struct ynode *key,
		       const struct ynode *val, void *obj);

static const char *kind_name(enum ykind k)
{
	switch (k) {
	case Y_SCALAR: return "a single value";
	case Y_SEQ: return "a list";
	case Y_MAP: return "a mapping";
	default: return "a value";
	}
}

struct keyref {
	const struct ynode *key;
	size_t idx;
};

static int keyref_cmp(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	int r = strcmp(x->key->str, y->key->str);

	if (r)
		return r;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Report keys of a mapping that are not scalars, and the second and later
 * copies of any key; dup[i] is set for the pair index i to skip.
 */
static unsigned char *map_check_keys(struct ctx *c, const struct ynode *map)
{
	size_t npairs = map->n / 2, i, k = 0;
	struct keyref *refs = xcalloc(npairs, sizeof(*refs));
	unsigned char *skip = xcalloc(npairs, 1);

	for (i = 0; i < npairs; i++) {
		const struct ynode *key = map->items[2 * i];
		if (key->kind != Y_SCALAR) {
			if (key->kind != Y_BAD)
				problem(c, key->line, key->col, "a key must be a single value, not %s",
					kind_name(key->kind));
			skip[i] = 1;
			continue;
		}
		refs[k].key = key;
		refs[k].idx = i;
		k++;
	}
	qsort(refs, k, sizeof(*refs), keyref_cmp);
	for (i = 1; i < k; i++) {
		size_t first = i - 1;
		while (i < k && !strcmp(refs[i].key->str, refs[first].key->str)) {
			problem(c, refs[i].key->line, refs[i].key->col,
				"duplicate key '%s' (first given at line %d)", refs[i].key->str,
				refs[first].key->line);
			skip[refs[i].idx] = 1;
			i++;
		}
	}
	free(refs);
	return skip;
}

static int expect_kind(struct ctx *c, const struct ynode *key, const struct ynode *val,
		       enum ykind want)
{
	if (val->kind == want)
		return 1;
	if (val->kind != Y_BAD)
		problem(c, val->line, val->col, "'%s' must be %s", key ? key->str : "value",
			kind_name(want));
	return 0;
}

/* Walk a mapping through a schema table. */
static void walk_map(struct ctx *c, const struct ynode *map, const struct field *f, size_t nf,
		     void *obj)
{
	size_t i, j, npairs = map->n / 2;
	unsigned char *skip = map_check_keys(c, map);
	unsigned char *seen = xcalloc(nf, 1);
	const char **names = xcalloc(nf, sizeof(*names));

	for (j = 0; j < nf; j++)
		names[j] = f[j].name;
	for (i = 0; i < npairs; i++) {
		const struct ynode *key = map->items[2 * i], *val = map->items[2 * i + 1];
		if (skip[i])
			continue;
		for (j = 0; j < nf; j++)
			if (!strcmp(key->str, f[j].name))
				break;
		if (j == nf) {
			const char *s = kg_suggest_close(key->str, names, nf);
			if (s) {
				problem(c, key->line, key->col, "unknown key '%s'; did you mean '%s'?",
					key->str, s);
			} else {
				struct kg_buf b = KG_BUF_INIT;
				for (j = 0; j < nf; j++)
					buf_printf(&b, "%s%s", j ? ", " : "", f[j].name);
				problem(c, key->line, key->col, "unknown key '%s' (valid keys: %s)",
					key->str, b.s);
				buf_free(&b);
			}
			continue;
		}
		seen[j] = 1;
		if (expect_kind(c, key, val, f[j].type))
			field_take(c, &f[j], key, val, obj);
	}
	for (j = 0; j < nf; j++)
		if (f[j].required && !seen[j])
			problem(c, map->line, map->col, "missing required key '%s'", f[j].name);
	free(names);
	free(seen);
	free(skip);
}


/* ---- shared value handlers -------------------------------------------- */

static int get_long(struct ctx *c, const struct ynode *key, const struct ynode *val, long lo,
		    long hi, long *out)
{
	if (parse_long(val->str, lo, hi, out) == 0)
		return 0;
	if (hi == LONG_MAX)
		problem(c, val->line, val->col, "'%s' must be an integer of at least %ld, got '%s'",
			key->str, lo, val->str);
	else
		problem(c, val->line, val->col, "'%s' must be an integer from %ld to %ld, got '%s'",
			key->str, lo, hi, val->str);
	return -1;
}

static int get_int(struct ctx *c, const struct ynode *key, const struct ynode *val, int lo,
		   int hi, int *out)
{
	long v;

	if (get_long(c, key, val, lo, hi, &v) < 0)
		return -1;
	*out = (int)v;
	return 0;
}

static void get_version(struct ctx *c, const struct ynode *key, const struct ynode *val)
{
	long v;

	if (parse_long(val->str, 0, LONG_MAX, &v) < 0)
		problem(c, val->line, val->col, "'version' must be an integer, got '%s'",
			val->str);
	else if (v != 1)
		problem(c, val->line, val->col,
			"unknown version %ld (this kgate reads version 1)", v);
}

static int get_enum(struct ctx *c, const struct ynode *key, const struct ynode *val,
		    const char *const *choices, size_t n, int *out)
{
	struct kg_buf b = KG_BUF_INIT;
	const char *s;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcmp(val->str, choices[i])) {
			*out = (int)i;
			return 0;
		}
	}
	for (i = 0; i < n; i++)
		buf_printf(&b, "%s%s", i ? (i + 1 == n ? " or " : ", ") : "", choices[i]);
	s = kg_suggest_close(val->str, choices, n);
	if (s)
		problem(c, val->line, val->col, "'%s' must be %s, got '%s'; did you mean '%s'?",
			key->str, b.s, val->str, s);
	else
		problem(c, val->line, val->col, "'%s' must be %s, got '%s'", key->str, b.s,
			val->str);
	buf_free(&b);
	return -1;
}

static int get_percent(struct ctx *c, const struct ynode *key, const struct ynode *val,
		       double *out)
{
	if (config_parse_percent(val->str, out) == 0)
		return 0;
	problem(c, val->line, val->col,
		"'%s' must be a percentage from 0%% to 1000%% such as 3%% or 0.5%%, got '%s'",
		key->str, val->str);
	return -1;
}

static int get_string(struct ctx *c, const struct ynode *key, const struct ynode *val,
		      char **out)
{
	if (!val->str[0] || node_is_null(val)) {
		problem(c, val->line, val->col, "'%s' must not be empty", key->str);
		return -1;
	}
	free(*out);
	*out = xstrdup(val->str);
	return 0;
}

static int get_bool(struct ctx *c, const struct ynode *key, const struct ynode *val, int *out)
{
	if (!strcmp(val->str, "true"))
		*out = 1;
	else if (!strcmp(val->str, "false"))
		*out = 0;
	else {
		problem(c, val->line, val->col, "'%s' must be true or false, got '%s'", key->str,
			val->str);
		return -1;
	}
	return 0;
}

static int get_number(struct ctx *c, const struct ynode *key, const struct ynode *val,
		      double *out)
{
	if (parse_number(val->str, out) == 0)
		return 0;
	problem(c, val->line, val->col, "'%s' must be a number, got '%s'", key->str, val->str);
	return -1;
}

/* Take a key's value into obj as the schema row f says. */
static void field_take(struct ctx *c, const struct field *f, const struct ynode *key,
		       const struct ynode *val, void *obj)
{
	void *at = (char *)obj + f->off;
	int rc = -1, i;

	switch (f->kind) {
	case K_CALL:
		f->fn(c, key, val, obj);
		return;
	case K_VERSION:
		get_version(c, key, val);
		return;
	case K_INT:
		rc = get_int(c, key, val, (int)f->lo, (int)f->hi, at);
		break;
	case K_LONG:
		rc = get_long(c, key, val, f->lo, f->hi, at);
		break;
	case K_BOOL:
		rc = get_bool(c, key, val, at);
		break;
	case K_NUMBER:
		rc = get_number(c, key, val, at);
		break;
	case K_PERCENT:
		rc = get_percent(c, key, val, at);
		break;
	case K_STRING:
		rc = get_string(c, key, val, at);
		break;
	case K_ENUM:
		if ((rc = get_enum(c, key, val, f->choices->names, f->choices->n, &i)) == 0)
			*(int *)at = f->choices->values[i];
		break;
	}
	if (rc == 0 && f->has)
		*(int *)(void *)((char *)obj + f->has - 1) = 1;
}

/* The ']' that closes the bracket expression opening at s ('['), past
 * "[]...]", "[^]...]" and the [:class:], [.coll.] and [=equiv=] inside it;
 * the string's end when it is not closed. */
static const char *regex_bracket_end(const char *s)
{
	s++;
	if (*s == '^')
		s++;
	if (*s == ']')
		s++;
	while (*s && *s != ']') {
		if (*s == '[' && (s[1] == ':' || s[1] == '.' || s[1] == '=')) {
			const char *e = strchr(s + 2, s[1]);
			while (e && e[1] != ']')
				e = strchr(e + 1, s[1]);
			if (e)
				s = e + 1;
		}
		s++;
	}
	return s;
}

/*
 * An upper bound on the atoms of an extended regular expression once its
 * intervals are expanded: regcomp(3) copies a repeated atom once per count,
 * so nested intervals multiply, and "((a{1,100}){1,100}){1,100}" (a million
 * copies) takes seconds and a gigabyte to compile.  Alternatives and groups
 * add up, brackets and escapes count one.
 */
#define REGEX_MAX_ATOMS 10000.0

static double regex_atoms(const char *s)
{
	double saved[KG_CONFIG_MAX_DEPTH], seq = 0, last = 0;
	size_t depth = 0;

	while (*s) {
		double atom = 1;
		if (*s == '\\') {
			s += s[1] ? 2 : 1;
		} else if (*s == '[') {
			s = regex_bracket_end(s);
			if (*s)
				s++;
		} else if (*s == '(') {
			if (depth == KG_CONFIG_MAX_DEPTH)
				return INFINITY;
			saved[depth++] = seq;
			seq = last = 0;
			s++;
			continue;
		} else if (*s == ')' && depth) {
			atom = seq > 1 ? seq : 1;
			seq = saved[--depth];
			s++;
		} else if (*s == '{' && s[1] >= '0' && s[1] <= '9') {
			char *e;
			double lo = (double)strtoul(s + 1, &e, 10), hi = lo;
			if (*e == ',')
				hi = e[1] == '}' ? lo + 1 : (double)strtoul(e + 1, &e, 10);
			if (*e == ',')
				e++;
			s = *e == '}' ? e + 1 : s + 1;
			seq += last * ((hi > 1 ? hi : 1) - 1);
			last *= hi > 1 ? hi : 1;
			continue;
		} else if (*s == '+') {
			seq += last;
			s++;
			continue;
		} else if (*s == '*' || *s == '?' || *s == '|' || *s == '^' || *s == '$') {
			s++;
			continue;
		} else {
			s++;
		}
		seq += atom;
		last = atom;
	}
	while (depth)
		seq += saved[--depth];
	return seq;
}

/*
 * A backreference (\1 to \9 outside a bracket expression; glibc accepts them
 * in extended expressions) makes matching exponential: "(a*)*\1" style
 * patterns took 72 s on a 61-byte kernel name.  Kernel matching has no use
 * for them.  Returns the backreference's offset, or -1.
 */
static long regex_backref(const char *re)
{
	for (const char *s = re; *s; s++) {
		if (*s == '\\') {
			if (s[1] >= '1' && s[1] <= '9')
				return s - re;
			if (s[1])
				s++;
		} else if (*s == '[') {
			s = regex_bracket_end(s);
			if (!*s)
				break;
		}
	}
	return -1;
}

/* "regex:..." must compile; report regcomp's message when it does not. */
static int check_regex(struct ctx *c, const struct ynode *val, regex_t *re)
{
	regex_t tmp;
	int rc;

	if (!val->str[6]) {
		problem(c, val->line, val->col, "empty regular expression after 'regex:'");
		return -1;
	}
	long br = regex_backref(val->str + 6);
	if (br >= 0) {
		problem(c, val->line, val->col,
			"regular expression '%s' has a backreference ('\\%c'): not supported "
			"(matching with one can take minutes)", val->str + 6, val->str[6 + br + 1]);
		return -1;
	}
	if (regex_atoms(val->str + 6) > REGEX_MAX_ATOMS) {
		problem(c, val->line, val->col,
			"regular expression '%s' is too large: its repetitions expand it to "
			"more than %.0f atoms", val->str + 6, REGEX_MAX_ATOMS);
		return -1;
	}
	if (!re)
		re = &tmp;
	rc = regcomp(re, val->str + 6, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char msg[256];
		regerror(rc, re, msg, sizeof(msg));
		problem(c, val->line, val->col, "invalid regular expression '%s': %s",
			val->str + 6, msg);
		return -1;
	}
	if (re == &tmp)
		regfree(&tmp);
	return 0;
}

static int is_regex(const char *s)
{
	return !strncmp(s, "regex:", 6);
}

/* ---- metric names ----------------------------------------------------- */

static int in_list(const char *name, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; list && i < n; i++)
		if (!strcmp(name, list[i]))
			return 1;
	return 0;
}

static size_t derived_count(void)
{
	size_t n = 0;

	while (metricinfo_derived[n])
		n++;
	return n;
}

static int grammar_ok(struct ctx *c, const char *name)
{
	if (!c->grammar_ready) {
		if (regcomp(&c->grammar, METRIC_GRAMMAR, REG_EXTENDED | REG_NOSUB) != 0)
			return 0;
		c->grammar_ready = 1;
	}
	return regexec(&c->grammar, name, 0, NULL, 0) == 0;
}

/* 1 when the metric name is acceptable; reports it otherwise. */
static int check_metric(struct ctx *c, const struct ynode *n)
{
	struct kg_buf err = KG_BUF_INIT;
	const char *const *names = NULL;
	size_t nnames = 0, nd = derived_count();
	const char *dot, *sugg = NULL;
	char *base;
	int v;

	if (in_list(n->str, metricinfo_derived, nd) || metric_imported(n->str))
		return 1;
	/* The built-in thresholds name well-known metrics (the unit tests check
	 * them against the host API's list); loading CUPTI's metric tables for
	 * them would cost every check about 100 MB and 80 ms.  Names confirmed
	 * once are known from the collector's cache file from then on. */
	v = c->trusted ? -1 : metricinfo_known(METRIC_CHIP, n->str) ? 1
	    : metricinfo_valid(METRIC_CHIP, n->str, &err);
	if (v == 1) {
		buf_free(&err);
		return 1;
	}
	if (v < 0) {
		/* The collector cannot tell: accept what looks like a metric name. */
		buf_free(&err);
		if (grammar_ok(c, n->str))
			return 1;
		problem(c, n->line, n->col,
			"'%s' is not a metric name (expected unit__name.rollup, such as "
			"gpu__time_duration.sum)", n->str);
		return 0;
	}
	buf_reset(&err);
	dot = strchr(n->str, '.');
	base = dot ? xstrndup(n->str, (size_t)(dot - n->str)) : xstrdup(n->str);
	if (metricinfo_names(METRIC_CHIP, &names, &nnames, &err) < 0) {
		names = NULL;
		nnames = 0;
	}
	if (dot && in_list(base, names, nnames)) {
		problem(c, n->line, n->col,
			"unknown metric '%s': '%s' has no rollup or submetric '%s'", n->str,
			base, dot);
	} else {
		const char **cand = xcalloc(nnames + nd + 1, sizeof(*cand));
		size_t i, k = 0;
		for (i = 0; i < nnames; i++)
			cand[k++] = names[i];
		sugg = kg_suggest_close(base, cand, k);
		if (sugg && dot) {
			problem(c, n->line, n->col, "unknown metric '%s'; did you mean '%s%s'?",
				n->str, sugg, dot);
		} else {
			k = 0;
			for (i = 0; i < nd; i++)
				cand[k++] = metricinfo_derived[i];
			for (i = 0; i < nnames; i++)
				cand[k++] = names[i];
			sugg = kg_suggest_close(n->str, cand, k);
			if (sugg)
				problem(c, n->line, n->col, "unknown metric '%s'; did you mean '%s'?",
					n->str, sugg);
			else
				problem(c, n->line, n->col, "unknown metric '%s' on %s", n->str,
					METRIC_CHIP);
		}
		free(cand);
	}
	free(base);
	buf_free(&err);
	return 0;
}

/* ---- thresholds ------------------------------------------------------- */

static const char *const better_names[] = { "lower", "higher", "unchanged" };
static const int better_values[] = { KG_BETTER_LOWER, KG_BETTER_HIGHER, KG_BETTER_UNCHANGED };
static const struct choices better_choices = CHOICES(better_names, better_values);
static const char *const on_change_names[] = { "report", "fail" };
static const int on_change_values[] = { KG_ON_CHANGE_REPORT, KG_ON_CHANGE_FAIL };
static const struct choices on_change_choices = CHOICES(on_change_names, on_change_values);

#define MR struct kg_metric_rule
static const struct field metric_fields[] = {
	F_PERCENT(MR, "regression", regression, has_regression),
	F_NUMBER(MR, "min", min, has_min),
	F_NUMBER(MR, "max", max, has_max),
	F_BOOL(MR, "deterministic", deterministic),
	F_PERCENT(MR, "tolerance", tolerance, has_tolerance),
	F_ENUM(MR, "better", better, better_choices),
	F_ENUM(MR, "on_change", on_change, on_change_choices),
};
#undef MR


static void metric_rule_free(struct kg_metric_rule *r)
{
	free(r->metric);
}

/* A mapping of metric name -> limits, into a fresh array. */
/*
 * in_defaults: tolerance needs deterministic: true in the same entry; in a
 * rule it may refine a deterministic metric of the defaults, so only an
 * explicit deterministic: false conflicts with it.
 */
static void parse_metric_map(struct ctx *c, const struct ynode *map, int in_defaults,
			     struct kg_metric_rule **out, size_t *nout)
{
	size_t i, npairs = map->n / 2;
	unsigned char *skip = map_check_keys(c, map);
	struct kg_metric_rule *rules = xcalloc(npairs, sizeof(*rules));
	size_t k = 0;

	for (i = 0; i < npairs; i++) {
		const struct ynode *key = map->items[2 * i], *val = map->items[2 * i + 1];
		struct kg_metric_rule *r = &rules[k];
		if (skip[i])
			continue;
		check_metric(c, key);
		if (val->kind != Y_MAP) {
			if (val->kind != Y_BAD)
				problem(c, val->line, val->col,
					"the limits of '%s' must be a mapping such as "
					"{ regression: 3%% }", key->str);
			continue;
		}
		memset(r, 0, sizeof(*r));
		r->deterministic = -1;
		r->metric = xstrdup(key->str);
		r->line = key->line;
		r->column = key->col;
		walk_map(c, val, metric_fields, NFIELDS(metric_fields), r);
		if (r->has_min && r->has_max && r->min > r->max)
			problem(c, val->line, val->col, "'min' (%g) is greater than 'max' (%g)",
				r->min, r->max);
		if (r->has_tolerance && (in_defaults ? r->deterministic != 1 : r->deterministic == 0))
			problem(c, val->line, val->col,
				"'tolerance' applies only with deterministic: true");
		if (r->on_change && (in_defaults ? r->deterministic != 1 : r->deterministic == 0))
			problem(c, val->line, val->col,
				"'on_change' applies only with deterministic: true");
		k++;
	}
	free(skip);
	*out = rules;
	*nout = k;
}


static void st_alpha(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_thresholds *t = o;
	double a;

	if (parse_number(v->str, &a) == 0 && a > 0 && a <= 0.5)
		t->alpha = a;
	else
		problem(c, v->line, v->col,
			"'alpha' must be a number greater than 0 and at most 0.5, got '%s'",
			v->str);
}


#define TH struct kg_thresholds
static const struct field statistics_fields[] = {
	F_CALL("alpha", Y_SCALAR, 0, st_alpha),
	F_BOOL(TH, "pool_ranks", pool_ranks),
	F_INT(TH, "min_samples", min_samples, 3, 1000000),
	F_INT(TH, "baseline_runs", baseline_runs, 1, 10000),
};
#undef TH

static void th_statistics(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	walk_map(c, v, statistics_fields, NFIELDS(statistics_fields), o);
}

static void th_defaults(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_thresholds *t = o;

	parse_metric_map(c, v, 1, &t->defaults, &t->n_defaults);
}


static void ma_kernel(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_match *m = o;

	if (get_string(c, k, v, &m->kernel) < 0)
		return;
	if (is_regex(v->str)) {
		if (check_regex(c, v, &m->kernel_re) == 0)
			m->kernel_is_regex = 1;
	}
}


#define MA struct kg_match
static const struct field match_fields[] = {
	F_STRING(MA, "benchmark", benchmark),
	F_CALL("kernel", Y_SCALAR, 0, ma_kernel),
	F_STRING(MA, "nvtx", nvtx),
	F_INT_HAS(MA, "rank", rank, has_rank, 0, 1 << 24),
};
#undef MA

static void ru_match(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_rule *r = o;

	walk_map(c, v, match_fields, NFIELDS(match_fields), &r->match);
}

static void ru_metrics(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_rule *r = o;

	parse_metric_map(c, v, 0, &r->metrics, &r->n_metrics);
}

static const struct field rule_fields[] = {
	F_CALL("match", Y_MAP, 1, ru_match),
	F_CALL("metrics", Y_MAP, 1, ru_metrics),
};

static void match_free(struct kg_match *m)
{
	free(m->benchmark);
	free(m->kernel);
	if (m->kernel_is_regex)
		regfree(&m->kernel_re);
	free(m->nvtx);
}

static void rule_free(struct kg_rule *r)
{
	size_t i;

	match_free(&r->match);
	for (i = 0; i < r->n_metrics; i++)
		metric_rule_free(&r->metrics[i]);
	free(r->metrics);
}

static void th_rules(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_thresholds *t = o;
	size_t i;

	t->rules = xcalloc(v->n, sizeof(*t->rules));
	for (i = 0; i < v->n; i++) {
		const struct ynode *it = v->items[i];
		struct kg_rule *r = &t->rules[t->n_rules];
		if (it->kind != Y_MAP) {
			if (it->kind != Y_BAD)
				problem(c, it->line, it->col,
					"a rule must be a mapping with 'match' and 'metrics'");
			continue;
		}
		r->line = it->line;
		r->column = it->col;
		walk_map(c, it, rule_fields, NFIELDS(rule_fields), r);
		t->n_rules++;
	}
}

static void th_ignore(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_thresholds *t = o;
	size_t i;

	t->ignore = xcalloc(v->n ? v->n : 1, sizeof(*t->ignore));
	for (i = 0; i < v->n; i++) {
		const struct ynode *it = v->items[i];
		struct kg_ignore *g = &t->ignore[t->n_ignore];
		if (it->kind != Y_MAP) {
			if (it->kind != Y_BAD)
				problem(c, it->line, it->col,
					"an ignore entry must be a mapping of benchmark, kernel and"
					" nvtx, such as { nvtx: \"warmup*\" }");
			continue;
		}
		g->line = it->line;
		g->column = it->col;
		walk_map(c, it, match_fields, NFIELDS(match_fields), &g->match);
		t->n_ignore++;
		if (!g->match.benchmark && !g->match.kernel && !g->match.nvtx && !g->match.has_rank)
			problem(c, it->line, it->col,
				"an ignore entry must give benchmark, kernel, nvtx or rank (an empty"
				" one would ignore everything)");
	}
}


static const char *const policy_names[] = { "ignore", "warn", "fail" };
static const int policy_values[] = { KG_POLICY_IGNORE, KG_POLICY_WARN, KG_POLICY_FAIL };
static const struct choices policy_choices = CHOICES(policy_names, policy_values);
static const char *const on_no_baseline_names[] = { "fail", "warn" };
static const int on_no_baseline_values[] = { KG_POLICY_FAIL, KG_POLICY_WARN };
static const struct choices on_no_baseline_choices =
	CHOICES(on_no_baseline_names, on_no_baseline_values);
static const char *const name_base_names[] = { "function", "demangled", "mangled" };
static const int name_base_values[] = { KG_NAME_FUNCTION, KG_NAME_DEMANGLED, KG_NAME_MANGLED };
static const struct choices name_base_choices = CHOICES(name_base_names, name_base_values);

#define TH struct kg_thresholds
static const struct field thresholds_fields[] = {
	F_VERSION(),
	F_CALL("statistics", Y_MAP, 0, th_statistics),
	F_CALL("defaults", Y_MAP, 0, th_defaults),
	F_CALL("rules", Y_SEQ, 0, th_rules),
	F_CALL("ignore", Y_SEQ, 0, th_ignore),
	F_ENUM(TH, "on_new_kernel", on_new_kernel, policy_choices),
	F_ENUM(TH, "on_missing_kernel", on_missing_kernel, policy_choices),
	F_ENUM(TH, "on_inconclusive", on_inconclusive, policy_choices),
	F_ENUM(TH, "on_no_baseline", on_no_baseline, on_no_baseline_choices),
	F_ENUM(TH, "on_ungated_metric", on_ungated_metric, policy_choices),
	F_ENUM(TH, "kernel_name_base", name_base, name_base_choices),
};
#undef TH

void config_free_thresholds(struct kg_thresholds *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n_defaults; i++)
		metric_rule_free(&t->defaults[i]);
	free(t->defaults);
	for (i = 0; i < t->n_rules; i++)
		rule_free(&t->rules[i]);
	free(t->rules);
	for (i = 0; i < t->n_ignore; i++)
		match_free(&t->ignore[i].match);
	free(t->ignore);
	free(t->path);
	free(t);
}

/* The root must be a mapping; an empty file is reported as such. */
static int root_ok(struct ctx *c, const struct ynode *root, const char *what)
{
	if (!root || node_is_null(root)) {
		problem(c, 1, 1, "the file is empty (expected a %s mapping)", what);
		return 0;
	}
	if (root->kind != Y_MAP) {
		problem(c, root->line, root->col, "the top level must be a mapping (of %s keys)",
			what);
		return 0;
	}
	return 1;
}

static int size_ok(struct ctx *c, size_t len)
{
	if (len <= KG_CONFIG_MAX_BYTES)
		return 1;
	problem(c, 1, 1, "the file is larger than %u MiB", KG_CONFIG_MAX_BYTES >> 20);
	return 0;
}

/* Parse one file's text into obj through the schema f: the number of
 * problems found (said in errs). */
static size_t parse_file(struct ctx *c, const char *text, size_t len, const struct field *f,
			 size_t nf, void *obj, const char *what, struct kg_buf *errs)
{
	struct ynode *root = NULL;
	int fatal = 0;

	if (size_ok(c, len))
		root = tree_parse(c, text, len, &fatal);
	else
		fatal = 1;
	if (!fatal && root && root->kind == Y_MAP)
		walk_map(c, root, f, nf, obj);
	else if (!fatal)
		root_ok(c, root, what);
	node_free(root);
	return ctx_finish(c, errs);
}

static int parse_thresholds(const char *name, const char *text, size_t len, int trusted,
			    struct kg_thresholds **out, struct kg_buf *errs)
{
	struct ctx c = { 0 };
	struct kg_thresholds *t = xcalloc(1, sizeof(*t));

	c.file = name;
	c.trusted = trusted;
	*out = NULL;
	t->path = xstrdup(name);
	t->alpha = 0.001;
	t->min_samples = 7;
	t->baseline_runs = 5;
	t->on_new_kernel = KG_POLICY_WARN;
	t->on_missing_kernel = KG_POLICY_FAIL;
	t->on_inconclusive = KG_POLICY_WARN;
	t->on_no_baseline = KG_POLICY_WARN;
	t->on_ungated_metric = KG_POLICY_WARN;
	if (parse_file(&c, text, len, thresholds_fields, NFIELDS(thresholds_fields), t, "thresholds",
		       errs)) {
		config_free_thresholds(t);
		return KG_EXIT_USAGE;
	}
	*out = t;
	return KG_EXIT_PASS;
}

int config_parse_thresholds(const char *name, const char *text, size_t len,
			    struct kg_thresholds **out, struct kg_buf *errs)
{
	return parse_thresholds(name, text, len, 0, out, errs);
}

const char *config_default_thresholds_text(size_t *len)
{
	if (len)
		*len = (size_t)(kg_default_yaml_end - kg_default_yaml_begin);
	return kg_default_yaml_begin;
}

struct kg_thresholds *config_default_thresholds(void)
{
	struct kg_buf errs = KG_BUF_INIT;
	struct kg_thresholds *t = NULL;
	size_t len;
	const char *text = config_default_thresholds_text(&len);

	if (parse_thresholds("(built-in thresholds)", text, len, 1, &t, &errs) != 0) {
		/* Only a broken build gets here: the test suite parses the same text. */
		fputs(errs.s ? errs.s : "", stderr);
		kg_error("the built-in thresholds do not parse");
		buf_free(&errs);
		exit(KG_EXIT_RUNTIME);
	}
	buf_free(&errs);
	return t;
}

/* ---- rule lookup ------------------------------------------------------ */

/* Does the rule's kernel (an exact name or a regex) fit name? */
static int kernel_fits(const struct kg_match *m, const char *name)
{
	if (!name)
		return 0;
	return m->kernel_is_regex ? regexec(&m->kernel_re, name, 0, NULL, 0) == 0
				  : !strcmp(m->kernel, name);
}

static int match_fits(const struct kg_match *m, enum kg_name_base nb, const char *benchmark,
		      const char *nvtx, const char *kernel, const char *demangled, int rank)
{
	if (m->has_rank && m->rank != rank)
		return 0;
	if (m->benchmark && (!benchmark || strcmp(m->benchmark, benchmark)))
		return 0;
	if (m->kernel && nb != KG_NAME_ANY) {
		/* the one name kernel_name_base says (a mangled key's demangled
		 * form, and the function's base name of that) */
		char *base = NULL;
		const char *name = nb == KG_NAME_MANGLED ? kernel : demangled ? demangled : kernel;
		if (nb == KG_NAME_MANGLED && kernel && !(kernel[0] == '_' && kernel[1] == 'Z'))
			name = NULL;    /* the source gave no mangled name */
		if (nb == KG_NAME_FUNCTION && name)
			name = base = demangle_base(name);
		int fits = kernel_fits(m, name);
		free(base);
		if (!fits)
			return 0;
	} else if (m->kernel) {
		if (m->kernel_is_regex) {
			if (!(kernel && regexec(&m->kernel_re, kernel, 0, NULL, 0) == 0) &&
			    !(demangled && regexec(&m->kernel_re, demangled, 0, NULL, 0) == 0))
				return 0;
		} else if (!(kernel && !strcmp(m->kernel, kernel)) &&
			   !(demangled && !strcmp(m->kernel, demangled))) {
			return 0;
		}
	}
	if (m->nvtx && fnmatch(m->nvtx, nvtx ? nvtx : "", 0) != 0)
		return 0;
	return 1;
}

static void overlay(struct kg_metric_rule *out, const struct kg_metric_rule *r)
{
	out->metric = r->metric;
	out->line = r->line;
	out->column = r->column;
	if (r->has_regression) {
		out->has_regression = 1;
		out->regression = r->regression;
	}
	if (r->has_min) {
		out->has_min = 1;
		out->min = r->min;
	}
	if (r->has_max) {
		out->has_max = 1;
		out->max = r->max;
	}
	if (r->deterministic >= 0)
		out->deterministic = r->deterministic;
	if (r->has_tolerance) {
		out->has_tolerance = 1;
		out->tolerance = r->tolerance;
	}
	if (r->better)
		out->better = r->better;
	if (r->on_change)
		out->on_change = r->on_change;
}

int config_ignored(const struct kg_thresholds *t, const char *benchmark, const char *nvtx,
		   const char *kernel, const char *demangled, int rank)
{
	for (size_t i = 0; i < t->n_ignore; i++)
		if (match_fits(&t->ignore[i].match, t->name_base, benchmark, nvtx, kernel, demangled,
			       rank))
			return 1;
	return 0;
}

int config_rule_for(const struct kg_thresholds *t, const char *benchmark,
		    const char *nvtx, const char *kernel, const char *demangled,
		    const char *metric, struct kg_metric_rule *out)
{
	return config_rule_for_rank(t, benchmark, nvtx, kernel, demangled, -1, metric, out);
}

int config_rule_for_rank(const struct kg_thresholds *t, const char *benchmark,
			 const char *nvtx, const char *kernel, const char *demangled, int rank,
			 const char *metric, struct kg_metric_rule *out)
{
	size_t i, j;

	memset(out, 0, sizeof(*out));
	out->deterministic = -1;
	if (config_ignored(t, benchmark, nvtx, kernel, demangled, rank))
		return 0;
	for (i = 0; i < t->n_defaults; i++)
		if (!strcmp(t->defaults[i].metric, metric))
			overlay(out, &t->defaults[i]);
	for (i = 0; i < t->n_rules; i++) {
		const struct kg_rule *r = &t->rules[i];
		/* The metric first: a cheap test that spares most regexec calls. */
		for (j = 0; j < r->n_metrics; j++)
			if (!strcmp(r->metrics[j].metric, metric))
				break;
		if (j < r->n_metrics &&
		    match_fits(&r->match, t->name_base, benchmark, nvtx, kernel, demangled, rank))
			overlay(out, &r->metrics[j]);
	}
	return out->has_regression || out->has_min || out->has_max || out->deterministic == 1;
}

/* ---- suite ------------------------------------------------------------ */


/* dir + "/" + p, unless p is absolute or dir is "." */
static char *path_resolve(const char *dir, const char *p)
{
	if (p[0] == '/' || !strcmp(dir, "."))
		return xstrdup(p);
	return xasprintf("%s/%s", dir, p);
}

static void su_thresholds(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_suite *s = o;

	if (!v->str[0] || node_is_null(v)) {
		problem(c, v->line, v->col, "'thresholds' must not be empty");
		return;
	}
	free(s->thresholds);
	s->thresholds = path_resolve(s->dir, v->str);
}

static void co_metrics(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_collector_cfg *cc = o;
	struct keyref *refs;
	unsigned char *dup;
	size_t i, nref = 0;

	if (!v->n) {
		problem(c, v->line, v->col, "'metrics' must not be empty");
		return;
	}
	refs = xcalloc(v->n, sizeof(*refs));
	dup = xcalloc(v->n, 1);
	for (i = 0; i < v->n; i++) {
		const struct ynode *it = v->items[i];
		if (it->kind != Y_SCALAR) {
			if (it->kind != Y_BAD)
				problem(c, it->line, it->col, "a metric name must be a single value");
			dup[i] = 1;
			continue;
		}
		if (!check_metric(c, it)) {
			dup[i] = 1;
			continue;
		}
		refs[nref].key = it;
		refs[nref].idx = i;
		nref++;
	}
	/* Sorted by name, then position: the second and later copies are reported. */
	qsort(refs, nref, sizeof(*refs), keyref_cmp);
	for (i = 1; i < nref; i++) {
		if (!strcmp(refs[i].key->str, refs[i - 1].key->str)) {
			problem(c, refs[i].key->line, refs[i].key->col,
				"metric '%s' is listed twice", refs[i].key->str);
			dup[refs[i].idx] = 1;
		}
	}
	cc->metrics = xcalloc(v->n + 1, sizeof(*cc->metrics));
	for (i = 0; i < v->n; i++)
		if (!dup[i])
			cc->metrics[cc->n_metrics++] = xstrdup(v->items[i]->str);
	free(dup);
	free(refs);
}

static void co_kernels(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_collector_cfg *cc = o;

	if (get_string(c, k, v, &cc->kernels) == 0 && is_regex(v->str))
		check_regex(c, v, NULL);
}


static const char *const mode_names[] = { "trace", "metrics" };
static const int mode_values[] = { KG_MODE_TRACE, KG_MODE_METRICS };
static const struct choices mode_choices = CHOICES(mode_names, mode_values);
static const char *const replay_names[] = { "kernel", "application", "step" };
static const int replay_values[] = { KG_REPLAY_KERNEL, KG_REPLAY_APPLICATION, KG_REPLAY_STEP };
static const struct choices replay_choices = CHOICES(replay_names, replay_values);

static const char *const cache_names[] = { "all", "none" };
static const int cache_values[] = { KG_CACHE_ALL, KG_CACHE_NONE };
static const struct choices cache_choices = CHOICES(cache_names, cache_values);

static const char *const engine_names[] = { "range", "sampling" };
static const int engine_values[] = { KG_ENGINE_RANGE, KG_ENGINE_SAMPLING };
static const struct choices engine_choices = CHOICES(engine_names, engine_values);

#define CO struct kg_collector_cfg
static const struct field collector_fields[] = {
	F_ENUM(CO, "mode", mode, mode_choices),
	F_CALL("metrics", Y_SEQ, 0, co_metrics),
	F_CALL("kernels", Y_SCALAR, 0, co_kernels),
	F_ENUM(CO, "kernel_name_base", name_base, name_base_choices),
	F_LONG(CO, "launch_skip", launch_skip, 0, LONG_MAX),
	F_LONG(CO, "launch_count", launch_count, 0, LONG_MAX),
	F_ENUM(CO, "replay", replay, replay_choices),
	F_ENUM(CO, "cache_control", cache_control, cache_choices),
	F_STRING(CO, "step_range", step_range),
	F_ENUM(CO, "engine", engine, engine_choices),
};
#undef CO

static void su_collector(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_suite *s = o;
	const struct ynode *mode = NULL, *metrics = NULL, *engine = NULL;
	size_t i;

	walk_map(c, v, collector_fields, NFIELDS(collector_fields), &s->collector);
	for (i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *key = v->items[i];
		if (key->kind == Y_SCALAR && !strcmp(key->str, "mode") && !mode)
			mode = v->items[i + 1];
		if (key->kind == Y_SCALAR && !strcmp(key->str, "metrics") && !metrics)
			metrics = key;
		if (key->kind == Y_SCALAR && !strcmp(key->str, "engine") && !engine)
			engine = key;
	}
	if (engine && s->collector.engine == KG_ENGINE_SAMPLING &&
	    (!mode || (mode->kind == Y_SCALAR && !strcmp(mode->str, "trace"))))
		problem(c, engine->line, engine->col, "'engine: sampling' needs mode: metrics");
	if (engine && s->collector.engine == KG_ENGINE_SAMPLING &&
	    s->collector.replay == KG_REPLAY_APPLICATION)
		problem(c, engine->line, engine->col,
			"'engine: sampling' takes one-pass sets and no replay; 'replay: "
			"application' is for the Range Profiler");
	if (engine && s->collector.engine == KG_ENGINE_SAMPLING &&
	    s->collector.replay == KG_REPLAY_STEP)
		problem(c, engine->line, engine->col,
			"'engine: sampling' takes one-pass sets and no replay; 'replay: "
			"step' is for the Range Profiler");
	if (engine && s->collector.engine == KG_ENGINE_SAMPLING &&
	    s->collector.cache_control == KG_CACHE_ALL)
		problem(c, engine->line, engine->col,
			"'engine: sampling' does not flush the cache (its samples would take "
			"the flush's in); leave 'cache_control' out or set it to none");
	/* Only when trace mode was asked for (or left out), not when it was misspelt. */
	if (metrics && (!mode || (mode->kind == Y_SCALAR && !strcmp(mode->str, "trace"))))
		problem(c, metrics->line, metrics->col,
			"'metrics' needs mode: metrics (trace mode records only timings and "
			"launch configuration)");
}

static void be_name(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_benchmark *b = o;
	const char *p;

	if (get_string(c, k, v, &b->name) < 0)
		return;
	for (p = v->str; *p; p++) {
		if ((unsigned char)*p < 0x21 || *p == 0x7f) {
			problem(c, v->line, v->col,
				"'name' must not contain spaces or control characters, got '%s'",
				v->str);
			return;
		}
	}
}

static void be_cmd(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_benchmark *b = o;
	size_t i;

	if (!v->n) {
		problem(c, v->line, v->col, "'cmd' must not be empty");
		return;
	}
	for (i = 0; i < v->n; i++) {
		const struct ynode *it = v->items[i];
		if (it->kind != Y_SCALAR) {
			if (it->kind != Y_BAD)
				problem(c, it->line, it->col,
					"each 'cmd' argument must be a single value, not %s",
					kind_name(it->kind));
			return;
		}
	}
	if (!v->items[0]->str[0]) {
		problem(c, v->items[0]->line, v->items[0]->col,
			"the program in 'cmd' must not be empty");
		return;
	}
	b->cmd = xcalloc(v->n + 1, sizeof(*b->cmd));
	for (i = 0; i < v->n; i++)
		b->cmd[i] = xstrdup(v->items[i]->str);
	b->argc = v->n;
}


static void be_timeout(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_benchmark *b = o;
	double d;

	if (config_parse_duration(v->str, &d) == 0 && d > 0)
		b->timeout_s = d;
	else
		problem(c, v->line, v->col,
			"'timeout' must be a duration above zero such as 250ms, 60s, 5m, 1h "
			"or 30d, got '%s'", v->str);
}

static int env_name_ok(const char *s)
{
	size_t i;

	if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return 0;
	for (i = 1; s[i]; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

static void be_env(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_benchmark *b = o;
	unsigned char *skip = map_check_keys(c, v);
	size_t i, npairs = v->n / 2;

	b->env = xcalloc(npairs + 1, sizeof(*b->env));
	for (i = 0; i < npairs; i++) {
		const struct ynode *key = v->items[2 * i], *val = v->items[2 * i + 1];
		if (skip[i])
			continue;
		if (!env_name_ok(key->str)) {
			problem(c, key->line, key->col,
				"'%s' is not an environment variable name", key->str);
			continue;
		}
		if (val->kind != Y_SCALAR) {
			if (val->kind != Y_BAD)
				problem(c, val->line, val->col, "the value of '%s' must be a "
					"single value, not %s", key->str, kind_name(val->kind));
			continue;
		}
		b->env[b->n_env++] = xasprintf("%s=%s", key->str, val->str);
	}
	free(skip);
}


#define BE struct kg_benchmark
static const struct field benchmark_fields[] = {
	F_CALL("name", Y_SCALAR, 1, be_name),
	F_CALL("cmd", Y_SEQ, 1, be_cmd),
	F_INT(BE, "repeat", repeat, 1, 1000000),
	F_INT(BE, "warmup", warmup, 0, 1000000),
	F_INT(BE, "quick_repeat", quick_repeat, 1, 1000000),
	F_CALL("timeout", Y_SCALAR, 0, be_timeout),
	F_CALL("env", Y_MAP, 0, be_env),
	F_STRING(BE, "workdir", workdir),
};
#undef BE

static void benchmark_free(struct kg_benchmark *b)
{
	size_t i;

	free(b->name);
	for (i = 0; i < b->argc; i++)
		free(b->cmd[i]);
	free(b->cmd);
	for (i = 0; i < b->n_env; i++)
		free(b->env[i]);
	free(b->env);
	free(b->workdir);
}

struct nameref {
	const char *name;
	size_t idx;
};

static int nameref_cmp(const void *a, const void *b)
{
	const struct nameref *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	if (r)
		return r;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void su_benchmarks(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_suite *s = o;
	struct nameref *refs;
	size_t i, nref = 0;

	if (!v->n) {
		problem(c, v->line, v->col, "'benchmarks' must list at least one benchmark");
		return;
	}
	s->benchmarks = xcalloc(v->n, sizeof(*s->benchmarks));
	refs = xcalloc(v->n, sizeof(*refs));
	for (i = 0; i < v->n; i++) {
		const struct ynode *it = v->items[i];
		struct kg_benchmark *b = &s->benchmarks[s->n_benchmarks];
		if (it->kind != Y_MAP) {
			if (it->kind != Y_BAD)
				problem(c, it->line, it->col,
					"a benchmark must be a mapping with 'name' and 'cmd'");
			continue;
		}
		b->repeat = 10;
		b->warmup = 1;
		b->quick_repeat = 3;
		b->timeout_s = 600;
		b->line = it->line;
		b->column = it->col;
		walk_map(c, it, benchmark_fields, NFIELDS(benchmark_fields), b);
		if (!b->env)
			b->env = xcalloc(1, sizeof(*b->env));
		if (b->workdir) {
			char *w = path_resolve(s->dir, b->workdir);
			free(b->workdir);
			b->workdir = w;
		}
		if (b->name) {
			refs[nref].name = b->name;
			refs[nref].idx = s->n_benchmarks;
			nref++;
		}
		s->n_benchmarks++;
	}
	qsort(refs, nref, sizeof(*refs), nameref_cmp);
	for (i = 1; i < nref; i++) {
		if (!strcmp(refs[i].name, refs[i - 1].name)) {
			const struct kg_benchmark *first = &s->benchmarks[refs[i - 1].idx];
			size_t f = i - 1;
			while (i < nref && !strcmp(refs[i].name, refs[f].name)) {
				const struct kg_benchmark *b = &s->benchmarks[refs[i].idx];
				problem(c, b->line, b->column,
					"duplicate benchmark name '%s' (first at line %d)", b->name,
					first->line);
				i++;
			}
		}
	}
	free(refs);
}


static void su_idle_wait(struct ctx *c, const struct ynode *k, const struct ynode *v, void *o)
{
	struct kg_suite *s = o;
	double d;

	if (config_parse_duration(v->str, &d) == 0 && d >= 0)
		s->idle_wait_s = d;
	else
		problem(c, v->line, v->col,
			"'idle_wait' must be a duration such as 0s, 30s or 5m, got '%s'", v->str);
}

static const struct field suite_fields[] = {
	F_VERSION(),
	F_BOOL(struct kg_suite, "require_idle_gpu", require_idle_gpu),
	F_CALL("idle_wait", Y_SCALAR, 0, su_idle_wait),
	F_CALL("thresholds", Y_SCALAR, 0, su_thresholds),
	F_CALL("collector", Y_MAP, 0, su_collector),
	F_CALL("benchmarks", Y_SEQ, 1, su_benchmarks),
};

const struct kg_benchmark *config_find_benchmark(const struct kg_suite *s, const char *name)
{
	for (size_t i = 0; i < s->n_benchmarks; i++)
		if (!strcmp(s->benchmarks[i].name, name))
			return &s->benchmarks[i];
	return NULL;
}

void config_free_suite(struct kg_suite *s)
{
	size_t i;

	if (!s)
		return;
	free(s->path);
	free(s->dir);
	free(s->thresholds);
	for (i = 0; i < s->collector.n_metrics; i++)
		free(s->collector.metrics[i]);
	free(s->collector.metrics);
	free(s->collector.kernels);
	free(s->collector.step_range);
	for (i = 0; i < s->n_benchmarks; i++)
		benchmark_free(&s->benchmarks[i]);
	free(s->benchmarks);
	free(s);
}

static char *path_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

int config_parse_suite(const char *name, const char *text, size_t len,
		       struct kg_suite **out, struct kg_buf *errs)
{
	struct ctx c = { 0 };
	struct kg_suite *s = xcalloc(1, sizeof(*s));

	c.file = name;
	*out = NULL;
	s->path = xstrdup(name);
	s->dir = path_dir(name);
	s->collector.mode = KG_MODE_TRACE;
	s->collector.replay = KG_REPLAY_KERNEL;
	s->idle_wait_s = 300;
	if (parse_file(&c, text, len, suite_fields, NFIELDS(suite_fields), s, "suite", errs)) {
		config_free_suite(s);
		return KG_EXIT_USAGE;
	}
	*out = s;
	return KG_EXIT_PASS;
}

/* ---- loading files ---------------------------------------------------- */

/* Read at most KG_CONFIG_MAX_BYTES + 1 bytes of a regular file; 0 ok, -1
 * (reported) on error. */
static int read_capped(const char *path, char **text, size_t *len)
{
	/* O_NONBLOCK: opening a FIFO without a writer would block for ever */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct kg_buf b = KG_BUF_INIT;
	char chunk[65536];
	struct stat sb;
	size_t n;
	FILE *f;

	if (fd < 0) {
		kg_error("cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		kg_error("cannot read '%s': not a regular file", path);
		close(fd);
		return -1;
	}
	if (!(f = fdopen(fd, "rb"))) {
		kg_error("cannot open '%s': %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	while (b.len <= KG_CONFIG_MAX_BYTES && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	if (ferror(f)) {
		kg_error("cannot read '%s': %s", path, strerror(errno));
		fclose(f);
		buf_free(&b);
		return -1;
	}
	fclose(f);
	*len = b.len;
	*text = buf_detach(&b);
	if (!*text)
		*text = xstrdup("");
	return 0;
}

/* After a parse of a file read by read_capped: its problems on stderr. */
static int loaded(int rc, char *text, struct kg_buf *errs)
{
	if (errs->s)
		fputs(errs->s, stderr);
	buf_free(errs);
	free(text);
	return rc;
}

int config_load_suite(const char *path, struct kg_suite **out)
{
	struct kg_buf errs = KG_BUF_INIT;
	char *text;
	size_t len;

	*out = NULL;
	if (read_capped(path, &text, &len) < 0)
		return KG_EXIT_USAGE;
	return loaded(config_parse_suite(path, text, len, out, &errs), text, &errs);
}

int config_load_thresholds(const char *path, struct kg_thresholds **out)
{
	struct kg_buf errs = KG_BUF_INIT;
	char *text;
	size_t len;

	*out = NULL;
	if (read_capped(path, &text, &len) < 0)
		return KG_EXIT_USAGE;
	return loaded(config_parse_thresholds(path, text, len, out, &errs), text, &errs);
}

const char *config_default_suite(void)
{
	static char *found;     /* found once per process, kept to its end */
	if (!found && !(found = kg_find_up("kgate.yaml", NULL)))
		found = xstrdup("kgate.yaml");
	return found;
}

