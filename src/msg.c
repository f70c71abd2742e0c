/*
 * msg.c: kgate's own messages on stderr, kg_error(), kg_warn() and
 * kg_note() (declared in kgate/util.h): "kgate: " and the message as one
 * line of terminal text (escape_text: a name inside it cannot start a new
 * line or move the cursor).
 */
#include "kgate/escape.h"
#include "kgate/util.h"

#include <stdarg.h>
#include <stdio.h>

static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
	struct kg_buf m = KG_BUF_INIT, b = KG_BUF_INIT;

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
