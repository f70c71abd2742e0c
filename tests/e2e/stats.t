#!/bin/sh
# stats.t: "kgate stats" on the real H200 Nsight Compute exports.  The
# numbers kgate prints are checked against a table built independently from
# the fixture itself (the sqlite3 shell's CSV import of ncu's file, medians
# and standard deviations by awk), never against kgate's own database.
. "$(dirname "$0")/lib.sh"

H200="$FIX/h200"
DB="$T/k.db"

# ncu's CSV without the program's output and ==PROF== lines.
grep '^"' "$H200/ncu_saxpy_strided_details.csv" > "$T/details.csv"
grep '^"' "$H200/ncu_saxpy_strided_raw.csv" > "$T/raw.csv"

# ref SQL: one query against the independent tables, tab-separated.
ref() {
	sqlite3 -batch -separator '	' "$T/ref.db" "$1"
}
sqlite3 -batch "$T/ref.db" ".import --csv $T/details.csv details" ".import --csv $T/raw.csv raw"
# launches of the details page: kernel base name, duration (ns), one per row
ref "CREATE TABLE det AS SELECT substr(\"Kernel Name\", 1, instr(\"Kernel Name\", '(') - 1) AS k,
	CAST(replace(\"Metric Value\", ',', '') AS REAL) AS v FROM details
	WHERE \"Metric Name\" = 'gpu__time_duration.sum';
     CREATE TABLE rawd AS SELECT substr(\"Kernel Name\", 1, instr(\"Kernel Name\", '(') - 1) AS k,
	CAST(replace(\"dram__bytes_read.sum\", ',', '') AS REAL) AS v FROM raw WHERE ID <> ''"

# median and sample standard deviation of the values of kernel $2 in table $1
med() { ref "SELECT v FROM $1 WHERE k = '$2' ORDER BY v" |
	awk '{ x[NR] = $1 } END { printf "%.15g\n", NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2 }'; }
sd() { ref "SELECT v FROM $1 WHERE k = '$2'" |
	awk '{ s += $1; q[NR] = $1 } END { m = s / NR; for (i = 1; i <= NR; i++) d += (q[i] - m) ^ 2; printf "%.10g\n", sqrt(d / (NR - 1)) }'; }
# close A B: relative difference under 1e-9
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; s = b < 0 ? -b : b; exit !(d <= 1e-9 * s + 1e-9) }'; }

# kgate's CSV output, imported the same way: column $3 of the row of kernel $2 in table $1
kg() { sqlite3 -batch "$T/out.db" "SELECT \"$3\" FROM $1 WHERE substr(Name, 1, instr(Name, '(') - 1) = '$2'"; }
import_out() { tr -d '\r' < "$T/.out" > "$T/$1.csv"; sqlite3 -batch "$T/out.db" "DROP TABLE IF EXISTS $1" ".import --csv $T/$1.csv $1"; }

run "$KGATE" stats --help
is "$rc" 0 "--help exits 0"
like "$out" "^usage: kgate stats" "--help prints the usage"
like "$out" "summarises the" "--help says what nvtx_sum summarises"

"$KGATE" ingest --db "$DB" --commit det1 --ncu-csv "$H200/ncu_saxpy_strided_details.csv" 2>/dev/null
"$KGATE" ingest --db "$DB" --commit raw1 --benchmark saxpy_strided --ncu-csv "$H200/ncu_saxpy_strided_raw.csv" 2>/dev/null
is "$(sqlite3 "$DB" "SELECT count(*) FROM runs")" "2" "two fixture runs stored"

# --- kernel_sum of the details page, CSV ---
run "$KGATE" stats --db "$DB" --commit det1 --report kernel_sum --format csv
is "$rc" 0 "kernel_sum --format csv exits 0"
like "$(printf '%s\n' "$out" | head -1)" '^Time \(%\),Total Time \(ns\),Instances,Avg \(ns\),Med \(ns\),Min \(ns\),Max \(ns\),StdDev \(ns\),Benchmark,Name' "CSV header"
ok "CSV lines end in CRLF (RFC 4180)" grep -q "$(printf '\r')\$" "$T/.out"
like "$out" '"saxpy\(int, float, float const\*, float\*\)"' "a name with commas is quoted, in full"
import_out det
is "$(sqlite3 "$T/out.db" "SELECT count(*) FROM det")" "2" "one row per kernel"
is "$(sqlite3 "$T/out.db" "SELECT substr(Name, 1, 7) FROM det LIMIT 1")" "strided" "sorted by total time, largest first"
for k in saxpy strided; do
	is "$(kg det $k Instances)" "$(ref "SELECT count(*) FROM det WHERE k = '$k'")" "$k: instances = launches in the export"
	is "$(kg det $k 'Total Time (ns)')" "$(ref "SELECT CAST(sum(v) AS INTEGER) FROM det WHERE k = '$k'")" "$k: total is exact"
	is "$(kg det $k 'Min (ns)')" "$(ref "SELECT CAST(min(v) AS INTEGER) FROM det WHERE k = '$k'")" "$k: min is exact"
	is "$(kg det $k 'Max (ns)')" "$(ref "SELECT CAST(max(v) AS INTEGER) FROM det WHERE k = '$k'")" "$k: max is exact"
	is "$(kg det $k 'Med (ns)')" "$(med det $k)" "$k: median is exact"
	ok "$k: average matches" close "$(kg det $k 'Avg (ns)')" "$(ref "SELECT avg(v) FROM det WHERE k = '$k'")"
	ok "$k: standard deviation matches" close "$(kg det $k 'StdDev (ns)')" "$(sd det $k)"
	ok "$k: Time (%) is its share of the total" close "$(kg det $k 'Time (%)')" \
		"$(ref "SELECT 100.0 * (SELECT sum(v) FROM det WHERE k = '$k') / (SELECT sum(v) FROM det)")"
done

# --- another metric of the raw page ---
run "$KGATE" stats --db "$DB" --commit raw1 --report kernel_sum --metric dram__bytes_read.sum --format csv
is "$rc" 0 "--metric dram__bytes_read.sum exits 0"
like "$out" '^Share \(%\),Total \(byte\),Instances,Avg \(byte\)' "non-time metric: header names the unit"
import_out rawd
for k in saxpy strided; do
	is "$(kg rawd $k Instances)" "$(ref "SELECT count(*) FROM rawd WHERE k = '$k'")" "raw $k: instances"
	is "$(kg rawd $k 'Total (byte)')" "$(ref "SELECT CAST(sum(v) AS INTEGER) FROM rawd WHERE k = '$k'")" "raw $k: total bytes exact"
	is "$(kg rawd $k 'Med (byte)')" "$(med rawd $k)" "raw $k: median exact"
done

# --- JSON ---
run "$KGATE" stats --db "$DB" --commit det1 --report kernel_sum --format json
is "$rc" 0 "--format json exits 0"
is "$(printf '%s' "$out" | jq -r '.rows | length')" "2" "JSON: two rows"
is "$(printf '%s' "$out" | jq -r '[.rows[].instances] | add')" "$(ref "SELECT count(*) FROM det")" "JSON: all launches counted"
is "$(printf '%s' "$out" | jq -r '.rows[0].total')" "$(ref "SELECT CAST(max(t) AS INTEGER) FROM (SELECT sum(v) AS t FROM det GROUP BY k)")" "JSON: first row has the largest total"
is "$(printf '%s' "$out" | jq -r '.metric + " " + .unit + " " + .report')" "gpu__time_duration.sum ns kernel_sum" "JSON: metric, unit, report"

# --- text ---
run "$KGATE" stats --db "$DB" --commit det1 --report kernel_sum
is "$rc" 0 "text exits 0"
like "$out" 'Time \(%\) +Total Time \(ns\) +Instances +Avg \(ns\) +Med \(ns\) +Min \(ns\) +Max \(ns\) +StdDev \(ns\) +Benchmark +Name' "text header"
tot=$(ref "SELECT CAST(sum(v) AS INTEGER) FROM det WHERE k = 'strided'" | sed ':a;s/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/;ta')
like "$out" " $tot +5 " "text: total with thousands separators"

# --- nvtx_sum: these exports carry no NVTX ranges: one row, all launches ---
run "$KGATE" stats --db "$DB" --commit det1 --report nvtx_sum --format csv
is "$rc" 0 "nvtx_sum exits 0"
import_out nv
is "$(sqlite3 "$T/out.db" "SELECT count(*) || ' ' || Range || '|' || Instances || ' ' || \"Total Time (ns)\" FROM nv")" \
	"1 |$(ref "SELECT count(*) || ' ' || CAST(sum(v) AS INTEGER) FROM det")" "nvtx_sum: one row outside any range, every launch"
run "$KGATE" stats --db "$DB" --commit det1 --report nvtx_sum
like "$out" '\(none\)$' "text names the row outside any range '(none)'"

# nvtx_sum grouping on the synthetic records file (NVTX paths, end - start)
REC="$FIX/records/good.jsonl"
"$KGATE" ingest --db "$T/rec.db" --commit rec1 --records "$REC" 2>/dev/null
run "$KGATE" stats --db "$T/rec.db" --report nvtx_sum --format csv
want=$(jq -r 'select(.type == "kernel") | [.nvtx, .end - .start] | @tsv' "$REC" |
	awk -F'\t' '{ n[$1]++; s[$1] += $2 } END { for (k in n) print k, n[k], s[k] }' | sort)
got=$(printf '%s\n' "$out" | tr -d '\r' | awk -F, 'NR > 1 { print $10, $3, $2 }' | sort)
is "$got" "$want" "nvtx_sum: launches and total per NVTX path"

# --- long names are shortened in text only ---
sed 's/"_Z5saxpyifPKfPf"/"a_kernel_with_a_long_name_for_testing_truncation<float, 128, 256>(int, float, float const*, float*)"/' \
	"$REC" > "$T/long.jsonl"
"$KGATE" ingest --db "$T/long.db" --commit long1 --records "$T/long.jsonl" 2>/dev/null
run "$KGATE" stats --db "$T/long.db" --report kernel_sum
like "$out" 'a_kernel_with_a_long_name_.*…$' "text: a long name ends in an ellipsis"
unlike "$out" 'float\*\)$' "text: the long name is cut"
run "$KGATE" stats --db "$T/long.db" --report kernel_sum --format csv
like "$out" '"a_kernel_with_a_long_name_for_testing_truncation<float, 128, 256>\(int, float, float const\*, float\*\)"' "CSV: the name in full"
run "$KGATE" stats --db "$T/long.db" --report kernel_sum --format json
is "$(printf '%s' "$out" | jq -r '.rows[].name' | grep -c '…')" "0" "JSON: no ellipsis"

# a hostile name: quotes, a comma and a newline
sed 's/"_Z7stridediPKfPfi"/"evil \\"q\\", x\\nname"/' "$REC" > "$T/evil.jsonl"
"$KGATE" ingest --db "$T/evil.db" --commit evil1 --records "$T/evil.jsonl" 2>/dev/null
run "$KGATE" stats --db "$T/evil.db" --report kernel_sum
like "$out" ' evil "q", x name$' "text: a newline in a name is shown as a space (escape_text)"
run "$KGATE" stats --db "$T/evil.db" --report kernel_sum --format csv
like "$(printf '%s\n' "$out" | tr -d '\r')" ',"evil ""q"", x name"$' \
	"CSV: quotes doubled, the field quoted, its newline a space (one record, one line)"
is "$(python3 -c 'import csv, sys; r = list(csv.reader(open(sys.argv[1], newline=""))); print(len(r), sorted(set(map(len, r))), r[-1][-1] if r[-1][-1].startswith("evil") else r[-2][-1])' "$T/.out")" \
	'3 [10] evil "q", x name' "CSV: Python's csv module reads the rows and the name back"
is "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" 3 "CSV: three lines for three records"
run "$KGATE" stats --db "$T/evil.db" --report kernel_sum --format json
is "$(printf '%s' "$out" | jq -r '.rows[] | select(.name | startswith("evil")) | .name')" "$(printf 'evil "q", x\nname')" "JSON: the name exactly"

# a name that is not UTF-8 (an ncu CSV holds the bytes the program gave):
# JSON gets U+FFFD for the bad byte, and the row is not lost
sed 's/saxpy(int, float/sax\xffpy(int, float/' "$H200/ncu_saxpy_strided_raw.csv" > "$T/bad8.csv"
"$KGATE" ingest --db "$T/bad8.db" --commit bad8 --benchmark b --ncu-csv "$T/bad8.csv" 2>/dev/null
run "$KGATE" stats --db "$T/bad8.db" --report kernel_sum --format json
is "$rc" 0 "JSON of a name that is not UTF-8: exits 0"
is "$(printf '%s' "$out" | jq -r '.rows[].name' | sort | tr '\n' '|')" \
	"$(printf 'sax\357\277\275py(int, float, float const*, float*)|strided(int, float const*, float*, int)|')" \
	"JSON: both rows, the bad byte as U+FFFD"

# --- which run: git HEAD, else the newest, with a note ---
mkdir "$T/repo" "$T/norepo"
git -C "$T/repo" init -q
git -C "$T/repo" -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m one
head=$(git -C "$T/repo" rev-parse HEAD)
"$KGATE" ingest --db "$DB" --commit "$head" --ncu-csv "$H200/ncu_saxpy_strided_details.csv" 2>/dev/null
"$KGATE" ingest --db "$DB" --commit later --ncu-csv "$H200/ncu_saxpy_strided_raw.csv" 2>/dev/null
run sh -c "cd '$T/repo' && '$KGATE' stats --db '$DB' --report kernel_sum --format json"
is "$(printf '%s' "$out" | jq -r .commit)" "$head" "default: the run of git HEAD"
is "$err" "" "no note when HEAD has a run"
run sh -c "cd '$T/norepo' && GIT_CEILING_DIRECTORIES='$T' '$KGATE' stats --db '$DB' --report kernel_sum --format json"
is "$(printf '%s' "$out" | jq -r .commit)" "later" "outside a repository: the newest run"
like "$err" "not in a git repository; showing the newest run" "with a note on stderr"
git -C "$T/repo" -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m two
run sh -c "cd '$T/repo' && '$KGATE' stats --db '$DB' --report kernel_sum --format json"
is "$(printf '%s' "$out" | jq -r .commit)" "later" "HEAD without a run: the newest run"
like "$err" "no run of HEAD \([0-9a-f]{12}\)" "with a note naming HEAD"
run "$KGATE" stats --db "$DB" --run 2 --report kernel_sum --format json
is "$(printf '%s' "$out" | jq -r '(.run|tostring) + " " + .commit')" "2 raw1" "--run picks a run by id"
run "$KGATE" stats --db "$DB" --commit raw --report kernel_sum --format json
is "$(printf '%s' "$out" | jq -r .commit)" "raw1" "--commit takes a unique prefix"

# --- errors ---
run "$KGATE" stats --db "$T/none.db" --report kernel_sum
is "$rc" 2 "no such database exits 2, as for every command"
like "$err" "^kgate: cannot open '.*none.db': no such database \(store runs first" "says so, as every command does"
ok "the database is not created" test ! -e "$T/none.db"
run "$KGATE" stats --db "$DB" --report bogus
is "$rc" 2 "unknown --report exits 2"
like "$err" "kernel_sum, nvtx_sum" "and lists the valid reports"
run "$KGATE" stats --db "$DB"
is "$rc" 2 "no --report exits 2"
run "$KGATE" stats --db "$DB" --report kernel_sum --format xml
is "$rc" 2 "unknown --format exits 2"
like "$err" "text, json, csv" "and lists the formats"
run "$KGATE" stats --db "$DB" --report kernel_sum --commit nosuch
is "$rc" 2 "a commit without runs exits 2"
like "$err" "no run of commit 'nosuch'" "says so"
run "$KGATE" stats --db "$DB" --report kernel_sum --run 99
is "$rc" 2 "no such run id exits 2"
run "$KGATE" stats --db "$DB" --report kernel_sum --run x
is "$rc" 2 "a bad run id exits 2"
run "$KGATE" stats --db "$DB" --report kernel_sum --run 1 --commit det1
is "$rc" 2 "--run with --commit exits 2"
run "$KGATE" stats --db "$DB" --commit det1 --report kernel_sum --metric gpu__time_duration.summ
is "$rc" 2 "a metric the run lacks exits 2"
like "$err" "did you mean 'gpu__time_duration.sum'" "with a suggestion"
run "$KGATE" stats --db "$DB" --report kernel_sum extra
is "$rc" 2 "an extra argument exits 2"
cp "$DB" "$T/empty.db"
sqlite3 "$T/empty.db" "DELETE FROM samples; DELETE FROM runs"
run sh -c "cd '$T/norepo' && GIT_CEILING_DIRECTORIES='$T' '$KGATE' stats --db '$T/empty.db' --report kernel_sum"
is "$rc" 2 "a database without runs exits 2"
like "$err" "holds no runs" "says so"
printf 'not a database at all, repeated.%.0s' $(seq 1 100) > "$T/bad.db"
cp "$T/bad.db" "$T/bad.orig"
run "$KGATE" stats --db "$T/bad.db" --report kernel_sum
is "$rc" 3 "a corrupt database exits 3"
ok "and is left untouched" cmp -s "$T/bad.db" "$T/bad.orig"

# nsys stats's report names and its -r
run "$KGATE" stats --db "$DB" --commit det1 --report kernel_sum --format csv
want=$out
run "$KGATE" stats --db "$DB" --commit det1 -r cuda_gpu_kern_sum --format csv
is "$rc" 0 "-r cuda_gpu_kern_sum (nsys's name) exits 0"
is "$out" "$want" "and is kernel_sum"
run "$KGATE" stats --db "$DB" --commit det1 --report nvtx_sum --format csv
want=$out
run "$KGATE" stats --db "$DB" --commit det1 -r nvtx_kern_sum --format csv
is "$out" "$want" "-r nvtx_kern_sum is nvtx_sum"
run "$KGATE" stats --db "$DB" --commit det1 -r cuda_api_sum
is "$rc" 2 "an nsys report kgate cannot make exits 2"
like "$err" "'cuda_api_sum' is an nsys report kgate cannot make: .*kernel_sum \(nsys's cuda_gpu_kern_sum\)" "and says what kgate has instead"
run "$KGATE" stats --db "$DB" --commit det1 -r cuda_gpu_kern_su
like "$err" "did you mean 'cuda_gpu_kern_sum'" "a misspelt nsys name gets the nearest"
done_testing
