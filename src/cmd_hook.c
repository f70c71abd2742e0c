/*
 * cmd_hook.c: "kgate hook install": link kgate's pre-push hook
 * (scripts/pre-push, installed as share/kgate/pre-push) into the current
 * repository's hooks directory, as git names it (git rev-parse --git-path
 * hooks, which honours core.hooksPath).  A hook that is already there is
 * never overwritten.
 */
#include "cmd.h"
#include "kgate/kgate.h"
#include "kgate/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char usage_text[] =
	"usage: kgate hook install\n"
	"       kgate hook path\n"
	"\n"
	"install  link kgate's pre-push hook into this repository's hooks directory\n"
	"         (git rev-parse --git-path hooks); an existing pre-push hook is\n"
	"         left alone and the command fails.\n"
	"path     print the hook script that install links to.\n"
	"\n"
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

/* git ARGS...: its first line of stdout, or NULL */
static char *git_line(const char *a1, const char *a2)
{
	char *argv[] = { (char *)"git", (char *)"rev-parse", (char *)a1, (char *)a2, NULL };
	int fd[2];
	if (pipe(fd) != 0)
		return NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	posix_spawn_file_actions_addclose(&fa, fd[1]);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, "git", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (rc != 0) {
		close(fd[0]);
		return NULL;
	}
	struct kg_buf out = KG_BUF_INIT;
	char buf[4096];
	ssize_t r;
	while ((r = read(fd[0], buf, sizeof buf)) > 0)
		buf_add(&out, buf, (size_t)r);
	close(fd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !out.s) {
		buf_free(&out);
		return NULL;
	}
	out.s[strcspn(out.s, "\n")] = '\0';
	if (!*out.s) {
		buf_free(&out);
		return NULL;
	}
	return buf_detach(&out);
}

/* The hook script: $KGATE_HOOK_SCRIPT, then beside the binary. */
static char *hook_script(void)
{
	const char *env = getenv("KGATE_HOOK_SCRIPT");
	if (env && *env)
		return realpath(env, NULL);
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	static const char *const rel[] = {
		"../share/kgate/pre-push",      /* installed: PREFIX/bin/kgate */
		"../scripts/pre-push",          /* build tree: build/kgate */
		"../../scripts/pre-push",       /* build tree: build-san/x/kgate */
	};
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		char *p = xasprintf("%s/%s", exe, rel[i]);
		char *r = realpath(p, NULL);
		free(p);
		if (r && access(r, X_OK) == 0)
			return r;
		free(r);
	}
	return NULL;
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
	char *hooks = git_line("--git-path", "hooks");
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
	if (cmd_wants_help(argc, argv)) {
		fputs(usage_text, stdout);
		return KG_EXIT_PASS;
	}
	if (argc == 2 && strcmp(argv[1], "install") == 0)
		return install();
	if (argc == 2 && strcmp(argv[1], "path") == 0) {
		char *s = hook_script();
		if (!s) {
			kg_error("cannot find kgate's pre-push script; set KGATE_HOOK_SCRIPT");
			return KG_EXIT_RUNTIME;
		}
		printf("%s\n", s);
		free(s);
		return KG_EXIT_PASS;
	}
	if (argc < 2)
		kg_error("hook: say what to do: 'kgate hook install'");
	else
		kg_error("hook: unknown subcommand or argument '%s'; see 'kgate hook --help'", argv[1]);
	return KG_EXIT_USAGE;
}
