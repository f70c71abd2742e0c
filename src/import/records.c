/*
 * import/records.c: the importer of records files, the JSON Lines that
 * kgate's collector writes (records_format.h, docs/records.md).  The parser is
 * src/records.c; this file says what a records file looks like.
 */
#include "kgate/import.h"
#include "kgate/records.h"

#include <string.h>

#include "formats.h"

/* The first line is a JSON object whose "type" is "header". */
int records_sniff(const unsigned char *head, size_t n, const char *path)
{
	size_t i = 0, len = path ? strlen(path) : 0;
	int named = len > 6 && !strcmp(path + len - 6, ".jsonl");

	while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
		i++;
	if (i == n)
		return named ? KG_SNIFF_NAME : KG_SNIFF_NO;   /* empty: its name decides */
	if (head[i] != '{')
		return KG_SNIFF_NO;
	size_t end = i;
	while (end < n && head[end] != '\n')
		end++;
	/* the header line, as the collector writes it (no spaces) or otherwise */
	const unsigned char *line = head + i;
	size_t ll = end - i;
	if (memmem(line, ll, "\"type\":\"header\"", 15) || memmem(line, ll, "\"type\": \"header\"", 16))
		return KG_SNIFF_SURE;
	if (memmem(line, ll, "\"type\"", 6) && end < n)
		return named ? KG_SNIFF_LIKELY : KG_SNIFF_NAME;   /* a JSON line with a type */
	return named ? KG_SNIFF_NAME : KG_SNIFF_NO;
}
