#!/bin/sh
# import.t: "kgate ingest" through the importer table (import.h): files
# given bare have their format told from their content, any number of files
# and directories in one run, --input-format (and its aliases --records and
# --ncu-csv) overriding the sniff, the warning when a benchmark name taken
# from the files would merge different command lines, and the message for a
# file of a format kgate does not read yet.
#
# Every file written here is SYNTHETIC: made up to carry the signature of a
# format (nvbench's and Google Benchmark's top-level JSON keys, a Chrome
# trace's events, ncu-rep's magic bytes), not produced by those tools or a GPU.
# The records and ncu files copied are the fixtures of tests/fixtures/.
. "$(dirname "$0")/lib.sh"

REC="$FIX/records"
NCU="$FIX/h200/ncu_saxpy_strided_details.csv"
DB="$T/k.db"
runs() { sqlite3 "$DB" "SELECT count(*) FROM runs"; }

# --- files given bare: the format from the content ---
run "$KGATE" ingest --db "$DB" --commit c1 "$REC/good.jsonl" "$NCU"
is "$rc" 0 "a records file and an ncu export, given bare, ingest"
is "$(sqlite3 "$DB" "SELECT source FROM runs WHERE commit_sha = 'c1'")" "records+ncu-csv" "both importers named in the run's source"
is "$(sqlite3 "$DB" "SELECT group_concat(name, ',') FROM (SELECT name FROM benchmarks ORDER BY name)")" "k,saxpy" \
	"each file names its benchmark (argv[0], ncu's process name)"
unlike "$err" "merges" "the same command line twice is no merge"

cp "$REC/good.jsonl" "$T/renamed.csv"
run "$KGATE" ingest --db "$DB" --commit c2 "$T/renamed.csv" "$REC/good.jsonl"
is "$rc" 0 "content beats the name: a records file named .csv is read as records"
is "$(sqlite3 "$DB" "SELECT count(DISTINCT repeat) FROM samples s JOIN runs r ON r.id = s.run WHERE r.commit_sha = 'c2'")" \
	"2" "two files of one benchmark are two repeats"

# --- directories ---
mkdir "$T/dir" "$T/dir/sub"
cp "$REC/good.jsonl" "$T/dir/b.jsonl"
cp "$REC/good.jsonl" "$T/dir/a.jsonl"
cp "$NCU" "$T/dir/c.csv"
cp "$REC/good.jsonl" "$T/dir/sub/d.jsonl"
cp "$REC/good.jsonl" "$T/dir/.hidden.jsonl"
echo "notes on the run" > "$T/dir/README"
printf '{"meta":{"argv":["./bench"],"version":{"nvbench":{"string":"0.0.0"}}},"devices":[],"benchmarks":[]}\n' \
	> "$T/dir/nvbench.json"
run "$KGATE" ingest --db "$DB" --commit d1 --format json "$T/dir"
is "$rc" 0 "a directory ingests"
like "$out" '"benchmarks": ?2, ?"kernels": ?16,' "its two records files and its ncu export, not sub/ nor the hidden file"
like "$err" "warning: skipped '.*/dir/nvbench.json': this looks like an nvbench JSON file; kgate does not read that format yet" \
	"a file of a format kgate does not read is skipped with a warning"
unlike "$err" "README" "a file no importer claims is skipped silently"
is "$(sqlite3 "$DB" "SELECT count(DISTINCT repeat) FROM samples s JOIN runs r ON r.id = s.run JOIN benchmarks b ON b.id = s.benchmark WHERE r.commit_sha = 'd1' AND b.name = 'saxpy'")" \
	"2" "a.jsonl and b.jsonl are the repeats of saxpy"

mkdir "$T/empty"
echo "nothing" > "$T/empty/notes.txt"
n=$(runs)
run "$KGATE" ingest --db "$DB" --commit d2 "$T/empty"
is "$rc" 2 "a directory without a file kgate reads exits 2"
like "$err" "cannot ingest '.*/empty': the directory holds no file kgate reads \(records, ncu-csv(, [a-z0-9-]*)*\)" "and says so"
is "$(runs)" "$n" "nothing stored"

mkdir "$T/bad"
cp "$REC/good.jsonl" "$T/bad/a.jsonl"
: > "$T/bad/b.jsonl"
run "$KGATE" ingest --db "$DB" --commit d3 "$T/bad"
is "$rc" 2 "an empty .jsonl in a directory is an input error, not skipped"
like "$err" "b.jsonl: empty file: no header" "its importer says why"
is "$(runs)" "$n" "nothing stored"

# --- --input-format ---
{ i=0; while [ $i -lt 2000 ]; do echo "step $i of the program's own output, long enough to push the table out"; i=$((i + 1)); done
  grep -v '^==' "$NCU"; } > "$T/late-table.txt"
run "$KGATE" ingest --db "$DB" --commit f1 "$T/late-table.txt"
is "$rc" 2 "an export whose table begins after the sniffed head is not recognised"
like "$err" "cannot ingest '.*late-table.txt': not a format kgate reads; it reads records \(.*\), ncu-csv \(.*\) \(--input-format NAME names one\)" \
	"the message lists the formats kgate reads"
run "$KGATE" ingest --db "$DB" --commit f1 --input-format ncu-csv "$T/late-table.txt"
is "$rc" 0 "--input-format ncu-csv reads it"
run "$KGATE" ingest --db "$DB" --commit f2 --input-format records "$NCU"
is "$rc" 2 "--input-format records on an ncu export: the records reader refuses it"
like "$err" "ncu_saxpy_strided_details.csv:1:.*bad JSON" "it was read as records"
run "$KGATE" ingest --db "$DB" --commit f3 --input-format records "$REC/good.jsonl" --input-format auto "$NCU"
is "$rc" 0 "--input-format auto sniffs again for the files after it"
run "$KGATE" ingest --help
like "$out" "^Formats:$" "--help has a list of formats"
like "$out" "^  records  +records files \(JSON Lines\) written by kgate's collector$" "--help names records from the importer table"
like "$out" "^  ncu-csv  +Nsight Compute CSV exports" "--help names ncu-csv from the importer table"
run "$KGATE" ingest --db "$DB" --commit f4 --input-format nvbench "$REC/good.jsonl"
is "$rc" 2 "an unknown --input-format exits 2"
like "$err" "--input-format 'nvbench' is not one of: records, ncu-csv(, [a-z0-9-]*)*, auto" "and names the choices"
run "$KGATE" ingest --db "$DB" --commit f5 --ncu-csv "$NCU" -- "$REC/good.jsonl"
is "$rc" 0 "--ncu-csv still names a file; files after -- are sniffed"

mkfifo "$T/r.fifo"
run timeout 20 "$KGATE" ingest --db "$DB" --commit f6 "$T/r.fifo"
is "$rc" 2 "a FIFO given bare exits 2 at once (no read of it blocks)"
like "$err" "r.fifo': not a regular file, so its format cannot be told from its content; give --input-format NAME before it" "and says what to do"
timeout 20 sh -c 'cat "$1" > "$2"' sh "$REC/good.jsonl" "$T/r.fifo" &
run timeout 20 "$KGATE" ingest --db "$DB" --commit f6 --input-format records "$T/r.fifo"
is "$rc" 0 "with --input-format records it is read"
wait

# --- one benchmark name from files of different command lines ---
sed 's/"--n","1024"/"--n","2048"/' "$REC/good.jsonl" > "$T/other-args.jsonl"
run "$KGATE" ingest --db "$DB" --commit m1 "$REC/good.jsonl" "$T/other-args.jsonl"
is "$rc" 0 "files of different command lines still ingest"
like "$err" "warning: benchmark 'saxpy' merges the records of different command lines: 'build/benchmarks/saxpy --n 1024' \(.*good.jsonl\) and 'build/benchmarks/saxpy --n 2048' \(.*other-args.jsonl\); give --benchmark NAME before each to keep them apart" \
	"a warning names both command lines"
run "$KGATE" ingest --db "$DB" --commit m2 --benchmark small "$REC/good.jsonl" --benchmark large "$T/other-args.jsonl"
is "$rc" 0 "with --benchmark"
unlike "$err" "merges" "names given by --benchmark are not warned about"

# --- formats kgate does not read yet (synthetic signatures) ---
printf '{\n  "context": {\n    "date": "2026-01-01T00:00:00",\n    "host_name": "synthetic",\n    "executable": "./b",\n    "num_cpus": 1,\n    "library_build_type": "release"\n  },\n  "benchmarks": []\n}\n' > "$T/gbench.json"
printf '[{"name": "k", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]\n' > "$T/chrome.json"
printf 'NVR\000\001\000\000\000synthetic' > "$T/x.ncu-rep"
printf 'synthetic\000\001\002\003' > "$T/x.nsys-rep"
cp "$T/dir/nvbench.json" "$T/nvbench.json"
for c in "nvbench.json|an nvbench JSON file" \
	 "gbench.json|a Google Benchmark JSON file" \
	 "chrome.json|a Chrome trace JSON file without the GPU kernels of a Kineto" \
	 "x.ncu-rep|a binary Nsight Compute report \(.ncu-rep\)" \
	 "x.nsys-rep|an Nsight Systems report \(.nsys-rep, by its name\)" \
	 "k.db|a kgate database: give it as --db"; do
	f=${c%%|*} what=${c#*|}
	n=$(runs)
	run "$KGATE" ingest --db "$DB" --commit u1 "$T/$f"
	is "$rc" 2 "$f: exit 2"
	like "$err" "^kgate: cannot ingest '.*$f': this looks like $what.*; kgate does not read that format yet$" "$f: recognised"
	is "$(runs)" "$n" "$f: nothing stored"
done
echo "just some text" > "$T/notes.txt"
run "$KGATE" ingest --db "$DB" --commit u2 "$T/notes.txt"
is "$rc" 2 "an unknown file exits 2"
like "$err" "not a format kgate reads; it reads records \(records files .*\), ncu-csv \(Nsight Compute CSV exports" "with the formats kgate reads"

run "$KGATE" ingest --db "$DB" --commit u3
is "$rc" 2 "no input exits 2"
like "$err" "nothing to ingest: give files or directories" "and says what to give"

done_testing
