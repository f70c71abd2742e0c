/*
 * git.h: the few questions kgate asks git, answered by running git(1)
 * without a shell.  Each returns a malloc'd string, or NULL (quietly) when
 * git or the repository cannot answer.
 */
#ifndef KGATE_GIT_H
#define KGATE_GIT_H

char *git_rev_parse(const char *ref);         /* full SHA of ref */
char *git_head(void);                         /* git rev-parse HEAD */
char *git_branch(void);                       /* GITHUB_HEAD_REF, GITHUB_REF_NAME, or the current branch */
char *git_default_branch(void);               /* origin/HEAD's target, else main or master */
char *git_merge_base(const char *a, const char *b);
char *git_parent(const char *sha);            /* first parent */
/* A commit as given (short SHA, ref, label): the full SHA when git knows
 * it as a commit, else a copy of c.  Never NULL. */
char *git_resolve(const char *c);
/* git_resolve for a commit about to be stored: warns when c looks like a
 * short SHA that git cannot resolve here (it is then stored as given). */
char *git_resolve_commit_arg(const char *c);
/* 1 when the repository is a shallow clone, 0 when not, -1 when git cannot say. */
int git_is_shallow(void);
/* The first line git prints for args (as the questions above), or NULL. */
char *git_output(const char *const *args);
/* The repository's hooks directory (git rev-parse --git-path hooks, which
 * honours core.hooksPath), relative to the current directory or absolute. */
char *git_hooks_dir(void);
/* 1 when tracked files differ from HEAD or the index (untracked ignored). */
int git_is_dirty(void);
/* Run git with args, its output on our stderr (quiet: discarded); its
 * exit status, or -1 when it could not run or was killed. */
int git_call(const char *const *args, int quiet);

#endif
