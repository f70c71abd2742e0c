/*
 * runner.h: running one benchmark process under the collector.
 *
 * runner.c owns process control for "kgate run" and "kgate compare": it
 * forks the benchmark into its own process group, changes to its working
 * directory, adds its environment, waits with a timeout (SIGTERM to the
 * whole group, then SIGKILL after a grace period), and keeps the last bytes
 * of its stdout and stderr in bounded ring buffers, whatever the benchmark
 * prints.  It also finds the collector library and NVTX's library and builds the
 * collector's environment from the suite's collector section.
 */
#ifndef KGATE_RUNNER_H
#define KGATE_RUNNER_H

#include <stddef.h>

#include "kgate/config.h"

/* Bytes of each output stream kept (the tail). */
#define KG_RUNNER_TAIL_BYTES (64u << 10)
/* Lines of stderr quoted when a benchmark fails. */
#define KG_RUNNER_TAIL_LINES 20

struct kg_runner_spec {
	const char *name;          /* for messages */
	char *const *argv;         /* NULL-terminated; argv[0] found through PATH */
	const char *workdir;       /* NULL: the current directory */
	char *const *env;          /* "NAME=value" added to (or replacing in) the
				    * environment, NULL-terminated, later wins; may be NULL */
	double timeout_s;          /* <= 0: no limit */
	double grace_s;            /* SIGTERM -> SIGKILL; <= 0: 5 s */
	int passthrough;           /* 1: copy the child's stdout and stderr to our stderr */
};

struct kg_runner_result {
	int spawned;               /* 0: it never ran (spawn_error says why) */
	char *spawn_error;         /* malloc'd, or NULL */
	int exited;                /* 1: exited normally, with exit_status */
	int exit_status;
	int signal;                /* killed by this signal, or 0 */
	int timed_out;             /* killed by kgate after timeout_s */
	int interrupted;           /* kgate got SIGINT/SIGTERM/SIGHUP and ended it */
	int leftovers;             /* processes of its group, or processes it moved out
				    * of its group, still ran after it exited (kgate
				    * ended them) */
	int unkillable;            /* processes of it outlived SIGKILL (setuid, or in
				    * uninterruptible sleep); not waited for */
	double wall_s;
	char *out_tail, *err_tail; /* the last KG_RUNNER_TAIL_BYTES, NUL-terminated */
	size_t out_bytes, err_bytes; /* everything it printed */
};

/*
 * Run spec to its end.  Returns 0 when the process ran (its fate is in
 * *res, check runner_ok()), or KG_EXIT_RUNTIME when kgate itself could not
 * start it (no such program, bad workdir, fork failed): res->spawn_error.
 */
int runner_run(const struct kg_runner_spec *spec, struct kg_runner_result *res);
void runner_result_free(struct kg_runner_result *res);

/* Catch SIGINT, SIGTERM and SIGHUP: a benchmark in its own process group
 * does not get the terminal's ^C, so runner_run() passes it on (SIGTERM to
 * the group) and returns with res->interrupted set. */
void runner_catch_signals(void);
/* The signal caught, or 0. */
int runner_interrupted(void);

/* 1 when the process exited with status 0, was not killed and did not time out. */
int runner_ok(const struct kg_runner_result *res);

/* What happened, as a phrase: "exited with status 1", "was killed by signal
 * 11 (Segmentation fault)", "timed out after 60 s".  malloc'd. */
char *runner_describe(const struct kg_runner_result *res, double timeout_s);

/* The last n lines of text (a pointer into text). */
const char *runner_last_lines(const char *text, int n);

/*
 * The collector library: $KGATE_COLLECTOR when set and not empty (it must
 * exist), else libkgate-collector.so next to the kgate binary, else in
 * ../lib/kgate/ relative to it.  malloc'd path, or NULL with a message.
 */
char *runner_find_collector(void);

/* The library for NVTX_INJECTION64_PATH: $KGATE_CUPTI when set, else the
 * collector (it forwards NVTX to the libcupti it is bound to).  malloc'd, or
 * NULL (quietly) when $KGATE_CUPTI names no file. */
char *runner_nvtx_library(const char *collector);

/*
 * The collector's environment for one process, appended to *env (a
 * NULL-terminated array of "NAME=value", *n entries, grown with xrealloc):
 * CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH=nvtx (when not NULL),
 * KGATE_RECORDS=records, and KGATE_MODE / METRICS / KERNELS / LAUNCH_SKIP /
 * LAUNCH_COUNT / REPLAY from cc; KGATE_PASS when pass >= 0.
 */
void runner_collector_env(char ***env, size_t *n, const char *collector, const char *nvtx,
			  const struct kg_collector_cfg *cc, const char *records, int pass);

/* Append one "NAME=value" (a copy) to a NULL-terminated environment array. */
void runner_env_add(char ***env, size_t *n, const char *entry);
void runner_env_free(char **env, size_t n);

#endif
