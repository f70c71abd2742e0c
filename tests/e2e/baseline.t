#!/bin/sh
# baseline.t: a check with no baseline is never a silent PASS, and what a
# check compares with is said.  An explicit --baseline without a run on the
# head's GPU model and driver is an error that lists what is stored; the
# default baseline missing (a first run, an evicted cache, a shallow clone,
# a driver update) is the NO BASELINE verdict with a note naming the ref
# tried and the default branch, and on_no_baseline decides the exit status.
# Partial runs (kgate run --only, an ingest of some benchmarks) compare
# only the benchmarks both sides ran.  Short SHAs and refs are stored and
# looked up as full SHAs.
#
# Data: the H200 suite recorded in tests/fixtures/h200/suite (trace mode),
# ingested, and replayed through "kgate run" by a stand-in benchmark that
# copies a recorded records file where the collector would write it.
. "$(dirname "$0")/lib.sh"

S="$FIX/h200/suite/trace"
DB="$T/b.db"
unset GITHUB_STEP_SUMMARY GITHUB_ACTIONS GITHUB_HEAD_REF GITHUB_REF_NAME
R="$T/repo"
g() { git -C "$R" -c user.name=t -c user.email=t@t -c init.defaultBranch=main "$@" >/dev/null 2>&1; }
mkdir "$R" && g init && g commit --allow-empty -m one && g commit --allow-empty -m two
c2=$(git -C "$R" rev-parse HEAD)
c1=$(git -C "$R" rev-parse HEAD~1)
g checkout -b feature && g commit --allow-empty -m three
c3=$(git -C "$R" rev-parse HEAD)
short3=$(printf '%.7s' "$c3")
short2=$(printf '%.7s' "$c2")

ingest() { # commit branch side benchmark... (repeats 0-4 of each)
	c=$1 b=$2 side=$3
	shift 3
	set -- $(for n in "$@"; do for f in "$S/$side/$n".*.jsonl; do printf -- '--benchmark %s --records %s ' "$n" "$f"; done; done)
	(cd "$R" && "$KGATE" ingest --db "$DB" --commit "$c" --branch "$b" "$@")
}
check() { run sh -c "cd '$R' && '$KGATE' check --db '$DB' $*"; }

# --- short SHAs -----------------------------------------------------------
ingest "$short3" feature base matmul_naive matmul_tiled 2>"$T/err"
like "$(cat "$T/err")" "stored run 1 \(commit $(printf '%.12s' "$c3")" "ingest --commit with a short SHA says the full one"
is "$(sqlite3 "$DB" "SELECT commit_sha FROM runs WHERE id = 1")" "$c3" "and stores the full SHA git resolves"
ingest HEAD~1 main base matmul_naive matmul_tiled 2>/dev/null
is "$(sqlite3 "$DB" "SELECT commit_sha FROM runs WHERE id = 2")" "$c2" "a ref is stored as its full SHA too"
check --commit "$short3" --baseline "$short2" --no-store
is "$rc" 0 "check takes short SHAs for both sides"
like "$out" "^kgate check: $(printf '%.12s' "$c3") against $(printf '%.12s' "$c2")" "and names the head commit at 12 digits"
check --commit "$c3" --baseline "$c2"
run sh -c "cd '$R' && '$KGATE' comment --db '$DB' --commit '$short3' --print"
is "$rc" 0 "comment --commit takes a short SHA"
like "$out" "Commit \`$(printf '%.12s' "$c3")\`" "and finds the stored check"
run "$KGATE" ingest --db "$DB" --commit deadbee --benchmark x --records "$S/base/matmul_naive.0.1566.jsonl"
like "$err" "'deadbee' looks like a short commit SHA, but git cannot resolve it here" \
	"outside a repository a short SHA is stored as given, with a warning"

# --- an explicit --baseline with no run on this GPU -----------------------
check --commit "$c3" --baseline "$c1"
is "$rc" 2 "an explicit --baseline with no stored run is exit 2"
like "$err" "baseline '$c1' \\($(printf '%.12s' "$c1")\\) has no stored run on NVIDIA H200 with driver 13000" \
	"the message names the ref tried and the GPU"
like "$err" "stored for NVIDIA H200: deadbee \\(no branch, driver 13000\\), $(printf '%.12s' "$c2") \\(branch main, driver 13000\\)" \
	"and what is stored for that GPU, newest first, with branches"
check --commit "$c3" --baseline HEAD~2
is "$rc" 2 "also when given as a ref"
like "$err" "baseline 'HEAD~2' \\($(printf '%.12s' "$c1")\\)" "which is named as given and resolved"

# --- the default baseline: merge base, else newest run of main ------------
check --commit "$c3" --no-store
is "$rc" 0 "the merge base with main is the baseline"
like "$out" "against $(printf '%.12s' "$c2") \\(merge base with main\\)" "and is named"

# nothing of main stored (the cache was evicted): NO BASELINE, never PASS
rm -f "$DB"
ingest "$c3" feature base matmul_naive 2>/dev/null
check --commit "$c3"
is "$rc" 0 "no baseline at all: exit 0 under on_no_baseline: warn (the default)"
like "$out" "NO BASELINE \\(on_no_baseline: warn\\)$" "the verdict is NO BASELINE"
unlike "$out" ": PASS$" "never PASS"
like "$out" "^no baseline: the merge base $(printf '%.12s' "$c2") of $(printf '%.12s' "$c3") with the default branch main has no stored run" \
	"the note names the merge base and the default branch"
like "$err" "no baseline: .*default branch main" "and so does the warning"
is "$(sqlite3 "$DB" "SELECT verdict || ' ' || exit_status FROM checks")" "no_baseline 0" "the stored outcome is no baseline"
printf 'version: 1\non_no_baseline: fail\n' >"$T/strict.yaml"
check --commit "$c3" -t "$T/strict.yaml" --no-store
is "$rc" 1 "under on_no_baseline: fail it is exit 1"
like "$out" "NO BASELINE \\(on_no_baseline: fail\\)$" "still the NO BASELINE verdict"
printf 'version: 1\non_no_baseline: ignore\n' >"$T/bad.yaml"
check --commit "$c3" -t "$T/bad.yaml" --no-store
is "$rc" 2 "on_no_baseline takes fail or warn only"
like "$err" "bad.yaml:2:17: 'on_no_baseline' must be fail or warn, got 'ignore'" "file:line:column"

# a shallow clone: said, with the fix
git clone -q --depth 1 "file://$R" "$T/shallow" 2>/dev/null
git -C "$T/shallow" fetch -q --depth 1 origin main:refs/remotes/origin/main 2>/dev/null
git -C "$T/shallow" remote set-head origin main 2>/dev/null
run sh -c "cd '$T/shallow' && '$KGATE' check --db '$DB' --commit '$c3' --no-store"
is "$rc" 0 "a shallow clone without the merge base: no baseline"
like "$out" "shallow clone.*fetch-depth: 0" "says it is a shallow clone and how to fix it"

# a driver update: the stored runs of main are on another driver
ingest "$c2" main base matmul_naive 2>/dev/null
sqlite3 "$DB" "UPDATE runs SET driver = '12090' WHERE commit_sha = '$c2'"
check --commit "$c3" --no-store --format json
is "$rc" 0 "after a driver update: exit 0 under warn"
is "$(printf '%s' "$out" | jq -r .verdict)" "NO BASELINE" "but the verdict is NO BASELINE, not a PASS of new kernels"
is "$(printf '%s' "$out" | jq -r '.results | length')" 0 "no kernel is reported as new"
like "$(printf '%s' "$out" | jq -r .no_baseline)" "has runs on NVIDIA H200 with driver 12090.*never compared" \
	"the note says the runs are on another driver"

# --- partial runs -----------------------------------------------------------
rm -f "$DB"
ingest "$c2" main base matmul_naive matmul_tiled transpose_naive 2>/dev/null
ingest "$c3" feature base matmul_tiled 2>/dev/null
check --commit "$c3" --no-store
is "$rc" 0 "an ingest of one benchmark, on unchanged data, passes"
unlike "$out" "MISSING" "the benchmarks it did not run are not MISSING"
like "$out" "^not compared: not run by the head run: matmul_naive, transpose_naive$" "they are named as not compared"
like "$out" ": PASS$" "PASS"
check --commit "$c3" --no-store --format json
is "$(printf '%s' "$out" | jq -r '[.results[].benchmark] | unique | join(",")')" matmul_tiled "only the common benchmark is compared"
# the reverse: the baseline ran less than the head
rm -f "$DB"
ingest "$c2" main base matmul_tiled 2>/dev/null
ingest "$c3" feature base matmul_naive matmul_tiled 2>/dev/null
check --commit "$c3" --no-store --format markdown
is "$rc" 0 "a baseline that ran fewer benchmarks"
like "$out" "\\*\\*Not compared:\\*\\* not run by the baseline run: matmul\\\\_naive" "names the head's extra benchmark"
# nothing in common: no baseline
rm -f "$DB"
ingest "$c2" main base matmul_naive 2>/dev/null
ingest "$c3" feature base matmul_tiled 2>/dev/null
check --commit "$c3" --no-store
like "$out" "^no baseline: the baseline run ran none of the head run's benchmarks" "no benchmark in common is no baseline"
like "$out" "NO BASELINE \\(on_no_baseline: warn\\)$" "with its verdict"

# kgate run --only: a stand-in benchmark replays the recorded H200 files
: >"$T/libkgate-collector.so"
: >"$T/libcupti.so"
export KGATE_COLLECTOR="$T/libkgate-collector.so" KGATE_CUPTI="$T/libcupti.so"
cat >"$T/replay" <<'EOF'
#!/bin/sh
# STAND-IN for a benchmark under the collector: writes the next records file
# recorded on the H200 for benchmark $1 where the collector would.
n=$(cat "$REPLAY_DIR/$1.n" 2>/dev/null || echo 0)
echo $(( (n + 1) % 5 )) >"$REPLAY_DIR/$1.n"
f=$(ls "$REPLAY_SRC/$1".$n.*.jsonl)
cp "$f" "$(printf '%s' "$KGATE_RECORDS" | sed "s/%p/$$/g")"
EOF
chmod +x "$T/replay"
mkdir "$T/rp"
{
	echo "version: 1"
	echo "benchmarks:"
	for b in matmul_naive matmul_tiled; do
		echo "  - name: $b"
		echo "    cmd: [\"$T/replay\", \"$b\"]"
		echo "    repeat: 5"
		echo "    env: { REPLAY_DIR: \"$T/rp\", REPLAY_SRC: \"$S/base\" }"
	done
} >"$T/suite.yaml"
rm -f "$DB"
run sh -c "cd '$R' && '$KGATE' run -c '$T/suite.yaml' --db '$DB' --commit '$c2' --branch main"
is "$rc" 0 "kgate run of the whole suite (replayed)"
run sh -c "cd '$R' && '$KGATE' run -c '$T/suite.yaml' --db '$DB' --commit '$short3' --only tiled"
is "$rc" 0 "kgate run --only one benchmark"
is "$(sqlite3 "$DB" "SELECT group_concat(b.name) FROM run_benchmarks r JOIN benchmarks b ON b.id = r.benchmark WHERE r.run = 2")" \
	matmul_tiled "the run records the one benchmark it ran"
check --no-store --commit "$short3"
is "$rc" 0 "then kgate check passes on unchanged code"
like "$out" "^not compared: not run by the head run: matmul_naive$" "and says which benchmark was not compared"

done_testing
