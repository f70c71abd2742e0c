/*
 * github.h: the two things kgate does on GitHub, over http.h.
 *
 * The pull request comment: one per pull request, found by the hidden
 * marker KG_GITHUB_MARKER in its body (listing every page of the
 * pull request's comments, following the Link header), edited in place
 * when found and created otherwise.  The commit status: one "kgate" status
 * on a commit.  GITHUB_TOKEN authenticates; GITHUB_API_URL is the API's
 * base (default https://api.github.com, for GitHub Enterprise set it).
 *
 * Functions print "kgate: ..." on failure and return -1; 0 on success.
 */
#ifndef KGATE_GITHUB_H
#define KGATE_GITHUB_H

#define KG_GITHUB_MARKER "<!-- kgate -->"

struct github {
	char *api;      /* base URL without a trailing slash */
	char *token;    /* never printed */
	char *owner;
	char *name;
};

/* Fill gh from the environment and "OWNER/NAME"; -1 with a message on error. */
int github_open(struct github *gh, const char *repo);
void github_close(struct github *gh);

/* 1 when repo is a valid "OWNER/NAME". */
int github_repo_valid(const char *repo);

/*
 * Create or edit the pull request's kgate comment.  The marker is put in
 * front of body when body lacks it.  *created (when not NULL) is set to 1
 * for a new comment, 0 for an edit; *html_url (when not NULL) to the
 * comment's URL (malloc'd) where the reply gave one.
 */
int github_comment_upsert(struct github *gh, long pr, const char *body, int *created,
			  char **html_url);

/* state: "success", "failure", "error" or "pending". */
int github_status_set(struct github *gh, const char *sha, const char *state,
		      const char *description, const char *target_url);

/* The web page of commit sha, "<GITHUB_SERVER_URL>/<GITHUB_REPOSITORY>/commit/
 * <sha>" (malloc'd), when both variables are set, the repository is valid
 * and sha is a full commit SHA; else NULL. */
char *github_commit_url(const char *sha);

#endif
