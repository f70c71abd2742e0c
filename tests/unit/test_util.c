/*
 * test_util.c: unit tests of util.c's bounded line reader (kg_lines_next:
 * lines at and over the limit, no final newline, NUL bytes, memory bounded
 * on a line far over it, lines across the reader's blocks); escaping is
 * test_escape.c's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/util.h"

static FILE *mem(const char *s, size_t n)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	assert_int_equal(fwrite(s, 1, n, f), n);
	rewind(f);
	return f;
}

/* the next line as a string, "<-1>" / "<-2>" for the codes, "$" appended
 * when it had no newline */
static const char *next(struct kg_lines *l, size_t max, long *len)
{
	static char out[64];
	char *line;
	int nl;

	*len = kg_lines_next(l, &line, max, &nl);
	if (*len < 0)
		snprintf(out, sizeof(out), "<%ld>", *len);
	else
		snprintf(out, sizeof(out), "%s%s", line, nl ? "" : "$");
	return out;
}

static void test_lines_limits(void **state)
{
	struct kg_lines l = { 0 };
	long n;
	/* limit 8: "1234567\n" (8 bytes) fits, "12345678\n" (9) does not */
	FILE *f = mem("1234567\n12345678\nab", 19);

	(void)state;
	l.fp = f;
	assert_string_equal(next(&l, 8, &n), "1234567");
	assert_int_equal(n, 7);
	assert_string_equal(next(&l, 8, &n), "<-2>");
	fclose(f);
	kg_lines_free(&l);

	f = mem("ab", 2);
	l.fp = f;
	assert_string_equal(next(&l, 8, &n), "ab$"); /* no final newline */
	assert_string_equal(next(&l, 8, &n), "<-1>"); /* end of file */
	assert_string_equal(next(&l, 8, &n), "<-1>"); /* and again */
	assert_false(ferror(f));
	fclose(f);
	kg_lines_free(&l);

	f = mem("a\0b\n\n\r\nx\n", 9);
	l.fp = f;
	char *line;
	int nl;
	assert_int_equal(kg_lines_next(&l, &line, 8, &nl), 3); /* NUL bytes kept */
	assert_memory_equal(line, "a\0b", 4);
	assert_string_equal(next(&l, 8, &n), ""); /* an empty line */
	assert_string_equal(next(&l, 8, &n), "\r"); /* '\r' is the caller's */
	assert_string_equal(next(&l, 8, &n), "x");
	assert_string_equal(next(&l, 8, &n), "<-1>");
	fclose(f);
	kg_lines_free(&l);
}

static void test_lines_bounded(void **state)
{
	/* a line far over the limit: -2, the buffer never over the limit and
	 * a block; then lines that cross block boundaries, each whole */
	size_t n = 3u * KG_LINES_BLOCK;
	char *big = malloc(n);
	struct kg_lines l = { 0 };
	long len;

	(void)state;
	assert_non_null(big);
	memset(big, 'x', n);
	FILE *f = mem(big, n);
	l.fp = f;
	assert_string_equal(next(&l, 1000, &len), "<-2>");
	assert_true(l.cap <= 1000 + 1 + KG_LINES_BLOCK);
	fclose(f);
	kg_lines_free(&l);

	/* lines of 1,000 to 1,999 bytes, 2 MiB of them */
	size_t at = 0, lines = 0;
	while (at + 2000 < n) {
		size_t w = 1000 + (lines * 7919) % 1000;
		memset(big + at, 'a' + (int)(lines % 26), w);
		big[at + w] = '\n';
		at += w + 1;
		lines++;
	}
	f = mem(big, at);
	l.fp = f;
	for (size_t i = 0; i < lines; i++) {
		char *line;
		int nl;
		size_t w = 1000 + (i * 7919) % 1000;
		assert_int_equal(kg_lines_next(&l, &line, 4096, &nl), (long)w);
		assert_true(nl);
		assert_int_equal(line[0], 'a' + (int)(i % 26));
		assert_int_equal(line[w - 1], 'a' + (int)(i % 26));
	}
	assert_string_equal(next(&l, 4096, &len), "<-1>");
	assert_true(l.cap <= 4096 + 1 + KG_LINES_BLOCK);
	fclose(f);
	kg_lines_free(&l);
	free(big);
}

/* An index table (slots hold 1 + an index, 0 empty) grown twice: every
 * entry is still found by probing from its hash, and no slot is lost. */
static size_t mod_hash(const void *slot, const void *arg)
{
	const unsigned *keys = arg;
	return keys[*(const size_t *)slot - 1] * 7u;
}

static void test_table_grow(void **state)
{
	static const size_t none = 0;
	unsigned keys[40];
	size_t cap = 0, *t = NULL;
	(void)state;

	for (size_t i = 0; i < 40; i++) {
		keys[i] = (unsigned)(i * 13 % 41);
		if (2 * (i + 1) > cap) {
			size_t ncap = cap ? 2 * cap : 4;
			t = kg_table_grow(t, cap, ncap, sizeof(*t), &none, mod_hash, keys);
			cap = ncap;
		}
		size_t j = keys[i] * 7u & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = i + 1;
	}
	assert_int_equal(cap, 128);
	t = kg_table_grow(t, cap, 256, sizeof(*t), &none, mod_hash, keys);
	size_t used = 0;
	for (size_t j = 0; j < 256; j++)
		used += t[j] != 0;
	assert_int_equal(used, 40);
	for (size_t i = 0; i < 40; i++) {
		size_t j = keys[i] * 7u & 255;
		while (t[j] && t[j] != i + 1)
			j = (j + 1) & 255;
		assert_int_equal(t[j], i + 1);
	}
	free(t);
}

/* One length for commits in human outputs: a full SHA, alone or leading a
 * label, cut to 12; anything else as it is. */
static void test_sha_short(void **state)
{
	(void)state;
	char b[KG_SHA_SHORT_BUF];
	assert_string_equal(kg_sha_short(b, "2137f284ef62aa0b1c9e3d4f5a6b7c8d9e0f1a2b"), "2137f284ef62");
	assert_string_equal(kg_sha_short(b, "2137f284ef62aa0b1c9e3d4f5a6b7c8d9e0f1a2b (merge base with main)"),
			    "2137f284ef62 (merge base with main)");
	assert_string_equal(kg_sha_short(b, "2137f284ef62"), "2137f284ef62");
	assert_string_equal(kg_sha_short(b, "demo-head"), "demo-head");
	assert_string_equal(kg_sha_short(b, "deadbeefdeadbeefcafe-branch"), "deadbeefdeadbeefcafe-branch");
	assert_string_equal(kg_sha_short(b, NULL), "?");
	assert_true(kg_is_sha("2137f284ef62aa0b1c9e3d4f5a6b7c8d9e0f1a2b"));
	assert_false(kg_is_sha("2137f284ef62"));
	assert_false(kg_is_sha("2137f284ef62aa0b1c9e3d4f5a6b7c8d9e0f1a2b "));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_limits),
		cmocka_unit_test(test_sha_short),
		cmocka_unit_test(test_table_grow),
		cmocka_unit_test(test_lines_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
