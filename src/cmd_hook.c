/*
 * cmd_hook.c: "kgate hook install": link kgate's pre-push hook
 * (scripts/pre-push, installed as share/kgate/pre-push) into the current
 * repository's hooks directory, as git names it (git rev-parse --git-path
 * hooks, which honours core.hooksPath).  A hook that is already there is
 * never overwritten.
 */
#include "cmd.h"
#include "kgate/git.h"
#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char synopsis[] =
	"usage: kgate hook install\n"
	"       kgate hook path\n";

static const char epilogue[] =
	"The hook runs the suite in quick mode (kgate run --quick) and checks it\n"
	"as kgate check does: against the stored run of the merge base with the\n"
	"remote's default branch (else that branch's newest stored run); a quick\n"
	"run is never a baseline.  It refuses the push on a regression.  Skip it\n"
	"with 'git push --no-verify' or KGATE_SKIP=1 (the next push is checked\n"
	"against the same baseline, so a skipped regression is still refused).  With\n"
	"no GPU it skips with a message; with no stored baseline it says how to\n"
	"record one.  KGATE_HOOK_SCRIPT names another hook script.\n"
	"\n"
	"Exit status: 0 installed (or already installed); 2 not in a git\n"
	"repository, or a different pre-push hook is there; 3 the link could not\n"
	"be made or the hook script was not found.\n";

/* The hook script: $KGATE_HOOK_SCRIPT, then beside the binary. */
static char *hook_script(void)
{
	const char *env = getenv("KGATE_HOOK_SCRIPT");
	if (env && *env)
		return realpath(env, NULL);
	char *exe = kg_exe_dir();
	if (!exe)
		return NULL;
	static const char *const rel[] = {
		"../share/kgate/pre-push",      /* installed: PREFIX/bin/kgate */
		"../scripts/pre-push",          /* build tree: build/kgate */
		"../../scripts/pre-push",       /* build tree: build-san/x/kgate */
	};
	char *found = NULL;
	for (size_t i = 0; i < sizeof rel / sizeof rel[0] && !found; i++) {
		char *p = xasprintf("%s/%s", exe, rel[i]);
		found = realpath(p, NULL);
		free(p);
		if (found && access(found, X_OK) != 0) {
			free(found);
			found = NULL;
		}
	}
	free(exe);
	return found;
}

static int mkdirs(const char *path)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST) {
			free(p);
			return -1;
		}
		*s = '/';
	}
	int rc = mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
	free(p);
	return rc;
}

static int install(void)
{
	char *script = hook_script();
	if (!script) {
		kg_error("cannot find kgate's pre-push script (share/kgate/pre-push or scripts/pre-push"
			 " beside the kgate binary); set KGATE_HOOK_SCRIPT");
		return KG_EXIT_RUNTIME;
	}
	char *hooks = git_hooks_dir();
	if (!hooks) {
		kg_error("not in a git repository (git rev-parse --git-path hooks failed)");
		free(script);
		return KG_EXIT_USAGE;
	}
	int rc = KG_EXIT_PASS;
	char *dst = xasprintf("%s/pre-push", hooks);
	struct stat st;
	if (lstat(dst, &st) == 0) {
		char *cur = realpath(dst, NULL);
		if (S_ISLNK(st.st_mode) && cur && strcmp(cur, script) == 0) {
			kg_note("the kgate pre-push hook is already installed: '%s' -> '%s'", dst, script);
		} else {
			kg_error("cannot install the hook: '%s' exists and is not kgate's; remove it, or"
				 " call '%s' from it", dst, script);
			rc = KG_EXIT_USAGE;
		}
		free(cur);
	} else if (mkdirs(hooks) != 0) {
		kg_error("cannot create '%s': %s", hooks, strerror(errno));
		rc = KG_EXIT_RUNTIME;
	} else if (symlink(script, dst) != 0) {
		kg_error("cannot create '%s': %s", dst, strerror(errno));
		rc = KG_EXIT_RUNTIME;
	} else {
		kg_note("installed the pre-push hook: '%s' -> '%s'", dst, script);
		kg_note("skip it once with 'git push --no-verify' or 'KGATE_SKIP=1 git push'");
	}
	free(dst);
	free(hooks);
	free(script);
	return rc;
}

int cmd_hook(int argc, char **argv)
{
	static const struct kg_opt opts[] = {
		KG_OPT_OPERAND("install",
			       "link kgate's pre-push hook into this repository's hooks directory "
			       "(git rev-parse --git-path hooks); an existing pre-push hook is left "
			       "alone and the command fails."),
		KG_OPT_OPERAND("path", "print the hook script that install links to."),
		KG_OPT_END
	};
	static const struct kg_optspec spec = { "hook", synopsis, epilogue, opts, 1, 0 };
	int argi, rc = opt_parse(&spec, argc, argv, &argi);

	if (rc != KG_OPT_GO)
		return rc;
	const char *sub = argi < argc ? argv[argi] : NULL;
	if (argc - argi > 1) {
		kg_error("hook: unexpected argument '%s'; see 'kgate hook --help'", argv[argi + 1]);
		return KG_EXIT_USAGE;
	}
	if (sub && strcmp(sub, "install") == 0)
		return install();
	if (sub && strcmp(sub, "path") == 0) {
		char *p = hook_script();
		if (!p) {
			kg_error("cannot find kgate's pre-push script; set KGATE_HOOK_SCRIPT");
			return KG_EXIT_RUNTIME;
		}
		printf("%s\n", p);
		free(p);
		return KG_EXIT_PASS;
	}
	if (!sub)
		kg_error("hook: say what to do: 'kgate hook install'");
	else
		kg_error("hook: unknown subcommand '%s'; see 'kgate hook --help'", sub);
	return KG_EXIT_USAGE;
}
