/*
 * cmd_merge.c: "kgate merge": the shards of a sharded run ("kgate run
 * --shard I/N") put together as one run of the commit (shard.h), from the
 * database itself (PostgreSQL: every shard wrote there) or from part
 * databases (SQLite: each shard's file, uploaded as a CI artifact).
 */
#include "cmd.h"
#include "kgate/config.h"
#include "kgate/ghevent.h"
#include "kgate/git.h"
#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/shard.h"
#include "kgate/store.h"
#include "kgate/util.h"

#include <jansson.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char synopsis[] =
	"usage: kgate merge [--db PATH] [-c kgate.yaml] [--commit SHA] [--only REGEX]\n"
	"                   [--format text|json] [PART...]\n"
	"\n"
	"Put the shards of a sharded run (kgate run --shard I/N) of a commit together\n"
	"as one run in --db, for 'kgate check' to check.  Without PART, the shards are\n"
	"those stored in --db itself (every shard wrote to one PostgreSQL database);\n"
	"each PART is a database holding shards (each shard's SQLite file, uploaded as a\n"
	"CI artifact).  Refused, nothing stored: a missing shard, shards that ran on\n"
	"different GPU models, drivers, CUDA or collector versions or suites, a\n"
	"benchmark of the suite in two shards or in none.  A shard stored twice (a job\n"
	"run again) counts once, the newer, and is reported; shards already merged are\n"
	"not stored again.\n";

static const char epilogue[] =
	"Exit status: 0 merged (or merged before); 2 bad usage, or shards missing,\n"
	"mismatched or overlapping: nothing stored; 3 a database error: nothing stored.\n";

int cmd_merge(int argc, char **argv)
{
	const char *cfg = NULL, *db = store_default_db(), *commit = NULL, *only = NULL;
	const char *format = "text";
	int argi, rc;
	struct kg_suite *s = NULL;
	struct kg_store *st = NULL;
	char *sha = NULL, **expect = NULL;
	size_t nexpect = 0;
	regex_t re;
	int have_re = 0;
	int64_t run = 0;
	json_t *report = json_object();

	const struct kg_opt opts[] = {
		KG_OPT_STR("db", 0, "PATH", &db,
			   "the database the merged run goes to, and the shards come from when no "
			   "PART is given (default $KGATE_DB, else kgate.db)"),
		KG_OPT_STR("config", 'c', "FILE", &cfg,
			   "the suite: each of its benchmarks must be in exactly one shard (default "
			   "kgate.yaml where it exists; without one, not checked)"),
		KG_OPT_HEAD_COMMIT(&commit, "whose shards to merge", ""),
		KG_OPT_STR("only", 0, "REGEX", &only,
			   "the shards ran 'kgate run --only REGEX': only those benchmarks of the "
			   "suite are expected"),
		KG_OPT_TEXT_JSON(&format, "text (default) or json: what was merged, on stdout"),
		KG_OPT_OPERAND("PART...", "databases holding shards (paths, sqlite:PATH or "
			       "postgresql:// URLs)"),
		KG_OPT_END
	};
	const struct kg_optspec spec = { "merge", synopsis, epilogue, opts, 1, 0 };
	if ((rc = opt_parse(&spec, argc, argv, &argi)) != KG_OPT_GO) {
		json_decref(report);
		return rc;
	}
	rc = KG_EXIT_USAGE;
	if (only) {
		if ((rc = opt_regex("only", only, &re)) != KG_EXIT_PASS)
			goto out;
		have_re = 1;
	}
	if (cfg || access("kgate.yaml", F_OK) == 0) {
		if ((rc = config_load_suite(cfg ? cfg : "kgate.yaml", &s)) != KG_EXIT_PASS)
			goto out;
		expect = xcalloc(s->n_benchmarks + 1, sizeof *expect);
		for (size_t i = 0; i < s->n_benchmarks; i++)
			if (!have_re || regexec(&re, s->benchmarks[i].name, 0, NULL, 0) == 0)
				expect[nexpect++] = s->benchmarks[i].name;
	}
	rc = KG_EXIT_USAGE;
	if (!(commit = sha = commit ? git_resolve_commit_arg(commit) : ghevent_default_commit()))
		goto out;
	if ((rc = store_open(db, 0, &st)) != KG_EXIT_PASS)
		goto out;
	rc = shard_merge(st, db, argv + argi, (size_t)(argc - argi), commit, expect, nexpect,
			 report, &run);
	if (rc == KG_EXIT_PASS) {
		json_object_set_new(report, "run", json_integer(run));
		if (!json_is_true(json_object_get(report, "already_merged")))
			kg_note("stored run %lld (commit %.12s, %d shards merged, %lld samples)",
				(long long)run, commit,
				(int)json_integer_value(json_object_get(report, "shards")),
				(long long)json_integer_value(json_object_get(report, "samples")));
	}
	if (!strcmp(format, "json")) {
		json_dumpf(report, stdout, JSON_COMPACT);
		putchar('\n');
	} else if (rc == KG_EXIT_PASS) {
		json_t *parts = json_object_get(report, "parts"), *p;
		size_t i;
		json_array_foreach(parts, i, p)
			printf("shard %lld/%lld  run %lld of %s  %zu benchmark%s  %lld samples\n",
			       (long long)json_integer_value(json_object_get(p, "shard")),
			       (long long)json_integer_value(json_object_get(p, "of")),
			       (long long)json_integer_value(json_object_get(p, "run")),
			       json_string_value(json_object_get(p, "db")),
			       json_array_size(json_object_get(p, "benchmarks")),
			       json_array_size(json_object_get(p, "benchmarks")) == 1 ? "" : "s",
			       (long long)json_integer_value(json_object_get(p, "samples")));
		printf("merged: run %lld\n", (long long)run);
	}
out:
	json_decref(report);
	store_close(st);
	free(expect);
	config_free_suite(s);
	if (have_re)
		regfree(&re);
	free(sha);
	return rc;
}
