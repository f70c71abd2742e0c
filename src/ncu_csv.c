/*
 * ncu_csv.c: importing Nsight Compute CSV exports as samples of a run
 * (ncu_csv.h).  Owns the RFC 4180 record reader, the recognition of the two
 * pages ncu exports (details: one row per launch and metric; raw: one
 * column per metric, a units row, one row per launch), the mapping of
 * details-page display names to raw metric names, and unit conversion to
 * the units kgate stores (ns, byte).
 *
 * Lines that do not begin with a quote (the program's own output, ncu's
 * ==PROF== and ==WARNING== lines) are skipped: ncu quotes every field.
 *
 * One pass over the file stores it: what the header functions need (the
 * process and GPU names) is on the first launch row, so they stop there;
 * each raw-page column is classified (skipped or not, its unit and factor,
 * deterministic or not) once per header and units row, not once per cell.
 */
#include "kgate/ncu_csv.h"
#include "kgate/import.h"
#include "kgate/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RECORD (64u << 20)

/* ------------------------------------------------------------------ */
/* RFC 4180 record reader                                              */

static void rd_addc(struct ncu_csv_reader *rd, int c)
{
	if (rd->len + 2 > rd->cap) {
		rd->cap = rd->cap ? rd->cap * 2 : 1024;
		rd->buf = xrealloc(rd->buf, rd->cap);
	}
	rd->buf[rd->len++] = (char)c;
}

static void rd_end_field(struct ncu_csv_reader *rd, size_t start)
{
	rd_addc(rd, '\0');
	if (rd->nf == rd->fcap) {
		rd->fcap = rd->fcap ? rd->fcap * 2 : 32;
		rd->off = xrealloc(rd->off, rd->fcap * sizeof(*rd->off));
	}
	rd->off[rd->nf++] = start;
}

int ncu_csv_read_record(FILE *fp, struct ncu_csv_reader *rd)
{
	enum { FIELD_START, UNQUOTED, QUOTED, QUOTE_IN_QUOTED } state = FIELD_START;
	size_t start = 0;
	int c;

	rd->len = rd->nf = 0;
	if (!rd->next_line)
		rd->next_line = 1;
	rd->line = rd->next_line;
	c = getc_unlocked(fp);
	if (c == EOF)
		return 0;
	rd->quoted_first = c == '"';
	if (!rd->quoted_first) {
		/* not a CSV record of ncu's: one raw line, one field */
		while (c != EOF && c != '\n') {
			if (rd->len > MAX_RECORD)
				return -1;
			if (c != '\r')
				rd_addc(rd, c);
			c = getc_unlocked(fp);
		}
		rd->next_line++;
		rd_end_field(rd, 0);
		goto done;
	}
	for (;; c = getc_unlocked(fp)) {
		/* the text and each field's offset and pointer count */
		if (rd->len + rd->nf * (sizeof(*rd->off) + sizeof(*rd->fields)) > MAX_RECORD)
			return -1;
		switch (state) {
		case FIELD_START:
			start = rd->len;
			if (c == '"') {
				state = QUOTED;
				break;
			}
			state = UNQUOTED;
			/* fall through */
		case UNQUOTED:
			if (c == ',') {
				rd_end_field(rd, start);
				state = FIELD_START;
			} else if (c == '\n' || c == EOF) {
				rd_end_field(rd, start);
				rd->next_line++;
				goto done;
			} else if (c != '\r') {
				rd_addc(rd, c);
			}
			break;
		case QUOTED:
			if (c == EOF)
				return -1;
			if (c == '"')
				state = QUOTE_IN_QUOTED;
			else {
				if (c == '\n')
					rd->next_line++;
				rd_addc(rd, c);
			}
			break;
		case QUOTE_IN_QUOTED:
			if (c == '"') {
				rd_addc(rd, '"');
				state = QUOTED;
			} else if (c == ',') {
				rd_end_field(rd, start);
				state = FIELD_START;
			} else if (c == '\n' || c == EOF) {
				rd_end_field(rd, start);
				rd->next_line++;
				goto done;
			} else if (c != '\r') {
				/* text after a closing quote: keep it, as most readers do */
				rd_addc(rd, c);
				state = UNQUOTED;
			}
			break;
		}
	}
done:
	rd->fields = xrealloc(rd->fields, (rd->nf + 1) * sizeof(*rd->fields));
	for (size_t i = 0; i < rd->nf; i++)
		rd->fields[i] = rd->buf + rd->off[i];
	rd->fields[rd->nf] = NULL;
	return (int)rd->nf;
}

void ncu_csv_reader_free(struct ncu_csv_reader *rd)
{
	free(rd->buf);
	free(rd->off);
	free(rd->fields);
	memset(rd, 0, sizeof(*rd));
}

/* ------------------------------------------------------------------ */
/* Values and units                                                    */

/* "1,234.56" -> 1234.56; 0 when the field is not a number ("n/a", "",
 * and "nan", which ncu writes for a derived metric it cannot compute, as
 * derived_tempMetric4 of real H200 raw exports), -1 when it is an infinite
 * one ("inf", "1e999"): the gate cannot judge it, so the export is refused. */
static int parse_number(const char *s, double *v)
{
	char tmp[128];
	size_t n = 0;

	while (*s == ' ')
		s++;
	if (!*s)
		return 0;
	for (; *s && n + 1 < sizeof(tmp); s++)
		if (*s != ',')
			tmp[n++] = *s;
	if (*s)
		return 0;
	while (n && tmp[n - 1] == ' ')
		n--;
	tmp[n] = '\0';
	char *end;
	errno = 0;
	*v = strtod(tmp, &end);
	if (end == tmp || *end || isnan(*v))
		return 0;
	if (isinf(*v) || (errno == ERANGE && *v != 0))
		return -1;
	return 1;
}

static const struct unit_conv {
	const char *from;
	double factor;
	const char *to;
} unit_convs[] = {
	{ "nsecond", 1, "ns" }, { "ns", 1, "ns" },
	{ "usecond", 1e3, "ns" }, { "us", 1e3, "ns" },
	{ "msecond", 1e6, "ns" }, { "ms", 1e6, "ns" },
	{ "second", 1e9, "ns" }, { "s", 1e9, "ns" },
	{ "byte", 1, "byte" }, { "Kbyte", 1e3, "byte" }, { "Mbyte", 1e6, "byte" },
	{ "Gbyte", 1e9, "byte" }, { "Tbyte", 1e12, "byte" },
	{ "Kibyte", 1024.0, "byte" }, { "Mibyte", 1048576.0, "byte" },
	{ "Gibyte", 1073741824.0, "byte" },
	{ "byte/second", 1, "byte/second" }, { "Kbyte/second", 1e3, "byte/second" },
	{ "Mbyte/second", 1e6, "byte/second" }, { "Gbyte/second", 1e9, "byte/second" },
	{ "Tbyte/second", 1e12, "byte/second" },
	{ "hz", 1, "hz" }, { "Khz", 1e3, "hz" }, { "Mhz", 1e6, "hz" }, { "Ghz", 1e9, "hz" },
};

/* The unit kgate stores for an ncu unit, and the factor to get there. */
static const char *convert_unit(const char *unit, double *factor)
{
	*factor = 1;
	for (size_t i = 0; i < sizeof(unit_convs) / sizeof(unit_convs[0]); i++)
		if (!strcmp(unit, unit_convs[i].from)) {
			*factor = unit_convs[i].factor;
			return unit_convs[i].to;
		}
	return unit;
}

/* (Section Name, Metric Name) of the details page -> raw metric name. */
static const struct {
	const char *section, *name, *metric;
} details_map[] = {
	{ "GPU Speed Of Light Throughput", "Duration", "gpu__time_duration.sum" },
	{ "GPU Speed Of Light Throughput", "Elapsed Cycles", "gpc__cycles_elapsed.max" },
	{ "GPU Speed Of Light Throughput", "SM Active Cycles", "sm__cycles_active.avg" },
	{ "GPU Speed Of Light Throughput", "SM Frequency", "gpc__cycles_elapsed.avg.per_second" },
	{ "GPU Speed Of Light Throughput", "DRAM Frequency", "dram__cycles_elapsed.avg.per_second" },
	{ "GPU Speed Of Light Throughput", "Memory Throughput",
	  "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed" },
	{ "GPU Speed Of Light Throughput", "DRAM Throughput",
	  "dram__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ "GPU Speed Of Light Throughput", "Compute (SM) Throughput",
	  "sm__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ "GPU Speed Of Light Throughput", "L1/TEX Cache Throughput",
	  "l1tex__throughput.avg.pct_of_peak_sustained_active" },
	{ "GPU Speed Of Light Throughput", "L2 Cache Throughput",
	  "lts__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ "Launch Statistics", "Block Size", "launch__block_size" },
	{ "Launch Statistics", "Grid Size", "launch__grid_size" },
	{ "Launch Statistics", "Registers Per Thread", "launch__registers_per_thread" },
	{ "Launch Statistics", "Shared Memory Configuration Size", "launch__shared_mem_config_size" },
	{ "Launch Statistics", "Static Shared Memory Per Block", "launch__shared_mem_per_block_static" },
	{ "Launch Statistics", "Dynamic Shared Memory Per Block", "launch__shared_mem_per_block_dynamic" },
	{ "Launch Statistics", "Driver Shared Memory Per Block", "launch__shared_mem_per_block_driver" },
	{ "Launch Statistics", "Threads", "launch__thread_count" },
	{ "Launch Statistics", "Waves Per SM", "launch__waves_per_multiprocessor" },
	{ "Launch Statistics", "# SMs", "launch__sm_count" },
	{ "Occupancy", "Achieved Occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active" },
	{ "Occupancy", "Theoretical Occupancy", "sm__maximum_warps_per_active_cycle_pct" },
	{ "Occupancy", "Block Limit Registers", "launch__occupancy_limit_registers" },
	{ "Occupancy", "Block Limit Shared Mem", "launch__occupancy_limit_shared_mem" },
	{ "Occupancy", "Block Limit Warps", "launch__occupancy_limit_warps" },
};

/* A raw metric name looks like "unit__counter.rollup". */
static int is_raw_name(const char *s)
{
	if (!strstr(s, "__"))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
			return 0;
	return 1;
}

/* The metric name stored for a details-page row; malloc'd. */
static char *details_metric(const char *section, const char *name)
{
	if (is_raw_name(name))
		return xstrdup(name);
	for (size_t i = 0; i < sizeof(details_map) / sizeof(details_map[0]); i++)
		if (!strcmp(details_map[i].name, name) && !strcmp(details_map[i].section, section))
			return xstrdup(details_map[i].metric);
	return xasprintf("ncu:%s/%s", section, name);
}

/* Raw-page columns that describe the device or the launch's identity, not
 * the kernel's behaviour. */
static int raw_column_skipped(const char *name)
{
	static const char *const prefixes[] = { "device__", "c2clink__", "numa__", "nvlink__",
						 "profiler__", "pmsampling__" };
	static const char *const exact[] = { "launch__context_id", "launch__device_id",
					     "launch__stream_id", "launch__kernel_name",
					     "launch__function_pcs" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i]))
			return 1;
	return !is_raw_name(name);
}

/* "(256, 1, 1)" -> 256. */
/* "(x, y, z)" of whole numbers: 1 with their product, 0 when the field holds
 * no parenthesis (no launch configuration), -1 when it is malformed. */
static int parse_dim3(const char *s, double *v)
{
	double p = 1;
	int n = 0;

	while (*s && *s != '(')
		s++;
	if (*s++ != '(')
		return 0;
	for (;;) {
		char *end;
		while (*s == ' ')
			s++;
		if (*s < '0' || *s > '9')
			return -1;   /* also "nan", "inf", signs */
		errno = 0;
		unsigned long long x = strtoull(s, &end, 10);
		if (errno == ERANGE || x > (1ull << 32))
			return -1;
		p *= (double)x;
		n++;
		s = end;
		while (*s == ' ')
			s++;
		if (*s == ')')
			break;
		if (*s++ != ',' || n == 3)
			return -1;
	}
	*v = p;
	return n == 3 ? 1 : -1;
}

/* ------------------------------------------------------------------ */
/* The two pages                                                       */

enum page { PAGE_NONE, PAGE_DETAILS, PAGE_RAW };

struct cols {
	long id, process, kernel, block, grid, section, mname, munit, mvalue;
	long display_name;
};

static long col_index(struct ncu_csv_reader *rd, const char *name)
{
	for (size_t i = 0; i < rd->nf; i++)
		if (!strcmp(rd->fields[i], name))
			return (long)i;
	return -1;
}

static enum page header_page(struct ncu_csv_reader *rd, struct cols *c)
{
	if (rd->nf < 2 || strcmp(rd->fields[0], "ID") != 0)
		return PAGE_NONE;
	c->id = 0;
	c->process = col_index(rd, "Process Name");
	c->kernel = col_index(rd, "Kernel Name");
	c->block = col_index(rd, "Block Size");
	c->grid = col_index(rd, "Grid Size");
	c->section = col_index(rd, "Section Name");
	c->mname = col_index(rd, "Metric Name");
	c->munit = col_index(rd, "Metric Unit");
	c->mvalue = col_index(rd, "Metric Value");
	c->display_name = col_index(rd, "device__attribute_display_name");
	if (c->kernel < 0)
		return PAGE_NONE;
	if (c->mname >= 0 && c->mvalue >= 0)
		return PAGE_DETAILS;
	return PAGE_RAW;
}

static const char *field(struct ncu_csv_reader *rd, long i)
{
	return i >= 0 && (size_t)i < rd->nf ? rd->fields[i] : NULL;
}

/* Per-launch bookkeeping of the details page: which metrics it gave. */
struct launch {
	char *id;
	long long ordinal;
	double block, grid;
	int has_block, has_grid;
	char **seen;
	size_t nseen;
};

static void launch_reset(struct launch *l)
{
	free(l->id);
	for (size_t i = 0; i < l->nseen; i++)
		free(l->seen[i]);
	free(l->seen);
	memset(l, 0, sizeof(*l));
}

static int launch_seen(struct launch *l, const char *metric, int add)
{
	for (size_t i = 0; i < l->nseen; i++)
		if (!strcmp(l->seen[i], metric))
			return 1;
	if (add) {
		l->seen = xrealloc(l->seen, (l->nseen + 1) * sizeof(*l->seen));
		l->seen[l->nseen++] = xstrdup(metric);
	}
	return 0;
}

/* A raw-page column, classified once per header (skip, det) and once per
 * units row (unit, factor). */
struct rawcol {
	char *name;
	char *ncu_unit;          /* as the units row gives it */
	const char *unit;        /* as stored: a constant or ncu_unit */
	double factor;
	int skip;
	const struct kg_import_metric *m;   /* the sink's, from the first value */
};

struct importer {
	struct kg_import_sink *sink;  /* NULL: only read the header facts, stop at the first launch */
	const char *path;
	size_t kernels;
	size_t line;             /* the record being read */
	char *process;           /* first Process Name */
	char *gpu_name;          /* raw page's device__attribute_display_name */
	int page_seen;
	struct kg_kernel_name kn;   /* the kernel of the row being read (the sink's names) */
	char *kn_raw;               /* its name as ncu printed it */
};

/* The three names of a kernel as ncu prints it, interned by the sink. */
static const struct kg_kernel_name *kernel_names(struct importer *im, const char *kernel_raw)
{
	if (!im->kn_raw || strcmp(im->kn_raw, kernel_raw) != 0) {
		import_sink_kernel(im->sink, kernel_raw, KG_KEY_CANONICAL, &im->kn);
		free(im->kn_raw);
		im->kn_raw = xstrdup(kernel_raw);
	}
	return &im->kn;
}

static int imp_sample(struct importer *im, const struct kg_kernel_name *kn, long long ordinal,
		      const struct kg_import_metric *m, double value)
{
	return import_sink_add(im->sink, "", kn, m, (int64_t)ordinal, value, im->line);
}

static int launch_finish(struct importer *im, struct launch *l)
{
	int rc = KG_EXIT_PASS;

	if (!l->id || !im->sink) {
		launch_reset(l);
		return rc;
	}
	if (l->has_block && !launch_seen(l, "launch__block_size", 0))
		rc = imp_sample(im, &im->kn, l->ordinal,
				import_sink_metric(im->sink, "launch__block_size", ""), l->block);
	if (!rc && l->has_grid && !launch_seen(l, "launch__grid_size", 0))
		rc = imp_sample(im, &im->kn, l->ordinal,
				import_sink_metric(im->sink, "launch__grid_size", ""), l->grid);
	launch_reset(l);
	return rc;
}

static int bad_row(struct importer *im, struct ncu_csv_reader *rd, const char *what)
{
	kg_error("%s:%zu: %s", im->path, rd->line, what);
	return KG_EXIT_USAGE;
}

/* A value that is a number but not a finite one, refused with its field. */
static int not_finite(struct importer *im, struct ncu_csv_reader *rd, const char *metric,
		      const char *id, const char *value)
{
	kg_error("%s:%zu: %s of launch %s is '%s', not a finite number", im->path, rd->line,
		 metric, id, value);
	return KG_EXIT_USAGE;
}

static int valid_id(const char *s)
{
	if (!s || !*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static void rawcols_free(struct rawcol *rc, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(rc[i].name);
		free(rc[i].ncu_unit);
	}
	free(rc);
}

/* The raw page's units row: each column's stored unit and factor. */
static void rawcols_units(struct rawcol *col, size_t n, struct ncu_csv_reader *rd)
{
	for (size_t i = 0; i < n; i++) {
		free(col[i].ncu_unit);
		col[i].ncu_unit = xstrdup(rd->fields[i]);
		col[i].unit = convert_unit(col[i].ncu_unit, &col[i].factor);
		col[i].m = NULL;
	}
}

static int import_file(struct importer *im)
{
	struct ncu_csv_reader rd = { 0 };
	struct cols c = { 0 };
	struct launch l = { 0 };
	enum page page = PAGE_NONE;
	struct rawcol *col = NULL;   /* raw page: its columns */
	size_t ncols = 0;
	int rc = KG_EXIT_PASS, n;
	FILE *fp = fopen(im->path, "r");

	if (!fp) {
		kg_error("cannot open '%s': %s", im->path, strerror(errno));
		return KG_EXIT_USAGE;
	}
	while ((n = ncu_csv_read_record(fp, &rd)) > 0) {
		im->line = rd.line;
		if (!rd.quoted_first)
			continue;       /* program output, ==PROF== lines */
		struct cols hc;
		enum page hp = header_page(&rd, &hc);
		if (hp != PAGE_NONE) {
			c = hc;     /* a row that only looks like a header changes nothing */
			if ((rc = launch_finish(im, &l)))
				break;
			page = hp;
			im->page_seen = 1;
			rawcols_free(col, col ? ncols : 0);
			col = NULL;
			ncols = rd.nf;
			if (page == PAGE_RAW) {
				/* classify the header's columns; the units row comes next */
				col = xcalloc(ncols, sizeof(*col));
				for (size_t i = 0; i < ncols; i++) {
					col[i].name = xstrdup(rd.fields[i]);
					col[i].skip = raw_column_skipped(col[i].name);
					col[i].ncu_unit = xstrdup("");
					col[i].unit = col[i].ncu_unit;
					col[i].factor = 1;
				}
			}
			continue;
		}
		if (page == PAGE_NONE)
			continue;
		const char *id = field(&rd, c.id);
		if (page == PAGE_RAW && id && !*id && rd.nf == ncols) {
			rawcols_units(col, ncols, &rd);   /* the units row */
			continue;
		}
		if (!valid_id(id))
			continue;   /* a ragged rule row or a row ncu adds for notes */
		const char *kernel = field(&rd, c.kernel);
		if (!kernel || !*kernel)
			continue;
		if (!im->process && field(&rd, c.process))
			im->process = xstrdup(field(&rd, c.process));
		if (page == PAGE_RAW && rd.nf != ncols) {
			rc = bad_row(im, &rd, "raw page row has a different number of fields "
					      "than its header");
			break;
		}
		if (page == PAGE_RAW && c.display_name >= 0 && !im->gpu_name &&
		    rd.fields[c.display_name][0])
			im->gpu_name = xstrdup(rd.fields[c.display_name]);
		if (!im->sink) {
			/* only the header facts: they are on the first launch row */
			im->kernels++;
			if ((c.process < 0 || im->process) && (c.display_name < 0 || im->gpu_name))
				break;
			continue;
		}
		if (page == PAGE_DETAILS) {
			const char *mname = field(&rd, c.mname), *mval = field(&rd, c.mvalue);
			if (!mname || !*mname || !mval)
				continue;   /* rule rows: fewer fields or no metric */
			if (!l.id || strcmp(l.id, id) != 0) {
				if ((rc = launch_finish(im, &l)))
					break;
				l.id = xstrdup(id);
				l.ordinal = strtoll(id, NULL, 10);
				kernel_names(im, kernel);
				const char *bs = field(&rd, c.block) ? field(&rd, c.block) : "";
				const char *gs = field(&rd, c.grid) ? field(&rd, c.grid) : "";
				l.has_block = parse_dim3(bs, &l.block);
				l.has_grid = parse_dim3(gs, &l.grid);
				im->kernels++;
				if (l.has_block < 0 || l.has_grid < 0) {
					char *what = xasprintf("%s '%s' is not three whole numbers "
							       "\"(x, y, z)\"",
							       l.has_block < 0 ? "Block Size" : "Grid Size",
							       l.has_block < 0 ? bs : gs);
					rc = bad_row(im, &rd, what);
					free(what);
					break;
				}
			}
			double v, f;
			int num = parse_number(mval, &v);
			if (num == 0)
				continue;   /* "n/a", text values */
			const char *section = field(&rd, c.section);
			char *metric = details_metric(section ? section : "", mname);
			const char *unit = convert_unit(field(&rd, c.munit) ? field(&rd, c.munit) : "", &f);
			if (num < 0 || !isfinite(v * f))
				rc = not_finite(im, &rd, metric, id, mval);
			else if (!launch_seen(&l, metric, 1))
				rc = imp_sample(im, kernel_names(im, kernel), l.ordinal,
						import_sink_metric(im->sink, metric, unit), v * f);
			free(metric);
			if (rc)
				break;
		} else {
			im->kernels++;
			const struct kg_kernel_name *kn = kernel_names(im, kernel);
			long long ordinal = strtoll(id, NULL, 10);
			for (size_t i = 0; i < ncols && !rc; i++) {
				double v;
				int num;
				if (col[i].skip || !(num = parse_number(rd.fields[i], &v)))
					continue;
				if (num < 0 || !isfinite(v * col[i].factor))
					rc = not_finite(im, &rd, col[i].name, id, rd.fields[i]);
				else {
					if (!col[i].m)
						col[i].m = import_sink_metric(im->sink, col[i].name,
									      col[i].unit);
					rc = imp_sample(im, kn, ordinal, col[i].m, v * col[i].factor);
				}
			}
			if (rc)
				break;
		}
	}
	if (!rc && n < 0)
		rc = bad_row(im, &rd, "unterminated quoted field or a record over 64 MiB");
	if (!rc)
		rc = launch_finish(im, &l);
	else
		launch_reset(&l);
	if (!rc && !im->page_seen)
		rc = bad_row(im, &rd, "no ncu CSV table found (expected a header row starting "
				      "with \"ID\" and holding \"Kernel Name\")");
	if (!rc && im->kernels == 0)
		rc = bad_row(im, &rd, "the ncu CSV export holds no kernel launches");
	rawcols_free(col, col ? ncols : 0);
	ncu_csv_reader_free(&rd);
	fclose(fp);
	free(im->kn_raw);
	im->kn_raw = NULL;
	return rc;
}

int ncu_csv_read_info(const char *path, struct kg_import_info *info)
{
	struct importer im = { 0 };
	int rc;

	im.path = path;
	rc = import_file(&im);
	if (rc == KG_EXIT_PASS) {
		if (im.gpu_name) {
			free(info->run.gpu_name);
			info->run.gpu_name = im.gpu_name;
			im.gpu_name = NULL;
		}
		if (!info->run.collector)
			info->run.collector = xstrdup("ncu");
		if (!info->run.source)
			info->run.source = xstrdup("ncu-csv");
		info->benchmark = im.process;
		im.process = NULL;
	}
	free(im.gpu_name);
	free(im.process);
	return rc;
}

int ncu_csv_parse(struct kg_import_sink *sink, const char *path)
{
	struct importer im = { 0 };
	int rc;

	im.sink = sink;
	im.path = path;
	rc = import_file(&im);
	import_sink_stats(sink)->kernels = im.kernels;
	free(im.gpu_name);
	free(im.process);
	return rc;
}

int ncu_csv_read_header(const char *path, struct kg_run_info *run)
{
	struct kg_import_info info = { 0 };
	int rc = ncu_csv_read_info(path, &info);

	if (rc == KG_EXIT_PASS) {
		if (info.run.gpu_name) {
			free(run->gpu_name);
			run->gpu_name = info.run.gpu_name;
			info.run.gpu_name = NULL;
		}
		if (!run->collector) {
			run->collector = info.run.collector;
			info.run.collector = NULL;
		}
		if (!run->source) {
			run->source = info.run.source;
			info.run.source = NULL;
		}
	}
	import_info_free(&info);
	return rc;
}

char *ncu_csv_process_name(const char *path)
{
	struct kg_import_info info = { 0 };
	char *name = NULL;

	if (ncu_csv_read_info(path, &info) == KG_EXIT_PASS) {
		name = info.benchmark;
		info.benchmark = NULL;
	}
	import_info_free(&info);
	return name;
}

int ncu_csv_ingest_repeat(struct kg_store *st, const char *path, const char *benchmark,
			  int repeat, size_t *kernels, size_t *samples)
{
	struct kg_import_stats stats;
	int rc = import_ingest(import_find("ncu-csv"), st, path, benchmark, repeat, &stats);

	if (kernels)
		*kernels = stats.kernels;
	if (samples)
		*samples = stats.samples;
	return rc;
}

int ncu_csv_ingest(struct kg_store *st, const char *path, const char *benchmark,
		   size_t *kernels, size_t *samples)
{
	return ncu_csv_ingest_repeat(st, path, benchmark, 0, kernels, samples);
}
