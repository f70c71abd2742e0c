#!/bin/sh
# kill.sh [N]: SIGKILL "kgate ingest" and "kgate run" at random points, N
# times each (default 200), and check after every kill that the database
# passes PRAGMA integrity_check and holds either the whole run or none of it.
#
# The inputs are TEST DATA: synthetic records files (gen-records.sh) and a
# test-double benchmark that copies one into place as the collector would.
# Each kill lands after a random delay within the time the command takes
# when not killed.  A kill is classed by what it left: "nothing written"
# (no page of the run reached the WAL yet), "during" (the run's transaction had written pages to the
# WAL, but no run is there: rolled back on the next open), "after" (the
# whole run is there).  Prints the counts; exits 1 on any failure.
: "${KGATE:?KGATE must name the kgate binary}"
N=${1:-200}
here=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/kgate-kill.XXXXXX")
trap 'rm -rf "$W"' EXIT
export TMPDIR="$W/tmp" NO_COLOR=1
mkdir "$TMPDIR"
RECS=${KILL_RECORDS:-40000}
fail=0

sh "$here/gen-records.sh" 10 > "$W/small.jsonl"
sh "$here/gen-records.sh" "$RECS" > "$W/big.jsonl"
"$KGATE" ingest --db "$W/base.db" --records "$W/small.jsonl" --commit earlier 2>/dev/null || exit 1
sqlite3 "$W/base.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
base_samples=$(sqlite3 "$W/base.db" "SELECT count(*) FROM samples")

# rand_delay MAX_MS: a random delay in seconds, 0 .. MAX_MS ms
rand_delay() {
	r=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	awk -v r="$r" -v m="$1" 'BEGIN { printf "%.3f", (r % (m + 1)) / 1000 }'
}
now_ms() { date +%s%3N; }

# verify LABEL WANT_SAMPLES: classify the database left by a kill
verify() {
	db="$W/work.db"
	walsz=$(stat -c %s "$db-wal" 2>/dev/null || echo 0)
	ic=$(sqlite3 "$db" "PRAGMA integrity_check" 2>&1)
	if [ "$ic" != ok ]; then
		echo "FAIL $1: integrity_check: $ic"; fail=1; integrity=$((integrity + 1)); return
	fi
	runs=$(sqlite3 "$db" "SELECT count(*) FROM runs")
	s=$(sqlite3 "$db" "SELECT count(*) FROM samples")
	earlier=$(sqlite3 "$db" "SELECT count(*) FROM samples WHERE run = 1")
	if [ "$earlier" != "$base_samples" ]; then
		echo "FAIL $1: the earlier run has $earlier samples, not $base_samples"; fail=1; partial=$((partial + 1))
	elif [ "$runs" = 1 ] && [ "$s" = "$base_samples" ]; then
		if [ "$walsz" -gt 0 ]; then during=$((during + 1)); else before=$((before + 1)); fi
	elif [ "$runs" = 2 ] && [ "$s" = $((base_samples + $2)) ]; then
		after=$((after + 1))
	else
		echo "FAIL $1: $runs runs and $s samples: a partial run"; fail=1; partial=$((partial + 1))
	fi
}

# loop LABEL WANT_SAMPLES CMD...: N kills of CMD (run against $W/work.db)
loop() {
	label=$1 want=$2; shift 2
	before=0 during=0 after=0 partial=0 integrity=0
	cp "$W/base.db" "$W/work.db"
	t0=$(now_ms); "$@" >/dev/null 2>&1; t1=$(now_ms)
	full=$((t1 - t0))
	verify "$label (not killed)" "$want"
	if [ "$after" != 1 ]; then echo "FAIL $label: the unkilled command did not store its run"; fail=1; fi
	after=0
	i=0
	while [ "$i" -lt "$N" ]; do
		rm -f "$W/work.db-wal" "$W/work.db-shm"
		cp "$W/base.db" "$W/work.db"
		d=$(rand_delay "$full")
		"$@" >/dev/null 2>&1 &
		pid=$!
		sleep "$d"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		# a benchmark in its own process group outlives kgate: let it end
		[ -n "$KILL_WAIT" ] && eval "$KILL_WAIT"
		verify "$label (kill $i after ${d}s)" "$want"
		i=$((i + 1))
	done
	echo "$label: $N kills over ${full} ms: nothing written yet $before, during the transaction (uncommitted pages in the WAL) $during, after the commit $after; partial runs $partial; integrity failures $integrity"
}

loop ingest $((RECS * 7)) "$KGATE" ingest --db "$W/work.db" --records "$W/big.jsonl" --commit killed

# kgate run: a test-double benchmark (3 repeats) that sleeps a little, then
# copies a synthetic records file to where the collector would write it.
: > "$W/libkgate-collector.so"
export KGATE_COLLECTOR="$W/libkgate-collector.so" KGATE_CUPTI="$W/libkgate-collector.so"
RUNRECS=$((RECS / 4))
sh "$here/gen-records.sh" "$RUNRECS" > "$W/run.jsonl"
cat > "$W/fake" <<EOB
#!/bin/sh
# TEST DOUBLE for a benchmark under the collector: synthetic records only.
sleep 0.1
cp "$W/run.jsonl" "\$(printf '%s' "\$KGATE_RECORDS" | sed "s/%p/\$\$/g")"
EOB
chmod +x "$W/fake"
printf '%s\n' "version: 1" "benchmarks:" "  - name: fake" "    cmd: [\"$W/fake\"]" \
	"    repeat: 3" "    warmup: 0" > "$W/suite.yaml"
KILL_WAIT='while pgrep -f "^/bin/sh $W/fake" >/dev/null; do sleep 0.05; done'
loop run $((RUNRECS * 7 * 3)) "$KGATE" run -c "$W/suite.yaml" --db "$W/work.db" --commit killed
left=$(ls "$TMPDIR" | wc -l)
echo "run: scratch directories left by killed runs: $left"
exit $fail
