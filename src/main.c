/*
 * main.c: kgate's entry point and its command table.
 *
 * Finds the subcommand named by the first operand in kg_commands[] and
 * calls it with the rest of argv; handles the few options that belong to
 * kgate itself (--help, --version, parsed by opt.c before the command) and
 * "kgate help COMMAND".  Nothing else lives here.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "kgate/kgate.h"
#include "kgate/metricinfo.h"
#include "kgate/opt.h"
#include "kgate/util.h"

#define KG_CMD_ENTRY(name, summary) { #name, cmd_##name, summary },
const struct kg_cmd kg_commands[] = {
	KG_COMMANDS(KG_CMD_ENTRY)
	{ NULL, NULL, NULL }
};
#undef KG_CMD_ENTRY

static const char epilogue[] =
	"'kgate <command> --help' describes a command; 'man kgate' has it all.\n"
	"exit status: 0 pass, 1 regression, 2 usage or input error, 3 runtime failure\n"
	"environment: KGATE_DB names the database where --db is not given (default\n"
	"   kgate.db; a path, sqlite:PATH or a postgresql:// URL)\n";

/* The usage line and the command table; the options follow. */
static char *synopsis(void)
{
	struct kg_buf b = KG_BUF_INIT;

	buf_adds(&b, "usage: kgate [--version] [--help] <command> [<args>]\n\ncommands:\n");
	for (const struct kg_cmd *c = kg_commands; c->name; c++)
		buf_printf(&b, "   %-9s %s\n", c->name, c->summary);
	buf_adds(&b, "\noptions:");
	return buf_detach(&b);
}

/* The command called name, or NULL after saying so (with the nearest name). */
static const struct kg_cmd *find_cmd(const char *name)
{
	const char *names[32];
	size_t n = 0;

	for (const struct kg_cmd *c = kg_commands; c->name; c++) {
		if (strcmp(c->name, name) == 0)
			return c;
		if (n < 32)
			names[n++] = c->name;
	}
	const char *near = kg_suggest(name, names, n);
	if (near)
		kg_error("'%s' is not a kgate command; did you mean '%s'?", name, near);
	else
		kg_error("'%s' is not a kgate command; see 'kgate --help'", name);
	return NULL;
}

int main(int argc, char **argv)
{
	int version = 0, help = 0, argi;
	char *syn = synopsis();
	const struct kg_opt opts[] = {
		KG_OPT_FLAG("version", 0, &version, "print kgate's version"),
		KG_OPT_FLAG("help", 'h', &help, "print this help"),
		KG_OPT_END
	};
	const struct kg_optspec spec = { NULL, syn, epilogue, opts, 1, 1 };

	/* A parent that ignores SIGCHLD would leave kgate's children (git, the
	 * benchmarks) nothing to wait for: their exit status would be lost. */
	signal(SIGCHLD, SIG_DFL);
	int rc = opt_parse(&spec, argc, argv, &argi);
	if (rc == KG_OPT_GO && !version &&
	    (help || argi == argc || (argi + 1 == argc && strcmp(argv[argi], "help") == 0))) {
		/* "kgate" alone is a usage error, "kgate help" is not */
		int bare = !help && argi == argc;
		opt_help(bare ? stderr : stdout, &spec);
		rc = bare ? KG_EXIT_USAGE : KG_EXIT_PASS;
	}
	free(syn);
	if (rc != KG_OPT_GO)
		return rc;
	const char *name = argv[argi];
	if (version || strcmp(name, "version") == 0) {
		printf("kgate %s\n", KGATE_VERSION);
		return KG_EXIT_PASS;
	}
	if (strcmp(name, "help") == 0) {
		const struct kg_cmd *c = find_cmd(argv[argi + 1]);
		if (!c)
			return KG_EXIT_USAGE;
		char *args[] = { (char *)c->name, "--help", NULL };
		return c->fn(2, args);
	}
	const struct kg_cmd *c = find_cmd(name);
	if (!c)
		return KG_EXIT_USAGE;
	/* --format json: errors as a JSON object on stdout too (option errors
	 * included, so the options are looked at before the command parses them) */
	for (int i = argi + 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--format=json") ||
		    (!strcmp(argv[i], "--format") && i + 1 < argc && !strcmp(argv[i + 1], "json")))
			kg_json_errors(1);
	rc = c->fn(argc - argi, argv + argi);
	kg_json_errors_finish(rc);
	/* Once libcupti and libnvperf_host were loaded (to check metric names),
	 * their exit-time destructors are not kgate's to run: the command is
	 * done, and its exit status must not depend on how they tear down. */
	if (metricinfo_loaded()) {
		if (fflush(NULL) != 0 && rc == KG_EXIT_PASS)
			rc = KG_EXIT_RUNTIME;
		_exit(rc);
	}
	return rc;
}
