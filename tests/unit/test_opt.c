/*
 * test_opt.c: unit tests of the option parser (opt.c): every kind of value
 * (flag, string, choice, integer range, function), short options alone and
 * in clusters, operands, the messages for a misspelt, ambiguous, unknown or
 * valueless option and a missing value, --help anywhere, a second parse
 * after one that stopped at the first operand, and the options part of the
 * help rendered from the table (columns, wrapping, hidden options).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/util.h"

/* ---- what a parse printed ------------------------------------------------ */

struct capture {
	int fd, saved;
	FILE *tmp;
};

static void capture_start(struct capture *c, int fd)
{
	fflush(NULL);
	c->fd = fd;
	c->tmp = tmpfile();
	assert_non_null(c->tmp);
	c->saved = dup(fd);
	assert_true(c->saved >= 0);
	assert_true(dup2(fileno(c->tmp), fd) >= 0);
}

/* What was written to the descriptor since capture_start; malloc'd. */
static char *capture_end(struct capture *c)
{
	fflush(NULL);
	assert_true(dup2(c->saved, c->fd) >= 0);
	close(c->saved);
	long n = ftell(c->tmp);
	assert_true(n >= 0);
	char *s = calloc(1, (size_t)n + 1);
	assert_non_null(s);
	rewind(c->tmp);
	assert_int_equal(fread(s, 1, (size_t)n, c->tmp), (size_t)n);
	fclose(c->tmp);
	return s;
}

/* ---- one table of every kind ----------------------------------------------- */

struct vals {
	int verbose, all, choice;
	const char *db, *cfg, *format;
	long n;
	int calls;
	const char *last;
};

static int count_call(const struct kg_opt *o, const char *arg)
{
	struct vals *v = o->ctx;
	v->calls++;
	v->last = arg;
	return arg && !strcmp(arg, "refuse") ? KG_EXIT_RUNTIME : KG_EXIT_PASS;
}

static const char *const sizes[] = { "small", "medium", "large", NULL };

#define TABLE(v)                                                                              \
	const struct kg_opt opts[] = {                                                        \
		KG_OPT_STR("db", 0, "PATH", &(v).db, "the database"),                         \
		KG_OPT_STR("config", 'c', "FILE", &(v).cfg, "the suite"),                     \
		KG_OPT_STR("baseline", 0, "REF", &(v).db, "a baseline"),                      \
		KG_OPT_STR("commit", 0, "SHA", &(v).db, "a commit"),                          \
		KG_OPT_FLAG("verbose", 'v', &(v).verbose, "say more"),                        \
		KG_OPT_FLAG("all", 0, &(v).all, "all of them"),                               \
		KG_OPT_CHOICE("size", 0, "S", &(v).choice, sizes, "small, medium or large"),  \
		KG_OPT_ONEOF("format", 0, "F", &(v).format, kg_opt_text_json, "text or json"), \
		KG_OPT_LONG("launches", 'n', "N", &(v).n, 1, 100, "1 to 100"),               \
		KG_OPT_CALL("pair", 0, "B=H", count_call, &(v), "repeatable"),                \
		KG_OPT_FLAG("step", 0, &(v).all, NULL),                                       \
		KG_OPT_END                                                                    \
	}

/* Parse a NULL-terminated argument list for command "t": the answer, *argi,
 * and what it printed on stderr (malloc'd, in *err). */
static int parse(const struct kg_optspec *spec, char **args, int *argi, char **err)
{
	int argc = 0;
	while (args[argc])
		argc++;
	struct capture c;
	capture_start(&c, 2);
	int rc = opt_parse(spec, argc, args, argi);
	*err = capture_end(&c);
	return rc;
}

#define ARGS(...) ((char *[]){ "t", __VA_ARGS__, NULL })

static void test_values(void **state)
{
	struct vals v = { .n = 3 };
	TABLE(v);
	const struct kg_optspec spec = { "t", "usage: kgate t\n", NULL, opts, 1, 0 };
	int argi;
	char *err;

	(void)state;
	char **a = ARGS("--db", "a.db", "-vc", "s.yaml", "op1", "--all", "--size=large",
			"--format", "json", "-n7", "--pair", "x=y", "--pair", "p=q", "op2");
	assert_int_equal(parse(&spec, a, &argi, &err), KG_OPT_GO);
	assert_string_equal(err, "");
	assert_string_equal(v.db, "a.db");
	assert_string_equal(v.cfg, "s.yaml");
	assert_int_equal(v.verbose, 1);
	assert_int_equal(v.all, 1);
	assert_int_equal(v.choice, 2);
	assert_string_equal(v.format, "json");
	assert_int_equal(v.n, 7);
	assert_int_equal(v.calls, 2);
	assert_string_equal(v.last, "p=q");
	/* the operands, after the options (getopt_long permutes) */
	assert_int_equal(argi, 14);
	assert_string_equal(a[14], "op1");
	assert_string_equal(a[15], "op2");
	free(err);
}

/* An unambiguous abbreviation, and "--" ends the options. */
static void test_abbreviation(void **state)
{
	struct vals v = { 0 };
	TABLE(v);
	const struct kg_optspec spec = { "t", "usage: kgate t\n", NULL, opts, 1, 0 };
	char **a = ARGS("--verb", "--", "--all");
	int argi;
	char *err;

	(void)state;
	assert_int_equal(parse(&spec, a, &argi, &err), KG_OPT_GO);
	assert_int_equal(v.verbose, 1);
	assert_int_equal(v.all, 0);
	assert_string_equal(a[argi], "--all");
	free(err);
}

/* One bad argument list: the answer and the whole message. */
static void bad(char **args, int want_rc, const char *want_err)
{
	struct vals v = { 0 };
	TABLE(v);
	const struct kg_optspec spec = { "t", "usage: kgate t\n", NULL, opts, 0, 0 };
	int argi;
	char *err;

	assert_int_equal(parse(&spec, args, &argi, &err), want_rc);
	assert_string_equal(err, want_err);
	free(err);
}

static void test_messages(void **state)
{
	(void)state;
	bad(ARGS("--basline", "main"), KG_EXIT_USAGE,
	    "kgate: unknown option '--basline'; did you mean '--baseline'?\n");
	bad(ARGS("--basline=main"), KG_EXIT_USAGE,
	    "kgate: unknown option '--basline'; did you mean '--baseline'?\n");
	bad(ARGS("--bogus"), KG_EXIT_USAGE, "kgate: unknown option '--bogus'; see 'kgate t --help'\n");
	/* a hidden option is never suggested */
	bad(ARGS("--stepp"), KG_EXIT_USAGE, "kgate: unknown option '--stepp'; see 'kgate t --help'\n");
	bad(ARGS("--co"), KG_EXIT_USAGE, "kgate: option '--co' is ambiguous: --config, --commit\n");
	bad(ARGS("--db"), KG_EXIT_USAGE, "kgate: option '--db' needs a value\n");
	bad(ARGS("-v", "-c"), KG_EXIT_USAGE, "kgate: option '-c' needs a value\n");
	bad(ARGS("-vc"), KG_EXIT_USAGE, "kgate: option '-c' needs a value\n");
	bad(ARGS("--all=1"), KG_EXIT_USAGE, "kgate: option '--all' takes no value\n");
	bad(ARGS("--verbose=1"), KG_EXIT_USAGE, "kgate: option '--verbose' takes no value\n");
	bad(ARGS("-vx"), KG_EXIT_USAGE, "kgate: unknown option '-x'; see 'kgate t --help'\n");
	bad(ARGS("--all", "-xv"), KG_EXIT_USAGE, "kgate: unknown option '-x'; see 'kgate t --help'\n");
	bad(ARGS("--size", "larg"), KG_EXIT_USAGE,
	    "kgate: --size 'larg' is not one of: small, medium, large; did you mean 'large'?\n");
	bad(ARGS("--format", "yaml"), KG_EXIT_USAGE, "kgate: --format 'yaml' is not one of: text, json\n");
	bad(ARGS("-n", "0"), KG_EXIT_USAGE, "kgate: --launches '0' is not an integer from 1 to 100\n");
	bad(ARGS("--launches", "5x"), KG_EXIT_USAGE,
	    "kgate: --launches '5x' is not an integer from 1 to 100\n");
	bad(ARGS("--launches", " 5"), KG_EXIT_USAGE,
	    "kgate: --launches ' 5' is not an integer from 1 to 100\n");
	bad(ARGS("--launches", ""), KG_EXIT_USAGE, "kgate: --launches '' is not an integer from 1 to 100\n");
	bad(ARGS("stray"), KG_EXIT_USAGE, "kgate: unexpected argument 'stray'; see 'kgate t --help'\n");
	/* a function's own status, after its own message (none here) */
	bad(ARGS("--pair", "refuse"), KG_EXIT_RUNTIME, "");
}

static void test_integer_words(void **state)
{
	long n = 5;
	const struct kg_opt t1[] = { KG_OPT_LONG("n", 0, "N", &n, 1, LONG_MAX, "h"), KG_OPT_END };
	const struct kg_opt t2[] = { KG_OPT_LONG("n", 0, "N", &n, 0, LONG_MAX, "h"), KG_OPT_END };
	const struct kg_optspec s1 = { "t", "u\n", NULL, t1, 0, 0 }, s2 = { "t", "u\n", NULL, t2, 0, 0 };
	int argi;
	char *err;

	(void)state;
	assert_int_equal(parse(&s1, ARGS("--n", "-1"), &argi, &err), KG_EXIT_USAGE);
	assert_string_equal(err, "kgate: --n '-1' is not a positive integer\n");
	free(err);
	assert_int_equal(parse(&s2, ARGS("--n", "-1"), &argi, &err), KG_EXIT_USAGE);
	assert_string_equal(err, "kgate: --n '-1' is not a non-negative integer\n");
	free(err);
	assert_int_equal(parse(&s2, ARGS("--n", "0"), &argi, &err), KG_OPT_GO);
	assert_int_equal(n, 0);
	free(err);
}

/* --help anywhere before "--", whatever else is wrong; its text on stdout. */
static void test_help_anywhere(void **state)
{
	struct vals v = { 0 };
	TABLE(v);
	const struct kg_optspec spec = { "t", "usage: kgate t\n", "Exit status: 0.\n", opts, 0, 0 };
	struct capture out;
	int argi;
	char *err;

	(void)state;
	capture_start(&out, 1);
	int rc = parse(&spec, ARGS("--bogus", "x", "--help"), &argi, &err);
	char *text = capture_end(&out);
	assert_int_equal(rc, KG_EXIT_PASS);
	assert_string_equal(err, "");
	assert_non_null(strstr(text, "usage: kgate t\n\n  --db PATH"));
	assert_non_null(strstr(text, "\n\nExit status: 0.\n"));
	free(text);
	free(err);

	/* after "--" it is an operand */
	const struct kg_optspec spec2 = { "t", "usage: kgate t\n", NULL, opts, 1, 0 };
	assert_int_equal(parse(&spec2, ARGS("--", "-h"), &argi, &err), KG_OPT_GO);
	assert_int_equal(argi, 2);
	free(err);
}

/* kgate's own options stop at the command; the command's parse after it
 * permutes again (glibc keeps the order of a parse unless optind is 0). */
static void test_in_order_then_command(void **state)
{
	int version = 0, verbose = 0, argi;
	const struct kg_opt top[] = { KG_OPT_FLAG("version", 0, &version, "v"), KG_OPT_END };
	const struct kg_opt sub[] = { KG_OPT_FLAG("verbose", 'v', &verbose, "v"), KG_OPT_END };
	const struct kg_optspec s1 = { NULL, "u", NULL, top, 1, 1 };
	const struct kg_optspec s2 = { "cmd", "u\n", NULL, sub, 1, 0 };
	char **a = ARGS("cmd", "op", "--verbose", "--help");
	char *err;

	(void)state;
	assert_int_equal(parse(&s1, a, &argi, &err), KG_OPT_GO);
	assert_int_equal(argi, 1);
	assert_int_equal(version, 0);
	free(err);
	/* the command sees "cmd op --verbose" (its --help is past the top's operand:
	 * drop it to parse the rest) */
	a[4] = NULL;
	assert_int_equal(parse(&s2, a + argi, &argi, &err), KG_OPT_GO);
	assert_int_equal(verbose, 1);
	free(err);

	bad(ARGS("-x"), KG_EXIT_USAGE, "kgate: unknown option '-x'; see 'kgate t --help'\n");
	const struct kg_optspec s3 = { NULL, "u", NULL, top, 1, 1 };
	assert_int_equal(parse(&s3, ARGS("--verison"), &argi, &err), KG_EXIT_USAGE);
	assert_string_equal(err, "kgate: unknown option '--verison'; did you mean '--version'?\n");
	free(err);
	assert_int_equal(parse(&s3, ARGS("--bogus"), &argi, &err), KG_EXIT_USAGE);
	assert_string_equal(err, "kgate: unknown option '--bogus'; see 'kgate --help'\n");
	free(err);
}

/* Operands taken in order among the options: an option applies to the
 * operands after it, "--" ends the options but not the operands. */
struct seen {
	const char *fmt;
	char log[128];
};

static int take_file(const struct kg_opt *o, const char *arg)
{
	struct seen *s = o->ctx;
	size_t l = strlen(s->log);
	snprintf(s->log + l, sizeof s->log - l, "%s%s:%s", l ? " " : "", s->fmt, arg);
	return strcmp(arg, "refuse") ? KG_EXIT_PASS : KG_EXIT_USAGE;
}

static void test_operands_in_order(void **state)
{
	struct seen s = { .fmt = "auto" };
	const struct kg_opt opts[] = {
		KG_OPT_STR("fmt", 0, "F", &s.fmt, "the format of the files after it"),
		KG_OPT_OPERANDS_CALL("FILE", take_file, &s, "a file"),
		KG_OPT_END
	};
	const struct kg_optspec spec = { "t", "u\n", NULL, opts, 1, 0 };
	int argi;
	char *err;

	(void)state;
	assert_int_equal(parse(&spec, ARGS("f1", "--fmt", "a", "f2", "--fmt=b", "f3", "--", "--fmt"),
			       &argi, &err), KG_OPT_GO);
	assert_string_equal(s.log, "auto:f1 a:f2 b:f3 b:--fmt");
	assert_string_equal(err, "");
	free(err);
	/* the function's refusal stops the parse */
	s.log[0] = '\0';
	assert_int_equal(parse(&spec, ARGS("refuse", "f2"), &argi, &err), KG_EXIT_USAGE);
	assert_string_equal(s.log, "b:refuse");
	free(err);
}

static char *render(const struct kg_opt *opts)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	assert_non_null(f);
	opt_help_options(f, opts);
	fclose(f);
	return s;
}

static void test_help_rendering(void **state)
{
	const char *p = NULL;
	int flag = 0;
	const struct kg_opt opts[] = {
		KG_OPT_STR("db", 0, "PATH", &p, "the database (default kgate.db)"),
		KG_OPT_STR("thresholds", 't', "F", &p,
			   "thresholds file (default: the suite's, else the built-in "
			   "thresholds/default.yaml, which every build carries inside it)"),
		KG_OPT_FLAG("quick", 0, &flag, "fewer repeats\nsecond line"),
		KG_OPT_FLAG("hidden", 0, &flag, NULL),
		KG_OPT_OPERAND("KERNEL", "explain these kernels only"),
		KG_OPT_END
	};
	const char *want =
		"  --db PATH           the database (default kgate.db)\n"
		"  -t, --thresholds F  thresholds file (default: the suite's, else the built-in\n"
		"                      thresholds/default.yaml, which every build carries inside\n"
		"                      it)\n"
		"  --quick             fewer repeats\n"
		"                      second line\n"
		"  KERNEL              explain these kernels only\n";

	(void)state;
	char *s = render(opts);
	assert_string_equal(s, want);
	free(s);

	/* a label wider than the widest column puts its text under it */
	const struct kg_opt wide[] = {
		KG_OPT_STR("db", 0, "PATH", &p, "the database"),
		KG_OPT_STR("a-very-long-option-name", 0, "VALUE", &p, "text"),
		KG_OPT_END
	};
	s = render(wide);
	assert_string_equal(s, "  --db PATH  the database\n"
			       "  --a-very-long-option-name VALUE\n"
			       "             text\n");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_abbreviation),
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_integer_words),
		cmocka_unit_test(test_help_anywhere),
		cmocka_unit_test(test_in_order_then_command),
		cmocka_unit_test(test_operands_in_order),
		cmocka_unit_test(test_help_rendering),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
