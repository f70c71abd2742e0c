#!/bin/sh
# bench_traces.sh: "kgate ingest" of an Nsight Systems SQLite export and of
# a Kineto trace (.json.gz), each against the sqlite3 shell's .import of the
# same rows (the samples kgate stored, as CSV) into an equivalent table, in
# one round, alternately, over 3 rounds.  Prints samples per second and the
# ratio of rates (min and median over the rounds), and the CPU time each
# took (user + system, GNU time; under load, CPU time tells more than the
# wall clock).  Goal: >= 500,000 samples/s for each importer.
# KGATE_BASE=PATH: a second kgate binary (another build, the code before a
# change) timed in the same rounds, alternately; its rate, CPU time and the
# ratio of rates kgate/base are printed too.
#
# The inputs are SYNTHETIC, made from the shape of the real fixtures: the
# export is tests/fixtures/nsys/nvfuser_h200_report1.sqlite (all of it) with
# its kernel launches, their runtime calls and the NVTX ranges around them
# repeated, shifted in time and correlation id, to BENCH_NSYS_KERNELS
# launches (the shape of a benchmark's export); the trace is
# tests/fixtures/kineto/step_based_trace_2543932.json.gz with all its events
# (CPU ops, runtime calls, kernels, annotations) repeated, shifted in time,
# to about BENCH_KINETO_KERNELS kernel events, gzip-compressed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${KGATE_SRC:=$(cd "$here/../.." && pwd)}"
: "${KGATE_BUILD:=$KGATE_SRC/build}"
: "${KGATE:=$KGATE_BUILD/kgate}"
NK=${BENCH_NSYS_KERNELS:-150000}
KK=${BENCH_KINETO_KERNELS:-100000}
ROUNDS=${BENCH_TRACES_ROUNDS:-3}
W=$(mktemp -d "${TMPDIR:-/tmp}/kgate-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
command -v python3 >/dev/null || { echo "bench_traces: python3 is needed to make the inputs; skipped"; exit 0; }

. "$here/anchor.sh"
# CPU seconds (user + system) of a command, into a file (0 without GNU time)
if [ -x /usr/bin/time ]; then
	cputime() { f=$1; shift; /usr/bin/time -f '%U %S' -o "$f.t" "$@" && awk '{ print $1 + $2 }' "$f.t" > "$f"; }
else
	cputime() { f=$1; shift; echo 0 > "$f"; "$@"; }
fi
TIME=cputime

# --- the synthetic export: the fixture's launches repeated ---
cp "$KGATE_SRC/tests/fixtures/nsys/nvfuser_h200_report1.sqlite" "$W/trace.sqlite"
chmod u+w "$W/trace.sqlite"
python3 - "$W/trace.sqlite" "$NK" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = int(sys.argv[2])
k0 = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
span = db.execute("SELECT max(end) - min(start) + 1 FROM (SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL SELECT start, coalesce(end, start) FROM NVTX_EVENTS)").fetchone()[0]
corr = db.execute("SELECT max(correlationId) + 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
reps = max(1, (n + k0 - 1) // k0)
# what the launches need: their runtime calls, the push/pop ranges around them
db.execute("CREATE TEMP TABLE rt AS SELECT r.* FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL)")
db.execute("CREATE TEMP TABLE nv AS SELECT DISTINCT n.* FROM NVTX_EVENTS n JOIN temp.rt r ON n.globalTid = r.globalTid AND n.start <= r.start AND n.end >= r.end")
for t, src in (("CUPTI_ACTIVITY_KIND_KERNEL", None), ("CUPTI_ACTIVITY_KIND_RUNTIME", "temp.rt"), ("NVTX_EVENTS", "temp.nv")):
    cols = [r[1] for r in db.execute("PRAGMA table_info(%s)" % t)]
    sel = ", ".join("%s + ?1 * %d" % (c, span) if c in ("start", "end") else
                    "%s + ?1 * %d" % (c, corr) if c == "correlationId" else c for c in cols)
    if src is None:
        db.execute("CREATE TEMP TABLE base AS SELECT * FROM %s" % t)
        src = "temp.base"
    for r in range(1, reps):
        db.execute("INSERT INTO %s (%s) SELECT %s FROM %s" % (t, ", ".join(cols), sel, src), (r,))
db.commit()
db.execute("VACUUM")
EOF

# --- the synthetic trace: the fixture's events repeated ---
python3 - "$KGATE_SRC/tests/fixtures/kineto/step_based_trace_2543932.json.gz" "$KK" "$W/trace.json.gz" "$W/events.jsonl" <<'EOF'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1], "rt"))
ev = d.pop("traceEvents")
n = int(sys.argv[2])
k0 = sum(1 for e in ev if e.get("cat") == "kernel")
ts = [e["ts"] for e in ev if "ts" in e]
span = max(ts) - min(ts) + 1000
reps = max(1, (n + k0 - 1) // k0)
# and, one a line, the events the importer parses (for the floor below)
read = open(sys.argv[4], "w")
with gzip.open(sys.argv[3], "wt", compresslevel=6) as f:
    f.write("{\n")
    for k, v in d.items():
        f.write("  %s: %s,\n" % (json.dumps(k), json.dumps(v)))
    f.write('  "traceEvents": [\n')
    first = True
    for r in range(reps):
        for e in ev:
            if "ts" in e:
                e = dict(e, ts=e["ts"] + r * span)
            elif r:
                continue
            f.write(("" if first else ",\n") + "  " + json.dumps(e))
            first = False
            if e.get("cat") in ("kernel", "gpu_user_annotation", "cuda_profiler_range"):
                read.write(json.dumps(e) + "\n")
    f.write("\n  ]\n}\n")
EOF

: > "$W/times.nsys"
: > "$W/times.kineto"
for _ in $(seq "$ROUNDS"); do
	for fmt in nsys kineto; do
		case $fmt in nsys) in=$W/trace.sqlite ;; kineto) in=$W/trace.json.gz ;; esac
		rm -f "$W"/k.db*
		t0=$(now)
		$TIME "$W/cpu.k" "$KGATE" ingest --db "$W/k.db" --commit bench --benchmark b "$in" 2>"$W/ingest.err" ||
			{ cat "$W/ingest.err" >&2; exit 1; }
		t1=$(now)
		tk=$(elapsed "$t0" "$t1")
		sqlite3 -csv "$W/k.db" "SELECT run, benchmark, nvtx, kernel, metric, repeat, ordinal, value FROM samples" > "$W/rows.csv"
		samples=$(wc -l < "$W/rows.csv")
		ts=$(anchor_import "$W/s.db" "$W/rows.csv" $TIME "$W/cpu.s")
		tb=0
		echo 0 > "$W/cpu.b"
		if [ -n "${KGATE_BASE:-}" ]; then
			rm -f "$W"/k.db*
			t0=$(now)
			$TIME "$W/cpu.b" "$KGATE_BASE" ingest --db "$W/k.db" --commit bench --benchmark b "$in" 2>"$W/ingest.err" ||
				{ cat "$W/ingest.err" >&2; exit 1; }
			t1=$(now)
			tb=$(elapsed "$t0" "$t1")
			[ "$(sqlite3 "$W/k.db" "SELECT count(*) FROM samples")" -eq "$samples" ] ||
				{ echo "bench_traces: $fmt (base) stored another number of samples" >&2; exit 1; }
		fi
		echo "$tk $ts $samples $(cat "$W/cpu.k") $(cat "$W/cpu.s") $tb $(cat "$W/cpu.b")" >> "$W/times.$fmt"
	done
done
for fmt in nsys kineto; do
	case $fmt in
	nsys) what="an nsys SQLite export (synthetic, $(du -k "$W/trace.sqlite" | cut -f1) KiB)" ;;
	kineto) what="a Kineto .json.gz trace (synthetic, $(du -k "$W/trace.json.gz" | cut -f1) KiB gzip, $(gzip -dc "$W/trace.json.gz" | wc -c | awk '{ printf "%d", $1 / 1048576 }') MiB JSON)" ;;
	esac
	awk -v what="$what" '
	{ a[NR] = $1; b[NR] = $2; q[NR] = $2 / $1; n = $3; ck += $4; cs += $5
	  c[NR] = $6; cb += $7; if ($6 > 0) r[NR] = $6 / $1 }
	END {
		for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) {
			if (c[j] < c[i]) { t = c[i]; c[i] = c[j]; c[j] = t }
			if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
			if (q[j] < q[i]) { t = q[i]; q[i] = q[j]; q[j] = t } }
		m = NR % 2 ? q[(NR + 1) / 2] : (q[NR / 2] + q[NR / 2 + 1]) / 2
		printf "ingest of %s, %d samples, %d rounds: kgate ingest best %.3f s (%.0f samples/s), sqlite3 .import of the same rows best %.3f s (%.0f samples/s); rate kgate/sqlite3: min %.2fx, median %.2fx; CPU per round: kgate %.2f s, sqlite3 %.2f s; goal >= 500000 samples/s: %s\n", what, n, NR, a[1], n / a[1], b[1], n / b[1], q[1], m, ck / NR, cs / NR, (n / a[1] >= 500000 ? "met" : "missed")
		if (c[1] > 0) {
			mb = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
			printf "  base (KGATE_BASE) best %.3f s (%.0f samples/s), CPU per round %.2f s; rate kgate/base: min %.2fx, median %.2fx\n", c[1], n / c[1], cb / NR, r[1], mb
		}
	}' "$W/times.$fmt"
done
# The floor under the Kineto importer's rate: inflating the trace once
# (gzip -dc; kgate inflates it twice, once for what the trace says of
# itself and once for the samples), and jansson's parse alone of the events
# kgate parses (kernels, annotations, counters), one at a time
# (bench_jparse.c -l).
n=$(awk 'END { print $3 }' "$W/times.kineto")
$TIME "$W/cpu.z" sh -c 'gzip -dc "$1" > /dev/null' sh "$W/trace.json.gz"
if cc -O2 -std=c11 -D_GNU_SOURCE -o "$W/bench_jparse" "$here/bench_jparse.c" -ljansson 2>"$W/cc.err"; then
	jp=$("$W/bench_jparse" -l "$W/events.jsonl")
else
	jp=0
fi
awk -v n="$n" -v z="$(cat "$W/cpu.z")" -v jp="$jp" 'BEGIN {
	printf "floor of the Kineto import: inflating the trace once (gzip -dc) %.2f s CPU (%.0f samples/s), twice %.0f samples/s; jansson alone on the %s events kgate parses, one at a time: %.2f s CPU (%.0f samples/s); both, one core: %.0f samples/s\n",
		z, (z > 0 ? n / z : 0), (z > 0 ? n / (2 * z) : 0), "kernel/annotation", jp, (jp > 0 ? n / jp : 0), ((2 * z + jp) > 0 ? n / (2 * z + jp) : 0) }'
