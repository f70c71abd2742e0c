#!/bin/bash
# explain_cost.sh: what "kgate explain --collect" adds to a gate run, on a
# GPU, for a real regression of two kernels.
#
#   benchmarks/self/gpu/explain_cost.sh OUTDIR
#
# Needs `make` and `make benchmarks` built.  Two one-file suites stand for
# the base and the head checkout: stream_triad (head: 5% more elements)
# and transpose_tiled (head: 5% more rows).  It runs "kgate compare" on
# them (both sides stored, the gate FAILs), then times "kgate check" of the
# head against the base and "kgate explain --collect --base-dir" of the
# same, and prints the explanation and the seconds per explained kernel,
# then what the PR comment and the report show of the stored explanations.
set -u
OUT=${1:?give an output directory}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
KGATE=$ROOT/build/kgate
B=$ROOT/build/benchmarks
W=$OUT/explain_cost
rm -rf "$W"
mkdir -p "$W/base" "$W/head"
suite() { # dir stream-extra transpose-extra
	cat >"$1/kgate.yaml" <<YAML
version: 1
collector: { mode: trace }
benchmarks:
  - name: stream_triad
    cmd: [$B/stream, --n, "33554432"$2]
    repeat: 5
    timeout: 60s
  - name: transpose_tiled
    cmd: [$B/transpose, --variant, tiled, --n, "8192"$3]
    repeat: 5
    timeout: 60s
YAML
}
suite "$W/base" "" ""
suite "$W/head" ', --extra-work, "0.05"' ', --extra-work, "0.05"'
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
cd "$W/head" || exit 2
a=$(now)
"$KGATE" compare --base-dir "$W/base" --head-dir "$W/head" --db "$W/k.db" >"$W/compare.txt" 2>"$W/compare.err"
rc=$?
b=$(now)
echo "kgate compare (5 + 5 processes a benchmark): exit $rc, $(secs "$a" "$b") s"
a=$(now)
"$KGATE" check --db "$W/k.db" --commit head --baseline base >"$W/check.txt" 2>"$W/check.err"
rc=$?
b=$(now)
echo "kgate check: exit $rc, $(secs "$a" "$b") s"
a=$(now)
"$KGATE" explain --db "$W/k.db" --commit head --baseline base --collect --base-dir "$W/base" \
	>"$W/explain.txt" 2>"$W/explain.err"
rc=$?
b=$(now)
t=$(secs "$a" "$b")
echo "kgate explain --collect --base-dir: exit $rc, $t s for the FAILed kernels (2 expected)"
echo "--- check"
cat "$W/check.txt"
echo "--- explain"
cat "$W/explain.txt"
echo "--- explain stderr (last lines)"
tail -5 "$W/explain.err"
# the stored explanations, as the pull request comment and the report show them
"$KGATE" comment --db "$W/k.db" --commit head --print >"$W/comment.md" 2>"$W/comment.err"
echo "--- comment --print: $(grep -c '^<details><summary>rules and counters' "$W/comment.md") explanations"
sed -n '/^#### Why/,$p' "$W/comment.md" | grep -v '^|' | grep . | head -8 | cut -c1-240
"$KGATE" report --db "$W/k.db" --html "$W/report.html" 2>"$W/report.err"
echo "--- report: $(grep -c '<p class="why">' "$W/report.html") explanations"
