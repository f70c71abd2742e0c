/*
 * bench_jparse.c: the floor under a JSON importer's rate: jansson's
 * json_loadb of a whole file, read into memory first, nothing else (no
 * walking, no storing).  Prints the CPU seconds of the parse alone (the
 * process's CPU clock), best of N (default 3), so that
 * bench_importers.sh and bench_traces.sh can say how many samples a CPU
 * second the parser alone allows.  -l: each line of the file is one
 * document, parsed on its own (as an importer parses the events it reads
 * out of a stream), so memory holds one at a time.
 *
 *   bench_jparse [-l] FILE [N]
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	FILE *f;
	long n;
	char *b;
	int lines = argc > 1 && !strcmp(argv[1], "-l");
	double best = -1;

	argv += lines;
	argc -= lines;
	int rounds = argc > 2 ? atoi(argv[2]) : 3;
	if (argc < 2 || !(f = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: bench_jparse [-l] FILE [N]\n");
		return 2;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    !(b = malloc((size_t)n + 1)) || fread(b, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "bench_jparse: cannot read %s\n", argv[1]);
		return 2;
	}
	fclose(f);
	for (int i = 0; i < rounds; i++) {
		json_error_t e;
		double t0 = cpu_now();
		for (char *p = b, *end = b + n; p < end;) {
			char *nl = lines ? memchr(p, '\n', (size_t)(end - p)) : NULL;
			size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
			json_t *j = len ? json_loadb(p, len, 0, &e) : json_null();
			if (!j) {
				fprintf(stderr, "bench_jparse: %s: %s\n", argv[1], e.text);
				return 1;
			}
			json_decref(j);
			p += len + 1;
		}
		double t = cpu_now() - t0;
		if (best < 0 || t < best)
			best = t;
	}
	printf("%.3f\n", best);
	free(b);
	return 0;
}
