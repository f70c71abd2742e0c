/*
 * records_format.h: the records file, the contract between libkgate-collector.so
 * (which writes it) and the CLI (records.c, which reads it).  docs/records.md
 * is the full description; this header holds the names both sides use.
 *
 * A records file is JSON Lines: one object per line, each with a "type".
 *
 *   {"type":"header","format":2,"collector":"0.1.0","cupti":130000,
 *    "mode":"trace"|"metrics","pid":123,"ppid":1,"pass":0,"passes":1,
 *    "replay":"kernel"|"application"|"user"|"step","argv":["..."],"time":1764720000,
 *    "rank":1,"rank_from":"RANK","local_rank":1,"world_size":2,
 *    "devices":[{"id":0,"name":"NVIDIA H200","uuid":"GPU-...","chip":"GH100",
 *                "sms":132,"cc":"9.0","driver":13000,"runtime":13000}],
 *    "metrics":["gpu__time_duration.sum", ...]}
 *   {"type":"kernel","ordinal":0,"name":"_Z5saxpyifPKfPf","device":0,
 *    "context":1,"stream":7,"corr":42,"start":123,"end":456,
 *    "grid":[1,1,1],"block":[256,1,1],"regs":16,"smem_static":0,
 *    "smem_dynamic":0,"local_per_thread":0,"nvtx":"step/forward",
 *    "metrics":{"gpu__time_duration.sum":3300.0, ...}}
 *   {"type":"error","code":"insufficient_privileges","cupti":35,
 *    "message":"..."}
 *   {"type":"footer","kernels":1000,"dropped":0,"errors":0}
 *
 * The header is the first line, the footer the last; a file without its
 * footer came from a process that died and is rejected by ingest.  "ordinal"
 * counts launches in the process from 0 (the key application replay joins
 * passes on).  "start"/"end" are CUPTI timestamps in ns.  In trace mode
 * "metrics" holds gpu__time_duration.sum (end - start, ns) and the launch
 * configuration metrics below; in metrics mode the profiler's values too.
 */
#ifndef KGATE_RECORDS_FORMAT_H
#define KGATE_RECORDS_FORMAT_H

#include <stddef.h>

#define KG_RECORDS_FORMAT 2
/* The oldest format this kgate still reads (format 1: no rank, no device
 * names per launch; read as a single-process run). */
#define KG_RECORDS_FORMAT_MIN 1

/* Where a process's rank in a distributed job comes from: the first of these
 * that is set to a non-negative integer (torchrun, Open MPI, MPICH/Hydra,
 * Slurm), as a comma-separated list of string literals. */
#define KG_ENV_RANKS "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"
#define KG_ENV_LOCAL_RANKS "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", \
	"SLURM_LOCALID"
#define KG_ENV_WORLD_SIZES "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"

/* Environment the runner sets for the collector. */
#define KG_ENV_RECORDS      "KGATE_RECORDS"       /* output path; "%p" -> pid */
#define KG_ENV_MODE         "KGATE_MODE"          /* trace | metrics */
#define KG_ENV_METRICS      "KGATE_METRICS"       /* comma-separated names */
#define KG_ENV_KERNELS      "KGATE_KERNELS"       /* "regex:..." or exact name */
#define KG_ENV_NAME_BASE    "KGATE_KERNEL_NAME_BASE" /* function | demangled | mangled */
#define KG_ENV_LAUNCH_SKIP  "KGATE_LAUNCH_SKIP"
#define KG_ENV_LAUNCH_COUNT "KGATE_LAUNCH_COUNT"
#define KG_ENV_REPLAY       "KGATE_REPLAY"        /* kernel | application | step */
#define KG_ENV_STEP_RANGE   "KGATE_STEP_RANGE"    /* step replay: the NVTX range of a step */
#define KG_ENV_ENGINE       "KGATE_ENGINE"        /* metrics mode: range | sampling */
#define KG_ENV_PASS         "KGATE_PASS"          /* application replay: pass index */
#define KG_ENV_CACHE_CONTROL "KGATE_CACHE_CONTROL" /* metrics mode: all | none */
#define KG_ENV_RANGE        "KGATE_RANGE"         /* session ranges: auto | user */
#define KG_ENV_DURATION     "KGATE_DURATION"      /* session duration: range | events */
#define KG_ENV_CACHE_FLUSH  "KGATE_CACHE_FLUSH"   /* where the flush runs: context | stream */
#define KG_ENV_FLUSH_MS     "KGATE_FLUSH_MS"      /* periodic flush, default 500 */
#define KG_ENV_DEBUG        "KGATE_DEBUG"         /* 1: the profiler's decisions on stderr */

/* Metrics the collector derives from activity records (deterministic). */
#define KG_M_DURATION   "gpu__time_duration.sum"   /* ns, noisy */
#define KG_M_GRID       "launch__grid_size"
#define KG_M_BLOCK      "launch__block_size"
#define KG_M_REGS       "launch__registers_per_thread"
#define KG_M_SMEM_ST    "launch__shared_mem_per_block_static"
#define KG_M_SMEM_DYN   "launch__shared_mem_per_block_dynamic"
#define KG_M_LOCAL      "launch__local_mem_per_thread"   /* spills */

/*
 * Offline queries the collector library exports for the CLI (metricinfo.c
 * loads them with dlopen).  Each returns 0 on success, or -1 with a message
 * copied into err (NUL-terminated, at most errlen bytes).
 */
typedef int (*kgate_metrics_list_fn)(const char *chip, char ***names, size_t *n,
				     char *err, size_t errlen);
typedef int (*kgate_metrics_passes_fn)(const char *chip, const char *const *metrics,
				       size_t n, int *passes, char *err, size_t errlen);
#define KG_SYM_METRICS_LIST   "kgate_metrics_list"
#define KG_SYM_METRICS_PASSES "kgate_metrics_passes"
/* The default metric set of metrics mode (single-pass on GH100), as a
 * NULL-terminated list owned by the library. */
typedef const char *const *(*kgate_metrics_default_fn)(void);
#define KG_SYM_METRICS_DEFAULT "kgate_metrics_default"

#endif
