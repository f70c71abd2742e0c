/*
 * runcopy.h: runs rewritten from one store into another, through the store
 * API alone, so that any backend meets any other ("kgate db copy", "kgate
 * merge").
 *
 * A run's identity is what says where and when it was measured: commit,
 * time, host, the GPU fingerprint (name, UUID, chip, driver, CUDA),
 * collector, suite hash, source, label, status and the set of benchmarks
 * it ran.  Its content digest covers every sample (benchmark, NVTX path,
 * kernel, metric, repeat, ordinal, value's bits) and every benchmark's GPU
 * state; the digest is a sum of per-row hashes, so it does not depend on
 * the order rows are read in, and the digest of runs put together is the
 * sum of theirs.  Two runs of one identity are the same run (a duplicate)
 * when their digests agree, and a conflict when they do not.
 */
#ifndef KGATE_RUNCOPY_H
#define KGATE_RUNCOPY_H

#include <stddef.h>
#include <stdint.h>

#include "kgate/store.h"

struct kg_run_digest {
	uint64_t samples_hash;  /* sum of the samples' row hashes */
	uint64_t states_hash;   /* sum of the (benchmark, GPU state) hashes */
	int64_t samples;        /* how many samples */
};

/* The content digest of run id of st.  0 or KG_EXIT_RUNTIME. */
int runcopy_digest(struct kg_store *st, int64_t id, struct kg_run_digest *d);
int runcopy_digest_equal(const struct kg_run_digest *a, const struct kg_run_digest *b);
void runcopy_digest_add(struct kg_run_digest *sum, const struct kg_run_digest *d);

/* Whether a and b have one identity, their benchmark sets aside (1 or 0). */
int runcopy_same_fields(const struct kg_run_info *a, const struct kg_run_info *b);

/* Write run id of src into the run open in dst: its samples, its benchmarks
 * and their GPU states (without beginning or committing it).  *samples
 * counts the samples written; d (may be NULL) gets the run's digest. */
int runcopy_contents(struct kg_store *src, int64_t id, struct kg_store *dst, size_t *samples,
		     struct kg_run_digest *d);

/* A run of dst with the identity of run (whose benchmarks are bench[0 .. nb),
 * sorted) and digest d: *dup its id when one has d, *conflict its id when
 * one has another digest (0: none). */
int runcopy_find(struct kg_store *dst, const struct kg_run_info *run, char *const *bench,
		 size_t nb, const struct kg_run_digest *d, int64_t *dup, int64_t *conflict);

#endif
