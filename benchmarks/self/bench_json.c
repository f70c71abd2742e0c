/*
 * bench_json.c: jansson against json-c on a records file (kgate's own
 * benchmark, not part of kgate): parse every line and read the kernel
 * record's name, ordinal and metrics, as records.c does.  The two libraries
 * cannot share a translation unit (both define json_object_iter), so this
 * file is built twice: -DUSE_JANSSON or -DUSE_JSONC.  Prints one line:
 *   PARSER LINES SECONDS CHECKSUM
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(USE_JANSSON)
#include <jansson.h>
#define PARSER "jansson"
#elif defined(USE_JSONC)
#include <json-c/json.h>
#define PARSER "json-c"
#else
#error "build with -DUSE_JANSSON or -DUSE_JSONC"
#endif

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0, lines = 0;
	ssize_t len;
	double sum = 0, t0;
	FILE *fp;

	if (argc != 2 || !(fp = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: bench_json FILE\n");
		return 2;
	}
#ifdef USE_JSONC
	json_tokener *tok = json_tokener_new();
#endif
	t0 = now();
	while ((len = getline(&line, &cap, fp)) > 0) {
#ifdef USE_JANSSON
		json_error_t e;
		json_t *j = json_loadb(line, (size_t)len, 0, &e), *m, *v;
		const char *key;
		if (!j)
			continue;
		lines++;
		sum += (double)json_integer_value(json_object_get(j, "ordinal"));
		sum += (double)json_string_length(json_object_get(j, "name"));
		if ((m = json_object_get(j, "metrics")) && json_is_object(m))
			json_object_foreach(m, key, v)
				sum += json_number_value(v);
		json_decref(j);
#else
		json_tokener_reset(tok);
		json_object *j = json_tokener_parse_ex(tok, line, (int)len), *x, *m;
		if (!j)
			continue;
		lines++;
		if (json_object_object_get_ex(j, "ordinal", &x))
			sum += (double)json_object_get_int64(x);
		if (json_object_object_get_ex(j, "name", &x))
			sum += json_object_get_string_len(x);
		if (json_object_object_get_ex(j, "metrics", &m) && json_object_is_type(m, json_type_object)) {
			json_object_object_foreach(m, key, val) {
				(void)key;
				sum += json_object_get_double(val);
			}
		}
		json_object_put(j);
#endif
	}
	double t = now() - t0;
#ifdef USE_JSONC
	json_tokener_free(tok);
#endif
	free(line);
	fclose(fp);
	printf("%s %zu %.3f %.17g\n", PARSER, lines, t, sum);
	return 0;
}
