#!/bin/sh
# nvbench.t: "kgate ingest" of nvbench JSON (src/import/nvbench.c).  The
# counts are checked against the files by an independent reader (Python's
# json and struct modules): the real --json outputs of tests/fixtures/nvbench/
# (summaries only), the SYNTHETIC --jsonbin fixture beside them (per-sample
# files), the benchmarks, states and GPU models they name; then the refusals:
# a pre-1.0 document, a truncated document, a sample file that contradicts
# its summary, a sample file name that climbs out of the directory; and a
# check of the pair of real runs against each other meets every state (no
# MISSING, no NEW).
. "$(dirname "$0")/lib.sh"

NV="$FIX/nvbench"
REF="$NV/nvbench_axes_ref_gv100_gp100.json"
CMP="$NV/nvbench_axes_cmp_gv100_gp100.json"
BIN="$NV/synthetic_jsonbin.json"
DB="$T/k.db"
q() { sqlite3 "$DB" "$1"; }
runs() { q "SELECT count(*) FROM runs"; }

# What the importer should store of a document, counted here in Python:
# samples, measured states, benchmarks with a measured state, GPU models.
count() {
	python3 - "$1" <<'EOF'
import json, os, struct, sys
path = sys.argv[1]
d = json.load(open(path))
devs = {x["id"]: x["name"] for x in d["devices"]}
samples = states = 0
benches, gpus = set(), []
for b in d["benchmarks"]:
    for s in b["states"]:
        if s.get("is_skipped"):
            continue
        states += 1
        benches.add(b["name"])
        if devs[s["device"]] not in gpus:
            gpus.append(devs[s["device"]])
        tags = {x["tag"]: x for x in s["summaries"]}
        for tag in ("nv/json/bin:nv/cold/sample_times", "nv/json/freqs-bin:nv/cold/sample_freqs"):
            if tag in tags:
                f = [x["value"] for x in tags[tag]["data"] if x["name"] == "filename"][0]
                data = open(os.path.join(os.path.dirname(path), f), "rb").read()
                samples += len(data) // 4
        if "nv/json/bin:nv/cold/sample_times" not in tags:
            samples += "nv/cold/time/gpu/mean" in tags
        for x in s["summaries"]:
            t = x["tag"]
            if t.startswith("nv/json/") or t.endswith("/walltime") or x.get("hint") == "sample_size":
                continue
            samples += any(v["name"] == "value" for v in x["data"])
print(samples, states, len(benches), " + ".join(gpus))
EOF
}

# --- a real --json output: summaries only ---
set -- $(count "$REF")
want_samples=$1 want_states=$2 want_benches=$3
shift 3
want_gpu="$*"
run "$KGATE" ingest --db "$DB" --commit aaaa --format json "$REF"
is "$rc" 0 "a real nvbench --json output ingests"
like "$out" "\"benchmarks\": ?$want_benches, ?\"kernels\": ?$want_states, ?\"samples\": ?$want_samples," \
	"its benchmarks, states and samples as counted by Python's json ($want_benches, $want_states, $want_samples)"
is "$(q "SELECT count(*) FROM samples")" "$want_samples" "every sample stored"
is "$(q "SELECT group_concat(name, ',') FROM (SELECT name FROM benchmarks ORDER BY name)")" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(",".join(sorted(b["name"] for b in d["benchmarks"] if any(not s.get("is_skipped") for s in b["states"]))))' "$REF")" \
	"each nvbench benchmark is a benchmark of the run"
is "$(q "SELECT gpu_name FROM runs")" "$want_gpu" "the GPU models of the devices measured, in the fingerprint"
like "$err" "warning: .*measured on 2 GPU models" "two GPU models are warned about"
is "$(q "SELECT source FROM runs")" "nvbench (summaries)" "the run says its GPU times are summaries"
like "$err" "$want_states of $want_states states have no per-sample files \(nvbench --jsonbin\)" "and stderr says so"
is "$(q "SELECT count(*) FROM kernels WHERE mangled = 'Device=0 BlockSize=2^6 NumBlocks=2^6'")" "1" \
	"a state's axis values are its kernel name"
is "$(q "SELECT round(value, 3) FROM samples s JOIN metrics m ON m.id = s.metric JOIN kernels k ON k.id = s.kernel JOIN benchmarks b ON b.id = s.benchmark WHERE b.name = 'copy_sweep_grid_shape' AND k.mangled = 'Device=0 BlockSize=2^6 NumBlocks=2^6' AND m.name = 'gpu__time_duration.sum'")" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=[s for b in d["benchmarks"] if b["name"]=="copy_sweep_grid_shape" for s in b["states"] if s["name"]=="Device=0 BlockSize=2^6 NumBlocks=2^6"][0]; print(round([float(x["data"][0]["value"]) for x in s["summaries"] if x["tag"]=="nv/cold/time/gpu/mean"][0]*1e9, 3))' "$REF")" \
	"the mean GPU time in ns is gpu__time_duration.sum"
is "$(q "SELECT unit FROM metrics WHERE name = 'nv/cold/bw/global/utilization'")" "%" "a percentage summary in %"

# the pair compares state by state: nothing MISSING, nothing NEW
run "$KGATE" ingest --db "$DB" --commit bbbb "$CMP"
is "$rc" 0 "the compare run of the pair ingests"
run "$KGATE" check --db "$DB" --commit bbbb --baseline aaaa --format json
like "$out" '"new": 0,' "check of the pair: no NEW"
like "$out" '"missing": 0,' "check of the pair: no MISSING"
like "$out" "\"inconclusive\": $want_states," "every state compared (one mean a side: inconclusive)"

# --benchmark NAME prefixes the file's benchmark names
run "$KGATE" ingest --db "$DB" --commit cccc --benchmark axes "$REF"
is "$rc" 0 "with --benchmark"
is "$(q "SELECT count(*) FROM benchmarks WHERE name LIKE 'axes/%'")" "$want_benches" "--benchmark NAME is the prefix NAME/"

# --- the synthetic --jsonbin fixture: per-sample files ---
set -- $(count "$BIN")
run "$KGATE" ingest --db "$DB" --commit dddd --format json "$BIN"
is "$rc" 0 "an nvbench output with --jsonbin sample files ingests"
like "$out" "\"kernels\": ?$2, ?\"samples\": ?$1," "samples of the sample files counted by Python's struct ($1)"
unlike "$err" "no per-sample files" "no warning when every state has its samples"
is "$(q "SELECT source FROM runs WHERE commit_sha = 'dddd'")" "nvbench" "the run's source is plain nvbench"
is "$(q "SELECT gpu_name || ' ' || gpu_chip FROM runs WHERE commit_sha = 'dddd'")" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["devices"][0]; print("%s sm_%d" % (d["name"], d["sm_version"] // 10))' "$BIN")" \
	"one GPU model: its name and compute capability in the fingerprint"
is "$(q "SELECT printf('%.6e', sum(value)) FROM samples s JOIN runs r ON r.id = s.run JOIN metrics m ON m.id = s.metric WHERE r.commit_sha = 'dddd' AND m.name = 'gpu__time_duration.sum'")" \
	"$(python3 -c '
import glob, struct, sys
t = 0.0
for f in sorted(glob.glob(sys.argv[1] + "-bin/*.bin")):
    b = open(f, "rb").read()
    t += sum(x * 1e9 for x in struct.unpack("<%df" % (len(b) // 4), b))
print("%.6e" % t)' "$BIN")" \
	"the GPU times are the sample file's float32 seconds, in ns"
is "$(q "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run JOIN metrics m ON m.id = s.metric WHERE r.commit_sha = 'dddd' AND m.name = 'sm__cycles_elapsed.avg.per_second'")" \
	"$(python3 -c 'import glob,os,sys; print(sum(os.path.getsize(f) // 4 for f in glob.glob(sys.argv[1] + "-freqs-bin/*.bin")))' "$BIN")" \
	"every SM clock sample stored"

# the pair moved elsewhere: found beside the JSON
mkdir "$T/moved"
cp -r "$BIN" "$BIN-bin" "$BIN-freqs-bin" "$T/moved/"
run "$KGATE" ingest --db "$DB" --commit eeee --format json "$T/moved/synthetic_jsonbin.json"
like "$out" "\"samples\": ?$1," "a moved pair still finds its sample files"

# --- a real --jsonbin output of an H100 (nvbench's axes example) ---
H1="$NV/h100/axes.json"
set -- $(count "$H1")
run "$KGATE" ingest --db "$DB" --commit h100 --format json "$H1"
is "$rc" 0 "a real nvbench --jsonbin output (an H100) ingests"
like "$out" "\"benchmarks\": ?$3, ?\"kernels\": ?$2, ?\"samples\": ?$1," \
	"its benchmarks, states and samples as counted by Python ($3, $2, $1)"
unlike "$err" "no per-sample files" "every state has its sample files"
is "$(q "SELECT source || ' ' || gpu_name || ' ' || gpu_chip FROM runs WHERE commit_sha = 'h100'")" \
	"nvbench NVIDIA H100 80GB HBM3 sm_90" "the run's source, GPU and compute capability"
is "$(q "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run JOIN metrics m ON m.id = s.metric WHERE r.commit_sha = 'h100' AND m.name = 'gpu__time_duration.sum'")" \
	"$(python3 -c '
import glob, os, sys
print(sum(os.path.getsize(f) // 4 for f in glob.glob(sys.argv[1] + "-bin/*.bin")))' "$H1")" \
	"one GPU time a sample of the sample files"
is "$(q "SELECT printf('%.4f', value) FROM samples s JOIN runs r ON r.id = s.run JOIN metrics m ON m.id = s.metric JOIN benchmarks b ON b.id = s.benchmark WHERE r.commit_sha = 'h100' AND b.name = 'simple' AND m.name = 'gpu__time_duration.sum' ORDER BY s.rowid LIMIT 1")" \
	"$(python3 -c 'import struct,sys; print("%.4f" % (struct.unpack("<f", open(sys.argv[1], "rb").read(4))[0] * 1e9))' "$NV/h100/axes.json-bin/0.bin")" \
	"the first sample of simple is the sample file's first float32, in ns"

# --- refusals: exit 2, nothing stored ---
n=$(runs)
run "$KGATE" ingest --db "$DB" --commit r1 "$NV/nvbench_scan_2021_mx150.json"
is "$rc" 2 "a pre-1.0 nvbench document exits 2"
like "$err" "nvbench JSON older than format 1.0" "and says so by name"
is "$(runs)" "$n" "nothing stored"

head -c 200000 "$REF" > "$T/cut.json"
run "$KGATE" ingest --db "$DB" --commit r2 "$T/cut.json"
is "$rc" 2 "a truncated nvbench document exits 2"
like "$err" "cut.json: truncated: the JSON document ends at byte 200000 " "with where"
is "$(runs)" "$n" "nothing stored"

mkdir "$T/short"
cp -r "$BIN" "$BIN-bin" "$BIN-freqs-bin" "$T/short/"
f=$(ls "$T/short/synthetic_jsonbin.json-bin/" | head -1)
head -c 40 "$T/short/synthetic_jsonbin.json-bin/$f" > "$T/x.bin" && mv "$T/x.bin" "$T/short/synthetic_jsonbin.json-bin/$f"
run "$KGATE" ingest --db "$DB" --commit r3 "$T/short/synthetic_jsonbin.json"
is "$rc" 2 "a sample file shorter than its summary says exits 2"
like "$err" "holds fewer than the [0-9]* samples its summary says" "and says so"
is "$(runs)" "$n" "nothing stored"

# a summary that claims more samples than its file holds: refused before
# memory for them is taken (a 256 MiB cap on the process's address space;
# not under a sanitizer or valgrind, whose own reservations exceed it)
mkdir "$T/big"
cp -r "$BIN" "$BIN-bin" "$BIN-freqs-bin" "$T/big/"
python3 -c '
import json, sys
p = sys.argv[1]; d = json.load(open(p))
s = d["benchmarks"][0]["states"][0]["summaries"]
[x for x in s if x["tag"] == "nv/json/bin:nv/cold/sample_times"][0]["data"][1]["value"] = "60000000"
json.dump(d, open(p, "w"))' "$T/big/synthetic_jsonbin.json"
cap="ulimit -v 262144;"
case "$KGATE" in *build-san*) cap= ;; esac
under_valgrind && cap=
run sh -c "$cap"' exec "$@"' sh "$KGATE" ingest --db "$DB" --commit r5 "$T/big/synthetic_jsonbin.json"
is "$rc" 2 "a summary claiming 60,000,000 samples of a small file exits 2"
like "$err" "holds fewer than the 60000000 samples its summary says" "and says so, without taking memory for them"
is "$(runs)" "$n" "nothing stored"

mkdir "$T/climb"
cp -r "$BIN-bin" "$BIN-freqs-bin" "$T/climb/"
sed 's#"synthetic_jsonbin.json-bin/0.bin"#"../../../../../../etc/passwd"#' "$BIN" > "$T/climb/synthetic_jsonbin.json"
run "$KGATE" ingest --db "$DB" --commit r4 "$T/climb/synthetic_jsonbin.json"
is "$rc" 0 "a sample file name with .. is not followed"
like "$err" "1 of [0-9]* states have no per-sample files" "the state falls back to its summaries, and says so"

done_testing
