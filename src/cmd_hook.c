/*
 * cmd_hook.c: "kgate hook" (not written yet; the issue that asks for it owns it).
 */
#include "cmd.h"
#include "kgate/kgate.h"
#include "kgate/util.h"

int cmd_hook(int argc, char **argv)
{
	(void)argc;
	kg_error("'%s' is not available in this build yet", argv[0]);
	return KG_EXIT_RUNTIME;
}
