#!/bin/bash
# session.sh: metrics mode with one-pass sets in a user-replay session, on a
# GPU, side by side in one job with kernel replay and with Nsight Compute:
#
#   benchmarks/self/gpu/session.sh OUTDIR
#
#   1. cost per profiled launch of the 1-block kernel (launch_overhead at two
#      launch counts, the difference over the extra launches): the session
#      (batches of 128 and 1024 ranges), kernel replay (KGATE_SESSION=0), ncu
#      with one metric and with the default set;
#      the session once more with KGATE_DEBUG=1 for the collector's timings;
#   2. tests/gpu/kg_gpu_app (--serial) in the session against ncu with the
#      same set (--cache-control none): compare.py per launch;
#   3. kg_gpu_app with its two threads launching at once, RUNS times (default
#      20) and 5 more with batches of 3 ranges (so the session also ends on
#      the worker's launches): exit 0, every launch outside the graph with
#      counters, each kernel's instruction count equal to the serial run's;
#   4. KGATE_LAUNCH_COUNT=3: the session ends after 3 launches and the later
#      kernels keep their trace records;
#   5. the transformer-encoder training step of benchmarks/torch_step.py:
#      bare, and every kernel profiled, per step (batches of 128 and 1024),
#      its NVTX paths in trace mode; tests/gpu/torch_step.py (autograd's
#      thread launching the backward pass) against two ncu runs.
# Needs the collector and the two CUDA programs (COLL, LO, APP: default
# build/), ncu, python3 with PyTorch.  Prints a table at the end; logs and
# records files stay in OUTDIR.
set -u
OUT=${1:?give an output directory}
mkdir -p "$OUT"
# shellcheck source=benchmarks/self/gpu/launch_common.sh
. "$(dirname "$0")/launch_common.sh"
torch_env
TABLE=$OUT/table.txt
: >"$TABLE"
coll() { # mode tag cmd...
	local mode=$1 tag=$2
	shift 2
	rm -f "$OUT/$tag".*.jsonl
	# no cache flush, as the ncu runs compared against (--cache-control none)
	timeout -k 5 "${TMO:-150}" env CUDA_INJECTION64_PATH="$COLL" NVTX_INJECTION64_PATH="$COLL" KGATE_CACHE_CONTROL=none \
		KGATE_MODE="$mode" KGATE_METRICS="$DEFAULT_SET" KGATE_RECORDS="$OUT/$tag.%p.jsonl" "$@" \
		>"$OUT/$tag.stdout" 2>"$OUT/$tag.stderr"
}
rec() { find "$OUT" -maxdepth 1 -name "$1.*.jsonl" | head -1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader >"$OUT/gpu.txt" 2>&1
row "gpu: $(cat "$OUT/gpu.txt"); ncu: $("$NCU" --version 2>/dev/null | tail -1)"

# ---- 0. SWEEP=1: the batch size alone ------------------------------------
# For each batch size (BATCHES): the 1-block kernel at 100 launches (the
# process's wall time: the fixed cost) and at 400 (the program's own time
# per launch between two synchronizations), with the collector's timings;
# then the encoder step.  Nothing else runs.
if [ -n "${SWEEP:-}" ]; then
	for r in 1 2; do
		for bt in ${BATCHES:-128 256 512 1024}; do
			t0=$(now)
			coll metrics "sw_${bt}_$r" env KGATE_PROFILE_BATCH="$bt" KGATE_DEBUG=1 "$LO" 100
			w=$(sub "$t0" "$(now)")
			st=$(grep -o 'session started (start [0-9.]*' "$OUT/sw_${bt}_$r.stderr" | head -1 | grep -o '[0-9.]*$')
			coll metrics "sl_${bt}_$r" env KGATE_PROFILE_BATCH="$bt" "$LO" 400
			row "batch $bt, run $r: 100 launches, process wall ${w} s, first session start ${st} ms; 400 launches: $(cat "$OUT/sl_${bt}_$r.stdout")"
		done
	done
	ms() { sed -n 's/.*mean_ms=\([0-9.]*\) wall_ms=\([0-9.]*\).*/\1 \2/p'; }
	for bt in ${BATCHES:-128 256 512 1024}; do
		coll metrics "enc_$bt" env KGATE_PROFILE_BATCH="$bt" python3 "$TS" --model encoder --iters 13
		row "encoder step, every kernel profiled, batches of $bt: $(ms <"$OUT/enc_$bt.stdout") ms event/wall per step"
	done
	exit 0
fi

# ---- 0b. FILTER=1: the encoder step with kernel filters -------------------
if [ -n "${FILTER:-}" ]; then
	ms() { sed -n 's/.*mean_ms=\([0-9.]*\) wall_ms=\([0-9.]*\).*/\1 \2/p'; }
	p=$(python3 "$TS" --model encoder --iters 13 2>&1 | ms)
	row "encoder step, bare: ${p// / ms event, } ms wall per step"
	i=0
	for filt in "" "KGATE_KERNELS=regex:gemm" "KGATE_KERNELS=regex:elementwise" "KGATE_LAUNCH_SKIP=600 KGATE_LAUNCH_COUNT=200"; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		coll metrics "encf_$i" env $filt python3 "$TS" --model encoder --iters 13
		f=$(rec "encf_$i")
		row "encoder step, ${filt:-every kernel}: $(ms <"$OUT/encf_$i.stdout") ms event/wall per step, $(grep -c '"type":"kernel"' "$f") records, $(grep -c '"smsp__inst_executed.sum":[0-9]' "$f") with counters, $(grep -c '"start":' "$f") with timestamps"
	done
	exit 0
fi

# ---- 1. per profiled launch ----------------------------------------------
# launch_overhead N launches 100 warm-up kernels, then N: N + 100 profiled
timed() { local a b; a=$(now); "$@"; b=$(now); sub "$a" "$b"; }
# timed_ncu TAG ARGS...: ncu's output to OUT/TAG.txt, the wall time on stdout
timed_ncu() { local a b t=$1; shift; a=$(now); "$NCU" "$@" >"$OUT/$t.txt" 2>&1; b=$(now); sub "$a" "$b"; }
for r in 1 2 3; do
	for bt in 128 1024; do
		s1=$(timed coll metrics "lo_${bt}_100_$r" env KGATE_PROFILE_BATCH="$bt" "$LO" 100)
		s4=$(timed coll metrics "lo_${bt}_400_$r" env KGATE_PROFILE_BATCH="$bt" "$LO" 400)
		row "session, batches of $bt, 1-block kernel, run $r: 200 launches ${s1} s, 500 launches ${s4} s, per profiled launch $(per "$s1" "$s4" 300) ms"
	done
	n1=$(timed_ncu "ncu_lo1_$r" --clock-control none --metrics gpu__time_duration.sum "$LO" 1)
	n2=$(timed_ncu "ncu_lo300_$r" --clock-control none --metrics gpu__time_duration.sum "$LO" 300)
	row "ncu, one metric, run $r: 101 launches ${n1} s, 400 launches ${n2} s, per profiled launch $(per "$n1" "$n2" 299) ms"
done
k1=$(timed coll metrics lo_k30 env KGATE_SESSION=0 "$LO" 30)
k2=$(timed coll metrics lo_k90 env KGATE_SESSION=0 "$LO" 90)
row "kernel replay (KGATE_SESSION=0): 130 launches ${k1} s, 190 launches ${k2} s, per profiled launch $(per "$k1" "$k2" 60) ms"
n3=$(timed_ncu ncu_lo300d --clock-control none --metrics "$DEFAULT_SET" "$LO" 300)
row "ncu, the default set: 400 launches ${n3} s, per launch beyond the last 101-launch one-metric run $(per "$n1" "$n3" 299) ms"
coll metrics lo_debug env KGATE_DEBUG=1 "$LO" 400
python3 - "$OUT/lo_debug.stderr" <<'PYEOF' | tee -a "$TABLE"
import re, statistics, sys
calls, stops, starts, evals = [], [], [], []
for l in open(sys.argv[1], errors="replace"):
    m = re.search(r"in the session \(profiled\), launch call ([0-9.]+) ms", l)
    if m: calls.append(float(m.group(1)))
    m = re.search(r"session stop: (\d+) ranges.*; ([0-9.]+) ms", l)
    if m: stops.append((int(m.group(1)), float(m.group(2))))
    m = re.search(r"session started \(start ([0-9.]+) ms", l)
    if m: starts.append(float(m.group(1)))
    m = re.search(r"evaluate: (\d+) ranges, ([0-9.]+) ms; new counter data image and config: ([0-9.]+) ms", l)
    if m: evals.append((int(m.group(1)), float(m.group(2)), float(m.group(3))))
if calls:
    print("debug: %d launches in sessions, launch call median %.3f ms (%.3f-%.3f)" % (len(calls), statistics.median(calls), min(calls), max(calls)))
print("debug: session starts (ms): %s" % " ".join("%.1f" % s for s in starts[:8]))
print("debug: session stops (ranges/ms): %s" % " ".join("%d/%.1f" % s for s in stops[:8]))
print("debug: evaluate + new image and config (ranges/ms/ms): %s" % " ".join("%d/%.1f/%.1f" % e for e in evals[:8]))
PYEOF

# ---- 2. kg_gpu_app against ncu, launch by launch ---------------------------
N=67108864
coll trace app_trace "$APP" --n $N --iters 5 --serial
coll metrics app_sess "$APP" --n $N --iters 5 --serial
row "kg_gpu_app --serial in the session: exit $?, $(grep -c '"type":"kernel"' "$(rec app_sess)") records, header $(head -1 "$(rec app_sess)" | grep -o '"replay":"[a-z]*"')"
"$NCU" --clock-control none --cache-control none --metrics "$DEFAULT_SET" --force-overwrite -o "$OUT/ncu_app" \
	"$APP" --n $N --iters 5 --serial >"$OUT/ncu_app.stdout" 2>&1 &&
	"$NCU" --import "$OUT/ncu_app.ncu-rep" --csv --page raw --print-units base --print-kernel-base mangled \
		>"$OUT/ncu_app.csv" 2>>"$OUT/ncu_app.stdout"
python3 "$COMPARE" metrics "$(rec app_sess)" "$OUT/ncu_app.csv" "$(rec app_trace)" "$DEFAULT_SET" 2>&1 |
	sed 's/^/app vs ncu: /' | cut -c1-220 | tee -a "$TABLE"

# ---- 3. two threads at once ------------------------------------------------
python3 - "$(rec app_sess)" >"$OUT/inst_serial.txt" <<'PYEOF'
import json, sys
inst = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "kernel" and "graph" not in r:
        v = r["metrics"].get("smsp__inst_executed.sum")
        inst.setdefault(r["name"], set()).add(v)
for n, s in sorted(inst.items()):
    print(n, ",".join(str(x) for x in sorted(s, key=str)))
PYEOF
ok=0 total=0 detail=
for r in $(seq 1 "${RUNS:-20}") b1 b2 b3 b4 b5; do
	batch=128
	case $r in b*) batch=3 ;; esac
	coll metrics "conc_$r" env KGATE_PROFILE_BATCH=$batch "$APP" --n $N --iters 5
	rc=$?
	f=$(rec "conc_$r")
	v=$(python3 - "$f" "$OUT/inst_serial.txt" <<'PYEOF'
import json, sys
want = {}
for l in open(sys.argv[2]):
    n, s = l.split()
    want[n] = s
got, bad, n = {}, 0, 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") != "kernel" or "graph" in r:
        continue
    n += 1
    v = r["metrics"].get("smsp__inst_executed.sum")
    if v is None:
        bad += 1
    got.setdefault(r["name"], set()).add(v)
same = all(",".join(str(x) for x in sorted(s, key=str)) == want.get(k) for k, s in got.items())
print("%d/%d %s" % (n - bad, n, "equal" if same and not bad else "DIFFER"))
PYEOF
)
	total=$((total + 1))
	case "$rc $v" in "0 "*" equal") ok=$((ok + 1)) ;; esac
	detail="$detail $r:$rc:${v// /:}"
done
row "two threads at once: $ok of $total runs exit 0 with every launch profiled and the serial run's instruction counts"
row "  runs:$detail" | cut -c1-400

# ---- 4. launch count: the session ends, the trace goes on -----------------
coll metrics app_count3 env KGATE_LAUNCH_COUNT=3 "$APP" --n $N --iters 5 --serial
f=$(rec app_count3)
row "KGATE_LAUNCH_COUNT=3: $(grep -c '"type":"kernel"' "$f") records, $(grep -c '"smsp__inst_executed.sum":[0-9]' "$f") with counters, $(grep -c '"start":' "$f") with timestamps, errors: $(grep -o '"code":"[a-z_]*"' "$f" | sort -u | tr '\n' ' ')"

# ---- 5. PyTorch -------------------------------------------------------------
ms() { sed -n 's/.*mean_ms=\([0-9.]*\) wall_ms=\([0-9.]*\).*/\1 \2/p'; }
p=$(python3 "$TS" --model encoder --iters 20 2>&1 | ms)
row "encoder step, bare: ${p// / ms event, } ms wall per step"
for bt in 128 1024 128; do
	coll metrics "enc_$bt" env KGATE_PROFILE_BATCH="$bt" python3 "$TS" --model encoder --iters 13
	f=$(rec "enc_$bt")
	row "encoder step, every kernel profiled, batches of $bt, 13 steps (+2 warm-up): $(ms <"$OUT/enc_$bt.stdout") ms event/wall per step, $(grep -c '"type":"kernel"' "$f") records, $(grep -c '"smsp__inst_executed.sum":[0-9]' "$f") with counters"
done
coll trace enc_trace python3 "$TS" --model encoder --iters 5
f=$(rec enc_trace)
row "encoder step, trace mode: $(grep -c '"type":"kernel"' "$f") records, $(grep -c '"nvtx":' "$f") with an NVTX path, $(grep -c '"nvtx_from":"main_thread"' "$f") of them the main thread's, $(grep -c '"nvtx":"step/backward","nvtx_from"' "$f") in step/backward"
coll trace torch_trace python3 "$TTS" 5 8192 1024
coll metrics torch_sess env KGATE_DEBUG=1 python3 "$TTS" 5 8192 1024
for r in 1 2; do
	"$NCU" --clock-control none --cache-control none --metrics "$DEFAULT_SET" --force-overwrite -o "$OUT/ncu_torch$r" \
		python3 "$TTS" 5 8192 1024 >"$OUT/ncu_torch$r.stdout" 2>&1 &&
		"$NCU" --import "$OUT/ncu_torch$r.ncu-rep" --csv --page raw --print-units base --print-kernel-base mangled \
			>"$OUT/ncu_torch$r.csv" 2>>"$OUT/ncu_torch$r.stdout"
done
python3 "$COMPARE" metrics "$(rec torch_sess)" "$OUT/ncu_torch1.csv" "$(rec torch_trace)" "$DEFAULT_SET" "$OUT/ncu_torch2.csv" 2>&1 |
	sed 's/^/torch vs ncu: /' | cut -c1-300 | tee -a "$TABLE"
row "collector messages (count, first 12):"
cat "$OUT"/*.stderr 2>/dev/null | grep '^kgate-collector: ' | sort | uniq -c | sort -rn | head -12 | cut -c1-200 | tee -a "$TABLE"
echo
echo "== table"
cat "$TABLE"
