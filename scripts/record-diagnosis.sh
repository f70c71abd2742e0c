#!/bin/bash
# record-diagnosis.sh: the counters behind "kgate explain", recorded on a GPU
# next to Nsight Compute's own rule output for the same launches.
#
#   scripts/record-diagnosis.sh OUTDIR      (on a GPU machine, after make
#                                            and make benchmarks)
#
# For each variant of the suite that the diagnosis is tested on (transpose
# naive/tiled/+5% work/unpadded tile, matmul naive/tiled, reduction atomic/tree, the tail
# grid, stream triad at its default block, at 32 threads a block and with 5%
# more work) it runs the program twice:
#   diag/<variant>.<pid>.jsonl   under the collector in metrics mode with
#       kgate's diagnostic metric set (the one "kgate explain --collect"
#       uses), the variant's kernel only, its third launch (launch skip 2,
#       count 1), as ncu below;
#   ncu/<variant>.details.csv, ncu/<variant>.raw.csv
#       ncu --clock-control none --set full on the same launch, one report
#       imported twice: the details page (ncu's rule rows with estimated
#       speed-ups) and the raw page (every metric, base units).
# NCU_SKIP="a b" leaves out the ncu run of those variants (already
# recorded); ONLY="a b" runs those variants alone.  Prints one line per run with its wall time; log.txt holds
# what the programs printed.
set -u
OUT=${1:?give an output directory}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build/benchmarks
COLL=$ROOT/build/libkgate-collector.so
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
mkdir -p "$OUT/diag" "$OUT/ncu"
LOG=$OUT/log.txt
: >"$LOG"
# the diagnostic set, as kgate has it
DIAG=$(sed -n '/explain_diagnostic_metrics\[\] = {/,/NULL/p' "$ROOT/src/explain.c" |
	grep -o '"[^"]*"' | tr -d '"' | paste -sd, -)
[ -n "$DIAG" ] || { echo "record-diagnosis: cannot read the diagnostic set from src/explain.c" >&2; exit 2; }

VARIANTS=(
	"transpose_naive|tr_naive|transpose --variant naive --n 8192"
	"transpose_tiled|tr_tiled|transpose --variant tiled --n 8192"
	"transpose_tiled_extra|tr_tiled|transpose --variant tiled --n 8192 --extra-work 0.05"
	"transpose_unpadded|tr_unpadded|transpose --variant unpadded --n 8192"
	"matmul_naive|mm_naive|matmul --variant naive --n 2048"
	"matmul_tiled|mm_tiled|matmul --variant tiled --n 2048"
	"reduction_atomic|red_atomic|reduction --variant atomic --n 16777216"
	"reduction_tree|red_tree|reduction --variant tree --n 16777216"
	"tail_wave|spin|tail --variant wave"
	"tail_over_one_wave|spin|tail --variant tail"
	"stream_triad|triad|stream --n 33554432"
	"stream_triad_extra|triad|stream --n 33554432 --extra-work 0.05"
	"stream_triad_block32|triad|stream --n 33554432 --block 32"
)
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f s", b - a }'; }
fails=0
for v in "${VARIANTS[@]}"; do
	IFS='|' read -r name kre cmd <<<"$v"
	if [ -n "${ONLY:-}" ]; then
		case " $ONLY " in *" $name "*) ;; *) continue ;; esac
	fi
	# shellcheck disable=SC2206
	argv=($cmd)
	argv[0]=$B/${argv[0]}
	rm -f "$OUT/diag/$name".*.jsonl
	echo "== collector $name: ${argv[*]}" >>"$LOG"
	a=$(date +%s.%N)
	if env CUDA_INJECTION64_PATH="$COLL" NVTX_INJECTION64_PATH="$COLL" KGATE_MODE=metrics \
		KGATE_METRICS="$DIAG" KGATE_KERNELS="regex:^$kre\\(" KGATE_LAUNCH_SKIP=2 \
		KGATE_LAUNCH_COUNT=1 KGATE_RECORDS="$OUT/diag/$name.%p.jsonl" \
		timeout 120 "${argv[@]}" >>"$LOG" 2>&1; then
		b=$(date +%s.%N)
		f=$(find "$OUT/diag" -name "$name.*.jsonl" | head -1)
		nm=$(grep '"type":"kernel"' "$f" 2>/dev/null | grep -c '"metrics"')
		ne=$(grep -c '"type":"error"' "$f" 2>/dev/null)
		printf '%-28s collector %s, %s launches with metrics, %s error records\n' \
			"$name" "$(secs "$a" "$b")" "$nm" "$ne"
	else
		fails=$((fails + 1))
		printf '%-28s collector FAILED (log.txt)\n' "$name"
	fi
	case " ${NCU_SKIP:-} " in *" $name "*) continue ;; esac
	echo "== ncu $name" >>"$LOG"
	a=$(date +%s.%N)
	if timeout 300 "$NCU" --clock-control none --set full -k "regex:^$kre\$" \
		--launch-skip 2 --launch-count 1 -f -o "$OUT/ncu/$name" "${argv[@]}" >>"$LOG" 2>&1 &&
		"$NCU" --import "$OUT/ncu/$name.ncu-rep" --csv >"$OUT/ncu/$name.details.csv" 2>>"$LOG" &&
		"$NCU" --import "$OUT/ncu/$name.ncu-rep" --csv --page raw --print-units base \
			>"$OUT/ncu/$name.raw.csv" 2>>"$LOG"; then
		b=$(date +%s.%N)
		printf '%-28s ncu --set full %s, %s details lines\n' "$name" "$(secs "$a" "$b")" \
			"$(wc -l <"$OUT/ncu/$name.details.csv")"
		rm -f "$OUT/ncu/$name.ncu-rep"
	else
		fails=$((fails + 1))
		printf '%-28s ncu FAILED (log.txt)\n' "$name"
	fi
done
exit $((fails > 0))
