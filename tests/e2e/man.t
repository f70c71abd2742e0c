#!/bin/sh
# man.t: the manual page man/kgate.1.  It must format without a warning
# (groff -ww, or man --warnings), give every command of 'kgate --help' a
# synopsis entry and a subsection, name every long option each command's
# --help prints, every KGATE_* variable of records_format.h, and exit status 0-3.
. "$(dirname "$0")/lib.sh"

MAN="$KGATE_SRC/man/kgate.1"

ok "man/kgate.1 exists" test -f "$MAN"

if command -v groff >/dev/null 2>&1; then
	run groff -man -ww -z "$MAN"
	is "$rc/$err" "0/" "groff -man -ww: no warnings"
elif command -v man >/dev/null 2>&1; then
	run sh -c "man --warnings -l '$MAN' >/dev/null"
	is "$rc/$err" "0/" "man --warnings: no warnings"
else
	echo "ok $((_n + 1)) # skip neither groff nor man is installed"; _n=$((_n + 1))
fi

# The subsection of one command: from '.SS kgate CMD' to the next .SS or .SH.
section() {
	awk -v h=".SS kgate $1" '$0 == h { on = 1; next } on && /^\.S[SH] / { exit } on' "$MAN"
}

cmds=$("$KGATE" --help | awk '/^commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }')
ok "kgate --help lists commands" test -n "$cmds"
for c in $cmds; do
	ok "SYNOPSIS has kgate $c" grep -qx ".SY \"kgate $c\"" "$MAN"
	sec=$(section "$c")
	ok "a subsection for kgate $c" test -n "$sec"
	missing=""
	for o in $("$KGATE" "$c" --help | grep -Eo -- '--[a-z][a-z0-9-]*' | sort -u); do
		[ "$o" = "--help" ] && continue
		m=$(printf '%s' "$o" | sed 's/-/\\-/g')   # roff writes - as \-
		printf '%s\n' "$sec" | grep -qF -- "$m" || missing="$missing $o"
	done
	is "$missing" "" "kgate $c: every option of its --help is documented"
done

envs=$(sed -n 's/^#define KG_ENV_[A-Z_]* *"\(KGATE_[A-Z_]*\)".*/\1/p' "$KGATE_SRC/include/kgate/records_format.h")
ok "records_format.h names KGATE_ variables" test -n "$envs"
missing=""
for e in $envs NO_COLOR GITHUB_STEP_SUMMARY GITHUB_TOKEN KGATE_COLLECTOR KGATE_CUPTI; do
	sed -n '/^\.SH ENVIRONMENT/,/^\.SH EXIT STATUS/p' "$MAN" | grep -q "$e" || missing="$missing $e"
done
is "$missing" "" "ENVIRONMENT names every variable"

for s in NAME SYNOPSIS DESCRIPTION FILES ENVIRONMENT "EXIT STATUS" EXAMPLES "SEE ALSO"; do
	ok "section $s" grep -qx ".SH $s" "$MAN"
done
exits=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$MAN" | sed -n 's/^\.B \([0-3]\)$/\1/p' | tr -d '\n')
is "$exits" "0123" "EXIT STATUS documents 0, 1, 2 and 3"
for f in kgate.yaml thresholds kgate.db; do
	ok "FILES names $f" sh -c "sed -n '/^\.SH FILES/,/^\.SH ENVIRONMENT/p' '$MAN' | grep -q '$f'"
done

done_testing
