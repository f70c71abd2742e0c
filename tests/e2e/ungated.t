#!/bin/sh
# ungated.t: "kgate check" warns, and under on_ungated_metric: fail fails,
# when a metric the thresholds limit is in neither run of a compared
# benchmark (a PASS that gated nothing), naming the benchmark and the
# metrics.  Inputs: the real Google Benchmark and nvbench fixtures (host
# times only, and nvbench GPU times); the thresholds files are written here.
. "$(dirname "$0")/lib.sh"

GB="$FIX/gbench/googlecpp_output.json"
NV="$FIX/nvbench"
DB="$T/k.db"

"$KGATE" ingest --db "$DB" --commit g1 "$GB" 2>/dev/null
"$KGATE" ingest --db "$DB" --commit g2 "$GB" 2>/dev/null
"$KGATE" ingest --db "$DB" --commit n1 "$NV/nvbench_axes_ref_gv100_gp100.json" 2>/dev/null
"$KGATE" ingest --db "$DB" --commit n2 "$NV/nvbench_axes_cmp_gv100_gp100.json" 2>/dev/null

# built-in thresholds: the GPU time and instructions are limited; a Google
# Benchmark file has neither
run "$KGATE" check --db "$DB" --commit g2 --baseline g1 --format json
is "$rc" 0 "a check that gated nothing still passes under the default warn"
like "$err" "warning: benchmark 'a.out': gpu__time_duration.sum, smsp__inst_executed.sum, gated by the thresholds, in neither run: nothing gated them \(on_ungated_metric: warn\)" \
	"and warns, naming the benchmark and the metrics"
like "$out" "\"not_compared\": \"gated by the thresholds but in neither run: gpu__time_duration.sum, smsp__inst_executed.sum of benchmark 'a.out'\"" \
	"the JSON verdict says so under not_compared"

# the nvbench runs have the GPU time: the benchmark's performance is gated
run "$KGATE" check --db "$DB" --commit n2 --baseline n1
unlike "$err" "gated by the thresholds" "a benchmark with one limited metric is gated: no warning"

cat > "$T/fail.yaml" <<'EOF'
version: 1
defaults:
  gpu__time_duration.sum: { regression: 3% }
on_ungated_metric: fail
EOF
run "$KGATE" check --db "$DB" --commit g2 --baseline g1 -t "$T/fail.yaml"
is "$rc" 1 "on_ungated_metric: fail makes it fail"
like "$out" "FAIL$" "with a FAIL verdict"
like "$err" "benchmark 'a.out': gpu__time_duration.sum, gated by the thresholds, in neither run: nothing gated it \(on_ungated_metric: fail\)" \
	"naming the one metric"

cat > "$T/ignore.yaml" <<'EOF'
version: 1
defaults:
  gpu__time_duration.sum: { regression: 3% }
on_ungated_metric: ignore
EOF
run "$KGATE" check --db "$DB" --commit g2 --baseline g1 -t "$T/ignore.yaml"
is "$rc" 0 "on_ungated_metric: ignore"
unlike "$err" "gated by the thresholds" "is silent"

# a limit on the host time for that benchmark gates it
cat > "$T/host.yaml" <<'EOF'
version: 1
defaults:
  gpu__time_duration.sum: { regression: 3% }
rules:
  - match: { benchmark: a.out }
    metrics: { real_time: { regression: 5% } }
on_ungated_metric: fail
EOF
run "$KGATE" check --db "$DB" --commit g2 --baseline g1 -t "$T/host.yaml"
is "$rc" 0 "a rule limiting real_time for the benchmark gates it"
unlike "$err" "gated by the thresholds" "no warning then"

# a rule that names a benchmark and a metric it does not have
cat > "$T/named.yaml" <<'EOF'
version: 1
defaults:
  gpu__time_duration.sum: { regression: 3% }
rules:
  - match: { benchmark: simple }
    metrics: { nv/cold/time/gpu/median: { regression: 2% } }
EOF
run "$KGATE" check --db "$DB" --commit n2 --baseline n1 -t "$T/named.yaml"
like "$err" "benchmark 'simple': nv/cold/time/gpu/median, gated by the thresholds, in neither run" \
	"a metric a rule limits for that benchmark, absent, is named"
unlike "$err" "benchmark 'copy_type_sweep'" "other benchmarks are not"

printf 'version: 1\non_ungated_metric: maybe\n' > "$T/bad.yaml"
run "$KGATE" check --db "$DB" --commit g2 --baseline g1 -t "$T/bad.yaml"
is "$rc" 2 "a bad on_ungated_metric is a usage error"
like "$err" "on_ungated_metric" "naming the key"

done_testing
