/*
 * test_util.c: unit tests of util.c's bounded line reader (kg_getline: the
 * limit is checked while reading, lines at and over it, no final newline,
 * NUL bytes); escaping is test_escape.c's.
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

static void test_getline_limits(void **state)
{
	char *line = NULL;
	size_t cap = 0;
	/* limit 8: "1234567\n" (8 bytes) fits, "12345678\n" (9) does not */
	FILE *f = mem("1234567\n12345678\nab", 19);

	(void)state;
	assert_int_equal(kg_getline(&line, &cap, f, 8), 8);
	assert_string_equal(line, "1234567\n");
	assert_int_equal(kg_getline(&line, &cap, f, 8), -2);
	assert_true(cap <= 8 + 2);      /* memory stays near the limit */
	fclose(f);

	f = mem("ab", 2);
	assert_int_equal(kg_getline(&line, &cap, f, 8), 2);   /* no final newline */
	assert_string_equal(line, "ab");
	assert_int_equal(kg_getline(&line, &cap, f, 8), -1);  /* end of file */
	assert_false(ferror(f));
	fclose(f);

	f = mem("a\0b\n", 4);
	assert_int_equal(kg_getline(&line, &cap, f, 8), 4);   /* NUL bytes kept */
	assert_memory_equal(line, "a\0b\n", 4);
	fclose(f);
	free(line);
}

static void test_getline_stops_reading(void **state)
{
	/* a line far over the limit: reading stops after limit + 1 bytes */
	size_t n = 1u << 20;
	char *big = malloc(n);
	char *line = NULL;
	size_t cap = 0;

	(void)state;
	assert_non_null(big);
	memset(big, 'x', n);
	FILE *f = mem(big, n);
	assert_int_equal(kg_getline(&line, &cap, f, 1000), -2);
	assert_int_equal(ftell(f), 1001);
	assert_true(cap <= 1002);
	fclose(f);
	free(line);
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
		cmocka_unit_test(test_getline_limits),
		cmocka_unit_test(test_sha_short),
		cmocka_unit_test(test_table_grow),
		cmocka_unit_test(test_getline_stops_reading),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
