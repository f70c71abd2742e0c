/*
 * git.c: the few questions kgate asks git (git.h).  git(1) runs without a
 * shell through posix_spawnp; its stdout is captured through a pipe and its
 * stderr discarded.  Any failure answers NULL.
 */
#include "kgate/git.h"
#include "kgate/util.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* git's exit status, or -1 when it was killed or cannot be waited for (a
 * parent that ignored SIGCHLD leaves nothing to wait for: ECHILD). */
static int git_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Run git with args; its stdout up to the first newline, or NULL. */
static char *git_run(const char *const *args)
{
	posix_spawn_file_actions_t fa;
	int fd[2];
	pid_t pid;
	char *argv[16];
	size_t n = 0;

	argv[n++] = (char *)"git";
	for (; *args && n < 15; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	if (pipe(fd) != 0)
		return NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	posix_spawn_file_actions_addclose(&fa, fd[1]);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
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
	while ((r = read(fd[0], buf, sizeof(buf))) > 0)
		buf_add(&out, buf, (size_t)r);
	close(fd[0]);
	if (git_wait(pid) != 0 || !out.s) {
		buf_free(&out);
		return NULL;
	}
	char *nl = strchr(out.s, '\n');
	if (nl)
		*nl = '\0';
	if (!out.s[0]) {
		buf_free(&out);
		return NULL;
	}
	return buf_detach(&out);
}

char *git_rev_parse(const char *ref)
{
	char *spec = xasprintf("%s^{commit}", ref);
	const char *a[] = { "rev-parse", "--verify", "--quiet", spec, NULL };
	char *r = git_run(a);
	free(spec);
	return r;
}

char *git_head(void)
{
	return git_rev_parse("HEAD");
}

char *git_branch(void)
{
	const char *e = getenv("GITHUB_HEAD_REF");
	if (e && *e)
		return xstrdup(e);
	e = getenv("GITHUB_REF_NAME");
	if (e && *e)
		return xstrdup(e);
	const char *a[] = { "symbolic-ref", "--quiet", "--short", "HEAD", NULL };
	return git_run(a);
}

char *git_default_branch(void)
{
	const char *a[] = { "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD", NULL };
	char *r = git_run(a);
	if (r) {
		char *slash = strchr(r, '/');
		if (slash) {
			char *b = xstrdup(slash + 1);
			free(r);
			return b;
		}
		return r;
	}
	const char *names[] = { "main", "master" };
	for (size_t i = 0; i < 2; i++) {
		char *ref = xasprintf("refs/heads/%s", names[i]);
		const char *v[] = { "rev-parse", "--verify", "--quiet", ref, NULL };
		char *sha = git_run(v);
		free(ref);
		if (sha) {
			free(sha);
			return xstrdup(names[i]);
		}
	}
	return NULL;
}

char *git_merge_base(const char *a, const char *b)
{
	const char *args[] = { "merge-base", a, b, NULL };
	return git_run(args);
}

char *git_parent(const char *sha)
{
	char *spec = xasprintf("%s^1", sha);
	char *r = git_rev_parse(spec);
	free(spec);
	return r;
}

char *git_resolve(const char *c)
{
	char *full = c[0] && c[0] != '-' ? git_rev_parse(c) : NULL;
	return full ? full : xstrdup(c);
}

int git_is_shallow(void)
{
	const char *a[] = { "rev-parse", "--is-shallow-repository", NULL };
	char *r = git_run(a);
	int v = r ? !strcmp(r, "true") : -1;
	free(r);
	return v;
}

char *git_resolve_commit_arg(const char *c)
{
	char *full = git_resolve(c);
	size_t n = strlen(c), hex = strspn(c, "0123456789abcdefABCDEF");
	if (!strcmp(full, c) && hex == n && n >= 4 && n < 40)
		kg_warn("'%s' looks like a short commit SHA, but git cannot resolve it here: stored as"
			" given, so only this text finds it (give the full SHA)", c);
	return full;
}

int git_call(const char *const *args, int quiet)
{
	posix_spawn_file_actions_t fa;
	char *argv[24];
	size_t n = 0;
	pid_t pid;

	argv[n++] = (char *)"git";
	for (; *args && n < 23; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (quiet) {
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	} else {
		posix_spawn_file_actions_adddup2(&fa, 2, 1);   /* git's chatter is ours */
	}
	int rc = posix_spawnp(&pid, "git", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	return git_wait(pid);
}

char *git_output(const char *const *args)
{
	return git_run(args);
}

char *git_hooks_dir(void)
{
	const char *a[] = { "rev-parse", "--git-path", "hooks", NULL };
	return git_run(a);
}

int git_is_dirty(void)
{
	const char *a[] = { "status", "--porcelain", "--untracked-files=no", NULL };
	char *r = git_run(a);
	free(r);
	return r != NULL;
}
