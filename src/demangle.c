/*
 * demangle.c: kernel names (demangle.h).  Demangles with the C++ ABI's
 * __cxa_demangle (libstdc++), brings demangled names from any source into
 * one canonical spelling, and derives ncu's "function" base name.
 */
#include "kgate/demangle.h"
#include "kgate/util.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/*
 * The C++ ABI's demangler, from libstdc++, loaded at the first mangled name
 * rather than linked: loading libstdc++ costs every kgate process about
 * 3 ms, and most never demangle.  NULL when it cannot be loaded (names are
 * then kept as they are, said once).
 */
typedef char *cxa_demangle_fn(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn *demangler(void)
{
	static int tried;
	static cxa_demangle_fn *fn;

	if (!tried) {
		tried = 1;
		void *lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
		if (lib)
			*(void **)&fn = dlsym(lib, "__cxa_demangle");
		if (!fn)
			kg_warn("cannot load the C++ demangler (libstdc++.so.6: %s); kernel names "
				"stay mangled", dlerror());
	}
	return fn;
}

char *demangle_name(const char *name)
{
	int status = 0;
	cxa_demangle_fn *cxa;

	if (name[0] == '_' && name[1] == 'Z') {
		char *d = (cxa = demangler()) ? cxa(name, NULL, NULL, &status) : NULL;
		if (d && status == 0) {
			char *c = demangle_canonical(d);
			free(d);
			return c;
		}
		free(d);
		return xstrdup(name);
	}
	return demangle_canonical(name);
}

/* One parameter (or template argument), trimmed: "const float *" -> "float const*". */
static void canon_param(struct kg_buf *out, const char *p, size_t n)
{
	struct kg_buf t = KG_BUF_INIT;
	const char *quals[] = { "const ", "volatile " };
	char *moved[2] = { NULL, NULL };
	size_t nm = 0;

	while (n && isspace((unsigned char)*p))
		p++, n--;
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	/* leading cv-qualifiers of a simple type move behind it */
	for (int again = 1; again;) {
		again = 0;
		for (size_t q = 0; q < 2; q++) {
			size_t ql = strlen(quals[q]);
			if (n > ql && !strncmp(p, quals[q], ql) && nm < 2) {
				moved[nm++] = xstrndup(quals[q], ql - 1);
				p += ql;
				n -= ql;
				again = 1;
			}
		}
	}
	/* drop spaces before '*' and '&', collapse runs of spaces */
	size_t type_end = 0;
	int seen_type_end = 0;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (c == ' ') {
			size_t j = i;
			while (j < n && p[j] == ' ')
				j++;
			if (j < n && (p[j] == '*' || p[j] == '&' || p[j] == ')' || p[j] == ','))
				continue;
			if (t.len && t.s[t.len - 1] == ' ')
				continue;
		}
		if (!seen_type_end && (c == '*' || c == '&' || c == '(' || c == '[')) {
			while (t.len && t.s[t.len - 1] == ' ')
				t.s[--t.len] = '\0';
			type_end = t.len;
			seen_type_end = 1;
		}
		buf_addc(&t, c);
	}
	if (!seen_type_end)
		type_end = t.len;
	if (t.s)
		buf_add(out, t.s, type_end);
	for (size_t q = 0; q < nm; q++) {
		buf_addc(out, ' ');
		buf_adds(out, moved[q]);
		free(moved[q]);
	}
	if (t.s)
		buf_adds(out, t.s + type_end);
	buf_free(&t);
}

/* Index of the '(' that opens the parameter list ending at close, or -1. */
static long match_open(const char *s, long close)
{
	int depth = 0;
	for (long i = close; i >= 0; i--) {
		if (s[i] == ')')
			depth++;
		else if (s[i] == '(' && --depth == 0)
			return i;
	}
	return -1;
}

char *demangle_canonical(const char *d)
{
	struct kg_buf out = KG_BUF_INIT;
	long len = (long)strlen(d), close = len - 1;

	while (close >= 0 && d[close] != ')')
		close--;
	long open = close >= 0 ? match_open(d, close) : -1;
	if (open <= 0) {
		buf_adds(&out, d);
		return buf_detach(&out);
	}
	buf_add(&out, d, (size_t)open + 1);
	if (close > open + 1) {
		struct kg_buf params = KG_BUF_INIT;
		size_t start = 0;
		int depth = 0, first = 1;
		const char *p = d + open + 1;
		size_t n = (size_t)(close - open - 1);
		for (size_t i = 0; i <= n; i++) {
			char c = i < n ? p[i] : ',';
			if (c == '<' || c == '(' || c == '[')
				depth++;
			else if (c == '>' || c == ')' || c == ']')
				depth--;
			else if (c == ',' && depth == 0) {
				if (!first)
					buf_adds(&params, ", ");
				canon_param(&params, p + start, i - start);
				first = 0;
				start = i + 1;
			}
		}
		if (params.s)
			buf_adds(&out, params.s);
		buf_free(&params);
	}
	buf_adds(&out, d + close);
	return buf_detach(&out);
}

char *demangle_base(const char *d)
{
	long len = (long)strlen(d), end = len;

	/* parameter list */
	long close = len - 1;
	while (close >= 0 && isspace((unsigned char)d[close]))
		close--;
	/* trailing qualifiers such as " const" after the list */
	long k = close;
	while (k >= 0 && d[k] != ')' && (isalpha((unsigned char)d[k]) || d[k] == ' '))
		k--;
	if (k >= 0 && d[k] == ')') {
		long open = match_open(d, k);
		if (open > 0)
			end = open;
	}
	/* template arguments */
	if (end > 0 && d[end - 1] == '>') {
		int depth = 0;
		for (long i = end - 1; i >= 0; i--) {
			if (d[i] == '>')
				depth++;
			else if (d[i] == '<' && --depth == 0) {
				end = i;
				break;
			}
		}
	}
	/* return type and namespaces: after the last depth-0 ' ' or "::" */
	long start = 0;
	int depth = 0;
	for (long i = 0; i < end; i++) {
		char c = d[i];
		if (c == '<' || c == '(' || c == '[')
			depth++;
		else if (c == '>' || c == ')' || c == ']')
			depth--;
		else if (depth == 0 && c == ' ')
			start = i + 1;
		else if (depth == 0 && c == ':' && i + 1 < end && d[i + 1] == ':') {
			start = i + 2;
			i++;
		}
	}
	if (start >= end)
		return xstrdup(d);
	return xstrndup(d + start, (size_t)(end - start));
}
