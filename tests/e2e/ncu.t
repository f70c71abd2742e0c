#!/bin/sh
# ncu.t: every Nsight Compute export of tests/fixtures/ncu and h200 (2020,
# 2023 and 2025 releases; details and raw pages; Volta, Ampere, Hopper)
# ingested, its launch and sample counts checked against Python's csv
# reading of the file (ncu_count.py); old names and units mapped onto
# today's, so one threshold gates them all; ncu's ==ERROR== outputs, binary
# reports and locale-formatted numbers refused with what to do.
#
# Files written here are SYNTHETIC, made from the real exports: a locale's
# number format applied to an H200 export, ncu's ERR_NVGPUCTRPERM and
# "Failed to profile" lines (the text ncu prints, from the real outputs of
# tests/fixtures/ncu) added to one, a database whose stored unit was kept
# as an old kgate kept it.
. "$(dirname "$0")/lib.sh"

N="$FIX/ncu"
H="$FIX/h200"
PY="python3 $KGATE_SRC/tests/e2e/ncu_count.py"
DB="$T/k.db"
q() { sqlite3 "$DB" "$1"; }
runs() { q "SELECT count(*) FROM runs"; }
i=0

# --- every export, counted by an independent reader ---
for f in "$N/xplacer_2020_lassen_v100_gaussian_matrix3.log" "$N/xplacer_2020_aws_v100_gaussian_matrix3.log" \
	"$N/xplacer_2020_lassen_v100_bfs_graph4096.log" "$N/esmm_2023_a10g_metrics.csv" \
	"$N/deepbench_2023_v100_gemm_details_15.csv" "$N/deepbench_2023_v100_gemm_raw_15.csv" \
	"$H/ncu_saxpy_strided_details.csv" "$H/ncu_saxpy_strided_raw.csv" \
	"$H/ncu/transpose_tiled.details.csv" "$H/ncu/transpose_tiled.raw.csv" "$H/torch/ncu1.mangled.csv"; do
	i=$((i + 1))
	set -- $($PY "$f")
	run "$KGATE" ingest --db "$DB" --commit "f$i" --branch main "$f"
	is "$rc" 0 "$(basename "$f") ingests"
	like "$err" "stored run [0-9]* \(commit f$i, 1 benchmark, $1 launch(es)? of [0-9]+ kernels?, $2 samples\)" \
		"$(basename "$f"): $1 launches, $2 samples, as Python's csv reader counts them"
done

# --- old names and units onto today's ---
v=$($PY "$N/xplacer_2020_lassen_v100_gaussian_matrix3.log" "GPU Speed Of Light/Duration")
is "$(q "SELECT printf('%.9g', value) FROM samples_named s JOIN runs r ON r.id = s.run WHERE r.commit_sha = 'f1' AND metric = 'gpu__time_duration.sum'")" \
	"$v" "2020 details page: 'GPU Speed Of Light' / 'Duration' (nsecond) is gpu__time_duration.sum"
is "$(q "SELECT count(*) FROM samples_named s JOIN runs r ON r.id = s.run WHERE r.commit_sha = 'f1' AND metric LIKE 'ncu:GPU Speed Of Light%'")" \
	0 "2020: every label of the Speed Of Light section has its metric name (SM [%], Memory [%], SOL FB ...)"
v=$($PY "$N/deepbench_2023_v100_gemm_details_15.csv" "GPU Speed Of Light Throughput/SM Frequency")
is "$(q "SELECT printf('%.9g', value) FROM samples_named s JOIN runs r ON r.id = s.run WHERE r.commit_sha = 'f5' AND metric = 'gpc__cycles_elapsed.avg.per_second' AND ordinal = 0")" \
	"$v" "2023: 'cycle/nsecond' stored in hz"
is "$(q "SELECT unit FROM metrics WHERE name = 'gpc__cycles_elapsed.avg.per_second'")" "hz" \
	"2020's cycle/second, 2023's cycle/nsecond and 2025's hz and Ghz are one unit"
v=$($PY "$H/ncu/transpose_tiled.details.csv" "Memory Workload Analysis/Memory Throughput")
is "$(q "SELECT printf('%.9g', value) FROM samples_named s JOIN runs r ON r.id = s.run WHERE r.commit_sha = 'f9' AND metric = 'dram__bytes.sum.per_second'")" \
	"$v" "2025: 'Tbyte/s' or 'Gbyte/s' stored in byte/s"
v=$($PY "$N/xplacer_2020_lassen_v100_gaussian_matrix3.log" "Memory Workload Analysis/Memory Throughput")
is "$(q "SELECT printf('%.9g', value) FROM samples_named s JOIN runs r ON r.id = s.run WHERE r.commit_sha = 'f1' AND metric = 'dram__bytes.sum.per_second'")" \
	"$v" "2020: 'byte/second' of the same metric in the same byte/s"
is "$(q "SELECT unit FROM metrics WHERE name = 'dram__bytes.sum.per_second'")" "byte/s" "one unit for the metric"
is "$(q "SELECT count(*) FROM samples_named s JOIN runs r ON r.id = s.run WHERE r.commit_sha = 'f6' AND metric = 'gpu__time_duration.sum' AND value < 1000")" \
	0 "2023 raw page in msecond: durations stored in ns"

# the duration of a 2020 export is gated like any other
"$KGATE" ingest --db "$DB" --commit b2020 --branch main "$N/xplacer_2020_lassen_v100_bfs_graph4096.log" 2>/dev/null
"$KGATE" ingest --db "$DB" --commit h2020 --branch feat "$N/xplacer_2020_lassen_v100_bfs_graph4096.log" 2>/dev/null
run "$KGATE" check --db "$DB" --commit h2020 --baseline b2020
like "$out" "Kernel2 +gpu__time_duration.sum" "check gates a 2020 export's duration under today's name"

# a raw page of 2019-2020 names the duration without its rollup
sed '/^"ID"/s/"gpu__time_duration.sum"/"gpu__time_duration"/' "$H/ncu_saxpy_strided_raw.csv" > "$T/old_raw.csv"
is "$(grep -c '"gpu__time_duration",' "$T/old_raw.csv")" 1 "the old name in the header"
run "$KGATE" ingest --db "$DB" --commit oldraw "$T/old_raw.csv"
is "$(q "SELECT count(*) FROM samples_named s JOIN runs r ON r.id = s.run WHERE r.commit_sha = 'oldraw' AND metric = 'gpu__time_duration.sum'")" \
	10 "raw page 'gpu__time_duration' stored as gpu__time_duration.sum"

# --- a unit that contradicts the stored one ---
cp "$DB" "$T/old.db"
sqlite3 "$T/old.db" "UPDATE metrics SET unit = 'Gbyte/s' WHERE name = 'dram__bytes.sum.per_second'"
n=$(sqlite3 "$T/old.db" "SELECT count(*) FROM runs")
run "$KGATE" ingest --db "$T/old.db" --commit gb "$N/xplacer_2020_lassen_v100_gaussian_matrix3.log"
is "$rc" 2 "a metric stored in Gbyte/s (as an old kgate kept ncu's unit) and given in byte/s: exit 2"
like "$err" "dram__bytes.sum.per_second is in 'byte/s' here, but the database holds it in 'Gbyte/s'" "the message names both units"
is "$(sqlite3 "$T/old.db" "SELECT count(*) FROM runs")" "$n" "nothing stored"
sed '/^"3".*"gpu__time_duration.sum","ns"/s/","ns"/","byte"/' "$H/ncu_saxpy_strided_details.csv" > "$T/clash.csv"
run "$KGATE" ingest --db "$T/k2.db" --commit clash "$T/clash.csv"
is "$rc" 2 "one metric in two units in one export: exit 2"
like "$err" "clash.csv:[0-9]*: gpu__time_duration.sum is given in 'byte' \(byte\) here but in 'ns' earlier" "and says so"

# --- locale formats ---
# de_DE: '.' between thousands, ',' before the fraction
python3 -c '
import re, sys
for line in open(sys.argv[1]):
    def loc(m):
        v = m.group(1).replace(",", "_").replace(".", ",").replace("_", ".")
        return "\"" + v + "\""
    sys.stdout.write(re.sub(r"\"([0-9][0-9,]*\.?[0-9]*)\"(,?\r?\n?)$", lambda m: loc(m) + m.group(2), line))
' "$H/ncu_saxpy_strided_details.csv" > "$T/de.csv"
like "$(grep -c '"[0-9]*\.[0-9][0-9][0-9]"' "$T/de.csv")" "^[1-9]" "the German export has '117.344'-style numbers"
n=$(runs)
run "$KGATE" ingest --db "$DB" --commit de "$T/de.csv"
is "$rc" 2 "a locale-formatted export is refused"
like "$err" "is '[0-9.,]*': a number written in a locale's format" "the message quotes the number"
like "$err" "LC_ALL=C" "and gives the fix"
is "$(runs)" "$n" "nothing stored"
sed 's/"\([0-9]*\)\.\([0-9][0-9]\)"/"\1,\2"/' "$H/ncu_saxpy_strided_details.csv" > "$T/comma.csv"
run "$KGATE" ingest --db "$DB" --commit comma "$T/comma.csv"
is "$rc" 2 "a decimal comma ('34,80') is refused"
like "$err" "is '[0-9]*,[0-9][0-9]': a number written in a locale's format" "quoted"

# --- ncu's errors ---
run "$KGATE" ingest --db "$DB" --commit e1 "$N/deepbench_2023_v100_gemm_prof_15.res"
is "$rc" 2 "a console output that ends in '==ERROR== Failed to profile' is refused"
like "$err" 'ncu failed: "==ERROR== Failed to profile "volta_h884gemm_128x256_ldg8_nn" in process 24701" \(and 2 more ==ERROR== lines\)' \
	"the ==ERROR== line is quoted"
run "$KGATE" ingest --db "$DB" --commit e2 "$N/mistic_a100_error_app_returned_1.out"
is "$rc" 2 "ncu's 'application returned an error code' output is refused"
like "$err" '"==ERROR== The application returned an error code \(1\)."' "quoted"
run "$KGATE" ingest --db "$DB" --commit e3 "$N/mistic_a100_error_report_exists.out"
is "$rc" 2 "an output holding only ncu's error is recognised as ncu's and refused"
like "$err" "==ERROR== File profileMSD.out.ncu-rep already exists" "quoted"

# an export with a table and an error: refused, or stored with --allow-partial
{ sed -n '1,/^"/p' "$H/ncu_saxpy_strided_details.csv" | sed '$d'
  printf '%s\n' '==ERROR== Failed to profile "strided" in process 762'
  grep '^"' "$H/ncu_saxpy_strided_details.csv"; } > "$T/partial.csv"
n=$(runs)
run "$KGATE" ingest --db "$DB" --commit p1 "$T/partial.csv"
is "$rc" 2 "an export with an ==ERROR== line is refused"
like "$err" 'ncu reported an error: "==ERROR== Failed to profile "strided" in process 762"; .*--allow-partial' "quoted, the option named"
is "$(runs)" "$n" "nothing stored"
run "$KGATE" ingest --db "$DB" --commit p2 --allow-partial "$T/partial.csv"
is "$rc" 0 "--allow-partial stores it"
like "$err" "warning: .*partial.csv:[0-9]*: ncu reported an error: .*--allow-partial" "and says so"
is "$(runs)" "$((n + 1))" "one run stored"
like "$err" "warning: .*ncu says: ==WARNING== Note: Running with unmodified GPU clocks" "ncu's ==WARNING== lines are passed on"

# the same, as ncu printed it on an H100 (tests/fixtures/h100/ncu/): a kernel
# that traps on the fourth launch, ncu's ==ERROR== lines, then the table of
# what it profiled, raw page and details page
H100="$FIX/h100/ncu"
n=$(runs)
run "$KGATE" ingest --db "$DB" --commit c1 --benchmark many "$H100/crash_raw.csv"
is "$rc" 2 "H100, a launch that traps (raw page): refused"
like "$err" 'crash_raw.csv:4: ncu reported an error: "==ERROR== An error was reported by the driver:" \(and 2 more ==ERROR== lines\)' \
	"the first ==ERROR== line quoted, with its line"
run "$KGATE" ingest --db "$DB" --commit c2 --benchmark many "$H100/crash_details.csv"
is "$rc" 2 "H100, a launch that traps (details page): refused"
like "$err" '"==ERROR== LaunchFailed" \(and 1 more ==ERROR== line\)' "quoted"
is "$(runs)" "$n" "nothing stored"
run "$KGATE" ingest --db "$DB" --commit c3 --benchmark many --allow-partial "$H100/crash_raw.csv"
is "$rc" 0 "--allow-partial stores the launches ncu profiled before the trap"
is "$(q "SELECT group_concat(s.value, ' ') FROM samples s JOIN runs r ON r.id = s.run JOIN metrics m ON m.id = s.metric WHERE r.commit_sha = 'c3' AND m.name = 'gpu__time_duration.sum' ORDER BY s.ordinal")" \
	"$(python3 -c 'import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
h = next(r for r in rows if r[0] == "ID")
i = h.index("gpu__time_duration.sum")
print(" ".join("%.1f" % float(r[i].replace(",", "")) for r in rows if r[0].isdigit() and r[i] != "nan"))' "$H100/crash_raw.csv")" \
	"their durations as Python's csv reads them (the trapping launch's 'nan' left out)"
run "$KGATE" ingest --db "$DB" --commit c6 --benchmark many --allow-partial "$H100/crash_details.csv"
is "$(q "SELECT group_concat(k.demangled || ':' || s.value, ' ') FROM samples s JOIN runs r ON r.id = s.run JOIN metrics m ON m.id = s.metric JOIN kernels k ON k.id = s.kernel WHERE r.commit_sha = 'c6' AND m.name IN ('launch__grid_size', 'launch__block_size') AND k.demangled LIKE 'many_trap%'")" \
	"" "the trapping launch's \"(0, 0, 0)\" is no launch configuration: nothing stored for it"
# a metric name ncu does not know: it prints "n/a" for every launch
run "$KGATE" ingest --db "$DB" --commit c4 --benchmark many "$H100/badmetric.csv"
is "$rc" 0 "H100, a metric ncu does not know (details page): the launches are stored"
like "$err" "warning: .*badmetric.csv: ncu printed no value for metric 'no_such__metric.sum' in any launch .*ncu --query-metrics" \
	"with a warning that names the metric and where the valid names are"
is "$(q "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run JOIN metrics m ON m.id = s.metric WHERE r.commit_sha = 'c4' AND m.name = 'no_such__metric.sum'")" \
	"0" "and nothing stored for it"
run "$KGATE" ingest --db "$DB" --commit c5 "$H/ncu_saxpy_strided_details.csv"
unlike "$err" "no value for metric" "an export whose metrics all have values: no such warning"

# permission denied: ncu's line (as the real outputs print it) before the program's output
{ printf '%s\n' '==PROF== Connected to process 762 (/home/user/k)' \
	'==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0. For instructions on enabling permissions and to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM' \
	'done no error' '==PROF== Disconnected from process 762' '==WARNING== No kernels were profiled.'; } > "$T/perm.out"
run "$KGATE" ingest --db "$DB" --commit perm "$T/perm.out"
is "$rc" 2 "ERR_NVGPUCTRPERM is refused"
like "$err" '"==ERROR== ERR_NVGPUCTRPERM - The user does not have permission' "quoted"
like "$err" "NVreg_RestrictProfilingToAdminUsers=0.*https://developer.nvidia.com/ERR_NVGPUCTRPERM" "with its fix"
run "$KGATE" ingest --db "$DB" --commit perm --allow-partial "$T/perm.out"
is "$rc" 2 "--allow-partial does not make an output without a table storable"

# binary reports of 2021 and 2023
for f in "$N/mistic_2021_a100_profile4.ncu-rep" "$N/esmm_2023_a10g_profile.ncu-rep"; do
	run "$KGATE" ingest --db "$DB" --commit rep "$f"
	is "$rc" 2 "$(basename "$f"): exit 2"
	like "$err" "binary Nsight Compute report .*'ncu --import FILE --csv --page raw > FILE.csv'" "the export command"
done

# --- the GPU: device name and compute capability ---
is "$(q "SELECT gpu_name || '/' || gpu_chip FROM runs WHERE commit_sha = 'f4'")" \
	"GPU of compute capability 8.6/sm_86" "details page: the GPU known by its CC column"
is "$(q "SELECT gpu_name || '/' || gpu_chip FROM runs WHERE commit_sha = 'f6'")" \
	"Tesla V100-PCIE-32GB/sm_70" "raw page: its name and CC"
run "$KGATE" ingest --db "$DB" --commit both "$N/deepbench_2023_v100_gemm_details_15.csv" "$N/deepbench_2023_v100_gemm_raw_15.csv"
is "$rc" 0 "both pages of one GPU make one run"
is "$(q "SELECT gpu_name FROM runs WHERE commit_sha = 'both'")" "Tesla V100-PCIE-32GB" "named by the raw page"
n=$(runs)
run "$KGATE" ingest --db "$DB" --commit mixed "$N/esmm_2023_a10g_metrics.csv" "$H/ncu_saxpy_strided_raw.csv"
is "$rc" 2 "a CC 8.6 export and an H200 export are not one run"
like "$err" "recorded on NVIDIA H200, but .*esmm_2023_a10g_metrics.csv was recorded on GPU of compute capability 8.6" "says so"
is "$(runs)" "$n" "nothing stored"
run "$KGATE" check --db "$DB" --commit f4 --baseline f7
is "$rc" 2 "a run of CC 8.6 has no baseline among CC 9.0 runs"

done_testing
