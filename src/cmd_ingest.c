/*
 * cmd_ingest.c: "kgate ingest": store records files and Nsight Compute CSV
 * exports as one run, in one transaction.  Every input is validated while
 * it is stored; any error aborts the transaction, so nothing is stored.
 */
#include "cmd.h"
#include "kgate/ghevent.h"
#include "kgate/git.h"
#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/ncu_csv.h"
#include "kgate/records.h"
#include "kgate/store.h"
#include "kgate/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char synopsis[] =
	"usage: kgate ingest [--db PATH] [--commit SHA] [--branch NAME]\n"
	"                    (--records FILE | --ncu-csv FILE)... [--benchmark NAME]\n"
	"                    [--repeat N] [--label L] [--format text|json]\n"
	"\n"
	"Store records files (written by the collector) and Nsight Compute CSV\n"
	"exports (ncu --csv, details or raw page) as one run of the database.\n";

static const char epilogue[] =
	"Exit status: 0 stored; 2 bad usage or input (nothing stored);\n"
	"3 database error (nothing stored).\n";

struct input {
	const char *path;
	int ncu;
	const char *bench_opt;  /* the --benchmark given before it, if any */
	char *benchmark;
	int repeat;
};

/*
 * Repeats: each file of a benchmark is the next repeat, except the passes of
 * an application replay (header "pass" > 0), which join a pass 0.  Which
 * one: when the headers' ppid tell the repeats apart (each ppid holds one
 * whole set of passes 0 .. passes-1), the set of its ppid, whatever the
 * command-line order; else the files must come in pass order, each repeat's
 * pass 0 first, and the passes join the pass 0 before them.  Anything else
 * could join a pass to another repeat's launches, and is refused.
 */
struct replay_id {
	int pass, passes;
	long long ppid;
	int group;              /* ppid group, by first appearance */
};

static int ppid_groups(struct replay_id *id, const size_t *f, size_t nf, int *ngroups)
{
	int ng = 0;

	for (size_t a = 0; a < nf; a++) {
		if (id[f[a]].ppid < 0)
			return -1;
		id[f[a]].group = -1;
		for (size_t b = 0; b < a; b++)
			if (id[f[b]].ppid == id[f[a]].ppid) {
				id[f[a]].group = id[f[b]].group;
				break;
			}
		if (id[f[a]].group < 0)
			id[f[a]].group = ng++;
	}
	for (int g = 0; g < ng; g++) {
		int passes = -1, seen = 0;
		for (size_t a = 0; a < nf; a++) {
			const struct replay_id *x = &id[f[a]];
			if (x->group != g)
				continue;
			if (passes < 0)
				passes = x->passes;
			if (x->passes != passes || x->pass >= passes || passes > 30 ||
			    (seen & (1 << x->pass)))
				return -1;
			seen |= 1 << x->pass;
		}
		if (seen != (int)((1u << passes) - 1))
			return -1;
	}
	*ngroups = ng;
	return 0;
}

static int assign_repeats(struct input *in, size_t nin, int repeat0)
{
	struct replay_id *id = xcalloc(nin, sizeof *id);
	size_t *f = xmalloc(nin * sizeof *f);
	int rc = 0;

	for (size_t i = 0; i < nin; i++) {
		long long pid;
		id[i] = (struct replay_id){ 0, 1, -1, 0 };
		if (!in[i].ncu)
			records_header_replay(in[i].path, &id[i].pass, &id[i].passes, &pid,
					      &id[i].ppid);
	}
	for (size_t i = 0; i < nin && !rc; i++) {
		size_t nf = 0, j;
		int replay = 0;
		for (j = 0; j < i && strcmp(in[j].benchmark, in[i].benchmark); j++)
			;
		if (j < i)
			continue;       /* this benchmark was done with its first file */
		for (j = i; j < nin; j++)
			if (!strcmp(in[j].benchmark, in[i].benchmark)) {
				f[nf++] = j;
				replay |= id[j].pass > 0 || id[j].passes > 1;
			}
		int ng = 0;
		if (!replay) {
			for (size_t a = 0; a < nf; a++)
				in[f[a]].repeat = repeat0 + (int)a;
		} else if (ppid_groups(id, f, nf, &ng) == 0 && ng > 1) {
			for (size_t a = 0; a < nf; a++)
				in[f[a]].repeat = repeat0 + id[f[a]].group;
		} else {
			int r = repeat0 - 1, want = 0, passes = 1;
			for (size_t a = 0; a < nf && !rc; a++) {
				const struct replay_id *x = &id[f[a]];
				if (want == passes)
					want = 0;       /* the repeat before is whole */
				if (x->pass != want || (want > 0 && x->passes != passes)) {
					kg_error("%s: pass %d of benchmark '%s' comes where %s; the "
						 "headers' ppid do not tell its repeats apart, so "
						 "give each repeat's files in pass order, pass 0 first",
						 in[f[a]].path, x->pass, in[f[a]].benchmark,
						 want ? "the next pass of the repeat before is due"
						      : "a repeat's pass 0 is due");
					rc = -1;
					break;
				}
				if (want == 0) {
					r++;
					passes = x->passes;
				}
				in[f[a]].repeat = r;
				want++;
			}
			if (!rc && want != passes) {
				kg_error("%s: benchmark '%s' ends with a repeat of %d of its %d "
					 "application-replay passes", in[f[nf - 1]].path,
					 in[f[nf - 1]].benchmark, want, passes);
				rc = -1;
			}
		}
	}
	free(f);
	free(id);
	return rc;
}

static int same(const char *a, const char *b)
{
	if (!a || !b)
		return 1;
	return strcmp(a, b) == 0;
}

/* What the options collect: the inputs, each with the --benchmark before it. */
struct ingest_opts {
	struct input *in;
	size_t nin;
	const char *benchmark;
};

/* --records FILE, --ncu-csv FILE */
static int add_input(const struct kg_opt *o, const char *arg)
{
	struct ingest_opts *io = o->ctx;

	io->in = xrealloc(io->in, (io->nin + 1) * sizeof(*io->in));
	io->in[io->nin++] = (struct input){ arg, !strcmp(o->name, "ncu-csv"), io->benchmark, NULL, 0 };
	return KG_EXIT_PASS;
}

/* --benchmark NAME: the first one also names the inputs before it */
static int set_benchmark(const struct kg_opt *o, const char *arg)
{
	struct ingest_opts *io = o->ctx;

	if (!io->benchmark)
		for (size_t i = 0; i < io->nin; i++)
			io->in[i].bench_opt = arg;
	io->benchmark = arg;
	return KG_EXIT_PASS;
}

int cmd_ingest(int argc, char **argv)
{
	const char *db = store_default_db(), *commit = NULL, *branch = NULL, *benchmark = NULL;
	const char *label = NULL, *format = "text";
	struct ingest_opts io = { NULL, 0, benchmark };
	struct input *in = NULL;
	size_t nin = 0;
	long repeat0 = 0;
	int argi, rc;
	const struct kg_opt opts[] = {
		KG_OPT_STR("db", 0, "PATH", &db, "the database (default $KGATE_DB, else kgate.db)"),
		KG_OPT_STR("commit", 0, "SHA", &commit,
			   "the commit measured (default: git rev-parse HEAD); a short SHA or ref is "
			   "stored as the full SHA git gives"),
		KG_OPT_STR("branch", 0, "NAME", &branch,
			   "its branch (default: from git or GITHUB_HEAD_REF)"),
		KG_OPT_CALL("records", 0, "FILE", add_input, &io,
			    "a records file; may be given several times"),
		KG_OPT_CALL("ncu-csv", 0, "FILE", add_input, &io,
			    "an ncu CSV export; may be given several times"),
		KG_OPT_CALL("benchmark", 0, "NAME", set_benchmark, &io,
			    "benchmark name of the inputs after it (the first one also names those "
			    "before it; default: the records file's argv[0] basename, or ncu's "
			    "process name)"),
		KG_OPT_LONG("repeat", 0, "N", &repeat0, 0, 1000000,
			    "repeat number of the first file of each benchmark (default 0; later "
			    "files of one benchmark count up)"),
		KG_OPT_STR("label", 0, "L", &label, "a label for the run (compare uses base/head)"),
		KG_OPT_ONEOF("format", 0, "F", &format, kg_opt_text_json,
			     "text (default) or json: a JSON summary on stdout"),
		KG_OPT_END
	};
	const struct kg_optspec spec = { "ingest", synopsis, epilogue, opts, 0, 0 };

	rc = opt_parse(&spec, argc, argv, &argi);
	in = io.in;
	nin = io.nin;
	if (rc != KG_OPT_GO)
		goto out;
	rc = KG_EXIT_USAGE;
	if (!nin) {
		kg_error("nothing to ingest: give --records FILE or --ncu-csv FILE; see 'kgate ingest "
			 "--help'");
		goto out;
	}

	/* The run's fingerprint, from every input's header; all must agree. */
	struct kg_run_info run = { 0 };
	for (size_t i = 0; i < nin; i++) {
		struct kg_run_info one = { 0 };
		int r = in[i].ncu ? ncu_csv_read_header(in[i].path, &one)
				  : records_read_header(in[i].path, &one);
		if (r != KG_EXIT_PASS) {
			store_run_info_free(&one);
			store_run_info_free(&run);
			rc = r;
			goto out;
		}
		if (!same(run.gpu_name, one.gpu_name)) {
			kg_error("%s: recorded on %s, but %s was recorded on %s; one run is one GPU "
				 "model", in[i].path, one.gpu_name, in[0].path, run.gpu_name);
			store_run_info_free(&one);
			store_run_info_free(&run);
			goto out;
		}
#define TAKE(f) if (!run.f && one.f) { run.f = one.f; one.f = NULL; }
		TAKE(gpu_name) TAKE(gpu_uuid) TAKE(gpu_chip) TAKE(driver) TAKE(cuda)
		TAKE(collector) TAKE(source)
#undef TAKE
		if (!run.time)
			run.time = one.time;
		store_run_info_free(&one);
		in[i].benchmark = in[i].bench_opt ? xstrdup(in[i].bench_opt)
			: in[i].ncu ? ncu_csv_process_name(in[i].path)
				    : records_benchmark_name(in[i].path);
		if (!in[i].benchmark) {
			kg_error("%s: no benchmark name in the file; give --benchmark NAME", in[i].path);
			store_run_info_free(&run);
			goto out;
		}
	}
	if (!run.gpu_name)
		kg_warn("the inputs do not name the GPU (ncu's details page does not; its raw page, "
			"--page raw, does): this run will not match runs of a named GPU");
	if (assign_repeats(in, nin, (int)repeat0) != 0) {
		store_run_info_free(&run);
		goto out;
	}

	char *gitsha = NULL, *gitbranch = NULL;
	if (!commit) {
		commit = gitsha = ghevent_head_commit();
		if (!commit) {
			kg_error("no --commit given and 'git rev-parse HEAD' has no answer here");
			store_run_info_free(&run);
			goto out;
		}
	}
	if (!branch)
		branch = gitbranch = git_branch();
	run.commit = git_resolve_commit_arg(commit);
	run.branch = branch ? xstrdup(branch) : NULL;
	run.parent = git_parent(commit);
	run.label = label ? xstrdup(label) : NULL;
	const char *ci = getenv("GITHUB_RUN_ID"), *srv = getenv("GITHUB_SERVER_URL"),
		   *repo = getenv("GITHUB_REPOSITORY");
	if (ci && srv && repo)
		run.ci_url = xasprintf("%s/%s/actions/runs/%s", srv, repo, ci);
	char host[256];
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		run.host = xstrdup(host);
	}
	if (nin > 1) {
		int mixed = 0;
		for (size_t i = 1; i < nin; i++)
			mixed |= in[i].ncu != in[0].ncu;
		if (mixed) {
			free(run.source);
			run.source = xstrdup("records+ncu-csv");
		}
	}

	struct kg_store *st = NULL;
	size_t kernels = 0, samples = 0, errors = 0, dropped = 0, nbench = 0;
	if ((rc = store_open(db, 0, &st)) != KG_EXIT_PASS)
		goto done;
	if ((rc = store_run_begin(st, &run)) != KG_EXIT_PASS)
		goto done;
	for (size_t i = 0; i < nin && rc == KG_EXIT_PASS; i++) {
		/* the run ran it, even when an input holds no kernel (partial runs) */
		if ((rc = store_run_benchmark_add(st, in[i].benchmark)) != KG_EXIT_PASS)
			break;
		if (in[i].ncu) {
			size_t k = 0, s = 0;
			rc = ncu_csv_ingest_repeat(st, in[i].path, in[i].benchmark, in[i].repeat, &k, &s);
			kernels += k;
			samples += s;
		} else {
			struct kg_records_stats rs;
			rc = records_ingest(st, in[i].path, in[i].benchmark, in[i].repeat, &rs);
			kernels += rs.kernels;
			samples += rs.samples;
			errors += rs.errors;
			dropped += rs.dropped;
		}
	}
	if (rc == KG_EXIT_PASS && samples == 0) {
		kg_error("the inputs hold no samples; nothing stored");
		rc = KG_EXIT_USAGE;
	}
	if (rc != KG_EXIT_PASS) {
		store_run_abort(st);
		kg_error("nothing stored in '%s'", db);
		goto done;
	}
	if ((rc = store_run_commit(st)) != KG_EXIT_PASS)
		goto done;
	for (size_t i = 0; i < nin; i++) {
		size_t j;
		for (j = 0; j < i && strcmp(in[j].benchmark, in[i].benchmark); j++)
			;
		nbench += j == i;
	}
	kg_note("stored run %lld (commit %.12s, %zu benchmark%s, %zu kernels, %zu samples)",
		(long long)run.id, run.commit, nbench, nbench == 1 ? "" : "s", kernels, samples);
	if (errors)
		kg_warn("%zu collector error record%s (see above)", errors, errors == 1 ? "" : "s");
	if (!strcmp(format, "json")) {
		json_t *o = json_pack("{s:I, s:s, s:s?, s:s?, s:I, s:I, s:I, s:I, s:I}",
				      "run", (json_int_t)run.id, "commit", run.commit,
				      "branch", run.branch, "gpu", run.gpu_name,
				      "benchmarks", (json_int_t)nbench, "kernels", (json_int_t)kernels,
				      "samples", (json_int_t)samples, "errors", (json_int_t)errors,
				      "dropped", (json_int_t)dropped);
		char *s = json_dumps(o, JSON_COMPACT);
		puts(s);
		free(s);
		json_decref(o);
	}
done:
	store_close(st);
	store_run_info_free(&run);
	free(gitsha);
	free(gitbranch);
out:
	for (size_t i = 0; i < nin; i++)
		free(in[i].benchmark);
	free(in);
	return rc;
}
