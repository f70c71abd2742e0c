/*
 * suiterun.h: running a suite's benchmarks and storing what they recorded.
 *
 * suiterun.c owns what "kgate run" and "kgate compare" share: one scratch
 * directory for the records files, the collector's environment, one repeat
 * of one benchmark (every application-replay pass of it, every child
 * process's records file), the failure message when a repeat goes wrong,
 * and storing a set of records files as one run in one transaction.
 */
#ifndef KGATE_SUITERUN_H
#define KGATE_SUITERUN_H

#include <stddef.h>

#include "kgate/config.h"
#include "kgate/gpustate.h"
#include "kgate/store.h"

struct kg_suiterun {
	char *collector;        /* libkgate-collector.so */
	char *nvtx;             /* NVTX_INJECTION64_PATH: the collector, or NULL */
	char *scratch;          /* directory of the records files */
	int passthrough;        /* copy benchmark output to stderr */
	int progress;           /* print "[i/n] name (repeat r) ..." on stderr */
	int inplace;            /* rewrite it in place (a terminal), else lines */
	int step, steps;        /* progress counters */
	double start;           /* monotonic seconds at the first step */
	unsigned seq;           /* unique prefix per process run */
	struct kg_nvml *nvml;   /* the GPUs' state around each process (gpustate.h) */
	int idle_unknown_said;  /* "cannot tell whether the GPU is idle" said once */
};

/* The records files of one benchmark on one side: path and repeat. */
struct kg_recset {
	char **path;
	int *repeat;
	struct kg_run_info *fp; /* each file's GPU fingerprint, from its header */
	size_t n;
	double wall_s;          /* summed over the measured processes */
	int processes;          /* measured process runs */
	/* What each GPU was doing around the measured processes, per device
	 * (gpu_uuid[i] names the device of gpu[i]); gpu_why says why nothing
	 * was read when ngpu is 0. */
	struct kg_gpu_summary *gpu;
	char (*gpu_uuid)[96];
	size_t ngpu;
	char gpu_why[160];
};

/* Find the collector, make the scratch directory.  0 or KG_EXIT_RUNTIME. */
int suiterun_init(struct kg_suiterun *sr);
/* Remove the scratch directory and its files. */
void suiterun_free(struct kg_suiterun *sr);

/* The suite of a checkout: cfg relative to dir unless absolute (as
 * "kgate compare --base-dir" finds it).  0, or KG_EXIT_USAGE said. */
int suiterun_load_suite(const char *dir, const char *cfg, struct kg_suite **s);

/*
 * Run benchmark b of suite s once: repeat >= 0 is measured (its records
 * files are appended to acc), repeat < 0 is warmup number -repeat-1 (its
 * records are checked, then dropped).  workdir overrides b->workdir and the
 * suite's directory when not NULL.  tag ("base"/"head", or NULL) goes in
 * messages.  On failure prints
 *   kgate: benchmark 'NAME' <what happened> (repeat i)
 * and its last stderr lines, and returns KG_EXIT_RUNTIME.
 */
int suiterun_once(struct kg_suiterun *sr, const struct kg_suite *s,
		  const struct kg_benchmark *b, const char *tag, int repeat,
		  struct kg_recset *acc);
void suiterun_recset_free(struct kg_recset *rs);
/* suiterun_recset_free on each of the n in sets, then free(sets); NULL: nothing. */
void suiterun_recsets_free(struct kg_recset *sets, size_t n);

struct kg_bench_summary {
	const char *name;
	size_t launches, samples, kernels;
	double wall_s;
	int processes;
};

/*
 * Store the records of every benchmark (sets[i] belongs to benchmarks
 * names[i]) as one run: the GPU fingerprint from the headers (all must name
 * one GPU model), store_run_begin, the records importer (import.h) on every file,
 * store_run_commit; any error aborts, leaving nothing.  sum[i] is filled
 * when sum is not NULL.  0, KG_EXIT_USAGE (bad records) or KG_EXIT_RUNTIME.
 */
int suiterun_store(struct kg_store *st, struct kg_run_info *run, const char *const *names,
		   const struct kg_recset *sets, size_t n, struct kg_bench_summary *sum);

#endif
