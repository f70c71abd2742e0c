#!/bin/sh
# bench_check.sh: one "kgate check" against databases of growing history.
# The largest holds 10,000,000 samples: 1,000 commits (one run each) x 500
# kernels x 4 metrics x 5 launches, synthetic values.  Reports the wall
# time (best of 5) and peak memory of a check of the newest commit against
# the one before it, for 10, 100 and 1,000 commits of history.
# Goal (issue: the gate's core): under 100 ms and 64 MiB at 10M samples.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${KGATE_SRC:=$(cd "$here/../.." && pwd)}"
: "${KGATE_BUILD:=$KGATE_SRC/build}"
: "${KGATE:=$KGATE_BUILD/kgate}"
SIZES=${BENCH_CHECK_COMMITS:-10 100 1000}
W=$(mktemp -d "${TMPDIR:-/tmp}/kgate-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

printf '%s\n' '{"type":"header","format":1,"argv":["bench"]}' \
	'{"type":"kernel","ordinal":0,"name":"k0","metrics":{"m":1}}' '{"type":"footer"}' >"$W/one.jsonl"

build_db() { # path commits
	"$KGATE" ingest --db "$1" --commit seed --records "$W/one.jsonl" 2>/dev/null
	sqlite3 "$1" <<SQL
PRAGMA synchronous = OFF;
BEGIN;
DELETE FROM samples;
DELETE FROM runs;
DELETE FROM metrics;
WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < $2)
  INSERT INTO runs(id, commit_sha, branch, time, gpu_name, driver, source)
  SELECT i, printf('c%06d', i), 'main', 1700000000 + i, 'Synthetic GPU', '1', 'records' FROM r;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 500)
  INSERT OR IGNORE INTO kernels(id, mangled, demangled, base)
  SELECT i, printf('_Z7kernel%dPfi', i), printf('kernel%d(float*, int)', i), printf('kernel%d', i) FROM k;
INSERT INTO metrics(id, name, unit, deterministic) VALUES
  (1, 'gpu__time_duration.sum', 'ns', 0), (2, 'smsp__inst_executed.sum', 'inst', 1),
  (3, 'launch__registers_per_thread', '', 1), (4, 'launch__block_size', '', 1);
WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < $2 * 10000 - 1)
  INSERT INTO samples(run, benchmark, nvtx, kernel, metric, repeat, ordinal, value)
  SELECT i / 10000 + 1, 1, 1, (i % 10000) / 20 + 1, (i % 20) / 5 + 1, 0, i % 5,
         CASE (i % 20) / 5
           WHEN 0 THEN 10000 + ((i % 10000) / 20) * 10 + ((i * 7919) % 101)
           WHEN 1 THEN 1000000 + ((i % 10000) / 20)
           WHEN 2 THEN 32
           ELSE 256 END
  FROM s;
COMMIT;
SQL
}

for n in $SIZES; do
	db="$W/h$n.db"
	t0=$(date +%s.%N)
	build_db "$db" "$n"
	t1=$(date +%s.%N)
	samples=$(sqlite3 "$db" "SELECT count(*) FROM samples")
	head=$(printf 'c%06d' "$n")
	prev=$(printf 'c%06d' $((n - 1)))
	best=
	mem=0
	for i in 1 2 3 4 5; do
		a=$(date +%s.%N)
		/usr/bin/time -f '%M' -o "$W/time" "$KGATE" check --db "$db" --commit "$head" \
			--baseline "$prev" --no-store --format json >"$W/out.json" 2>"$W/err" || [ $? -eq 1 ]
		b=$(date +%s.%N)
		kb=$(tail -1 "$W/time")
		best=$(awk -v best="$best" -v a="$a" -v b="$b" \
			'BEGIN { t = b - a; print (best == "" || t < best) ? t : best }')
		[ "$kb" -gt "$mem" ] && mem=$kb
	done
	cmp=$(jq '.results | length' "$W/out.json")
	printf 'check: %4d commits, %8d samples: %6.0f ms (best of 5), peak %5.1f MiB, %d comparisons (db built in %.0f s)\n' \
		"$n" "$samples" "$(echo "$best * 1000" | bc -l)" "$(echo "$mem / 1024" | bc -l)" "$cmp" \
		"$(echo "$t1 - $t0" | bc -l)"
done
