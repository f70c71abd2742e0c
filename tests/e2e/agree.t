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
done_testing
