/*
 * cmd.h: the command table of the kgate CLI.
 *
 * Each subcommand lives in its own file, src/cmd_<name>.c, and exports one
 * entry point, cmd_<name>(argc, argv), which receives argv with argv[0] set
 * to the command's name and returns an enum kg_exit.  main.c holds the one
 * table that maps names to these functions.  Each command parses its
 * options through opt.h, from one table that also prints its --help.
 */
#ifndef KGATE_CMD_H
#define KGATE_CMD_H

struct kg_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

int cmd_run(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_hook(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_comment(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
int cmd_bisect(int argc, char **argv);
int cmd_db(int argc, char **argv);
int cmd_merge(int argc, char **argv);

/* The table, for "kgate help". */
extern const struct kg_cmd kg_commands[];

#endif
