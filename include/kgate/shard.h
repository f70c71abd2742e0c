/*
 * shard.h: a suite run in shards and put together again.
 *
 * "kgate run --shard I/N" runs the I-th of N slices of the suite and
 * stores it as a run of status "shard I/N" (with --quick, "shard I/N
 * quick"), which no check, report or baseline takes as a whole run.  The
 * slices are balanced by each benchmark's wall time as the newest complete
 * run stored with it recorded (per measured process, times the warmup and
 * repeats to come), and by count where no time is known; the plan depends
 * only on the suite and that run, so shards that read the same history
 * split the suite alike.  "kgate merge" finds the commit's shards (in the
 * database itself, or in part databases given to it: each shard's own
 * SQLite file, uploaded as a CI artifact), refuses missing shards, shards
 * of different GPU models, drivers, CUDA or collector versions or suites,
 * benchmarks run by two shards or by none, takes the newest of a shard
 * stored twice (and says so), and stores the parts as one run in one
 * transaction.
 */
#ifndef KGATE_SHARD_H
#define KGATE_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "kgate/store.h"

#define KG_SHARD_MAX 1000

/* "I/N" with 1 <= I <= N <= KG_SHARD_MAX: 0, or KG_EXIT_USAGE said. */
int shard_parse(const char *arg, int *i, int *n);
/* The status of part i of n (malloc'd). */
char *shard_status(int i, int n, int quick);
/* Whether status is a part's (1, with *i, *n, *quick) or not (0). */
int shard_of_status(const char *status, int *i, int *n, int *quick);

/*
 * Which shard (0 .. nshards-1) each of the n benchmarks names[] goes to,
 * into shard[]; steps[i] is how many processes benchmark i will run
 * (warmup and repeats).  st (may be NULL) gives the recorded wall times.
 * basis says what the plan was balanced by ("wall times of run 7",
 * "count").  0 or KG_EXIT_RUNTIME.
 */
int shard_plan(struct kg_store *st, const char *const *names, const int *steps, size_t n,
	       int nshards, int *shard, char *basis, size_t len);

/*
 * Put the shards of commit together as one run in dst (named dst_name in
 * messages).  parts[0 .. nparts) are the databases holding the shards; none:
 * dst itself.  expect[0 .. nexpect) (may be empty) are the benchmarks the
 * suite has: each must be in exactly one shard.  report gets the details
 * (JSON object); *run the merged run's id (or the id of the run that
 * already is that merge).  0, KG_EXIT_USAGE (missing, mismatched or
 * overlapping shards, said) or KG_EXIT_RUNTIME.
 */
int shard_merge(struct kg_store *dst, const char *dst_name, char *const *parts, size_t nparts,
		const char *commit, char *const *expect, size_t nexpect, json_t *report,
		int64_t *run);

#endif
