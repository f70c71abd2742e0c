/*
 * github.c: pull request comment upsert and commit status (kgate/github.h).
 *
 * Owns the GitHub REST calls kgate makes and their JSON (jansson).  Page
 * links are followed only while they stay on the API's origin, so the
 * token is never sent to another host.
 */
#include "kgate/github.h"
#include "kgate/http.h"
#include "kgate/util.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACCEPT "application/vnd.github+json"
static const char *const api_headers[] = { "X-GitHub-Api-Version: 2022-11-28", NULL };

int github_repo_valid(const char *repo)
{
	const char *slash = repo ? strchr(repo, '/') : NULL;
	if (!slash || slash == repo || !slash[1] || strchr(slash + 1, '/'))
		return 0;
	for (const char *p = repo; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_./", *p))
			return 0;
	return strcmp(slash + 1, ".") != 0 && strcmp(slash + 1, "..") != 0;
}

int github_open(struct github *gh, const char *repo)
{
	memset(gh, 0, sizeof *gh);
	if (!github_repo_valid(repo)) {
		kg_error("invalid repository '%s': want OWNER/NAME", repo ? repo : "");
		return -1;
	}
	const char *token = getenv("GITHUB_TOKEN");
	if (!token || !*token) {
		kg_error("GITHUB_TOKEN is not set; it must hold a token that may write pull request comments");
		return -1;
	}
	const char *api = getenv("GITHUB_API_URL");
	if (!api || !*api)
		api = "https://api.github.com";
	if (strncmp(api, "https://", 8) != 0 && strncmp(api, "http://", 7) != 0) {
		kg_error("GITHUB_API_URL '%s' is not an http or https URL", api);
		return -1;
	}
	gh->api = xstrdup(api);
	size_t l = strlen(gh->api);
	while (l > 0 && gh->api[l - 1] == '/')
		gh->api[--l] = '\0';
	gh->token = xstrdup(token);
	const char *slash = strchr(repo, '/');
	gh->owner = xstrndup(repo, (size_t)(slash - repo));
	gh->name = xstrdup(slash + 1);
	return 0;
}

void github_close(struct github *gh)
{
	free(gh->api);
	if (gh->token)
		memset(gh->token, 0, strlen(gh->token));
	free(gh->token);
	free(gh->owner);
	free(gh->name);
	memset(gh, 0, sizeof *gh);
}

static int call(struct github *gh, const char *method, const char *url, json_t *body,
		struct http_response *resp, const char *what)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	struct http_request req = {
		.method = method, .url = url, .body = text, .accept = ACCEPT,
		.token = gh->token, .headers = api_headers,
	};
	int rc = http_send(&req, resp);
	if (rc != 0) {
		char *d = http_describe(&req, resp);
		kg_error("cannot %s: %s", what, d);
		free(d);
	}
	free(text);
	return rc;
}

static int same_origin(const char *a, const char *b)
{
	char *oa = http_origin(a), *ob = http_origin(b);
	int same = strcmp(oa, ob) == 0 && strcmp(oa, "?") != 0;
	free(oa);
	free(ob);
	return same;
}

/*
 * Who the token writes as: GET /user.  A GitHub App's installation token
 * (the GITHUB_TOKEN of GitHub Actions) may not read /user (403); its
 * comments are written by the bot account "github-actions[bot]", a Bot that
 * no person can write as.  0, or -1 after printing the error.
 */
#define ACTIONS_BOT "github-actions[bot]"
static int token_user(struct github *gh, long long *id, char **login)
{
	char *url = xasprintf("%s/user", gh->api);
	struct http_request req = {
		.method = "GET", .url = url, .accept = ACCEPT, .token = gh->token,
		.headers = api_headers,
	};
	struct http_response resp;
	int rc = http_send(&req, &resp);

	*id = -1;
	*login = NULL;
	if (rc == 0) {
		json_t *u = json_loads(resp.body, 0, NULL);
		json_t *jid = json_object_get(u, "id");
		const char *l = json_string_value(json_object_get(u, "login"));
		if (json_is_integer(jid) && l) {
			*id = (long long)json_integer_value(jid);
			*login = xstrdup(l);
		} else {
			kg_error("cannot tell whose the token is: GET /user gave no id and login");
			rc = -1;
		}
		json_decref(u);
	} else if (resp.status == 403) {
		*login = xstrdup(ACTIONS_BOT);
		rc = 0;
	} else {
		char *d = http_describe(&req, &resp);
		kg_error("cannot tell whose the token is: %s", d);
		free(d);
	}
	http_response_free(&resp);
	free(url);
	return rc;
}

/* 1 when comment c was written by the token's user (id, or login for a Bot). */
static int written_by(json_t *c, long long id, const char *login)
{
	json_t *u = json_object_get(c, "user");
	json_t *uid = json_object_get(u, "id");
	const char *ul = json_string_value(json_object_get(u, "login"));
	const char *type = json_string_value(json_object_get(u, "type"));

	if (id >= 0)
		return json_is_integer(uid) && (long long)json_integer_value(uid) == id;
	return ul && type && login && !strcmp(type, "Bot") && !strcmp(ul, login);
}

/*
 * The id of the first comment holding the marker and written by the
 * token's user, 0 for none, -1 on error.  A marker in anyone else's
 * comment is not adopted: its author could edit what kgate writes.
 */
static long long find_comment(struct github *gh, long pr)
{
	long long me = -1;
	char *my_login = NULL;
	int know_me = 0, warned = 0;
	char *url = xasprintf("%s/repos/%s/%s/issues/%ld/comments?per_page=100",
			      gh->api, gh->owner, gh->name, pr);
	long long found = 0;
	int pages = 0;
	while (url && !found) {
		struct http_response resp;
		if (call(gh, "GET", url, NULL, &resp, "list the pull request's comments") != 0) {
			http_response_free(&resp);
			free(url);
			free(my_login);
			return -1;
		}
		json_error_t jerr;
		json_t *list = json_loads(resp.body, 0, &jerr);
		if (!json_is_array(list)) {
			kg_error("cannot list the pull request's comments: the reply is not a JSON array");
			json_decref(list);
			http_response_free(&resp);
			free(url);
			free(my_login);
			return -1;
		}
		size_t i;
		json_t *c;
		json_array_foreach(list, i, c) {
			const char *b = json_string_value(json_object_get(c, "body"));
			json_t *id = json_object_get(c, "id");
			if (!b || !strstr(b, KG_GITHUB_MARKER) || !json_is_integer(id))
				continue;
			if (!know_me) {
				if (token_user(gh, &me, &my_login) != 0) {
					found = -1;
					break;
				}
				know_me = 1;
			}
			if (written_by(c, me, my_login)) {
				found = (long long)json_integer_value(id);
				break;
			}
			if (!warned++) {
				const char *who = json_string_value(json_object_get(
					json_object_get(c, "user"), "login"));
				kg_warn("comment %lld holds kgate's marker but was written by '%s', "
					"not by the token's user '%s'; leaving it alone",
					(long long)json_integer_value(id), who ? who : "?", my_login);
			}
		}
		json_decref(list);
		if (found < 0) {
			http_response_free(&resp);
			free(url);
			free(my_login);
			return -1;
		}
		char *next = found ? NULL : http_link_next(resp.link);
		http_response_free(&resp);
		if (next && !same_origin(next, gh->api)) {
			kg_error("cannot list the pull request's comments: the next page is on another host; not following it");
			free(next);
			free(url);
			free(my_login);
			return -1;
		}
		if (++pages > 1000) {
			kg_error("cannot list the pull request's comments: more than 1000 pages");
			free(next);
			free(url);
			free(my_login);
			return -1;
		}
		free(url);
		url = next;
	}
	free(url);
	free(my_login);
	return found;
}

int github_comment_upsert(struct github *gh, long pr, const char *body, int *created,
			  char **html_url)
{
	long long id = find_comment(gh, pr);
	if (id < 0)
		return -1;
	char *text = strstr(body, KG_GITHUB_MARKER) ? xstrdup(body)
		: xasprintf("%s\n%s", KG_GITHUB_MARKER, body);
	json_t *j = json_pack("{s:s}", "body", text);
	free(text);
	if (!j) {
		kg_error("cannot post the comment: its body is not valid UTF-8");
		return -1;
	}
	char *url;
	struct http_response resp;
	int rc;
	if (id > 0) {
		url = xasprintf("%s/repos/%s/%s/issues/comments/%lld", gh->api, gh->owner,
				gh->name, id);
		rc = call(gh, "PATCH", url, j, &resp, "edit the pull request comment");
	} else {
		url = xasprintf("%s/repos/%s/%s/issues/%ld/comments", gh->api, gh->owner,
				gh->name, pr);
		rc = call(gh, "POST", url, j, &resp, "create the pull request comment");
	}
	if (rc == 0) {
		if (created)
			*created = id == 0;
		if (html_url) {
			json_t *r = json_loads(resp.body, 0, NULL);
			const char *u = json_string_value(json_object_get(r, "html_url"));
			*html_url = u ? xstrdup(u) : NULL;
			json_decref(r);
		}
	}
	http_response_free(&resp);
	json_decref(j);
	free(url);
	return rc;
}

int github_status_set(struct github *gh, const char *sha, const char *state,
		      const char *description, const char *target_url)
{
	for (const char *p = sha; *p; p++)
		if (!isxdigit((unsigned char)*p)) {
			kg_error("cannot set the commit status: '%s' is not a commit SHA", sha);
			return -1;
		}
	char desc[141];   /* GitHub keeps 140 characters */
	snprintf(desc, sizeof desc, "%s", description ? description : "");
	json_t *j = json_pack("{s:s,s:s,s:s}", "state", state, "context", "kgate",
			      "description", desc);
	if (!j) {
		kg_error("cannot set the commit status: invalid text");
		return -1;
	}
	if (target_url)
		json_object_set_new(j, "target_url", json_string(target_url));
	char *url = xasprintf("%s/repos/%s/%s/statuses/%s", gh->api, gh->owner, gh->name, sha);
	struct http_response resp;
	int rc = call(gh, "POST", url, j, &resp, "set the commit status");
	http_response_free(&resp);
	json_decref(j);
	free(url);
	return rc;
}

char *github_commit_url(const char *sha)
{
	const char *server = getenv("GITHUB_SERVER_URL"), *repo = getenv("GITHUB_REPOSITORY");
	if (!server || (strncmp(server, "https://", 8) && strncmp(server, "http://", 7)) ||
	    strpbrk(server, " \"<>()[]`") || !repo || !github_repo_valid(repo) || !kg_is_sha(sha))
		return NULL;
	size_t n = strlen(server);
	while (n > 8 && server[n - 1] == '/')
		n--;
	return xasprintf("%.*s/%s/commit/%s", (int)n, server, repo, sha);
}
