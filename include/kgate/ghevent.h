/*
 * ghevent.h: the GitHub Actions event a job runs for, and the commits kgate
 * takes from it.
 *
 * When GITHUB_ACTIONS is "true" and GITHUB_EVENT_PATH names the event's
 * JSON payload, kgate files the run of a pull request under the pull
 * request's head commit (the one its page shows), not under the merge
 * commit GitHub checks out, and picks the baseline the event implies:
 * the merge base of the head with the base branch's commit for a pull
 * request, the previous stored run of the branch for a push to the
 * default branch.  Outside Actions nothing here changes anything.
 */
#ifndef KGATE_GHEVENT_H
#define KGATE_GHEVENT_H

enum kg_ghevent_kind {
	KG_EV_NONE = 0,         /* not in Actions, or an event kgate takes nothing from */
	KG_EV_PULL_REQUEST,     /* pull_request, pull_request_target */
	KG_EV_PUSH,             /* push */
	KG_EV_OTHER,            /* schedule, workflow_dispatch, ... */
};

struct kg_ghevent {
	enum kg_ghevent_kind kind;
	char *name;             /* GITHUB_EVENT_NAME */
	char *head_sha;         /* pull_request.head.sha; push: after */
	char *head_ref;         /* pull_request.head.ref */
	char *base_sha;         /* pull_request.base.sha */
	char *base_ref;         /* pull_request.base.ref */
	char *before;           /* push: before (NULL when all zeros: a new branch) */
	char *branch;           /* push: the branch pushed (ref without refs/heads/) */
	char *default_branch;   /* repository.default_branch */
	long pr;                /* pull_request.number, 0 when none */
};

/*
 * The event of this job: 1 read (ev filled), 0 not in Actions or no event
 * file (ev zeroed), -1 the event file cannot be read or parsed (said as a
 * warning; ev zeroed, so callers go on as outside Actions).
 */
int ghevent_load(struct kg_ghevent *ev);
/* The same from a named file and event name (ghevent_load's core; tests). */
int ghevent_parse(const char *path, const char *name, struct kg_ghevent *ev);
void ghevent_free(struct kg_ghevent *ev);

/* 1 when ev is a push to the repository's default branch. */
int ghevent_push_to_default(const struct kg_ghevent *ev);

/*
 * The commit a run, a check or a comment is of when none is given: the
 * pull request's head commit on a pull request event (when the checkout is
 * that commit or GitHub's merge commit of it), else git rev-parse HEAD.
 * malloc'd; NULL when neither answers.
 */
char *ghevent_head_commit(void);
/* The same as the default of a command's --commit: NULL after saying that
 * no --commit was given and git has no answer. */
char *ghevent_default_commit(void);

#endif
