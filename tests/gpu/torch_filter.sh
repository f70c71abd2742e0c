#!/bin/bash
# torch_filter.sh: does profiling every kernel change what a later kernel
# reads from DRAM?  The PyTorch step of test-gpu.sh (torch_step.py 5 8192
# 1024), its reduction kernels profiled alone, twice under the collector
# (KGATE_KERNELS) and twice under ncu (-k), with the default metric set;
# prints each reduction's dram__bytes_read.sum per launch and the median of
# each run.  Compare with test-gpu.sh's runs, where every kernel is profiled.
#
#   tests/gpu/torch_filter.sh OUTDIR
set -u
OUT=${1:?give an output directory}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
COLL=${KGATE_COLLECTOR:-$ROOT/build/libkgate-collector.so}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
SET=gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__inst_executed.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
STEP=("$ROOT/tests/gpu/torch_step.py" 5 8192 1024)
for r in 1 2; do
	env CUDA_INJECTION64_PATH="$COLL" NVTX_INJECTION64_PATH="$COLL" KGATE_MODE=metrics KGATE_CACHE_CONTROL=none \
		KGATE_METRICS="$SET" KGATE_KERNELS="regex:reduce_kernel" KGATE_RECORDS="$OUT/kg$r.%p.jsonl" \
		python3 "${STEP[@]}" >"$OUT/kg$r.out" 2>&1
	"$NCU" --clock-control none --cache-control none --metrics "$SET" -k regex:reduce_kernel \
		--csv --page raw --print-units base --print-kernel-base mangled python3 "${STEP[@]}" \
		>"$OUT/ncu$r.csv" 2>"$OUT/ncu$r.err"
done
python3 - "$OUT" "$ROOT/tests/gpu" <<'EOF'
import glob, statistics, sys
sys.path.insert(0, sys.argv[2])
import compare
out = sys.argv[1]
m = "dram__bytes_read.sum"
runs = [("collector " + str(r), glob.glob("%s/kg%d.*.jsonl" % (out, r))[0]) for r in (1, 2)]
runs += [("ncu " + str(r), "%s/ncu%d.csv" % (out, r)) for r in (1, 2)]
for label, path in runs:
    for name, v in sorted(compare.launches(path, m).items()):
        if "reduce_kernel" in name:
            print("%-12s %-28s median %.3f MB: %s" % (label, name[22:50], statistics.median(v) / 1e6,
                                                       " ".join("%.3f" % (x / 1e6) for x in v)))
EOF
