/*
 * escape.c: every escaping of text for the readers kgate writes to:
 * terminal text, Markdown, HTML, XML, JSON strings, CSV fields, GitHub
 * workflow commands and Slack mrkdwn (the rules, one per target, are in
 * kgate/escape.h).  Owns the one reading of a string as UTF-8 characters
 * (invalid bytes, control characters) that every target shares.  A leaf:
 * util's buffer is all it uses.
 */
#include "kgate/escape.h"
#include "kgate/util.h"

#include <stdlib.h>
#include <string.h>

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

enum ch_kind { CH_PLAIN, CH_BAD, CH_CONTROL };

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
	if (!n || (n == 3 && c >= 0xf0))
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0)))
		return 0; /* overlong, surrogate */
	if (n == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}

/*
 * The character at *p: its kind, its bytes in *len (a bad byte is one),
 * and for a control character its code point in *cp.
 */
static enum ch_kind next_char(const unsigned char *p, size_t *len, unsigned *cp)
{
	size_t n = utf8_len(p);

	*len = n ? n : 1;
	if (!n)
		return CH_BAD;
	if (p[0] < 0x20 || p[0] == 0x7f) {
		*cp = p[0];
		return CH_CONTROL;
	}
	if (n == 2 && p[0] == 0xc2 && p[1] <= 0x9f) {
		*cp = p[1];
		return CH_CONTROL;
	}
	return CH_PLAIN;
}

/* Appends the character at p unchanged, or U+FFFD for a bad byte. */
static void put_char(struct kg_buf *b, const unsigned char *p, size_t len, enum ch_kind k)
{
	if (k == CH_BAD)
		buf_adds(b, REPLACEMENT);
	else
		buf_add(b, (const char *)p, len);
}

/* What a target writes for each printable ASCII byte it escapes (NULL: the
 * byte itself), indexed by the byte. */
typedef const char *const entity_map[128];

/* The loop every escaper runs: per character, the target's entity for an
 * ASCII byte it escapes, or its control handling. */
typedef void control_fn(struct kg_buf *b, unsigned cp, void *arg);

static void control_space(struct kg_buf *b, unsigned cp, void *arg)
{
	(void)cp;
	(void)arg;
	buf_addc(b, ' ');
}

static void walk(struct kg_buf *b, const char *s, const entity_map *map, control_fn *control,
		 void *arg)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t len;
	unsigned cp = 0;

	while (*p) {
		enum ch_kind k = next_char(p, &len, &cp);
		const char *e;
		if (k == CH_CONTROL)
			control(b, cp, arg);
		else if (k == CH_PLAIN && len == 1 && map && (e = (*map)[*p]) != NULL)
			buf_adds(b, e);
		else
			put_char(b, p, len, k);
		p += len;
	}
	if (!b->s)
		buf_add(b, "", 0);
}

/* ---- UTF-8 repair, terminal text ---- */

static void control_keep(struct kg_buf *b, unsigned cp, void *arg)
{
	(void)arg;
	if (cp < 0x80) {
		buf_addc(b, (char)cp);
	} else {
		buf_addc(b, (char)0xc2);
		buf_addc(b, (char)cp);
	}
}

static char *walk_dup(const char *s, control_fn *control)
{
	struct kg_buf b = KG_BUF_INIT;

	walk(&b, s, NULL, control, NULL);
	return buf_detach(&b);
}

void escape_utf8(struct kg_buf *b, const char *s)
{
	walk(b, s, NULL, control_keep, NULL);
}

char *escape_utf8_dup(const char *s)
{
	return walk_dup(s, control_keep);
}

void escape_text(struct kg_buf *b, const char *s)
{
	walk(b, s, NULL, control_space, NULL);
}

char *escape_text_dup(const char *s)
{
	return walk_dup(s, control_space);
}

size_t escape_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

char *escape_fit_dup(const char *s, size_t width)
{
	char *t = escape_text_dup(s);

	if (escape_width(t) <= width)
		return t;
	struct kg_buf b = KG_BUF_INIT;
	size_t w = 0;
	for (const char *p = t; *p; p++) {
		if (((unsigned char)*p & 0xc0) != 0x80 && ++w == width)
			break;
		buf_addc(&b, *p);
	}
	buf_adds(&b, "\xe2\x80\xa6"); /* U+2026 HORIZONTAL ELLIPSIS */
	free(t);
	return buf_detach(&b);
}

/* ---- Markdown ---- */

static entity_map markdown_map = {
	['<'] = "&lt;", ['>'] = "&gt;", ['&'] = "&amp;", ['|'] = "&#124;",
	['@'] = "@&#8203;", /* no live @mention */
	['\\'] = "\\\\", ['`'] = "\\`", ['*'] = "\\*", ['_'] = "\\_", ['['] = "\\[",
	[']'] = "\\]", ['~'] = "\\~", ['$'] = "\\$",
};

void escape_markdown(struct kg_buf *b, const char *s)
{
	walk(b, s, &markdown_map, control_space, NULL);
}

static entity_map markdown_code_map = {
	['<'] = "&lt;", ['>'] = "&gt;", ['&'] = "&amp;", ['|'] = "&#124;", ['`'] = "&#96;",
	['\\'] = "&#92;",
};

void escape_markdown_code(struct kg_buf *b, const char *s)
{
	walk(b, s, &markdown_code_map, control_space, NULL);
}

/* ---- HTML, XML ---- */

static entity_map html_map = {
	['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;",
};

void escape_html(struct kg_buf *b, const char *s)
{
	walk(b, s, &html_map, control_space, NULL);
}

static void control_xml(struct kg_buf *b, unsigned cp, void *arg)
{
	(void)arg;
	if (cp == '\t' || cp == '\n' || cp == '\r')
		buf_printf(b, "&#%u;", cp);
	else
		buf_addc(b, ' ');
}

void escape_xml(struct kg_buf *b, const char *s)
{
	walk(b, s, &html_map, control_xml, NULL);
}

/* ---- JSON ---- */

static entity_map json_map = { ['"'] = "\\\"", ['\\'] = "\\\\" };

static void control_json(struct kg_buf *b, unsigned cp, void *arg)
{
	(void)arg;
	buf_printf(b, "\\u%04x", cp);
}

void escape_json(struct kg_buf *b, const char *s)
{
	buf_addc(b, '"');
	walk(b, s, &json_map, control_json, NULL);
	buf_addc(b, '"');
}

char *escape_json_dumped(char *json)
{
	struct kg_buf b = KG_BUF_INIT;
	const unsigned char *p;

	if (!json)
		return NULL;
	for (p = (const unsigned char *)json; *p; p++)
		if (*p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			break;
	if (!*p)
		return json;
	for (p = (const unsigned char *)json; *p; p++) {
		if (*p == 0x7f) {
			buf_adds(&b, "\\u007f");
		} else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			buf_printf(&b, "\\u%04x", p[1]);
			p++;
		} else {
			buf_addc(&b, (char)*p);
		}
	}
	free(json);
	return buf_detach(&b);
}

/* ---- CSV ---- */

void escape_csv(struct kg_buf *b, const char *s)
{
	struct kg_buf t = KG_BUF_INIT;

	escape_text(&t, s);
	if (!strpbrk(t.s, ",\"")) {
		buf_add(b, t.s, t.len);
	} else {
		buf_addc(b, '"');
		for (const char *p = t.s; *p; p++) {
			if (*p == '"')
				buf_addc(b, '"');
			buf_addc(b, *p);
		}
		buf_addc(b, '"');
	}
	buf_free(&t);
}

/* ---- GitHub workflow commands ---- */

static entity_map workflow_map = { ['%'] = "%25" };
static entity_map workflow_property_map = { ['%'] = "%25", [':'] = "%3A", [','] = "%2C" };

static void control_workflow(struct kg_buf *b, unsigned cp, void *arg)
{
	(void)arg;
	if (cp == '\r')
		buf_adds(b, "%0D");
	else if (cp == '\n')
		buf_adds(b, "%0A");
	else
		buf_addc(b, ' ');
}

void escape_workflow(struct kg_buf *b, const char *s, int property)
{
	walk(b, s, property ? &workflow_property_map : &workflow_map, control_workflow, NULL);
}

/* ---- Slack ---- */

static entity_map slack_map = { ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['`'] = "'" };

void escape_slack(struct kg_buf *b, const char *s)
{
	walk(b, s, &slack_map, control_space, NULL);
}
