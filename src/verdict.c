/*
 * verdict.c: the one name table of enum kg_verdict and of the policies,
 * and the small things every rendering of a stored check outcome shares
 * (its commit status and its counts line).  Nothing here decides: the
 * outcome is decided once by check.c and read back from the store.
 */
#include <stdlib.h>
#include <string.h>

#include "kgate/util.h"
#include "kgate/verdict.h"

static const struct {
	const char *name, *key, *badge;
} names[KG_VERDICT_COUNT] = {
	[KG_VERDICT_PASS] = { "PASS", "pass", "\xE2\x9C\x85 PASS" },
	[KG_VERDICT_FAIL] = { "FAIL", "fail", "\xE2\x9D\x8C FAIL" },
	[KG_VERDICT_INCONCLUSIVE] = { "INCONCLUSIVE", "inconclusive",
				      "\xE2\x9A\xA0\xEF\xB8\x8F INCONCLUSIVE" },
	[KG_VERDICT_NEW] = { "NEW", "new", "\xF0\x9F\x86\x95 NEW" },
	[KG_VERDICT_MISSING] = { "MISSING", "missing", "\xE2\x9D\x93 MISSING" },
	[KG_VERDICT_SKIP] = { "SKIP", "skip", "SKIP" },
	[KG_VERDICT_NO_BASELINE] = { "NO BASELINE", "no_baseline", "\xE2\x9A\xAA NO BASELINE" },
	[KG_VERDICT_CHANGED] = { "CHANGED", "changed", "\xE2\x86\x94\xEF\xB8\x8F CHANGED" },
};

const char *verdict_name(enum kg_verdict v)
{
	return (unsigned)v < KG_VERDICT_COUNT ? names[v].name : "?";
}

const char *verdict_key(enum kg_verdict v)
{
	return (unsigned)v < KG_VERDICT_COUNT ? names[v].key : "?";
}

const char *verdict_badge(enum kg_verdict v)
{
	return (unsigned)v < KG_VERDICT_COUNT ? names[v].badge : "?";
}

int verdict_parse(const char *s, enum kg_verdict *v)
{
	for (int i = 0; s && i < KG_VERDICT_COUNT; i++)
		if (!strcmp(s, names[i].key) || !strcmp(s, names[i].name)) {
			*v = (enum kg_verdict)i;
			return 0;
		}
	return -1;
}

static const char *const policy_names[] = { [KG_POLICY_IGNORE] = "ignore",
					    [KG_POLICY_WARN] = "warn",
					    [KG_POLICY_FAIL] = "fail" };

const char *verdict_policy_name(enum kg_policy p)
{
	return (unsigned)p < 3 ? policy_names[p] : "?";
}

int verdict_policy_parse(const char *s, enum kg_policy *p)
{
	for (int i = 0; s && i < 3; i++)
		if (!strcmp(s, policy_names[i])) {
			*p = (enum kg_policy)i;
			return 0;
		}
	return -1;
}

void verdict_outcome_free(struct kg_outcome *o)
{
	free(o->note);
	free(o->not_compared);
	o->note = o->not_compared = NULL;
}

void verdict_outcome_count(struct kg_outcome *o, enum kg_verdict v, int fails)
{
	switch (v) {
	case KG_VERDICT_FAIL: o->n_fail++; break;
	case KG_VERDICT_INCONCLUSIVE: o->n_inconclusive++; break;
	case KG_VERDICT_PASS: o->n_pass++; break;
	case KG_VERDICT_NEW: o->n_new++; break;
	case KG_VERDICT_MISSING: o->n_missing++; break;
	case KG_VERDICT_CHANGED: o->n_changed++; break;
	default: o->n_skip++; break;
	}
	o->n_failing += fails != 0;
}

const char *verdict_outcome_state(const struct kg_outcome *o, struct kg_buf *desc)
{
	if (desc) {
		if (o->verdict == KG_VERDICT_NO_BASELINE)
			buf_printf(desc, "no baseline: nothing compared");
		else
			buf_printf(desc, "%s: %zu fail, %zu inconclusive, %zu pass", verdict_name(o->verdict),
				   o->n_fail, o->n_inconclusive, o->n_pass);
		if (o->n_failing && o->n_failing != o->n_fail)
			buf_printf(desc, "; %zu failing by policy", o->n_failing);
	}
	return o->exit_status ? "failure" : "success";
}

void verdict_outcome_counts(const struct kg_outcome *o, struct kg_buf *b)
{
	buf_printf(b, "%zu failed, %zu passed, %zu inconclusive, %zu new, %zu missing", o->n_fail,
		   o->n_pass, o->n_inconclusive, o->n_new, o->n_missing);
	if (o->n_changed)
		buf_printf(b, ", %zu changed", o->n_changed);
}
