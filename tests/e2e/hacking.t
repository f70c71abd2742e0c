#!/bin/sh
# hacking.t: docs/HACKING.md and README.md's source layout stay true, in
# the manner of man.t: every path HACKING.md names exists (a pattern such as
# src/cmd_<name>.c must match a file), it has a section for each kind of
# change, every src/*.c and src/*/*.c file is named in README.md's source
# layout, every path the layout names exists, every *.md file the sources
# and docs name exists, and every command of 'kgate --help' has its file,
# src/cmd_<name>.c, named there.
. "$(dirname "$0")/lib.sh"

S=$KGATE_SRC
H=$S/docs/HACKING.md
ok "docs/HACKING.md exists" test -f "$H"

# exists PATH: the path, or for a pattern (<word> or * in it) some file it
# matches, is in the source tree
exists() {
	p=$(printf '%s' "$1" | sed 's/<[^>]*>/*/g')
	(cd "$S" && for f in $p; do [ -e "$f" ] && exit 0; done; exit 1)
}
# paths WORDS...: the words that name a path in the tree (a top directory
# of the repository, or a file at its top), one a line
paths() {
	printf '%s\n' "$@" | grep -E '^(\.ci|src|include|tests|docs|man|scripts|benchmarks|thresholds|ci)/|^(Makefile|README\.md|kgate\.yaml)$' |
		grep -v ' ' | sed 's/[.,;:]$//'
}

# --- every path named in HACKING.md exists --------------------------------
# the `quoted` words, and docs/*.md named in the prose
words=$(grep -o '`[^`]*`' "$H" | tr -d '`'; grep -oE '(docs|tests|src)/[A-Za-z0-9_./<>*-]*[A-Za-z0-9_>*/]' "$H")
# shellcheck disable=SC2086
named=$(IFS='
'; paths $words | sort -u)
ok "HACKING.md names paths" test -n "$named"
missing=""
for p in $named; do
	exists "$p" || missing="$missing $p"
done
is "$missing" "" "every path HACKING.md names exists"

for s in "A command" "An importer" "An output format" "A store backend" "A collector mode" \
	"A rule of explain" "A metric's meaning" "Build, test, fuzz, analyze, bench"; do
	ok "HACKING.md has a section '$s'" grep -q "^## $s" "$H"
done
for t in "make -j2 test" "make analyze" "make fuzz" "make bench" "SAN=address,undefined"; do
	ok "HACKING.md says how to run '$t'" grep -qF -- "$t" "$H"
done

# --- README.md's source layout ----------------------------------------------
layout=$(awk '/^## Source layout/ { on = 1; next } on && /^## / { exit } on' "$S/README.md")
ok "README.md has a source layout" test -n "$layout"
# named FILE: the layout names src/D/F.c in full, or on one row both its
# directory (src/D/) and its file name (F.c)
named_in_layout() {
	printf '%s\n' "$layout" | grep -qF "\`$1\`" && return 0
	d=${1%/*}/ b=${1##*/}
	printf '%s\n' "$layout" | grep -F "\`$d\`" | grep -qF "\`$b\`"
}
missing=""
for f in $(cd "$S" && ls src/*.c src/*/*.c 2>/dev/null); do
	named_in_layout "$f" || missing="$missing $f"
done
is "$missing" "" "README.md's source layout names every src/*.c and src/*/*.c file"

lwords=$(printf '%s\n' "$layout" | grep -o '`[^`]*`' | tr -d '`')
# shellcheck disable=SC2086
lnamed=$(IFS='
'; paths $lwords | sort -u)
missing=""
for p in $lnamed; do
	exists "$p" || missing="$missing $p"
done
is "$missing" "" "every path README.md's source layout names exists"

# --- no document named in the sources or the docs is missing -----------------
# (gate.h once sent its reader to a DESIGN.md the repository does not have)
missing=""
for m in $(cd "$S" && grep -ohE '[A-Za-z0-9_-]+\.md\b' README.md docs/*.md src/*.c src/*/*.c include/kgate/*.h man/kgate.1 2>/dev/null | sort -u); do
	[ -n "$(cd "$S" && find . -name "$m" -not -path './build*' -print -quit)" ] || missing="$missing $m"
done
is "$missing" "" "every *.md file the sources and docs name exists"

# --- every command has its file, named in the layout -------------------------
cmds=$("$KGATE" --help | awk '/^commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }')
ok "kgate --help lists commands" test -n "$cmds"
for c in $cmds; do
	ok "kgate $c: src/cmd_$c.c exists" test -f "$S/src/cmd_$c.c"
	ok "kgate $c: README.md's source layout names src/cmd_$c.c" named_in_layout "src/cmd_$c.c"
done

done_testing
