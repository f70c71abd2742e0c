#!/bin/sh
# bench_ingest.sh: "kgate ingest" of a records file of 1,000,000 samples
# (200,000 kernel records x 5 metrics, synthetic), against the sqlite3
# shell's .import of the same rows as CSV into a table laid out as kgate's
# samples (anchor.sh), in one round, alternately, over 3 rounds; then jansson against json-c on
# 1,000,000 kernel records.  Prints both rates and the ratio of rates (min
# and median over the rounds).  Goals: ingest <= 2 s and >= 2x the .import
# rate.  KGATE_OLD=BINARY: in each round, that kgate's ingest too, and
# old/new (time) as min and median.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${KGATE_SRC:=$(cd "$here/../.." && pwd)}"
: "${KGATE_BUILD:=$KGATE_SRC/build}"
: "${KGATE:=$KGATE_BUILD/kgate}"
N=${BENCH_INGEST_RECORDS:-200000}
NJSON=${BENCH_JSON_RECORDS:-1000000}
W=$(mktemp -d "${TMPDIR:-/tmp}/kgate-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

. "$here/anchor.sh"

awk -v n="$N" -v csv="$W/rows.csv" -f "$here/gen_records.awk" > "$W/records.jsonl"
samples=$(wc -l < "$W/rows.csv")

# In each round, in turn: kgate ingest into a fresh database, and the
# sqlite3 shell's .import of the same rows into a table laid out as kgate's
# samples (anchor.sh: a rowid table, the index on run, WAL, one transaction).
ROUNDS=${BENCH_INGEST_ROUNDS:-3}
: > "$W/times"
for r in $(seq "$ROUNDS"); do
	rm -f "$W/k.db" "$W/k.db-wal" "$W/k.db-shm"
	t0=$(now)
	/usr/bin/time -f '%U %S' -o "$W/cpu.k" "$KGATE" ingest --db "$W/k.db" --commit bench \
		--records "$W/records.jsonl" 2>"$W/ingest.err"
	t1=$(now)
	tk=$(elapsed "$t0" "$t1")
	stored=$(sqlite3 "$W/k.db" "SELECT count(*) FROM samples")
	[ "$stored" -eq "$samples" ] || { echo "bench_ingest: stored $stored samples, expected $samples" >&2; exit 1; }
	ts=$(anchor_import "$W/s.db" "$W/rows.csv" /usr/bin/time -f '%U %S' -o "$W/cpu.s")
	# wall of each, then CPU (user + system) of each
	echo "$tk $ts $(awk '{ print $1 + $2 }' "$W/cpu.k") $(awk '{ print $1 + $2 }' "$W/cpu.s")" >> "$W/times"
	if [ -n "${KGATE_OLD:-}" ]; then
		rm -f "$W/o.db" "$W/o.db-wal" "$W/o.db-shm"
		t0=$(now)
		"$KGATE_OLD" ingest --db "$W/o.db" --commit bench --records "$W/records.jsonl" 2>/dev/null
		t1=$(now)
		echo "$(elapsed "$t0" "$t1") $tk" >> "$W/old"
	fi
done
if [ -n "${KGATE_OLD:-}" ]; then
	awk '{ o[NR] = $1; q[NR] = $1 / $2 }
	END {
		for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) {
			if (o[j] < o[i]) { t = o[i]; o[i] = o[j]; o[j] = t }
			if (q[j] < q[i]) { t = q[i]; q[i] = q[j]; q[j] = t } }
		m = NR % 2 ? q[(NR + 1) / 2] : (q[NR / 2] + q[NR / 2 + 1]) / 2
		printf "the old kgate ingest best %.3f s; old/new time: min %.2f, median %.2f\n", o[1], q[1], m
	}' "$W/old"
fi
awk -v n="$samples" -v k="$N" '
{ a[NR] = $1; b[NR] = $2; q[NR] = $2 / $1; ck += $3; cs += $4 }
END {
	for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) {
		if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
		if (q[j] < q[i]) { t = q[i]; q[i] = q[j]; q[j] = t } }
	m = NR % 2 ? q[(NR + 1) / 2] : (q[NR / 2] + q[NR / 2 + 1]) / 2
	printf "ingest of %d samples (%d kernel records), %d rounds: kgate ingest best %.3f s (%.0f samples/s), sqlite3 .import best %.3f s (%.0f samples/s); rate kgate/sqlite3: min %.2fx, median %.2fx\n", n, k, NR, a[1], n / a[1], b[1], n / b[1], q[1], m
	printf "CPU (user + system) per round: kgate %.2f s, sqlite3 %.2f s: sqlite3/kgate %.2fx (what the rate ratio tends to when the two threads do not get two cores)\n", ck / NR, cs / NR, cs / ck
	printf "goals: <= 2 s: %s; >= 2x .import: %s\n", (a[1] <= 2 ? "met" : "missed"), (q[1] >= 2 ? "met" : (m >= 2 ? "met at the median" : "missed"))
}' "$W/times"

# jansson against json-c (bench_json.c, built once per library)
if cc -O2 -std=c11 -D_GNU_SOURCE -DUSE_JANSSON -o "$W/bench_jansson" "$here/bench_json.c" -ljansson 2>"$W/cc.err" &&
   cc -O2 -std=c11 -D_GNU_SOURCE -DUSE_JSONC -o "$W/bench_jsonc" "$here/bench_json.c" -ljson-c 2>>"$W/cc.err"; then
	awk -v n="$NJSON" -f "$here/gen_records.awk" > "$W/json.jsonl"
	set -- $("$W/bench_jansson" "$W/json.jsonl")
	jl=$2 jt=$3 js=$4
	set -- $("$W/bench_jsonc" "$W/json.jsonl")
	ct=$3 cs=$4
	[ "$js" = "$cs" ] || echo "bench_json: the two parsers disagree ($js vs $cs)" >&2
	printf 'json parse of %d lines: jansson %.3f s (%.0f lines/s), json-c %.3f s (%.0f lines/s), json-c/jansson speed %.2fx\n' \
		"$jl" "$jt" "$(echo "$jl / $jt" | bc -l)" "$ct" "$(echo "$jl / $ct" | bc -l)" "$(echo "$jt / $ct" | bc -l)"
else
	echo "bench_json: not built (jansson or json-c headers missing): $(head -1 "$W/cc.err")"
fi
