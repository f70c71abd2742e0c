#!/bin/sh
# traces.t: "kgate ingest" of Nsight Systems SQLite exports and Kineto
# (torch.profiler) traces, the real files of tests/fixtures/nsys/ and
# tests/fixtures/kineto/ (READMEs there).  What kgate stores is checked
# against the file as an independent reader sees it: Python's sqlite3 for
# the exports (the NVTX projection done again by brute force: each kernel's
# runtime call by correlation id and process, the push/pop ranges of its
# thread around it), Python's gzip and json for the traces (each kernel's
# gpu_user_annotation ranges on its device and stream).  Then the refusals:
# a report (.nsys-rep), an SQLite file without the kernel table, a table
# without a column kgate needs, a view in the kernel table's place, a
# truncated export, an AMD GPU's trace, a truncated .json.gz, a trace cut
# short, bad JSON, and an nsys stats table; each with its message and
# nothing stored.
#
# Files written here are cut or edited copies of the fixtures, or SYNTHETIC
# (an SQLite file made with the sqlite3 shell, an nsys stats CSV header).
. "$(dirname "$0")/lib.sh"

if ! command -v python3 >/dev/null || ! command -v sqlite3 >/dev/null; then
	echo "1..0 # skip python3 and sqlite3 are needed"
	exit 0
fi
NSYS="$FIX/nsys"
KIN="$FIX/kineto"
DB="$T/k.db"
runs() { sqlite3 "$DB" "SELECT count(*) FROM runs"; }

# kgate's view of one run: "kernel|nvtx|metric|value" per sample, sorted;
# KEY: the kernel's name as kgate keys it (mangled) or its demangled form
stored_by() {
	sqlite3 -separator '|' "$DB" "SELECT k.$2, n.path, m.name, s.value FROM samples s
		JOIN runs r ON r.id = s.run JOIN kernels k ON k.id = s.kernel
		JOIN nvtx n ON n.id = s.nvtx JOIN metrics m ON m.id = s.metric
		WHERE r.commit_sha = '$1'" | python3 -c '
import sys
rows = []
for line in sys.stdin.read().splitlines():
    head, v = line.rsplit("|", 1)
    rows.append("%s|%d" % (head, round(float(v))))
print("\n".join(sorted(rows)))'
}
stored() { stored_by "$1" mangled; }
stored_demangled() { stored_by "$1" demangled; }

# --- Nsight Systems SQLite exports ---
nsys_expect() {
	python3 - "$1" <<'EOF'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
s = dict(db.execute("SELECT id, value FROM StringIds"))
rt = {}
for c, tid, st, en in db.execute("SELECT correlationId, globalTid, start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY rowid"):
    rt.setdefault((c, tid & ~0xFFFFFF), (tid, st, en))
ranges = {}
for tid, st, en, text, tid2 in db.execute("SELECT globalTid, start, end, text, textId FROM NVTX_EVENTS WHERE eventType IN (59, 70)"):
    ranges.setdefault(tid, []).append((st, en if en is not None else 2**63 - 1, text if text is not None else s.get(tid2, "")))
out = []
for row in db.execute("SELECT start, end, mangledName, demangledName, gridX*gridY*gridZ, blockX*blockY*blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL"):
    st, en, mn, dn, g, b, r, ss, ds, lm, c, pid = row
    name = s[mn] if mn is not None else s[dn]
    path = ""
    call = rt.get((c, pid))
    if call:
        tid, rs, re_ = call
        inner = sorted(x for x in ranges.get(tid, []) if x[0] <= rs and x[1] >= re_)
        path = "/".join(x[2] for x in inner)
    for m, v in (("gpu__time_duration.sum", en - st), ("launch__grid_size", g), ("launch__block_size", b),
                 ("launch__registers_per_thread", r), ("launch__shared_mem_per_block_static", ss),
                 ("launch__shared_mem_per_block_dynamic", ds), ("launch__local_mem_per_thread", lm)):
        out.append("%s|%s|%s|%d" % (name, path, m, v))
print("\n".join(sorted(out)))
EOF
}

i=0
for f in "$NSYS"/*.sqlite; do
	i=$((i + 1))
	b=$(basename "$f")
	run "$KGATE" ingest --db "$DB" --commit "n$i" --branch t --format json "$f"
	is "$rc" 0 "$b: ingests"
	want=$(nsys_expect "$f")
	got=$(stored "n$i")
	nk=$(sqlite3 "$f" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
	like "$out" "\"kernels\":$nk,\"samples\":$((nk * 7))," "$b: every kernel launch ($nk), 7 samples each"
	if [ "$got" = "$want" ]; then is 1 1 "$b: every sample as the file has it (name, NVTX path, metric, value)"
	else is "$(printf '%s\n' "$got" | diff - /dev/fd/3 3<<EOF | head -5
$want
EOF
)" "" "$b: every sample as the file has it (name, NVTX path, metric, value)"; fi
	nv=$(printf '%s\n' "$want" | grep -c '^[^|]*|[^|][^|]*|gpu__time_duration.sum|' || true)
	is "$(sqlite3 "$DB" "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run JOIN nvtx n ON n.id = s.nvtx JOIN metrics m ON m.id = s.metric WHERE r.commit_sha = 'n$i' AND n.path != '' AND m.name = 'gpu__time_duration.sum'")" \
		"$nv" "$b: $nv launches inside NVTX ranges of their thread"
	is "$(sqlite3 "$DB" "SELECT gpu_name || '|' || coalesce(gpu_chip, '') || '|' || source FROM runs WHERE commit_sha = 'n$i'")" \
		"$(sqlite3 "$f" "SELECT name || '|' || coalesce(chipName, '') FROM TARGET_INFO_GPU")|nsys-sqlite" "$b: the GPU from TARGET_INFO_GPU"
	is "$(sqlite3 "$DB" "SELECT b.name FROM run_benchmarks rb JOIN benchmarks b ON b.id = rb.benchmark JOIN runs r ON r.id = rb.run WHERE r.commit_sha = 'n$i'")" \
		"$(sqlite3 "$f" "SELECT replace(p.name, './bin/', '') FROM PROCESSES p WHERE globalPid = (SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY globalPid ORDER BY count(*) DESC LIMIT 1)")" \
		"$b: the benchmark named after the process that launched the kernels"
done
is "$(sqlite3 "$DB" "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run JOIN nvtx n ON n.id = s.nvtx WHERE r.commit_sha = 'n1' AND n.path LIKE '%/%'")" \
	"$(sqlite3 "$DB" "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run JOIN nvtx n ON n.id = s.nvtx WHERE r.commit_sha = 'n1' AND n.path != ''")" \
	"nested ranges make paths (outer/inner)"

# an export of an older nsys (derived from the 2025 one): no mangledName, no
# localMemoryPerThread, no runtime, NVTX, GPU or process tables
sqlite3 "$T/old-nsys.sqlite" "ATTACH '$NSYS/nvfuser_h200_2025_report1.sqlite' AS s;
	CREATE TABLE StringIds AS SELECT * FROM s.StringIds;
	CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL AS SELECT start, end, deviceId, streamId, correlationId,
	  globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY,
	  blockZ, staticSharedMemory, dynamicSharedMemory FROM s.CUPTI_ACTIVITY_KIND_KERNEL"
run "$KGATE" ingest --db "$DB" --commit n-old --branch t --format json "$T/old-nsys.sqlite"
is "$rc" 0 "an export without the newer columns and tables ingests"
nk=$(sqlite3 "$T/old-nsys.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
like "$out" "\"kernels\":$nk,\"samples\":$((nk * 6))," "6 samples a launch (no local memory column)"
is "$(sqlite3 "$DB" "SELECT count(DISTINCT k.mangled) FROM samples s JOIN runs r ON r.id = s.run JOIN kernels k ON k.id = s.kernel WHERE r.commit_sha = 'n-old' AND k.mangled = k.demangled")" \
	"$(sqlite3 "$T/old-nsys.sqlite" "SELECT count(DISTINCT demangledName) FROM CUPTI_ACTIVITY_KIND_KERNEL")" \
	"kernels keyed by their demangled names"
is "$(sqlite3 "$DB" "SELECT b.name FROM run_benchmarks rb JOIN benchmarks b ON b.id = rb.benchmark JOIN runs r ON r.id = rb.run WHERE r.commit_sha = 'n-old'")" \
	"old-nsys" "no process table: the benchmark is named after the file"
like "$err" "do not name the GPU" "no GPU table: the run's GPU is unnamed, and kgate says so"

# refusals
n=$(runs)
run "$KGATE" ingest --db "$DB" --commit r1 "$NSYS/nvfuser_h200_report1.nsys-rep"
is "$rc" 2 ".nsys-rep: refused"
like "$err" "this looks like an Nsight Systems report \(.nsys-rep\); 'nsys export --type sqlite --output FILE.sqlite FILE.nsys-rep' exports it" ".nsys-rep: with the export command"
sqlite3 "$T/nokern.sqlite" "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL); CREATE TABLE TARGET_INFO_GPU(id INTEGER, name TEXT); CREATE TABLE NVTX_EVENTS(start INTEGER)"
run "$KGATE" ingest --db "$DB" --commit r2 "$T/nokern.sqlite"
is "$rc" 2 "an export without the kernel table: refused"
like "$err" "nokern.sqlite: an SQLite file without a CUPTI_ACTIVITY_KIND_KERNEL table: no CUDA kernel was traced .*--trace=cuda" "and says what it lacks"
sqlite3 "$T/nocol.sqlite" "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL); CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, demangledName INTEGER)"
run "$KGATE" ingest --db "$DB" --commit r3 "$T/nocol.sqlite"
is "$rc" 2 "a kernel table without the launch configuration: refused"
like "$err" "table CUPTI_ACTIVITY_KIND_KERNEL has no column 'gridX'" "naming the column"
cp "$NSYS/nvfuser_h200_report1.sqlite" "$T/view.sqlite"
sqlite3 "$T/view.sqlite" "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO k0; CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT * FROM k0, r"
run "$KGATE" ingest --db "$DB" --commit r4 "$T/view.sqlite"
is "$rc" 2 "a view in the kernel table's place (an endless one): refused, not run"
like "$err" "without a CUPTI_ACTIVITY_KIND_KERNEL table" "as a file without the table"
head -c 300000 "$NSYS/nvfuser_h200_2025_report1.sqlite" > "$T/cut.sqlite"
run "$KGATE" ingest --db "$DB" --commit r5 "$T/cut.sqlite"
is "$rc" 2 "a truncated export: refused"
like "$err" "cut.sqlite.*(malformed|disk image|not a readable)" "with SQLite's reason"
printf 'Processing [report1.sqlite] with [cuda_gpu_kern_sum.py]...\n"Time (%%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)","Max (ns)","StdDev (ns)","Name"\n' > "$T/kern_sum.csv"
run "$KGATE" ingest --db "$DB" --commit r6 "$T/kern_sum.csv"
is "$rc" 2 "an nsys stats table (synthetic header): refused"
like "$err" "this looks like an 'nsys stats' CSV table .*nsys export --type sqlite" "with what to give instead"
is "$(runs)" "$n" "nothing stored by any refusal"

# --- Kineto traces ---
# the samples expected of a trace, sorted; into $2.meta: the kernel events'
# count and the first device's name
kineto_expect() {
	python3 - "$1" "$2" <<'EOF'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1], "rt"))
ev = d["traceEvents"]
ann = [e for e in ev if e.get("cat") == "gpu_user_annotation" and e.get("ph") == "X"]
spans = [(e["pid"], e["tid"], round(e["ts"] * 1000), round(e["ts"] * 1000) + round(e["dur"] * 1000), e["name"]) for e in ann]
out = []
def count(v):
    return v[0] * v[1] * v[2]
for e in ev:
    if e.get("ph") != "X":
        continue
    cat = e.get("cat")
    if cat not in ("kernel", "cuda_profiler_range"):
        continue
    ts = round(e["ts"] * 1000)
    inner = sorted((s[2], -s[3], s[4]) for s in spans if s[0] == e["pid"] and s[1] == e["tid"] and s[2] <= ts <= s[3])
    path = "/".join(x[2] for x in inner)
    a = e.get("args", {})
    if cat == "kernel":
        m = [("gpu__time_duration.sum", round(e["dur"] * 1000))]
        if "grid" in a: m.append(("launch__grid_size", count(a["grid"])))
        if "block" in a: m.append(("launch__block_size", count(a["block"])))
        if "registers per thread" in a: m.append(("launch__registers_per_thread", a["registers per thread"]))
        if "shared memory" in a: m.append(("launch__shared_mem_per_block", a["shared memory"]))
    else:
        m = [(k, v) for k, v in a.items() if isinstance(v, (int, float)) and "_" in k]
    for k, v in m:
        out.append("%s|%s|%s|%d" % (e["name"], path, k, round(v)))
nk = sum(1 for e in ev if e.get("cat") in ("kernel", "cuda_profiler_range") and e.get("ph") == "X")
with open(sys.argv[2], "w") as f:
    f.write("\n".join(sorted(out)) + "\n")
with open(sys.argv[2] + ".meta", "w") as f:
    f.write("%d\n%s\n" % (nk, d["deviceProperties"][0]["name"]))
EOF
}
i=0
for f in "$KIN"/*.json.gz; do
	b=$(basename "$f")
	case $b in mi250*) continue ;; esac
	i=$((i + 1))
	run "$KGATE" ingest --db "$DB" --commit "k$i" --branch t --format json "$f"
	is "$rc" 0 "$b: ingests"
	kineto_expect "$f" "$T/exp.$i"
	want=$(cat "$T/exp.$i")
	nk=$(sed -n 1p "$T/exp.$i.meta")
	like "$out" "\"kernels\":$nk,\"samples\":$(printf '%s\n' "$want" | wc -l)," "$b: every kernel event ($nk) and its samples"
	got=$(stored_demangled "k$i")
	if [ "$got" = "$want" ]; then is 1 1 "$b: every sample as the file has it (name, annotation path, metric, value)"
	else is "$(printf '%s\n' "$got" | diff - /dev/fd/3 3<<EOF | head -5
$want
EOF
)" "" "$b: every sample as the file has it (name, annotation path, metric, value)"; fi
	is "$(sqlite3 "$DB" "SELECT gpu_name FROM runs WHERE commit_sha = 'k$i'")" \
		"$(sed -n 2p "$T/exp.$i.meta")" \
		"$b: the GPU from deviceProperties"
done
is "$(sqlite3 "$DB" "SELECT count(DISTINCT n.path) FROM samples s JOIN runs r ON r.id = s.run JOIN nvtx n ON n.id = s.nvtx WHERE r.source = 'kineto' AND n.path != ''")" \
	"$(cat "$T"/exp.? | cut -d'|' -f2 | grep -v '^$' | sort -u | wc -l)" \
	"annotation paths as the independent reader nests them"

# the same trace uncompressed reads the same
zcat "$KIN/step_based_trace_2543932.json.gz" > "$T/step.json"
run "$KGATE" ingest --db "$DB" --commit kj --branch t "$T/step.json"
is "$rc" 0 "a plain .json trace ingests"
kineto_expect "$KIN/step_based_trace_2543932.json.gz" "$T/exp.step"
is "$(stored_demangled kj)" "$(cat "$T/exp.step")" "and stores what its .json.gz does"

# older Kineto names a GPU event's stream "stream 7" (a string tid): the same paths
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for e in d["traceEvents"]:
    if e.get("cat") in ("kernel", "gpu_user_annotation"):
        e["tid"] = "stream %d" % e["tid"]
json.dump(d, sys.stdout)' "$T/step.json" > "$T/stream-names.json"
run "$KGATE" ingest --db "$DB" --commit ks --branch t "$T/stream-names.json"
is "$rc" 0 "a trace whose GPU events name their stream as \"stream N\" (edited copy) ingests"
is "$(stored_demangled ks)" "$(cat "$T/exp.step")" "with the same annotation paths"

# the category read without parsing (jstream_probe) agrees with a parser on
# events written in every way JSON allows (edited copy): "cat" or its value
# with escapes, the key twice (the last one counts, as for jansson and
# Python), "cat" only inside args, a category that is not a string
python3 -c 'import sys
d = open(sys.argv[1]).read()
k = "\"cat\": \"kernel\""
edits = ["\"cat\": \"ker\\u006eel\"", "\"c\\u0061t\": \"kernel\"",
         "\"cat\": \"cpu_op\", \"cat\": \"kernel\"", "\"cat\": \"kernel\", \"cat\": \"cpu_op\"",
         "\"cat\": 7, \"args\": {\"cat\": \"kernel\"}", "\"cat\":\"kernel\"",
         "\"cat\" : \"kernel\" "]
out, i = [], 0
for e in edits:
    j = d.index(k, i)
    out.append(d[i:j] + e)
    i = j + len(k)
out.append(d[i:])
sys.stdout.write("".join(out))' "$T/step.json" > "$T/cat-forms.json"
run "$KGATE" ingest --db "$DB" --commit kc --branch t "$T/cat-forms.json"
is "$rc" 0 "a trace whose categories are written in other forms (edited copy) ingests"
gzip -c "$T/cat-forms.json" > "$T/cat-forms.json.gz"
kineto_expect "$T/cat-forms.json.gz" "$T/exp.cat"
is "$(stored_demangled kc)" "$(cat "$T/exp.cat")" "the kernels a JSON parser finds, with their samples"
is "$(sed -n 1p "$T/exp.cat.meta")" "$(($(sed -n 1p "$T/exp.step.meta") - 2))" \
	"(two of the edits make a kernel event something else)"

# more kernel events than the first pass holds (131,072; SYNTHETIC trace of
# the fixture's device, 140,000 launches on one stream under one annotation
# that Kineto writes after them): the rest are read in a second pass, with
# the same path and ordinals
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
dev = d["deviceProperties"][:1]
n = 140000
ev = [{"ph": "X", "cat": "kernel", "name": "k%d" % (i % 3), "pid": 0, "tid": 7, "ts": 10 + i,
       "dur": 0.5, "args": {"device": 0, "grid": [i % 5 + 1, 1, 1], "block": [128, 1, 1]}} for i in range(n)]
ev.append({"ph": "X", "cat": "gpu_user_annotation", "name": "step", "pid": 0, "tid": 7, "ts": 0, "dur": n + 100})
print(json.dumps({"schemaVersion": 1, "deviceProperties": dev, "traceEvents": ev}))' "$T/step.json" > "$T/many.json"
run "$KGATE" ingest --db "$DB" --commit kmany --branch t "$T/many.json"
is "$rc" 0 "140,000 kernel events ingest"
is "$(sqlite3 "$DB" "SELECT count(*) || ' ' || count(DISTINCT s.ordinal) || ' ' || min(s.ordinal) || ' ' || max(s.ordinal) || ' ' || sum(s.value) FROM samples s JOIN runs r ON r.id = s.run JOIN metrics m ON m.id = s.metric JOIN nvtx n ON n.id = s.nvtx WHERE r.commit_sha = 'kmany' AND m.name = 'launch__grid_size' AND n.path = 'step'")" \
	"140000 140000 0 139999 420000.0" "every launch once, under its annotation, its grid, ordinals in file order"

# refusals
n=$(runs)
run "$KGATE" ingest --db "$DB" --commit kr1 "$KIN/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
is "$rc" 2 "an AMD GPU's trace (ROCm): refused"
like "$err" "a trace of an AMD GPU \(AMD Radeon Graphics; a ROCm build of PyTorch\): kgate gates CUDA kernels on NVIDIA GPUs" "naming the GPU"
head -c 600000 "$KIN/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz" > "$T/cut.json.gz"
run "$KGATE" ingest --db "$DB" --commit kr2 "$T/cut.json.gz"
is "$rc" 2 "a truncated .json.gz: refused"
like "$err" "cut.json.gz: truncated: the gzip stream ends before its end" "saying it was cut short"
head -c 150000 "$T/step.json" > "$T/cut.json"
run "$KGATE" ingest --db "$DB" --commit kr3 "$T/cut.json"
is "$rc" 2 "a trace cut short (plain JSON): refused"
like "$err" "cut.json: truncated: the JSON document ends at byte 150000" "at the byte where it ends"
python3 -c 'import sys; d = open(sys.argv[1]).read(); i = d.index("\"cat\": \"kernel\""); sys.stdout.write(d[:i] + "\"cat\": \"kernel\" \"oops\"," + d[i + 16:])' "$T/step.json" > "$T/bad.json"
run "$KGATE" ingest --db "$DB" --commit kr4 "$T/bad.json"
is "$rc" 2 "bad JSON in a kernel event: refused"
like "$err" "bad.json: byte [0-9]+: bad JSON in traceEvents" "at its byte"
# the header's reading stops once it knows the process and the GPU; what
# comes after is the ingest's to check: the last kernel event broken
python3 -c 'import sys; d = open(sys.argv[1]).read(); i = d.rindex("\"cat\": \"kernel\""); sys.stdout.write(d[:i] + "\"cat\": \"kernel\" \"oops\"," + d[i + 16:])' "$T/step.json" > "$T/badlast.json"
run "$KGATE" ingest --db "$DB" --commit kr6 "$T/badlast.json"
is "$rc" 2 "bad JSON in the last kernel event: refused"
like "$err" "badlast.json: byte [0-9]+: bad JSON in traceEvents" "at its byte"
printf '{"traceEvents": [], "deviceProperties": []}' > "$T/empty.json"
run "$KGATE" ingest --db "$DB" --commit kr5 "$T/empty.json"
is "$rc" 2 "a trace without kernels (synthetic): refused"
like "$err" "a trace without GPU kernels .*ProfilerActivity.CUDA" "saying what to record"
is "$(runs)" "$n" "nothing stored by any refusal"

done_testing
