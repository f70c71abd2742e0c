/*
 * escape.h: every escaping of text kgate writes for a reader that would
 * act on it (a terminal, a Markdown or HTML renderer, a JSON or CSV
 * reader, the CI runner's workflow commands, Slack).  A leaf: it uses
 * util's buffer and nothing else of kgate.
 *
 * Each escaper appends s (NULL reads as "") to b in the form its target
 * reads as literal text.  The rules every target shares:
 *
 *   - Invalid UTF-8: each byte that does not begin a valid sequence (a
 *     stray continuation byte, a truncated or overlong sequence, a
 *     surrogate, a raw 0x80-0x9F that an 8-bit terminal would take for a
 *     C1 control) becomes U+FFFD.
 *   - Control characters: C0 (U+0000-U+001F: NUL, TAB, LF, CR, ESC, ...),
 *     DEL (U+007F) and C1 (U+0080-U+009F, whose U+009B is a CSI) never
 *     reach the output as they are.  Where the target has an escape that
 *     cannot be misread, the character is kept in that form; everywhere
 *     else it becomes one space.
 *
 * Per target:
 *
 *   text      terminal and log text: every control character is a space,
 *             so that a name can neither move the cursor nor start a new
 *             line (a CI runner reads a line beginning "::" as a command).
 *   markdown  GitHub-flavoured Markdown text and table cells: controls are
 *             spaces; & < > as entities; | as &#124; (cannot end a cell);
 *             @ followed by U+200B (no live @mention); \ ` * _ [ ] ~ $
 *             backslash-escaped (no code span, emphasis, strikethrough,
 *             link, image or math: a link or image needs a bracket).
 *   markdown_code  inside <code>...</code> in a table cell: controls are
 *             spaces; & < > | ` \ as entities, the rest as it is.
 *   html      HTML text and attribute values: controls are spaces;
 *             & < > " ' as &amp; &lt; &gt; &quot; &#39;.
 *   xml       XML 1.0 text and attribute values (JUnit): as html, but TAB,
 *             LF and CR are kept as &#9; &#10; &#13; (a multi-line message
 *             stays multi-line); the other controls, which XML 1.0 cannot
 *             write at all, are spaces.
 *   json      a JSON string with its quotes: " and \ escaped; every
 *             control character as \u00XX, so the reader gets the name
 *             back exactly (invalid bytes aside) and a terminal showing the
 *             document sees no control byte.  escape_json_dumped() applies
 *             the same to a document jansson wrote (jansson escapes C0 but
 *             writes DEL and C1 as they are).
 *   csv       one RFC 4180 field: controls are spaces (RFC 4180's text has
 *             none; one record stays one line); quoted, with " doubled,
 *             when it holds a comma or a quote.
 *   workflow  a GitHub workflow command's message (property 0) or one of
 *             its properties (property 1): % CR LF as %25 %0D %0A (the
 *             runner decodes them; a message may span lines), and in a
 *             property also : and , as %3A %2C; other controls are spaces.
 *   slack     Slack mrkdwn text: controls are spaces; & < > as entities
 *             (no <!channel>, <!here> or <url|label>); ` as ' (no code span
 *             to break out of).
 */
#ifndef KGATE_ESCAPE_H
#define KGATE_ESCAPE_H

#include <stddef.h>

struct kg_buf;

void escape_utf8(struct kg_buf *b, const char *s);      /* only the UTF-8 repair */
char *escape_utf8_dup(const char *s);                    /* the same, malloc'd */
void escape_text(struct kg_buf *b, const char *s);
char *escape_text_dup(const char *s);                    /* the same, malloc'd */
/* Columns of terminal text: its width in code points (good enough for
 * names), and s as terminal text cut to at most width code points, the
 * last an ellipsis when cut (malloc'd). */
size_t escape_width(const char *s);
char *escape_fit_dup(const char *s, size_t width);
void escape_markdown(struct kg_buf *b, const char *s);
void escape_markdown_code(struct kg_buf *b, const char *s);
void escape_html(struct kg_buf *b, const char *s);
void escape_xml(struct kg_buf *b, const char *s);
void escape_json(struct kg_buf *b, const char *s);
void escape_csv(struct kg_buf *b, const char *s);
void escape_workflow(struct kg_buf *b, const char *s, int property);
void escape_slack(struct kg_buf *b, const char *s);

/*
 * A JSON document as jansson's json_dumps() wrote it (valid UTF-8, C0
 * already escaped) with DEL and C1 written as \u00XX too: json itself when
 * it has none, else a new string (json is freed).  NULL stays NULL.
 */
char *escape_json_dumped(char *json);

#endif
