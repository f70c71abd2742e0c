/*
 * import.c: the table of importers (import.h) and what ingest and suite runs
 * share around them: lookup by name, sniffing a file's first bytes (and the
 * recognition of formats kgate does not read yet, by their content, the
 * path's suffix a hint only), one file's header read with its defaults, the
 * merge of the files' GPU fingerprints into one run, and the run's context.
 *
 * Adding a format: its file in src/import/ gives ID_sniff, ID_read_info
 * and an ingest function (import.h says what each does), and one line of
 * FORMATS in formats.h lists it.
 */
#include "kgate/import.h"
#include "kgate/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "formats.h"

#define DEFINE(id, name, description, complete, ingest) \
	static const struct kg_importer id##_format = { \
		name, description, id##_sniff, id##_read_info, complete, ingest \
	};
#define ENTRY(id, name, description, complete, ingest) &id##_format,
FORMATS(DEFINE)
const struct kg_importer *const kg_importers[] = { FORMATS(ENTRY) NULL };
#undef DEFINE
#undef ENTRY

const struct kg_importer *import_find(const char *name)
{
	for (size_t i = 0; kg_importers[i]; i++)
		if (!strcmp(kg_importers[i]->name, name))
			return kg_importers[i];
	return NULL;
}

char *import_names(void)
{
	struct kg_buf b = KG_BUF_INIT;

	for (size_t i = 0; kg_importers[i]; i++) {
		if (i)
			buf_adds(&b, ", ");
		buf_adds(&b, kg_importers[i]->name);
	}
	return buf_detach(&b);
}

void import_info_free(struct kg_import_info *info)
{
	store_run_info_free(&info->run);
	free(info->benchmark);
	free(info->command);
	memset(info, 0, sizeof(*info));
}

int import_read_info(const struct kg_importer *im, const char *path, struct kg_import_info *info)
{
	memset(info, 0, sizeof(*info));
	info->passes = 1;
	info->pid = info->ppid = -1;
	info->rank = info->local_rank = info->world_size = -1;
	return im->read_info(path, info);
}

const struct kg_importer *import_sniff_head(const unsigned char *head, size_t n,
					    const char *path, int *conf)
{
	const struct kg_importer *best = NULL;

	*conf = KG_SNIFF_NO;
	for (size_t i = 0; kg_importers[i]; i++) {
		int c = kg_importers[i]->sniff(head, n, path);
		if (c > *conf) {
			*conf = c;
			best = kg_importers[i];
		}
	}
	return best;
}

/* ------------------------------------------------------------------ */
/* Formats kgate does not read yet                                     */

static int suffix(const char *path, const char *s)
{
	size_t l = path ? strlen(path) : 0, m = strlen(s);
	return l >= m && !strcmp(path + l - m, s);
}

static int has(const unsigned char *head, size_t n, const char *s)
{
	return memmem(head, n, s, strlen(s)) != NULL;
}

/*
 * The keys of a JSON document's top-level object (or of the first object of
 * a top-level array) among want[0..nwant), as bits; reads only what the head
 * holds, so a document cut short still answers.  0 when the head is not JSON
 * that begins with an object or an array.
 */
static unsigned json_keys(const unsigned char *h, size_t n, const char *const *want, size_t nwant)
{
	size_t i = 0;
	int depth = 0, keydepth;
	unsigned seen = 0;

	while (i < n && (h[i] == ' ' || h[i] == '\t' || h[i] == '\r' || h[i] == '\n'))
		i++;
	if (i + 3 <= n && h[i] == 0xef && h[i + 1] == 0xbb && h[i + 2] == 0xbf)
		i += 3;     /* a UTF-8 byte order mark */
	if (i == n || (h[i] != '{' && h[i] != '['))
		return 0;
	keydepth = h[i] == '{' ? 1 : 2;
	for (; i < n; i++) {
		unsigned char c = h[i];
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (--depth <= 0 || (keydepth == 2 && depth < 2 && c == '}'))
				break;
		} else if (c == '"') {
			size_t start = ++i;
			while (i < n && h[i] != '"')
				i += h[i] == '\\' ? 2 : 1;
			if (i >= n)
				break;
			size_t end = i, j = i + 1;
			while (j < n && (h[j] == ' ' || h[j] == '\t' || h[j] == '\r' || h[j] == '\n'))
				j++;
			if (depth == keydepth && j < n && h[j] == ':')
				for (size_t k = 0; k < nwant; k++)
					if (strlen(want[k]) == end - start &&
					    !memcmp(h + start, want[k], end - start))
						seen |= 1u << k;
		}
	}
	return seen;
}

/*
 * A table of 'nsys stats --format csv' (or its text form): its header line
 * names the columns of a summary ("Time (%)", "Total Time (ns)",
 * "Instances") or of a GPU trace ("Start (ns)", "Duration (ns)", "CorrId").
 */
static int nsys_stats_csv(const unsigned char *h, size_t n)
{
	for (size_t i = 0; i < n;) {
		const unsigned char *nl = memchr(h + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - h) : n;
		const unsigned char *l = h + i;
		size_t ll = end - i;
		if ((memmem(l, ll, "Time (%)", 8) || memmem(l, ll, "Time(%)", 7)) &&
		    memmem(l, ll, "Total Time", 10) &&
		    (memmem(l, ll, "Instances", 9) || memmem(l, ll, "Num Calls", 9)))
			return 1;
		if (memmem(l, ll, "Start (ns)", 10) && memmem(l, ll, "Duration (ns)", 13) &&
		    memmem(l, ll, "CorrId", 6))
			return 1;
		i = end + 1;
	}
	return 0;
}

static const char *const keys[] = {
	"traceEvents", "schemaVersion", "deviceProperties", "context", "benchmarks",
	"meta", "devices", "ph", "ts",
};
enum {
	K_TRACE = 1 << 0, K_SCHEMA = 1 << 1, K_DEVPROPS = 1 << 2, K_CONTEXT = 1 << 3,
	K_BENCH = 1 << 4, K_META = 1 << 5, K_DEVICES = 1 << 6, K_PH = 1 << 7, K_TS = 1 << 8,
};

const char *import_unsupported(const unsigned char *head, size_t n, const char *path)
{
	if (n >= 4 && !memcmp(head, "NVR\0", 4))
		return "a binary Nsight Compute report (.ncu-rep), which 'ncu --import FILE --csv "
		       "--page raw > FILE.csv' exports as the CSV kgate reads";
	if (n >= 16 && !memcmp(head, "SQLite format 3", 16)) {
		/* schema 7 on: "kgat", its application id; before, its tables' text */
		if ((n >= 72 && !memcmp(head + 68, "kgat", 4)) || has(head, n, "run_benchmarks") ||
		    has(head, n, "CREATE TABLE samples"))
			return "a kgate database: give it as --db";
		if (has(head, n, "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL") || has(head, n, "StringTable"))
			return "an nvprof database (nvprof --export-profile); kgate reads Nsight "
			       "Systems exports (nsys import, then nsys export --type sqlite)";
		return "an SQLite database that is not an Nsight Systems export (no kernel "
		       "trace tables; --input-format nsys-sqlite says what it lacks)";
	}
	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
		return suffix(path, ".json.gz")
			? "a gzip-compressed JSON file that is not a Kineto (PyTorch profiler) "
			  "trace with GPU kernels"
			: "a gzip-compressed file";
	if (n >= 28 && !memcmp(head, "NVIDIA Tegra Profiler Report", 28))
		return "an Nsight Systems report (.nsys-rep); 'nsys export --type sqlite "
		       "--output FILE.sqlite FILE.nsys-rep' exports it as kgate reads it";
	if (memchr(head, '\0', n) && (suffix(path, ".nsys-rep") || suffix(path, ".qdrep")))
		return "an Nsight Systems report (.nsys-rep, by its name); 'nsys export --type "
		       "sqlite --output FILE.sqlite FILE.nsys-rep' exports it as kgate reads it";
	if (nsys_stats_csv(head, n))
		return "an 'nsys stats' CSV table (a summary: per-launch times are gone); give "
		       "kgate the SQLite export the table was made from ('nsys export --type "
		       "sqlite'), which holds every launch";
	unsigned k = json_keys(head, n, keys, sizeof(keys) / sizeof(keys[0]));
	if ((k & K_TRACE) || ((k & K_PH) && (k & K_TS)))
		return "a Chrome trace JSON file without the GPU kernels of a Kineto "
		       "(PyTorch profiler) trace";
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Choosing an importer                                                */

static void say_formats(const char *path)
{
	struct kg_buf b = KG_BUF_INIT;

	for (size_t i = 0; kg_importers[i]; i++)
		buf_printf(&b, "%s%s (%s)", i ? ", " : "", kg_importers[i]->name,
			   kg_importers[i]->description);
	kg_error("cannot ingest '%s': not a format kgate reads; it reads %s (--input-format "
		 "NAME names one)", path, b.s);
	buf_free(&b);
}

const struct kg_importer *import_choose(const char *path, const char *name, int *skipped)
{
	unsigned char *head;
	struct stat sb;
	size_t n;
	int conf;
	FILE *fp;

	if (skipped)
		*skipped = 0;
	if (name)
		return import_find(name);
	if (stat(path, &sb) != 0) {
		kg_error("cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (!S_ISREG(sb.st_mode)) {
		/* a stream's beginning, once read, is gone for the importer */
		kg_error("cannot ingest '%s': not a regular file, so its format cannot be told "
			 "from its content; give --input-format NAME before it", path);
		return NULL;
	}
	if (!(fp = fopen(path, "rb"))) {
		kg_error("cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	head = xmalloc(KG_IMPORT_HEAD);
	n = fread(head, 1, KG_IMPORT_HEAD, fp);
	if (ferror(fp)) {
		kg_error("cannot read '%s': %s", path, strerror(errno));
		fclose(fp);
		free(head);
		return NULL;
	}
	fclose(fp);

	const struct kg_importer *im = import_sniff_head(head, n, path, &conf);
	const char *what = conf >= KG_SNIFF_LIKELY ? NULL : import_unsupported(head, n, path);
	free(head);
	if (what) {
		if (skipped) {
			kg_warn("skipped '%s': this looks like %s; kgate does not read that format "
				"yet", path, what);
			*skipped = 1;
		} else {
			kg_error("cannot ingest '%s': this looks like %s; kgate does not read that "
				 "format yet", path, what);
		}
		return NULL;
	}
	if (im)
		return im;
	if (skipped)
		*skipped = 1;
	else
		say_formats(path);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* One run from many files                                             */

static int partial_allowed;

void import_set_partial(int allowed)
{
	partial_allowed = allowed;
}

int import_partial_allowed(void)
{
	return partial_allowed;
}

static int same(const char *a, const char *b)
{
	return !a || !b || !strcmp(a, b);
}

/* "sm_90" for "GPU of compute capability 9.0", else NULL; malloc'd. */
static char *cc_name_chip(const char *name)
{
	size_t l = strlen(KG_IMPORT_CC_NAME);
	struct kg_buf b = KG_BUF_INIT;

	if (!name || strncmp(name, KG_IMPORT_CC_NAME, l) != 0)
		return NULL;
	buf_adds(&b, "sm_");
	for (const char *p = name + l; *p; p++)
		if (*p != '.')
			buf_addc(&b, *p);
	return buf_detach(&b);
}

/* Whether the GPU of a run and of one file are one model: the same name,
 * or one known only by its compute capability and the other of that one
 * (or of one not known: a chip that is not "sm_XY"). */
static int same_gpu(const struct kg_run_info *a, const struct kg_run_info *b)
{
	if (same(a->gpu_name, b->gpu_name))
		return 1;
	char *ca = cc_name_chip(a->gpu_name), *cb = cc_name_chip(b->gpu_name);
	int ok = 0;
	if (ca && !cb)
		ok = !b->gpu_chip || strncmp(b->gpu_chip, "sm_", 3) || !strcmp(b->gpu_chip, ca);
	else if (cb && !ca)
		ok = !a->gpu_chip || strncmp(a->gpu_chip, "sm_", 3) || !strcmp(a->gpu_chip, cb);
	free(ca);
	free(cb);
	return ok;
}

int import_fingerprint(struct kg_run_info *run, struct kg_run_info *one, const char *path,
		       const char *first_path)
{
	if (!same_gpu(run, one)) {
		kg_error("%s: recorded on %s, but %s was recorded on %s; one run is one GPU model",
			 path, one->gpu_name, first_path, run->gpu_name);
		return KG_EXIT_USAGE;
	}
	if (run->gpu_name && one->gpu_name &&
	    !strncmp(run->gpu_name, KG_IMPORT_CC_NAME, strlen(KG_IMPORT_CC_NAME)) &&
	    strncmp(one->gpu_name, KG_IMPORT_CC_NAME, strlen(KG_IMPORT_CC_NAME))) {
		/* a name beats a compute capability */
		free(run->gpu_name);
		run->gpu_name = NULL;
	}
#define TAKE(f) if (!run->f && one->f) { run->f = one->f; one->f = NULL; }
	TAKE(gpu_name) TAKE(gpu_uuid) TAKE(gpu_chip) TAKE(driver) TAKE(cuda)
	TAKE(collector) TAKE(source)
#undef TAKE
	if (!run->time)
		run->time = one->time;
	return KG_EXIT_PASS;
}

void import_context(struct kg_run_info *run)
{
	const char *ci = getenv("GITHUB_RUN_ID"), *srv = getenv("GITHUB_SERVER_URL"),
		   *repo = getenv("GITHUB_REPOSITORY");
	char host[256];

	if (ci && srv && repo && !run->ci_url)
		run->ci_url = xasprintf("%s/%s/actions/runs/%s", srv, repo, ci);
	if (!run->host && gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		run->host = xstrdup(host);
	}
	if (!run->time)
		run->time = (int64_t)time(NULL);
}
