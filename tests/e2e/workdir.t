#!/bin/sh
# workdir.t: what kgate finds and says wherever it is started: kgate.yaml
# and kgate.db from a subdirectory (as git finds its top level, and not
# above it), one message and exit status for a missing database from every
# command, errors of --format json as a JSON object on stdout, and a branch
# without runs answered with the branches stored.
. "$(dirname "$0")/lib.sh"
SUITE="$SHARED_FIX/suite/trace"
REC=$(ls "$SUITE/base"/transpose_tiled.*.jsonl | head -n 1)

# --- found from a subdirectory
R="$T/proj"
mkdir -p "$R/src/deep" && git -C "$R" init -q
for c in c1 c2; do
	"$KGATE" ingest --db "$R/kgate.db" --commit $c --branch main --benchmark transpose_tiled \
		--records "$REC" 2>/dev/null
done
cat >"$R/kgate.yaml" <<'YEOF'
version: 1
thresholds: strict.yaml
benchmarks:
  - name: transpose_tiled
    cmd: [./bench]
YEOF
cat >"$R/strict.yaml" <<'YEOF'
version: 1
defaults:
  gpu__time_duration.sum: { regression: 0.5% }
YEOF
run sh -c "cd '$R/src/deep' && '$KGATE' stats --commit c1 --report kernel_sum --format csv"
is "$rc" 0 "stats from a subdirectory finds the top level's kgate.db"
like "$out" "tr_tiled" "and reads it"
run sh -c "cd '$R/src/deep' && '$KGATE' check --commit c2 --baseline c1 --no-store --format json"
is "$rc" 0 "check from a subdirectory finds kgate.db"
is "$(printf '%s\n' "$out" | jq -r '[.results[] | select(.metric == "gpu__time_duration.sum" and .threshold != null)][0].threshold')" "0.005" \
	"and the kgate.yaml above it, with its thresholds file"
run sh -c "cd '$R/src/deep' && KGATE_DB='$T/none.db' '$KGATE' stats --commit c1 --report kernel_sum"
is "$rc" 2 "KGATE_DB still wins over the one found"
# not above the repository's top level
mkdir -p "$T/outer/inner/sub" && git -C "$T/outer/inner" init -q
cp "$R/kgate.db" "$T/outer/kgate.db"
run sh -c "cd '$T/outer/inner/sub' && '$KGATE' stats --commit c1 --report kernel_sum"
is "$rc" 2 "a kgate.db above the repository's top level is not taken"
like "$err" "cannot open 'kgate.db': no such database" "and the one here is said missing"

# --- one missing-database message and exit status for every reader
for c in "check" "explain k" "stats --report kernel_sum" "report --html $T/r.html" \
	"comment --print --commit c1"; do
	run sh -c "cd '$T' && '$KGATE' $c --db '$T/none.db'"
	is "$rc" 2 "${c%% *}: a missing database exits 2"
	like "$err" "^kgate: cannot open '$T/none.db': no such database \(store runs first with 'kgate run' or 'kgate ingest'" \
		"${c%% *}: one message"
done
ok "no reader created the database" test ! -e "$T/none.db"

# --- --format json: errors as one JSON object on stdout
for c in "check" "stats --report kernel_sum" "ingest --commit x --records $T/no.jsonl" "run -c $T/no.yaml"; do
	run sh -c "cd '$T' && '$KGATE' $c --db '$T/none.db' --format json"
	ok "${c%% *} --format json: exit status 2 or 3 ($rc)" test "$rc" -ge 2
	is "$(printf '%s\n' "$out" | jq -r '.exit_status')" "$rc" "${c%% *} --format json: the error is a JSON object on stdout with the exit status"
	is "$(printf '%s\n' "$out" | jq -r '.error')" "$(printf '%s\n' "$err" | grep '^kgate: ' | grep -v 'warning: ' | head -n 1 | sed 's/^kgate: //')" \
		"${c%% *} --format json: its error is the one on stderr"
done
run "$KGATE" check --format=json --bogus
is "$(printf '%s\n' "$out" | jq -r '.error')" "unknown option '--bogus'; see 'kgate check --help'" "a bad option too"
run "$KGATE" check --bogus
is "$out" "" "without --format json stdout stays empty"

# --- a branch without runs: the branches stored, the nearest first
run "$KGATE" report --db "$R/kgate.db" --branch mian --html "$T/m.html"
like "$err" "--branch 'mian' has no stored run; did you mean 'main'\? \(stored branches: main\)" "report --branch mian names the stored branches"
done_testing
