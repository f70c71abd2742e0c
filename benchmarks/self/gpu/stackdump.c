/*
 * stackdump.c: a preloaded helper for the GPU scripts (pm_stop.sh): on
 * SIGUSR2 each thread that receives it writes its thread id and its stack
 * (glibc's backtrace_symbols_fd) to standard error, so that a process that
 * does not end can say where each of its threads waits, on a machine
 * without a debugger.  Not part of kgate; built with
 *   cc -O1 -g -shared -fPIC -o build/gpu/stackdump.so benchmarks/self/gpu/stackdump.c
 * and sent to each thread with tgkill (pm_stop.sh does it).
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void sd_dump(int sig)
{
	void *pc[64];
	char head[64];
	int n, len;

	(void)sig;
	len = snprintf(head, sizeof(head), "== stack of thread %ld\n", (long)syscall(SYS_gettid));
	if (len > 0)
		(void)!write(2, head, (size_t)len);
	n = backtrace(pc, 64);
	backtrace_symbols_fd(pc, n, 2);
}

__attribute__((constructor)) static void sd_init(void)
{
	struct sigaction sa;
	void *pc[2];

	backtrace(pc, 2); /* loads libgcc now, not in the handler */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sd_dump;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR2, &sa, NULL);
}
