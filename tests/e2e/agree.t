#!/bin/sh
# agree.t: the collector against Nsight Compute on the same programs, from the
# fixtures recorded on the H200 (tests/fixtures/h200): the metrics-mode
# records of the transpose benchmarks and ncu's --set full raw page of one
# launch of each.  Both are ingested into one database; the kernel names must
# map to one kernel, instruction counts must be equal, durations within 3%
# and DRAM bytes read within 0.5% (ncu flushes the caches before each
# profiled launch, the collector does not; see docs/collector.md).
. "$(dirname "$0")/lib.sh"

H="$FIX/h200"
DB="$T/a.db"
med() { # run metric -> median value of the compute launches (ncu: its one launch)
	sqlite3 "$DB" "SELECT value FROM samples_named WHERE run = $1 AND metric = '$2'
		AND (nvtx = 'compute' OR nvtx = '') ORDER BY value" |
		awk '{ v[NR] = $1 } END { printf "%.1f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
within() { # a b limit: |a/b - 1| <= limit
	awk -v a="$1" -v b="$2" -v l="$3" 'BEGIN { d = a / b - 1; if (d < 0) d = -d; exit !(d <= l) }'
}
run=0
for v in transpose_naive transpose_tiled; do
	set --
	for f in "$H/suite/metrics/base/$v".*.jsonl; do set -- "$@" --records "$f"; done
	"$KGATE" ingest --db "$DB" --commit "k-$v" --benchmark "$v" "$@" 2>/dev/null
	"$KGATE" ingest --db "$DB" --commit "n-$v" --benchmark "$v" --ncu-csv "$H/ncu/$v.raw.csv" 2>/dev/null
	k=$((run + 1)) n=$((run + 2))
	run=$n
	is "$(sqlite3 "$DB" "SELECT count(DISTINCT kernel) FROM samples_named WHERE run IN ($k, $n)")" 1 \
		"$v: the collector's and ncu's names are one kernel"
	is "$(med $k smsp__inst_executed.sum)" "$(med $n smsp__inst_executed.sum)" "$v: instructions executed equal"
	a=$(med $k gpu__time_duration.sum) b=$(med $n gpu__time_duration.sum)
	ok "$v: duration median $a ns within 3% of ncu's $b ns" within "$a" "$b" 0.03
	a=$(med $k dram__bytes_read.sum) b=$(med $n dram__bytes_read.sum)
	ok "$v: DRAM bytes read $a within 0.5% of ncu's $b" within "$a" "$b" 0.005
done

# A PyTorch training step (tests/gpu/torch_step.py 5 8192 1024: data beyond
# the L2), in metrics mode and under ncu with the same metrics, twice each
# (tests/fixtures/h200/torch).  Through kgate's own ingest: every kernel the
# collector saw is one kernel with ncu's; instructions per kernel are equal
# wherever ncu reproduces its own count; kgate's function names are ncu's.
P="$H/torch"
"$KGATE" ingest --db "$DB" --commit torch-k1 --benchmark torch --records "$P"/metrics1.*.jsonl 2>/dev/null
"$KGATE" ingest --db "$DB" --commit torch-n1 --benchmark torch --ncu-csv "$P/ncu1.mangled.csv" 2>/dev/null
"$KGATE" ingest --db "$DB" --commit torch-n2 --benchmark torch --ncu-csv "$P/ncu2.mangled.csv" 2>/dev/null
id() { sqlite3 "$DB" "SELECT r.id FROM runs r WHERE r.commit_sha = '$1'"; }
k1=$(id torch-k1) n1=$(id torch-n1) n2=$(id torch-n2)
is "$(sqlite3 "$DB" "SELECT count(DISTINCT kernel) FROM samples_named WHERE run = $k1")" 13 "torch: the collector saw 13 kernels"
is "$(sqlite3 "$DB" "SELECT count(*) FROM (SELECT DISTINCT kernel FROM samples_named WHERE run = $k1
	INTERSECT SELECT DISTINCT kernel FROM samples_named WHERE run = $n1)")" 13 "torch: ncu saw the same 13, by name"
# each kernel's instruction counts in launch order, one line per kernel
inst() {
	sqlite3 "$DB" "SELECT kernel || ' ' || group_concat(value, ',') FROM (SELECT kernel, value FROM samples_named
		WHERE run = $1 AND metric = 'smsp__inst_executed.sum' ORDER BY kernel, ordinal) GROUP BY kernel"
}
inst "$k1" >"$T/k1" && inst "$n1" >"$T/n1" && inst "$n2" >"$T/n2"
# kernels whose counts ncu does not reproduce between its two runs are left out
awk 'NR == FNR { c[$1] = $2; next } c[$1] != $2 { print $1 }' "$T/n1" "$T/n2" >"$T/unstable"
is "$(sed 's/^_ZN7cutlass7Kernel2I43\(cutlass_80_simt_sgemm\).*/\1/' "$T/unstable")" "cutlass_80_simt_sgemm" \
	"torch: one kernel's instruction counts change between ncu's two runs (a cutlass SIMT SGEMM)"
is "$(grep -v -F -f "$T/unstable" "$T/k1" | sort)" "$(grep -v -F -f "$T/unstable" "$T/n1" | sort)" \
	"torch: the other 12 kernels' instructions equal ncu's, launch by launch"
is "$(wc -l <"$T/k1")" 13 "torch: and all 13 have counts"
# the function names: kgate's base name of each mangled name against ncu's
# export of the same launches with --print-kernel-base function
names() { # CSV -> "ID<TAB>Kernel Name" lines
	python3 -c 'import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r and not r[0].startswith("==")]
h = rows[0]
for r in rows[1:]:
    d = dict(zip(h, r))
    if d["ID"].strip(): print(d["ID"] + "\t" + d["Kernel Name"])' "$1"
}
names "$P/ncu1.mangled.csv" >"$T/m" && names "$P/ncu1.function.csv" >"$T/f"
join -t "$(printf '\t')" "$T/m" "$T/f" | cut -f2,3 | sort -u >"$T/ncu_names"
sqlite3 -separator "$(printf '\t')" "$DB" "SELECT DISTINCT kernel, base FROM samples_named WHERE run = $k1" | sort -u >"$T/kg_names"
is "$(wc -l <"$T/ncu_names")" 13 "torch: ncu names 13 kernels"
is "$(cat "$T/kg_names")" "$(cat "$T/ncu_names")" "torch: kgate's function name of every kernel is ncu's"

# The suite re-recorded on an H100 with the collector of 2026-12-05 (one-pass
# set in a user-replay session, auto ranges, cache control all, the flush on
# the launch's stream: tests/fixtures/h100/suite) against the H200 recording
# of 2026-12-03 (kernel replay, no flush): the same binaries on the same chip
# (GH100), so each kernel's instruction counts are equal launch for launch;
# DRAM bytes differ where the flush empties the L2 the previous launch left
# full (matmul's inputs: twice the bytes).  reduction_tree ran on 2^24
# elements then, 2^26 now, so its counts differ and it is left out.
N="$FIX/h100/suite/metrics"
like "$(head -1 "$(ls "$N"/base/stream_triad.*.jsonl | head -1)")" '"replay":"user","cache_control":"all","cache_flush":"stream","range":"auto"' \
	"h100 suite: recorded in a user-replay session with the flush"
is "$(cat "$N"/*/*.jsonl | grep '"type":"kernel"' | grep -vc '"smsp__inst_executed.sum":[0-9]')" 0 \
	"h100 suite: every kernel record has an instruction count"
is "$(cat "$N"/*/*.jsonl | grep -c '"type":"error"')" 0 "h100 suite: no error records"
counts() { # dir side benchmark -> the kernel's instruction counts, one per line, sorted
	cat "$1/$2/$3".*.jsonl | grep '"type":"kernel"' | grep -o '"smsp__inst_executed.sum":[0-9.e+]*' | sort | uniq -c
}
for side in base head; do
	for b in stream_triad matmul_naive matmul_tiled transpose_naive transpose_tiled reduction_atomic tail_wave tail_over_one_wave; do
		is "$(counts "$N" $side $b)" "$(counts "$H/suite/metrics" $side $b)" \
			"h100 session vs h200 kernel replay, $side $b: the same instruction counts"
	done
done
done_testing
