/*
 * test_jtok.c: jtok against jansson.  The rule: a text jtok takes is one
 * jansson takes, with the same value (jtok_json's tree against jansson's,
 * json_equal: integers and reals apart); what jtok declines
 * is anybody's.  Checked on record lines as the collector writes them
 * (which jtok must take: else the fast path never runs), on texts jsmn's
 * tokenizer alone would take although they are not JSON, and on 200,000
 * mutations of record lines (a byte changed, dropped or doubled; fixed
 * seed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/jtok.h"
#include "kgate/util.h"
#include "rng.h"

/* The rule, on one text: 1 when jtok took it. */
static int agree(struct jtok *j, const char *text, size_t len)
{
	json_error_t e;
	json_t *want = json_loadb(text, len, 0, &e);
	int took = jtok_scan(j, text, len);

	if (took) {
		if (!want || !json_is_object(want))
			fail_msg("jtok took what jansson refuses: '%.*s' (%s)", (int)len, text,
				 want ? "not an object" : e.text);
		json_t *got = jtok_json(j, 0);
		if (!json_equal(got, want)) {
			char *g = json_dumps(got, JSON_ENCODE_ANY), *w = json_dumps(want, JSON_ENCODE_ANY);
			fail_msg("jtok read '%.*s' as %s, jansson as %s", (int)len, text, g, w);
		}
		assert_int_equal(jtok_skip(j, 0), j->n);
		json_decref(got);
	}
	json_decref(want);
	return took;
}

static const char *const records[] = {
	"{\"type\":\"kernel\",\"ordinal\":0,\"name\":\"_Z7kernel0PKfPfi\",\"device\":0,\"context\":1,"
	"\"stream\":7,\"corr\":0,\"start\":1000000,\"end\":1003252,\"grid\":[1024,1,1],"
	"\"block\":[256,1,1],\"regs\":32,\"nvtx\":\"step/forward\",\"metrics\":"
	"{\"gpu__time_duration.sum\":3252,\"sm__throughput.avg.pct_of_peak_sustained_elapsed\":33.94,"
	"\"launch__grid_size\":1024,\"launch__block_size\":256,\"launch__registers_per_thread\":32}}",
	"{\"type\":\"kernel\", \"ordinal\": -12, \"name\": \"k\", \"nvtx\": null, \"metrics\": "
	"{\"a\": null, \"b\": -0.0, \"c\": 1e-400, \"d\": 1.5E+3, \"e\": -9223372036854775808,"
	" \"f\": 9223372036854775807, \"g\": true, \"h\": false, \"i\": [], \"j\": {}} }  ",
	"{\"type\":\"footer\",\"kernels\":3,\"dropped\":0,\"x\":[[1,[2,{\"y\":[]}]],{}]}",
	"{}",
	" \t{ \"a\" : [ 1 , 2 ] , \"b\" : { } }\r\n",
};

static void records_are_taken(void **state)
{
	struct jtok j = { 0 };
	(void)state;
	for (size_t i = 0; i < sizeof(records) / sizeof(records[0]); i++)
		if (!agree(&j, records[i], strlen(records[i])))
			fail_msg("jtok declined a plain record: %s", records[i]);
	jtok_free(&j);
}

/* Not JSON, though jsmn's tokenizer takes most of them; and texts out of
 * jtok's subset. */
static const char *const declined[] = {
	"{\"a\":[1 2]}", "{\"a\":[1,,2]}", "{\"a\":[1,2,]}", "{\"a\":1,}", "{,\"a\":1}",
	"{\"a\" 1}", "{\"a\":1 \"b\":2}", "{\"a\":1,\"b\"}", "{\"a\"::1}", "{\"a\":nulls}",
	"{\"a\":nul}", "{\"a\":tru}", "{\"a\":1.2.3}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}",
	"{\"a\":+1}", "{\"a\":1e}", "{\"a\":-}", "{\"a\":1e999}", "{\"a\":-1e999}",
	"{\"a\":9223372036854775808}", "{\"a\":-9223372036854775809}", "{\"a\":NaN}",
	"{\"a\":Infinity}", "{\"a\":\"x\ty\"}", "{\"a\":\"x\\ny\"}", "{\"a\":\"\\u0041\"}",
	"{\"a\":\"caf\xc3\xa9\"}", "{\"a\":\"\xff\"}", "{\"a\":1}{}", "{\"a\":1} x", "{\"a\":1",
	"[1,2]", "\"a\"", "1", "", "   ", "{\"a\":1}\x01", "{\"a\":[1}]", "{\"a\":{]}",
	"{1:2}", "{\"a\":1,\"a\"}", "{\"a\":\"b\":1}", "{[]:1}",
};

static void not_json_is_declined(void **state)
{
	struct jtok j = { 0 };
	(void)state;
	for (size_t i = 0; i < sizeof(declined) / sizeof(declined[0]); i++)
		if (agree(&j, declined[i], strlen(declined[i])))
			fail_msg("jtok took '%s'", declined[i]);
	/* a NUL inside */
	static const char nul[] = "{\"a\":1}\0";
	assert_false(agree(&j, nul, sizeof(nul) - 1));
	static const char nul2[] = "{\"a\":\"x\0y\"}";
	assert_false(agree(&j, nul2, sizeof(nul2) - 1));
	/* nesting deeper than jansson takes, and deeper than jtok does */
	for (size_t depth = 600; depth <= 3000; depth += 2400) {
		char *deep = xmalloc(2 * depth + 16);
		size_t n = (size_t)sprintf(deep, "{\"a\":");
		for (size_t k = 1; k < depth; k++)
			deep[n++] = '[';
		for (size_t k = 1; k < depth; k++)
			deep[n++] = ']';
		deep[n++] = '}';
		assert_false(agree(&j, deep, n));
		free(deep);
	}
	jtok_free(&j);
}

static size_t pick(uint64_t *r, size_t n)
{
	return (size_t)(rng_uniform(r) * (double)n);
}

static void mutations_agree(void **state)
{
	struct jtok j = { 0 };
	uint64_t r = 20261205;
	char buf[1024];
	size_t taken = 0, n = 0;
	static const char bytes[] = "{}[]:,\" \t0123456789.eE+-tfnulasr\\/\x01\x80";
	(void)state;

	for (size_t i = 0; i < sizeof(records) / sizeof(records[0]); i++) {
		size_t len = strlen(records[i]);
		for (int k = 0; k < 40000; k++, n++) {
			size_t at = pick(&r, len), m = len;
			memcpy(buf, records[i], len);
			switch (pick(&r, 3)) {
			case 0:         /* change a byte */
				buf[at] = bytes[pick(&r, sizeof(bytes) - 1)];
				break;
			case 1:         /* drop one */
				memmove(buf + at, buf + at + 1, len - at - 1);
				m--;
				break;
			default:        /* double one */
				memmove(buf + at + 1, buf + at, len - at);
				m++;
				break;
			}
			taken += (size_t)agree(&j, buf, m);
		}
	}
	/* most mutations break the text, some do not: both kinds were seen */
	assert_true(taken > n / 100 && taken < n);
	jtok_free(&j);
}

static void skip_and_values(void **state)
{
	struct jtok j = { 0 };
	const char *t = "{\"a\":[1,[2,3]],\"b\":{\"c\":null},\"d\":-0,\"e\":2.5}";
	int64_t v;
	double d;
	(void)state;

	assert_true(jtok_scan(&j, t, strlen(t)));
	assert_true(jtok_is(&j, 1, "a"));
	assert_int_equal(jtok_skip(&j, 2), 7);          /* past [1,[2,3]] */
	assert_true(jtok_is(&j, 7, "b"));
	assert_true(jtok_null(&j, 10));
	assert_true(jtok_int(&j, 12, &v));
	assert_int_equal(v, 0);
	assert_false(jtok_int(&j, 14, &v));             /* 2.5 is no integer */
	assert_true(jtok_number(&j, 14, &d));
	assert_true(d == 2.5);
	assert_false(jtok_number(&j, 9, &d));           /* "c" is a string */
	jtok_free(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_are_taken),
		cmocka_unit_test(not_json_is_declined),
		cmocka_unit_test(mutations_agree),
		cmocka_unit_test(skip_and_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
