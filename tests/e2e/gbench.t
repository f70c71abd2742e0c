#!/bin/sh
# gbench.t: "kgate ingest" of Google Benchmark JSON (src/import/gbench.c).
# The real fixture (tests/fixtures/gbench/) is counted by an independent
# reader (Python's json); the files written here are SYNTHETIC (made up in
# Google Benchmark's layout, no program measured them): repetitions with
# their aggregates, a run reported by aggregates alone, time units other
# than ns, a user counter, a failed run; then the refusals (a truncated
# document, a time unit Google Benchmark does not write).
. "$(dirname "$0")/lib.sh"

GB="$FIX/gbench/googlecpp_output.json"
DB="$T/k.db"
q() { sqlite3 "$DB" "$1"; }
runs() { q "SELECT count(*) FROM runs"; }
metric_of() {   # commit kernel metric -> values, comma-separated, by ordinal
	q "SELECT group_concat(v, ',') FROM (SELECT printf('%g', s.value) AS v FROM samples s
	   JOIN runs r ON r.id = s.run JOIN kernels k ON k.id = s.kernel JOIN metrics m ON m.id = s.metric
	   WHERE r.commit_sha = '$1' AND k.mangled = '$2' AND m.name = '$3' ORDER BY s.ordinal)"
}

# --- the real fixture ---
want=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
runs = [b for b in d["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
print(sum(1 for b in runs for k, v in b.items()
          if k in ("real_time", "cpu_time", "iterations") and isinstance(v, (int, float))), len(runs))' "$GB")
set -- $want
run "$KGATE" ingest --db "$DB" --commit g1 --format json "$GB"
is "$rc" 0 "a real Google Benchmark output ingests"
like "$out" "\"kernels\": ?$2, ?\"samples\": ?$1," "its runs and samples as counted by Python's json ($2, $1)"
is "$(q "SELECT b.name FROM benchmarks b")" "a.out" "the benchmark is the executable's name"
is "$(q "SELECT source FROM runs")" "gbench" "the run's source"
is "$(metric_of g1 fib_20 real_time)" \
	"$(python3 -c 'import json,sys; print("%g" % [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b["name"] == "fib_20"][0]["real_time"])' "$GB")" \
	"real_time stored in ns"
is "$(q "SELECT unit FROM metrics WHERE name = 'cpu_time'")" "ns" "cpu_time in ns"

# --- repetitions, aggregates, units, counters (synthetic) ---
cat > "$T/reps.json" <<'EOF'
{
  "context": {"date": "2026-01-01T00:00:00+00:00", "host_name": "synthetic", "executable": "/x/bench_copy",
              "num_cpus": 2, "mhz_per_cpu": 1000, "library_version": "v1.9.0", "library_build_type": "release"},
  "benchmarks": [
    {"name": "BM_copy/64", "run_name": "BM_copy/64", "run_type": "iteration", "repetitions": 3,
     "repetition_index": 0, "threads": 1, "iterations": 100, "real_time": 1.5, "cpu_time": 1.25,
     "time_unit": "us", "bytes_per_second": 4.0e9, "launches": 7},
    {"name": "BM_copy/64", "run_name": "BM_copy/64", "run_type": "iteration", "repetitions": 3,
     "repetition_index": 1, "threads": 1, "iterations": 100, "real_time": 1.75, "cpu_time": 1.5,
     "time_unit": "us", "bytes_per_second": 3.5e9, "launches": 7},
    {"name": "BM_copy/64", "run_name": "BM_copy/64", "run_type": "iteration", "repetitions": 3,
     "repetition_index": 2, "threads": 1, "iterations": 100, "real_time": 2, "cpu_time": 1.75,
     "time_unit": "us", "bytes_per_second": 3.0e9, "launches": 7},
    {"name": "BM_copy/64_mean", "run_name": "BM_copy/64", "run_type": "aggregate", "repetitions": 3,
     "threads": 1, "aggregate_name": "mean", "aggregate_unit": "time", "iterations": 3,
     "real_time": 1.75, "cpu_time": 1.5, "time_unit": "us", "bytes_per_second": 3.5e9, "launches": 7},
    {"name": "BM_copy/64_stddev", "run_name": "BM_copy/64", "run_type": "aggregate", "repetitions": 3,
     "threads": 1, "aggregate_name": "stddev", "aggregate_unit": "time", "iterations": 3,
     "real_time": 0.25, "cpu_time": 0.25, "time_unit": "us", "bytes_per_second": 0.5e9, "launches": 0},
    {"name": "BM_only_mean_mean", "run_name": "BM_only_mean", "run_type": "aggregate", "repetitions": 5,
     "threads": 1, "aggregate_name": "mean", "aggregate_unit": "time", "iterations": 5,
     "real_time": 3, "cpu_time": 2, "time_unit": "ms"},
    {"name": "BM_only_mean_cv", "run_name": "BM_only_mean", "run_type": "aggregate", "repetitions": 5,
     "threads": 1, "aggregate_name": "cv", "aggregate_unit": "percentage", "iterations": 5,
     "real_time": 0.01, "cpu_time": 0.01, "time_unit": "ms"},
    {"name": "BM_broken", "run_name": "BM_broken", "run_type": "iteration", "repetitions": 1,
     "repetition_index": 0, "threads": 1, "iterations": 0, "real_time": 0, "cpu_time": 0,
     "time_unit": "ns", "error_occurred": true, "error_message": "cudaMalloc failed"}
  ]
}
EOF
run "$KGATE" ingest --db "$DB" --commit g2 "$T/reps.json"
is "$rc" 0 "repetitions and aggregates ingest"
is "$(metric_of g2 BM_copy/64 real_time)" "1500,1750,2000" "each repetition is a sample, us in ns, its index the ordinal"
is "$(metric_of g2 BM_copy/64 cpu_time)" "1250,1500,1750" "cpu_time likewise"
is "$(metric_of g2 BM_copy/64 bytes_per_second)" "4e+09,3.5e+09,3e+09" "a counter per repetition"
is "$(q "SELECT unit FROM metrics WHERE name = 'bytes_per_second'")" "byte/s" "bytes_per_second in byte/s"
is "$(metric_of g2 BM_copy/64 launches)" "7,7,7" "a user counter under its own name"
is "$(q "SELECT count(*) FROM kernels WHERE mangled LIKE 'BM_copy/64_%'")" "0" "aggregates of repetitions are not stored"
is "$(metric_of g2 BM_only_mean real_time)" "3e+06" "a run reported by aggregates alone: its mean is one sample"
like "$err" "1 benchmark reported by aggregates alone" "and stderr says so"
is "$(q "SELECT count(*) FROM kernels WHERE mangled = 'BM_broken'")" "0" "a failed run stores nothing"
like "$err" "'BM_broken' failed: cudaMalloc failed" "and its message is quoted"
is "$(q "SELECT b.name FROM benchmarks b JOIN run_benchmarks rb ON rb.benchmark = b.id JOIN runs r ON r.id = rb.run WHERE r.commit_sha = 'g2'")" \
	"bench_copy" "the benchmark is the executable's file name"
is "$(q "SELECT collector FROM runs WHERE commit_sha = 'g2'")" "google-benchmark v1.9.0" "the library's version is the collector"

# repetitions of a Google Benchmark older than 1.6: no repetition_index
cat > "$T/old.json" <<'EOF'
{"context": {"executable": "./b", "num_cpus": 1, "mhz_per_cpu": 1, "library_build_type": "release"},
 "benchmarks": [
  {"name": "BM_a", "run_name": "BM_a", "run_type": "iteration", "iterations": 10, "real_time": 1, "cpu_time": 1, "time_unit": "ns"},
  {"name": "BM_a", "run_name": "BM_a", "run_type": "iteration", "iterations": 10, "real_time": 2, "cpu_time": 2, "time_unit": "ns"}]}
EOF
run "$KGATE" ingest --db "$DB" --commit g3 "$T/old.json"
is "$(q "SELECT group_concat(s.ordinal || ':' || s.value) FROM (SELECT s.ordinal, s.value FROM samples s JOIN runs r ON r.id = s.run JOIN metrics m ON m.id = s.metric WHERE r.commit_sha = 'g3' AND m.name = 'real_time' ORDER BY s.ordinal) s")" \
	"0:1.0,1:2.0" "repetitions without repetition_index are counted in file order"

# the file is streamed, so an aggregate mean read before the repetitions of
# its name waits for the end: it is not stored when they come later
cat > "$T/late.json" <<'EOF'
{"benchmarks": [
  {"name": "BM_b_mean", "run_name": "BM_b", "run_type": "aggregate", "aggregate_name": "mean", "iterations": 2, "real_time": 9, "cpu_time": 9, "time_unit": "ns"},
  {"name": "BM_c_mean", "run_name": "BM_c", "run_type": "aggregate", "aggregate_name": "mean", "iterations": 2, "real_time": 7, "cpu_time": 7, "time_unit": "ns"},
  {"name": "BM_b", "run_name": "BM_b", "run_type": "iteration", "iterations": 10, "real_time": 1, "cpu_time": 1, "time_unit": "ns"},
  {"name": "BM_b", "run_name": "BM_b", "run_type": "iteration", "iterations": 10, "real_time": 2, "cpu_time": 2, "time_unit": "ns"}],
 "context": {"executable": "./b", "num_cpus": 1, "mhz_per_cpu": 1, "library_build_type": "release"}}
EOF
run "$KGATE" ingest --db "$DB" --commit g4 --input-format gbench "$T/late.json"
is "$rc" 0 "context after benchmarks, a mean before its repetitions: ingests"
is "$(metric_of g4 BM_b real_time)" "1,2" "the repetitions are the samples, the mean read first is not"
is "$(metric_of g4 BM_c real_time)" "7" "a mean without repetitions is one sample"
is "$(q "SELECT collector FROM runs WHERE commit_sha = 'g4'")" "google-benchmark" "the context read after the runs"

# --- refusals: exit 2, nothing stored ---
n=$(runs)
head -c 700 "$T/reps.json" > "$T/cut.json"
run "$KGATE" ingest --db "$DB" --commit r1 --input-format gbench "$T/cut.json"
is "$rc" 2 "a truncated document exits 2"
like "$err" "cut.json: truncated: the JSON document ends at byte 700 " "with where"
is "$(runs)" "$n" "nothing stored"
sed 's/"time_unit": "ms"/"time_unit": "fortnight"/' "$T/reps.json" > "$T/unit.json"
run "$KGATE" ingest --db "$DB" --commit r2 "$T/unit.json"
is "$rc" 2 "an unknown time_unit exits 2"
like "$err" "time_unit 'fortnight' is not ns, us, ms or s" "and says so"
is "$(runs)" "$n" "nothing stored"

done_testing
