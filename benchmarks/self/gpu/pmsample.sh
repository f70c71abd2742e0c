#!/bin/bash
# pmsample.sh: metrics mode's PM-sampling engine (KGATE_ENGINE=sampling) on a
# GPU, side by side in one job with the Range Profiler's session (KGATE_ENGINE
# unset) and with Nsight Compute:
#
#   benchmarks/self/gpu/pmsample.sh OUTDIR
#
#   1. cost per sampled launch of the 1-block kernel: launch_overhead at 100
#      and 400 launches (the difference over the 300 extra launches), bare
#      and sampled, twice;
#   2. instruction counts launch by launch: launch_overhead 400 and
#      kg_gpu_app --serial sampled, against the Range Profiler's session and
#      against ncu (the k-th launch of each kernel name against the k-th);
#   3. 10,000 launches of the 1-block kernel sampled: every launch's count
#      equal to the Range Profiler's, lost samples, windows ended; again with
#      an image of 10,000 samples and windows ended at 20 ms of backlog;
#   4. every kernel of the transformer-encoder training step
#      (benchmarks/torch_step.py --model encoder): ms a step bare and
#      sampled, the difference (goal: at most 25 ms), records with counters,
#      and launch by launch against the Range Profiler's session;
#   5. a second process computing (build/benchmarks/many --variant hog
#      --n 20, from make benchmarks): the sampled run refused (header
#      "mode":"trace", a gpu_shared error record).
# First a 10-launch sampled run with the collector's debug lines (45 s at
# most): when it does not end, the rest is skipped (PROBE_ONLY=1: always).
# Needs the collector (make), build/benchmarks/many (make benchmarks), nvcc,
# ncu, python3 with PyTorch.  About 5 minutes.  A short table on stdout and in
# OUTDIR/table.txt; logs and records files stay in OUTDIR.
set -u
OUT=${1:?give an output directory}
mkdir -p "$OUT"
# shellcheck source=benchmarks/self/gpu/launch_common.sh
. "$(dirname "$0")/launch_common.sh"
HOG=${HOG:-$ROOT/build/benchmarks/many}
torch_env
# the sampling engine's default set (duration from events); the Range
# Profiler and ncu collect the same counters
SET=gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum
TABLE=$OUT/table.txt
: >"$TABLE"
perus() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.1f", (b - a) / n * 1e6 }'; }
[ -x "$APP" ] || "$CUDA/bin/nvcc" -O2 -arch=sm_90 -lineinfo -o "$APP" "$ROOT/tests/gpu/kg_gpu_app.cu" -ldl ||
	echo "pmsample.sh: cannot build $APP; its rows are skipped" >&2
# coll ENGINE TAG CMD...: ENGINE sampling or range; records in OUT/TAG.*.jsonl
coll() {
	local eng=$1 tag=$2
	shift 2
	rm -f "$OUT/$tag".*.jsonl
	timeout -k 5 "${TMO:-150}" env CUDA_INJECTION64_PATH="$COLL" NVTX_INJECTION64_PATH="$COLL" \
		KGATE_MODE=metrics KGATE_ENGINE="$eng" KGATE_METRICS="$SET" KGATE_RECORDS="$OUT/$tag.%p.jsonl" "$@" \
		>"$OUT/$tag.stdout" 2>"$OUT/$tag.stderr"
}
rec() { find "$OUT" -maxdepth 1 -name "$1.*.jsonl" | head -1; }
timed() { local a; a=$(now); "$@"; sub "$a" "$(now)"; }
quiet() { "$@" >/dev/null; }
# errs FILE: the error codes of a records file
errs() { grep -o '"code":"[a-z_]*"' "$1" 2>/dev/null | sort | uniq -c | tr -s ' ' | tr '\n' ' '; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader >"$OUT/gpu.txt" 2>&1
row "gpu: $(cat "$OUT/gpu.txt"); ncu: $("$NCU" --version 2>/dev/null | tail -1)"
row "other compute processes before the run: $(nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader 2>/dev/null | tr '\n' ';')"

# ---- 0. does a sampled process end? ------------------------------------------
# (on an H100 on 2026-12-05 it did not, within 150 s: each step below then runs
# into its limit, so a short run with the collector's debug lines goes first)
a=$(now)
TMO=45 coll sampling probe env KGATE_DEBUG=1 "$LO" 10
rc=$?
row "0. sampled launch_overhead 10 (KGATE_DEBUG=1): exit $rc after $(sub "$a" "$(now)") s, $(grep -c '"type":"kernel"' "$(rec probe)" 2>/dev/null) kernel records, $(grep -c '"type":"footer"' "$(rec probe)" 2>/dev/null) footer"
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	row "   it did not end within 45 s; the collector's last lines:"
	tail -15 "$OUT/probe.stderr" | cut -c1-200 | tee -a "$TABLE"
	row "the sampled steps are skipped (each would run into its limit)"
	exit 1
fi
if [ -n "${PROBE_ONLY:-}" ]; then
	row "   (PROBE_ONLY: the other steps are left out); the collector's last lines:"
	tail -15 "$OUT/probe.stderr" | cut -c1-200 | tee -a "$TABLE"
	exit 0
fi

# ---- 1. cost per launch ------------------------------------------------------
for r in 1 2; do
	b1=$(timed quiet "$LO" 100)
	b4=$(timed quiet "$LO" 400)
	s1=$(timed coll sampling "lo100_$r" "$LO" 100)
	s4=$(timed coll sampling "lo400_$r" "$LO" 400)
	row "1-block kernel, run $r: bare $(perus "$b1" "$b4" 300) us/launch; sampled: 200 launches ${s1} s, 500 launches ${s4} s, $(perus "$s1" "$s4" 300) us per sampled launch (goal <= 50), $(grep -c '"smsp__inst_executed.sum":[0-9]' "$(rec "lo400_$r")") of 500 with counters, errors: $(errs "$(rec "lo400_$r")")"
done
head -1 "$(rec lo400_1)" | grep -q '"mode":"trace"' &&
	row "NOTE: the sampled run was refused ($(grep -o '"code":"gpu_shared","message":"[^"]*' "$(rec lo400_1)" | head -1 | cut -c1-160)): if the pid it names is this run's own (a PID namespace), NVML cannot tell it from another process"

# ---- 2. launch by launch against the Range Profiler and ncu -----------------
# cmp.py SAMPLED OTHER: the k-th launch of each kernel name against the k-th
# (OTHER a records file or an ncu raw CSV)
cat >"$OUT/cmp.py" <<'PYEOF'
import csv, json, sys
M = "smsp__inst_executed.sum"
def recs(path):
    seq = []
    for l in open(path):
        r = json.loads(l)
        if r.get("type") == "kernel" and "graph" not in r:
            seq.append((r["ordinal"], r["name"], r["metrics"].get(M, "absent")))
    seq.sort()
    return [(n, v) for _, n, v in seq]
def ncu(path):
    rows = list(csv.reader(open(path)))
    h = next(i for i, r in enumerate(rows) if "ID" in r and "Kernel Name" in r)
    head = rows[h]
    iid, ina, im = head.index("ID"), head.index("Kernel Name"), head.index(M)
    out = []
    for r in rows[h + 1:]:
        if len(r) > im and r[iid].isdigit():
            try:
                out.append((int(r[iid]), r[ina], float(r[im].replace(",", ""))))
            except ValueError:
                pass
    out.sort()
    return [(n, v) for _, n, v in out]
def bykey(seq):
    d, k = {}, {}
    for n, v in seq:
        i = k.get(n, 0)
        k[n] = i + 1
        d[(n, i)] = v
    return d
a = bykey(recs(sys.argv[1]))
b = bykey(ncu(sys.argv[2]) if sys.argv[2].endswith(".csv") else recs(sys.argv[2]))
both = [x for x in a if x in b]
eq = sum(1 for x in both if isinstance(a[x], (int, float)) and isinstance(b[x], (int, float)) and a[x] == b[x])
none = sum(1 for x in both if not isinstance(a[x], (int, float)))
bad = [x for x in both if isinstance(a[x], (int, float)) and isinstance(b[x], (int, float)) and a[x] != b[x]]
ex = "; first differing: %s #%d %s vs %s" % (bad[0][0][:40], bad[0][1], a[bad[0]], b[bad[0]]) if bad else ""
if bad:
    # the differences by size: a constant excess is other work in a window
    by = {}
    for x in bad:
        d = a[x] - b[x]
        by[d] = by.get(d, 0) + 1
    top = sorted(by.items(), key=lambda kv: -kv[1])[:3]
    ex += "; differences: " + ", ".join("%+.0f x%d" % kv for kv in top)
print("%d of %d launches equal, %d without counters (sampled %d, other %d)%s" % (eq, len(both), none, len(a), len(b), ex))
PYEOF
ncu_csv() { # TAG CMD...: ncu with the same counters, raw CSV in OUT/TAG.csv
	local t=$1
	shift
	timeout -k 5 300 "$NCU" --clock-control none --cache-control none --metrics "$SET" --force-overwrite -o "$OUT/$t" \
		"$@" >"$OUT/$t.stdout" 2>&1 &&
		"$NCU" --import "$OUT/$t.ncu-rep" --csv --page raw --print-units base --print-kernel-base mangled \
			>"$OUT/$t.csv" 2>>"$OUT/$t.stdout"
}
coll range lo400_rp "$LO" 400
ncu_csv ncu_lo400 "$LO" 400
row "1-block kernel x500, sampled vs Range Profiler: $(python3 "$OUT/cmp.py" "$(rec lo400_1)" "$(rec lo400_rp)" 2>&1 | cut -c1-200)"
row "1-block kernel x500, sampled vs ncu: $(python3 "$OUT/cmp.py" "$(rec lo400_1)" "$OUT/ncu_lo400.csv" 2>&1 | cut -c1-200)"
if [ -x "$APP" ]; then
	N=67108864
	coll sampling app_pm "$APP" --n $N --iters 5 --serial
	arc=$?
	coll range app_rp "$APP" --n $N --iters 5 --serial
	ncu_csv ncu_app "$APP" --n $N --iters 5 --serial
	row "kg_gpu_app --serial sampled (exit $arc) vs Range Profiler: $(python3 "$OUT/cmp.py" "$(rec app_pm)" "$(rec app_rp)" 2>&1 | cut -c1-200)"
	row "kg_gpu_app --serial sampled vs ncu: $(python3 "$OUT/cmp.py" "$(rec app_pm)" "$OUT/ncu_app.csv" 2>&1 | cut -c1-200); errors: $(errs "$(rec app_pm)")"
fi

# ---- 3. 10,000 launches ---------------------------------------------------------
t=$(timed coll sampling lo10k env KGATE_DEBUG=1 "$LO" 10000)
ref=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("type")=="kernel" and r["metrics"].get("smsp__inst_executed.sum") is not None:
        print(int(r["metrics"]["smsp__inst_executed.sum"])); break' "$(rec lo400_rp)")
f=$(rec lo10k)
row "10,000 + 100 launches sampled in ${t} s: $(grep -c "\"smsp__inst_executed.sum\":${ref}.0," "$f") with the Range Profiler's count ($ref), $(grep -c '"smsp__inst_executed.sum":null' "$f") without counters, $(grep -c '"type":"kernel"' "$f") records; errors: $(errs "$f")"
row "  $(grep -o 'device 0 stopped: .*' "$OUT/lo10k.stderr" | head -1 | cut -c1-300)"

# ---- 3b. the same with an image larger than the backlog ----------------------
# (on an H100 each roll-over of the 2,000-sample image was followed by a hole
# of 15-113 ms of samples, as if a decode that fills the image dropped the rest
# of what it had read; with an image of 10,000 samples and windows ended at
# 20 ms of backlog, no decode should ever fill it)
t=$(timed coll sampling lo10k_big env KGATE_DEBUG=1 KGATE_PM_SAMPLES=10000 KGATE_PM_BACKLOG_MS=20 "$LO" 10000)
f=$(rec lo10k_big)
row "10,000 + 100 launches sampled, image 10,000 samples, backlog 20 ms, in ${t} s: $(grep -c "\"smsp__inst_executed.sum\":${ref}.0," "$f") with the Range Profiler's count, $(grep -c '"smsp__inst_executed.sum":null' "$f") without counters; errors: $(errs "$f")"
row "  $(grep -o 'device 0 stopped: .*' "$OUT/lo10k_big.stderr" | head -1 | cut -c1-300)"

# ---- 4. the encoder training step -----------------------------------------------
ms() { sed -n 's/.*mean_ms=\([0-9.]*\) wall_ms=\([0-9.]*\).*/\1 \2/p'; }
bare=$(python3 "$TS" --model encoder --iters 20 2>&1 | ms)
row "encoder step, bare: ${bare// / ms event, } ms wall per step"
coll sampling enc_pm env KGATE_DEBUG=1 python3 "$TS" --model encoder --iters 13
pm=$(ms <"$OUT/enc_pm.stdout")
f=$(rec enc_pm)
row "encoder step, every kernel sampled: ${pm// / ms event, } ms wall per step, $(awk -v a="${bare#* }" -v b="${pm#* }" 'BEGIN { printf "%.1f", b - a }') ms a step beyond the bare step (goal <= 25); $(grep -c '"type":"kernel"' "$f") records, $(grep -c '"smsp__inst_executed.sum":[0-9]' "$f") with counters; errors: $(errs "$f")"
row "  $(grep -o 'device 0 stopped: .*' "$OUT/enc_pm.stderr" | head -1 | cut -c1-300)"
coll range enc_rp python3 "$TS" --model encoder --iters 13
row "encoder step (Range Profiler session for comparison): $(ms <"$OUT/enc_rp.stdout") ms event/wall per step; sampled vs Range Profiler: $(python3 "$OUT/cmp.py" "$f" "$(rec enc_rp)" 2>&1 | cut -c1-200)"

# ---- 5. another process computing ------------------------------------------------
if [ -x "$HOG" ]; then
	"$HOG" --variant hog --n 20 >"$OUT/hog.stdout" 2>&1 &
	hog=$!
	sleep 3
	coll sampling shared "$LO" 100
	f=$(rec shared)
	kill "$hog" 2>/dev/null
	wait "$hog" 2>/dev/null
	row "a second process computing (pid $hog): header mode $(head -1 "$f" | grep -o '"mode":"[a-z]*"'), $(grep -o '"code":"gpu_shared","message":"[^"]*' "$f" | head -1 | cut -c1-170)"
else
	row "a second process computing: $HOG not built (make benchmarks); skipped"
fi
row "collector messages (count, first 10):"
cat "$OUT"/*.stderr 2>/dev/null | grep '^kgate-collector: ' | sort | uniq -c | sort -rn | head -10 | cut -c1-200 | tee -a "$TABLE"
echo
echo "== table"
cat "$TABLE"
