/*
 * msg.c: kgate's own messages on stderr, kg_error(), kg_warn() and
 * kg_note() (declared in kgate/util.h): "kgate: " and the message as one
 * line of terminal text (escape_text: a name inside it cannot start a new
 * line or move the cursor).  And the progress line of a suite run,
 * kg_progress(): rewritten in place on a terminal, plain lines otherwise;
 * a message printed while it is shown first clears it.
 */
#include "kgate/escape.h"
#include "kgate/util.h"

#include <jansson.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int progress_open;       /* a progress line is on the terminal, unended */

/* --format json: the errors kept for one JSON object on stdout. */
static int json_mode, json_written;
static struct kg_buf json_msgs;  /* the error messages, NUL-separated */
static size_t json_n;

void kg_json_errors(int on)
{
	json_mode = on;
}

void kg_json_document_written(void)
{
	json_written = 1;
}

void kg_json_print(struct json_t *doc, size_t flags)
{
	json_dumpf(doc, stdout, flags);
	putchar('\n');
	kg_json_document_written();
	json_decref(doc);
}

void kg_json_errors_finish(int status)
{
	if (!json_mode || json_written || status < 2)
		return;
	json_t *o = json_object(), *a = json_array();
	const char *p = json_msgs.s;
	for (size_t i = 0; i < json_n; i++, p += strlen(p) + 1) {
		char *c = escape_utf8_dup(p);
		json_array_append_new(a, json_string(c));
		free(c);
	}
	json_object_set_new(o, "error", json_n ? json_incref(json_array_get(a, 0))
					     : json_string(status == 2 ? "usage or input error"
									: "runtime failure"));
	json_object_set_new(o, "messages", a);
	json_object_set_new(o, "exit_status", json_integer(status));
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (s)
		printf("%s\n", s);
	free(s);
	json_decref(o);
	buf_free(&json_msgs);
	json_n = 0;
}

void kg_progress_end(void)
{
	if (progress_open)
		fputs("\r\033[K", stderr);
	progress_open = 0;
	fflush(stderr);
}

int kg_progress_inplace(void)
{
	const char *term = getenv("TERM");
	return isatty(2) && !(term && !strcmp(term, "dumb"));
}

void kg_progress(int inplace, const char *fmt, ...)
{
	struct kg_buf m = KG_BUF_INIT, b = KG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&m, fmt, ap);
	va_end(ap);
	escape_text(&b, m.s);
	buf_free(&m);
	if (!inplace) {
		buf_addc(&b, '\n');
		fwrite(b.s, 1, b.len, stderr);
		buf_free(&b);
		return;
	}
	/* one line that never wraps: cut to the terminal's width */
	struct winsize ws;
	size_t cols = ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col - 1u : 79u;
	size_t w = 0, i = 0;
	for (; i < b.len; i++)
		if (((unsigned char)b.s[i] & 0xc0) != 0x80 && ++w > cols)
			break;
	fputs("\r\033[K", stderr);
	fwrite(b.s, 1, i, stderr);
	fflush(stderr);
	progress_open = 1;
	buf_free(&b);
}

static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
	struct kg_buf m = KG_BUF_INIT, b = KG_BUF_INIT;

	if (progress_open)
		kg_progress_end();
	buf_vprintf(&m, fmt, ap);
	if (json_mode && !strcmp(prefix, "kgate: error") && m.s) {
		buf_add(&json_msgs, m.s, m.len + 1);
		json_n++;
	}
	if (!strcmp(prefix, "kgate: error"))
		prefix = "kgate: ";
	buf_adds(&b, prefix);
	escape_text(&b, m.s);
	buf_free(&m);
	buf_addc(&b, '\n');
	fwrite(b.s, 1, b.len, stderr);
	buf_free(&b);
}

void kg_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("kgate: error", fmt, ap);
	va_end(ap);
}

void kg_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("kgate: warning: ", fmt, ap);
	va_end(ap);
}

void kg_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("kgate: ", fmt, ap);
	va_end(ap);
}
