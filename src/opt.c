/*
 * opt.c: the one option parser of the kgate CLI (opt.h).
 *
 * Owns the translation of a command's option table into getopt_long's
 * long options and short option string, the storing of each value by its
 * kind, every message about a bad option (unknown, misspelt, ambiguous,
 * missing or unwanted value, unexpected operand) and the rendering of the
 * options part of --help from the same table.  Suggestions come from
 * util.c's edit distance (kg_suggest_close).
 */
#include "kgate/opt.h"
#include "kgate/kgate.h"
#include "kgate/util.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

const char *const kg_opt_text_json[] = { "text", "json", NULL };

#define LONG_BASE 256   /* getopt's value of a long-only option: LONG_BASE + its index */
#define HELP_WIDTH 79   /* the longest help line, where words allow */
#define HELP_COL_MAX 24 /* the widest column the help texts start in */

static int is_end(const struct kg_opt *o)
{
	return !o->name && !o->arg;
}

/* 1 when -h or --help comes before "--" (in_order: before the first operand). */
static int wants_help(const struct kg_optspec *s, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return 0;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
		if (s->in_order && argv[i][0] != '-')
			return 0;
	}
	return 0;
}

static void say_see(struct kg_buf *b, const struct kg_optspec *s)
{
	buf_printf(b, "; see 'kgate %s%s--help'", s->cmd ? s->cmd : "", s->cmd ? " " : "");
}

static const struct kg_opt *by_letter(const struct kg_opt *opts, int c)
{
	for (const struct kg_opt *o = opts; !is_end(o); o++)
		if (o->name && o->letter == c)
			return o;
	return NULL;
}

/* The long names shown in the help, and "help". */
static size_t visible_names(const struct kg_opt *opts, const char ***out)
{
	size_t n = 0;
	for (const struct kg_opt *o = opts; !is_end(o); o++)
		n++;
	const char **v = xcalloc(n + 1, sizeof *v);
	n = 0;
	for (const struct kg_opt *o = opts; !is_end(o); o++)
		if (o->name && o->help)
			v[n++] = o->name;
	v[n++] = "help";
	*out = v;
	return n;
}

/* An unknown long option: ambiguous, misspelt or unknown. */
static void say_unknown_long(const struct kg_optspec *s, const char *word)
{
	size_t len = strcspn(word + 2, "=");
	char *name = xstrndup(word + 2, len);
	const char **names;
	size_t n = visible_names(s->opts, &names), nprefix = 0;
	struct kg_buf b = KG_BUF_INIT;

	for (size_t i = 0; i < n; i++)
		if (len && !strncmp(names[i], name, len))
			buf_printf(&b, "%s--%s", nprefix++ ? ", " : "", names[i]);
	if (nprefix > 1) {
		kg_error("option '--%s' is ambiguous: %s", name, b.s);
	} else {
		const char *near = kg_suggest_close(name, names, n);
		buf_reset(&b);
		if (near)
			buf_printf(&b, "; did you mean '--%s'?", near);
		else
			say_see(&b, s);
		kg_error("unknown option '--%s'%s", name, b.s);
	}
	buf_free(&b);
	free(names);
	free(name);
}

/* After getopt_long returned '?' or ':' (opterr 0, optstring from ':'). */
static int say_bad(const struct kg_optspec *s, int c, char **argv)
{
	/* The element that went wrong: for a long option and for a missing
	 * value, getopt has stepped past it; an unknown short option is named
	 * on its own (it may stand inside a cluster, "-vx"). */
	const char *word = optind > 0 ? argv[optind - 1] : "?";
	int known = optopt && (optopt >= LONG_BASE || optopt == 'h' || by_letter(s->opts, optopt));
	struct kg_buf b = KG_BUF_INIT;

	if (c == ':') {
		if (strncmp(word, "--", 2))
			kg_error("option '-%c' needs a value", optopt);
		else
			kg_error("option '%s' needs a value", word);
	} else if (known) {
		kg_error("option '%.*s' takes no value", (int)strcspn(word, "="), word);
	} else if (!optopt) {
		say_unknown_long(s, word);
	} else {
		say_see(&b, s);
		kg_error("unknown option '-%c'%s", optopt, b.s);
	}
	buf_free(&b);
	return KG_EXIT_USAGE;
}

static int say_not_integer(const struct kg_opt *o, const char *arg)
{
	if (o->max == LONG_MAX && o->min == 0)
		kg_error("--%s '%s' is not a non-negative integer", o->name, arg);
	else if (o->max == LONG_MAX && o->min == 1)
		kg_error("--%s '%s' is not a positive integer", o->name, arg);
	else if (o->max == LONG_MAX)
		kg_error("--%s '%s' is not an integer of at least %ld", o->name, arg, o->min);
	else
		kg_error("--%s '%s' is not an integer from %ld to %ld", o->name, arg, o->min, o->max);
	return KG_EXIT_USAGE;
}

static int say_not_choice(const struct kg_opt *o, const char *arg)
{
	struct kg_buf b = KG_BUF_INIT;
	size_t n = 0;

	for (; o->choices[n]; n++)
		buf_printf(&b, "%s%s", n ? ", " : "", o->choices[n]);
	const char *near = kg_suggest_close(arg, o->choices, n);
	if (near)
		kg_error("--%s '%s' is not one of: %s; did you mean '%s'?", o->name, arg, b.s, near);
	else
		kg_error("--%s '%s' is not one of: %s", o->name, arg, b.s);
	buf_free(&b);
	return KG_EXIT_USAGE;
}

/* Store one option's value; KG_OPT_GO, or an exit status after the message. */
static int take(const struct kg_opt *o, const char *arg)
{
	if (o->flag) {
		*o->flag = 1;
	} else if (o->choices) {
		size_t i;
		for (i = 0; o->choices[i] && strcmp(o->choices[i], arg); i++)
			;
		if (!o->choices[i])
			return say_not_choice(o, arg);
		if (o->choice)
			*o->choice = (int)i;
		else
			*o->str = o->choices[i];
	} else if (o->str) {
		*o->str = arg;
	} else if (o->num) {
		char *end;
		errno = 0;
		long v = strtol(arg, &end, 10);
		if (!(arg[0] == '-' || (arg[0] >= '0' && arg[0] <= '9')) || *end || errno ||
		    v < o->min || v > o->max)
			return say_not_integer(o, arg);
		*o->num = v;
	} else if (o->fn) {
		int rc = o->fn(o, arg);
		if (rc != KG_EXIT_PASS)
			return rc;
	}
	return KG_OPT_GO;
}

int opt_parse(const struct kg_optspec *s, int argc, char **argv, int *argi)
{
	size_t n = 0;
	int rc = KG_OPT_GO, c;

	*argi = argc;
	if (wants_help(s, argc, argv)) {
		opt_help(stdout, s);
		return KG_EXIT_PASS;
	}
	while (!is_end(&s->opts[n]))
		n++;
	struct option *lo = xcalloc(n + 2, sizeof *lo);
	struct kg_buf shorts = KG_BUF_INIT;
	size_t k = 0;
	int has_help = 0;       /* the table shows -h, --help itself */
	const struct kg_opt *each = NULL;   /* operands in order, to this row's fn */
	for (size_t i = 0; i < n; i++) {
		has_help |= s->opts[i].name && !strcmp(s->opts[i].name, "help");
		if (!s->opts[i].name && s->opts[i].fn)
			each = &s->opts[i];
	}
	buf_adds(&shorts, each ? "-:" : s->in_order ? "+:" : ":");
	if (!has_help)
		buf_addc(&shorts, 'h');
	for (size_t i = 0; i < n; i++) {
		const struct kg_opt *o = &s->opts[i];
		if (!o->name)
			continue;
		lo[k++] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL,
					   o->letter ? o->letter : LONG_BASE + (int)i };
		if (o->letter) {
			buf_addc(&shorts, o->letter);
			if (o->arg)
				buf_addc(&shorts, ':');
		}
	}
	if (!has_help)
		lo[k] = (struct option){ "help", no_argument, NULL, 'h' };

	/* 0, not 1: glibc then starts afresh, also the order ("+") of a parse before */
	optind = 0;
	opterr = 0;
	while (rc == KG_OPT_GO && (c = getopt_long(argc, argv, shorts.s, lo, NULL)) != -1) {
		const struct kg_opt *o = NULL;
		if (c == 'h' && !has_help) {    /* an abbreviation such as --hel */
			opt_help(stdout, s);
			rc = KG_EXIT_PASS;
		} else if (c == 1 && each) {    /* an operand, in its place */
			o = each;
		} else if (c >= LONG_BASE) {
			o = &s->opts[c - LONG_BASE];
		} else if (c != '?' && c != ':') {
			o = by_letter(s->opts, c);
		}
		if (o)
			rc = take(o, o->arg ? optarg : NULL);
		else if (rc == KG_OPT_GO)
			rc = say_bad(s, c, argv);
	}
	for (; each && rc == KG_OPT_GO && optind < argc; optind++)   /* after "--" */
		rc = take(each, argv[optind]);
	if (rc == KG_OPT_GO && optind < argc && !s->operands && !s->in_order) {
		struct kg_buf b = KG_BUF_INIT;
		say_see(&b, s);
		kg_error("unexpected argument '%s'%s", argv[optind], b.s);
		buf_free(&b);
		rc = KG_EXIT_USAGE;
	}
	*argi = optind;
	free(lo);
	buf_free(&shorts);
	return rc;
}

int opt_regex(const char *name, const char *pattern, regex_t *re)
{
	int e = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
	if (e) {
		char msg[256];
		regerror(e, re, msg, sizeof(msg));
		kg_error("--%s '%s' is not a valid regular expression: %s", name, pattern, msg);
		return KG_EXIT_USAGE;
	}
	return KG_EXIT_PASS;
}

/* ---- help ---------------------------------------------------------------- */

static void label(struct kg_buf *b, const struct kg_opt *o)
{
	buf_reset(b);
	if (!o->name) {
		buf_adds(b, o->arg);
		return;
	}
	if (o->letter)
		buf_printf(b, "-%c, ", o->letter);
	buf_printf(b, "--%s", o->name);
	if (o->arg)
		buf_printf(b, " %s", o->arg);
}

/* text from column col, the cursor at column at; words wrapped at
 * HELP_WIDTH, a '\n' in text a line break. */
static void put_wrapped(FILE *fp, const char *text, size_t col, size_t at)
{
	int empty = 1;          /* nothing of text on this line yet */

	for (const char *p = text; *p;) {
		if (*p == '\n') {
			fputc('\n', fp);
			at = 0;
			empty = 1;
			p++;
			continue;
		}
		if (*p == ' ') {
			p++;
			continue;
		}
		size_t w = strcspn(p, " \n");
		if (!empty && at + 1 + w > HELP_WIDTH) {
			fputc('\n', fp);
			at = 0;
			empty = 1;
		}
		if (empty) {
			for (; at < col; at++)
				fputc(' ', fp);
		} else {
			fputc(' ', fp);
			at++;
		}
		fwrite(p, 1, w, fp);
		at += w;
		p += w;
		empty = 0;
	}
	fputc('\n', fp);
}

void opt_help_options(FILE *fp, const struct kg_opt *opts)
{
	struct kg_buf b = KG_BUF_INIT;
	size_t col = 0;

	for (const struct kg_opt *o = opts; !is_end(o); o++) {
		if (!o->help)
			continue;
		label(&b, o);
		if (b.len + 4 > col && b.len + 4 <= HELP_COL_MAX)
			col = b.len + 4;
	}
	for (const struct kg_opt *o = opts; !is_end(o); o++) {
		if (!o->help)
			continue;
		label(&b, o);
		fprintf(fp, "  %s", b.s);
		size_t at = 2 + b.len;
		if (at + 2 > col) {     /* too wide: the text goes under it */
			fputc('\n', fp);
			at = 0;
		}
		put_wrapped(fp, o->help, col, at);
	}
	buf_free(&b);
}

void opt_help(FILE *fp, const struct kg_optspec *s)
{
	fputs(s->synopsis, fp);
	fputc('\n', fp);
	for (const struct kg_opt *o = s->opts; !is_end(o); o++)
		if (o->help) {
			opt_help_options(fp, s->opts);
			break;
		}
	if (s->epilogue) {
		fputc('\n', fp);
		fputs(s->epilogue, fp);
	}
}
