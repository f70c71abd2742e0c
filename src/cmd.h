/*
 * cmd.h: the command table of the kgate CLI.
 *
 * Each subcommand lives in its own file, src/cmd_<name>.c, and exports one
 * entry point, cmd_<name>(argc, argv), which receives argv with argv[0] set
 * to the command's name and returns an enum kg_exit.  KG_COMMANDS lists
 * them once: it declares the functions here, and main.c builds from it the
 * table that maps names to them.  Each command parses its
 * options through opt.h, from one table that also prints its --help.
 */
#ifndef KGATE_CMD_H
#define KGATE_CMD_H

struct kg_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/* The commands, in the order "kgate help" lists them: X(name, summary)
 * for each cmd_<name>().  A new command is one line here. */
#define KG_COMMANDS(X)                                                                          \
	X(run, "run the benchmark suite under the collector and store the run")                 \
	X(compare, "run base and head builds interleaved and check head against base")          \
	X(ingest, "store a records file or an Nsight Compute CSV export as a run")              \
	X(check, "compare a run against its baseline and print the verdicts")                   \
	X(report, "write the HTML trend report, optionally post a summary")                     \
	X(explain, "say why a kernel regressed, from counter deltas")                           \
	X(hook, "install the pre-push hook")                                                    \
	X(stats, "per-kernel and per-NVTX-range summary tables of a run")                       \
	X(comment, "create or update the pull request comment")                                 \
	X(metrics, "validate metric names and count replay passes, offline")                    \
	X(merge, "put the shards of a sharded run (kgate run --shard) together as one run")     \
	X(db, "copy runs between databases (SQLite, PostgreSQL), duplicates skipped")           \
	X(bisect, "find the commit at which a kernel got slower (git bisect run)")

#define KG_CMD_DECLARE(name, summary) int cmd_##name(int argc, char **argv);
KG_COMMANDS(KG_CMD_DECLARE)
#undef KG_CMD_DECLARE

/* The table, for "kgate help". */
extern const struct kg_cmd kg_commands[];

#endif
