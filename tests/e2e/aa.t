#!/bin/sh
# aa.t: "kgate compare --confirm" replayed on the processes that
# benchmarks/self/gpu/aa_confirm.sh recorded on an NVIDIA H100
# (tests/fixtures/h100/aa/, README there): the A/A compares (the program
# against itself, a hundred kernel identities) and the power compares (its
# kernels made 2%, 3% and 5% slower, at the default thresholds and at a 1%
# limit).  Each compare is replayed with its recorded seed; the double
# aa_replay.py gives each side's processes back in the order they ran on the
# GPU, so the verdicts must be the ones the GPU job got: the same verdicts,
# the same confirmation rounds, the same messages (a digest of every
# comparison's line) and the same number of processes run.
#
# By default a subset: the first 8 A/A compares and one compare of each
# kind of power compare that the 1% and 3% limits tell apart;
# KGATE_AA_ALL=1 replays all 44 (about 2 minutes).
. "$(dirname "$0")/lib.sh"

if ! command -v python3 >/dev/null; then
	echo "1..0 # skip python3 is needed for the replay double"
	exit 0
fi
AA="$FIX/h100/aa"
REPLAY="$KGATE_SRC/tests/e2e/aa_replay.py"
: > "$T/libkgate-collector.so"
export KGATE_COLLECTOR="$T/libkgate-collector.so"

# the recorded job itself: at least 3,000 A/A timing comparisons, none FAIL
is "$(awk -F'\t' '$1 ~ /^aa-/ { n++; split($8, v, " "); for (i in v) { split(v[i], kv, "="); c[kv[1]] += kv[2] } }
	END { printf "%d compares, PASS %d, FAIL %d, INCONCLUSIVE %d", n, c["PASS"], c["FAIL"], c["INCONCLUSIVE"] }' "$AA/compares.tsv")" \
	"32 compares, PASS 3200, FAIL 0, INCONCLUSIVE 0" \
	"the recorded A/A job: 3,200 timing comparisons, no FAIL (one-sided 95% bound 3/3200, under 0.1%)"

# replay NAME: one recorded compare again; sets $got and $want
replay() {
	line=$(awk -F'\t' -v n="$1" '$1 == n' "$AA/compares.tsv")
	IFS='	' read -r name th head seed first nproc ex verdicts rounds digest <<EOF
$line
EOF
	d="$T/$name"
	mkdir -p "$d/state" "$d/base" "$d/head"
	echo "$first" > "$d/state/start"
	for side in base head; do
		lab=base
		[ "$side" = head ] && lab=$head
		cat > "$d/$side/kgate.yaml" <<EOF
version: 1
thresholds: $KGATE_SRC/thresholds/default.yaml
collector: { mode: trace }
benchmarks:
  - name: many
    cmd: [python3, $REPLAY, $AA, $d/state, "$lab"]
    repeat: 2
    timeout: 60s
EOF
	done
	tf="$KGATE_SRC/thresholds/default.yaml"
	if [ "$th" = pct1 ]; then
		sed 's/regression: 3%/regression: 1%/' "$tf" > "$d/pct1.yaml"
		tf="$d/pct1.yaml"
	fi
	run "$KGATE" compare --base-dir "$d/base" --head-dir "$d/head" -t "$tf" --db "$d/k.db" \
		--confirm --seed "$seed" --format json
	printf '%s\n' "$out" > "$d/out.json"
	got="exit $rc, $(wc -l < "$d/state/used" | tr -d ' ') processes, $(python3 - "$d/out.json" <<'EOF'
import collections, hashlib, json, re, sys
d = json.load(open(sys.argv[1]))
n, rounds = collections.Counter(), collections.Counter()
for r in d["results"]:
    if r["metric"] != "gpu__time_duration.sum" or "compute" not in (r.get("nvtx") or ""):
        continue
    n[r["verdict"]] += 1
    m = re.search(r"in (\d+) (?:confirmation )?round", r.get("message") or "")
    rounds[int(m.group(1)) if m else 0] += 1
lines = sorted("%s|%s|%s|%s" % (r["nvtx"], r["metric"], r["verdict"], r.get("message") or "")
               for r in d["results"])
print(" ".join("%s=%d" % kv for kv in sorted(n.items())), "rounds",
      " ".join("%d:%d" % kv for kv in sorted(rounds.items())),
      hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16])
EOF
)"
	want="exit $ex, $nproc processes, $verdicts rounds $rounds $digest"
}

if [ "${KGATE_AA_ALL:-0}" = 1 ]; then
	names=$(awk -F'\t' 'NR > 1 { print $1 }' "$AA/compares.tsv")
else
	names="aa-0 aa-1 aa-2 aa-3 aa-4 aa-5 aa-6 aa-7 power-default-0.02-0 power-default-0.03-0 power-default-0.05-0 power-pct1-0.02-0"
fi
for c in $names; do
	replay "$c"
	is "$got" "$want" "$c replayed: the GPU job's verdicts, rounds, messages and processes"
done

# The same job's first two steps, from the database it wrote on the GPU
# (tests/fixtures/h100/gpu_state/state.sqlite): the suite's GPU state as kgate
# stats showed it there, and a run beside a second program computing on the
# GPU, warned about by check.
GS="$FIX/h100/gpu_state"
cp "$GS/state.sqlite" "$T/state.db"
run "$KGATE" stats --db "$T/state.db" --run 1 --report gpu_state
is "$out" "$(cat "$GS/state.txt")" "gpu_state of the suite's run: clocks, temperature, power, no other process, as on the GPU"
run "$KGATE" stats --db "$T/state.db" --run 2 --report gpu_state
like "$out" "stream_triad: SM 1980 MHz .*
    seen: 1 other process computing \(pid 819\)" "gpu_state of the run beside the hog: the other process seen"
run "$KGATE" check --db "$T/state.db" -t "$KGATE_SRC/thresholds/default.yaml" \
	--commit bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb --baseline aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
is "$rc" 1 "check of the busy run: tail_wave FAILs (+98%, the GPU shared)"
is "$err" "$(cat "$GS/check_busy.err")" "and warns, per benchmark, of the other process computing"
is "$out" "$(cat "$GS/check_busy.txt")" "its verdicts as on the GPU"

# the double refuses to make up a process it does not have
mkdir -p "$T/none"
echo 99999 > "$T/none/start"
KGATE_RECORDS="$T/none/r.%p.jsonl" python3 "$REPLAY" "$AA" "$T/none" base 2> "$T/none/err"
is "$?" 1 "the double: no recorded process left is an error"

done_testing
