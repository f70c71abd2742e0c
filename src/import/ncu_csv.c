/*
 * import/ncu_csv.c: the importer of Nsight Compute CSV exports (ncu --csv,
 * details or raw page).  The parser is src/ncu_csv.c; this file says what
 * an export looks like.
 */
#include "kgate/import.h"
#include "kgate/ncu_csv.h"

#include <string.h>

#include "formats.h"

/* Does a line of the head begin with s? */
static int line_starts(const unsigned char *head, size_t n, const char *s)
{
	size_t l = strlen(s);

	for (size_t i = 0; i + l <= n; i++)
		if ((i == 0 || head[i - 1] == '\n') && !memcmp(head + i, s, l))
			return 1;
	return 0;
}

/* ncu's table header ("ID","Process ID",...), or its ==PROF== or ==ERROR==
 * lines (an output that holds only ncu's error is ncu's, and is refused
 * with that error quoted). */
int ncu_csv_sniff(const unsigned char *head, size_t n, const char *path)
{
	size_t len = path ? strlen(path) : 0;
	int named = len > 4 && !strcmp(path + len - 4, ".csv");

	if (line_starts(head, n, "\"ID\",") && memmem(head, n, "\"Kernel Name\"", 13))
		return KG_SNIFF_SURE;
	if (line_starts(head, n, "==PROF==") || line_starts(head, n, "==ERROR=="))
		return KG_SNIFF_LIKELY;
	return named ? KG_SNIFF_NAME : KG_SNIFF_NO;
}
