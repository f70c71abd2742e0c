/*
 * inject_driver.c: calls the collector's InitializeInjection the way the
 * CUDA driver would, in a process with no driver (tests/e2e/collector.t).
 *
 *   inject_driver COLLECTOR [ARG...]     prints "init=RC argc=N"
 */
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 3; }
	int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
	printf("init=%d argc=%d\n", init(), argc);
	return 0;
}
