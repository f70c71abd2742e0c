#!/bin/sh
# bench_pg.sh: the two store backends side by side at one large stored size:
# the same database of BENCH_PG_RUNS x 5,000 samples (default 2,000 runs:
# 10,000,000 samples; 100 kernels x 5 metrics x 10 launches; synthetic
# values) in SQLite and in PostgreSQL (a server started here, on a Unix
# socket, as tests/e2e/pg.sh does), then store_load_samples() for 3 runs
# (best of 5) and a whole `kgate check --no-store` process (best of 5) on
# each, and their ratio.  Skipped when the PostgreSQL server is not installed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${KGATE_SRC:=$(cd "$here/../.." && pwd)}"
: "${KGATE_BUILD:=$KGATE_SRC/build}"
: "${KGATE:=$KGATE_BUILD/kgate}"
RUNS=${BENCH_PG_RUNS:-2000}
T=$(mktemp -d "${TMPDIR:-/tmp}/kgate-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$KGATE_SRC/tests/e2e/pg.sh"
if ! pg_start 2>/dev/null; then
	echo "bench_pg: skipped ($PG_WHY)"
	exit 0
fi

cc -O2 -std=c11 -D_GNU_SOURCE -I"$KGATE_SRC/include" -o "$T/bench_load" "$here/bench_load.c" \
	"$KGATE_BUILD/libkgate.a" -Wl,-Bstatic -lsqlite3 -ljansson -Wl,-Bdynamic -lstdc++ -lm -lpthread -ldl

printf '%s\n' '{"type":"header","format":1,"argv":["b"]}' \
	'{"type":"kernel","ordinal":0,"name":"k0","metrics":{"m":1}}' '{"type":"footer"}' > "$T/one.jsonl"
pg_createdb big
P=$(pg_url big)
"$KGATE" ingest --db "$T/big.db" --commit seed --records "$T/one.jsonl" 2>/dev/null
"$KGATE" ingest --db "$P" --commit seed --records "$T/one.jsonl" 2>/dev/null
t0=$(date +%s.%N)
sqlite3 "$T/big.db" <<SQL
PRAGMA synchronous = OFF;
BEGIN;
DELETE FROM samples; DELETE FROM run_benchmarks; DELETE FROM runs;
WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < $RUNS)
  INSERT INTO runs(id, commit_sha, time, gpu_name, driver) SELECT i, printf('c%06d', i), i, 'Synthetic', '1' FROM r;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 100)
  INSERT OR IGNORE INTO kernels(id, mangled, demangled, base) SELECT i, 'k' || i, 'k' || i, 'k' || i FROM k;
WITH RECURSIVE m(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM m WHERE i < 5)
  INSERT OR IGNORE INTO metrics(id, name, unit, deterministic) SELECT i, 'metric' || i, '', 0 FROM m;
WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < $RUNS * 5000 - 1)
  INSERT INTO samples(run, benchmark, nvtx, kernel, metric, repeat, ordinal, value)
  SELECT i / 5000 + 1, 1, 1, (i % 5000) / 50 + 1, (i % 50) / 10 + 1, 0, i % 10, (i % 997) * 1.5 FROM s;
COMMIT;
SQL
t1=$(date +%s.%N)
pg_psql big "
DELETE FROM samples; DELETE FROM run_benchmarks; DELETE FROM runs;
INSERT INTO runs(id, commit_sha, time, gpu_name, driver)
  SELECT i, 'c' || lpad(i::text, 6, '0'), i, 'Synthetic', '1' FROM generate_series(1, $RUNS) i;
INSERT INTO kernels(id, mangled, demangled, base)
  SELECT i, 'k' || i, 'k' || i, 'k' || i FROM generate_series(1, 100) i ON CONFLICT DO NOTHING;
INSERT INTO metrics(id, name, unit, deterministic)
  SELECT i, 'metric' || i, '', 0 FROM generate_series(1, 5) i ON CONFLICT DO NOTHING;
INSERT INTO samples(run, benchmark, nvtx, kernel, metric, repeat, ordinal, value)
  SELECT i / 5000 + 1, 1, 1, (i % 5000) / 50 + 1, (i % 50) / 10 + 1, 0, i % 10, (i % 997) * 1.5
  FROM generate_series(0, $RUNS * 5000 - 1) i;
ANALYZE;" >/dev/null
t2=$(date +%s.%N)
ns=$(sqlite3 "$T/big.db" "SELECT count(*) FROM samples")
np=$(pg_psql big "SELECT count(*) FROM samples")
mid=$((RUNS / 2))
set -- $("$T/bench_load" "$T/big.db" $mid $((mid + 1)) $((mid + 2)))
sl=$4
set -- $("$T/bench_load" "$P" $mid $((mid + 1)) $((mid + 2)))
pl=$4
printf 'store_load_samples, %s runs, %s series, %s values: SQLite %.1f ms (%s samples, built in %.0f s), PostgreSQL %.1f ms (%s samples, built in %.0f s): PostgreSQL/SQLite %.2f\n' \
	"$1" "$2" "$3" "$(echo "$sl * 1000" | bc -l)" "$ns" "$(echo "$t1 - $t0" | bc -l)" \
	"$(echo "$pl * 1000" | bc -l)" "$np" "$(echo "$t2 - $t1" | bc -l)" "$(echo "$pl / $sl" | bc -l)"

best_check() { # db: best of 5 wall ms of a whole kgate check
	best=""
	for i in 1 2 3 4 5; do
		a=$(date +%s%N)
		"$KGATE" check --db "$1" --commit "$(printf 'c%06d' $((mid + 5)))" \
			--baseline "$(printf 'c%06d' $((mid + 4)))" --no-store --format json >/dev/null 2>&1 || true
		b=$(date +%s%N)
		ms=$(((b - a) / 1000000))
		[ -z "$best" ] || [ $ms -lt "$best" ] && best=$ms
	done
	echo "$best"
}
cs=$(best_check "$T/big.db")
cp=$(best_check "$P")
printf 'kgate check --no-store (one head run, one baseline run, 500 series): SQLite %s ms, PostgreSQL %s ms: PostgreSQL/SQLite %.2f\n' \
	"$cs" "$cp" "$(echo "$cp / $cs" | bc -l)"
