#!/bin/sh
# report_db.sh DB RUNS KERNELS: the database of bench_report.sh.  RUNS
# nightly runs of main with KERNELS kernels x 4 metrics, 3 launches each.
#
# Built from the real H200 ncu export in tests/fixtures/h200: it is ingested
# once, then SQL copies its launches' values into the runs (each run takes 3
# of the 5 real launches of a source kernel, rotating, so per-commit medians
# vary the way re-measurements do).  Then, synthetic, so that the change-point
# search has something to find: every 10th kernel's values are scaled by
# 1.15 from a run between 40% and 65% of the way (a step up), and every 10th
# kernel from the 5th by 0.9 from 70% of the way (a step down).
#
# The rows are written with SQL, which kgate's run points (schema 7) do not
# see; so the database is then taken back to schema 6 and migrated by an
# ingest of the export once more (on branch "fixture"), as an older
# database is: the migration computes every run's points from its samples.
# With OLD_DB set, the schema-6 database is also copied there first (for a
# kgate before schema 7, measured side by side).
set -eu
: "${KGATE:?}" "${KGATE_SRC:?}"
DB=$1 RUNS=$2 KERNELS=$3
"$KGATE" ingest --db "$DB" --commit fixture --branch fixture --benchmark saxpy \
	--ncu-csv "$KGATE_SRC/tests/fixtures/h200/ncu_saxpy_strided_raw.csv" 2>/dev/null
sqlite3 "$DB" >/dev/null <<SQL
PRAGMA synchronous = OFF;
PRAGMA journal_mode = OFF;
PRAGMA cache_size = -200000;
BEGIN;
CREATE TEMP TABLE src AS
  SELECT s.kernel AS k, s.metric AS m, s.value AS v,
         row_number() OVER (PARTITION BY s.kernel, s.metric ORDER BY s.ordinal) - 1 AS i
  FROM samples s JOIN metrics mt ON mt.id = s.metric
  WHERE mt.name IN ('gpu__time_duration.sum', 'sm__throughput.avg.pct_of_peak_sustained_elapsed',
                    'dram__bytes_read.sum', 'smsp__inst_executed.sum') AND s.run = 1;
CREATE TEMP TABLE srck AS SELECT k, row_number() OVER (ORDER BY k) - 1 AS rn FROM (SELECT DISTINCT k FROM src);
WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x < $KERNELS - 1)
INSERT INTO kernels (mangled, demangled, base)
  SELECT printf('bench_kernel_%04d', x), printf('bench_kernel_%04d(float*, int)', x),
         printf('bench_kernel_%04d', x) FROM n;
WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x < $RUNS - 1)
INSERT INTO runs (commit_sha, branch, time, gpu_name, source, status)
  SELECT printf('%010x%030x', 7919 * (x + 1), x), 'main', 1700000000 + 86400 * x, 'NVIDIA H200', 'ncu-csv', 'ok' FROM n;
CREATE TEMP TABLE bk AS
  SELECT id AS kid, CAST(substr(mangled, 14) AS INTEGER) AS x FROM kernels WHERE mangled LIKE 'bench_kernel_%';
CREATE TEMP TABLE rr AS SELECT id, row_number() OVER (ORDER BY id) - 1 AS p FROM runs WHERE branch = 'main';
INSERT INTO samples (run, benchmark, nvtx, kernel, metric, repeat, ordinal, value)
  SELECT rr.id, 1, (SELECT min(id) FROM nvtx), bk.kid, src.m, 0, src.i,
         src.v * CASE WHEN bk.x % 10 = 0 AND rr.p >= $RUNS * 2 / 5 + (bk.x / 10) % ($RUNS / 4) THEN 1.15
                      WHEN bk.x % 10 = 5 AND rr.p >= $RUNS * 7 / 10 THEN 0.9 ELSE 1 END
  FROM rr JOIN bk
  JOIN srck ON srck.rn = bk.x % (SELECT count(*) FROM srck)
  JOIN src ON src.k = srck.k
  WHERE ((src.i - rr.id + 5000) % 5) < 3
  ORDER BY rr.id;
COMMIT;
SQL
sqlite3 "$DB" "DROP TRIGGER IF EXISTS samples_update_points; DROP TRIGGER IF EXISTS samples_delete_points;
	DROP TRIGGER IF EXISTS runs_delete_points; DROP TABLE IF EXISTS run_points; PRAGMA user_version = 6"
[ -z "${OLD_DB:-}" ] || cp "$DB" "$OLD_DB"
t0=$(date +%s.%N)
"$KGATE" ingest --db "$DB" --commit fixture --branch fixture --benchmark saxpy \
	--ncu-csv "$KGATE_SRC/tests/fixtures/h200/ncu_saxpy_strided_raw.csv" 2>/dev/null
echo "report_db.sh: the migration to schema 7 (every run's points from its samples) and an ingest: $(echo "$(date +%s.%N) - $t0" | bc) s" >&2
