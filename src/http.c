/*
 * http.c: kgate's HTTP client over libcurl (see kgate/http.h).
 *
 * Owns the retry policy (backoff on transport errors and 5xx, waiting out
 * 403/429 rate limits), per-attempt timeouts, reading reply headers that
 * callers need (Link), and redaction: the bearer token is only ever placed
 * in the Authorization header list, and everything this module prints or
 * hands back as text has been through http_redact().
 *
 * libcurl is loaded with dlopen at the first call that needs it, not linked:
 * with its thirty libraries (TLS, Kerberos, LDAP, ...) the dynamic loader
 * took about 30 ms of every kgate process, 80% of `kgate --version` and a
 * fifth of a small check, which mostly never talk HTTP.  Its functions are
 * called through the table `cu` (the list in CURL_FUNCS).
 */
#include "kgate/escape.h"
#include "kgate/http.h"
#include "kgate/kgate.h"
#include "kgate/util.h"

#include <ctype.h>
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_BODY (32u << 20)

/* The libcurl functions kgate calls: type, name (without "curl_"), arguments. */
#define CURL_FUNCS(X)                                                              \
	X(CURLcode, global_init, (long))                                           \
	X(CURL *, easy_init, (void))                                               \
	X(void, easy_reset, (CURL *))                                              \
	X(CURLcode, easy_setopt, (CURL *, CURLoption, ...))                        \
	X(CURLcode, easy_perform, (CURL *))                                        \
	X(CURLcode, easy_getinfo, (CURL *, CURLINFO, ...))                         \
	X(const char *, easy_strerror, (CURLcode))                                 \
	X(void, easy_cleanup, (CURL *))                                            \
	X(struct curl_slist *, slist_append, (struct curl_slist *, const char *))  \
	X(void, slist_free_all, (struct curl_slist *))                             \
	X(time_t, getdate, (const char *, const time_t *))                         \
	X(CURLU *, url, (void))                                                    \
	X(CURLUcode, url_set, (CURLU *, CURLUPart, const char *, unsigned int))    \
	X(CURLUcode, url_get, (const CURLU *, CURLUPart, char **, unsigned int))   \
	X(void, url_cleanup, (CURLU *))                                            \
	X(void, free, (void *))

static struct {
#define FIELD(type, name, args) type(*name) args;
	CURL_FUNCS(FIELD)
#undef FIELD
} cu;

/* libcurl loaded, its functions in cu: 0; -1 when it cannot be (said once,
 * the reason in *why). */
static int curl_load(const char **why)
{
	static int state;       /* 0 not tried, 1 loaded, -1 failed */
	static char reason[200];

	if (!state) {
		void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
		state = lib ? 1 : -1;
		if (!lib)
			snprintf(reason, sizeof reason, "cannot load libcurl: %s", dlerror());
#define LOAD(type, name, args)                                                     \
		if (state == 1 && !(*(void **)&cu.name = dlsym(lib, "curl_" #name))) { \
			snprintf(reason, sizeof reason, "cannot load libcurl: no curl_%s", #name); \
			state = -1;                                                        \
		}
		CURL_FUNCS(LOAD)
#undef LOAD
		if (state == 1 && cu.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			snprintf(reason, sizeof reason, "cannot initialise libcurl");
			state = -1;
		}
	}
	if (why)
		*why = reason;
	return state == 1 ? 0 : -1;
}

static long env_long(const char *name, long def, long lo, long hi)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		kg_warn("ignoring %s='%s' (want an integer from %ld to %ld)", name, s, lo, hi);
		return def;
	}
	return v;
}

char *http_redact(const char *s, const char *secret)
{
	if (!s)
		return xstrdup("");
	if (!secret || !*secret)
		return xstrdup(s);
	struct kg_buf b = KG_BUF_INIT;
	size_t sl = strlen(secret);
	const char *p = s, *q;
	while ((q = strstr(p, secret))) {
		buf_add(&b, p, (size_t)(q - p));
		buf_adds(&b, "***");
		p = q + sl;
	}
	buf_adds(&b, p);
	return buf_detach(&b);
}

char *http_origin(const char *url)
{
	if (curl_load(NULL) != 0)
		return xstrdup("?");
	CURLU *u = cu.url();
	char *scheme = NULL, *host = NULL, *port = NULL, *out = NULL;
	if (u && cu.url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    cu.url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    cu.url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
		if (cu.url_get(u, CURLUPART_PORT, &port, 0) == CURLUE_OK)
			out = xasprintf("%s://%s:%s", scheme, host, port);
		else
			out = xasprintf("%s://%s", scheme, host);
	}
	cu.free(scheme);
	cu.free(host);
	cu.free(port);
	cu.url_cleanup(u);
	return out ? out : xstrdup("?");
}

char *http_link_next(const char *link)
{
	/* Link: <url>; rel="next", <url>; rel="last" */
	const char *p = link;
	while (p && *p) {
		const char *lt = strchr(p, '<');
		if (!lt)
			break;
		const char *gt = strchr(lt, '>');
		if (!gt)
			break;
		const char *end = strchr(gt, ',');
		size_t plen = end ? (size_t)(end - gt) : strlen(gt);
		char *params = xstrndup(gt + 1, plen - 1 + (end ? 0 : 1));
		int next = 0;
		for (char *r = params; (r = strstr(r, "rel=")); r += 4) {
			const char *v = r + 4;
			if (*v == '"')
				v++;
			/* rel may hold several space-separated values */
			const char *e = v + strcspn(v, "\";,");
			for (const char *w = v; w < e;) {
				size_t wl = strcspn(w, " \";,");
				if (wl == 4 && strncasecmp(w, "next", 4) == 0)
					next = 1;
				w += wl;
				while (w < e && *w == ' ')
					w++;
			}
		}
		free(params);
		if (next)
			return xstrndup(lt + 1, (size_t)(gt - lt - 1));
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

double http_retry_after(const char *value, long now)
{
	if (!value)
		return -1;
	while (isspace((unsigned char)*value))
		value++;
	if (!*value)
		return -1;
	if (isdigit((unsigned char)*value)) {
		char *end;
		double v = strtod(value, &end);
		while (isspace((unsigned char)*end))
			end++;
		return *end ? -1 : v;
	}
	time_t t = curl_load(NULL) == 0 ? cu.getdate(value, NULL) : -1;
	if (t == -1)
		return -1;
	return t > now ? (double)(t - now) : 0;
}

struct attempt {
	struct kg_buf body;
	int too_big;
	char *link;
	char *retry_after;
	char *rl_remaining;
	char *rl_reset;
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct attempt *a = ud;
	size_t len = size * n;
	if (a->body.len + len > MAX_BODY) {
		a->too_big = 1;
		return 0;
	}
	buf_add(&a->body, p, len);
	return len;
}

static char *header_value(const char *line, size_t len, const char *name)
{
	size_t nl = strlen(name);
	if (len <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
		return NULL;
	const char *v = line + nl + 1;
	const char *e = line + len;
	while (v < e && isspace((unsigned char)*v))
		v++;
	while (e > v && isspace((unsigned char)e[-1]))
		e--;
	return xstrndup(v, (size_t)(e - v));
}

static void set_header(char **slot, char *v)
{
	if (!v)
		return;
	free(*slot);
	*slot = v;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct attempt *a = ud;
	size_t len = size * n;
	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
		/* a new reply (after 100 Continue, say): forget the last one's headers */
		free(a->link); a->link = NULL;
		free(a->retry_after); a->retry_after = NULL;
		free(a->rl_remaining); a->rl_remaining = NULL;
		free(a->rl_reset); a->rl_reset = NULL;
		return len;
	}
	set_header(&a->link, header_value(p, len, "link"));
	set_header(&a->retry_after, header_value(p, len, "retry-after"));
	set_header(&a->rl_remaining, header_value(p, len, "x-ratelimit-remaining"));
	set_header(&a->rl_reset, header_value(p, len, "x-ratelimit-reset"));
	return len;
}

static void attempt_free(struct attempt *a)
{
	buf_free(&a->body);
	free(a->link);
	free(a->retry_after);
	free(a->rl_remaining);
	free(a->rl_reset);
	memset(a, 0, sizeof *a);
}

/* KGATE_HTTP_VERBOSE: headers both ways, Authorization and token redacted. */
static int on_debug(CURL *h, curl_infotype type, char *data, size_t size, void *ud)
{
	const char *token = ud;
	const char *dir;
	if (type == CURLINFO_HEADER_OUT)
		dir = "> ";
	else if (type == CURLINFO_HEADER_IN)
		dir = "< ";
	else if (type == CURLINFO_TEXT)
		dir = "* ";
	else
		return 0;
	char *text = xstrndup(data, size);
	char *red = http_redact(text, token);
	free(text);
	for (char *line = red, *nl; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		size_t l = strlen(line);
		if (l && line[l - 1] == '\r')
			line[--l] = '\0';
		if (!l)
			continue;
		if (strncasecmp(line, "authorization:", 14) == 0)
			fprintf(stderr, "kgate: http: %sAuthorization: ***\n", dir);
		else {
			char *safe = escape_text_dup(line);
			fprintf(stderr, "kgate: http: %s%s\n", dir, safe);
			free(safe);
		}
	}
	free(red);
	return 0;
}

static void sleep_s(double s)
{
	if (s <= 0)
		return;
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}


static int transient(CURLcode rc)
{
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
		return 1;
	default:
		return 0;
	}
}

int http_send(const struct http_request *req, struct http_response *resp)
{
	memset(resp, 0, sizeof *resp);
	const char *unloaded;
	if (curl_load(&unloaded) != 0) {
		snprintf(resp->error, sizeof resp->error, "%s", unloaded);
		resp->body = xstrdup("");
		return -1;
	}
	long timeout = env_long("KGATE_HTTP_TIMEOUT", 30, 1, 3600);
	long retries = env_long("KGATE_HTTP_RETRIES", 4, 0, 20);
	long backoff_ms = env_long("KGATE_HTTP_BACKOFF_MS", 1000, 0, 600000);
	long max_wait = env_long("KGATE_HTTP_MAX_WAIT", 120, 0, 86400);
	const char *vs = getenv("KGATE_HTTP_VERBOSE");
	int verbose = vs && *vs && strcmp(vs, "0") != 0;

	CURL *h = cu.easy_init();
	if (!h) {
		snprintf(resp->error, sizeof resp->error, "cannot initialise libcurl");
		resp->body = xstrdup("");
		return -1;
	}
	struct curl_slist *hdrs = NULL;
	char *line;
	if (req->accept) {
		line = xasprintf("Accept: %s", req->accept);
		hdrs = cu.slist_append(hdrs, line);
		free(line);
	}
	if (req->body) {
		line = xasprintf("Content-Type: %s",
				 req->content_type ? req->content_type : "application/json");
		hdrs = cu.slist_append(hdrs, line);
		free(line);
	}
	if (req->token && *req->token) {
		line = xasprintf("Authorization: Bearer %s", req->token);
		hdrs = cu.slist_append(hdrs, line);
		memset(line, 0, strlen(line));
		free(line);
	}
	for (const char *const *x = req->headers; x && *x; x++)
		hdrs = cu.slist_append(hdrs, *x);
	hdrs = cu.slist_append(hdrs, "Expect:");

	char cerr[CURL_ERROR_SIZE];
	struct attempt a;
	memset(&a, 0, sizeof a);
	int ok = -1;
	double wait = (double)backoff_ms / 1000.0;
	for (int attempt = 0;; attempt++) {
		attempt_free(&a);
		cerr[0] = '\0';
		cu.easy_reset(h);
		cu.easy_setopt(h, CURLOPT_URL, req->url);
		cu.easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
		if (strcmp(req->method, "GET") == 0)
			cu.easy_setopt(h, CURLOPT_HTTPGET, 1L);
		if (req->body) {
			cu.easy_setopt(h, CURLOPT_POSTFIELDS, req->body);
			cu.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(req->body));
		}
		cu.easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
		cu.easy_setopt(h, CURLOPT_USERAGENT, "kgate/" KGATE_VERSION);
		cu.easy_setopt(h, CURLOPT_TIMEOUT, timeout);
		cu.easy_setopt(h, CURLOPT_CONNECTTIMEOUT, timeout < 10 ? timeout : 10L);
		cu.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
		cu.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
		cu.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
		cu.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
		cu.easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
		cu.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
		cu.easy_setopt(h, CURLOPT_WRITEDATA, &a);
		cu.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
		cu.easy_setopt(h, CURLOPT_HEADERDATA, &a);
		if (verbose) {
			cu.easy_setopt(h, CURLOPT_VERBOSE, 1L);
			cu.easy_setopt(h, CURLOPT_DEBUGFUNCTION, on_debug);
			cu.easy_setopt(h, CURLOPT_DEBUGDATA, (void *)req->token);
		}
		CURLcode rc = cu.easy_perform(h);
		resp->attempts = attempt + 1;
		long status = 0;
		double delay = -1;      /* seconds before the next attempt, -1: stop */
		if (rc != CURLE_OK) {
			char *origin = http_origin(req->url);
			const char *why = a.too_big ? "reply larger than 32 MiB"
				: cerr[0] ? cerr : cu.easy_strerror(rc);
			char *msg = xasprintf("%s %s: %s", req->method, origin, why);
			char *red = http_redact(msg, req->token);
			snprintf(resp->error, sizeof resp->error, "%s", red);
			free(red);
			free(msg);
			free(origin);
			resp->status = 0;
			if (transient(rc) && !a.too_big)
				delay = wait;
		} else {
			cu.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
			resp->status = status;
			resp->error[0] = '\0';
			if (status >= 200 && status < 300) {
				ok = 0;
				break;
			}
			if (status < 400) {
				/* not followed (a token must not go where the URL did
				 * not say), and not a success: nothing was posted */
				char *from = http_origin(req->url), *to = NULL;
				char *loc = NULL;
				if (cu.easy_getinfo(h, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK && loc)
					to = http_origin(loc);
				char *msg = xasprintf("%s %s: HTTP %ld, a redirect to %s, which kgate "
						      "does not follow; check the API URL", req->method,
						      from, status, to ? to : "(no Location)");
				char *red = http_redact(msg, req->token);
				snprintf(resp->error, sizeof resp->error, "%s", red);
				free(red);
				free(msg);
				free(to);
				free(from);
				break;
			}
			double ra = http_retry_after(a.retry_after, (long)time(NULL));
			int limited = a.rl_remaining && strcmp(a.rl_remaining, "0") == 0;
			if (status >= 500) {
				delay = ra >= 0 ? ra : wait;
			} else if (status == 429 || (status == 403 && (ra >= 0 || limited))) {
				if (ra >= 0) {
					delay = ra;
				} else if (limited && a.rl_reset) {
					long reset = strtol(a.rl_reset, NULL, 10);
					long now = (long)time(NULL);
					delay = reset > now ? (double)(reset - now) : 1;
				} else {
					delay = wait;
				}
			}
			/* whatever the status: a server cannot make kgate sleep for a day */
			if (delay > (double)max_wait) {
				char *origin = http_origin(req->url);
				snprintf(resp->error, sizeof resp->error,
					 "%s %s: HTTP %ld: %s: the server asks to wait %.0f s, longer "
					 "than KGATE_HTTP_MAX_WAIT (%ld s)", req->method, origin, status,
					 status >= 500 ? "server error" : "rate limited", delay, max_wait);
				free(origin);
				delay = -1;
			}
		}
		if (delay < 0 || attempt >= retries)
			break;
		if (verbose)
			fprintf(stderr, "kgate: http: attempt %d failed; retrying in %.1f s\n",
				attempt + 1, delay);
		sleep_s(delay);
		wait *= 2;
	}
	resp->body = a.body.s ? buf_detach(&a.body) : xstrdup("");
	resp->len = strlen(resp->body);
	resp->link = a.link;
	a.link = NULL;
	attempt_free(&a);
	cu.slist_free_all(hdrs);
	cu.easy_cleanup(h);
	return ok;
}

void http_response_free(struct http_response *resp)
{
	free(resp->body);
	free(resp->link);
	memset(resp, 0, sizeof *resp);
}

/* The "message" of a JSON error body, else its first line, at most 200 bytes. */
static char *body_gist(const char *body)
{
	const char *m = strstr(body, "\"message\"");
	const char *s = body;
	size_t n;
	if (m && (m = strchr(m + 9, '"'))) {
		s = m + 1;
		n = strcspn(s, "\"");
	} else {
		n = strcspn(s, "\r\n");
	}
	if (n > 200)
		n = 200;
	char *g = xstrndup(s, n);
	for (char *p = g; *p; p++)
		if (!isprint((unsigned char)*p))
			*p = '?';
	return g;
}

char *http_describe(const struct http_request *req, const struct http_response *resp)
{
	char *origin = http_origin(req->url);
	char *msg;
	if (resp->error[0]) {
		msg = xasprintf("%s (after %d attempt%s)", resp->error, resp->attempts,
				resp->attempts == 1 ? "" : "s");
	} else {
		char *gist = body_gist(resp->body ? resp->body : "");
		const char *hint = "";
		if (resp->status == 401)
			hint = ": authentication failed; check that the token is set and valid";
		else if (resp->status == 403)
			hint = ": forbidden; check the token's permissions";
		else if (resp->status == 404)
			hint = ": not found; check the URL, repository and number, and that the token may see them";
		else if (resp->status >= 500)
			hint = ": server error";
		msg = xasprintf("%s %s: HTTP %ld%s%s%s%s (after %d attempt%s)", req->method, origin,
				resp->status, hint, *gist ? " (\"" : "", gist, *gist ? "\")" : "",
				resp->attempts, resp->attempts == 1 ? "" : "s");
		free(gist);
	}
	free(origin);
	char *red = http_redact(msg, req->token);
	free(msg);
	return red;
}
