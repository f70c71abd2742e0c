#!/bin/sh
# cli.t: the command table, --help and --version, unknown commands.
. "$(dirname "$0")/lib.sh"

run "$KGATE" --version
is "$rc" 0 "--version exits 0"
like "$out" '^kgate [0-9]+\.[0-9]+\.[0-9]+$' "--version prints the version"

run "$KGATE" --help
is "$rc" 0 "--help exits 0"
for c in run compare ingest check report explain hook stats comment metrics; do
	like "$out" "^   $c " "--help lists $c"
done

run "$KGATE"
is "$rc" 2 "no command is a usage error"

run "$KGATE" chek
is "$rc" 2 "unknown command exits 2"
like "$err" "did you mean 'check'" "unknown command suggests the nearest"

for c in run compare ingest check report explain hook stats comment metrics; do
	run "$KGATE" "$c" --help
	is "$rc" 0 "$c --help exits 0"
	like "$out" "^usage: kgate $c" "$c --help prints its usage on stdout"
done

# One message for a bad option, from every command (hook takes subcommands).
for c in run compare ingest check report explain stats comment metrics; do
	run "$KGATE" "$c" --bogus
	is "$rc" 2 "$c --bogus exits 2"
	is "$err" "kgate: unknown option '--bogus'; see 'kgate $c --help'" "$c names the option and the help"
done
for c in run compare ingest check report explain stats comment; do
	run "$KGATE" "$c" --db
	is "$err" "kgate: option '--db' needs a value" "$c: a missing value is said as such"
done
run "$KGATE" run -vx
is "$err" "kgate: unknown option '-x'; see 'kgate run --help'" "a short option in a cluster is named alone"
run "$KGATE" run -xv
is "$err" "kgate: unknown option '-x'; see 'kgate run --help'" "also at the start of a cluster"
run "$KGATE" run --quick -xv
is "$err" "kgate: unknown option '-x'; see 'kgate run --help'" "also after a long option"

# A misspelt option gets the nearest one, from every command: each
# command's first long option of four letters or more, an x put into it.
for c in run compare ingest check report explain stats comment metrics bisect; do
	o=$("$KGATE" "$c" --help | sed -n 's/^  \(-[a-z], \)\{0,1\}--\([a-z][a-z0-9-]\{3,\}\).*/\2/p' | head -1)
	bad=$(printf '%s' "$o" | sed 's/^\(...\)/\1x/')
	run "$KGATE" "$c" "--$bad"
	is "$rc/$err" "2/kgate: unknown option '--$bad'; did you mean '--$o'?" "$c --$bad: did you mean --$o"
done
run "$KGATE" check --basline main
is "$err" "kgate: unknown option '--basline'; did you mean '--baseline'?" "check --basline: --baseline"
run "$KGATE" check --basline=main
is "$err" "kgate: unknown option '--basline'; did you mean '--baseline'?" "also with =VALUE"
run "$KGATE" --verison
is "$rc/$err" "2/kgate: unknown option '--verison'; did you mean '--version'?" "kgate's own options too"
run "$KGATE" check --co x
is "$rc/$err" "2/kgate: option '--co' is ambiguous: --config, --commit" "an ambiguous abbreviation names the options"
run "$KGATE" check --all=yes
is "$rc/$err" "2/kgate: option '--all' takes no value" "a value for an option without one"
run "$KGATE" run -c
is "$err" "kgate: option '-c' needs a value" "a short option without its value"
run "$KGATE" check --format jsno
is "$rc/$err" "2/kgate: --format 'jsno' is not one of: text, markdown, json, junit, github; did you mean 'json'?" \
	"a misspelt choice gets the nearest one"
run "$KGATE" check stray
is "$rc/$err" "2/kgate: unexpected argument 'stray'; see 'kgate check --help'" "an operand where none is taken"

# The usage lines and the options part name the same options: each option
# of the options part (its long or its short form) is in the usage lines,
# each long option of the usage lines is in the options part.
for c in run compare ingest check report explain stats comment metrics bisect; do
	"$KGATE" "$c" --help >"$T/help"
	syn=$(awk 'NF == 0 { exit } { print }' "$T/help")
	rows=$(grep -E '^  (-[a-z], )?--[a-z]' "$T/help")
	missing=""
	for o in $(printf '%s\n' "$rows" | sed -n 's/^  \(-[a-z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p'); do
		s=$(printf '%s\n' "$rows" | sed -n "s/^  \(-[a-z]\), $o .*/\1/p; s/^  \(-[a-z]\), $o\$/\1/p")
		printf '%s\n' "$syn" | grep -qE -- "$o([^a-z0-9-]|\$)" ||
			{ [ -n "$s" ] && printf '%s\n' "$syn" | grep -qE -- "\[$s[] ]"; } || missing="$missing $o"
	done
	for o in $(printf '%s\n' "$syn" | grep -Eo -- '--[a-z][a-z0-9-]*' | sort -u); do
		printf '%s\n' "$rows" | grep -qE -- "^  (-[a-z], )?$o( |\$)" || missing="$missing $o"
	done
	is "$missing" "" "kgate $c: its usage lines and its options part name the same options"
done

# No line of any --help over 79 characters (the options part is wrapped).
for c in run compare ingest check report explain hook stats comment metrics bisect; do
	"$KGATE" "$c" --help >"$T/help"
	is "$(awk 'length > 79' "$T/help")" "" "kgate $c --help: within 79 columns"
done
done_testing
