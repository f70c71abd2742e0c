/*
 * cmd_ingest.c: "kgate ingest": store files of any format an importer reads
 * (import.h: records files, Nsight Compute CSV exports, Nsight Systems SQLite
 * exports, Kineto traces) as one run, in one
 * transaction.  Each file's format is sniffed unless named; a directory
 * stands for the files in it that an importer claims.  Every input is
 * validated while it is stored; any error aborts the transaction, so
 * nothing is stored.
 */
#include "cmd.h"
#include "kgate/ghevent.h"
#include "kgate/git.h"
#include "kgate/import.h"
#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/store.h"
#include "kgate/util.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char synopsis[] =
	"usage: kgate ingest [--db PATH] [--commit SHA] [--branch NAME]\n"
	"                    [--input-format NAME] [--benchmark NAME] (FILE | DIR)...\n"
	"                    [--records FILE] [--ncu-csv FILE]\n"
	"                    [--repeat N] [--label L] [--gpu NAME] [--allow-partial]\n"
	"                    [--format text|json]\n"
	"\n"
	"Store records files (written by the collector), Nsight Compute CSV\n"
	"exports (ncu --csv, details or raw page), Nsight Systems SQLite exports\n"
	"and Kineto (torch.profiler) traces as one run of the database.\n"
	"Each file's format is told from its content (--input-format names it);\n"
	"a directory stands for the regular files directly in it that kgate\n"
	"reads (not its subdirectories), in name order.\n";

/* The epilogue: exit statuses, then the formats of the importer table. */
static char *epilogue(void)
{
	struct kg_buf b = KG_BUF_INIT;

	buf_adds(&b, "Exit status: 0 stored; 2 bad usage or input (nothing stored);\n"
		     "3 database error (nothing stored).\n\nFormats:\n");
	for (size_t i = 0; kg_importers[i]; i++)
		buf_printf(&b, "  %-16s  %s\n", kg_importers[i]->name, kg_importers[i]->description);
	return buf_detach(&b);
}

/* A file or directory as the command line gives it. */
struct arg {
	const char *path;
	const char *format;     /* the --input-format in force, NULL: sniff */
	const char *bench_opt;  /* the --benchmark given before it, if any */
};

/* One file to store. */
struct input {
	char *path;
	const struct kg_importer *im;
	const char *bench_opt;
	char *benchmark;
	struct kg_import_info info;
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

	for (size_t i = 0; i < nin; i++)
		id[i] = (struct replay_id){ in[i].info.pass, in[i].info.passes, in[i].info.ppid, 0 };
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

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void input_add(struct input **in, size_t *nin, const char *path,
		      const struct kg_importer *im, const char *bench_opt)
{
	*in = xrealloc(*in, (*nin + 1) * sizeof(**in));
	memset(&(*in)[*nin], 0, sizeof(**in));
	(*in)[*nin].path = xstrdup(path);
	(*in)[*nin].im = im;
	(*in)[*nin].bench_opt = bench_opt;
	(*nin)++;
}

/* The regular files directly in dir that an importer takes, in name order
 * (hidden files left out).  0, or KG_EXIT_USAGE said. */
static int add_dir(struct input **in, size_t *nin, const struct arg *a)
{
	DIR *d = opendir(a->path);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, added = 0;
	int rc = KG_EXIT_PASS;

	if (!d) {
		kg_error("cannot open '%s': %s", a->path, strerror(errno));
		return KG_EXIT_USAGE;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *p = xasprintf("%s/%s", a->path, e->d_name);
		struct stat sb;
		if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) {
			names = xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = p;
		} else {
			free(p);
		}
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		int skipped = 0;
		const struct kg_importer *im = rc ? NULL : import_choose(names[i], a->format, &skipped);
		if (im) {
			input_add(in, nin, names[i], im, a->bench_opt);
			added++;
		} else if (!rc && !skipped) {
			rc = KG_EXIT_USAGE;
		}
		free(names[i]);
	}
	free(names);
	if (!rc && !added) {
		char *fmts = import_names();
		kg_error("cannot ingest '%s': the directory holds no file kgate reads (%s)", a->path,
			 fmts);
		free(fmts);
		rc = KG_EXIT_USAGE;
	}
	return rc;
}

/* Warn when a benchmark named from its files (not by --benchmark) would
 * merge files of different command lines ("python a.py", "python b.py"). */
static void warn_merges(const struct input *in, size_t nin)
{
	for (size_t i = 0; i < nin; i++) {
		if (in[i].bench_opt || !in[i].info.command || in[i].info.names_benchmarks)
			continue;
		size_t j;
		for (j = 0; j < i && strcmp(in[j].benchmark, in[i].benchmark); j++)
			;
		if (j < i)
			continue;       /* this benchmark was done with its first file */
		for (j = i + 1; j < nin; j++)
			if (!in[j].bench_opt && in[j].info.command &&
			    !strcmp(in[j].benchmark, in[i].benchmark) &&
			    strcmp(in[j].info.command, in[i].info.command) != 0) {
				kg_warn("benchmark '%s' merges the records of different command "
					"lines: '%s' (%s) and '%s' (%s); give --benchmark NAME "
					"before each to keep them apart", in[i].benchmark,
					in[i].info.command, in[i].path, in[j].info.command,
					in[j].path);
				break;
			}
	}
}

/* What the options collect: the inputs in order, and what applies to them. */
struct ingest_args {
	struct arg *args;
	size_t nargs;
	const char *benchmark;     /* the --benchmark in force */
	const char *input_format;  /* the --input-format in force, NULL: sniff */
};

static void arg_add(struct ingest_args *ia, const char *path, const char *format)
{
	ia->args = xrealloc(ia->args, (ia->nargs + 1) * sizeof(*ia->args));
	ia->args[ia->nargs++] = (struct arg){ path, format, ia->benchmark };
}

/* FILE, --records FILE, --ncu-csv FILE */
static int take_input(const struct kg_opt *o, const char *arg)
{
	struct ingest_args *ia = o->ctx;

	arg_add(ia, arg, !o->name ? ia->input_format
			 : !strcmp(o->name, "records") ? "records" : "ncu-csv");
	return KG_EXIT_PASS;
}

/* --benchmark NAME: for the inputs after it; the first also names those before. */
static int take_benchmark(const struct kg_opt *o, const char *arg)
{
	struct ingest_args *ia = o->ctx;

	if (!ia->benchmark)
		for (size_t i = 0; i < ia->nargs; i++)
			ia->args[i].bench_opt = arg;
	ia->benchmark = arg;
	return KG_EXIT_PASS;
}

/* --input-format NAME | auto */
static int take_format(const struct kg_opt *o, const char *arg)
{
	struct ingest_args *ia = o->ctx;

	if (!strcmp(arg, "auto")) {
		ia->input_format = NULL;
	} else if (!import_find(arg)) {
		char *fmts = import_names();
		kg_error("--input-format '%s' is not one of: %s, auto", arg, fmts);
		free(fmts);
		return KG_EXIT_USAGE;
	} else {
		ia->input_format = arg;
	}
	return KG_EXIT_PASS;
}

int cmd_ingest(int argc, char **argv)
{
	const char *db = store_default_db(), *commit = NULL, *branch = NULL;
	const char *label = NULL, *format = "text", *gpu = NULL;
	struct ingest_args ia = { NULL, 0, NULL, NULL };
	struct arg *args = NULL;
	struct input *in = NULL;
	size_t nargs = 0, nin = 0;
	long repeat0 = 0;
	int argi, rc, partial = 0;
	const struct kg_opt opts[] = {
		KG_OPT_DB(&db),
		KG_OPT_STR("commit", 0, "SHA", &commit,
			   "the commit measured (default: git rev-parse HEAD); a short SHA or ref is "
			   "stored as the full SHA git gives"),
		KG_OPT_STR("branch", 0, "NAME", &branch,
			   "its branch (default: from git or GITHUB_HEAD_REF)"),
		KG_OPT_CALL("input-format", 0, "NAME", take_format, &ia,
			    "the format of the files and directories after it: one of the formats "
			    "below, or auto (default: told from each file's content); a directory "
			    "then gives all its files"),
		KG_OPT_CALL("records", 0, "FILE", take_input, &ia,
			    "a records file (--input-format records FILE)"),
		KG_OPT_CALL("ncu-csv", 0, "FILE", take_input, &ia,
			    "an ncu CSV export (--input-format ncu-csv FILE)"),
		KG_OPT_CALL("benchmark", 0, "NAME", take_benchmark, &ia,
			    "benchmark name of the inputs after it (the first one also names those "
			    "before it; default: from each file, the records file's argv[0] basename, "
			    "ncu's process name, the nsys export's process that launched most "
			    "kernels, or the Kineto trace's process name; a warning says when that name would merge files "
			    "of different command lines)"),
		KG_OPT_LONG("repeat", 0, "N", &repeat0, 0, 1000000,
			    "repeat number of the first file of each benchmark (default 0; later "
			    "files of one benchmark count up)"),
		KG_OPT_STR("label", 0, "L", &label, "a label for the run (compare uses base/head)"),
		KG_OPT_STR("gpu", 0, "NAME", &gpu,
			   "the GPU the inputs were measured on (\"NVIDIA H200\"), for inputs that "
			   "name it only by its compute capability or not at all (ncu's details "
			   "page), so that the run compares with the runs of that GPU"),
		KG_OPT_FLAG("allow-partial", 0, &partial,
			    "store an ncu export although ncu reported errors (==ERROR== lines: a "
			    "launch it failed to profile, an application that failed), with a "
			    "warning; without it such an export is refused"),
		KG_OPT_TEXT_JSON(&format, "text (default) or json: a JSON summary on stdout"),
		KG_OPT_OPERANDS_CALL("FILE | DIR", take_input, &ia,
				     "files and directories to store, in order among the options"),
		KG_OPT_END
	};
	char *epi = epilogue();
	const struct kg_optspec spec = { "ingest", synopsis, epi, opts, 1, 0 };

	rc = opt_parse(&spec, argc, argv, &argi);
	args = ia.args;
	nargs = ia.nargs;
	if (rc != KG_OPT_GO)
		goto out;
	import_set_partial(partial);
	rc = KG_EXIT_USAGE;
	if (!nargs) {
		kg_error("nothing to ingest: give files or directories (or --records FILE, "
			 "--ncu-csv FILE); see 'kgate ingest --help'");
		goto out;
	}

	/* Each file's importer: named, or told from its content. */
	for (size_t i = 0; i < nargs; i++) {
		struct stat sb;
		const struct kg_importer *im;
		if (stat(args[i].path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			if (add_dir(&in, &nin, &args[i]) != KG_EXIT_PASS)
				goto out;
		} else if ((im = import_choose(args[i].path, args[i].format, NULL))) {
			input_add(&in, &nin, args[i].path, im, args[i].bench_opt);
		} else {
			goto out;
		}
	}

	/* The run's fingerprint, from every input's header; all must agree. */
	struct kg_run_info run = { 0 };
	for (size_t i = 0; i < nin; i++) {
		int r = import_read_info(in[i].im, in[i].path, &in[i].info);
		if (r == KG_EXIT_PASS)
			r = import_fingerprint(&run, &in[i].info.run, in[i].path, in[0].path);
		if (r != KG_EXIT_PASS) {
			store_run_info_free(&run);
			rc = r;
			goto out;
		}
		if (in[i].info.names_benchmarks) {
			/* the file names its benchmarks; --benchmark is their prefix */
			in[i].benchmark = xstrdup(in[i].bench_opt ? in[i].bench_opt : "");
		} else {
			in[i].benchmark = in[i].bench_opt ? xstrdup(in[i].bench_opt)
							  : in[i].info.benchmark;
			if (!in[i].bench_opt)
				in[i].info.benchmark = NULL;
		}
		if (!in[i].benchmark) {
			kg_error("%s: no benchmark name in the file; give --benchmark NAME", in[i].path);
			store_run_info_free(&run);
			goto out;
		}
	}
	warn_merges(in, nin);
	if (gpu && run.gpu_name && strcmp(run.gpu_name, gpu) &&
	    strncmp(run.gpu_name, KG_IMPORT_CC_NAME, strlen(KG_IMPORT_CC_NAME))) {
		kg_error("--gpu '%s': the inputs were recorded on %s", gpu, run.gpu_name);
		store_run_info_free(&run);
		rc = KG_EXIT_USAGE;
		goto out;
	}
	if (gpu) {
		free(run.gpu_name);
		run.gpu_name = xstrdup(gpu);
	} else if (!run.gpu_name)
		kg_warn("the inputs do not name the GPU (ncu's details page does not; its raw page, "
			"--page raw, does; or give --gpu NAME): this run will not match runs of a named GPU");
	else if (!strncmp(run.gpu_name, KG_IMPORT_CC_NAME, strlen(KG_IMPORT_CC_NAME)))
		kg_warn("the inputs name the GPU only by its compute capability (ncu's details page; "
			"its raw page, --page raw, names it; or give --gpu NAME): this run compares only "
			"with runs of a "
			"%s", run.gpu_name);
	if (assign_repeats(in, nin, (int)repeat0) != 0) {
		store_run_info_free(&run);
		goto out;
	}

	char *gitsha = NULL, *gitbranch = NULL;
	if (!commit && !(commit = gitsha = ghevent_default_commit())) {
		store_run_info_free(&run);
		goto out;
	}
	if (!branch)
		branch = gitbranch = git_branch();
	run.commit = git_resolve_commit_arg(commit);
	run.branch = branch ? xstrdup(branch) : NULL;
	run.parent = git_parent(commit);
	run.label = label ? xstrdup(label) : NULL;
	import_context(&run);
	/* inputs of several formats: "records+ncu-csv", in the table's order */
	struct kg_buf src = KG_BUF_INIT;
	size_t nfmt = 0;
	for (size_t t = 0; kg_importers[t]; t++)
		for (size_t i = 0; i < nin; i++)
			if (in[i].im == kg_importers[t]) {
				buf_printf(&src, "%s%s", nfmt++ ? "+" : "", kg_importers[t]->name);
				break;
			}
	if (nfmt > 1) {
		free(run.source);
		run.source = buf_detach(&src);
	}
	buf_free(&src);

	struct kg_store *st = NULL;
	size_t kernels = 0, samples = 0, errors = 0, dropped = 0, nbench = 0, named = 0;
	char **timed = NULL;    /* the inputs' kernels with a duration, by demangled name */
	size_t n_timed = 0;
	if ((rc = store_open(db, 0, &st)) != KG_EXIT_PASS)
		goto done;
	if ((rc = store_run_begin(st, &run)) != KG_EXIT_PASS)
		goto done;
	for (size_t i = 0; i < nin && rc == KG_EXIT_PASS; i++) {
		/* the run ran it, even when an input holds no kernel (partial runs) */
		if (!in[i].info.names_benchmarks &&
		    (rc = store_run_benchmark_add(st, in[i].benchmark)) != KG_EXIT_PASS)
			break;
		struct kg_import_stats is;
		rc = import_ingest(in[i].im, st, in[i].path, in[i].benchmark, in[i].repeat, &is);
		if (is.benchmarks > named)
			named = is.benchmarks;  /* the files of one program name the same */
		kernels += is.kernels;
		samples += is.samples;
		errors += is.errors;
		dropped += is.dropped;
		timed = xrealloc(timed, (n_timed + is.n_timed + 1) * sizeof(*timed));
		for (size_t k = 0; k < is.n_timed; k++) {
			timed[n_timed++] = is.timed[k];
			is.timed[k] = NULL;
		}
		import_stats_free(&is);
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
	nbench = named;
	for (size_t i = 0; i < nin; i++) {
		size_t j;
		if (in[i].info.names_benchmarks)
			continue;
		for (j = 0; j < i && strcmp(in[j].benchmark, in[i].benchmark); j++)
			;
		nbench += j == i;
	}
	/* launches, and the distinct kernels they were of (by the time every
	 * input records; none counted when it has none), from what the
	 * importers saw: reading the run back costs more than storing it */
	size_t names = 0;
	qsort(timed, n_timed, sizeof(*timed), cmp_str);
	for (size_t i = 0; i < n_timed; i++)
		names += !i || strcmp(timed[i - 1], timed[i]) != 0;
	struct kg_buf kn = KG_BUF_INIT;
	if (names)
		buf_printf(&kn, " of %zu kernel%s", names, names == 1 ? "" : "s");
	kg_note("stored run %lld (commit %.12s, %zu benchmark%s, %zu launch%s%s, %zu samples)",
		(long long)run.id, run.commit, nbench, nbench == 1 ? "" : "s", kernels,
		kernels == 1 ? "" : "es", kn.s ? kn.s : "", samples);
	buf_free(&kn);
	if (errors)
		kg_warn("%zu collector error record%s (see above)", errors, errors == 1 ? "" : "s");
	if (!strcmp(format, "json")) {
		json_t *o = json_pack("{s:I, s:s, s:s?, s:s?, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
				      "run", (json_int_t)run.id, "commit", run.commit,
				      "branch", run.branch, "gpu", run.gpu_name,
				      "benchmarks", (json_int_t)nbench,
				      /* "kernels" stays the launches, as it always was;
				       * "launches" and "distinct_kernels" follow "dropped" */
				      "kernels", (json_int_t)kernels,
				      "samples", (json_int_t)samples, "errors", (json_int_t)errors,
				      "dropped", (json_int_t)dropped,
				      "launches", (json_int_t)kernels, "distinct_kernels", (json_int_t)names);
		char *s = json_dumps(o, JSON_COMPACT);
		puts(s);
		kg_json_document_written();
		free(s);
		json_decref(o);
	}
done:
	for (size_t i = 0; i < n_timed; i++)
		free(timed[i]);
	free(timed);
	store_close(st);
	store_run_info_free(&run);
	free(gitsha);
	free(gitbranch);
out:
	for (size_t i = 0; i < nin; i++) {
		free(in[i].path);
		free(in[i].benchmark);
		import_info_free(&in[i].info);
	}
	free(in);
	free(args);
	free(epi);
	return rc;
}
