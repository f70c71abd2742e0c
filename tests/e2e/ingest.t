#!/bin/sh
# ingest.t: "kgate ingest" through the CLI: the H200 ncu exports and the
# synthetic records files, the summary line and JSON, several inputs in one
# run, and the error cases: exit codes, messages, database left unchanged.
. "$(dirname "$0")/lib.sh"

H200="$FIX/h200"
REC="$FIX/records"
DB="$T/k.db"

runs() { sqlite3 "$DB" "SELECT count(*) FROM runs"; }

run "$KGATE" ingest --help
is "$rc" 0 "--help exits 0"
like "$out" "^usage: kgate ingest" "--help prints the usage"

run "$KGATE" ingest --db "$DB" --commit abc123def --ncu-csv "$H200/ncu_saxpy_strided_details.csv"
is "$rc" 0 "ncu details page ingests"
like "$err" "^kgate: stored run 1 \(commit abc123def, 1 benchmark, 10 launches of 2 kernels, 40 samples\)$" "summary line: launches, and the kernels they were of"
like "$err" "warning: the inputs name the GPU only by its compute capability .* GPU of compute capability 9.0" "details page: warns that the GPU is named only by its compute capability"
is "$(sqlite3 "$DB" "SELECT name FROM benchmarks")" "k" "benchmark defaults to ncu's process name"
is "$(sqlite3 "$DB" "SELECT value FROM samples_named WHERE ordinal = 3 AND metric = 'gpu__time_duration.sum'")" "1181312.0" "a duration from the export"

run "$KGATE" ingest --db "$DB" --commit abc124 --branch main --benchmark saxpy_strided \
	--ncu-csv "$H200/ncu_saxpy_strided_raw.csv" --format json
is "$rc" 0 "ncu raw page ingests"
like "$out" '^\{"run": ?2, ?"commit": ?"abc124", ?"branch": ?"main", ?"gpu": ?"NVIDIA H200"' "JSON summary on stdout"
like "$out" '"kernels": ?10,.*"launches": ?10,"distinct_kernels": ?2' "JSON counts the launches"
is "$(sqlite3 "$DB" "SELECT gpu_name || '/' || source || '/' || branch FROM runs WHERE id = 2")" "NVIDIA H200/ncu-csv/main" "run fingerprint stored"
is "$(sqlite3 "$DB" "SELECT count(*) FROM kernels")" "2" "both pages map to the same two kernels"

run "$KGATE" ingest --db "$DB" --commit rec1 --records "$REC/good.jsonl" --records "$REC/good.jsonl" --label head
is "$rc" 0 "two records files in one run"
like "$err" "stored run 3 \(commit rec1, 1 benchmark, 6 launches of 2 kernels, 42 samples\)" "both files counted"
like "$err" "warning: .*good.jsonl:4: collector error insufficient_privileges" "collector errors are warnings"
is "$(sqlite3 "$DB" "SELECT count(DISTINCT repeat) FROM samples WHERE run = 3")" "2" "each file is one repeat"
is "$(sqlite3 "$DB" "SELECT gpu_name || '/' || gpu_chip || '/' || driver || '/' || label FROM runs WHERE id = 3")" \
	"Synthetic GPU/SYN0/99999/head" "GPU fingerprint from the header"
is "$(sqlite3 "$DB" "SELECT DISTINCT name FROM benchmarks b JOIN samples s ON s.benchmark = b.id WHERE s.run = 3")" \
	"saxpy" "benchmark defaults to argv[0]'s basename"

# --- errors: nothing stored, file unchanged ---
cp "$DB" "$T/before.db"
same_db() { cmp -s "$DB" "$T/before.db"; }
sqlite3 "$DB" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
cp "$DB" "$T/before.db"

run "$KGATE" ingest --db "$DB" --commit bad --records "$REC/good.jsonl" --records "$REC/no_footer.jsonl"
is "$rc" 2 "a file without footer is an input error"
like "$err" "no_footer.jsonl: no footer: the process died or was killed before it finished \(2 kernel records read\)" "says why"
like "$err" "nothing stored" "says nothing was stored"
is "$(runs)" "3" "run count unchanged"

run "$KGATE" ingest --db "$DB" --commit bad --records "$REC/bad_json_line3.jsonl"
is "$rc" 2 "bad JSON exits 2"
like "$err" "bad_json_line3.jsonl:3:" "bad JSON names its line"

run "$KGATE" ingest --db "$DB" --commit bad --records "$REC/truncated.jsonl"
is "$rc" 2 "truncated file exits 2"
like "$err" "truncated.jsonl:3: truncated record" "truncated line named"

run "$KGATE" ingest --db "$DB" --commit bad --records "$REC/format99.jsonl"
is "$rc" 2 "unknown format exits 2"
like "$err" "unknown records format 99 \(this kgate reads formats 1 to 2\)" "unknown format named"

run "$KGATE" ingest --db "$DB" --commit bad --records "$T/does-not-exist.jsonl"
is "$rc" 2 "missing input exits 2"
like "$err" "^kgate: cannot open '.*does-not-exist.jsonl': No such file" "missing input message"

run "$KGATE" ingest --db "$DB" --commit bad --ncu-csv "$REC/good.jsonl"
is "$rc" 2 "a records file given as ncu CSV exits 2"
like "$err" "no ncu CSV table found" "says what it expected"

# a raw-page row with fewer fields after the first launch: the header reads
# stop at the first launch, the import finds the fault and stores nothing
{ cat "$H200/ncu_saxpy_strided_raw.csv"; printf '"99","1","k","h","saxpy(int)","1"\n'; } > "$T/ragged_tail.csv"
bad_line=$(wc -l < "$T/ragged_tail.csv" | tr -d ' ')
run "$KGATE" ingest --db "$DB" --commit bad --ncu-csv "$T/ragged_tail.csv"
is "$rc" 2 "an ncu export with a ragged row at its end exits 2"
like "$err" "ragged_tail.csv:$bad_line: raw page row has a different number of fields" "names the row"
like "$err" "nothing stored" "says nothing was stored"
is "$(runs)" "3" "run count unchanged"

run "$KGATE" ingest --db "$DB" --commit bad --records "$REC/good.jsonl" --ncu-csv "$H200/ncu_saxpy_strided_raw.csv"
is "$rc" 2 "inputs from two GPU models are refused"
like "$err" "one run is one GPU" "says why"

run "$KGATE" ingest --db "$DB" --commit bad
is "$rc" 2 "no input is a usage error"
run "$KGATE" ingest --db "$DB" --commit bad --records
is "$rc" 2 "option without value is a usage error"
run "$KGATE" ingest --db "$DB" --commit bad --bogus --records "$REC/good.jsonl"
is "$rc" 2 "unknown option is a usage error"
run "$KGATE" ingest --db "$DB" --commit bad --repeat x --records "$REC/good.jsonl"
is "$rc" 2 "bad --repeat is a usage error"
run "$KGATE" ingest --db "$DB" --commit bad --format xml --records "$REC/good.jsonl"
is "$rc" 2 "bad --format is a usage error"
ok "database file unchanged by every failed ingest" same_db

# --- database errors: exit 3, file untouched ---
printf 'garbage that is not a database, repeated.%.0s' $(seq 1 100) > "$T/bad.db"
cp "$T/bad.db" "$T/bad.orig"
run "$KGATE" ingest --db "$T/bad.db" --commit c --records "$REC/good.jsonl"
is "$rc" 3 "corrupt database exits 3"
like "$err" "^kgate: cannot open '.*bad.db': file is not a database" "corrupt database message"
ok "corrupt database untouched" cmp -s "$T/bad.db" "$T/bad.orig"

cp "$DB" "$T/new.db"
sqlite3 "$T/new.db" "PRAGMA user_version = 99"
cp "$T/new.db" "$T/new.orig"
run "$KGATE" ingest --db "$T/new.db" --commit c --records "$REC/good.jsonl"
is "$rc" 3 "newer schema exits 3"
like "$err" "schema version 99 is newer" "newer schema message"
ok "newer database untouched" cmp -s "$T/new.db" "$T/new.orig"

# --- a writer killed mid-run leaves nothing half-written ---
awk -v n=200000 -f "$KGATE_SRC/benchmarks/self/gen_records.awk" > "$T/big.jsonl"
"$KGATE" ingest --db "$T/kill.db" --commit first --records "$REC/good.jsonl" 2>/dev/null
"$KGATE" ingest --db "$T/kill.db" --commit big --records "$T/big.jsonl" 2>/dev/null &
pid=$!
sleep 0.5
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
is "$(sqlite3 "$T/kill.db" "PRAGMA integrity_check")" "ok" "killed ingest: database intact"
n=$(sqlite3 "$T/kill.db" "SELECT count(*) FROM samples WHERE run IN (SELECT id FROM runs WHERE commit_sha = 'big')")
ok "killed ingest: the run is all there or not at all ($n samples)" test "$n" -eq 0 -o "$n" -eq 1000000
is "$(sqlite3 "$T/kill.db" "SELECT count(*) FROM samples WHERE run = 1")" "21" "killed ingest: earlier run kept"
rm -f "$T/big.jsonl"

# --- commit from git ---
mkdir "$T/repo" && (cd "$T/repo" && git init -q && git -c user.email=a@b -c user.name=t commit -q --allow-empty -m x)
sha=$(git -C "$T/repo" rev-parse HEAD)
run sh -c "cd '$T/repo' && '$KGATE' ingest --db '$DB' --records '$REC/good.jsonl'"
is "$rc" 0 "--commit defaults to HEAD"
is "$(sqlite3 "$DB" "SELECT commit_sha FROM runs ORDER BY id DESC LIMIT 1")" "$sha" "HEAD's SHA stored"
run sh -c "cd '$T' && '$KGATE' ingest --db '$DB' --records '$REC/good.jsonl'"
is "$rc" 2 "no --commit outside a repository is a usage error"

run "$KGATE" ingest --db "$T/multi.db" --commit multi --ncu-csv "$H200/ncu_saxpy_strided_raw.csv" \
	--benchmark one --ncu-csv "$H200/ncu_saxpy_strided_raw.csv" --benchmark two --ncu-csv "$H200/ncu_saxpy_strided_raw.csv"
is "$rc" 0 "several benchmarks in one run"
is "$(sqlite3 "$T/multi.db" "SELECT b.name || ':' || count(DISTINCT s.repeat) FROM samples s JOIN benchmarks b ON b.id = s.benchmark GROUP BY b.name ORDER BY b.name" | tr '\n' ' ')" \
	"one:2 two:1 " "--benchmark names the inputs after it; the first also those before"

# A value that is a number but an infinite one (an export edited, or a
# counter that overflowed) is refused with its field, and nothing is stored.
# ("nan" is how ncu writes a derived metric it cannot compute: skipped like
# "n/a", as real H200 raw exports hold it.)
sed 's/"gpu__time_duration.sum","ns","230,816"/"gpu__time_duration.sum","ns","inf"/' \
	"$H200/ncu_saxpy_strided_details.csv" > "$T/inf.csv"
grep -q '"inf"' "$T/inf.csv" || echo "# the fixture changed: no value replaced"
run "$KGATE" ingest --db "$T/inf.db" --commit inf --ncu-csv "$T/inf.csv"
is "$rc" 2 "a duration 'inf' in an ncu export exits 2"
like "$err" "inf.csv:[0-9]+: gpu__time_duration.sum of launch 0 is 'inf', not a finite number" \
	"the metric and the launch are named"
is "$(sqlite3 "$T/inf.db" "SELECT count(*) FROM samples" 2>/dev/null || echo 0)" 0 "nothing is stored"
sed 's/"gpu__time_duration.sum","ns","230,816"/"gpu__time_duration.sum","ns","-inf"/' \
	"$H200/ncu_saxpy_strided_details.csv" > "$T/ninf.csv"
run "$KGATE" ingest --db "$T/inf.db" --commit ninf --ncu-csv "$T/ninf.csv"
is "$rc" 2 "a duration '-inf' exits 2"
sed 's/"gpu__time_duration.sum","ns","230,816"/"gpu__time_duration.sum","us","1e307"/' \
	"$H200/ncu_saxpy_strided_details.csv" > "$T/big.csv"
run "$KGATE" ingest --db "$T/inf.db" --commit big --ncu-csv "$T/big.csv"
is "$rc" 2 "a value that overflows when converted to ns exits 2"
sed 's/"gpu__time_duration.sum":[0-9.]*/"gpu__time_duration.sum":1e999/' "$REC/good.jsonl" > "$T/inf.jsonl"
run "$KGATE" ingest --db "$T/inf.db" --commit inf --records "$T/inf.jsonl"
is "$rc" 2 "a records file with a non-finite value exits 2"
like "$err" "inf.jsonl:2:[0-9]+: bad JSON: real number overflow near '1e999'" "the line and the value are named"

# A header time from the future would be "the newest run of main" for
# every later check: refused, nothing stored; a day of clock skew is not.
future=$(( $(date +%s) + 10 * 86400 ))
sed "1s/\"time\":[0-9]*/\"time\":$future/" "$REC/good.jsonl" > "$T/future.jsonl"
run "$KGATE" ingest --db "$T/future.db" --commit future --records "$T/future.jsonl"
is "$rc" 2 "a records header time 10 days ahead exits 2"
like "$err" "future.jsonl:1: header: \"time\" $future is 10.0 days ahead of this machine's clock" \
	"the header field is named"
is "$(sqlite3 "$T/future.db" "SELECT count(*) FROM runs" 2>/dev/null || echo 0)" 0 "no run is stored"
soon=$(( $(date +%s) + 3600 ))
sed "1s/\"time\":[0-9]*/\"time\":$soon/" "$REC/good.jsonl" > "$T/soon.jsonl"
run "$KGATE" ingest --db "$T/future.db" --commit soon --records "$T/soon.jsonl"
is "$rc" 0 "an hour of clock skew is accepted"
sed "1s/\"time\":[0-9]*/\"time\":-5/" "$REC/good.jsonl" > "$T/neg.jsonl"
run "$KGATE" ingest --db "$T/future.db" --commit neg --records "$T/neg.jsonl"
is "$rc" 2 "a negative header time exits 2"

# Kernel records are read by jtok when they are plain (ASCII strings without
# escapes, no repeated key) and by jansson otherwise: both readings store the
# same samples.  The same synthetic records, once plain and once with every
# '/' written "\/" (the same strings to JSON, jansson's to read), once more
# with each metrics object given a first, overridden copy of a key (jansson
# keeps the last value).
awk -v n=300 -v csv="$T/rows.csv" -f "$KGATE_SRC/benchmarks/self/gen_records.awk" > "$T/plain.jsonl"
sed '/"type":"kernel"/s|/|\\/|g' "$T/plain.jsonl" > "$T/escaped.jsonl"
sed 's|"metrics":{|"metrics":{"gpu__time_duration.sum":-1,|' "$T/plain.jsonl" > "$T/repeated.jsonl"
dump() { sqlite3 "$1" "SELECT benchmark, nvtx, kernel, metric, repeat, ordinal, value FROM samples_named ORDER BY kernel, metric, ordinal"; }
for f in plain escaped repeated; do
	run "$KGATE" ingest --db "$T/$f.db" --commit "$f" --benchmark syn --records "$T/$f.jsonl"
	is "$rc" 0 "$f records ingest"
done
is "$(grep -c '\\/' "$T/escaped.jsonl")" 300 "every kernel record of the escaped file has an escape"
is "$(dump "$T/plain.db" | wc -l)" 1500 "the plain file's 300 records give 1,500 samples"
is "$(dump "$T/escaped.db" | md5sum)" "$(dump "$T/plain.db" | md5sum)" "escaped strings: the same samples"
is "$(dump "$T/repeated.db" | md5sum)" "$(dump "$T/plain.db" | md5sum)" "a repeated key: the last value, as before"
is "$(sqlite3 "$T/escaped.db" "SELECT hex(data) FROM run_points")" "$(sqlite3 "$T/plain.db" "SELECT hex(data) FROM run_points")" "and the same points"

done_testing
