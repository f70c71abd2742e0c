/*
 * test_util.c: unit tests of util.c's bounded line reader (kg_getline: the
 * limit is checked while reading, lines at and over it, no final newline,
 * NUL bytes) and of the one escaping of printed text (buf_add_safe and
 * kg_text_safe: C0, DEL and C1 controls replaced, other UTF-8 kept).
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

static void test_text_safe(void **state)
{
	char *s;

	(void)state;
	s = kg_text_safe("a\nb\rc\td\x1b[2Je\x7f" "f");
	assert_string_equal(s, "a b c d [2Je f");
	free(s);
	/* C1 (U+009B, a CSI) replaced; U+00A0, U+00E9 and U+20AC kept */
	s = kg_text_safe("x\xc2\x9by \xc2\xa0\xc3\xa9\xe2\x82\xac");
	assert_string_equal(s, "x y \xc2\xa0\xc3\xa9\xe2\x82\xac");
	free(s);
	s = kg_text_safe(NULL);
	assert_string_equal(s, "");
	free(s);

	struct kg_buf b = KG_BUF_INIT;
	buf_adds(&b, "::");
	buf_add_safe(&b, "\n::error::x");
	assert_string_equal(b.s, ":: ::error::x");
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_getline_limits),
		cmocka_unit_test(test_getline_stops_reading),
		cmocka_unit_test(test_text_safe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
