/*
 * cmd_report.c: "kgate report".  Not written yet: this build prints its usage and
 * says so, and fails with exit status 3 when asked to do the work.
 */
#include <stdio.h>

#include "cmd.h"
#include "kgate/kgate.h"
#include "kgate/util.h"

int cmd_report(int argc, char **argv)
{
	if (cmd_wants_help(argc, argv)) {
		printf("usage: kgate report ... (see DESIGN.md; not available in this build yet)\n");
		return KG_EXIT_PASS;
	}
	kg_error("'%s' is not available in this build yet", argv[0]);
	return KG_EXIT_RUNTIME;
}
