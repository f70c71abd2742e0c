#!/bin/sh
# bench_load.sh: store_load_samples() for 3 runs of a database holding
# 10,000,000 samples (2,000 runs x 5,000 samples: 100 kernels x 5 metrics x
# 10 launches; synthetic values).  Goal: well under 100 ms.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${KGATE_SRC:=$(cd "$here/../.." && pwd)}"
: "${KGATE_BUILD:=$KGATE_SRC/build}"
: "${KGATE:=$KGATE_BUILD/kgate}"
RUNS=${BENCH_LOAD_RUNS:-2000}
W=$(mktemp -d "${TMPDIR:-/tmp}/kgate-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

cc -O2 -std=c11 -D_GNU_SOURCE -I"$KGATE_SRC/include" -o "$W/bench_load" "$here/bench_load.c" \
	"$KGATE_BUILD/libkgate.a" -Wl,-Bstatic -lsqlite3 -ljansson -Wl,-Bdynamic -lstdc++ -lm -lpthread -ldl

# a database with kgate's schema: ingest one tiny run, then fill it with SQL
printf '%s\n' '{"type":"header","format":1,"argv":["b"]}' \
	'{"type":"kernel","ordinal":0,"name":"k0","metrics":{"m":1}}' '{"type":"footer"}' > "$W/one.jsonl"
"$KGATE" ingest --db "$W/big.db" --commit seed --records "$W/one.jsonl" 2>/dev/null
t0=$(date +%s.%N)
sqlite3 "$W/big.db" <<SQL
PRAGMA synchronous = OFF;
BEGIN;
DELETE FROM samples;
DELETE FROM runs;
WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < $RUNS)
  INSERT INTO runs(id, commit_sha, time, gpu_name) SELECT i, printf('c%06d', i), i, 'Synthetic' FROM r;
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
total=$(sqlite3 "$W/big.db" "SELECT count(*) FROM samples")
set -- $("$W/bench_load" "$W/big.db" 1000 1001 1002)
printf 'store_load_samples: %s runs, %s series, %s values from a database of %s samples: %.1f ms (best of 5; database built in %.0f s)\n' \
	"$1" "$2" "$3" "$total" "$(echo "$4 * 1000" | bc -l)" "$(echo "$t1 - $t0" | bc -l)"
