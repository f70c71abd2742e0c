/*
 * opt.h: the one option parser of the kgate CLI.
 *
 * A command describes its options once, in a table of struct kg_opt: the
 * long name, the short letter, the argument's name, the help text, and
 * where a value goes (a flag, a string, one of a list of choices, an
 * integer in a range) or a function that takes it.  opt_parse() parses
 * argv by that table with getopt_long and says every bad option in one
 * way (with the nearest option for a misspelt one); opt_help() prints the
 * command's --help, its options part rendered from the same table, so the
 * help cannot name an option the parser does not know, or miss one.
 */
#ifndef KGATE_OPT_H
#define KGATE_OPT_H

#include <limits.h>   /* LONG_MAX, for KG_OPT_LONG */
#include <regex.h>
#include <stdio.h>

struct kg_opt;

/* Takes the argument of o (NULL for an option without one); returns
 * KG_EXIT_PASS, or an exit status after saying what was wrong. */
typedef int (*kg_opt_fn)(const struct kg_opt *o, const char *arg);

struct kg_opt {
	const char *name;       /* long name, without "--"; NULL: an operand's help row */
	char letter;            /* short option, or 0 */
	const char *arg;        /* the argument as the help names it ("PATH"); NULL: none */
	const char *help;       /* one paragraph, wrapped when printed; NULL: not shown */
	/* where the value goes: exactly one of these */
	int *flag;              /* no argument: set to 1 */
	const char **str;       /* the argument (the last one given wins) */
	int *choice;            /* the index in choices of the argument; with str
				 * instead, the choice itself */
	long *num;              /* the argument as an integer from min to max */
	kg_opt_fn fn;
	const char *const *choices;   /* NULL-terminated, with choice */
	long min, max;                /* with num */
	void *ctx;                    /* for fn */
};

#define KG_OPT_FLAG(NAME, LETTER, DEST, HELP) \
	{ .name = (NAME), .letter = (LETTER), .help = (HELP), .flag = (DEST) }
#define KG_OPT_STR(NAME, LETTER, ARG, DEST, HELP) \
	{ .name = (NAME), .letter = (LETTER), .arg = (ARG), .help = (HELP), .str = (DEST) }
#define KG_OPT_CHOICE(NAME, LETTER, ARG, DEST, CHOICES, HELP) \
	{ .name = (NAME), .letter = (LETTER), .arg = (ARG), .help = (HELP), .choice = (DEST), \
	  .choices = (CHOICES) }
#define KG_OPT_ONEOF(NAME, LETTER, ARG, DEST, CHOICES, HELP) \
	{ .name = (NAME), .letter = (LETTER), .arg = (ARG), .help = (HELP), .str = (DEST), \
	  .choices = (CHOICES) }
#define KG_OPT_LONG(NAME, LETTER, ARG, DEST, MIN, MAX, HELP) \
	{ .name = (NAME), .letter = (LETTER), .arg = (ARG), .help = (HELP), .num = (DEST), \
	  .min = (MIN), .max = (MAX) }
/* ARG NULL: an option without an argument, fn gets NULL */
#define KG_OPT_CALL(NAME, LETTER, ARG, FN, CTX, HELP) \
	{ .name = (NAME), .letter = (LETTER), .arg = (ARG), .help = (HELP), .fn = (FN), .ctx = (CTX) }
/* a row of the help for operands, not an option */
#define KG_OPT_OPERAND(ARG, HELP) { .arg = (ARG), .help = (HELP) }
/* Operands taken in order among the options, each by FN (so an option can
 * apply to the operands after it, as ingest's --input-format does); those
 * after "--" too.  At most one such row in a table. */
#define KG_OPT_OPERANDS_CALL(ARG, FN, CTX, HELP) \
	{ .arg = (ARG), .help = (HELP), .fn = (FN), .ctx = (CTX) }
#define KG_OPT_END { .name = NULL }
/* --db PATH, as the commands that read or write one database take it. */
#define KG_OPT_DB(DEST) \
	KG_OPT_STR("db", 0, "PATH", DEST, "the database (default $KGATE_DB, else kgate.db)")

/* The choices of a --format that is text or json. */
extern const char *const kg_opt_text_json[];
/* --format F, text or json; HELP says what each writes where. */
#define KG_OPT_TEXT_JSON(DEST, HELP) \
	KG_OPT_ONEOF("format", 0, "F", DEST, kg_opt_text_json, HELP)
/* --commit SHA of the commands whose default is the commit under test:
 * WHAT says which commit it is, MORE what follows the default. */
#define KG_OPT_HEAD_COMMIT(DEST, WHAT, MORE) \
	KG_OPT_STR("commit", 0, "SHA", DEST, "the commit " WHAT " (default: git rev-parse HEAD; " \
		   "in a pull request's GitHub Actions job, its head commit)" MORE)
/* --only REGEX, the benchmarks of the suite that are run. */
#define KG_OPT_ONLY(DEST) \
	KG_OPT_STR("only", 0, "REGEX", DEST, "only the benchmarks whose name matches (POSIX ERE)")

struct kg_optspec {
	const char *cmd;        /* the command, for messages: "check"; NULL: kgate itself */
	const char *synopsis;   /* the usage lines and the description, before the options */
	const char *epilogue;   /* after the options (environment, exit status); may be NULL */
	const struct kg_opt *opts;
	int operands;           /* 0: an operand is an error; 1: any number */
	int in_order;           /* 1: stop at the first operand (kgate's own options); -h
				 * and --help count only before it */
};

/* opt_parse's answer when the command goes on with *argi. */
#define KG_OPT_GO (-1)

/*
 * Parse argv[1..argc-1] by spec.  -h and --help anywhere before "--" (with
 * in_order: before the first operand) print the help on stdout and answer
 * KG_EXIT_PASS.  A bad option, a missing or bad value, or an unexpected
 * operand is said on stderr as
 *   kgate: unknown option '--basline'; did you mean '--baseline'?
 *   kgate: unknown option '--bogus'; see 'kgate check --help'
 *   kgate: option '--db' needs a value
 * and answers KG_EXIT_USAGE (a function's own status when it refuses).
 * Otherwise KG_OPT_GO, with *argi the index of the first operand.
 */
int opt_parse(const struct kg_optspec *spec, int argc, char **argv, int *argi);

/* The value of option --name as a POSIX extended regular expression
 * (REG_NOSUB): KG_EXIT_PASS, or KG_EXIT_USAGE after saying why not. */
int opt_regex(const char *name, const char *pattern, regex_t *re);

/* The whole help: synopsis, the options part, epilogue. */
void opt_help(FILE *fp, const struct kg_optspec *spec);
/* The options part only: one row an option (and operand row), the help
 * text wrapped into a column, no line over 79 characters where words allow. */
void opt_help_options(FILE *fp, const struct kg_opt *opts);

#endif
