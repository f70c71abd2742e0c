#!/bin/bash
# overhead.sh: what the collector costs a CUDA program, against the program
# alone and against Nsight Compute, measured side by side in one run on a GPU.
#
#   benchmarks/self/gpu/overhead.sh OUTDIR
#
# Needs build/libkgate-collector.so, build/gpu/launch_overhead (built here
# when missing: nvcc -O2 -arch=sm_90 launch_overhead.cu), ncu, and for the
# PyTorch rows python3 with torch; for the trace-mode anchor,
# build/gpu/min_activity.so (min_activity.c: kernel activity records and
# nothing else, the CUPTI floor).  Prints one line per measurement; the
# figures go to docs/PERFORMANCE.md by hand.  SKIP_MULTI=1 leaves out the
# 9-pass comparison with ncu (about 50 s), SKIP_METRICS=1 all of metrics
# mode and ncu, SKIP_TORCH=1 the PyTorch rows; TORCH_RUNS sets the PyTorch
# rounds (default 2), LAUNCH_RUNS the launch-overhead rounds (default 3).
set -u
OUT=${1:?give an output directory}
mkdir -p "$OUT"
# shellcheck source=benchmarks/self/gpu/launch_common.sh
. "$(dirname "$0")/launch_common.sh"
MIN=$ROOT/build/gpu/min_activity.so
N=${N:-20000}

# the minimal activity collector, built here when missing (CUDA headers)
if [ ! -f "$MIN" ]; then
	cc -O2 -std=c11 -shared -fPIC -I"$CUDA/include" -o "$MIN" "$ROOT/benchmarks/self/gpu/min_activity.c" \
		-L"$CUPTI_DIR" -lcupti -Wl,-rpath,"$CUPTI_DIR" || echo "overhead: cannot build $MIN; no anchor row" >&2
fi

coll() { # mode records-name cmd...
	local mode=$1 name=$2
	shift 2
	env CUDA_INJECTION64_PATH="$COLL" NVTX_INJECTION64_PATH="$COLL" KGATE_MODE="$mode" \
		KGATE_RECORDS="$OUT/$name.%p.jsonl" "$@"
}
us() { sed -n 's/.*us_per_launch \([0-9.]*\).*/\1/p'; }

echo "== launch overhead: $N launches of a 1-block kernel (us per launch, interleaved)"
for ((r = 1; r <= ${LAUNCH_RUNS:-3}; r++)); do
	p=$("$LO" "$N" | us)
	m=
	if [ -f "$MIN" ]; then
		m=$(env CUDA_INJECTION64_PATH="$MIN" "$LO" "$N" 2>"$OUT/min_$r.err" | us)
	fi
	t=$(coll trace lo_trace "$LO" "$N" | us)
	if [ -n "$m" ]; then
		echo "run $r: plain $p us, minimal activity collector $m us (+$(awk -v p="$p" -v t="$m" 'BEGIN { printf "%.3f", t - p }')), kgate trace $t us (+$(awk -v p="$p" -v t="$t" 'BEGIN { printf "%.3f", t - p }')), kgate beyond the minimal $(awk -v p="$m" -v t="$t" 'BEGIN { printf "%.3f", t - p }') us"
	else
		echo "run $r: plain $p us, trace $t us, added $(awk -v p="$p" -v t="$t" 'BEGIN { printf "%.3f", t - p }') us"
	fi
done

[ -n "${SKIP_METRICS:-}" ] && SKIP_MULTI=1
[ -n "${SKIP_METRICS:-}" ] || echo "== metrics mode, default single-pass set, per profiled launch (ranges decoded in batches of 128, and after each launch)"
[ -n "${SKIP_METRICS:-}" ] || for n in ${METRICS_LAUNCHES:-100 1000}; do
	for bt in 128 1; do
		a=$(now)
		coll metrics "lo_metrics_${bt}_$n" env KGATE_METRICS="$DEFAULT_SET" KGATE_PROFILE_BATCH=$bt \
			"$LO" "$n" >/dev/null
		b=$(now)
		echo "kgate metrics (batch $bt), $n launches: $(sub "$a" "$b") s wall"
	done
done
[ -n "${SKIP_METRICS:-}" ] || echo "== ncu, one metric (gpu__time_duration.sum)"
[ -n "${SKIP_METRICS:-}" ] || for n in 1 100; do
	a=$(now); "$NCU" --clock-control none --metrics gpu__time_duration.sum "$LO" "$n" >"$OUT/ncu_$n.txt" 2>&1; b=$(now)
	echo "ncu, $n launches: $(sub "$a" "$b") s wall"
done
if [ -z "${SKIP_MULTI:-}" ]; then
	echo "== the same 9-pass metric set, 100 launches: kgate (kernel replay) vs ncu"
	a=$(now); coll metrics lo_multi env KGATE_METRICS="$MULTI_SET" "$LO" 100 >/dev/null; b=$(now)
	echo "kgate metrics, 9 passes, 100 launches: $(sub "$a" "$b") s wall"
	a=$(now); "$NCU" --clock-control none --metrics "$MULTI_SET" "$LO" 100 >"$OUT/ncu_multi.txt" 2>&1; b=$(now)
	echo "ncu, 9 passes, 100 launches: $(sub "$a" "$b") s wall"
fi

if [ -z "${SKIP_TORCH:-}" ] && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	echo "== PyTorch training step (benchmarks/torch_step.py, mean ms per step from CUDA events)"
	TS="$ROOT/benchmarks/torch_step.py"
	# ms: "mean_ms wall_ms" of a run's output
	ms() { sed -n 's/.*mean_ms=\([0-9.]*\) wall_ms=\([0-9.]*\).*/\1 \2/p'; }
	for model in mlp encoder; do
		echo "-- model $model (CUDA-event ms per step / wall ms per step)"
		for ((r = 1; r <= ${TORCH_RUNS:-2}; r++)); do
			p=$(python3 "$TS" --model $model --iters 20 2>&1 | ms)
			t=$(coll trace torch_trace_$model python3 "$TS" --model $model --iters 20 2>&1 | ms)
			a=$(now)
			m=$(coll metrics torch_metrics_$model env KGATE_METRICS="$DEFAULT_SET" python3 "$TS" \
				--model $model --iters 3 2>&1 | ms)
			b=$(now)
			echo "run $r: plain ${p// / / } ms, trace ${t// / / } ms, metrics (every kernel, 3 steps + 2 warm-up) ${m// / / } ms per step, $(sub "$a" "$b") s wall"
		done
	done
	k=$(find "$OUT" -name "torch_trace_encoder.*.jsonl" | head -1)
	[ -n "$k" ] && echo "encoder: $(grep -c '"type":"kernel"' "$k") kernel records in 22 steps"
fi
