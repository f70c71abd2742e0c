/*
 * http.h: kgate's HTTP client (libcurl), for the GitHub API and webhooks.
 *
 * One call, http_send(), makes a request with a timeout, retries it with
 * exponential backoff on transport errors and 5xx replies, and waits out
 * rate limits (403/429 with Retry-After or X-RateLimit-Reset) before trying
 * again.  A bearer token given in the request is sent only in the
 * Authorization header and is never printed: every message this module
 * writes (errors, KGATE_HTTP_VERBOSE traces) passes through http_redact(),
 * and URLs are printed without their path and query (a webhook URL is a
 * secret too).
 *
 * Environment: KGATE_HTTP_TIMEOUT (seconds per attempt, default 30),
 * KGATE_HTTP_RETRIES (extra attempts, default 4), KGATE_HTTP_BACKOFF_MS
 * (first backoff, doubled each time, default 1000), KGATE_HTTP_MAX_WAIT
 * (longest rate-limit wait honoured, seconds, default 120),
 * KGATE_HTTP_VERBOSE=1 (trace requests and reply headers on stderr).
 */
#ifndef KGATE_HTTP_H
#define KGATE_HTTP_H

#include <stddef.h>

struct http_request {
	const char *method;       /* "GET", "POST", "PATCH" */
	const char *url;
	const char *body;         /* NULL for none */
	const char *content_type; /* default "application/json" when body given */
	const char *accept;       /* Accept header, or NULL */
	const char *token;        /* bearer token, or NULL; never printed */
	const char *const *headers; /* extra "Name: value" lines, NULL-terminated, or NULL */
};

struct http_response {
	long status;              /* HTTP status of the last attempt; 0 if none */
	char *body;               /* NUL-terminated, possibly empty */
	size_t len;
	char *link;               /* the Link header, or NULL */
	int attempts;             /* attempts made */
	char error[256];          /* transport error (redacted), "" when a reply came */
};

/*
 * Send req.  Returns 0 when a reply with a status below 400 came back, -1
 * otherwise (resp->status says which reply, or 0 with resp->error set for a
 * transport failure).  No message is printed on failure; callers say what
 * failed with http_describe().  resp must be freed with http_response_free.
 */
int http_send(const struct http_request *req, struct http_response *resp);
void http_response_free(struct http_response *resp);

/* A one-line description of a failed send, redacted, for kg_error/kg_warn. */
char *http_describe(const struct http_request *req, const struct http_response *resp);

/* s with every occurrence of secret replaced by "***" (malloc'd). */
char *http_redact(const char *s, const char *secret);

/* scheme://host[:port] of url (malloc'd), for messages; "?" when unparsable. */
char *http_origin(const char *url);

/* The URL of rel="next" in a Link header (malloc'd), or NULL. */
char *http_link_next(const char *link);

/* Seconds to wait from a Retry-After value (delta seconds or HTTP date); -1 if invalid. */
double http_retry_after(const char *value, long now);

#endif
