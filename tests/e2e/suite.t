#!/bin/sh
# suite.t: the benchmark suite as recorded on an H200 (tests/fixtures/h200/
# suite): records files of both modes ingest; the real regression (transpose
# with 5% more work) fails the check on exactly that benchmark, in time and in
# its deterministic counters; processes of the same build compared with each
# other (an A/A check on real data) raise no false alarm; and the demo
# replays it all.
. "$(dirname "$0")/lib.sh"

S="$FIX/h200/suite"
DB="$T/s.db"
unset GITHUB_STEP_SUMMARY

ingest() { # commit dir [repeat-glob]
	c=$1 d=$2 g=${3:-*}
	set --
	for f in "$d"/*.$g.*.jsonl; do
		b=$(basename "$f")
		set -- "$@" --benchmark "${b%%.*}" --records "$f"
	done
	"$KGATE" ingest --db "$DB" --commit "$c" "$@" 2>"$T/ingest.err"
}

ingest tb "$S/trace/base"
is "$?" 0 "the trace-mode base suite ingests"
like "$(cat "$T/ingest.err")" "9 benchmarks" "all nine benchmarks"
ingest th "$S/trace/head"
run "$KGATE" check --db "$DB" --commit th --baseline tb --no-store --format json
is "$rc" 1 "the regression fails the check"
is "$(printf '%s' "$out" | jq -r '[.results[] | select(.fails) | .benchmark] | unique | join(",")')" \
	transpose_tiled "only transpose_tiled fails"
is "$(printf '%s' "$out" | jq -r '[.results[] | select(.fails) | .metric] | unique | join(",")')" \
	"gpu__time_duration.sum" "in time"
is "$(printf '%s' "$out" | jq -r '[.results[] | select(.verdict == "CHANGED") | .benchmark + " " + .metric] | unique | join(",")')" \
	"transpose_tiled launch__grid_size" "and its grid size is reported as CHANGED, not failed"
is "$(printf '%s' "$out" | jq -r '[.results[] | select(.verdict == "CHANGED" and .metric == "launch__grid_size")][0].shift * 10000 | round')" \
	508 "the grid grew by 5.08%, as 5% more rows need"

# A/A on real data: repeats 0-1 against repeats 2-3 of the same build.
ingest a01 "$S/trace/base" "[01]"
ingest a23 "$S/trace/base" "[23]"
run "$KGATE" check --db "$DB" --commit a23 --baseline a01 --no-store --format json
is "$rc" 0 "processes of one build compared with each other: no regression"
is "$(printf '%s' "$out" | jq -r '.summary.failed')" 0 "no false alarm in any comparison"
diag "A/A on recorded data: $(printf '%s' "$out" | jq -r '.summary | "\(.passed) passed, \(.inconclusive) inconclusive"')"

ingest mb "$S/metrics/base"
is "$?" 0 "the metrics-mode base suite ingests"
ingest mh "$S/metrics/head"
run "$KGATE" check --db "$DB" --commit mh --baseline mb --no-store --format json
is "$rc" 1 "metrics mode: the regression fails"
is "$(printf '%s' "$out" | jq -r '[.results[] | select(.fails) | .benchmark] | unique | join(",")')" \
	transpose_tiled "metrics mode: only transpose_tiled fails"
like "$(printf '%s' "$out" | jq -r '[.results[] | select(.fails) | .metric] | unique | join(",")')" \
	"smsp__inst_executed.sum" "the instruction count shows the extra work"

run env KGATE_DEMO_REPLAY=1 KGATE_BUILD="$T/build" sh "$KGATE_SRC/scripts/demo.sh"
is "$rc" 0 "the demo (replaying the recorded suite) exits 0"
like "$err" "replaying records files recorded on an NVIDIA H200" "and says it replays recorded data"
like "$err" "the gate failed on transpose_tiled alone" "the gate caught the regression"
ok "the trend report is written" test -s "$T/build/demo/report.html"

done_testing
