/*
 * nvml_double.c: a stand-in for libnvidia-ml.so.1, for tests on machines
 * without a GPU.  Synthetic: every value it answers comes from the test's
 * environment, read at each call, not from a GPU.
 *
 *   NVML_DOUBLE_INIT=fail      nvmlInit_v2 fails (error 999, "Unknown Error")
 *   NVML_DOUBLE_DEVICES=N      how many devices (default 1); device i's UUID
 *                              is GPU-00000000-0000-0000-0000-00000000000i
 *   NVML_DOUBLE_SM=MHz         current SM clock (default 1980); also
 *   NVML_DOUBLE_APP_SM, NVML_DOUBLE_MAX_SM, NVML_DOUBLE_MEM, NVML_DOUBLE_TEMP,
 *   NVML_DOUBLE_POWER (mW), NVML_DOUBLE_EVENTS (reason bits, strtoull base 0)
 *   NVML_DOUBLE_UNSUPPORTED=1  every device query answers "Not Supported"
 *   NVML_DOUBLE_PROCS=pid:bytes,pid:bytes   compute processes (default none)
 *   NVML_DOUBLE_PROCS_FILE=PATH  the same list read from PATH at each call,
 *                              none while PATH does not exist (so a test
 *                              can end the "other process" while kgate waits)
 *
 * Loaded by kgate through KGATE_NVML_LIBRARY.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK 0
#define NOT_SUPPORTED 3
#define INSUFFICIENT_SIZE 7
#define UNKNOWN 999

struct proc {
	unsigned pid;
	unsigned long long used;
	unsigned gi, ci;
};

int nvmlInit_v2(void);
int nvmlShutdown(void);
const char *nvmlErrorString(int r);
int nvmlDeviceGetCount_v2(unsigned *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d);
int nvmlDeviceGetHandleByUUID(const char *uuid, void **d);
int nvmlDeviceGetName(void *d, char *buf, unsigned len);
int nvmlDeviceGetUUID(void *d, char *buf, unsigned len);
int nvmlDeviceGetClockInfo(void *d, int type, unsigned *v);
int nvmlDeviceGetApplicationsClock(void *d, int type, unsigned *v);
int nvmlDeviceGetMaxClockInfo(void *d, int type, unsigned *v);
int nvmlDeviceGetTemperature(void *d, int sensor, unsigned *v);
int nvmlDeviceGetPowerUsage(void *d, unsigned *v);
int nvmlDeviceGetEnforcedPowerLimit(void *d, unsigned *v);
int nvmlDeviceGetCurrentClocksEventReasons(void *d, unsigned long long *v);
int nvmlDeviceGetUtilizationRates(void *d, unsigned *v);
int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned *n, struct proc *p);

static unsigned long long num(const char *name, unsigned long long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

static int unsupported(void)
{
	return num("NVML_DOUBLE_UNSUPPORTED", 0) != 0;
}

static unsigned devices(void)
{
	return (unsigned)num("NVML_DOUBLE_DEVICES", 1);
}

int nvmlInit_v2(void)
{
	const char *v = getenv("NVML_DOUBLE_INIT");

	return v && !strcmp(v, "fail") ? UNKNOWN : OK;
}

int nvmlShutdown(void)
{
	return OK;
}

const char *nvmlErrorString(int r)
{
	return r == OK ? "Success" : r == NOT_SUPPORTED ? "Not Supported" : "Unknown Error";
}

int nvmlDeviceGetCount_v2(unsigned *n)
{
	*n = devices();
	return OK;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d)
{
	if (i >= devices())
		return 2; /* invalid argument */
	*d = (void *)(size_t)(i + 1);
	return OK;
}

int nvmlDeviceGetHandleByUUID(const char *uuid, void **d)
{
	for (unsigned i = 0; i < devices(); i++) {
		char u[96];

		nvmlDeviceGetUUID((void *)(size_t)(i + 1), u, sizeof(u));
		if (!strcmp(u, uuid)) {
			*d = (void *)(size_t)(i + 1);
			return OK;
		}
	}
	return 6; /* not found */
}

int nvmlDeviceGetName(void *d, char *buf, unsigned len)
{
	snprintf(buf, len, "Stand-in GPU %zu", (size_t)d - 1);
	return OK;
}

int nvmlDeviceGetUUID(void *d, char *buf, unsigned len)
{
	snprintf(buf, len, "GPU-00000000-0000-0000-0000-%012zx", (size_t)d - 1);
	return OK;
}

static int answer(unsigned *v, const char *name, unsigned long long dflt)
{
	if (unsupported())
		return NOT_SUPPORTED;
	*v = (unsigned)num(name, dflt);
	return OK;
}

int nvmlDeviceGetClockInfo(void *d, int type, unsigned *v)
{
	return answer(v, type == 2 ? "NVML_DOUBLE_MEM" : "NVML_DOUBLE_SM", type == 2 ? 2619 : 1980);
}

int nvmlDeviceGetApplicationsClock(void *d, int type, unsigned *v)
{
	return answer(v, type == 2 ? "NVML_DOUBLE_APP_MEM" : "NVML_DOUBLE_APP_SM",
		      type == 2 ? 2619 : 1980);
}

int nvmlDeviceGetMaxClockInfo(void *d, int type, unsigned *v)
{
	return answer(v, type == 2 ? "NVML_DOUBLE_MAX_MEM" : "NVML_DOUBLE_MAX_SM",
		      type == 2 ? 2619 : 1980);
}

int nvmlDeviceGetTemperature(void *d, int sensor, unsigned *v)
{
	return answer(v, "NVML_DOUBLE_TEMP", 35);
}

int nvmlDeviceGetPowerUsage(void *d, unsigned *v)
{
	return answer(v, "NVML_DOUBLE_POWER", 75000);
}

int nvmlDeviceGetEnforcedPowerLimit(void *d, unsigned *v)
{
	return answer(v, "NVML_DOUBLE_POWER_LIMIT", 700000);
}

int nvmlDeviceGetCurrentClocksEventReasons(void *d, unsigned long long *v)
{
	if (unsupported())
		return NOT_SUPPORTED;
	*v = num("NVML_DOUBLE_EVENTS", 0);
	return OK;
}

int nvmlDeviceGetUtilizationRates(void *d, unsigned *v)
{
	if (unsupported())
		return NOT_SUPPORTED;
	v[0] = (unsigned)num("NVML_DOUBLE_UTIL", 0);
	v[1] = 0;
	return OK;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned *n, struct proc *p)
{
	const char *s = getenv("NVML_DOUBLE_PROCS");
	const char *path = getenv("NVML_DOUBLE_PROCS_FILE");
	static char from_file[4096];
	unsigned k = 0;

	if (unsupported())
		return NOT_SUPPORTED;
	if (path && *path) {
		FILE *f = fopen(path, "r");
		size_t got = 0;

		if (f) {
			got = fread(from_file, 1, sizeof(from_file) - 1, f);
			fclose(f);
		}
		from_file[got] = '\0';
		s = from_file;
	}
	while (s && *s) {
		char *end;
		unsigned long pid = strtoul(s, &end, 10);
		unsigned long long used = 0;

		if (*end == ':')
			used = strtoull(end + 1, &end, 10);
		if (k < *n) {
			p[k].pid = (unsigned)pid;
			p[k].used = used;
			p[k].gi = p[k].ci = 0;
		}
		k++;
		s = *end == ',' ? end + 1 : "";
	}
	if (k > *n) {
		*n = k;
		return INSUFFICIENT_SIZE;
	}
	*n = k;
	return OK;
}
