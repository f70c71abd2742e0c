/*
 * unit.c: profilers' units reduced to the one unit kgate stores (unit.h).
 * A unit is read as numerator[/denominator], each part an optional SI
 * prefix (K M G T P, Ki Mi Gi Ti, and m u n for seconds) times a base unit
 * kgate knows; anything else is kept as given.
 */
#include "kgate/unit.h"

#include <stdio.h>
#include <string.h>

static const struct base {
	const char *name;       /* as printed */
	const char *canon;      /* as stored ("s": seconds; written "ns" alone) */
	int time;               /* takes m, u, n */
} bases[] = {
	{ "second", "s", 1 }, { "s", "s", 1 },
	{ "byte", "byte", 0 }, { "B", "byte", 0 },
	{ "hz", "hz", 0 }, { "Hz", "hz", 0 },
	{ "cycle", "cycle", 0 }, { "inst", "inst", 0 }, { "sector", "sector", 0 },
	{ "request", "request", 0 }, { "wavefront", "wavefront", 0 }, { "warp", "warp", 0 },
	{ "thread", "thread", 0 }, { "block", "block", 0 }, { "register", "register", 0 },
};

static const struct prefix {
	const char *p;
	double f;
	int time_only;
} prefixes[] = {
	{ "Ki", 1024.0, 0 }, { "Mi", 1048576.0, 0 }, { "Gi", 1073741824.0, 0 },
	{ "Ti", 1099511627776.0, 0 },
	{ "K", 1e3, 0 }, { "k", 1e3, 0 }, { "M", 1e6, 0 }, { "G", 1e9, 0 }, { "T", 1e12, 0 },
	{ "P", 1e15, 0 }, { "m", 1e-3, 1 }, { "u", 1e-6, 1 }, { "n", 1e-9, 1 },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct base *base_of(const char *s, size_t len)
{
	for (size_t i = 0; i < N(bases); i++)
		if (strlen(bases[i].name) == len && !memcmp(bases[i].name, s, len))
			return &bases[i];
	return NULL;
}

/* One part of a unit: its base (NULL when unknown) and its prefix's factor. */
static const struct base *part_of(const char *s, size_t len, double *f)
{
	const struct base *b = base_of(s, len);

	*f = 1;
	if (b)
		return b;
	for (size_t i = 0; i < N(prefixes); i++) {
		size_t pl = strlen(prefixes[i].p);
		if (len > pl && !memcmp(s, prefixes[i].p, pl) && (b = base_of(s + pl, len - pl)) &&
		    (!prefixes[i].time_only || b->time)) {
			*f = prefixes[i].f;
			return b;
		}
	}
	return NULL;
}

static const char *keep(const char *unit, char *out, double *factor)
{
	snprintf(out, KG_UNIT_MAX, "%s", unit);
	*factor = 1;
	return out;
}

const char *unit_canonical(const char *unit, char *out, double *factor)
{
	const char *slash = strchr(unit, '/');
	size_t nl = slash ? (size_t)(slash - unit) : strlen(unit);
	double fn, fd = 1;
	const struct base *num = part_of(unit, nl, &fn), *den = NULL;

	if (slash) {
		if (strchr(slash + 1, '/'))
			return keep(unit, out, factor);
		den = part_of(slash + 1, strlen(slash + 1), &fd);
	}
	if (!num || (slash && !den))
		return keep(unit, out, factor);   /* "%", "%/register", "" */
	if (!den) {
		if (num->time) {
			*factor = fn * 1e9;
			snprintf(out, KG_UNIT_MAX, "ns");
		} else {
			*factor = fn;
			snprintf(out, KG_UNIT_MAX, "%s", num->canon);
		}
		return out;
	}
	/* a rate or a ratio: numerator in its base (seconds in ns), over the
	 * denominator in its base (seconds in s) */
	*factor = (num->time ? fn * 1e9 : fn) / fd;
	if (!strcmp(num->canon, "cycle") && den->time)
		snprintf(out, KG_UNIT_MAX, "hz");
	else
		snprintf(out, KG_UNIT_MAX, "%s/%s", num->time ? "ns" : num->canon, den->canon);
	return out;
}

int unit_agrees(const char *a, const char *b)
{
	char ca[KG_UNIT_MAX], cb[KG_UNIT_MAX];
	double fa, fb;

	if (!a || !b || !*a || !*b)
		return 1;
	unit_canonical(a, ca, &fa);
	unit_canonical(b, cb, &fb);
	return !strcmp(ca, cb) && fa == fb;
}
