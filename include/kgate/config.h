/*
 * config.h: the suite file (kgate.yaml) and thresholds files, parsed.
 *
 * config.c owns parsing (libyaml, through a schema table), validation and
 * the lookup of the rule that applies to one (benchmark, NVTX path, kernel,
 * metric).  Loaders report every problem at once on stderr as
 * "file:line:column: message" and return KG_EXIT_USAGE; they return
 * KG_EXIT_PASS and fill *out on success.
 */
#ifndef KGATE_CONFIG_H
#define KGATE_CONFIG_H

#include <regex.h>
#include <stddef.h>

#include "kgate/util.h"

/* Which of a kernel's names a kernel name or regex is matched against
 * (kernel_name_base, as ncu's --kernel-name-base): any (the default: the
 * mangled and the demangled name, and for an exact name the function's
 * base name too), or the one named. */
enum kg_name_base { KG_NAME_ANY = 0, KG_NAME_FUNCTION, KG_NAME_DEMANGLED, KG_NAME_MANGLED };

/* What a new/missing/inconclusive comparison does to the exit status. */
enum kg_policy { KG_POLICY_IGNORE = 0, KG_POLICY_WARN, KG_POLICY_FAIL };

/* The limits on one metric; has_* says which were given. */
struct kg_metric_rule {
	char *metric;
	int has_regression;
	double regression;      /* relative: 3% is 0.03 */
	int has_min, has_max;
	double min, max;        /* absolute bounds, in the metric's unit */
	int deterministic;      /* -1 not said, 0 noisy, 1 compared exactly */
	int line, column;       /* where it was written, for messages */
	int has_tolerance;
	double tolerance;       /* deterministic: relative slack, 0.01% is 0.0001 */
	int better;             /* enum kg_better (metric.h); 0 not said */
	int on_change;          /* deterministic: what a change does: 0 not said
	                           (report for the launch configuration,
	                           metric_is_launch_config; fail otherwise),
	                           KG_ON_CHANGE_REPORT or KG_ON_CHANGE_FAIL */
};
#define KG_ON_CHANGE_REPORT 1
#define KG_ON_CHANGE_FAIL 2

struct kg_match {
	char *benchmark;        /* exact name, or NULL for any */
	char *kernel;           /* exact (mangled or demangled name), or NULL */
	int kernel_is_regex;    /* "regex:..." given: kernel_re is compiled */
	regex_t kernel_re;      /* POSIX extended, matched on both names */
	char *nvtx;             /* fnmatch(3) glob on the NVTX path, or NULL */
	int has_rank;           /* rank: given; a series without a rank never fits */
	int rank;
};

/* An entry of `ignore:`: what it matches is neither compared nor reported
 * as new or missing. */
struct kg_ignore {
	struct kg_match match;
	int line, column;
};

struct kg_rule {
	struct kg_match match;
	struct kg_metric_rule *metrics;
	size_t n_metrics;
	int line, column;
};

struct kg_thresholds {
	char *path;
	double alpha;           /* default 0.001 */
	int min_samples;        /* default 7 */
	int baseline_runs;      /* default 5 */
	int pool_ranks;         /* statistics: pool_ranks: true: the ranks of a
	                           distributed job judged as one (default false) */
	struct kg_metric_rule *defaults;
	size_t n_defaults;
	struct kg_rule *rules;
	size_t n_rules;
	struct kg_ignore *ignore;  /* kernels and ranges not gated at all */
	size_t n_ignore;
	enum kg_policy on_new_kernel;     /* default WARN */
	enum kg_policy on_missing_kernel; /* default FAIL */
	enum kg_policy on_inconclusive;   /* default WARN */
	enum kg_policy on_no_baseline;    /* WARN (default) or FAIL: a check
	                                     with nothing to compare with */
	enum kg_name_base name_base;      /* kernel_name_base of kernel: keys */
	enum kg_policy on_ungated_metric; /* default WARN: a metric the
	                                     thresholds gate that neither run of
	                                     a compared benchmark has */
};

enum kg_collect_mode { KG_MODE_TRACE = 0, KG_MODE_METRICS };
enum kg_replay { KG_REPLAY_KERNEL = 0, KG_REPLAY_APPLICATION, KG_REPLAY_STEP };
/* collector: cache_control; unset leaves the collector's default (all) */
enum kg_cache_control { KG_CACHE_UNSET = 0, KG_CACHE_ALL, KG_CACHE_NONE };

struct kg_collector_cfg {
	enum kg_collect_mode mode;
	char **metrics;         /* NULL-terminated; NULL means the default set */
	size_t n_metrics;
	char *kernels;          /* "regex:..." or exact name, or NULL for all */
	enum kg_name_base name_base; /* which name kernels is matched against */
	long launch_skip;       /* default 0 */
	long launch_count;      /* default 0: no limit */
	enum kg_replay replay;
	enum kg_cache_control cache_control;
	char *step_range;       /* replay: step: the NVTX range of a step; NULL: "step" */
};

struct kg_benchmark {
	char *name;
	char **cmd;             /* argv, NULL-terminated */
	size_t argc;
	int repeat;             /* default 10 */
	int warmup;             /* default 1 */
	int quick_repeat;       /* repeats in --quick mode (pre-push), default 3 */
	double timeout_s;       /* default 600 */
	char **env;             /* "NAME=value", NULL-terminated */
	size_t n_env;
	char *workdir;          /* NULL: the suite file's directory */
	int line, column;
};

struct kg_suite {
	char *path;
	char *dir;              /* directory of the suite file */
	char *thresholds;       /* path, resolved against dir; NULL if not given */
	struct kg_collector_cfg collector;
	int require_idle_gpu;   /* refuse to run while another process computes on the GPU */
	double idle_wait_s;     /* how long to wait for it to end first (default 300 s) */
	struct kg_benchmark *benchmarks;
	size_t n_benchmarks;
};

/* Limits on input files. */
#define KG_CONFIG_MAX_BYTES (4u << 20)  /* 4 MiB */
#define KG_CONFIG_MAX_DEPTH 32          /* nested mappings and lists */
#define KG_CONFIG_MAX_NODES (1u << 18)  /* values (keys count too) */

int config_load_suite(const char *path, struct kg_suite **out);
/* The suite file a command reads when not told: kgate.yaml in the working
 * directory or the nearest directory above it (up to the repository's top
 * level: kg_find_up), else "kgate.yaml" (which may not exist). */
const char *config_default_suite(void);
void config_free_suite(struct kg_suite *s);
/* The benchmark of s named name, or NULL. */
const struct kg_benchmark *config_find_benchmark(const struct kg_suite *s, const char *name);

int config_load_thresholds(const char *path, struct kg_thresholds **out);
/* Built-in thresholds, used when no file is given (same as thresholds/default.yaml). */
struct kg_thresholds *config_default_thresholds(void);
void config_free_thresholds(struct kg_thresholds *t);

/*
 * The rule for one metric of one kernel identity: the defaults entry for the
 * metric, overlaid field by field by every matching rule in file order (a
 * rule matches when each of its benchmark / kernel / nvtx keys fits; kernel
 * is compared with both kernel and demangled, either may be NULL; a NULL
 * nvtx is the empty path "").  *out is always filled (its strings point
 * into t; metric is NULL and deterministic -1 when nothing names the
 * metric).  Returns 1 when a limit applies (regression, min, max or
 * deterministic: true), else 0.
 */
int config_rule_for(const struct kg_thresholds *t, const char *benchmark,
		    const char *nvtx, const char *kernel, const char *demangled,
		    const char *metric, struct kg_metric_rule *out);
/* 1 when an `ignore:` entry of t matches the kernel of that rank (-1: of
 * none; an entry with a rank: never matches it) (config_rule_for then gives
 * no limit, and the gate says nothing of it), else 0. */
int config_ignored(const struct kg_thresholds *t, const char *benchmark, const char *nvtx,
		   const char *kernel, const char *demangled, int rank);
/* The same for the series of one rank of a distributed job (rank >= 0), or
 * of none (-1: rules with a rank: match do not apply). */
int config_rule_for_rank(const struct kg_thresholds *t, const char *benchmark,
			 const char *nvtx, const char *kernel, const char *demangled, int rank,
			 const char *metric, struct kg_metric_rule *out);

/* Strict value parsers, shared with the command line: "3%", "0.5%" ->
 * fraction; "60s", "5m", "1h", "250ms", "30d" -> seconds.  0 ok, -1 bad. */
/*
 * The loaders without the file: parse text (len bytes, need not be
 * NUL-terminated) that came from the file named name.  Every problem is
 * appended to errs as one "name:line:column: message\n" line, sorted by
 * position; nothing is printed.  KG_EXIT_PASS and *out filled, or
 * KG_EXIT_USAGE and *out NULL.
 */
int config_parse_suite(const char *name, const char *text, size_t len,
		       struct kg_suite **out, struct kg_buf *errs);
int config_parse_thresholds(const char *name, const char *text, size_t len,
			    struct kg_thresholds **out, struct kg_buf *errs);

/* The text of thresholds/default.yaml, built in (NUL-terminated). */
const char *config_default_thresholds_text(size_t *len);

int config_parse_percent(const char *s, double *out);
int config_parse_duration(const char *s, double *out);

#endif
