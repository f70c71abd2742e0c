#!/bin/sh
# bench_check.sh: whole "kgate check" processes that run the statistics.
#
# Each case is a database built with SQL (synthetic values): a baseline
# commit with 5 runs (baseline_runs' default) and a head commit with one,
# K kernels x 4 metrics x L launches a run, each run's benchmarks listed in
# run_benchmarks as ingest lists them (without them the check would scan
# every run's samples for their benchmark names: a run stored before schema
# 4).  Two metrics are noisy and judged
# by the statistics: gpu__time_duration.sum on a 32 ns tick (ties, as
# CUPTI's timestamps have) and a throughput percentage; two are
# deterministic counters.  One kernel in 50 is 6% slower in the head.  The
# check loads a thresholds file (5% for the noisy metrics) that names a
# metric kgate does not derive, so on a machine with the collector library
# and CUDA the names are confirmed through CUPTI (the first check fills the
# cache of confirmed names; the timed ones use it).
#
# Each figure is timed in rounds, interleaved with its anchor: the sqlite3
# shell reading the same samples with their names (what any check must read)
# from the same database.  Printed: the check's wall time, CPU time (user +
# system: on a shared machine the wall time counts other jobs too) and peak
# memory, the anchor's wall time, and check/anchor (wall) as min and median
# over the rounds.
#
# Goals: 500 kernels x 20 launches under 150 ms; 2,000 kernels x 50
# launches (a PyTorch training step's scale) under 1 s and 64 MiB; 50,000
# kernels x 20 launches (one baseline run) under 10 s and 256 MiB.
#
# KGATE_OLD=BINARY: in each round, that kgate's check too (on a copy of the
# database taken back to schema 6, for a kgate before schema 7), with its
# own figures and old/new (wall) as min and median; the two must give the
# same verdicts.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${KGATE_SRC:=$(cd "$here/../.." && pwd)}"
: "${KGATE_BUILD:=$KGATE_SRC/build}"
: "${KGATE:=$KGATE_BUILD/kgate}"
ROUNDS=${BENCH_CHECK_ROUNDS:-5}
# kernels:launches:baseline runs
CASES=${BENCH_CHECK_CASES:-500:20:5 2000:50:5 50000:20:1}
W=$(mktemp -d "${TMPDIR:-/tmp}/kgate-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
export XDG_CACHE_HOME="$W/cache"

printf '%s\n' '{"type":"header","format":1,"argv":["bench"]}' \
	'{"type":"kernel","ordinal":0,"name":"k0","metrics":{"m":1}}' '{"type":"footer"}' >"$W/one.jsonl"
cat >"$W/thresholds.yaml" <<'EOF'
version: 1
statistics: { alpha: 0.001, min_samples: 7, baseline_runs: 5 }
defaults:
  gpu__time_duration.sum: { regression: 5% }
  dram__throughput.avg.pct_of_peak_sustained_elapsed: { regression: 5% }
  smsp__inst_executed.sum: { deterministic: true }
  launch__registers_per_thread: { deterministic: true }
EOF

build_db() { # path kernels launches baseline-runs
	"$KGATE" ingest --db "$1" --commit seed --records "$W/one.jsonl" 2>/dev/null
	per=$(($2 * 4 * $3))
	runs=$(($4 + 1))
	sqlite3 "$1" <<SQL
PRAGMA synchronous = OFF;
BEGIN;
DELETE FROM samples;
DELETE FROM run_benchmarks;
DELETE FROM runs;
DELETE FROM metrics;
WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < $runs)
  INSERT INTO runs(id, commit_sha, branch, time, gpu_name, driver, source)
  SELECT i, CASE WHEN i < $runs THEN 'base' ELSE 'head' END, 'main', 1700000000 + i,
         'Synthetic GPU', '1', 'records' FROM r;
INSERT INTO run_benchmarks(run, benchmark) SELECT id, 1 FROM runs;
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < $2)
  INSERT OR IGNORE INTO kernels(id, mangled, demangled, base)
  SELECT i, printf('_ZN5torch6native7kernel%dEPfS1_i', i),
         printf('torch::native::kernel%d(float*, float*, int)', i), printf('kernel%d', i) FROM k;
INSERT INTO metrics(id, name, unit, deterministic) VALUES
  (1, 'gpu__time_duration.sum', 'ns', 0),
  (2, 'dram__throughput.avg.pct_of_peak_sustained_elapsed', '%', 0),
  (3, 'smsp__inst_executed.sum', 'inst', 1), (4, 'launch__registers_per_thread', '', 1);
WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < $runs * $per - 1)
  INSERT INTO samples(run, benchmark, nvtx, kernel, metric, repeat, ordinal, value)
  SELECT run, 1, 1, kern, met, 0, i % $3,
         CASE met
           WHEN 1 THEN 32 * ((10000 + kern * 10) * slow * (1 + noise * 0.01) / 32)
           WHEN 2 THEN (40 + kern % 50) / slow * (1 + noise * 0.01)
           WHEN 3 THEN 1000000 + kern
           ELSE 32 END
  FROM (SELECT i, i / $per + 1 AS run, (i % $per) / ($3 * 4) + 1 AS kern,
               (i % ($3 * 4)) / $3 + 1 AS met, ((i * 7919) % 101 - 50) / 50.0 AS noise,
               CASE WHEN i / $per + 1 = $runs AND ((i % $per) / ($3 * 4)) % 50 = 7
                    THEN 1.06 ELSE 1.0 END AS slow FROM s);
COMMIT;
SQL
}

ms() { echo "$1" | awk '{ printf "%.0f", $1 * 1000 }'; }

for c in $CASES; do
	k=${c%%:*}; rest=${c#*:}; l=${rest%%:*}; nb=${rest#*:}
	db="$W/k$k.db"
	t0=$(date +%s.%N)
	build_db "$db" "$k" "$l" "$nb"
	t1=$(date +%s.%N)
	samples=$(sqlite3 "$db" "SELECT count(*) FROM samples")
	if [ -n "${KGATE_OLD:-}" ]; then
		cp "$db" "$db.v6"
		sqlite3 "$db.v6" "DROP TRIGGER IF EXISTS samples_update_points;
			DROP TRIGGER IF EXISTS samples_delete_points; DROP TRIGGER IF EXISTS runs_delete_points;
			DROP TABLE IF EXISTS run_points; PRAGMA user_version = 6"
		"$KGATE_OLD" check --db "$db.v6" --commit head --baseline base -t "$W/thresholds.yaml" \
			--no-store --format json >"$W/old.json" 2>/dev/null || [ $? -eq 1 ]
	fi
	chk() {
		"$KGATE" check --db "$db" --commit head --baseline base -t "$W/thresholds.yaml" \
			--no-store --format json >"$W/out.json" 2>"$W/err" || [ $? -eq 1 ]
	}
	anchor() {
		sqlite3 "$db" "SELECT b.name, n.path, k.mangled, k.demangled, m.name, s.value, s.run
		  FROM samples s JOIN benchmarks b ON b.id = s.benchmark JOIN nvtx n ON n.id = s.nvtx
		  JOIN kernels k ON k.id = s.kernel JOIN metrics m ON m.id = s.metric
		  WHERE s.run IN (SELECT id FROM runs)" >/dev/null
	}
	chk # fills the cache of confirmed metric names, warms the page cache
	: >"$W/rounds"
	for i in $(seq "$ROUNDS"); do
		a=$(date +%s.%N); anchor; b=$(date +%s.%N)
		c0=$(date +%s.%N); /usr/bin/time -f '%M %U %S' -o "$W/time" "$KGATE" check --db "$db" --commit head \
			--baseline base -t "$W/thresholds.yaml" --no-store --format json >"$W/out.json" 2>"$W/err" ||
			[ $? -eq 1 ]
		c1=$(date +%s.%N)
		echo "$(echo "$b - $a" | bc -l) $(echo "$c1 - $c0" | bc -l) $(tail -1 "$W/time")" >>"$W/rounds"
		if [ -n "${KGATE_OLD:-}" ]; then
			o0=$(date +%s.%N); /usr/bin/time -f '%M %U %S' -o "$W/time" "$KGATE_OLD" check --db "$db.v6" \
				--commit head --baseline base -t "$W/thresholds.yaml" --no-store --format json \
				>"$W/old.json" 2>/dev/null || [ $? -eq 1 ]
			o1=$(date +%s.%N)
			echo "$(echo "$c1 - $c0" | bc -l) $(echo "$o1 - $o0" | bc -l) $(tail -1 "$W/time")" >>"$W/old"
		fi
	done
	jq -e '.results | length > 0' "$W/out.json" >/dev/null
	fails=$(jq '[.results[] | select(.verdict == "FAIL")] | length' "$W/out.json")
	incon=$(jq '[.results[] | select(.verdict == "INCONCLUSIVE")] | length' "$W/out.json")
	cmp=$(jq '.results | length' "$W/out.json")
	awk -v k="$k" -v l="$l" -v nb="$nb" -v n="$samples" -v cmp="$cmp" -v f="$fails" \
	    -v inc="$incon" -v built="$(echo "$t1 - $t0" | bc -l)" '
		{ a[NR] = $1; c[NR] = $2; r[NR] = $2 / $1; u[NR] = $4 + $5; if ($3 > mem) mem = $3 }
		function sort(x, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && x[j-1] > x[j]; j--) { t = x[j]; x[j] = x[j-1]; x[j-1] = t } }
		END {
			n2 = NR; sort(a, n2); sort(c, n2); sort(r, n2); sort(u, n2); m = int((n2 + 1) / 2)
			printf "check: %d kernels x 4 metrics x %d launches, %d baseline run(s), %d samples: wall %.0f/%.0f ms, CPU %.0f/%.0f ms (min/median of %d), peak %.1f MiB; anchor (sqlite3 reads the samples) %.0f/%.0f ms; ratio %.2f/%.2f; %d comparisons, %d FAIL, %d INCONCLUSIVE (db built in %.0f s)\n",
				k, l, nb, n, 1000 * c[1], 1000 * c[m], 1000 * u[1], 1000 * u[m], n2, mem / 1024, 1000 * a[1], 1000 * a[m], r[1], r[m], cmp, f, inc, built
		}' "$W/rounds"
	if [ -n "${KGATE_OLD:-}" ]; then
		jq -S '[.results[] | [.benchmark, .kernel, .metric, .verdict]]' "$W/old.json" >"$W/o.v"
		jq -S '[.results[] | [.benchmark, .kernel, .metric, .verdict]]' "$W/out.json" >"$W/n.v"
		cmp -s "$W/o.v" "$W/n.v" || { echo "bench_check: the old kgate's verdicts differ" >&2; exit 1; }
		awk '{ n[NR] = $1; o[NR] = $2; r[NR] = $2 / $1; u[NR] = $4 + $5; if ($3 > mem) mem = $3 }
		function sort(x, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && x[j-1] > x[j]; j--) { t = x[j]; x[j] = x[j-1]; x[j-1] = t } }
		END { n2 = NR; sort(o, n2); sort(r, n2); sort(u, n2); m = int((n2 + 1) / 2)
			printf "  the old kgate (same verdicts): wall %.0f/%.0f ms, CPU %.0f/%.0f ms, peak %.1f MiB; old/new wall %.2f/%.2f (min/median of %d)\n",
				1000 * o[1], 1000 * o[m], 1000 * u[1], 1000 * u[m], mem / 1024, r[1], r[m], n2 }' "$W/old"
		: >"$W/old"
		rm -f "$db.v6"
	fi
	rm -f "$db"
done
