/*
 * check.h: one check, from stored runs to printed verdicts.
 *
 * check.c owns what "kgate check" and "kgate compare" share: choosing the
 * baseline runs of a head run (same GPU model and driver, up to
 * baseline_runs of them), loading both sample sets, running the gate,
 * rendering the verdicts in the chosen format, writing the GitHub job
 * summary when $GITHUB_STEP_SUMMARY names a file, and storing the verdicts.
 */
#ifndef KGATE_CHECK_H
#define KGATE_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "kgate/config.h"
#include "kgate/output.h"
#include "kgate/store.h"

/* One more rendering of a check, written to a file (--output FORMAT=FILE). */
struct kg_check_output {
	enum kg_format format;
	const char *path;
};

struct kg_confirm;
struct kg_gate;

struct kg_check_opts {
	enum kg_format format;
	int color;              /* colour in text output */
	FILE *out;              /* where the verdicts go (stdout) */
	int store_verdicts;     /* 1: write them to the verdicts table */
	int summary;            /* 1: append markdown to $GITHUB_STEP_SUMMARY if set */
	int all;                /* 1: list passing comparisons too */
	int explain;            /* 1: explain each FAIL (explain.c): text and markdown
	                           after the verdicts, a "why" field in json */
	const char *no_baseline_note; /* why there is no baseline (check_find_sides'
	                           note), shown with the NO BASELINE verdict */
	const struct kg_check_output *outputs; /* more renderings of the one outcome */
	size_t n_outputs;
	const struct kg_confirm *confirm; /* compare --confirm: verdicts settled on
	                           confirmation rounds (confirm.h), or NULL */
};

/*
 * The gate of head against base as check_runs() computes it, without
 * rendering or storing (compare --confirm screens and decides with it).
 * g's strings point into *hs and *bs: free g first.  0 or KG_EXIT_RUNTIME;
 * no benchmark in common leaves g empty.
 */
int check_gate(struct kg_store *st, const struct kg_thresholds *t,
	       const struct kg_run_info *head, const struct kg_run_info *base, size_t n_base,
	       struct kg_sampleset *hs, struct kg_sampleset *bs, struct kg_gate *g);

/*
 * Gate run head against the runs base[0..n_base) (all already chosen by
 * the caller) under t.  baseline names the baseline for headings and the
 * verdicts table ("origin/main", a SHA, "compare base").  Only benchmarks
 * that both sides ran are compared (check_partial); with no baseline run,
 * or none in common, the verdict is NO BASELINE (on_no_baseline decides
 * the exit status).  The outcome (check_decide) is rendered, and stored
 * with the verdicts.  Returns its exit status (KG_EXIT_PASS or
 * KG_EXIT_REGRESSION), or KG_EXIT_RUNTIME on a database error.
 */
int check_runs(struct kg_store *st, const struct kg_thresholds *t,
	       const struct kg_run_info *head, const struct kg_run_info *base,
	       size_t n_base, const char *baseline, const struct kg_check_opts *o);

/* A run's device set (runs.devices) as people read it, each model once
 * with its count: "2 x NVIDIA H200"; NULL when not known.  malloc'd. */
char *check_device_set(const char *devices);

/*
 * The baseline runs of head for a ref: the stored runs of commit ref_sha
 * with head's GPU name and driver, newest first, at most limit.  *n is 0
 * (not an error) when there are none.  0 or KG_EXIT_RUNTIME.
 */
int check_find_baseline(struct kg_store *st, const struct kg_run_info *head,
			const char *ref_sha, size_t limit,
			struct kg_run_info **runs, size_t *n);

/*
 * The baseline commit of head for "kgate check" and "kgate explain": ref
 * when given (a stored commit, or a ref git resolves), else the merge base
 * with the default branch (its parent when head is on it), else the newest
 * stored commit of the default branch.  *sha and *label are malloc'd; sha
 * is NULL with KG_EXIT_PASS when there is none.
 */
int check_pick_baseline(struct kg_store *st, const struct kg_run_info *head, const char *ref,
			char **sha, char **label, char **note);

/*
 * The two sides of a check, as "kgate check" and "kgate explain" choose
 * them: *head the newest stored run of commit (NULL: git's HEAD; a unique
 * prefix of a stored commit is enough), *bsha and *blabel the baseline
 * (check_pick_baseline's, from ref), *base the baseline's runs on head's
 * GPU model and driver, at most limit (*n_base 0 when there are none, or
 * no baseline: not an error; *note says why, when note is not NULL).  No
 * head run, or no commit, or a ref given whose commit has no run on head's
 * GPU model and driver (the error says what is stored for that GPU):
 * KG_EXIT_USAGE.  Everything malloc'd, NULL where not found, and set also
 * when an error comes after it was found: the caller frees *head (one run),
 * *base (*n_base runs), *bsha and *blabel either way.
 */
int check_find_sides(struct kg_store *st, const char *commit, const char *ref, size_t limit,
		     struct kg_run_info **head, struct kg_run_info **base, size_t *n_base,
		     char **bsha, char **blabel, char **note);
/* Frees what check_find_sides found (any of it may be NULL). */
void check_sides_free(struct kg_run_info *head, struct kg_run_info *base, size_t n_base,
		      char *bsha, char *blabel, char *note);

/* A commit as given on the command line: itself when a run is stored
 * under exactly that text, else the full SHA git resolves it to (a short
 * SHA, a ref), else itself (a label, or a prefix of a stored commit).
 * malloc'd; NULL when c is NULL. */
char *check_resolve_commit(struct kg_store *st, const char *c);

/*
 * Partial runs: the benchmarks (store_run_benchmarks) the head run and
 * any of the base runs both ran, in *common (NULL-terminated, free with
 * store_names_free), and in *not_compared (malloc'd, or NULL when every
 * benchmark is on both sides) which were not compared and why.
 */
int check_partial(struct kg_store *st, const struct kg_run_info *head,
		  const struct kg_run_info *base, size_t n_base, char ***common, size_t *n_common,
		  char **not_compared);

/* The outcome of a check, decided once from the gate's rows under t's
 * policies (no_baseline: nothing was compared).  Fills every field of o
 * but note and not_compared. */
struct kg_gate;
struct kg_outcome;
void check_decide(const struct kg_thresholds *t, const struct kg_gate *g, int no_baseline,
		  struct kg_outcome *o);

/* The samples of the head run and of the n_base baseline runs. */
int check_load_samples(struct kg_store *st, const struct kg_run_info *head,
		       const struct kg_run_info *base, size_t n_base,
		       struct kg_sampleset *hs, struct kg_sampleset *bs);

/* The thresholds of a check: the file thresholds when given, else the
 * one the suite file names (when suite_given, or suite exists), else the
 * built-in ones.  An enum kg_exit; errors are printed. */
struct kg_thresholds;
int check_load_thresholds(const char *thresholds, const char *suite, int suite_given,
			  struct kg_thresholds **t);

/* How a check names its baseline (stored with verdicts and explanations):
 * the full commit "<sha>", "<sha> (<reason>)" when label says why it was
 * chosen or is another name for it ("merge base with main", "main"),
 * "(no baseline)" when sha is NULL.  base_commit is the commit of the
 * newest baseline run (NULL when none).  Human outputs shorten the SHA
 * (kg_sha_short).  malloc'd. */
char *check_baseline_label(const char *sha, const char *label, const char *base_commit);
/* A label of check_baseline_label split into the commit (*sha, NULL for
 * "(no baseline)") and why it was chosen (*reason, NULL when the label
 * gives none); both malloc'd. */
void check_baseline_split(const char *label, char **sha, char **reason);

#endif
