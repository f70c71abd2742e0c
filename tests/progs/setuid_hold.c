/*
 * setuid_hold.c: a process kgate may not signal, for tests/e2e/procs.t.
 * Installed setuid root, it takes every user id (setresuid(0, 0, 0)) so
 * that kill(2) from an unprivileged kgate fails with EPERM, then sleeps a
 * minute.
 */
#include <unistd.h>

int main(void)
{
	if (setresuid(0, 0, 0) != 0)
		return 1;
	sleep(60);
	return 0;
}
