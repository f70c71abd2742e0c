#!/bin/sh
# demo.sh: kgate's main job once, on an embedded SQLite file (`make demo`).
#
# Records a baseline commit of the benchmark suite, then a commit where one
# kernel really does 5% more work (transpose_tiled with --extra-work 0.05),
# checks the second against the first (the gate must fail on exactly that
# kernel and say by how much), and writes the HTML trend report.
#
# With a GPU (nvidia-smi lists one, and KGATE_DEMO_REPLAY is unset) the
# suite is built and measured here with `kgate run`.  Without one, the same
# story is told with records files recorded on an NVIDIA H200 and committed
# under tests/fixtures/h200/suite/ (their README says how and when): it
# replays recorded data, and says so.
#
# Everything lands in $KGATE_BUILD/demo/ (kgate.db, report.html, check.*).
# Exit status 0 when the gate caught the regression as it should.
set -u
here=$(cd "$(dirname "$0")" && pwd)
SRC=${KGATE_SRC:-$(cd "$here/.." && pwd)}
BUILD=${KGATE_BUILD:-$SRC/build}
KGATE=${KGATE:-$BUILD/kgate}
FIX=$SRC/tests/fixtures/h200/suite
D=$BUILD/demo
DB=$D/kgate.db
REGRESSED=transpose_tiled

say() { printf '%s\n' "$*" >&2; }
die() { say "demo: $*"; exit 3; }

[ -x "$KGATE" ] || die "no kgate binary at '$KGATE' (run 'make' first)"
rm -rf "$D"
mkdir -p "$D" || die "cannot create '$D'"

if [ -z "${KGATE_DEMO_REPLAY:-}" ] && nvidia-smi -L >/dev/null 2>&1; then
	say "== a GPU is here: building the suite and measuring it"
	make -s -C "$SRC" benchmarks >&2 || die "cannot build the benchmarks (make benchmarks)"
	# The suite twice, with absolute paths; the second with the regression.
	sed -e "s|build/benchmarks/|$BUILD/benchmarks/|" \
	    -e "s|thresholds/default.yaml|$SRC/thresholds/default.yaml|" \
	    "$SRC/kgate.yaml" >"$D/base.yaml"
	awk -v b="$REGRESSED" '
		/^  - name: / { cur = $3 }
		cur == b && /^    cmd: / { sub(/\]$/, ", --extra-work, \"0.05\"]") }
		{ print }' "$D/base.yaml" >"$D/head.yaml"
	say "== commit demo-base: the suite as it is"
	"$KGATE" run -c "$D/base.yaml" --db "$DB" --commit demo-base --branch main ||
		die "kgate run failed on the base suite"
	say "== commit demo-head: $REGRESSED does 5% more work"
	"$KGATE" run -c "$D/head.yaml" --db "$DB" --commit demo-head --branch demo ||
		die "kgate run failed on the head suite"
else
	[ -d "$FIX/trace/base" ] || die "no GPU here, and no recorded suite under '$FIX'"
	say "== no GPU here: replaying records files recorded on an NVIDIA H200"
	say "   ($FIX; see tests/fixtures/h200/README.md for how and when)"
	for side in base head; do
		set --
		for f in "$FIX/trace/$side"/*.jsonl; do
			b=$(basename "$f")
			set -- "$@" --benchmark "${b%%.*}" --records "$f"
		done
		branch=main
		[ "$side" = head ] && branch=demo
		if [ "$side" = base ]; then
			say "== commit demo-base: the suite as recorded"
		else
			say "== commit demo-head: recorded with $REGRESSED doing 5% more work"
		fi
		"$KGATE" ingest --db "$DB" --commit "demo-$side" --branch "$branch" "$@" ||
			die "kgate ingest failed on the recorded $side suite"
	done
fi

say "== kgate check --commit demo-head --baseline demo-base"
"$KGATE" check --db "$DB" --commit demo-head --baseline demo-base --no-store \
	--format json >"$D/check.json" 2>/dev/null
"$KGATE" check --db "$DB" --commit demo-head --baseline demo-base >"$D/check.txt"
cat "$D/check.txt"
verdict=$(sed -n 's/^  "verdict": "\(.*\)",$/\1/p' "$D/check.json")
if "$KGATE" report --db "$DB" --html "$D/report.html" >/dev/null 2>&1; then
	say "== the trend report: $D/report.html"
fi
# table rows: "FAIL     <benchmark> [<nvtx>]: <kernel>  <metric> ..." (the column
# is padded; the detail lines below the table have one space after FAIL)
rows=$(grep -E '^FAIL {2,}[^ :]+( \[[^]]*\])?: ' "$D/check.txt")
failed=$(printf '%s\n' "$rows" | grep -c .)
others=$(printf '%s\n' "$rows" | awk -v b="$REGRESSED" '{ n = $2; sub(/:$/, "", n) } n != b' | grep -c .)
if [ "$verdict" = FAIL ] && [ "$others" -eq 0 ]; then
	s=s; [ "$failed" -eq 1 ] && s=
	say "== the gate failed on $REGRESSED alone ($failed comparison$s), as it should"
	exit 0
fi
say "demo: the gate should have failed on $REGRESSED alone (verdict '$verdict', $others other failing comparisons)"
exit 1
