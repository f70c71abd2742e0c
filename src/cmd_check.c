/*
 * cmd_check.c: "kgate check" (not written yet; the issue that asks for it owns it).
 */
#include "cmd.h"
#include <stdio.h>
#include "kgate/kgate.h"
#include "kgate/util.h"

int cmd_check(int argc, char **argv)
{
	if (cmd_wants_help(argc, argv)) {
		puts("usage: kgate check [--db PATH] [-t thresholds.yaml] [--commit SHA] [--baseline REF] [--label-base L --label-head L] [--format text|markdown|json|junit|github] [--explain]");
		return KG_EXIT_PASS;
	}
	kg_error("'%s' is not available in this build yet", argv[0]);
	return KG_EXIT_RUNTIME;
}
