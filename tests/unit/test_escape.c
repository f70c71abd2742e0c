/*
 * test_escape.c: unit tests of escape.c, one per target (terminal text,
 * Markdown, Markdown in <code>, HTML, XML, JSON, CSV, GitHub workflow
 * commands, Slack): each with the control characters (TAB, LF, CR, ESC,
 * DEL, C1 CSI, SOH), invalid UTF-8 and the target's own special characters;
 * and the rule they share: no target lets a raw control byte through.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kgate/escape.h"
#include "kgate/util.h"

/* TAB, LF, CR, ESC, DEL, U+009B (C1 CSI), SOH between the digits */
#define CTL "1\t2\n3\r4\x1b" "5\x7f" "6\xc2\x9b" "7\x01" "8"
/* a lone continuation byte, a raw 0x9B (a C1 CSI to an 8-bit terminal),
 * an overlong '/', a truncated sequence, then good UTF-8 (e-acute, euro) */
#define BAD "\x80|\x9b|\xc0\xaf|\xe2\x82|\xc3\xa9\xe2\x82\xac"
#define FFFD "\xef\xbf\xbd"

typedef void escaper(struct kg_buf *b, const char *s);

static char *run(escaper *fn, const char *s)
{
	struct kg_buf b = KG_BUF_INIT;

	fn(&b, s);
	return buf_detach(&b);
}

#define CHECK(fn, in, want)                      \
	do {                                     \
		char *got_ = run(fn, in);        \
		assert_string_equal(got_, want); \
		free(got_);                      \
	} while (0)

static void workflow_message(struct kg_buf *b, const char *s)
{
	escape_workflow(b, s, 0);
}

static void workflow_property(struct kg_buf *b, const char *s)
{
	escape_workflow(b, s, 1);
}

static void test_text(void **state)
{
	(void)state;
	CHECK(escape_text, CTL, "1 2 3 4 5 6 7 8");
	CHECK(escape_text, "\n::error::x", " ::error::x");
	CHECK(escape_text, "\x1b[2J", " [2J");
	CHECK(escape_text, BAD, FFFD "|" FFFD "|" FFFD FFFD "|" FFFD FFFD "|\xc3\xa9\xe2\x82\xac");
	CHECK(escape_text, "\xc2\xa0 nbsp kept", "\xc2\xa0 nbsp kept");
	CHECK(escape_text, NULL, "");
	char *s = escape_text_dup("a\x1b" "b");
	assert_string_equal(s, "a b");
	free(s);
}

static void test_utf8(void **state)
{
	(void)state;
	/* only the repair: control characters kept as they are */
	CHECK(escape_utf8, "a\x1b\n\xc2\x9b" "b\xff", "a\x1b\n\xc2\x9b" "b" FFFD);
	char *s = escape_utf8_dup(NULL);
	assert_string_equal(s, "");
	free(s);
}

static void test_markdown(void **state)
{
	(void)state;
	CHECK(escape_markdown, CTL, "1 2 3 4 5 6 7 8");
	CHECK(escape_markdown, "<a|b>&@octocat", "&lt;a&#124;b&gt;&amp;@&#8203;octocat");
	CHECK(escape_markdown, "*_[x](y)`~~!$\\", "\\*\\_\\[x\\](y)\\`\\~\\~!\\$\\\\");
	CHECK(escape_markdown, "k\xff", "k" FFFD);
}

static void test_markdown_code(void **state)
{
	(void)state;
	CHECK(escape_markdown_code, CTL, "1 2 3 4 5 6 7 8");
	CHECK(escape_markdown_code, "<a|`b`\\&>*_", "&lt;a&#124;&#96;b&#96;&#92;&amp;&gt;*_");
}

static void test_html(void **state)
{
	(void)state;
	CHECK(escape_html, CTL, "1 2 3 4 5 6 7 8");
	CHECK(escape_html, "<script>alert('x\")</script>&",
	      "&lt;script&gt;alert(&#39;x&quot;)&lt;/script&gt;&amp;");
	CHECK(escape_html, "k\xc0\xaf", "k" FFFD FFFD);
}

static void test_xml(void **state)
{
	(void)state;
	/* TAB, LF and CR as character references; the others, which XML 1.0
	 * cannot write, as spaces */
	CHECK(escape_xml, CTL, "1&#9;2&#10;3&#13;4 5 6 7 8");
	CHECK(escape_xml, "<a b='c' d=\"e\">&", "&lt;a b=&#39;c&#39; d=&quot;e&quot;&gt;&amp;");
}

static void test_json(void **state)
{
	(void)state;
	CHECK(escape_json, CTL, "\"1\\u00092\\u000a3\\u000d4\\u001b5\\u007f6\\u009b7\\u00018\"");
	CHECK(escape_json, "q\"b\\s", "\"q\\\"b\\\\s\"");
	CHECK(escape_json, "\xff\xc3\xa9", "\"" FFFD "\xc3\xa9\"");
	CHECK(escape_json, NULL, "\"\"");

	/* a document jansson wrote: DEL and C1 as escapes too */
	char *d = escape_json_dumped(xstrdup("{\"k\": \"a\x7f\xc2\x9b\xc3\xa9\\u001b\"}"));
	assert_string_equal(d, "{\"k\": \"a\\u007f\\u009b\xc3\xa9\\u001b\"}");
	free(d);
	char *clean = xstrdup("{\"k\": \"\xc3\xa9\"}");
	assert_ptr_equal(escape_json_dumped(clean), clean);
	free(clean);
	assert_null(escape_json_dumped(NULL));
}

static void test_csv(void **state)
{
	(void)state;
	CHECK(escape_csv, CTL, "1 2 3 4 5 6 7 8");
	CHECK(escape_csv, "plain", "plain");
	CHECK(escape_csv, "a,b", "\"a,b\"");
	CHECK(escape_csv, "say \"hi\"", "\"say \"\"hi\"\"\"");
	/* one record stays one line: no quoted line break */
	CHECK(escape_csv, "a\r\nb,c", "\"a  b,c\"");
	CHECK(escape_csv, "", "");
}

static void test_workflow(void **state)
{
	(void)state;
	/* a message may span lines: CR and LF %-encoded, the rest spaces */
	CHECK(workflow_message, CTL, "1 2%0A3%0D4 5 6 7 8");
	CHECK(workflow_message, "50%: a,b\n::error::x", "50%25: a,b%0A::error::x");
	CHECK(workflow_property, "50%: a,b\n", "50%25%3A a%2Cb%0A");
}

static void test_slack(void **state)
{
	(void)state;
	CHECK(escape_slack, CTL, "1 2 3 4 5 6 7 8");
	CHECK(escape_slack, "<!channel> <https://x|y> & `c`",
	      "&lt;!channel&gt; &lt;https://x|y&gt; &amp; 'c'");
}

/* The rule every target shares: no C0 byte, DEL or C1 sequence in the
 * output, and no invalid UTF-8. */
static void test_no_target_passes_controls(void **state)
{
	static escaper *const all[] = { escape_text, escape_markdown, escape_markdown_code,
					escape_html, escape_xml, escape_json, escape_csv,
					workflow_message, workflow_property, escape_slack };
	(void)state;
	for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
		char *s = run(all[i], CTL "\x1b[31m" BAD "\xc2\x85\xc2\x9f\xc2\xa0");
		for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
			assert_true(*p >= 0x20 && *p != 0x7f);
			assert_false(p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f);
			assert_false(*p >= 0x80 && *p <= 0xbf && (p == (const unsigned char *)s ||
								  p[-1] < 0x80));
		}
		free(s);
	}
}

/* Terminal columns: width in code points; a cut keeps width - 1 of them
 * and an ellipsis, never splits a character, and repairs bad bytes. */
static void test_fit(void **state)
{
	(void)state;
	char *t;

	assert_int_equal(escape_width("abc"), 3);
	assert_int_equal(escape_width("\xc3\xa9t\xc3\xa9"), 3);
	t = escape_fit_dup("short", 5);
	assert_string_equal(t, "short");
	free(t);
	t = escape_fit_dup("kernel_name", 5);
	assert_string_equal(t, "kern\xe2\x80\xa6");
	assert_int_equal(escape_width(t), 5);
	free(t);
	t = escape_fit_dup("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 4);
	assert_string_equal(t, "\xc3\xa9\xc3\xa9\xc3\xa9\xe2\x80\xa6");
	free(t);
	t = escape_fit_dup("a\nb\xff", 10);
	assert_string_equal(t, "a b\xef\xbf\xbd");
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_markdown),
		cmocka_unit_test(test_markdown_code),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_xml),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_workflow),
		cmocka_unit_test(test_slack),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_no_target_passes_controls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
