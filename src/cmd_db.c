/*
 * cmd_db.c: "kgate db copy FROM TO": every run of one database written into
 * another (SQLite to PostgreSQL and back, or one SQLite file merged into
 * another), through the store API (runcopy.h).  A run already in TO (same
 * identity and samples) is skipped and counted; a run whose identity TO
 * holds with other samples is a conflict: reported, not copied.  Each run
 * is copied in its own transaction.
 */
#include "cmd.h"
#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/runcopy.h"
#include "kgate/store.h"
#include "kgate/util.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char synopsis[] =
	"usage: kgate db copy [--dry-run] [--format text|json] FROM TO\n"
	"\n"
	"Copy every run of the database FROM into the database TO (each a path,\n"
	"sqlite:PATH or a postgresql:// URL; TO is created when it does not exist):\n"
	"SQLite to PostgreSQL and back, or two SQLite files merged into one.  A run\n"
	"TO already holds (the same commit, time, host, GPU, driver, CUDA, collector,\n"
	"suite, source, label, status and benchmarks, and the same samples and GPU\n"
	"states) is skipped and counted as a duplicate; one of the same identity\n"
	"with other samples is a conflict, reported and not copied.  Stored checks\n"
	"are not copied: 'kgate check' on TO decides them again.\n";

static const char epilogue[] =
	"The summary goes to stderr (with --format json, as JSON on stdout): runs\n"
	"read, copied, duplicates skipped, conflicts (each with both run ids).\n"
	"\n"
	"Exit status: 0 every run copied or already there; 2 bad usage, or a conflict\n"
	"(the other runs are copied); 3 a database error (the run being copied is\n"
	"rolled back; those before it stay copied).\n";

/* Both names one database?  Paths by their real path, others as written. */
static int same_db(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];
	if (!strcmp(a, b))
		return 1;
	if (!strncmp(a, "sqlite:", 7))
		a += 7;
	if (!strncmp(b, "sqlite:", 7))
		b += 7;
	return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

static int db_copy(const char *from, const char *to, int dry, const char *format)
{
	struct kg_store *src = NULL, *dst = NULL;
	struct kg_run_filter f = { .oldest_first = 1 };
	struct kg_run_info *runs = NULL;
	size_t n = 0, copied = 0, dups = 0, samples = 0;
	json_t *conflicts = json_array(), *dupl = json_array();
	int rc;

	if (same_db(from, to)) {
		kg_error("FROM and TO are the same database '%s'", from);
		json_decref(conflicts);
		json_decref(dupl);
		return KG_EXIT_USAGE;
	}
	if ((rc = store_open(from, KG_STORE_READONLY, &src)) != KG_EXIT_PASS)
		goto out;
	if (!dry || store_exists(to))
		if ((rc = store_open(to, dry ? KG_STORE_READONLY : 0, &dst)) != KG_EXIT_PASS)
			goto out;
	if ((rc = store_find_runs(src, &f, &runs, &n)) != KG_EXIT_PASS)
		goto out;
	for (size_t i = 0; i < n && rc == KG_EXIT_PASS; i++) {
		struct kg_run_info *r = &runs[i];
		struct kg_run_digest d;
		char **bench = NULL;
		size_t nb = 0, got = 0;
		int64_t dup = 0, conflict = 0, from_id = r->id;

		if ((rc = store_run_benchmarks(src, r->id, &bench, &nb)) != KG_EXIT_PASS)
			break;
		if ((rc = runcopy_digest(src, r->id, &d)) == KG_EXIT_PASS && dst)
			rc = runcopy_find(dst, r, bench, nb, &d, &dup, &conflict);
		store_names_free(bench, nb);
		if (rc != KG_EXIT_PASS)
			break;
		if (dup) {
			dups++;
			json_array_append_new(dupl, json_pack("{s:I, s:I}", "from", (json_int_t)from_id,
							      "to", (json_int_t)dup));
			continue;
		}
		if (conflict) {
			kg_error("run %lld of '%s' (commit %.12s) conflicts with run %lld of '%s': "
				 "the same identity, other samples; not copied", (long long)from_id,
				 from, r->commit ? r->commit : "?", (long long)conflict, to);
			json_array_append_new(conflicts, json_pack("{s:I, s:I, s:s?}",
				"from", (json_int_t)from_id, "to", (json_int_t)conflict,
				"commit", r->commit));
			continue;
		}
		if (dry) {
			copied++;
			samples += (size_t)d.samples;
			continue;
		}
		r->id = 0;
		if ((rc = store_run_begin(dst, r)) != KG_EXIT_PASS)
			break;
		if ((rc = runcopy_contents(src, from_id, dst, &got, NULL)) != KG_EXIT_PASS) {
			store_run_abort(dst);
			break;
		}
		if ((rc = store_run_commit(dst)) != KG_EXIT_PASS)
			break;
		copied++;
		samples += got;
	}
	if (rc != KG_EXIT_PASS)
		kg_error("copy stopped after %zu of %zu runs", copied, n);
	else if (json_array_size(conflicts))
		rc = KG_EXIT_USAGE;
	if (!strcmp(format, "json")) {
		json_t *o = json_pack("{s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:O, s:O}",
				      "from", src ? from : "", "to", to, "dry_run", dry,
				      "runs", (json_int_t)n, "copied", (json_int_t)copied,
				      "samples", (json_int_t)samples, "duplicates", (json_int_t)dups,
				      "duplicate_runs", dupl, "conflicts", conflicts);
		json_dumpf(o, stdout, JSON_COMPACT);
		putchar('\n');
		json_decref(o);
	}
	kg_note("%s %zu of %zu run%s (%zu samples); %zu duplicate%s skipped; %zu conflict%s%s",
		dry ? "would copy" : "copied", copied, n, n == 1 ? "" : "s", samples, dups,
		dups == 1 ? "" : "s", json_array_size(conflicts),
		json_array_size(conflicts) == 1 ? "" : "s",
		json_array_size(conflicts) ? " (not copied)" : "");
out:
	json_decref(conflicts);
	json_decref(dupl);
	store_runs_free(runs, n);
	store_close(src);
	store_close(dst);
	return rc;
}

int cmd_db(int argc, char **argv)
{
	const char *format = "text";
	int dry = 0, argi, rc;
	const struct kg_opt opts[] = {
		KG_OPT_FLAG("dry-run", 'n', &dry,
			    "say what would be copied, skipped and in conflict; write nothing"),
		KG_OPT_TEXT_JSON(&format,
				 "text (default): the summary on stderr; json: also as JSON on stdout"),
		KG_OPT_OPERAND("copy FROM TO", "the databases: a path, sqlite:PATH or a "
			       "postgresql:// URL (a password in it is never printed)"),
		KG_OPT_END
	};
	const struct kg_optspec spec = { "db", synopsis, epilogue, opts, 1, 0 };
	if ((rc = opt_parse(&spec, argc, argv, &argi)) != KG_OPT_GO)
		return rc;
	if (argi >= argc) {
		kg_error("'kgate db' needs a subcommand: copy FROM TO");
		return KG_EXIT_USAGE;
	}
	if (strcmp(argv[argi], "copy")) {
		kg_error("'%s' is not a 'kgate db' subcommand (there is: copy)", argv[argi]);
		return KG_EXIT_USAGE;
	}
	if (argc - argi != 3) {
		kg_error("'kgate db copy' takes two databases, FROM and TO");
		return KG_EXIT_USAGE;
	}
	return db_copy(argv[argi + 1], argv[argi + 2], dry, format);
}
