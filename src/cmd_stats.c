/*
 * cmd_stats.c: "kgate stats" (not written yet; the issue that asks for it owns it).
 */
#include "cmd.h"
#include <stdio.h>
#include "kgate/kgate.h"
#include "kgate/util.h"

int cmd_stats(int argc, char **argv)
{
	if (cmd_wants_help(argc, argv)) {
		puts("usage: kgate stats [--db PATH] [--commit SHA | --run ID] --report kernel_sum|nvtx_sum [--format text|json|csv]");
		return KG_EXIT_PASS;
	}
	kg_error("'%s' is not available in this build yet", argv[0]);
	return KG_EXIT_RUNTIME;
}
