#!/bin/bash
# record-fixtures.sh: record the GPU fixtures that CI and the demo replay.
#
# Run on a machine with a GPU, from the repository root, after `make` and
# `make benchmarks` (the build may come from another machine):
#
#   scripts/record-fixtures.sh OUTDIR
#
# It writes, under OUTDIR:
#   suite/<mode>/<side>/<benchmark>.<repeat>.<pid>.jsonl
#       records files of the benchmark suite (the benchmarks of kgate.yaml)
#       run under the collector in trace and metrics mode; side "base" is
#       the suite as it is, side "head" the same with one real regression:
#       transpose_tiled does 5% more work (--extra-work 0.05).
#   ncu/<variant>.raw.csv, ncu/<variant>.details.csv
#       Nsight Compute's full section set (raw page) and its rule rows with
#       estimated speed-ups (details page) for one launch of each variant
#       pair the diagnosis compares (naive/tiled, atomic/tree, ...).
#   env.txt   GPU, driver, CUDA and ncu versions, date
#   log.txt   everything the programs printed
# and prints a short table.  Copy what is to be committed into
# tests/fixtures/h200/ and update its README.  MODES (default "trace
# metrics") chooses the suite's modes; NCU_SECTIONS=0 leaves out ncu's sections.
set -u
OUT=${1:-${OUT:?give an output directory}}
REPEATS=${REPEATS:-5}
MREPEATS=${MREPEATS:-2}
B=build/benchmarks
COLL=$PWD/build/libkgate-collector.so
LIBDIR=/usr/local/cuda/targets/x86_64-linux/lib
CUPTI=$(find "$LIBDIR" -maxdepth 1 -name "libcupti.so.*" 2>/dev/null | sort | tail -1)
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
mkdir -p "$OUT"
LOG=$OUT/log.txt
: >"$LOG"

{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
	"$NCU" --version | tail -1
	/usr/local/cuda/bin/nvcc --version | tail -1
	echo "cupti: $CUPTI"
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

# name|argv, as in kgate.yaml
SUITE=(
	"stream_triad|$B/stream --n 33554432"
	"matmul_naive|$B/matmul --variant naive --n 2048"
	"matmul_tiled|$B/matmul --variant tiled --n 2048"
	"transpose_naive|$B/transpose --variant naive --n 8192"
	"transpose_tiled|$B/transpose --variant tiled --n 8192"
	"reduction_atomic|$B/reduction --variant atomic --n 16777216"
	"reduction_tree|$B/reduction --variant tree --n 67108864"
	"tail_wave|$B/tail --variant wave"
	"tail_over_one_wave|$B/tail --variant tail"
)
REGRESSED=transpose_tiled
REGRESSION="--extra-work 0.05"

fails=0
row() { printf '%-40s %s\n' "$1" "$2"; }

record() { # mode side repeat name argv...
	local mode=$1 side=$2 r=$3 name=$4
	shift 4
	local dir=$OUT/suite/$mode/$side
	mkdir -p "$dir"
	echo "== $mode $side $r $name: $*" >>"$LOG"
	if ! env CUDA_INJECTION64_PATH="$COLL" NVTX_INJECTION64_PATH="$COLL" \
		KGATE_MODE="$mode" KGATE_RECORDS="$dir/$name.$r.%p.jsonl" \
		timeout 120 "$@" >>"$LOG" 2>&1; then
		fails=$((fails + 1))
		row "$mode $side $name #$r" "FAILED (see log.txt)"
	fi
}

t0=$(date +%s)
for mode in ${MODES:-trace metrics}; do
	n=$REPEATS
	[ "$mode" = metrics ] && n=$MREPEATS
	for ((r = 0; r < n; r++)); do
		for side in base head; do
			for e in "${SUITE[@]}"; do
				name=${e%%|*}
				# shellcheck disable=SC2206
				argv=(${e#*|})
				if [ "$side" = head ] && [ "$name" = "$REGRESSED" ]; then
					# shellcheck disable=SC2206
					argv+=($REGRESSION)
				fi
				record "$mode" "$side" "$r" "$name" "${argv[@]}"
			done
		done
	done
	row "suite, $mode mode" "$(find "$OUT/suite/$mode" -name '*.jsonl' | wc -l) records files, $(cat "$OUT"/suite/"$mode"/*/*.jsonl | grep -c '"type":"kernel"') kernel records"
done
t1=$(date +%s)
row "suite recorded" "$((t1 - t0)) s, $fails failures"

[ "${NCU_SECTIONS:-1}" = 0 ] && exit $((fails > 0))
# ncu: the full section set on one launch of each variant (after warm-up).
mkdir -p "$OUT/ncu"
NCUV=(
	"transpose_naive|tr_naive|$B/transpose --variant naive --n 8192"
	"transpose_tiled|tr_tiled|$B/transpose --variant tiled --n 8192"
	"transpose_tiled_extra|tr_tiled|$B/transpose --variant tiled --n 8192 --extra-work 0.05"
	"matmul_naive|mm_naive|$B/matmul --variant naive --n 2048"
	"matmul_tiled|mm_tiled|$B/matmul --variant tiled --n 2048"
	"reduction_atomic|red_atomic|$B/reduction --variant atomic --n 16777216"
	"reduction_tree|red_tree|$B/reduction --variant tree --n 16777216"
	"tail_wave|spin|$B/tail --variant wave"
	"tail_over_one_wave|spin|$B/tail --variant tail"
	"stream_triad|triad|$B/stream --n 33554432"
	"stream_triad_extra|triad|$B/stream --n 33554432 --extra-work 0.05"
)
for e in "${NCUV[@]}"; do
	IFS='|' read -r name kre cmd <<<"$e"
	# shellcheck disable=SC2206
	argv=($cmd)
	for page in raw details; do
		pflag=()
		[ "$page" = raw ] && pflag=(--page raw --print-units base)
		a=$(date +%s.%N)
		if ! timeout 300 "$NCU" --clock-control none --set full --csv "${pflag[@]}" \
			-k "regex:$kre" --launch-skip 2 --launch-count 1 "${argv[@]}" \
			>"$OUT/ncu/$name.$page.csv" 2>>"$LOG"; then
			row "ncu $name $page" "FAILED"
			fails=$((fails + 1))
			continue
		fi
		b=$(date +%s.%N)
		row "ncu $name $page" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f s", b - a }'), $(wc -l <"$OUT/ncu/$name.$page.csv") lines"
	done
done
exit $((fails > 0))
