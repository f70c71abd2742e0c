/*
 * cmd_metrics.c: "kgate metrics": offline questions about metric names for
 * a chip, answered by the CUPTI host API through the collector library
 * (metricinfo.c): is each name valid (with the nearest valid names when
 * not), its unit and whether kgate compares it exactly, and the replay
 * passes the whole set needs; with no names, the chip's metric list.
 */
#include "cmd.h"
#include "kgate/kgate.h"
#include "kgate/opt.h"
#include "kgate/metric.h"
#include "kgate/metricinfo.h"
#include "kgate/store.h"
#include "kgate/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char synopsis[] =
	"usage: kgate metrics [--chip CHIP] [--format text|json] [NAME...]\n"
	"\n"
	"Check metric names offline (no GPU needed) with the CUPTI host API,\n"
	"through the collector library libkgate-collector.so ($KGATE_COLLECTOR,\n"
	"next to kgate, or ../lib/kgate/).  For each NAME: valid or not (with the\n"
	"nearest valid names), its unit when known, whether it is a deterministic\n"
	"counter (compared exactly by the gate) or noisy; then the replay passes\n"
	"the whole set needs.  With no NAME, list the chip's base metric names\n"
	"(a full name adds a rollup such as .sum or .avg.pct_of_peak_sustained_elapsed).\n";

static const char epilogue[] =
	"Metrics kgate derives from activity records (gpu__time_duration.sum and\n"
	"the launch__ configuration metrics) are always valid.\n"
	"\n"
	"Exit status: 0 all valid; 2 bad usage or an invalid name;\n"
	"3 the collector library or CUPTI is unavailable.\n";

#define MAX_SUGGEST 3

struct answer {
	const char *name;
	int valid;              /* 1, 0 */
	int derived;
	char *why;
	char *sugg[MAX_SUGGEST];
	int nsugg;
};

static int is_derived(const char *m)
{
	for (size_t i = 0; metricinfo_derived[i]; i++)
		if (!strcmp(m, metricinfo_derived[i]))
			return 1;
	return 0;
}

static int list_metrics(const char *chip, int json)
{
	struct kg_buf err = KG_BUF_INIT;
	const char *const *names;
	size_t n;

	if (metricinfo_names(chip, &names, &n, &err) < 0) {
		kg_error("%s", err.s);
		buf_free(&err);
		return KG_EXIT_RUNTIME;
	}
	buf_free(&err);
	if (json) {
		json_t *a = json_array(), *d = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, json_string(names[i]));
		for (size_t i = 0; metricinfo_derived[i]; i++)
			json_array_append_new(d, json_string(metricinfo_derived[i]));
		json_t *o = json_pack("{s:s, s:o, s:o}", "chip", chip, "metrics", a, "derived", d);
				kg_json_print(o, JSON_INDENT(2));
	} else {
		for (size_t i = 0; i < n; i++)
			puts(names[i]);
		kg_note("%zu base metrics on %s; kgate also derives: gpu__time_duration.sum and "
			"launch__* (see --help)", n, chip);
	}
	return KG_EXIT_PASS;
}

int cmd_metrics(int argc, char **argv)
{
	const char *chip = "gh100", *format = "text";
	int argi, json, rc = KG_EXIT_PASS;
	const struct kg_opt opts[] = {
		KG_OPT_STR("chip", 0, "CHIP", &chip, "the chip (default gh100: H100, H200)"),
		KG_OPT_TEXT_JSON(&format, "text (default) or json"),
		KG_OPT_END
	};
	const struct kg_optspec spec = { "metrics", synopsis, epilogue, opts, 1, 0 };

	if ((rc = opt_parse(&spec, argc, argv, &argi)) != KG_OPT_GO)
		return rc;
	rc = KG_EXIT_PASS;
	if (!*chip) {
		kg_error("--chip needs a chip name, such as gh100");
		return KG_EXIT_USAGE;
	}
	json = !strcmp(format, "json");
	if (argi == argc)
		return list_metrics(chip, json);

	size_t n = (size_t)(argc - argi), ninvalid = 0;
	struct answer *a = xcalloc(n, sizeof(*a));
	for (size_t i = 0; i < n; i++) {
		struct kg_buf err = KG_BUF_INIT;
		a[i].name = argv[argi + (int)i];
		a[i].derived = is_derived(a[i].name);
		int v = metricinfo_valid(chip, a[i].name, &err);
		if (v < 0) {
			kg_error("%s", err.s ? err.s : "the collector cannot tell");
			buf_free(&err);
			rc = KG_EXIT_RUNTIME;
			goto out;
		}
		a[i].valid = v;
		if (!v) {
			ninvalid++;
			a[i].why = buf_detach(&err);
			struct kg_buf e2 = KG_BUF_INIT;
			int k = metricinfo_suggest(chip, a[i].name, a[i].sugg, MAX_SUGGEST, &e2);
			a[i].nsugg = k > 0 ? k : 0;
			buf_free(&e2);
		}
		buf_free(&err);
	}

	/* Passes of the whole set, when every name is valid. */
	int passes = -1;
	struct kg_buf perr = KG_BUF_INIT;
	if (!ninvalid) {
		const char **names = xcalloc(n, sizeof(*names));
		for (size_t i = 0; i < n; i++)
			names[i] = a[i].name;
		if (metricinfo_passes(chip, names, n, &passes, &perr) < 0) {
			passes = -1;
			rc = KG_EXIT_RUNTIME;
		}
		free(names);
	}

	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++) {
			json_t *s = json_array();
			for (int k = 0; k < a[i].nsugg; k++)
				json_array_append_new(s, json_string(a[i].sugg[k]));
			json_t *o = json_pack("{s:s, s:b, s:b, s:s, s:b, s:s}", "name", a[i].name,
					      "valid", a[i].valid, "derived", a[i].derived,
					      "unit", metric_unit(a[i].name),
					      "deterministic",
					      metric_deterministic(a[i].name) != 0, "better",
					      metric_better_name(metric_better(a[i].name)));
			if (!a[i].valid) {
				json_object_set_new(o, "error", json_string(a[i].why ? a[i].why : ""));
				json_object_set_new(o, "suggestions", s);
			} else {
				json_decref(s);
			}
			json_array_append_new(arr, o);
		}
		json_t *o = json_pack("{s:s, s:o}", "chip", chip, "metrics", arr);
		json_object_set_new(o, "passes", passes >= 0 ? json_integer(passes) : json_null());
				kg_json_print(o, JSON_INDENT(2));
	} else {
		size_t w = 0;
		for (size_t i = 0; i < n; i++)
			if (strlen(a[i].name) > w)
				w = strlen(a[i].name);
		for (size_t i = 0; i < n; i++) {
			const char *unit = metric_unit(a[i].name);
			if (a[i].valid) {
				int det = metric_deterministic(a[i].name);
				printf("%-*s  valid    %-15s  %s%s\n", (int)w, a[i].name,
				       *unit ? unit : "-", det ? "deterministic" : "noisy",
				       a[i].derived ? (det ? "  derived by kgate" : "          derived by kgate") : "");
				continue;
			}
			printf("%-*s  invalid  %s", (int)w, a[i].name, a[i].why ? a[i].why : "");
			for (int k = 0; k < a[i].nsugg; k++)
				printf("%s%s", k ? ", " : "; did you mean: ", a[i].sugg[k]);
			putchar('\n');
		}
		if (passes >= 0)
			printf("passes: %d on %s%s\n", passes, chip,
			       passes == 0 ? " (all derived from activity records: no replay)" : "");
	}
	if (ninvalid) {
		kg_error("%zu of %zu metric name%s not valid on %s", ninvalid, n,
			 n == 1 ? " is" : "s are", chip);
		rc = KG_EXIT_USAGE;
	} else if (passes < 0) {
		kg_error("%s", perr.s ? perr.s : "cannot count the passes");
	}
	buf_free(&perr);
out:
	for (size_t i = 0; i < n; i++) {
		free(a[i].why);
		for (int k = 0; k < a[i].nsugg; k++)
			free(a[i].sugg[k]);
	}
	free(a);
	return rc;
}
