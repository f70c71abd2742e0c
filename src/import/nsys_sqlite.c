/*
 * import/nsys_sqlite.c: the importer of Nsight Systems SQLite exports
 * (nsys export --type sqlite, or nsys profile --export sqlite).
 *
 * The export is an input file, not kgate's store: this importer opens it
 * itself, read-only, through SQLite's API (the one place outside the store's
 * backends with sqlite3_ calls, and only on the file being imported).  Only
 * real tables are read (a view of a kernel table's name is refused, so a
 * hostile file cannot make a query run forever), with trusted_schema off.
 *
 * Per launch (CUPTI_ACTIVITY_KIND_KERNEL, names through StringIds): the
 * duration (end - start, ns) and the launch configuration, under the names
 * kgate's collector gives them (records_format.h): grid and block sizes,
 * registers per thread, static and dynamic shared memory, local memory per
 * thread.  The stream is read for nothing: as in the collector's records and
 * ncu's raw page, a stream's number is the launch's identity, not the
 * kernel's behaviour.  Kernels are keyed by their mangled name as given (the
 * collector's key); an export without mangledName (nsys before 2022) gives
 * the demangled one, keyed canonically.  The ordinal counts launches per
 * process in correlation-id order (launch order), processes by id.
 *
 * The NVTX path of a launch is projected as nsys stats' nvtx_kern_sum does:
 * the runtime API call with the kernel's correlation id (same process) is
 * found in CUPTI_ACTIVITY_KIND_RUNTIME, and the push/pop ranges of
 * NVTX_EVENTS open on that call's thread around the whole call make the
 * path, outermost first, joined with '/', as the collector writes it (start/
 * end ranges, which do not nest, and domain names are not part of a path).
 * Both sides are read as SQL cursors sorted by (thread, time) and merged,
 * so memory holds the ranges open at one moment, not the file; SQLite's
 * cache is 16 MiB, and its sorts spill to temporary files beyond it.
 *
 * The GPU (name, chip, uuid) comes from TARGET_INFO_GPU (TARGET_INFO_CUDA_GPU
 * before nsys 2021.2), restricted to the devices the kernels ran on; the
 * driver from TARGET_INFO_SYSTEM_ENV; nsys's version from META_DATA_EXPORT;
 * the default benchmark name from PROCESSES (the process with most
 * kernels; without it, the file's name).  Columns that differ between nsys
 * versions are looked up first.
 */
#include "kgate/import.h"
#include "kgate/records_format.h"
#include "kgate/util.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

#define KERNELS "CUPTI_ACTIVITY_KIND_KERNEL"
#define RUNTIME "CUPTI_ACTIVITY_KIND_RUNTIME"
#define NVTX_DEPTH 64           /* deeper ranges are not named (as the collector) */
#define NVTX_OPEN_MAX 4096      /* ranges open at once on one thread that are kept */
#define NVTX_NAME_MAX 1024      /* bytes of one range name kept (as the collector) */

int nsys_sniff(const unsigned char *head, size_t n, const char *path)
{
	size_t l = path ? strlen(path) : 0;

	if (n < 16 || memcmp(head, "SQLite format 3", 16) != 0) {
		/* "SQLite format 3" then NUL: the report itself is binary */
		return KG_SNIFF_NO;
	}
	if ((n >= 72 && !memcmp(head + 68, "kgat", 4)) ||   /* application id, schema 7 on */
	    memmem(head, n, "CREATE TABLE samples", 20) || memmem(head, n, "run_benchmarks", 14))
		return KG_SNIFF_NO;     /* kgate's own database */
	if (memmem(head, n, KERNELS, strlen(KERNELS)) || memmem(head, n, "TARGET_INFO_", 12) ||
	    memmem(head, n, "StringIds", 9) || memmem(head, n, "NVTX_EVENTS", 11))
		return KG_SNIFF_SURE;
	return l > 7 && !strcmp(path + l - 7, ".sqlite") ? KG_SNIFF_NAME : KG_SNIFF_NO;
}

/* ------------------------------------------------------------------ */
/* The file                                                            */

struct nsys {
	const char *path;
	sqlite3 *db;
};

static void db_say(struct nsys *x, const char *what)
{
	kg_error("cannot read '%s': %s: %s", x->path, what, sqlite3_errmsg(x->db));
}

static int nsys_open(struct nsys *x, const char *path)
{
	x->path = path;
	x->db = NULL;
	int rc = sqlite3_open_v2(path, &x->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		kg_error("cannot open '%s': %s", path, x->db ? sqlite3_errmsg(x->db) : sqlite3_errstr(rc));
		sqlite3_close(x->db);
		x->db = NULL;
		return KG_EXIT_USAGE;
	}
	sqlite3_db_config(x->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(x->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(x->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	sqlite3_db_config(x->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
	/* 16 MiB of page cache; sorts and the runtime calls' temporary table
	 * beyond it go to temporary files, so memory stays bounded */
	sqlite3_exec(x->db, "PRAGMA cache_size=-16384;", NULL, NULL, NULL);
	/* the first read tells an SQLite file that is not a database */
	if (sqlite3_exec(x->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) != SQLITE_OK) {
		kg_error("cannot read '%s': not a readable SQLite database (%s)", path,
			 sqlite3_errmsg(x->db));
		sqlite3_close(x->db);
		x->db = NULL;
		return KG_EXIT_USAGE;
	}
	return KG_EXIT_PASS;
}

static void nsys_close(struct nsys *x)
{
	sqlite3_close(x->db);
	x->db = NULL;
}

/* 1 when table is a real table of the file, 0 when not, -1 on an error said. */
static int has_table(struct nsys *x, const char *table)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(x->db, "SELECT type FROM main.sqlite_master WHERE name = ?1 "
			       "AND type = 'table'", -1, &s, NULL) != SQLITE_OK) {
		db_say(x, "its schema");
		return -1;
	}
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		db_say(x, "its schema");
		return -1;
	}
	return rc == SQLITE_ROW;
}

/* 1 when table has column col, 0 when not (or on an error). */
static int has_column(struct nsys *x, const char *table, const char *col)
{
	sqlite3_stmt *s;
	int found = 0;

	if (sqlite3_prepare_v2(x->db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &s,
			       NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, col, -1, SQLITE_STATIC);
	found = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return found;
}

/* The first column of the first row of sql as a string (malloc'd), or NULL. */
static char *query_text(struct nsys *x, const char *sql, const char *bind)
{
	sqlite3_stmt *s;
	char *v = NULL;

	if (sqlite3_prepare_v2(x->db, sql, -1, &s, NULL) != SQLITE_OK)
		return NULL;
	if (bind)
		sqlite3_bind_text(s, 1, bind, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) {
		const unsigned char *t = sqlite3_column_text(s, 0);
		if (t && *t)
			v = xstrdup((const char *)t);
	}
	sqlite3_finalize(s);
	return v;
}

static const char *const kernel_required[] = {
	"start", "end", "demangledName", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
	"registersPerThread", "staticSharedMemory", "dynamicSharedMemory",
};

/* The kernel table is there with the columns read: 0, or an exit status said. */
static int check_kernels(struct nsys *x)
{
	int t = has_table(x, KERNELS);

	if (t < 0)
		return KG_EXIT_USAGE;
	if (!t) {
		kg_error("%s: an SQLite file without a " KERNELS " table: no CUDA kernel was "
			 "traced (an Nsight Systems report holds kernels when recorded with "
			 "'nsys profile --trace=cuda'); nothing to import", x->path);
		return KG_EXIT_USAGE;
	}
	if (!has_table(x, "StringIds")) {
		kg_error("%s: no StringIds table, so the kernels have no names; not an nsys "
			 "export kgate reads", x->path);
		return KG_EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(kernel_required) / sizeof(kernel_required[0]); i++)
		if (!has_column(x, KERNELS, kernel_required[i])) {
			kg_error("%s: table " KERNELS " has no column '%s'; not an nsys export "
				 "kgate reads", x->path, kernel_required[i]);
			return KG_EXIT_USAGE;
		}
	return KG_EXIT_PASS;
}

/* ------------------------------------------------------------------ */
/* What the file says of itself                                        */

static char *basename_dup(const char *p)
{
	const char *b = strrchr(p, '/');
	return xstrdup(b && b[1] ? b + 1 : p);
}

/* The GPU the kernels ran on: 0, or KG_EXIT_USAGE when they ran on
 * different models. */
static int read_gpu(struct nsys *x, struct kg_import_info *info)
{
	const char *table = has_table(x, "TARGET_INFO_GPU") > 0 ? "TARGET_INFO_GPU"
			  : has_table(x, "TARGET_INFO_CUDA_GPU") > 0 ? "TARGET_INFO_CUDA_GPU" : NULL;
	if (!table)
		return KG_EXIT_PASS;
	const char *idcol = has_column(x, table, "id") ? "id"
			  : has_column(x, table, "deviceId") ? "deviceId" : NULL;
	if (!has_column(x, table, "name"))
		return KG_EXIT_PASS;
	int chip = has_column(x, table, "chipName"), uuid = has_column(x, table, "uuid");
	int kdev = has_column(x, KERNELS, "deviceId");
	char *sql = xasprintf("SELECT DISTINCT name, %s, %s FROM %s WHERE name IS NOT NULL%s%s%s "
			      "ORDER BY %s LIMIT 2", chip ? "chipName" : "NULL",
			      uuid ? "uuid" : "NULL", table,
			      idcol && kdev ? " AND " : "", idcol && kdev ? idcol : "",
			      idcol && kdev ? " IN (SELECT DISTINCT deviceId FROM " KERNELS ")" : "",
			      idcol ? idcol : "name");
	sqlite3_stmt *s;
	int rc = KG_EXIT_PASS, n = 0;
	if (sqlite3_prepare_v2(x->db, sql, -1, &s, NULL) != SQLITE_OK) {
		free(sql);
		return KG_EXIT_PASS;    /* an odd GPU table: the GPU stays unnamed */
	}
	free(sql);
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		if (!name || !*name)
			continue;
		if (n++ == 0) {
			info->run.gpu_name = xstrdup(name);
			if (sqlite3_column_text(s, 1) && *sqlite3_column_text(s, 1))
				info->run.gpu_chip = xstrdup((const char *)sqlite3_column_text(s, 1));
			if (sqlite3_column_text(s, 2) && *sqlite3_column_text(s, 2))
				info->run.gpu_uuid = xasprintf("GPU-%s", sqlite3_column_text(s, 2));
		} else if (strcmp(name, info->run.gpu_name) != 0) {
			kg_error("%s: the kernels ran on GPUs of different models (%s, %s); one "
				 "run is one GPU model", x->path, info->run.gpu_name, name);
			rc = KG_EXIT_USAGE;
			break;
		} else if (info->run.gpu_uuid) {
			free(info->run.gpu_uuid);   /* several GPUs of one model */
			info->run.gpu_uuid = NULL;
		}
	}
	sqlite3_finalize(s);
	return rc;
}

int nsys_read_info(const char *path, struct kg_import_info *info)
{
	struct nsys x;
	int rc;

	if ((rc = nsys_open(&x, path)) != KG_EXIT_PASS)
		return rc;
	if ((rc = check_kernels(&x)) != KG_EXIT_PASS || (rc = read_gpu(&x, info)) != KG_EXIT_PASS) {
		nsys_close(&x);
		return rc;
	}
	if (has_table(&x, "TARGET_INFO_SYSTEM_ENV") > 0)
		info->run.driver = query_text(&x, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE "
					      "name = 'NvDriverVersion'", NULL);
	char *ver = has_table(&x, "META_DATA_EXPORT") > 0
		? query_text(&x, "SELECT value FROM META_DATA_EXPORT WHERE name = "
			     "'EXPORT_PRODUCT_VERSION'", NULL) : NULL;
	info->run.collector = ver ? xasprintf("nsys %s", ver) : xstrdup("nsys");
	free(ver);
	info->run.source = xstrdup("nsys-sqlite");
	if (has_table(&x, "TARGET_INFO_SESSION_START_TIME") > 0 &&
	    has_column(&x, "TARGET_INFO_SESSION_START_TIME", "utcEpochNs")) {
		char *t = query_text(&x, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME", NULL);
		if (t)
			info->run.time = strtoll(t, NULL, 10) / 1000000000;
		free(t);
	}
	/* the benchmark: the process that launched most kernels */
	if (has_table(&x, "PROCESSES") > 0 && has_column(&x, KERNELS, "globalPid") &&
	    has_column(&x, "PROCESSES", "globalPid") && has_column(&x, "PROCESSES", "name")) {
		char *name = query_text(&x, "SELECT p.name FROM (SELECT globalPid, count(*) AS n "
					"FROM " KERNELS " GROUP BY globalPid ORDER BY n DESC "
					"LIMIT 1) AS k JOIN PROCESSES AS p USING (globalPid)", NULL);
		if (name) {
			info->benchmark = basename_dup(name);
			free(name);
		}
		char *pid = query_text(&x, "SELECT p.pid FROM (SELECT globalPid, count(*) AS n "
				       "FROM " KERNELS " GROUP BY globalPid ORDER BY n DESC "
				       "LIMIT 1) AS k JOIN PROCESSES AS p USING (globalPid)", NULL);
		if (pid && has_column(&x, "PROCESSES", "pid"))
			info->pid = strtoll(pid, NULL, 10);
		free(pid);
	}
	if (!info->benchmark) {     /* no process named: the file's name */
		info->benchmark = basename_dup(path);
		size_t l = strlen(info->benchmark);
		if (l > 7 && !strcmp(info->benchmark + l - 7, ".sqlite"))
			info->benchmark[l - 7] = '\0';
	}
	nsys_close(&x);
	return KG_EXIT_PASS;
}

/* ------------------------------------------------------------------ */
/* The kernels                                                         */

struct range {
	int64_t start, end;
	const char *name;       /* interned */
};

/*
 * Kernel names by their StringIds ids, looked up once per distinct (mangled,
 * demangled) pair of integer ids rather than joined into every row: the
 * rows are sorted, and names of a few hundred bytes carried through the
 * sort were most of its work.  Ids that are not integers (a hostile file)
 * are looked up on every row, with the join's comparison.
 */
struct name_ent {
	int64_t m, d;           /* the ids (m: INT64_MIN, none) */
	int used;
	int named;              /* kn holds the names; else the kernel has none */
	struct kg_kernel_name kn;
};
struct names {
	struct name_ent *e;
	size_t cap, n;
	sqlite3_stmt *get;      /* StringIds' value of an id */
};

/* The text of StringIds' row whose id equals v (a copy, or NULL). */
static char *name_get(struct names *t, sqlite3_value *v)
{
	char *out = NULL;

	if (sqlite3_value_type(v) == SQLITE_NULL)
		return NULL;
	sqlite3_reset(t->get);
	sqlite3_bind_value(t->get, 1, v);
	if (sqlite3_step(t->get) == SQLITE_ROW && sqlite3_column_text(t->get, 0))
		out = xstrdup((const char *)sqlite3_column_text(t->get, 0));
	sqlite3_reset(t->get);
	return out;
}

/* The names of a row's kernel (its mangledName and demangledName values):
 * 1 when it has one (*kn set), 0 when neither id names a non-empty string. */
static int names_of(struct names *t, struct kg_import_sink *sink, sqlite3_value *mv,
		    sqlite3_value *dv, struct kg_kernel_name *kn)
{
	int cacheable = (!mv || sqlite3_value_type(mv) == SQLITE_INTEGER ||
			 sqlite3_value_type(mv) == SQLITE_NULL) &&
			sqlite3_value_type(dv) == SQLITE_INTEGER;
	int64_t m = mv && sqlite3_value_type(mv) == SQLITE_INTEGER ? sqlite3_value_int64(mv)
								      : INT64_MIN;
	int64_t d = sqlite3_value_int64(dv);
	struct name_ent *slot = NULL;

	if (cacheable) {
		if ((t->n + 1) * 2 > t->cap) {
			struct name_ent *old = t->e;
			size_t oc = t->cap;
			t->cap = oc ? oc * 2 : 64;
			t->e = xcalloc(t->cap, sizeof(*t->e));
			for (size_t i = 0; i < oc; i++) {
				if (!old[i].used)
					continue;
				size_t j = (size_t)((uint64_t)old[i].m * 31 + (uint64_t)old[i].d) &
					   (t->cap - 1);
				while (t->e[j].used)
					j = (j + 1) & (t->cap - 1);
				t->e[j] = old[i];
			}
			free(old);
		}
		size_t j = (size_t)((uint64_t)m * 31 + (uint64_t)d) & (t->cap - 1);
		while (t->e[j].used && (t->e[j].m != m || t->e[j].d != d))
			j = (j + 1) & (t->cap - 1);
		slot = &t->e[j];
		if (slot->used) {
			*kn = slot->kn;
			return slot->named;
		}
	}
	char *mn = mv ? name_get(t, mv) : NULL, *dn = name_get(t, dv);
	int named = 1;
	if (mn && *mn)
		import_sink_kernel(sink, mn, KG_KEY_AS_GIVEN, kn);
	else if (dn && *dn)
		import_sink_kernel(sink, dn, KG_KEY_CANONICAL, kn);
	else
		named = 0;
	free(mn);
	free(dn);
	if (slot) {
		slot->used = 1;
		slot->m = m;
		slot->d = d;
		slot->named = named;
		if (named)
			slot->kn = *kn;
		t->n++;
	}
	return named;
}

struct ingest {
	struct nsys x;
	struct kg_import_sink *sink;
	sqlite3_stmt *nvtx;     /* push/pop ranges by (thread, start), or NULL */
	int nvtx_row;           /* nvtx has a current row */
	int nvtx_warned;
	struct range *open;     /* ranges open on the current thread, by start */
	size_t nopen;
	int64_t tid;            /* the thread of open[] */
	int have_tid;
	struct kg_buf path;
	const struct kg_import_metric *m[7];
	struct names names;
};

static int nvtx_step(struct ingest *in)
{
	int rc = sqlite3_step(in->nvtx);

	if (rc == SQLITE_ROW) {
		in->nvtx_row = 1;
		return KG_EXIT_PASS;
	}
	in->nvtx_row = 0;
	if (rc == SQLITE_DONE)
		return KG_EXIT_PASS;
	db_say(&in->x, "NVTX_EVENTS");
	return KG_EXIT_USAGE;
}

/* The NVTX path of a runtime call [rs, re] on thread tid (interned). */
static int nvtx_path(struct ingest *in, int64_t tid, int64_t rs, int64_t re, const char **out)
{
	int rc;

	if (!in->have_tid || tid != in->tid) {
		in->nopen = 0;
		in->tid = tid;
		in->have_tid = 1;
		while (in->nvtx_row && sqlite3_column_int64(in->nvtx, 0) < tid)
			if ((rc = nvtx_step(in)))
				return rc;
	}
	while (in->nvtx_row && sqlite3_column_int64(in->nvtx, 0) == tid &&
	       sqlite3_column_int64(in->nvtx, 1) <= rs) {
		int64_t s = sqlite3_column_int64(in->nvtx, 1);
		int64_t e = sqlite3_column_type(in->nvtx, 2) == SQLITE_NULL
			  ? INT64_MAX : sqlite3_column_int64(in->nvtx, 2);
		/* ranges closed before this one began are done with */
		size_t k = 0;
		for (size_t i = 0; i < in->nopen; i++)
			if (in->open[i].end >= s)
				in->open[k++] = in->open[i];
		in->nopen = k;
		if (e >= rs) {
			if (in->nopen < NVTX_OPEN_MAX) {
				const char *t = (const char *)sqlite3_column_text(in->nvtx, 3);
				char name[NVTX_NAME_MAX + 1];
				snprintf(name, sizeof(name), "%s", t ? t : "");
				in->open = xrealloc(in->open, (in->nopen + 1) * sizeof(*in->open));
				in->open[in->nopen++] = (struct range){ s, e,
					import_sink_string(in->sink, name) };
			} else if (!in->nvtx_warned) {
				in->nvtx_warned = 1;
				kg_warn("%s: more than %d NVTX ranges open at once on one thread; "
					"the later ones are left out of NVTX paths", in->x.path,
					NVTX_OPEN_MAX);
			}
		}
		if ((rc = nvtx_step(in)))
			return rc;
	}
	buf_reset(&in->path);
	int depth = 0;
	for (size_t i = 0; i < in->nopen && depth < NVTX_DEPTH; i++)
		if (in->open[i].start <= rs && in->open[i].end >= re) {
			if (depth++)
				buf_addc(&in->path, '/');
			buf_adds(&in->path, in->open[i].name);
		}
	*out = import_sink_string(in->sink, in->path.s ? in->path.s : "");
	return KG_EXIT_PASS;
}

/* Column c of s as a non-negative integer: 0, or -1 when NULL or negative. */
static int col_count(sqlite3_stmt *s, int c, double *v)
{
	if (sqlite3_column_type(s, c) != SQLITE_INTEGER)
		return -1;
	int64_t i = sqlite3_column_int64(s, c);
	if (i < 0)
		return -1;
	*v = (double)i;
	return 0;
}

/* Build the runtime calls' table (one per correlation id and process, only
 * those of kernels) and the NVTX cursor: 1 when NVTX paths can be
 * projected, 0 when the file lacks what it takes, -1 on an error said. */
static int nvtx_prepare(struct ingest *in)
{
	struct nsys *x = &in->x;

	if (has_table(x, RUNTIME) <= 0 || has_table(x, "NVTX_EVENTS") <= 0 ||
	    !has_column(x, KERNELS, "correlationId") || !has_column(x, KERNELS, "globalPid") ||
	    !has_column(x, RUNTIME, "correlationId") || !has_column(x, RUNTIME, "globalTid") ||
	    !has_column(x, "NVTX_EVENTS", "globalTid") || !has_column(x, "NVTX_EVENTS", "eventType") ||
	    !has_column(x, "NVTX_EVENTS", "end") || !has_column(x, "NVTX_EVENTS", "text"))
		return 0;
	/* a global id is (vm << 56) | (pid << 24) | tid: the process is the top 40 bits */
	if (sqlite3_exec(x->db,
			 "CREATE TEMP TABLE kg_rt (c INTEGER, p INTEGER, tid INTEGER, s INTEGER, "
			 "e INTEGER, PRIMARY KEY (c, p)) WITHOUT ROWID;"
			 "INSERT OR IGNORE INTO temp.kg_rt SELECT correlationId, "
			 "globalTid & -16777216, globalTid, start, end FROM main." RUNTIME
			 " WHERE correlationId IN (SELECT correlationId FROM main." KERNELS ")",
			 NULL, NULL, NULL) != SQLITE_OK) {
		db_say(x, RUNTIME);
		return -1;
	}
	int textid = has_column(x, "NVTX_EVENTS", "textId");
	char *sql = xasprintf(
		"SELECT n.globalTid, n.start, n.end, %s FROM main.NVTX_EVENTS AS n %s "
		"WHERE n.eventType IN (59, 70) AND n.globalTid IN (SELECT tid FROM temp.kg_rt) "
		"ORDER BY n.globalTid, n.start",
		textid ? "coalesce(s.value, n.text, '')" : "coalesce(n.text, '')",
		textid ? "LEFT JOIN main.StringIds AS s ON s.id = n.textId" : "");
	int rc = sqlite3_prepare_v2(x->db, sql, -1, &in->nvtx, NULL);
	free(sql);
	if (rc != SQLITE_OK) {
		db_say(x, "NVTX_EVENTS");
		return -1;
	}
	return nvtx_step(in) == KG_EXIT_PASS ? 1 : -1;
}

int nsys_ingest(struct kg_import_sink *sink, const char *path)
{
	struct ingest in;
	struct kg_import_stats *st = import_sink_stats(sink);
	sqlite3_stmt *k = NULL;
	int rc, nv;

	memset(&in, 0, sizeof(in));
	in.sink = sink;
	if ((rc = nsys_open(&in.x, path)) != KG_EXIT_PASS)
		return rc;
	if ((rc = check_kernels(&in.x)) != KG_EXIT_PASS)
		goto out;
	if ((nv = nvtx_prepare(&in)) < 0) {
		rc = KG_EXIT_USAGE;
		goto out;
	}
	int mangled = has_column(&in.x, KERNELS, "mangledName");
	int local = has_column(&in.x, KERNELS, "localMemoryPerThread");
	int corr = has_column(&in.x, KERNELS, "correlationId");
	int gpid = has_column(&in.x, KERNELS, "globalPid");
	char *order = xasprintf("%s, %s, k.start, k.rowid", gpid ? "k.globalPid" : "0",
				corr ? "k.correlationId" : "0");
	if (sqlite3_prepare_v2(in.x.db, "SELECT value FROM main.StringIds WHERE id = ?1", -1,
			       &in.names.get, NULL) != SQLITE_OK) {
		free(order);
		db_say(&in.x, "StringIds");
		rc = KG_EXIT_USAGE;
		goto out;
	}
	char *sql = xasprintf(
		"SELECT k.rowid, k.start, k.end, %s, k.demangledName, k.gridX, k.gridY, k.gridZ, "
		"k.blockX, k.blockY, k.blockZ, k.registersPerThread, k.staticSharedMemory, "
		"k.dynamicSharedMemory, %s, %s, row_number() OVER (ORDER BY %s) - 1 AS ord "
		"FROM main." KERNELS " AS k %s ORDER BY %s",
		mangled ? "k.mangledName" : "NULL", local ? "k.localMemoryPerThread" : "NULL",
		nv ? "r.tid, r.s, r.e" : "NULL, NULL, NULL", order,
		nv ? "LEFT JOIN temp.kg_rt AS r ON r.c = k.correlationId AND r.p = k.globalPid" : "",
		nv ? "r.tid, r.s, ord" : "ord");
	free(order);
	rc = sqlite3_prepare_v2(in.x.db, sql, -1, &k, NULL);
	free(sql);
	if (rc != SQLITE_OK) {
		db_say(&in.x, KERNELS);
		rc = KG_EXIT_USAGE;
		goto out;
	}
	static const char *const names[7] = {
		KG_M_DURATION, KG_M_GRID, KG_M_BLOCK, KG_M_REGS, KG_M_SMEM_ST, KG_M_SMEM_DYN,
		KG_M_LOCAL,
	};
	for (int i = 0; i < 7; i++)
		in.m[i] = import_sink_metric(sink, names[i], NULL);

	rc = KG_EXIT_PASS;
	int step;
	while (rc == KG_EXIT_PASS && (step = sqlite3_step(k)) == SQLITE_ROW) {
		size_t row = (size_t)sqlite3_column_int64(k, 0);
		double v[7], g[3], b[3];
		int bad = sqlite3_column_type(k, 1) != SQLITE_INTEGER ||
			  sqlite3_column_type(k, 2) != SQLITE_INTEGER;
		for (int i = 0; i < 3 && !bad; i++)
			bad = col_count(k, 5 + i, &g[i]) || col_count(k, 8 + i, &b[i]);
		for (int i = 0; i < 3 && !bad; i++)
			bad = col_count(k, 11 + i, &v[3 + i]);
		if (!bad && sqlite3_column_type(k, 14) != SQLITE_NULL)
			bad = col_count(k, 14, &v[6]);
		else
			v[6] = -1;
		int64_t s0 = sqlite3_column_int64(k, 1), e0 = sqlite3_column_int64(k, 2);
		if (bad || e0 < s0) {
			kg_error("%s: " KERNELS " row %zu: %s", path, row,
				 bad ? "a launch configuration or time that is not a non-negative "
				       "integer" : "end is before start");
			rc = KG_EXIT_USAGE;
			break;
		}
		struct kg_kernel_name kn;
		if (!names_of(&in.names, sink, mangled ? sqlite3_column_value(k, 3) : NULL,
			      sqlite3_column_value(k, 4), &kn)) {
			kg_error("%s: " KERNELS " row %zu: the kernel has no name in StringIds", path,
				 row);
			rc = KG_EXIT_USAGE;
			break;
		}
		v[0] = (double)((uint64_t)e0 - (uint64_t)s0);
		v[1] = g[0] * g[1] * g[2];
		v[2] = b[0] * b[1] * b[2];
		const char *nvtx = "";
		if (nv && sqlite3_column_type(k, 15) == SQLITE_INTEGER &&
		    (rc = nvtx_path(&in, sqlite3_column_int64(k, 15), sqlite3_column_int64(k, 16),
				    sqlite3_column_int64(k, 17), &nvtx)) != KG_EXIT_PASS)
			break;
		int64_t ord = sqlite3_column_int64(k, 18);
		for (int i = 0; i < 7 && rc == KG_EXIT_PASS; i++)
			if (v[i] >= 0)
				rc = import_sink_add(sink, nvtx, &kn, in.m[i], ord, v[i], row);
		st->kernels++;
	}
	if (rc == KG_EXIT_PASS && step != SQLITE_DONE) {
		db_say(&in.x, KERNELS);
		rc = KG_EXIT_USAGE;
	}
out:
	sqlite3_finalize(k);
	sqlite3_finalize(in.names.get);
	free(in.names.e);
	sqlite3_finalize(in.nvtx);
	free(in.open);
	buf_free(&in.path);
	nsys_close(&in.x);
	return rc;
}
