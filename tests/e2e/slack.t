#!/bin/sh
# slack.t: the webhook (Slack) summary of `kgate report --post` writes
# numbers and names as every other output does: each regression line names
# the benchmark, the NVTX path (so warmup and compute are told apart), the
# kernel and the metric, with values in their unit and the commit at 12
# digits.  Input: a real H200 recording (tests/fixtures/h200/calib/:
# transpose_tiled, six rounds as measured, then six with 5% more work), each
# file stored as one commit of main; only the header's time is rewritten, an
# hour apart in that order, so that the history has a step.
. "$(dirname "$0")/lib.sh"
PY=python3
DB="$T/s.db"
C="$FIX/h200/calib/transpose_tiled"
i=0
for e in 0 0.05; do
	for f in "$C/$e"/*.jsonl; do
		i=$((i + 1))
		sed "1s/\"time\":[0-9]*/\"time\":$((1796290000 + i * 3600))/" "$f" >"$T/r$i.jsonl"
		"$KGATE" ingest --db "$DB" --commit "$(printf '%040x' $((i + 4096)))" --branch main \
			--benchmark transpose_tiled --records "$T/r$i.jsonl" 2>/dev/null
	done
done
STEP=$(printf '%040x' $((6 + 1 + 4096)))
is "$(sqlite3 "$DB" "SELECT count(*) FROM runs")" 12 "twelve runs of one benchmark stored"

printf '{}\n' >"$T/script.json"
: >"$T/hook.jsonl"
$PY "$KGATE_SRC/tests/e2e/httpd.py" "$T/script.json" "$T/hook.jsonl" "$T/port" &
SRV=$!
trap 'kill $SRV 2>/dev/null; rm -rf "$T"' EXIT
n=0; while [ ! -s "$T/port" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
run "$KGATE" report --db "$DB" --branch main --post "http://127.0.0.1:$(cat "$T/port")/hook"
is "$rc" 0 "--post exits 0"
summary=$($PY -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])][-1]
print(json.loads(r["body"])["text"])' "$T/hook.jsonl")
lines=$(printf '%s\n' "$summary" | grep '^• ')
ok "the summary lists regressions" test -n "$lines"
like "$lines" "^• transpose_tiled \[compute\] / [^/]+ / gpu__time_duration.sum: " \
	"a line names the benchmark, the NVTX path compute, the kernel and the metric"
like "$lines" "^• transpose_tiled \[warmup\] / " "the warmup range's line is told apart by its path"
is "$(printf '%s\n' "$lines" | sort | uniq -d | wc -l | tr -d ' ')" 0 "no two lines are the same"
like "$lines" "gpu__time_duration.sum: [0-9.]+ [num]?s → [0-9.]+ [num]?s \(\+[0-9.]+%\) at \`$(printf '%.12s' "$STEP")\`" \
	"values in their unit, the step's size and its commit at 12 digits"
unlike "$summary" "$STEP" "no whole SHA in the text"
done_testing
