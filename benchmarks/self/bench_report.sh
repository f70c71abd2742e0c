#!/bin/sh
# bench_report.sh: "kgate report" over 365 nightly runs of 200 kernels and 4
# metrics, against its anchor (under 2 s, into a file under 5 MB).
#
# The database is built from the real H200 ncu export in tests/fixtures/h200:
# it is ingested once, then SQL copies its launches' values into 365 runs of
# 200 kernels (each run takes 3 of the 5 real launches of a source kernel,
# rotating, so per-commit medians vary the way re-measurements do).  No value
# is invented.
set -eu
: "${KGATE:?}" "${KGATE_SRC:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/kgate-bench.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
DB="$T/k.db"
"$KGATE" ingest --db "$DB" --commit fixture --branch fixture --benchmark saxpy \
	--ncu-csv "$KGATE_SRC/tests/fixtures/h200/ncu_saxpy_strided_raw.csv" 2>/dev/null
t0=$(date +%s.%N)
sqlite3 "$DB" <<'SQL'
PRAGMA synchronous = OFF;
BEGIN;
CREATE TEMP TABLE src AS
  SELECT s.kernel AS k, s.metric AS m, s.value AS v,
         row_number() OVER (PARTITION BY s.kernel, s.metric ORDER BY s.ordinal) - 1 AS i
  FROM samples s JOIN metrics mt ON mt.id = s.metric
  WHERE mt.name IN ('gpu__time_duration.sum', 'sm__throughput.avg.pct_of_peak_sustained_elapsed',
                    'dram__bytes_read.sum', 'smsp__inst_executed.sum') AND s.run = 1;
CREATE TEMP TABLE srck AS SELECT k, row_number() OVER (ORDER BY k) - 1 AS rn FROM (SELECT DISTINCT k FROM src);
WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x < 199)
INSERT INTO kernels (mangled, demangled, base)
  SELECT printf('bench_kernel_%03d', x), printf('bench_kernel_%03d(float*, int)', x),
         printf('bench_kernel_%03d', x) FROM n;
WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x < 364)
INSERT INTO runs (commit_sha, branch, time, gpu_name, source, status)
  SELECT printf('%040x', 1000 + x), 'main', 1700000000 + 86400 * x, 'NVIDIA H200', 'ncu-csv', 'ok' FROM n;
CREATE TEMP TABLE bk AS
  SELECT id AS kid, CAST(substr(mangled, 14) AS INTEGER) AS x FROM kernels WHERE mangled LIKE 'bench_kernel_%';
INSERT INTO samples (run, benchmark, nvtx, kernel, metric, repeat, ordinal, value)
  SELECT r.id, 1, (SELECT min(id) FROM nvtx), bk.kid, src.m, 0, src.i, src.v
  FROM runs r JOIN bk
  JOIN srck ON srck.rn = bk.x % (SELECT count(*) FROM srck)
  JOIN src ON src.k = srck.k
  WHERE r.branch = 'main' AND ((src.i - r.id + 5000) % 5) < 3;
COMMIT;
SQL
t1=$(date +%s.%N)
n=$(sqlite3 "$DB" "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run WHERE r.branch = 'main'")
series=$(sqlite3 "$DB" "SELECT count(*) FROM (SELECT DISTINCT kernel, metric FROM samples s JOIN runs r ON r.id = s.run WHERE r.branch = 'main')")
echo "database: 365 runs, $series series, $n samples (built in $(echo "$t1 - $t0" | bc) s)"
best=""
for i in 1 2 3; do
	a=$(date +%s.%N)
	"$KGATE" report --db "$DB" --branch main --html "$T/r.html" 2>/dev/null
	b=$(date +%s.%N)
	t=$(echo "$b - $a" | bc)
	if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
done
size=$(wc -c <"$T/r.html")
echo "report: best of 3 $best s (anchor 2 s: ratio $(echo "scale=3; $best / 2" | bc))"
echo "report: $size bytes (anchor 5 MB: ratio $(echo "scale=3; $size / 5000000" | bc))"
