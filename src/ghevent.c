/*
 * ghevent.c: the GitHub Actions event payload (ghevent.h), read with
 * jansson from the file GITHUB_EVENT_PATH names, only when GITHUB_ACTIONS
 * is "true".  Only the fields kgate uses are kept; an unreadable or
 * malformed payload is a warning and kgate goes on as outside Actions.
 */
#include "kgate/ghevent.h"
#include "kgate/git.h"
#include "kgate/util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* A copy of the string at a dotted path of o ("pull_request.head.sha"). */
static char *jpath(json_t *o, const char *path)
{
	char *p = xstrdup(path), *save = NULL;
	for (char *k = strtok_r(p, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = json_is_object(o) ? json_object_get(o, k) : NULL;
	free(p);
	return json_is_string(o) && *json_string_value(o) ? xstrdup(json_string_value(o)) : NULL;
}

/* A full hexadecimal SHA-1 or SHA-256 object name, and not all zeros. */
static int is_sha(const char *s)
{
	size_t n = s ? strspn(s, "0123456789abcdef") : 0;
	return s && !s[n] && (n == 40 || n == 64) && strspn(s, "0") != n;
}

void ghevent_free(struct kg_ghevent *ev)
{
	free(ev->name);
	free(ev->head_sha);
	free(ev->head_ref);
	free(ev->base_sha);
	free(ev->base_ref);
	free(ev->before);
	free(ev->branch);
	free(ev->default_branch);
	memset(ev, 0, sizeof *ev);
}

int ghevent_parse(const char *path, const char *name, struct kg_ghevent *ev)
{
	json_error_t err;
	memset(ev, 0, sizeof *ev);
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	if (!root) {
		kg_warn("cannot read the GitHub event '%s' (GITHUB_EVENT_PATH): %s (line %d);"
			" going on without it", path, err.text, err.line);
		return -1;
	}
	if (!json_is_object(root)) {
		kg_warn("cannot use the GitHub event '%s' (GITHUB_EVENT_PATH): not a JSON object;"
			" going on without it", path);
		json_decref(root);
		return -1;
	}
	ev->name = xstrdup(name ? name : "");
	ev->default_branch = jpath(root, "repository.default_branch");
	if (!strcmp(ev->name, "pull_request") || !strcmp(ev->name, "pull_request_target")) {
		ev->head_sha = jpath(root, "pull_request.head.sha");
		ev->head_ref = jpath(root, "pull_request.head.ref");
		ev->base_sha = jpath(root, "pull_request.base.sha");
		ev->base_ref = jpath(root, "pull_request.base.ref");
		json_t *num = json_object_get(json_object_get(root, "pull_request"), "number");
		ev->pr = json_is_integer(num) ? (long)json_integer_value(num) : 0;
		if (!is_sha(ev->head_sha) || (ev->base_sha && !is_sha(ev->base_sha))) {
			kg_warn("the GitHub event '%s' (%s) has no valid pull_request.head.sha;"
				" going on without it", path, ev->name);
			json_decref(root);
			ghevent_free(ev);
			return -1;
		}
		ev->kind = KG_EV_PULL_REQUEST;
	} else if (!strcmp(ev->name, "push")) {
		ev->head_sha = jpath(root, "after");
		ev->before = jpath(root, "before");
		if (ev->before && !is_sha(ev->before)) {
			free(ev->before);       /* all zeros: the branch is new */
			ev->before = NULL;
		}
		char *ref = jpath(root, "ref");
		if (ref && !strncmp(ref, "refs/heads/", 11))
			ev->branch = xstrdup(ref + 11);
		free(ref);
		ev->kind = KG_EV_PUSH;
	} else {
		ev->kind = KG_EV_OTHER;
	}
	json_decref(root);
	return 1;
}

int ghevent_load(struct kg_ghevent *ev)
{
	memset(ev, 0, sizeof *ev);
	const char *on = getenv("GITHUB_ACTIONS"), *path = getenv("GITHUB_EVENT_PATH");
	if (!on || strcmp(on, "true") || !path || !*path)
		return 0;
	return ghevent_parse(path, getenv("GITHUB_EVENT_NAME"), ev);
}

int ghevent_push_to_default(const struct kg_ghevent *ev)
{
	return ev->kind == KG_EV_PUSH && ev->branch && ev->default_branch &&
	       !strcmp(ev->branch, ev->default_branch);
}

char *ghevent_default_commit(void)
{
	char *sha = ghevent_head_commit();
	if (!sha)
		kg_error("no --commit given and 'git rev-parse HEAD' has no answer here");
	return sha;
}

char *ghevent_head_commit(void)
{
	struct kg_ghevent ev;
	char *head = git_head();
	if (ghevent_load(&ev) != 1 || ev.kind != KG_EV_PULL_REQUEST)
		goto out;
	/* The checkout is the head itself, or GitHub's merge commit of it
	 * (refs/pull/N/merge: parents base, head).  Anything else (say the
	 * base branch, as pull_request_target checks out) is left as it is. */
	int ours = !head || !strcmp(head, ev.head_sha);
	for (int i = 1; i <= 2 && !ours; i++) {
		char *spec = xasprintf("HEAD^%d", i);
		char *p = git_rev_parse(spec);
		ours = p && !strcmp(p, ev.head_sha);
		free(p);
		free(spec);
	}
	if (ours) {
		if (head && strcmp(head, ev.head_sha))
			kg_note("pull request #%ld: filing the merge commit %.12s under the head commit %.12s",
				ev.pr, head, ev.head_sha);
		free(head);
		head = xstrdup(ev.head_sha);
	} else {
		kg_warn("the checkout %.12s is neither pull request #%ld's head %.12s nor its merge"
			" commit; using the checkout", head, ev.pr, ev.head_sha);
	}
out:
	ghevent_free(&ev);
	return head;
}
