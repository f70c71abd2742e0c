/*
 * ranks.h: what the processes of a distributed job add to a check.
 *
 * A records file written by a process of a distributed job (torchrun, MPI,
 * Slurm) carries its rank; a kernel's identity then includes the rank, and
 * each rank is judged on its own.  ranks.c names, per kernel and metric
 * compared on several ranks, the rank whose median moved most in the worse
 * direction (the straggler) beside the one that moved least.
 */
#ifndef KGATE_RANKS_H
#define KGATE_RANKS_H

#include <stddef.h>

#include "kgate/gate.h"

struct kg_slowest {
	const struct kg_result *slow;   /* the rank whose median moved most (worse) */
	const struct kg_result *fast;   /* the rank that moved least */
	size_t n_ranks;                 /* ranks compared */
	int any_not_pass;               /* a rank's verdict is not PASS */
};

/* One entry per (benchmark, nvtx, kernel, metric) compared on two ranks or
 * more (noisy metrics only: counters do not straggle), in g's order of
 * first appearance; all 0: only those where a rank's verdict is not PASS.
 * *out is malloc'd (free it); 0 entries leave it NULL. */
void ranks_slowest(const struct kg_gate *g, int all, struct kg_slowest **out, size_t *n);

/*
 * The records files of one benchmark process run (a launcher and its
 * workers), by rank: rank[i] and world[i] of file i (-1: not said).  When
 * any file has a rank, a note says how many files each rank wrote, and a
 * warning names the ranks of the job (0 .. the largest world size, or the
 * largest rank) that wrote none.  name and at name the benchmark run in
 * the messages.  Returns the number of ranks that wrote nothing.
 */
size_t ranks_group(const char *name, const char *at, const int *rank, const int *world, size_t n);

/* 1 when any result of g has a rank. */
int ranks_any(const struct kg_gate *g);

#endif
