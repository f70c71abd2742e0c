/*
 * cmd_comment.c: "kgate comment": put the verdict table of a commit's
 * newest stored check on its pull request, as one comment edited in place,
 * and optionally as a commit status.  A failure to post is a warning and
 * leaves the exit status alone, unless --strict.
 */
#include "cmd.h"
#include "kgate/check.h"
#include "kgate/ghevent.h"
#include "kgate/git.h"
#include "kgate/github.h"
#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/report.h"
#include "kgate/store.h"
#include "kgate/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char synopsis[] =
	"usage: kgate comment [--db PATH] --repo OWNER/NAME --pr N [--commit SHA]\n"
	"                     [--status] [--strict] [--body-file F] [--print]\n"
	"\n"
	"Create or update the pull request's kgate comment (found by a hidden marker,\n"
	"edited in place on later runs) with the verdict table of the newest check\n"
	"stored for the commit.\n";

static const char epilogue[] =
	"Environment: GITHUB_TOKEN (required to post; never printed), GITHUB_API_URL\n"
	"(default https://api.github.com), KGATE_HTTP_TIMEOUT, KGATE_HTTP_RETRIES.\n"
	"Exit status: 0 posted, or posting failed without --strict; 2 bad usage or\n"
	"no stored check; 3 database error, or posting failed with --strict.\n";

static char *read_file(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		kg_error("cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	struct kg_buf b = KG_BUF_INIT;
	char tmp[65536];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) {
		buf_add(&b, tmp, n);
		if (b.len > 65536 * 4) {
			kg_error("cannot use '%s': larger than GitHub's 65536-character comment limit", path);
			buf_free(&b);
			if (f != stdin)
				fclose(f);
			return NULL;
		}
	}
	int bad = ferror(f);
	if (f != stdin)
		fclose(f);
	if (bad) {
		kg_error("cannot read '%s': %s", path, strerror(errno));
		buf_free(&b);
		return NULL;
	}
	return b.s ? buf_detach(&b) : xstrdup("");
}

int cmd_comment(int argc, char **argv)
{
	const char *db = store_default_db(), *repo = getenv("GITHUB_REPOSITORY"), *pr_s = NULL;
	const char *commit = NULL, *body_file = NULL;
	int status = 0, strict = 0, print = 0, argi;
	const struct kg_opt opts[] = {
		KG_OPT_DB(&db),
		KG_OPT_STR("repo", 0, "O/N", &repo, "the repository (default: GITHUB_REPOSITORY)"),
		KG_OPT_STR("pr", 0, "N", &pr_s,
			   "the pull request number (default: in a pull request's GitHub Actions "
			   "job, that pull request)"),
		KG_OPT_STR("commit", 0, "SHA", &commit,
			   "the commit whose check is shown (default: git rev-parse HEAD; in a pull "
			   "request's Actions job, its head commit)"),
		KG_OPT_FLAG("status", 0, &status, "also set a \"kgate\" commit status on the commit"),
		KG_OPT_FLAG("strict", 0, &strict,
			    "exit 3 when posting fails (default: a warning, exit 0)"),
		KG_OPT_STR("body-file", 0, "F", &body_file,
			   "post the Markdown in F instead of the stored check"),
		KG_OPT_FLAG("print", 0, &print, "print the comment on stdout and post nothing"),
		KG_OPT_END
	};
	const struct kg_optspec spec = { "comment", synopsis, epilogue, opts, 0, 0 };
	int rc = opt_parse(&spec, argc, argv, &argi);
	if (rc != KG_OPT_GO)
		return rc;
	long pr = 0;
	struct kg_ghevent ev;
	char *ev_pr = NULL;
	if (!pr_s && ghevent_load(&ev) == 1) {
		if (ev.pr > 0)
			pr_s = ev_pr = xasprintf("%ld", ev.pr);
		ghevent_free(&ev);
	}
	if (!print || pr_s) {
		char *end = NULL;
		errno = 0;
		pr = pr_s ? strtol(pr_s, &end, 10) : 0;
		if (!pr_s || errno || *end || pr <= 0) {
			kg_error("comment: --pr wants a pull request number, got '%s'", pr_s ? pr_s : "");
			free(ev_pr);
			return KG_EXIT_USAGE;
		}
	}
	free(ev_pr);
	if (!print && (!repo || !github_repo_valid(repo))) {
		kg_error("comment: --repo wants OWNER/NAME, got '%s'", repo ? repo : "");
		return KG_EXIT_USAGE;
	}

	char *sha = commit ? xstrdup(commit) : ghevent_head_commit();
	char *body = NULL;
	const char *state = NULL;
	struct kg_buf desc = KG_BUF_INIT;
	if (body_file) {
		body = read_file(body_file);
		if (!body) {
			free(sha);
			return KG_EXIT_USAGE;
		}
	} else {
		if (!sha) {
			kg_error("comment: no --commit given and git cannot name HEAD");
			return KG_EXIT_USAGE;
		}
		struct kg_store *st;
		rc = store_open(db, KG_STORE_READONLY, &st);
		if (rc != KG_EXIT_PASS) {
			free(sha);
			return rc;
		}
		if (commit) {
			/* a short SHA or a ref: the full SHA git gives, when no run
			 * is stored under exactly what was given */
			free(sha);
			sha = check_resolve_commit(st, commit);
		}
		struct report_check chk;
		rc = report_check_load(st, sha, &chk);
		if (rc != 0) {
			if (rc == 1)
				kg_error("no check is stored for commit '%s' in '%s'; run 'kgate check"
					 " --commit %s' first", sha, db, sha);
			store_close(st);
			free(sha);
			return rc == 1 ? KG_EXIT_USAGE : KG_EXIT_RUNTIME;
		}
		struct kg_buf b = KG_BUF_INIT;
		report_check_markdown(&chk, &b);
		body = buf_detach(&b);
		state = report_check_state(&chk, &desc);
		free(sha);
		sha = xstrdup(chk.commit);
		report_check_free(&chk);
		store_close(st);
	}
	if (print) {
		fputs(body, stdout);
		free(body);
		free(sha);
		buf_free(&desc);
		return KG_EXIT_PASS;
	}

	int failed = 0;
	struct github gh;
	if (github_open(&gh, repo) != 0) {
		failed = 1;
	} else {
		int created = 0;
		char *url = NULL;
		if (github_comment_upsert(&gh, pr, body, &created, &url) == 0) {
			kg_note("%s the kgate comment on %s#%ld%s%s", created ? "created" : "updated",
				repo, pr, url ? ": " : "", url ? url : "");
			if (url)
				printf("%s\n", url);
		} else {
			failed = 1;
		}
		free(url);
		if (status) {
			if (!state) {
				kg_warn("--status needs a stored check; not set with --body-file");
			} else if (!sha) {
				kg_warn("--status: no commit to set it on");
			} else {
				const char *srv = getenv("GITHUB_SERVER_URL"), *run = getenv("GITHUB_RUN_ID");
				char *target = srv && run && getenv("GITHUB_REPOSITORY")
					? xasprintf("%s/%s/actions/runs/%s", srv, getenv("GITHUB_REPOSITORY"), run)
					: NULL;
				if (github_status_set(&gh, sha, state, desc.s ? desc.s : "", target) == 0)
					kg_note("set the kgate status of %.12s to %s", sha, state);
				else
					failed = 1;
				free(target);
			}
		}
		github_close(&gh);
	}
	free(body);
	free(sha);
	buf_free(&desc);
	if (failed) {
		if (strict)
			return KG_EXIT_RUNTIME;
		kg_warn("the pull request comment was not posted; the gate's result stands (use --strict to fail)");
	}
	return KG_EXIT_PASS;
}
