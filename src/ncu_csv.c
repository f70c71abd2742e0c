/*
 * ncu_csv.c: importing Nsight Compute CSV exports as samples of a run
 * (ncu_csv.h).  Owns the RFC 4180 record reader, the recognition of the two
 * pages ncu exports (details: one row per launch and metric; raw: one
 * column per metric, a units row, one row per launch), the mapping of
 * details-page labels and old raw names of every release since 2019 to
 * today's raw metric names, the reading of ncu's numbers (the C locale's;
 * another locale's refused), ncu's own ==ERROR== and ==WARNING== lines, and
 * the GPU an export names (device name, compute capability).  Units go
 * through unit.c to the one unit stored per metric.
 *
 * Lines that do not begin with a quote (the program's own output, ncu's
 * ==PROF==, ==WARNING== and ==ERROR== lines) are no table rows: ncu quotes
 * every field.
 *
 * One pass over the file stores it: what the header functions need (the
 * process and GPU names) is on the first launch row, so they stop there;
 * each raw-page column is classified (skipped or not, its unit and factor,
 * deterministic or not) once per header and units row, each details-page
 * (section, label, unit) once per export, not once per cell.
 */
#include "kgate/ncu_csv.h"
#include "kgate/escape.h"
#include "kgate/import.h"
#include "kgate/unit.h"
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

/* The reader's input: fp read in blocks of IN_BLOCK bytes (the FILE's own
 * buffer is bypassed, so fp is read through one reader only). */
#define IN_BLOCK (256u << 10)

/* The next byte of input, EOF at the end (or on a read error). */
static inline int rd_getc(struct ncu_csv_reader *rd, FILE *fp)
{
	if (rd->in_pos == rd->in_len) {
		if (!rd->in)
			rd->in = xmalloc(IN_BLOCK);
		rd->in_pos = 0;
		rd->in_len = fread(rd->in, 1, IN_BLOCK, fp);
		if (!rd->in_len)
			return EOF;
	}
	return rd->in[rd->in_pos++];
}

/* The bytes of the input before the next byte that stop[] marks, up to
 * the end of the buffered block, appended to the field.  The stopping byte
 * itself stays, for the caller to read (a newline is one: it is counted). */
static void rd_span(struct ncu_csv_reader *rd, const unsigned char *stop)
{
	size_t i = rd->in_pos, n = rd->in_len;
	const unsigned char *in = rd->in;

	while (i < n && !stop[in[i]])
		i++;
	size_t len = i - rd->in_pos;
	if (!len || !in)
		return;
	if (!rd->buf || rd->len + len + 2 > rd->cap) {
		while (rd->len + len + 2 > rd->cap)
			rd->cap = rd->cap ? rd->cap * 2 : 1024;
		rd->buf = xrealloc(rd->buf, rd->cap);
	}
	memcpy(rd->buf + rd->len, in + rd->in_pos, len);
	rd->len += len;
	rd->in_pos = i;
}

/* Bytes that end a span: in a quoted field the quote and the newline (which
 * is kept but counted); on a line that is no record, the newline and CR. */
static unsigned char stop_quoted[256], stop_line[256];

static void rd_tables(void)
{
	if (!stop_quoted['"']) {
		stop_quoted['"'] = stop_quoted['\n'] = 1;
		stop_line['\n'] = stop_line['\r'] = 1;
	}
}

int ncu_csv_read_record(FILE *fp, struct ncu_csv_reader *rd)
{
	enum { FIELD_START, UNQUOTED, QUOTED, QUOTE_IN_QUOTED } state = FIELD_START;
	size_t start = 0;
	int c;

	rd_tables();
	if (rd->in_fp != fp) {
		rd->in_fp = fp;
		rd->in_pos = rd->in_len = 0;
	}
	rd->len = rd->nf = 0;
	if (!rd->next_line)
		rd->next_line = 1;
	rd->line = rd->next_line;
	c = rd_getc(rd, fp);
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
			rd_span(rd, stop_line);
			c = rd_getc(rd, fp);
		}
		rd->next_line++;
		rd_end_field(rd, 0);
		goto done;
	}
	for (;; c = rd_getc(rd, fp)) {
		/* the text and each field's offset and pointer count */
		if (rd->len + rd->nf * (sizeof(*rd->off) + sizeof(*rd->fields)) > MAX_RECORD)
			return -1;
		switch (state) {
		case FIELD_START:
			start = rd->len;
			if (c == '"') {
				state = QUOTED;
				rd_span(rd, stop_quoted);
				break;
			}
			state = UNQUOTED;
			/* fall through */
		case UNQUOTED:
		unquoted:
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
			if (c == '"') {
				state = QUOTE_IN_QUOTED;
			} else {
				if (c == '\n')
					rd->next_line++;
				rd_addc(rd, c);
				rd_span(rd, stop_quoted);
			}
			break;
		case QUOTE_IN_QUOTED:
			if (c == '"') {
				rd_addc(rd, '"');
				state = QUOTED;
				rd_span(rd, stop_quoted);
			} else if (c != '\r') {
				/* after the closing quote the field or the record ends
				 * as after unquoted text; text there is kept, as most
				 * readers do */
				state = UNQUOTED;
				goto unquoted;
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
	free(rd->in);
	memset(rd, 0, sizeof(*rd));
}

/* ------------------------------------------------------------------ */
/* Values and units                                                    */

/* What parse_number() makes of a field. */
enum { NUM_TEXT = 0, NUM_OK = 1, NUM_INF = -1, NUM_LOCALE = -2 };

/* A space that a locale groups digits with: ' ', U+00A0, U+202F (UTF-8). */
static size_t group_space(const char *s)
{
	if (*s == ' ')
		return 1;
	if ((unsigned char)s[0] == 0xc2 && (unsigned char)s[1] == 0xa0)
		return 2;
	if ((unsigned char)s[0] == 0xe2 && (unsigned char)s[1] == 0x80 && (unsigned char)s[2] == 0xaf)
		return 3;
	return 0;
}

/*
 * A field as ncu writes numbers under the C locale: "1,234.56" -> 1234.56
 * (commas group whole digits by three; ncu writes fractions of two digits).
 * NUM_TEXT when the field is not a number ("n/a", "", and "nan", which ncu
 * writes for a derived metric it cannot compute, as derived_tempMetric4 of
 * real H200 raw exports); NUM_INF when it is an infinite one ("inf",
 * "1e999"): the gate cannot judge it, so the export is refused; NUM_LOCALE
 * when it is written in another locale's format ("65,77", "1.179.968",
 * "117.344", "1 179 968"), which read as C would be off by 100x or 1000x.
 */
static int parse_number(const char *s, double *v)
{
	char tmp[128];
	size_t n = 0, digits = 0, group = 0, frac = 0;
	int commas = 0, dots = 0, spaces = 0, in_exp = 0, bad_group = 0;
	const char *p;

	while (*s == ' ')
		s++;
	if (!*s)
		return NUM_TEXT;
	p = s;
	if (*p == '-' || *p == '+')
		tmp[n++] = *p++;
	if (!((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9'))) {
		/* text, "nan", "inf" */
		char *end;
		errno = 0;
		*v = strtod(s, &end);
		while (*end == ' ')
			end++;
		if (end == s || *end || isnan(*v))
			return NUM_TEXT;
		return isinf(*v) ? NUM_INF : NUM_OK;
	}
	for (; *p; p++) {
		size_t sp;
		if (n + 1 >= sizeof(tmp))
			return NUM_TEXT;
		if (*p >= '0' && *p <= '9') {
			tmp[n++] = *p;
			if (in_exp)
				continue;
			if (dots)
				frac++;
			else {
				digits++;
				group++;
			}
		} else if (*p == ',' && !in_exp) {
			/* C: between whole digits, after one to three, then groups of three */
			if (dots || !group || (commas ? group != 3 : group > 3))
				bad_group = 1;
			commas++;
			group = 0;
		} else if (*p == '.' && !in_exp) {
			if (dots++ || (commas && group != 3))
				bad_group = 1;
			tmp[n++] = '.';
		} else if ((*p == 'e' || *p == 'E') && !in_exp && !commas && digits) {
			in_exp = 1;
			tmp[n++] = *p;
			if (p[1] == '-' || p[1] == '+')
				tmp[n++] = *++p;
		} else if ((sp = group_space(p)) && !in_exp && !dots && p[sp] >= '0' && p[sp] <= '9') {
			spaces++;   /* "1 179 968": grouped by spaces */
			p += sp - 1;
			group = 0;
		} else if (*p == ' ') {
			while (*p == ' ')
				p++;
			if (*p)
				return NUM_TEXT;
			break;
		} else {
			return NUM_TEXT;   /* "12 ms", "(256, 1, 1)", "1.5x" */
		}
	}
	if (commas && !dots && group != 3)
		bad_group = 1;      /* "65,77", "1,5" */
	/* "117.344" or "1.179.968": '.' grouping; ncu's C fractions have two
	 * digits, so three after a non-zero whole part are a thousands group */
	if (bad_group || spaces || dots > 1 ||
	    (dots == 1 && !commas && frac == 3 && !in_exp && digits <= 3 &&
	     !(digits == 1 && tmp[n - 5] == '0')))
		return NUM_LOCALE;
	tmp[n] = '\0';
	char *end;
	errno = 0;
	*v = strtod(tmp, &end);
	if (end == tmp || *end || isnan(*v))
		return NUM_TEXT;
	if (isinf(*v) || (errno == ERANGE && *v != 0))
		return NUM_INF;
	return NUM_OK;
}

/*
 * (Section Name, Metric Name) of the details page -> raw metric name, for
 * the labels of ncu's sections of 2019 to 2025 ("GPU Speed Of Light" and
 * its labels "SM [%]", "Memory [%]", "SOL FB" ..., later "GPU Speed Of
 * Light Throughput" with "Compute (SM) Throughput" ...).  Where a 2025
 * details and raw page of one launch exist (tests/fixtures/h200/ncu) their
 * values agree; the older labels are those metrics' labels in the section
 * files of their releases.  A label not listed is stored as
 * "ncu:Section/Label".
 */
#define SOL "GPU Speed Of Light Throughput"
#define MWA "Memory Workload Analysis"
#define CWA "Compute Workload Analysis"
#define IS "Instruction Statistics"
#define WSS "Warp State Statistics"
#define LS "Launch Statistics"
#define SS "Scheduler Statistics"
#define OCC "Occupancy"
static const struct {
	const char *section, *name, *metric;
} details_map[] = {
	{ SOL, "Duration", "gpu__time_duration.sum" },
	{ SOL, "Elapsed Cycles", "gpc__cycles_elapsed.max" },
	{ SOL, "SM Active Cycles", "sm__cycles_active.avg" },
	{ SOL, "SM Frequency", "gpc__cycles_elapsed.avg.per_second" },
	{ SOL, "DRAM Frequency", "dram__cycles_elapsed.avg.per_second" },
	{ SOL, "Memory Frequency", "dram__cycles_elapsed.avg.per_second" },
	{ SOL, "Memory Throughput", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed" },
	{ SOL, "Memory [%]", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed" },
	{ SOL, "SOL Memory", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed" },
	{ SOL, "DRAM Throughput", "dram__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ SOL, "DRAM [%]", "dram__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ SOL, "SOL DRAM", "dram__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ SOL, "SOL FB", "dram__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ SOL, "Compute (SM) Throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ SOL, "Compute (SM) [%]", "sm__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ SOL, "SM [%]", "sm__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ SOL, "SOL SM", "sm__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ SOL, "L1/TEX Cache Throughput", "l1tex__throughput.avg.pct_of_peak_sustained_active" },
	{ SOL, "L1/TEX Cache [%]", "l1tex__throughput.avg.pct_of_peak_sustained_active" },
	{ SOL, "SOL L1/TEX Cache", "l1tex__throughput.avg.pct_of_peak_sustained_active" },
	{ SOL, "SOL TEX", "l1tex__throughput.avg.pct_of_peak_sustained_active" },
	{ SOL, "L2 Cache Throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ SOL, "L2 Cache [%]", "lts__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ SOL, "SOL L2 Cache", "lts__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ SOL, "SOL L2", "lts__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ MWA, "Memory Throughput", "dram__bytes.sum.per_second" },
	{ MWA, "Mem Busy", "gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed" },
	{ MWA, "Max Bandwidth", "gpu__compute_memory_request_throughput.avg.pct_of_peak_sustained_elapsed" },
	{ MWA, "L2 Hit Rate", "lts__t_sector_hit_rate.pct" },
	{ MWA, "L1/TEX Hit Rate", "l1tex__t_sector_hit_rate.pct" },
	{ MWA, "L1 Hit Rate", "l1tex__t_sector_hit_rate.pct" },
	{ CWA, "Executed Ipc Elapsed", "sm__inst_executed.avg.per_cycle_elapsed" },
	{ CWA, "Executed Ipc Active", "sm__inst_executed.avg.per_cycle_active" },
	{ CWA, "Issued Ipc Active", "sm__inst_issued.avg.per_cycle_active" },
	{ IS, "Executed Instructions", "smsp__inst_executed.sum" },
	{ IS, "Issued Instructions", "smsp__inst_issued.sum" },
	{ IS, "Avg. Executed Instructions Per Scheduler", "smsp__inst_executed.avg" },
	{ IS, "Avg. Issued Instructions Per Scheduler", "smsp__inst_issued.avg" },
	{ SS, "Issued Warp Per Scheduler", "smsp__issue_active.avg.per_cycle_active" },
	{ WSS, "Warp Cycles Per Issued Instruction", "smsp__average_warp_latency_per_inst_issued.ratio" },
	{ WSS, "Warp Cycles Per Executed Instruction",
	  "smsp__average_warps_active_per_inst_executed.ratio" },
	{ LS, "Block Size", "launch__block_size" },
	{ LS, "Grid Size", "launch__grid_size" },
	{ LS, "Registers Per Thread", "launch__registers_per_thread" },
	{ LS, "Shared Memory Configuration Size", "launch__shared_mem_config_size" },
	{ LS, "Static Shared Memory Per Block", "launch__shared_mem_per_block_static" },
	{ LS, "Dynamic Shared Memory Per Block", "launch__shared_mem_per_block_dynamic" },
	{ LS, "Driver Shared Memory Per Block", "launch__shared_mem_per_block_driver" },
	{ LS, "Threads", "launch__thread_count" },
	{ LS, "Waves Per SM", "launch__waves_per_multiprocessor" },
	{ LS, "# SMs", "launch__sm_count" },
	{ OCC, "Achieved Occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active" },
	{ OCC, "Achieved Active Warps Per SM", "sm__warps_active.avg.per_cycle_active" },
	{ OCC, "Theoretical Active Warps per SM", "sm__maximum_warps_avg_per_active_cycle" },
	{ OCC, "Theoretical Occupancy", "sm__maximum_warps_per_active_cycle_pct" },
	{ OCC, "Block Limit Registers", "launch__occupancy_limit_registers" },
	{ OCC, "Block Limit Shared Mem", "launch__occupancy_limit_shared_mem" },
	{ OCC, "Block Limit Warps", "launch__occupancy_limit_warps" },
	{ OCC, "Block Limit SM", "launch__occupancy_limit_blocks" },
};

/* Units ncu renamed between releases for one label: the old spelling is
 * read as the new one (2020: "warp/cycle", 2023 on: "warp"). */
static const struct {
	const char *section, *name, *old, *now;
} unit_respell[] = {
	{ "Occupancy", "Theoretical Active Warps per SM", "warp/cycle", "warp" },
};

static const char *details_unit(const char *section, const char *name, const char *unit)
{
	for (size_t i = 0; i < sizeof(unit_respell) / sizeof(unit_respell[0]); i++)
		if (!strcmp(unit, unit_respell[i].old) && !strcmp(name, unit_respell[i].name) &&
		    !strcmp(section, unit_respell[i].section))
			return unit_respell[i].now;
	return unit;
}

/* The section as the map names it: 2019-2021's "GPU Speed Of Light" is
 * today's "GPU Speed Of Light Throughput". */
static const char *section_alias(const char *section)
{
	return !strcmp(section, "GPU Speed Of Light") ? SOL : section;
}

/* Raw-page names of older releases -> today's: 2019-2020 exports name the
 * duration "gpu__time_duration", without the ".sum" rollup. */
static const char *raw_alias(const char *name)
{
	return !strcmp(name, "gpu__time_duration") ? "gpu__time_duration.sum" : name;
}

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
		return xstrdup(raw_alias(name));
	section = section_alias(section);
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
 * no parenthesis (no launch configuration) or a zero (ncu prints "(0, 0, 0)"
 * for a launch it could not profile, one that trapped: no launch has an
 * empty grid), -1 when it is malformed. */
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
	return n != 3 ? -1 : p > 0;
}

/* ------------------------------------------------------------------ */
/* The two pages                                                       */

enum page { PAGE_NONE, PAGE_DETAILS, PAGE_RAW };

struct cols {
	long id, process, kernel, block, grid, section, mname, munit, mvalue;
	long display_name, cc;
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
	c->cc = col_index(rd, "CC");
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

/* Per-launch bookkeeping of the details page: which metrics it gave (the
 * sink's interned metrics, compared by address). */
struct launch {
	char *id;
	long long ordinal;
	double block, grid;
	int has_block, has_grid;
	const struct kg_import_metric **seen;
	size_t nseen, cap;
};

static void launch_reset(struct launch *l)
{
	free(l->id);
	free(l->seen);
	memset(l, 0, sizeof(*l));
}

static int launch_seen(struct launch *l, const struct kg_import_metric *m, int add)
{
	for (size_t i = 0; i < l->nseen; i++)
		if (l->seen[i] == m)
			return 1;
	if (add) {
		if (l->nseen == l->cap) {
			l->cap = l->cap ? l->cap * 2 : 64;
			l->seen = xrealloc(l->seen, l->cap * sizeof(*l->seen));
		}
		l->seen[l->nseen++] = m;
	}
	return 0;
}

/* A raw-page column, classified once per header (name, skip) and once per
 * units row (unit, factor, metric). */
struct rawcol {
	char *name;
	char unit[KG_UNIT_MAX];  /* as stored */
	double factor;
	int skip;
	const struct kg_import_metric *m;   /* the sink's, from the first value */
};

/* A (section, label, unit) of the details page, resolved once: its metric
 * and the factor to the stored unit. */
struct drow {
	char *key;
	const struct kg_import_metric *m;
	double factor;
	char unit[KG_UNIT_MAX];
};

#define MAX_WARNINGS 20

struct importer {
	struct kg_import_sink *sink;  /* NULL: only read the header facts, stop at the first launch */
	const char *path;
	size_t kernels;
	size_t line;             /* the record being read */
	char *process;           /* first Process Name */
	char *gpu_name;          /* raw page's device__attribute_display_name */
	char *cc;                /* the CC column of the first launch ("9.0") */
	int page_seen;
	int allow_partial;       /* --allow-partial: ==ERROR== lines only warn */
	struct kg_kernel_name kn;   /* the kernel of the row being read (the sink's names) */
	char *kn_raw;               /* its name as ncu printed it */
	/* ncu's own lines */
	char *err_first;         /* the first ==ERROR== line, from its marker */
	size_t err_line, nerr, nwarn;
	int perm;                /* one of them is ERR_NVGPUCTRPERM */
	/* the details page's rows by (section, label, unit) */
	struct drow **drows;
	size_t dcap, dn;
	struct kg_buf key;
	/* the details page's metrics (names with "__") seen with "n/a": warned
	 * of at the end unless a launch gave them a number */
	struct novalue {
		char *name;
		int number;
	} *nv;
	size_t nnv;
};

#define MAX_NOVALUE 64

/* A details-page metric's value was text (number 0) or a number (1). */
static void novalue_note(struct importer *im, const char *name, int number)
{
	if (!strstr(name, "__"))
		return;         /* a section's label ("Duration"), not a metric's name */
	for (size_t i = 0; i < im->nnv; i++)
		if (!strcmp(im->nv[i].name, name)) {
			im->nv[i].number |= number;
			return;
		}
	if (number || im->nnv == MAX_NOVALUE)
		return;
	if (im->nnv % 8 == 0)
		im->nv = xrealloc(im->nv, (im->nnv + 8) * sizeof(*im->nv));
	im->nv[im->nnv++] = (struct novalue){ xstrdup(name), 0 };
}

/* Metrics of the details page that ncu printed no value for in any launch
 * (it prints "n/a" for a name it does not know on the GPU), which are
 * therefore not stored.  (The raw page is left alone: its default columns
 * hold "n/a" in every launch for counters a kernel does not use.) */
static void novalue_warn(struct importer *im)
{
	for (size_t i = 0; i < im->nnv; i++)
		if (!im->nv[i].number)
			kg_warn("%s: ncu printed no value for metric '%s' in any launch (\"n/a\"): not "
				"stored (a name ncu does not know for this GPU? 'ncu --query-metrics' "
				"lists the ones it does)", im->path, im->nv[i].name);
}

static void novalue_free(struct importer *im)
{
	for (size_t i = 0; i < im->nnv; i++)
		free(im->nv[i].name);
	free(im->nv);
	im->nv = NULL;
	im->nnv = 0;
}

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
	const struct kg_import_metric *bm = import_sink_metric(im->sink, "launch__block_size", ""),
				      *gm = import_sink_metric(im->sink, "launch__grid_size", "");
	if (l->has_block && !launch_seen(l, bm, 0))
		rc = imp_sample(im, &im->kn, l->ordinal, bm, l->block);
	if (!rc && l->has_grid && !launch_seen(l, gm, 0))
		rc = imp_sample(im, &im->kn, l->ordinal, gm, l->grid);
	launch_reset(l);
	return rc;
}

static int bad_row(struct importer *im, struct ncu_csv_reader *rd, const char *what)
{
	kg_error("%s:%zu: %s", im->path, rd->line, what);
	return KG_EXIT_USAGE;
}

/* A value that is a number but not a finite one, or one written in another
 * locale's format, refused with its field. */
static int bad_number(struct importer *im, struct ncu_csv_reader *rd, const char *metric,
		      const char *id, const char *value, int num)
{
	char *v = escape_text_dup(value);

	if (num == NUM_LOCALE)
		kg_error("%s:%zu: %s of launch %s is '%s': a number written in a locale's format "
			 "(a decimal comma, or '.' or spaces between thousands), which read as "
			 "ncu's C-locale format would be 100 or 1000 times off; export it again "
			 "under the C locale: LC_ALL=C ncu ... --csv", im->path, rd->line, metric,
			 id, v);
	else
		kg_error("%s:%zu: %s of launch %s is '%s', not a finite number", im->path,
			 rd->line, metric, id, v);
	free(v);
	return KG_EXIT_USAGE;
}

/* One metric given in two units that are not the same quantity. */
static int unit_clash(struct importer *im, const char *metric, const char *unit,
		      const char *ncu_unit, const char *before)
{
	char *u = escape_text_dup(ncu_unit);

	kg_error("%s:%zu: %s is given in '%s' (%s) here but in '%s' earlier in this export; "
		 "one metric is stored in one unit", im->path, im->line, metric, u,
		 unit[0] ? unit : "no unit", before);
	free(u);
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
	for (size_t i = 0; i < n; i++)
		free(rc[i].name);
	free(rc);
}

/* The raw page's units row: each column's stored unit and factor. */
static void rawcols_units(struct rawcol *col, size_t n, struct ncu_csv_reader *rd)
{
	for (size_t i = 0; i < n; i++) {
		unit_canonical(rd->fields[i], col[i].unit, &col[i].factor);
		col[i].m = NULL;
	}
}

static size_t key_hash(const char *s)
{
	size_t h = 5381;
	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

static size_t drow_hash(const void *slot, const void *arg)
{
	(void)arg;
	return key_hash((*(struct drow *const *)slot)->key);
}

/* The details row of (section, label, unit), resolved on its first
 * appearance; NULL after printing why (a unit clash). */
static struct drow *details_row(struct importer *im, const char *section, const char *name,
				const char *unit)
{
	buf_reset(&im->key);
	buf_adds(&im->key, section);
	buf_addc(&im->key, '\x1f');
	buf_adds(&im->key, name);
	buf_addc(&im->key, '\x1f');
	buf_adds(&im->key, unit);
	if ((im->dn + 1) * 2 > im->dcap) {
		static struct drow *const none;
		size_t cap = im->dcap ? im->dcap * 2 : 256;
		im->drows = kg_table_grow(im->drows, im->dcap, cap, sizeof(*im->drows), &none,
					  drow_hash, NULL);
		im->dcap = cap;
	}
	size_t i = key_hash(im->key.s) & (im->dcap - 1);
	while (im->drows[i] && strcmp(im->drows[i]->key, im->key.s) != 0)
		i = (i + 1) & (im->dcap - 1);
	if (im->drows[i])
		return im->drows[i];

	struct drow *d = xcalloc(1, sizeof(*d));
	char *metric = details_metric(section, name);
	unit_canonical(details_unit(section, name, unit), d->unit, &d->factor);
	d->m = import_sink_metric(im->sink, metric, d->unit);
	if (!unit_agrees(d->m->unit, d->unit)) {
		unit_clash(im, metric, d->unit, unit, d->m->unit);
		free(metric);
		free(d);
		return NULL;
	}
	free(metric);
	d->key = xstrdup(im->key.s);
	im->drows[i] = d;
	im->dn++;
	return d;
}

static void drows_free(struct importer *im)
{
	for (size_t i = 0; i < im->dcap; i++)
		if (im->drows[i]) {
			free(im->drows[i]->key);
			free(im->drows[i]);
		}
	free(im->drows);
	im->drows = NULL;
	im->dcap = im->dn = 0;
	buf_free(&im->key);
}

/* A line of ncu's own (==ERROR==, ==WARNING==) among the program's output. */
static void ncu_line(struct importer *im, const char *line, size_t lineno)
{
	const char *e = strstr(line, "==ERROR==");

	if (e) {
		if (!im->nerr++) {
			im->err_first = escape_text_dup(e);
			if (strlen(im->err_first) > 400)
				strcpy(im->err_first + 396, " ...");
			im->err_line = lineno;
		}
		if (strstr(e, "ERR_NVGPUCTRPERM"))
			im->perm = 1;
	} else if ((e = strstr(line, "==WARNING==")) && im->sink) {
		if (im->nwarn++ < MAX_WARNINGS) {
			char *w = escape_text_dup(e);
			kg_warn("%s:%zu: ncu says: %s", im->path, lineno, w);
			free(w);
		}
	}
}

/* The export's ==ERROR== lines: refused, or (--allow-partial, with a table)
 * a warning on the import's pass.  0 to go on, else an exit status. */
static int ncu_errors(struct importer *im)
{
	struct kg_buf more = KG_BUF_INIT;

	if (im->nerr > 1)
		buf_printf(&more, " (and %zu more ==ERROR== line%s)", im->nerr - 1,
			   im->nerr > 2 ? "s" : "");
	else
		buf_adds(&more, "");
	if (im->allow_partial && im->page_seen) {
		if (im->sink)
			kg_warn("%s:%zu: ncu reported an error: \"%s\"%s; storing what the export holds "
				"(--allow-partial): launches may be missing", im->path, im->err_line,
				im->err_first, more.s);
		buf_free(&more);
		return KG_EXIT_PASS;
	}
	if (im->perm)
		kg_error("%s:%zu: ncu could not profile: \"%s\"%s.  ERR_NVGPUCTRPERM: this user may "
			 "not read the GPU's performance counters.  Run ncu as root, or let every "
			 "user profile: the nvidia module option NVreg_RestrictProfilingToAdminUsers=0 "
			 "(a line 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in a file of "
			 "/etc/modprobe.d/, then reload the module or reboot; in a container, the "
			 "host's setting counts); see https://developer.nvidia.com/ERR_NVGPUCTRPERM.  "
			 "ncu's --clock-control none does not avoid it: the counters, not the clocks, "
			 "need the permission", im->path, im->err_line, im->err_first, more.s);
	else if (!im->page_seen)
		kg_error("%s:%zu: ncu failed: \"%s\"%s; the output holds no CSV table to store",
			 im->path, im->err_line, im->err_first, more.s);
	else
		kg_error("%s:%zu: ncu reported an error: \"%s\"%s; the export may lack launches, so "
			 "nothing is stored (--allow-partial stores what it holds)", im->path,
			 im->err_line, im->err_first, more.s);
	buf_free(&more);
	return KG_EXIT_USAGE;
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
	im->allow_partial = import_partial_allowed();
	while ((n = ncu_csv_read_record(fp, &rd)) > 0) {
		im->line = rd.line;
		if (!rd.quoted_first) {
			/* program output, ==PROF== lines; ncu's errors and warnings */
			if (rd.fields[0][0] == '=' || strstr(rd.fields[0], "=="))
				ncu_line(im, rd.fields[0], rd.line);
			continue;
		}
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
				int has_sum = col_index(&rd, "gpu__time_duration.sum") >= 0;
				col = xcalloc(ncols, sizeof(*col));
				for (size_t i = 0; i < ncols; i++) {
					const char *name = rd.fields[i];
					col[i].name = xstrdup(has_sum ? name : raw_alias(name));
					col[i].skip = raw_column_skipped(col[i].name);
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
		const char *cc = field(&rd, c.cc);
		if (cc && *cc) {
			if (!im->cc) {
				im->cc = xstrdup(cc);
			} else if (strcmp(cc, im->cc) != 0) {
				char *what = xasprintf("launch %s ran on a GPU of compute capability %s, "
						       "launches before on one of %s; one run is one "
						       "GPU model", id, cc, im->cc);
				rc = bad_row(im, &rd, what);
				free(what);
				break;
			}
		}
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
			double v;
			int num = parse_number(mval, &v);
			if (num == NUM_TEXT) {
				if (!strcmp(mval, "n/a"))
					novalue_note(im, mname, 0);
				continue;   /* "n/a", text values */
			}
			if (im->nnv)
				novalue_note(im, mname, 1);
			const char *section = field(&rd, c.section);
			const char *munit = field(&rd, c.munit);
			struct drow *d = details_row(im, section ? section : "", mname,
						     munit ? munit : "");
			if (!d) {
				rc = KG_EXIT_USAGE;
				break;
			}
			if (num != NUM_OK || !isfinite(v * d->factor))
				rc = bad_number(im, &rd, d->m->name, id, mval, num);
			else if (!launch_seen(&l, d->m, 1))
				rc = imp_sample(im, kernel_names(im, kernel), l.ordinal, d->m,
						v * d->factor);
			if (rc)
				break;
		} else {
			im->kernels++;
			const struct kg_kernel_name *kn = kernel_names(im, kernel);
			long long ordinal = strtoll(id, NULL, 10);
			for (size_t i = 0; i < ncols && !rc; i++) {
				double v;
				int num;
				if (col[i].skip || (num = parse_number(rd.fields[i], &v)) == NUM_TEXT)
					continue;
				if (num != NUM_OK || !isfinite(v * col[i].factor)) {
					rc = bad_number(im, &rd, col[i].name, id, rd.fields[i], num);
				} else {
					if (!col[i].m) {
						col[i].m = import_sink_metric(im->sink, col[i].name,
									      col[i].unit);
						if (!unit_agrees(col[i].m->unit, col[i].unit)) {
							rc = unit_clash(im, col[i].name, col[i].unit,
									col[i].unit, col[i].m->unit);
							break;
						}
					}
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
	if (!rc && im->nerr && (im->sink || !im->page_seen || !im->allow_partial))
		rc = ncu_errors(im);
	if (!rc && !im->page_seen)
		rc = bad_row(im, &rd, "no ncu CSV table found (expected a header row starting "
				      "with \"ID\" and holding \"Kernel Name\")");
	if (!rc && im->kernels == 0)
		rc = bad_row(im, &rd, "the ncu CSV export holds no kernel launches");
	if (im->sink && im->nwarn > MAX_WARNINGS)
		kg_warn("%s: %zu more ==WARNING== lines of ncu not shown", im->path,
			im->nwarn - MAX_WARNINGS);
	if (!rc && im->sink)
		novalue_warn(im);
	rawcols_free(col, col ? ncols : 0);
	novalue_free(im);
	drows_free(im);
	ncu_csv_reader_free(&rd);
	fclose(fp);
	free(im->kn_raw);
	im->kn_raw = NULL;
	free(im->err_first);
	im->err_first = NULL;
	return rc;
}

/* "9.0" -> "sm_90"; NULL when cc is not "MAJOR.MINOR". */
static char *cc_chip(const char *cc)
{
	const char *p = cc;
	char digits[16];
	size_t n = 0;

	if (!cc || *p < '0' || *p > '9')
		return NULL;
	for (; *p >= '0' && *p <= '9' && n < 8; p++)
		digits[n++] = *p;
	if (*p++ != '.' || *p < '0' || *p > '9' || p[1])
		return NULL;
	digits[n++] = *p;
	digits[n] = '\0';
	return xasprintf("sm_%s", digits);
}

/* What import_file leaves in im: the header facts it found. */
static void importer_free(struct importer *im)
{
	free(im->gpu_name);
	free(im->process);
	free(im->cc);
}

int ncu_csv_read_info(const char *path, struct kg_import_info *info)
{
	struct importer im = { 0 };
	int rc;

	im.path = path;
	rc = import_file(&im);
	if (rc == KG_EXIT_PASS) {
		char *chip = cc_chip(im.cc);
		if (im.gpu_name) {
			free(info->run.gpu_name);
			info->run.gpu_name = im.gpu_name;
			im.gpu_name = NULL;
		} else if (chip && !info->run.gpu_name) {
			/* the details page names no GPU: its compute capability stands in */
			info->run.gpu_name = xasprintf("%s%s", KG_IMPORT_CC_NAME, im.cc);
		}
		if (chip && !info->run.gpu_chip) {
			info->run.gpu_chip = chip;
			chip = NULL;
		}
		free(chip);
		if (!info->run.collector)
			info->run.collector = xstrdup("ncu");
		if (!info->run.source)
			info->run.source = xstrdup("ncu-csv");
		info->benchmark = im.process;
		im.process = NULL;
	}
	importer_free(&im);
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
	importer_free(&im);
	return rc;
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
	import_stats_free(&stats);
	return rc;
}

int ncu_csv_ingest(struct kg_store *st, const char *path, const char *benchmark,
		   size_t *kernels, size_t *samples)
{
	return ncu_csv_ingest_repeat(st, path, benchmark, 0, kernels, samples);
}
