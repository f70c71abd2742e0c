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

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int progress_open;       /* a progress line is on the terminal, unended */

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
	vmessage("kgate: ", fmt, ap);
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
