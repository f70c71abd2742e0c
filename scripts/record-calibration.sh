#!/bin/bash
# record-calibration.sh: the measurements behind kgate's default thresholds.
#
#   scripts/record-calibration.sh OUTDIR      (on a GPU machine, after make
#                                              and make benchmarks)
#
# Runs five benchmarks of the suite under the collector (trace mode) at five
# amounts of extra work (0, 1%, 2%, 3%, 5%: --extra-work), ROUNDS times each,
# the 25 combinations in a fresh random order every round, so that drift
# over the job spreads evenly.  Each process writes
#   OUTDIR/calib/<benchmark>/<extra>/<round>.<pid>.jsonl
# scripts/calibrate.sh turns them into false-alarm and detection rates.
set -u
OUT=${1:?give an output directory}
ROUNDS=${ROUNDS:-8}
B=build/benchmarks
COLL=$PWD/build/libkgate-collector.so
BENCH=(
	"stream_triad|$B/stream --n 16777216"
	"matmul_tiled|$B/matmul --variant tiled --n 1024"
	"transpose_tiled|$B/transpose --variant tiled --n 4096"
	"reduction_tree|$B/reduction --variant tree --n 16777216"
	"tail_wave|$B/tail --variant wave"
)
LEVELS=(0 0.01 0.02 0.03 0.05)
fails=0
t0=$(date +%s)
for ((r = 0; r < ROUNDS; r++)); do
	jobs=()
	for e in "${BENCH[@]}"; do
		for l in "${LEVELS[@]}"; do
			jobs+=("$l|$e")
		done
	done
	while IFS= read -r j; do
		IFS='|' read -r l name cmd <<<"$j"
		dir=$OUT/calib/$name/$l
		mkdir -p "$dir"
		# shellcheck disable=SC2086
		if ! env CUDA_INJECTION64_PATH="$COLL" NVTX_INJECTION64_PATH="$COLL" KGATE_MODE=trace \
			KGATE_RECORDS="$dir/$r.%p.jsonl" timeout 60 $cmd --extra-work "$l" \
			>>"$OUT/calib.log" 2>&1; then
			fails=$((fails + 1))
			echo "FAILED: $name extra $l round $r"
		fi
	done < <(printf '%s\n' "${jobs[@]}" | shuf)
done
echo "calibration: $ROUNDS rounds x ${#BENCH[@]} benchmarks x ${#LEVELS[@]} levels in $(($(date +%s) - t0)) s, $fails failures"
