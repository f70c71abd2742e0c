#!/bin/bash
# aa_confirm.sh: what the GPU was doing, and how often the gate cries wolf,
# on a real GPU in one job:
#
#   benchmarks/self/gpu/aa_confirm.sh OUTDIR
#
#   1. the suite of kgate.yaml once (3 repeats) with kgate run: the GPU's
#      state of every benchmark (kgate stats --report gpu_state);
#   2. a second program computing on the GPU (build/benchmarks/many --variant
#      hog) during a run of two benchmarks: its state, and check's warning
#      against step 1's run; require_idle_gpu with a short idle_wait refusing
#      while it computes, and with a long one waiting for it to end;
#   3. A/A: kgate compare --confirm of build/benchmarks/many (a hundred kernel
#      identities, 2 processes a side) against itself, AA_COMPARES times
#      (default 32) or until AA_SECONDS (default 200) have passed, at the
#      default thresholds;
#   4. power: the same against --extra-work 0.02, 0.03 and 0.05, POWER_COMPARES
#      times each (default 3), at the default thresholds and at a 1% limit;
#   5. ncu's own failures as they print them (a bad metric name, a benchmark
#      that traps on the GPU, a user without profiling permission), for the
#      importer's fixtures.
# Needs build/kgate, the collector and `make benchmarks`; ncu for step 5.
# Prints a table at the end (OUTDIR/table.txt); the databases, every verdict
# in JSON and the logs are packed into OUTDIR/aa.tar.gz and ncu.tar.gz.
set -u
OUT=${1:?give an output directory}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
KGATE=${KGATE:-$ROOT/build/kgate}
MANY=$ROOT/build/benchmarks/many
CUDA=${CUDA:-/usr/local/cuda}
NCU=$(command -v ncu || echo "$CUDA/bin/ncu")
export LD_LIBRARY_PATH="$CUDA/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
W=$OUT/work
mkdir -p "$W/aa" "$W/ncu"
LOG=$OUT/log.txt
TABLE=$OUT/table.txt
: >"$TABLE"
row() { printf '%s\n' "$*" | tee -a "$TABLE"; }
T0=$(date +%s)
# Whatever happened (also when stopped by a time limit), pack what there is.
pack() {
	trap - EXIT TERM INT
	[ -d "$W/aa/rec" ] && python3 "$ROOT/benchmarks/self/gpu/records_tsv.py" "$W/aa/rec" "$W/aa/launches.tsv" &&
		rm -rf "$W/aa/rec" "$W"/aa/*.db
	(cd "$W" && tar czf "$OUT/aa.tar.gz" gpu.txt state.* state_busy.txt check_busy.* idle* hog1.log aa 2>/dev/null)
	(cd "$W" && tar czf "$OUT/ncu.tar.gz" ncu 2>/dev/null)
	rm -rf "$W"
}
trap pack EXIT
trap 'exit 124' TERM INT
el() { echo $(($(date +%s) - T0)); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
	--format=csv,noheader >"$W/gpu.txt" 2>&1
row "gpu: $(cat "$W/gpu.txt")"

# ---- 1. the suite's state -------------------------------------------------
cd "$ROOT" || exit 2
A=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
B=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
sed -e 's/repeat: 10/repeat: 3/' -e "s|^thresholds: |thresholds: $ROOT/|" \
	-e "s|build/benchmarks|$ROOT/build/benchmarks|" kgate.yaml >"$W/suite.yaml"
"$KGATE" run -c "$W/suite.yaml" --db "$W/state.db" --commit $A --branch main --label state >>"$LOG" 2>&1
row "1. suite run (3 repeats): exit $? at $(el) s"
"$KGATE" stats --db "$W/state.db" --report gpu_state >"$W/state.txt" 2>>"$LOG"
"$KGATE" stats --db "$W/state.db" --report gpu_state --format json >"$W/state.json" 2>>"$LOG"
head -30 "$W/state.txt" | tee -a "$TABLE"

# ---- 2. a second program on the GPU ---------------------------------------
"$MANY" --variant hog --n 20 >"$W/hog1.log" 2>&1 &
HOG=$!
sleep 2
"$KGATE" run -c "$W/suite.yaml" --only 'stream_triad|tail_wave' --db "$W/state.db" --commit $B \
	--branch pr --label busy >>"$LOG" 2>&1
row "2a. run beside the hog: exit $?"
"$KGATE" stats --db "$W/state.db" --report gpu_state >"$W/state_busy.txt" 2>>"$LOG"
grep -E 'stream_triad|tail_wave' "$W/state_busy.txt" | tee -a "$TABLE"
"$KGATE" check --db "$W/state.db" -t "$ROOT/thresholds/default.yaml" --commit $B --baseline $A \
	>"$W/check_busy.txt" 2>"$W/check_busy.err"
row "2b. check of the busy run: exit $?; warnings:"
grep -i -E 'warn|process|shared|throttl|clock' "$W/check_busy.err" "$W/check_busy.txt" | head -8 | tee -a "$TABLE"
# require_idle_gpu refusing
sed -e 's/^collector: .*/&\nrequire_idle_gpu: true\nidle_wait: 3s/' "$W/suite.yaml" >"$W/idle.yaml"
t=$(date +%s.%N)
"$KGATE" run -c "$W/idle.yaml" --commit $A --only stream_triad --db "$W/idle.db" >"$W/idle_refuse.txt" 2>&1
rc=$?
row "2c. require_idle_gpu (idle_wait 3s) beside the hog: exit $rc after $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
tail -3 "$W/idle_refuse.txt" | tee -a "$TABLE"
sed -i 's/^idle_wait: 3s/idle_wait: 60s/' "$W/idle.yaml"
t=$(date +%s.%N)
"$KGATE" run -c "$W/idle.yaml" --commit $A --only stream_triad --db "$W/idle.db" >"$W/idle_wait.txt" 2>&1
rc=$?
hog_alive=no
kill -0 "$HOG" 2>/dev/null && hog_alive=yes
row "2d. require_idle_gpu (idle_wait 60s): exit $rc after $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s (hog still running at the end: $hog_alive)"
tail -3 "$W/idle_wait.txt" | tee -a "$TABLE"
wait "$HOG"
row "   hog: $(cat "$W/hog1.log")"

# ---- 5. ncu's failures ------------------------------------------------------
if [ -x "$NCU" ]; then
	"$NCU" --version >"$W/ncu/version.txt" 2>&1
	"$NCU" --clock-control none --csv --metrics no_such__metric.sum "$MANY" --n 2 --iters 1 \
		>"$W/ncu/badmetric.stdout" 2>"$W/ncu/badmetric.stderr"
	echo "badmetric exit $?" >>"$W/ncu/exits.txt"
	"$NCU" --clock-control none --csv --page raw --metrics gpu__time_duration.sum "$MANY" --variant crash --iters 3 \
		>"$W/ncu/crash_raw.stdout" 2>"$W/ncu/crash_raw.stderr"
	echo "crash_raw exit $?" >>"$W/ncu/exits.txt"
	"$NCU" --clock-control none --csv "$MANY" --variant crash --iters 3 \
		>"$W/ncu/crash_details.stdout" 2>"$W/ncu/crash_details.stderr"
	echo "crash_details exit $?" >>"$W/ncu/exits.txt"
	grep -i profiling /proc/driver/nvidia/params >"$W/ncu/params.txt" 2>&1
	if command -v setpriv >/dev/null; then
		cp "$MANY" /tmp/many_nobody && chmod 755 /tmp/many_nobody
		(cd /tmp && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp \
			"$NCU" --clock-control none --csv --metrics gpu__time_duration.sum /tmp/many_nobody --n 2 --iters 1 \
			>"$W/ncu/nobody.stdout" 2>"$W/ncu/nobody.stderr")
		echo "nobody exit $?" >>"$W/ncu/exits.txt"
	fi
	locale -a >"$W/ncu/locales.txt" 2>&1
	row "5. ncu: $(tr '\n' ';' <"$W/ncu/exits.txt") params: $(tr '\n' ' ' <"$W/ncu/params.txt")"
	grep -h '==ERROR==\|==WARNING==\|ERR_NVGPUCTRPERM' "$W"/ncu/*.std* | sort | uniq -c | head -12 | tee -a "$TABLE"
fi
# ---- 3 and 4. A/A and power with --confirm ----------------------------------
KEEP=$ROOT/benchmarks/self/gpu/keep_records.sh
suite() { # dir extra label
	mkdir -p "$1"
	{
		echo "version: 1"
		echo "thresholds: $ROOT/thresholds/default.yaml"
		echo "collector: { mode: trace }"
		echo "benchmarks:"
		echo "  - name: many"
		echo "    cmd: [$KEEP, $W/aa/rec, \"$3\", $MANY, --extra-work, \"$2\"]"
		echo "    repeat: 2"
		echo "    timeout: 60s"
	} >"$1/kgate.yaml"
}
suite "$W/aa/aa-base" 0 base
for l in 0 0.02 0.03 0.05; do suite "$W/aa/aa-head-$l" "$l" "head-$l"; done
sed -e 's/regression: 3%/regression: 1%/' "$ROOT/thresholds/default.yaml" >"$W/aa/pct1.yaml"
# verdicts of a compare's JSON: timing comparisons of the compute path
tally() { # json
	python3 - "$1" <<'EOF'
import json, re, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("unreadable", e); sys.exit(0)
res = d.get("results") or []
n = {}
rounds = {}
for r in res:
    if r.get("metric") != "gpu__time_duration.sum" or "compute" not in (r.get("nvtx") or ""):
        continue
    v = r.get("verdict")
    n[v] = n.get(v, 0) + 1
    m = re.search(r"in (\d+) (?:confirmation )?round", r.get("message") or "")
    c = int(m.group(1)) if m else 0
    rounds[c] = rounds.get(c, 0) + 1
print(" ".join(f"{k}={v}" for k, v in sorted(n.items())), "rounds:", " ".join(f"{k}:{v}" for k, v in sorted(rounds.items())))
EOF
}
AA_COMPARES=${AA_COMPARES:-32}
AA_SECONDS=${AA_SECONDS:-200}
t3=$(date +%s)
i=0
while [ "$i" -lt "$AA_COMPARES" ] && [ $(($(date +%s) - t3)) -lt "$AA_SECONDS" ]; do
	"$KGATE" compare --base-dir "$W/aa/aa-base" --head-dir "$W/aa/aa-head-0" --db "$W/aa/aa.db" \
		--confirm --seed "$i" --format json >"$W/aa/aa-$i.json" 2>"$W/aa/aa-$i.err"
	echo "aa $i exit $? $(tally "$W/aa/aa-$i.json")" >>"$W/aa/tally.txt"
	echo "aa $i $(find "$W/aa/rec" -name '*.jsonl' | wc -l)" >>"$W/aa/marks.txt"
	i=$((i + 1))
done
row "3. A/A: $i compares in $(($(date +%s) - t3)) s"
tail -n +1 "$W/aa/tally.txt" | awk '{print "   " $0}' | tail -5 | tee -a "$TABLE"
POWER_COMPARES=${POWER_COMPARES:-3}
t4=$(date +%s)
for th in default pct1; do
	tf=$ROOT/thresholds/default.yaml
	[ "$th" = pct1 ] && tf=$W/aa/pct1.yaml
	for l in 0.02 0.03 0.05; do
		for ((j = 0; j < POWER_COMPARES; j++)); do
			f=$W/aa/power-$th-$l-$j
			"$KGATE" compare --base-dir "$W/aa/aa-base" --head-dir "$W/aa/aa-head-$l" -t "$tf" \
				--db "$W/aa/power.db" --confirm --seed "$j" --format json >"$f.json" 2>"$f.err"
			echo "power $th $l $j exit $? $(tally "$f.json")" >>"$W/aa/tally.txt"
			echo "power-$th-$l-$j $(find "$W/aa/rec" -name '*.jsonl' | wc -l)" >>"$W/aa/marks.txt"
		done
	done
done
row "4. power: in $(($(date +%s) - t4)) s"
grep '^power' "$W/aa/tally.txt" | awk '{print "   " $0}' | tee -a "$TABLE"

row "total $(el) s"
