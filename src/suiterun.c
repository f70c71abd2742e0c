/*
 * suiterun.c: running a suite's benchmarks and storing what they recorded
 * (suiterun.h).
 *
 * Each process run gets a unique file prefix in the scratch directory,
 * "<seq>-<name>.p<pass>.", and KGATE_RECORDS=<scratch>/<prefix>%p.jsonl, so
 * the collector in every child process writes its own file and the files of
 * one process run are found by their prefix afterwards.  A repeat fails when
 * its process fails (exit status, signal, timeout), when it wrote no records
 * file, or when a records file lacks its footer; the failure message names
 * the benchmark and the repeat and quotes the last lines of its stderr.
 *
 * Around every process the state of each GPU is read (gpustate.h: clocks,
 * temperature, power, clock-event reasons, other compute processes) and
 * added to the benchmark's summary for that device; the run stores the
 * summary of the device its records name.  With require_idle_gpu, a process
 * starts only once no other process computes on a GPU (waiting idle_wait).
 */
#include "kgate/escape.h"
#include "kgate/suiterun.h"
#include "kgate/import.h"
#include "kgate/ranks.h"
#include "kgate/records_format.h"
#include "kgate/kgate.h"
#include "kgate/runner.h"
#include "kgate/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_PASSES 64

int suiterun_init(struct kg_suiterun *sr)
{
	memset(sr, 0, sizeof(*sr));
	if (!(sr->collector = runner_find_collector()))
		return KG_EXIT_RUNTIME;
	sr->nvtx = runner_nvtx_library(sr->collector);
	if (!sr->nvtx)
		kg_warn("KGATE_CUPTI names no file; NVTX ranges will not be recorded");
	const char *tmp = getenv("TMPDIR");
	char *tmpl = xasprintf("%s/kgate-run.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(tmpl)) {
		kg_error("cannot create a scratch directory '%s': %s", tmpl, strerror(errno));
		free(tmpl);
		free(sr->collector);
		free(sr->nvtx);
		return KG_EXIT_RUNTIME;
	}
	sr->scratch = tmpl;
	sr->progress = 1;
	sr->inplace = kg_progress_inplace();
	sr->nvml = gpustate_open();
	return KG_EXIT_PASS;
}

void suiterun_free(struct kg_suiterun *sr)
{
	kg_progress_end();
	if (sr->scratch) {
		DIR *d = opendir(sr->scratch);
		struct dirent *e;
		if (d) {
			while ((e = readdir(d))) {
				if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
					continue;
				char *p = xasprintf("%s/%s", sr->scratch, e->d_name);
				unlink(p);
				free(p);
			}
			closedir(d);
		}
		rmdir(sr->scratch);
	}
	free(sr->scratch);
	free(sr->collector);
	free(sr->nvtx);
	gpustate_close(sr->nvml);
	memset(sr, 0, sizeof(*sr));
}

int suiterun_load_suite(const char *dir, const char *cfg, struct kg_suite **s)
{
	struct stat sb;

	if (stat(dir, &sb) != 0) {
		kg_error("cannot open '%s': %s", dir, strerror(errno));
		return KG_EXIT_USAGE;
	}
	if (!S_ISDIR(sb.st_mode)) {
		kg_error("cannot open '%s': not a directory", dir);
		return KG_EXIT_USAGE;
	}
	char *path = cfg[0] == '/' ? xstrdup(cfg) : xasprintf("%s/%s", dir, cfg);
	int rc = config_load_suite(path, s);
	free(path);
	return rc;
}

void suiterun_recset_free(struct kg_recset *rs)
{
	store_names_free(rs->path, rs->n);
	store_runs_free(rs->fp, rs->n);
	free(rs->repeat);
	free(rs->gpu);
	free(rs->gpu_uuid);
	memset(rs, 0, sizeof(*rs));
}

void suiterun_recsets_free(struct kg_recset *sets, size_t n)
{
	if (!sets)
		return;
	for (size_t i = 0; i < n; i++)
		suiterun_recset_free(&sets[i]);
	free(sets);
}

/* name with everything but [A-Za-z0-9._-] replaced, at most 48 bytes. */
static char *file_safe(const char *name)
{
	size_t n = strlen(name) > 48 ? 48 : strlen(name);
	char *s = xstrndup(name, n);

	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			s[i] = '_';
	}
	return s;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The records files in dir whose names start with prefix, sorted. */
static char **find_files(const char *dir, const char *prefix, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **out = NULL;
	size_t len = strlen(prefix);

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (strncmp(e->d_name, prefix, len) || l < 6 || strcmp(e->d_name + l - 6, ".jsonl"))
			continue;
		out = xrealloc(out, (*n + 1) * sizeof(*out));
		out[(*n)++] = xasprintf("%s/%s", dir, e->d_name);
	}
	closedir(d);
	if (out && *n > 1)
		qsort(out, *n, sizeof(*out), cmp_str);
	return out;
}

static void print_tail(const char *err_tail)
{
	const char *p = runner_last_lines(err_tail, KG_RUNNER_TAIL_LINES);

	if (!*p) {
		fprintf(stderr, "kgate: (it wrote nothing on stderr)\n");
		return;
	}
	fprintf(stderr, "kgate: the last lines of its stderr:\n");
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, l), *safe = escape_text_dup(line);
		fprintf(stderr, "    %s\n", safe);
		free(safe);
		free(line);
		p += l + (nl ? 1 : 0);
	}
}

static char *where(const char *tag, int repeat)
{
	if (repeat < 0)
		return xasprintf("%s%swarmup %d", tag ? tag : "", tag ? " " : "", -repeat - 1);
	return xasprintf("%s%srepeat %d", tag ? tag : "", tag ? " " : "", repeat);
}

/* Add one process's before/after states of every device to acc's summaries. */
static void gpu_add(struct kg_recset *acc, const struct kg_gpu_state *before, size_t nb,
		    const struct kg_gpu_state *after, size_t na, const char *why)
{
	if (!na && !acc->ngpu && !acc->gpu_why[0])
		snprintf(acc->gpu_why, sizeof(acc->gpu_why), "%s",
			 why && *why ? why : "NVML read no device");
	for (size_t i = 0; i < na; i++) {
		const struct kg_gpu_state *b = NULL;
		struct kg_gpu_state none;
		size_t k;

		for (size_t j = 0; j < nb && !b; j++)
			if (!strcmp(before[j].uuid, after[i].uuid))
				b = &before[j];
		if (!b) {
			memset(&none, 0, sizeof(none));
			snprintf(none.why, sizeof(none.why), "not read before the process");
			b = &none;
		}
		for (k = 0; k < acc->ngpu; k++)
			if (!strcmp(acc->gpu_uuid[k], after[i].uuid))
				break;
		if (k == acc->ngpu) {
			if (acc->ngpu == KG_GPUSTATE_MAX_DEVICES)
				continue;
			acc->gpu = xrealloc(acc->gpu, (acc->ngpu + 1) * sizeof(*acc->gpu));
			acc->gpu_uuid = xrealloc(acc->gpu_uuid, (acc->ngpu + 1) * sizeof(*acc->gpu_uuid));
			gpustate_summary_init(&acc->gpu[k]);
			snprintf(acc->gpu_uuid[k], sizeof(acc->gpu_uuid[k]), "%s", after[i].uuid);
			acc->ngpu++;
		}
		gpustate_summary_add(&acc->gpu[k], b, &after[i]);
	}
}

/*
 * require_idle_gpu: wait up to the suite's idle_wait for the GPUs to have
 * no other compute process.  KG_EXIT_PASS to go on, KG_EXIT_RUNTIME (said)
 * when one is still busy.
 */
static int wait_idle(struct kg_suiterun *sr, const struct kg_suite *s,
		     const struct kg_benchmark *b)
{
	struct kg_gpu_state last;
	char what[300];
	int r;

	if (!s->require_idle_gpu)
		return KG_EXIT_PASS;
	r = gpustate_wait_idle(sr->nvml, NULL, 0, 0, NULL, &last);
	if (r == 1) {
		kg_note("GPU %s: %s; waiting up to %.0f s for it to end (require_idle_gpu)",
			last.uuid, gpustate_concerns(&last, what, sizeof(what)), s->idle_wait_s);
		r = gpustate_wait_idle(sr->nvml, NULL, s->idle_wait_s, 1.0, runner_interrupted,
				       &last);
	}
	if (r < 0) {
		if (!sr->idle_unknown_said)
			kg_warn("require_idle_gpu: cannot tell whether the GPU is idle (%s); "
				"running anyway", last.why);
		sr->idle_unknown_said = 1;
		return KG_EXIT_PASS;
	}
	if (r == 1) {
		kg_error("GPU %s is not idle: %s; require_idle_gpu refuses to run benchmark "
			 "'%s' (waited %.0f s: idle_wait in the suite sets how long)",
			 last.uuid, gpustate_concerns(&last, what, sizeof(what)), b->name,
			 s->idle_wait_s);
		return KG_EXIT_RUNTIME;
	}
	return KG_EXIT_PASS;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "1:05" or "1:02:05" */
static void fmt_clock(char *out, size_t n, double s)
{
	long t = (long)(s + 0.5);
	if (t >= 3600)
		snprintf(out, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(out, n, "%ld:%02ld", t / 60, t % 60);
}

/* "[3/45] matmul_naive (repeat 2), 0:12 elapsed, about 1:40 left": the
 * estimate from the mean time of the steps done so far. */
static void progress_say(struct kg_suiterun *sr, const char *name, const char *at)
{
	double t = now_s();
	if (sr->step == 1 || sr->start == 0)
		sr->start = t;
	double el = t - sr->start;
	char e[32], l[32];
	fmt_clock(e, sizeof e, el);
	int done = sr->step - 1;
	if (done > 0 && sr->steps >= sr->step) {
		fmt_clock(l, sizeof l, el / done * (sr->steps - done));
		kg_progress(sr->inplace && !sr->passthrough, "[%d/%d] %s (%s), %s elapsed, about %s left",
			    sr->step, sr->steps, name, at, e, l);
	} else {
		kg_progress(sr->inplace && !sr->passthrough, "[%d/%d] %s (%s), %s elapsed", sr->step,
			    sr->steps, name, at, e);
	}
}

int suiterun_once(struct kg_suiterun *sr, const struct kg_suite *s,
		  const struct kg_benchmark *b, const char *tag, int repeat,
		  struct kg_recset *acc)
{
	const struct kg_collector_cfg *cc = &s->collector;
	int app_replay = cc->mode == KG_MODE_METRICS && cc->replay == KG_REPLAY_APPLICATION;
	char *safe = file_safe(b->name);
	char *at = where(tag, repeat);
	int passes = 1, rc = KG_EXIT_PASS;
	const struct kg_importer *rec = import_find("records");

	sr->step++;
	if (sr->progress)
		progress_say(sr, b->name, at);
	if (runner_interrupted()) {
		kg_error("interrupted before benchmark '%s' (%s)", b->name, at);
		free(at);
		free(safe);
		return KG_EXIT_RUNTIME;
	}
	for (int pass = 0; pass < passes && rc == KG_EXIT_PASS; pass++) {
		char *prefix = xasprintf("%u-%s.p%d.", sr->seq++, safe, pass);
		char *records = xasprintf("%s/%s%%p.jsonl", sr->scratch, prefix);
		char **env = NULL;
		size_t nenv = 0;
		for (size_t i = 0; i < b->n_env; i++)
			runner_env_add(&env, &nenv, b->env[i]);
		runner_collector_env(&env, &nenv, sr->collector, sr->nvtx, cc, records,
				     app_replay ? pass : -1);
		struct kg_runner_spec spec = {
			.name = b->name,
			.argv = b->cmd,
			.workdir = b->workdir ? b->workdir : s->dir,
			.env = env,
			.timeout_s = b->timeout_s,
			.passthrough = sr->passthrough,
		};
		struct kg_runner_result res;
		char *pass_s = passes > 1 ? xasprintf(", pass %d of %d", pass, passes) : xstrdup("");
		struct kg_gpu_state before[KG_GPUSTATE_MAX_DEVICES], after[KG_GPUSTATE_MAX_DEVICES];
		size_t nb = 0, na = 0;
		int r = wait_idle(sr, s, b);
		if (r != KG_EXIT_PASS) {
			runner_env_free(env, nenv);
			free(pass_s);
			free(records);
			free(prefix);
			rc = r;
			break;
		}
		nb = gpustate_read_all(sr->nvml, before, KG_GPUSTATE_MAX_DEVICES);
		r = runner_run(&spec, &res);
		if (r == KG_EXIT_PASS)
			na = gpustate_read_all(sr->nvml, after, KG_GPUSTATE_MAX_DEVICES);
		size_t nf = 0;
		char **files = NULL;
		int *ranks = NULL, *worlds = NULL; /* each file's rank and world size, -1: none */
		struct kg_run_info *fps = NULL;   /* each file's GPU fingerprint */
		if (r != KG_EXIT_PASS) {
			kg_error("benchmark '%s' cannot be started (%s%s): %s", b->name, at, pass_s,
				 res.spawn_error);
			rc = KG_EXIT_RUNTIME;
		} else if (res.interrupted) {
			kg_error("interrupted while benchmark '%s' ran (%s%s)", b->name, at, pass_s);
			rc = KG_EXIT_RUNTIME;
		} else if (!runner_ok(&res)) {
			char *what = runner_describe(&res, b->timeout_s);
			kg_error("benchmark '%s' %s (%s%s)", b->name, what, at, pass_s);
			if (!gpustate_driver_here())
				kg_error("%s", KG_NO_GPU_HINT);
			if (res.timed_out)
				fprintf(stderr, "kgate: its process group was sent SIGTERM (SIGKILL "
					"if still alive after a grace period)\n");
			print_tail(res.err_tail);
			free(what);
			rc = KG_EXIT_RUNTIME;
		} else {
			if (res.leftovers)
				kg_warn("benchmark '%s' left processes running when it exited (%s); "
					"kgate ended them", b->name, at);
			files = find_files(sr->scratch, prefix, &nf);
			if (!nf && !gpustate_driver_here()) {
				kg_error("benchmark '%s' wrote no records file (%s%s): %s", b->name, at,
					 pass_s, KG_NO_GPU_HINT);
				print_tail(res.err_tail);
				rc = KG_EXIT_RUNTIME;
			} else if (!nf) {
				kg_error("benchmark '%s' wrote no records file (%s%s): the collector "
					 "was not loaded; check that it runs CUDA work and that "
					 "CUDA_INJECTION64_PATH=%s reaches its process (a wrapper "
					 "script must not clear the environment)",
					 b->name, at, pass_s, sr->collector);
				print_tail(res.err_tail);
				rc = KG_EXIT_RUNTIME;
			}
			fps = xcalloc(nf ? nf : 1, sizeof(*fps));
			ranks = xcalloc(nf ? nf : 1, sizeof(*ranks));
			worlds = xcalloc(nf ? nf : 1, sizeof(*worlds));
			for (size_t i = 0; i < nf && rc == KG_EXIT_PASS; i++) {
				struct stat sb;
				struct kg_import_info info;
				if (lstat(files[i], &sb) != 0 || !S_ISREG(sb.st_mode)) {
					/* a FIFO would block every read of it for ever */
					kg_error("benchmark '%s' left '%s' in place of a records file "
						 "(%s%s): not a regular file", b->name, files[i], at,
						 pass_s);
					rc = KG_EXIT_RUNTIME;
					break;
				}
				/* The records files are the benchmark's output, not the
				 * user's input: one that cannot be read is the benchmark's
				 * failure (exit 3), as a missing footer is. */
				memset(&info, 0, sizeof(info));
				if (rec->complete(files[i]) != 1) {
					kg_error("benchmark '%s' wrote a records file without its "
						 "footer (%s%s): '%s': a process of it died before it "
						 "finished", b->name, at, pass_s, files[i]);
					print_tail(res.err_tail);
					rc = KG_EXIT_RUNTIME;
				} else if (import_read_info(rec, files[i], &info) != KG_EXIT_PASS) {
					rc = KG_EXIT_RUNTIME;
				} else {
					if (pass == 0 && app_replay && info.passes > passes)
						passes = info.passes > MAX_PASSES ? MAX_PASSES : info.passes;
					fps[i] = info.run;
					memset(&info.run, 0, sizeof(info.run));
					ranks[i] = info.rank;
					worlds[i] = info.world_size;
				}
				import_info_free(&info);
			}
			if (rc == KG_EXIT_PASS && nf) {
				char *where_s = xasprintf("%s%s", at, pass_s);
				ranks_group(b->name, where_s, ranks, worlds, nf);
				free(where_s);
			}
		}
		if (rc == KG_EXIT_PASS && repeat >= 0) {
			acc->path = xrealloc(acc->path, (acc->n + nf) * sizeof(*acc->path));
			acc->repeat = xrealloc(acc->repeat, (acc->n + nf) * sizeof(*acc->repeat));
			acc->fp = xrealloc(acc->fp, (acc->n + nf) * sizeof(*acc->fp));
			for (size_t i = 0; i < nf; i++) {
				acc->path[acc->n] = files[i];
				acc->fp[acc->n] = fps[i];
				acc->repeat[acc->n++] = repeat;
			}
			acc->wall_s += res.wall_s;
			acc->processes++;
			gpu_add(acc, before, nb, after, na, gpustate_why(sr->nvml));
		} else {
			for (size_t i = 0; i < nf; i++) {
				unlink(files[i]);
				free(files[i]);
				if (fps)
					store_run_info_free(&fps[i]);
			}
		}
		free(files);
		free(fps);
		free(ranks);
		free(worlds);
		runner_result_free(&res);
		runner_env_free(env, nenv);
		free(pass_s);
		free(records);
		free(prefix);
	}
	free(at);
	free(safe);
	return rc;
}

/* The GPU fingerprint from every file's header (read when it was found);
 * all must agree. */
static int fingerprint(struct kg_run_info *run, const struct kg_recset *sets, size_t n)
{
	const char *first = NULL;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < sets[i].n; j++) {
			int rc = import_fingerprint(run, &sets[i].fp[j], sets[i].path[j], first);
			if (rc != KG_EXIT_PASS)
				return KG_EXIT_RUNTIME;
			if (!first)
				first = sets[i].path[j];
		}
	return KG_EXIT_PASS;
}

/* Distinct kernel identities (NVTX path, kernel) per benchmark of a run. */
static void count_kernels(struct kg_store *st, int64_t run, const char *const *names,
			  size_t n, struct kg_bench_summary *sum)
{
	struct kg_sampleset set = { 0 };

	if (store_load_samples(st, &run, 1, &set) != KG_EXIT_PASS)
		return;
	for (size_t i = 0; i < set.n; i++) {
		const struct kg_series *a = &set.s[i], *p = i ? &set.s[i - 1] : NULL;
		if (p && !strcmp(a->benchmark, p->benchmark) && !strcmp(a->nvtx, p->nvtx) &&
		    !strcmp(a->kernel, p->kernel))
			continue;
		for (size_t j = 0; j < n; j++)
			if (!strcmp(names[j], a->benchmark))
				sum[j].kernels++;
	}
	store_sampleset_free(&set);
}

/* The summary of the run's GPU (the only one read, else the one its records
 * name) for benchmark name, as JSON with the run. */
static int store_gpu_state(struct kg_store *st, const struct kg_run_info *run,
			   const char *name, const struct kg_recset *set)
{
	struct kg_gpu_summary none;
	const struct kg_gpu_summary *sum = NULL;
	json_t *j;
	char *text;
	int rc;

	if (!set->processes)
		return KG_EXIT_PASS;
	for (size_t k = 0; k < set->ngpu && !sum; k++)
		if (set->ngpu == 1 || (run->gpu_uuid && !strcmp(set->gpu_uuid[k], run->gpu_uuid)))
			sum = &set->gpu[k];
	if (!sum) {
		gpustate_summary_init(&none);
		none.processes = set->processes;
		snprintf(none.why, sizeof(none.why), "%s",
			 set->ngpu ? "NVML does not list the GPU the records name"
				   : set->gpu_why[0] ? set->gpu_why : "not read");
		sum = &none;
	}
	j = gpustate_summary_to_json(sum);
	/* the measured processes' wall time: what "kgate run --shard" balances by */
	if (j && set->wall_s > 0)
		json_object_set_new(j, "wall_s", json_real(set->wall_s));
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	rc = store_run_benchmark_state(st, name, text);
	free(text);
	return rc;
}

int suiterun_store(struct kg_store *st, struct kg_run_info *run, const char *const *names,
		   const struct kg_recset *sets, size_t n, struct kg_bench_summary *sum)
{
	size_t samples = 0;
	int rc;

	/* the time of storing, not of the first file's header */
	import_context(run);
	if ((rc = fingerprint(run, sets, n)) != KG_EXIT_PASS)
		return rc;
	if (!run->gpu_name)
		kg_warn("the records files name no GPU (the collector saw none?): this run will "
			"not match runs of a named GPU");
	if ((rc = store_run_begin(st, run)) != KG_EXIT_PASS)
		return rc;
	for (size_t i = 0; i < n && rc == KG_EXIT_PASS; i++) {
		/* the run ran it, even when it launched no kernel (partial runs) */
		rc = store_run_benchmark_add(st, names[i]);
		if (rc == KG_EXIT_PASS)
			rc = store_gpu_state(st, run, names[i], &sets[i]);
		if (sum) {
			memset(&sum[i], 0, sizeof(sum[i]));
			sum[i].name = names[i];
			sum[i].wall_s = sets[i].wall_s;
			sum[i].processes = sets[i].processes;
		}
		for (size_t j = 0; j < sets[i].n && rc == KG_EXIT_PASS; j++) {
			struct kg_import_stats rs;
			rc = import_ingest(import_find("records"), st, sets[i].path[j], names[i],
					   sets[i].repeat[j], &rs);
			if (rc == KG_EXIT_USAGE)
				rc = KG_EXIT_RUNTIME;
			samples += rs.samples;
			if (sum) {
				sum[i].launches += rs.kernels;
				sum[i].samples += rs.samples;
			}
			import_stats_free(&rs);
		}
	}
	if (rc == KG_EXIT_PASS && samples == 0) {
		if (!gpustate_driver_here())
			kg_error("the benchmarks recorded no kernel launches: %s; nothing stored",
				 KG_NO_GPU_HINT);
		else
			kg_error("the benchmarks recorded no kernel launches (see the collector's "
				 "messages above); nothing stored");
		rc = KG_EXIT_RUNTIME;
	}
	if (rc != KG_EXIT_PASS) {
		store_run_abort(st);
		return rc;
	}
	if ((rc = store_run_commit(st)) != KG_EXIT_PASS)
		return rc;
	if (sum)
		count_kernels(st, run->id, names, n, sum);
	return KG_EXIT_PASS;
}
