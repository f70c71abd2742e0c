#!/bin/sh
# analyze.sh: gcc's static analyzer (-fanalyzer) over kgate's sources and
# the tests' programs (tests/progs/*.c, the NVML stand-in tests/nvml/*.c,
# and the collector's test doubles,
# tests/collector/*.c).
#
#   sh scripts/analyze.sh CC "CFLAGS for src/*.c" "CFLAGS for src/collector/*.c"
#
# Each warning is reduced to "FILE [CHECKER] MESSAGE" (no line number, so
# that an edit elsewhere in the file does not matter) and looked up in
# tests/analyzer.triage, which lists the warnings read and found to be false
# positives, each with the reason.  Exit 1 when a warning is not there.
set -u
LC_ALL=C; export LC_ALL    # ASCII quotes in the messages
cc=$1 cflags=$2 collflags=$3
triage=tests/analyzer.triage
log=$(mktemp "${TMPDIR:-/tmp}/kgate-analyze.XXXXXX")
trap 'rm -f "$log"' EXIT
for f in src/*.c src/import/*.c tests/progs/*.c tests/nvml/*.c; do
	# shellcheck disable=SC2086
	$cc $cflags -fanalyzer -c -o /dev/null "$f" 2>>"$log"
done
for f in src/collector/*.c tests/collector/*.c; do
	# shellcheck disable=SC2086
	$cc $collflags -fanalyzer -c -o /dev/null "$f" 2>>"$log"
done
n=0 bad=0
warnings=$(sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: \(.*\) \[CWE-[0-9]*\] \[\(-W[^]]*\)\]$/\1 [\3] \2/p' "$log" | sort -u)
while IFS= read -r w; do
	[ -n "$w" ] || continue
	n=$((n + 1))
	if grep -v '^#' "$triage" | grep -qxF -- "$w"; then
		echo "triaged: $w"
	else
		echo "NEW:     $w"; bad=$((bad + 1))
	fi
done <<EOT
$warnings
EOT
total=$(grep -c ': warning: ' "$log")
echo "analyze: $total warnings ($n distinct), $bad not triaged"
[ "$bad" -eq 0 ] || { echo "full output:"; cat "$log"; exit 1; }
