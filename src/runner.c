/*
 * runner.c: running one benchmark process under the collector (runner.h).
 *
 * The child is forked into its own process group (setpgid in both parent
 * and child, so neither order of scheduling races), changes to its working
 * directory, gets the environment built here (execvpe: no setenv after
 * fork) and stdin from /dev/null.  An exec failure comes back through a
 * close-on-exec pipe, so "no such program" is kgate's error, not the
 * benchmark's.  The parent polls the child's stdout and stderr into ring
 * buffers of KG_RUNNER_TAIL_BYTES each, so memory stays bounded whatever the
 * benchmark prints, and enforces the timeout on the whole group: SIGTERM,
 * then SIGKILL after the grace period.  Processes the benchmark left behind
 * when it exited, in its group or moved out of it (kgate is the child
 * subreaper, so they stay its descendants), are ended the same way.  A
 * process that outlives SIGKILL (a setuid program, uninterruptible sleep)
 * is not waited for: after the grace period it is reported as unkillable.
 */
#include "kgate/runner.h"
#include "kgate/kgate.h"
#include "kgate/records_format.h"
#include "kgate/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define COLLECTOR_SO "libkgate-collector.so"

/* ---- ring buffer of the last bytes of a stream ------------------------- */

struct ring {
	char *buf;
	size_t head;    /* next write position */
	size_t total;   /* bytes ever written */
};

static void ring_add(struct ring *r, const char *p, size_t n)
{
	const size_t cap = KG_RUNNER_TAIL_BYTES;

	r->total += n;
	while (n) {
		size_t chunk = cap - r->head < n ? cap - r->head : n;
		memcpy(r->buf + r->head, p, chunk);
		r->head = (r->head + chunk) % cap;
		p += chunk;
		n -= chunk;
	}
}

/* The kept bytes in order, NUL-terminated (NULs inside become '?'). */
static char *ring_linear(const struct ring *r)
{
	const size_t cap = KG_RUNNER_TAIL_BYTES;
	size_t len = r->total < cap ? r->total : cap;
	char *s = xmalloc(len + 1);

	if (r->total < cap)
		memcpy(s, r->buf, len);
	else {
		memcpy(s, r->buf + r->head, cap - r->head);
		memcpy(s + cap - r->head, r->buf, r->head);
	}
	s[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (!s[i])
			s[i] = '?';
	return s;
}

/* ---- environment --------------------------------------------------------- */

void runner_env_add(char ***env, size_t *n, const char *entry)
{
	*env = xrealloc(*env, (*n + 2) * sizeof(**env));
	(*env)[(*n)++] = xstrdup(entry);
	(*env)[*n] = NULL;
}

void runner_env_free(char **env, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(env[i]);
	free(env);
}

static void env_addf(char ***env, size_t *n, const char *name, const char *value)
{
	char *e = xasprintf("%s=%s", name, value);
	runner_env_add(env, n, e);
	free(e);
}

void runner_collector_env(char ***env, size_t *n, const char *collector, const char *nvtx,
			  const struct kg_collector_cfg *cc, const char *records, int pass)
{
	char num[32];

	if (collector)
		env_addf(env, n, "CUDA_INJECTION64_PATH", collector);
	if (nvtx)
		env_addf(env, n, "NVTX_INJECTION64_PATH", nvtx);
	env_addf(env, n, KG_ENV_RECORDS, records);
	env_addf(env, n, KG_ENV_MODE, cc->mode == KG_MODE_METRICS ? "metrics" : "trace");
	if (cc->n_metrics) {
		struct kg_buf b = KG_BUF_INIT;
		for (size_t i = 0; i < cc->n_metrics; i++) {
			if (i)
				buf_addc(&b, ',');
			buf_adds(&b, cc->metrics[i]);
		}
		env_addf(env, n, KG_ENV_METRICS, b.s);
		buf_free(&b);
	}
	if (cc->kernels)
		env_addf(env, n, KG_ENV_KERNELS, cc->kernels);
	if (cc->kernels && cc->name_base != KG_NAME_ANY)
		env_addf(env, n, KG_ENV_NAME_BASE, cc->name_base == KG_NAME_FUNCTION ? "function"
			 : cc->name_base == KG_NAME_DEMANGLED ? "demangled" : "mangled");
	snprintf(num, sizeof(num), "%ld", cc->launch_skip);
	env_addf(env, n, KG_ENV_LAUNCH_SKIP, num);
	snprintf(num, sizeof(num), "%ld", cc->launch_count);
	env_addf(env, n, KG_ENV_LAUNCH_COUNT, num);
	env_addf(env, n, KG_ENV_REPLAY, cc->replay == KG_REPLAY_APPLICATION ? "application"
					: cc->replay == KG_REPLAY_STEP ? "step" : "kernel");
	if (cc->step_range)
		env_addf(env, n, KG_ENV_STEP_RANGE, cc->step_range);
	if (cc->cache_control != KG_CACHE_UNSET)
		env_addf(env, n, KG_ENV_CACHE_CONTROL,
			 cc->cache_control == KG_CACHE_NONE ? "none" : "all");
	if (pass >= 0) {
		snprintf(num, sizeof(num), "%d", pass);
		env_addf(env, n, KG_ENV_PASS, num);
	}
}

static size_t env_name_len(const char *e)
{
	const char *eq = strchr(e, '=');
	return eq ? (size_t)(eq - e) : strlen(e);
}

/* environ with every entry of add applied in order (a later one replaces an
 * earlier one of the same name).  The strings are borrowed. */
static char **env_merge(char *const *add)
{
	size_t n = 0, cap;

	for (char **e = environ; e && *e; e++)
		n++;
	cap = n + 1;
	for (char *const *a = add; a && *a; a++)
		cap++;
	char **out = xcalloc(cap, sizeof(*out));
	size_t k = 0;
	for (char **e = environ; e && *e; e++)
		out[k++] = *e;
	for (char *const *a = add; a && *a; a++) {
		size_t l = env_name_len(*a), i;
		for (i = 0; i < k; i++)
			if (env_name_len(out[i]) == l && !strncmp(out[i], *a, l))
				break;
		out[i] = *a;
		if (i == k)
			k++;
	}
	out[k] = NULL;
	return out;
}

/* ---- finding the collector and the NVTX library ------------------------- */

static int is_file(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

char *runner_find_collector(void)
{
	const char *env = getenv("KGATE_COLLECTOR");

	if (env && env[0]) {
		if (!is_file(env)) {
			kg_error("cannot open '%s' (KGATE_COLLECTOR): %s", env,
				 access(env, F_OK) ? strerror(errno) : "not a regular file");
			return NULL;
		}
		return realpath(env, NULL);
	}
	char *dir = kg_exe_dir();
	if (dir) {
		char *cand[2] = { xasprintf("%s/%s", dir, COLLECTOR_SO),
				  xasprintf("%s/../lib/kgate/%s", dir, COLLECTOR_SO) };
		char *found = NULL;
		for (int i = 0; i < 2 && !found; i++)
			if (is_file(cand[i]))
				found = realpath(cand[i], NULL);
		if (!found)
			kg_error("cannot find the collector: no %s in '%s' nor in '%s/../lib/kgate'; "
				 "build it (make) or set KGATE_COLLECTOR to its path",
				 COLLECTOR_SO, dir, dir);
		free(cand[0]);
		free(cand[1]);
		free(dir);
		return found;
	}
	kg_error("cannot find the collector (cannot read /proc/self/exe); set KGATE_COLLECTOR "
		 "to the path of %s", COLLECTOR_SO);
	return NULL;
}

/*
 * The library NVTX_INJECTION64_PATH names: $KGATE_CUPTI when set (a libcupti
 * of the user's choice), else the collector itself, whose NVTX entry point
 * hands NVTX to whichever libcupti the process bound (PyTorch loads its own).
 */
char *runner_nvtx_library(const char *collector)
{
	const char *env = getenv("KGATE_CUPTI");

	if (env && env[0])
		return is_file(env) ? xstrdup(env) : NULL;
	return collector ? xstrdup(collector) : NULL;
}

/* ---- signals ------------------------------------------------------------ */

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
	caught = sig;
}

void runner_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int runner_interrupted(void)
{
	return caught;
}

/* ---- running ------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void close_quiet(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The child, after fork: never returns. */
static void child_exec(const struct kg_runner_spec *spec, char **envp, int out, int err,
		       int report)
{
	int null = open("/dev/null", O_RDONLY);

	setpgid(0, 0);
	/* Default dispositions: a benchmark must be killable by SIGTERM. */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	if (null >= 0) {
		dup2(null, 0);
		close(null);
	}
	dup2(out, 1);
	dup2(err, 2);
	close(out);
	close(err);
	if (spec->workdir && chdir(spec->workdir) != 0) {
		int e = errno;
		if (write(report, "d", 1) == 1 && write(report, &e, sizeof(e)) == (ssize_t)sizeof(e))
			_exit(127);
		_exit(127);
	}
	execvpe(spec->argv[0], spec->argv, envp);
	int e = errno;
	if (write(report, "x", 1) == 1 && write(report, &e, sizeof(e)) == (ssize_t)sizeof(e))
		_exit(127);
	_exit(127);
}

static void pump(int *fd, struct ring *r, int passthrough)
{
	char buf[16384];
	ssize_t n = read(*fd, buf, sizeof(buf));

	if (n > 0) {
		ring_add(r, buf, (size_t)n);
		if (passthrough) {
			ssize_t w = write(2, buf, (size_t)n);
			(void)w;
		}
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close_quiet(fd);
	}
}

static int group_alive(pid_t pgid)
{
	return kill(-pgid, 0) == 0 || errno == EPERM;
}

/*
 * kgate is the child subreaper (PR_SET_CHILD_SUBREAPER) while it runs
 * benchmarks: a process that leaves the benchmark's process group (setsid,
 * setpgid) and is orphaned (double fork) is re-parented to kgate instead of
 * init, so it can still be found, as a descendant of kgate, and ended.
 */
#define MAX_TREE 4096

/* Append the children of every thread of p to out[*n..cap). */
static void children_of(pid_t p, pid_t *out, size_t *n, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)p);
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) && *n < cap) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		char cpath[sizeof path + sizeof e->d_name + 16];
		snprintf(cpath, sizeof cpath, "%s/%s/children", path, e->d_name);
		FILE *f = fopen(cpath, "r");
		int c;
		if (!f)
			continue;
		while (*n < cap && fscanf(f, "%d", &c) == 1)
			out[(*n)++] = (pid_t)c;
		fclose(f);
	}
	closedir(d);
}

static int is_zombie(pid_t p)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)p);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	const char *rp = strrchr(buf, ')');
	return !rp || rp[1] != ' ' || rp[2] == 'Z' || rp[2] == 'X';
}

/* kgate's descendants that are not zombies, at most MAX_TREE; sig (when not
 * 0) sent to each.  Returns how many there are. */
static size_t descendants(int sig)
{
	pid_t *t = xmalloc(MAX_TREE * sizeof *t);
	size_t n = 0, live = 0;

	children_of(getpid(), t, &n, MAX_TREE);
	for (size_t i = 0; i < n; i++)
		children_of(t[i], t, &n, MAX_TREE);
	for (size_t i = 0; i < n; i++) {
		if (is_zombie(t[i]))
			continue;
		live++;
		if (sig)
			kill(t[i], sig);
	}
	free(t);
	return live;
}

/* The benchmark's process group and every descendant of kgate. */
static void signal_all(pid_t pgid, int sig)
{
	kill(-pgid, sig);
	descendants(sig);
}

int runner_run(const struct kg_runner_spec *spec, struct kg_runner_result *res)
{
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, pr[2] = { -1, -1 };
	struct ring ro = { 0 }, re = { 0 };
	double grace = spec->grace_s > 0 ? spec->grace_s : 5.0;
	int rc = KG_EXIT_RUNTIME;

	memset(res, 0, sizeof(*res));
	if (!spec->argv || !spec->argv[0]) {
		res->spawn_error = xstrdup("no command to run");
		return KG_EXIT_RUNTIME;
	}
	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC) || pipe2(pr, O_CLOEXEC)) {
		res->spawn_error = xasprintf("cannot create a pipe: %s", strerror(errno));
		goto out;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) != 0)
		kg_warn("cannot become the child subreaper (%s): processes a benchmark moves "
			"out of its process group may outlive it", strerror(errno));
	char **envp = env_merge(spec->env);
	double t0 = now_s();
	pid_t pid = fork();
	if (pid < 0) {
		res->spawn_error = xasprintf("cannot fork: %s", strerror(errno));
		free(envp);
		goto out;
	}
	if (pid == 0)
		child_exec(spec, envp, po[1], pe[1], pr[1]);
	free(envp);
	setpgid(pid, pid);  /* the child does it too; whichever is first wins */
	close_quiet(&po[1]);
	close_quiet(&pe[1]);
	close_quiet(&pr[1]);

	/* Did the exec work?  The pipe closes on exec, or carries errno. */
	char what = 0;
	int err = 0;
	ssize_t n;
	while ((n = read(pr[0], &what, 1)) < 0 && errno == EINTR)
		;
	if (n == 1) {
		if (read(pr[0], &err, sizeof(err)) != (ssize_t)sizeof(err))
			err = EIO;
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		if (what == 'd')
			res->spawn_error = xasprintf("cannot change to directory '%s': %s",
						     spec->workdir, strerror(err));
		else
			res->spawn_error = xasprintf("cannot run '%s': %s", spec->argv[0],
						     strerror(err));
		goto out;
	}
	close_quiet(&pr[0]);
	res->spawned = 1;
	ro.buf = xmalloc(KG_RUNNER_TAIL_BYTES);
	re.buf = xmalloc(KG_RUNNER_TAIL_BYTES);

	/* Phases: running; after the timeout, SIGTERM sent (kill_at = when to
	 * SIGKILL); after the main process exited, draining and killing what it
	 * left in its group. */
	double deadline = spec->timeout_s > 0 ? t0 + spec->timeout_s : 0;
	double kill_at = 0;
	int status = 0, reaped = 0, term_sent = 0, kill_sent = 0;
	double exited_at = 0;
	for (;;) {
		/* the benchmark, and what was re-parented to kgate and died */
		int st;
		pid_t w;
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			if (w == pid && !reaped) {
				status = st;
				reaped = 1;
				exited_at = now_s();
				res->wall_s = exited_at - t0;
			}
		double t = now_s();
		/* once the benchmark is reaped, every descendant is a leftover */
		size_t others = reaped ? descendants(0) : 0;
		if (reaped && po[0] < 0 && pe[0] < 0 && !group_alive(pid) && !others)
			break;
		if (caught && !term_sent) {
			res->interrupted = 1;
			signal_all(pid, SIGTERM);
			term_sent = 1;
			kill_at = t + grace;
		}
		if (!reaped && deadline && t >= deadline && !term_sent) {
			res->timed_out = 1;
			signal_all(pid, SIGTERM);
			term_sent = 1;
			kill_at = t + grace;
		}
		/* The benchmark exited but its group or processes it moved out of
		 * the group live on (or hold the pipes): give them a moment, then
		 * end them. */
		if (reaped && !term_sent && t >= exited_at + 0.2) {
			if (group_alive(pid) || others) {
				res->leftovers = 1;
				signal_all(pid, SIGTERM);
			}
			term_sent = 1;
			kill_at = t + grace;
		}
		if (term_sent && !kill_sent && t >= kill_at) {
			signal_all(pid, SIGKILL);
			kill_sent = 1;
		}
		if (kill_sent && t >= kill_at + 2.0) {
			/* SIGKILL did not end them: not kgate's to signal (setuid),
			 * or in uninterruptible sleep.  Or, when all are gone,
			 * something else holds the pipes open.  Stop waiting. */
			if (!reaped || others || group_alive(pid))
				res->unkillable = 1;
			break;
		}
		struct pollfd pf[2];
		int np = 0;
		if (po[0] >= 0)
			pf[np++] = (struct pollfd){ .fd = po[0], .events = POLLIN };
		if (pe[0] >= 0)
			pf[np++] = (struct pollfd){ .fd = pe[0], .events = POLLIN };
		int ms = 50;
		if (np == 0) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };
			nanosleep(&ts, NULL);
			continue;
		}
		if (poll(pf, (nfds_t)np, ms) > 0) {
			for (int i = 0; i < np; i++) {
				if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
					continue;
				if (pf[i].fd == po[0])
					pump(&po[0], &ro, spec->passthrough);
				else
					pump(&pe[0], &re, spec->passthrough);
			}
		}
	}
	if (!reaped) {
		/* unkillable: not waited for, it may never end */
		res->wall_s = now_s() - t0;
	} else if (WIFEXITED(status)) {
		res->exited = 1;
		res->exit_status = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
	}
	res->out_tail = ring_linear(&ro);
	res->err_tail = ring_linear(&re);
	res->out_bytes = ro.total;
	res->err_bytes = re.total;
	rc = KG_EXIT_PASS;
out:
	close_quiet(&po[0]);
	close_quiet(&po[1]);
	close_quiet(&pe[0]);
	close_quiet(&pe[1]);
	close_quiet(&pr[0]);
	close_quiet(&pr[1]);
	free(ro.buf);
	free(re.buf);
	if (!res->out_tail)
		res->out_tail = xstrdup("");
	if (!res->err_tail)
		res->err_tail = xstrdup("");
	return rc;
}

void runner_result_free(struct kg_runner_result *res)
{
	free(res->spawn_error);
	free(res->out_tail);
	free(res->err_tail);
	memset(res, 0, sizeof(*res));
}

int runner_ok(const struct kg_runner_result *res)
{
	return res->spawned && res->exited && res->exit_status == 0 && !res->timed_out &&
	       !res->unkillable;
}

#define UNKILLABLE_WHY "processes of it were still running after SIGKILL (not kgate's " \
	"to signal, such as a setuid program, or in uninterruptible sleep)"

char *runner_describe(const struct kg_runner_result *res, double timeout_s)
{
	if (!res->spawned)
		return xstrdup(res->spawn_error ? res->spawn_error : "could not be started");
	if (res->unkillable && res->timed_out)
		return xasprintf("timed out after %g s and could not be killed: %s", timeout_s,
				 UNKILLABLE_WHY);
	if (res->unkillable)
		return xasprintf("could not be killed: %s", UNKILLABLE_WHY);
	if (res->timed_out)
		return xasprintf("timed out after %g s", timeout_s);
	if (res->signal)
		return xasprintf("was killed by signal %d (%s)", res->signal, strsignal(res->signal));
	if (res->exited && res->exit_status)
		return xasprintf("exited with status %d", res->exit_status);
	return xstrdup("finished");
}

const char *runner_last_lines(const char *text, int n)
{
	size_t len = strlen(text);
	const char *p = text + len;

	/* Ignore the final newline. */
	if (p > text && p[-1] == '\n')
		p--;
	while (p > text) {
		if (p[-1] == '\n' && --n == 0)
			break;
		p--;
	}
	return p;
}
