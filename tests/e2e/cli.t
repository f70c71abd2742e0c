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
done_testing
