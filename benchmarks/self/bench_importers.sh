#!/bin/sh
# bench_importers.sh: "kgate ingest" of nvbench output with --jsonbin sample
# files (src/import/nvbench.c) and of Google Benchmark JSON
# (src/import/gbench.c), each against the sqlite3 shell's .import of the
# same rows as CSV into an equivalent table (as bench_ingest.sh does), in
# one round, alternately, over 3 rounds.  The inputs are SYNTHETIC, written
# here in each tool's layout: nvbench, 40 states of 25,000 GPU times and SM
# clocks each (2,000,000 samples, plus the summaries); Google Benchmark,
# 100,000 repetitions of 4 figures (400,000 samples).  Prints per importer
# its best time and rate in samples/s, the anchor's, and the ratio of rates
# (min and median over the rounds).  Goal: >= 500,000 samples/s each.
# KGATE_BASE=PATH: a second kgate binary (another build, the code before a
# change) timed in the same rounds, alternately; its rate and the ratio of
# rates kgate/base are printed too.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${KGATE_SRC:=$(cd "$here/../.." && pwd)}"
: "${KGATE_BUILD:=$KGATE_SRC/build}"
: "${KGATE:=$KGATE_BUILD/kgate}"
STATES=${BENCH_NVBENCH_STATES:-40}
PER=${BENCH_NVBENCH_SAMPLES:-25000}
REPS=${BENCH_GBENCH_REPS:-100000}
ROUNDS=${BENCH_IMPORTERS_ROUNDS:-3}
W=$(mktemp -d "${TMPDIR:-/tmp}/kgate-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

. "$here/anchor.sh"
# CPU seconds (user + system) and peak RSS (KiB) of a command, appended to a
# file (zeros without GNU time)
if [ -x /usr/bin/time ]; then
	cpurss() { f=$1; shift; /usr/bin/time -f '%U %S %M' -o "$f.t" "$@" && awk '{ print $1 + $2, $3 }' "$f.t" >> "$f"; }
else
	cpurss() { f=$1; shift; echo 0 0 >> "$f"; "$@"; }
fi

# The inputs, and the rows each stores as CSV (run, benchmark, nvtx, kernel,
# metric, repeat, ordinal, value), for the anchor.
python3 - "$W" "$STATES" "$PER" "$REPS" <<'EOF'
import json, os, random, struct, sys
w, states, per, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(1)
os.makedirs(w + "/nv.json-bin")
os.makedirs(w + "/nv.json-freqs-bin")
doc = {"meta": {"argv": ["./bench"], "version": {"json": {"major": 1}, "nvbench": {"string": "0.1.0"}}},
       "devices": [{"id": 0, "name": "NVIDIA H200", "sm_version": 900}],
       "benchmarks": [{"name": "copy", "axes": [], "states": []}]}
rows = open(w + "/nv.csv", "w")
def summ(tag, hint, v):
    return {"tag": tag, "hint": hint, "data": [{"name": "value", "type": "float64", "value": repr(v)}]}
for i in range(states):
    t = [1e-3 * (1 + rng.gauss(0, 0.01)) for _ in range(per)]
    f = [1.98e9 * (1 + rng.gauss(0, 0.001)) for _ in range(per)]
    open("%s/nv.json-bin/%d.bin" % (w, i), "wb").write(struct.pack("<%df" % per, *t))
    open("%s/nv.json-freqs-bin/%d.bin" % (w, i), "wb").write(struct.pack("<%df" % per, *f))
    files = [{"tag": tag, "hint": "file/sample_times", "data": [
                 {"name": "filename", "type": "string", "value": "nv.json-%s/%d.bin" % (d, i)},
                 {"name": "size", "type": "int64", "value": str(per)}]}
             for tag, d in (("nv/json/bin:nv/cold/sample_times", "bin"),
                            ("nv/json/freqs-bin:nv/cold/sample_freqs", "freqs-bin"))]
    doc["benchmarks"][0]["states"].append({"name": "Device=0 N=%d" % i, "device": 0, "summaries": files + [
        summ("nv/cold/time/gpu/mean", "duration", sum(t) / per),
        summ("nv/cold/bw/global/bytes_per_second", "byte_rate", 1e12)]})
    for m, vals in ((1, t), (2, f)):
        for k, v in enumerate(vals):
            rows.write("1,1,1,%d,%d,0,%d,%r\n" % (i + 1, m, k, v))
    rows.write("1,1,1,%d,3,0,0,%r\n1,1,1,%d,4,0,0,1e12\n" % (i + 1, sum(t) / per, i + 1))
json.dump(doc, open(w + "/nv.json", "w"))
rows.close()
runs, rows = [], open(w + "/gb.csv", "w")
for r in range(reps):
    name = "BM_copy/%d" % (r // 10)
    rt, ct = 1.0 + rng.random(), 0.9 + rng.random()
    runs.append({"name": name, "run_name": name, "run_type": "iteration", "repetitions": 10,
                 "repetition_index": r % 10, "threads": 1, "iterations": 1000, "real_time": rt,
                 "cpu_time": ct, "time_unit": "us", "bytes_per_second": 4e9})
    for m, v in ((1, rt * 1e3), (2, ct * 1e3), (3, 1000), (4, 4e9)):
        rows.write("1,1,1,%d,%d,0,%d,%r\n" % (r // 10 + 1, m, r % 10, v))
rows.close()
json.dump({"context": {"executable": "./bench_copy", "num_cpus": 1, "mhz_per_cpu": 1,
                       "library_build_type": "release"}, "benchmarks": runs},
          open(w + "/gb.json", "w"))
EOF

# the floor: jansson's parse alone of the same JSON file (bench_jparse.c)
cc -O2 -std=c11 -D_GNU_SOURCE -o "$W/bench_jparse" "$here/bench_jparse.c" -ljansson 2>"$W/cc.err" ||
	echo "bench_importers: bench_jparse not built: $(head -1 "$W/cc.err")"

for imp in nvbench gbench; do
	case $imp in nvbench) in=$W/nv.json csv=$W/nv.csv;; gbench) in=$W/gb.json csv=$W/gb.csv;; esac
	samples=$(wc -l < "$csv")
	: > "$W/times"
	: > "$W/cpu.k"
	: > "$W/cpu.b"
	for r in $(seq "$ROUNDS"); do
		rm -f "$W/k.db" "$W/k.db-wal" "$W/k.db-shm"
		t0=$(now)
		cpurss "$W/cpu.k" "$KGATE" ingest --db "$W/k.db" --commit bench "$in" 2>"$W/ingest.err"
		t1=$(now)
		tk=$(elapsed "$t0" "$t1")
		stored=$(sqlite3 "$W/k.db" "SELECT count(*) FROM samples")
		[ "$stored" -eq "$samples" ] || { echo "bench_importers: $imp stored $stored samples, expected $samples" >&2; exit 1; }
		ts=$(anchor_import "$W/s.db" "$csv")
		tb=0
		if [ -n "${KGATE_BASE:-}" ]; then
			rm -f "$W/k.db" "$W/k.db-wal" "$W/k.db-shm"
			t0=$(now)
			cpurss "$W/cpu.b" "$KGATE_BASE" ingest --db "$W/k.db" --commit bench "$in" 2>"$W/ingest.err"
			t1=$(now)
			tb=$(elapsed "$t0" "$t1")
			stored=$(sqlite3 "$W/k.db" "SELECT count(*) FROM samples")
			[ "$stored" -eq "$samples" ] || { echo "bench_importers: $imp (base) stored $stored samples, expected $samples" >&2; exit 1; }
		fi
		echo "$tk $ts $tb" >> "$W/times"
	done
	awk -v n="$samples" -v imp="$imp" '
	{ a[NR] = $1; b[NR] = $2; q[NR] = $2 / $1; c[NR] = $3; if ($3 > 0) r[NR] = $3 / $1 }
	END {
		for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) {
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
			if (c[j] < c[i]) { t = c[i]; c[i] = c[j]; c[j] = t }
			if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
			if (q[j] < q[i]) { t = q[i]; q[i] = q[j]; q[j] = t } }
		m = NR % 2 ? q[(NR + 1) / 2] : (q[NR / 2] + q[NR / 2 + 1]) / 2
		printf "%s import of %d samples, %d rounds: kgate ingest best %.3f s (%.0f samples/s), sqlite3 .import best %.3f s (%.0f samples/s); rate kgate/sqlite3: min %.2fx, median %.2fx\n", imp, n, NR, a[1], n / a[1], b[1], n / b[1], q[1], m
		if (c[1] > 0) {
			mb = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
			printf "%s: base (KGATE_BASE) best %.3f s (%.0f samples/s); rate kgate/base: min %.2fx, median %.2fx\n", imp, c[1], n / c[1], r[1], mb
		}
		printf "goal >= 500000 samples/s: %s\n", (n / a[1] >= 500000 ? "met" : "missed")
	}' "$W/times"
	for side in k b; do
		[ -s "$W/cpu.$side" ] || continue
		awk -v imp="$imp" -v who="$([ $side = k ] && echo kgate || echo base)" -v n="$samples" '
		{ c = $1; if (NR == 1 || c < m) m = c; if ($2 > r) r = $2 }
		END { printf "%s: %s CPU (user + system) best %.2f s (%.0f samples per CPU second), peak RSS %d KiB\n", imp, who, m, n / m, r }' "$W/cpu.$side"
	done
	if [ -x "$W/bench_jparse" ]; then
		jp=$("$W/bench_jparse" "$in")
		awk -v imp="$imp" -v n="$samples" -v jp="$jp" -v sz="$(wc -c < "$in")" 'BEGIN {
			printf "%s: jansson json_loadb of the same %d-byte JSON file alone: best %.3f s CPU (%.0f samples per CPU second)\n", imp, sz, jp, (jp > 0 ? n / jp : 0) }'
	fi
done
