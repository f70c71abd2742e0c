/*
 * main.c: kgate's entry point and its command table.
 *
 * Finds the subcommand named by argv[1] in kg_commands[] and calls it with
 * the rest of argv; handles the few options that belong to kgate itself
 * (--help, --version) and "kgate help COMMAND".  Nothing else lives here.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "kgate/kgate.h"
#include "kgate/metricinfo.h"
#include "kgate/util.h"

const struct kg_cmd kg_commands[] = {
	{ "run",     cmd_run,     "run the benchmark suite under the collector and store the run" },
	{ "compare", cmd_compare, "run base and head builds interleaved and check head against base" },
	{ "ingest",  cmd_ingest,  "store a records file or an Nsight Compute CSV export as a run" },
	{ "check",   cmd_check,   "compare a run against its baseline and print the verdicts" },
	{ "report",  cmd_report,  "write the HTML trend report, optionally post a summary" },
	{ "explain", cmd_explain, "say why a kernel regressed, from counter deltas" },
	{ "hook",    cmd_hook,    "install the pre-push hook" },
	{ "stats",   cmd_stats,   "per-kernel and per-NVTX-range summary tables of a run" },
	{ "comment", cmd_comment, "create or update the pull request comment" },
	{ "metrics", cmd_metrics, "validate metric names and count replay passes, offline" },
	{ "bisect",  cmd_bisect,  "find the commit at which a kernel got slower (git bisect run)" },
	{ NULL, NULL, NULL }
};

static void usage(FILE *fp)
{
	fprintf(fp, "usage: kgate [--version] [--help] <command> [<args>]\n\n"
		    "commands:\n");
	for (const struct kg_cmd *c = kg_commands; c->name; c++)
		fprintf(fp, "   %-9s %s\n", c->name, c->summary);
	fprintf(fp, "\n'kgate <command> --help' describes a command; 'man kgate' has it all.\n"
		    "exit status: 0 pass, 1 regression, 2 usage or input error, 3 runtime failure\n"
		    "environment: KGATE_DB names the database where --db is not given (default\n"
		    "   kgate.db; a path or sqlite:PATH)\n");
}

static const struct kg_cmd *find_cmd(const char *name)
{
	for (const struct kg_cmd *c = kg_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

int cmd_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	}
	return 0;
}

int cmd_option_error(const char *cmd, int c, char **argv)
{
	const char *word = optind > 0 ? argv[optind - 1] : "?";
	char shortopt[3] = { '-', (char)optopt, '\0' };

	/* a short option inside a cluster ("-vx") is named on its own */
	if (optopt && strncmp(word, "--", 2) != 0)
		word = shortopt;
	if (c == ':')
		kg_error("option '%s' needs a value", word);
	else
		kg_error("unknown option '%s'; see 'kgate %s --help'", word, cmd);
	return KG_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return KG_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		usage(stdout);
		return KG_EXIT_PASS;
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
		printf("kgate %s\n", KGATE_VERSION);
		return KG_EXIT_PASS;
	}
	if (strcmp(name, "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return KG_EXIT_PASS;
		}
		const struct kg_cmd *c = find_cmd(argv[2]);
		if (!c) {
			kg_error("'%s' is not a kgate command; see 'kgate --help'", argv[2]);
			return KG_EXIT_USAGE;
		}
		char *args[] = { (char *)c->name, "--help", NULL };
		return c->fn(2, args);
	}
	const struct kg_cmd *c = find_cmd(name);
	if (!c) {
		const char *names[32];
		size_t n = 0;
		for (const struct kg_cmd *k = kg_commands; k->name && n < 32; k++)
			names[n++] = k->name;
		const char *near = kg_suggest(name, names, n);
		if (near)
			kg_error("'%s' is not a kgate command; did you mean '%s'?", name, near);
		else
			kg_error("'%s' is not a kgate command; see 'kgate --help'", name);
		return KG_EXIT_USAGE;
	}
	int rc = c->fn(argc - 1, argv + 1);
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
