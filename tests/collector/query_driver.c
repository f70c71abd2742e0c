/*
 * query_driver.c: the collector's offline metric queries from the command
 * line, for tests/e2e/collector.t: dlopen libkgate-collector.so as the CLI
 * does and call kgate_metrics_list, kgate_metrics_passes or
 * kgate_metrics_default.
 *
 *   query_driver COLLECTOR list CHIP
 *   query_driver COLLECTOR default
 *   query_driver COLLECTOR passes CHIP METRIC...
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef int (*list_fn)(const char *, char ***, size_t *, char *, size_t);
typedef int (*passes_fn)(const char *, const char *const *, size_t, int *, char *, size_t);
typedef const char *const *(*default_fn)(void);
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	char err[1024] = "";
	if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 3; }
	if (strcmp(argv[2], "list") == 0) {
		list_fn l = (list_fn)dlsym(h, "kgate_metrics_list");
		char **names; size_t n;
		if (l(argv[3], &names, &n, err, sizeof(err))) { printf("error: %s\n", err); return 1; }
		for (size_t i = 0; i < n; i++) { puts(names[i]); free(names[i]); }
		free(names);
		return 0;
	}
	if (strcmp(argv[2], "default") == 0) {
		const char *const *d = ((default_fn)dlsym(h, "kgate_metrics_default"))();
		for (; *d; d++) puts(*d);
		return 0;
	}
	passes_fn p = (passes_fn)dlsym(h, "kgate_metrics_passes");
	int passes = -7;
	int rc = p(argv[3], (const char *const *)argv + 4, (size_t)(argc - 4), &passes, err, sizeof(err));
	printf("rc=%d passes=%d err=%s\n", rc, rc ? -1 : passes, err);
	return 0;
}
