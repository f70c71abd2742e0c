#!/bin/sh
# limits.t: input and store limits that must hold whatever a file holds
# (docs/RELIABILITY.md): line limits bound memory, ids and schema versions
# read from a database never index an array, a database kgate cannot read
# whole is refused, a FIFO never blocks, concurrent writers all get through,
# and input errors have the documented exit status.  All records here are
# TEST DATA (tests/faults/gen-records.sh: a made-up "Synthetic GPU").
. "$(dirname "$0")/lib.sh"
GEN="$KGATE_SRC/tests/faults/gen-records.sh"
export TMPDIR="$T"
rss_of() { awk 'END { print $1 }' "$1"; }
san=0
case "$KGATE" in *build-san*) san=1 ;; esac
# peak RSS bound: the limit (16 MiB a records line, 64 MiB an ncu CSV record)
# plus kgate's own; the sanitizers' shadow memory adds a few hundred MiB
rss_ok() { # DESC FILE LIMIT_KIB
	if under_valgrind || [ $san = 1 ]; then skip "$1: the RSS measured is not kgate's alone"
	else r=$(rss_of "$2"); ok "$1 (${r} KiB)" test "$r" -lt "$3"; fi
}

# --- line limits: reading stops at the limit ------------------------------
head -c 200M /dev/zero > "$T/zero"
run /usr/bin/time -f '%M' -o "$T/rec.rss" "$KGATE" ingest --db "$T/l.db" --records "$T/zero" --commit z
is "$rc" 2 "a 200 MB records line is refused"
like "$err" "zero:1: line is longer than 16 MiB" "at its first line"
rss_ok "a 200 MB records line: peak RSS under 48 MiB" "$T/rec.rss" 49152
run /usr/bin/time -f '%M' -o "$T/ncu.rss" "$KGATE" ingest --db "$T/l.db" --ncu-csv "$T/zero" --commit z
is "$rc" 2 "a 200 MB ncu CSV line is refused"
like "$err" "record over 64 MiB" "as a record over the limit"
rss_ok "a 200 MB ncu CSV line: peak RSS under 96 MiB" "$T/ncu.rss" 98304
{ printf '"ID","Kernel Name",'; head -c 150M /dev/zero | tr '\0' ','; } > "$T/commas.csv"
run /usr/bin/time -f '%M' -o "$T/commas.rss" "$KGATE" ingest --db "$T/l.db" --ncu-csv "$T/commas.csv" --commit z
is "$rc" 2 "an ncu CSV record of 150 million empty fields is refused"
rss_ok "150 million empty fields: peak RSS under 96 MiB" "$T/commas.rss" 98304
rm -f "$T/zero" "$T/commas.csv"
# JSON documents are streamed, one element in memory at a time (SYNTHETIC
# documents in each tool's layout, each element padded with a key the
# importer does not read): 60 MB of Google Benchmark runs, 50 MB of nvbench
# benchmarks; a whole-document parse takes several times the file
python3 - "$T" <<'EOF'
import json, sys
pad = "x" * 1200
with open(sys.argv[1] + "/big_gb.json", "w") as f:
    f.write('{"context": {"executable": "./b", "num_cpus": 1, "mhz_per_cpu": 1, "library_build_type": "release"},\n"benchmarks": [\n')
    f.write(",\n".join(json.dumps({"name": "BM_%d" % (i // 10), "run_name": "BM_%d" % (i // 10), "run_type": "iteration",
                                   "iterations": 10, "real_time": 1.5, "cpu_time": 1.0, "time_unit": "us", "label": pad})
                       for i in range(50000)))
    f.write("\n]}\n")
with open(sys.argv[1] + "/big_nv.json", "w") as f:
    f.write('{"meta": {"argv": ["./b"], "version": {"json": {"major": 1}, "nvbench": {"string": "0.1.0"}}},\n')
    f.write('"devices": [{"id": 0, "name": "Synthetic GPU", "sm_version": 900}],\n"benchmarks": [\n')
    f.write(",\n".join(json.dumps({"name": "b%d" % i, "axes": [], "states": [
                {"name": "Device=0 N=%d" % k, "device": 0, "description": pad, "summaries": [
                    {"tag": "nv/cold/time/gpu/mean", "hint": "duration",
                     "data": [{"name": "value", "type": "float64", "value": "1e-3"}]}]} for k in range(10)]})
                       for i in range(4000)))
    f.write("\n]}\n")
EOF
run /usr/bin/time -f '%M' -o "$T/gb.rss" "$KGATE" ingest --db "$T/j.db" --commit gb "$T/big_gb.json"
is "$rc" 0 "60 MB of Google Benchmark JSON ingests"
like "$err" "50000 launches, 150000 samples" "every run stored"
rss_ok "60 MB of Google Benchmark JSON: peak RSS under 48 MiB" "$T/gb.rss" 49152
run /usr/bin/time -f '%M' -o "$T/nv.rss" "$KGATE" ingest --db "$T/j.db" --commit nv "$T/big_nv.json"
is "$rc" 0 "50 MB of nvbench JSON ingests"
like "$err" "40000 launches of 10 kernels, 80000 samples" "every state stored"
rss_ok "50 MB of nvbench JSON: peak RSS under 48 MiB" "$T/nv.rss" 49152
rm -f "$T/big_gb.json" "$T/big_nv.json" "$T"/j.db*

# /dev/zero itself: never ends, so only a reader that stops can finish
run timeout 60 "$KGATE" ingest --db "$T/l.db" --records /dev/zero --commit z
is "$rc" 2 "--records /dev/zero ends with an input error"
run timeout 60 "$KGATE" ingest --db "$T/l.db" --ncu-csv /dev/zero --commit z
is "$rc" 2 "--ncu-csv /dev/zero ends with an input error"
ok "nothing was stored" test "$(sqlite3 "$T/l.db" "SELECT count(*) FROM runs" 2>/dev/null || echo 0)" = 0

# --- ids and schema versions read from the database ------------------------
sh "$GEN" 50 > "$T/r.jsonl"
DB="$T/ids.db"
"$KGATE" ingest --db "$DB" --records "$T/r.jsonl" --commit c1 --branch main 2>/dev/null
"$KGATE" ingest --db "$DB" --records "$T/r.jsonl" --commit c2 --branch main 2>/dev/null
cp "$DB" "$T/clean.db"
sqlite3 "$DB" "UPDATE samples SET run = -7 WHERE run = 2; UPDATE runs SET id = -7 WHERE id = 2;
	UPDATE samples SET kernel = -3 WHERE kernel = 1; UPDATE kernels SET id = -3 WHERE id = 1;"
run "$KGATE" report --db "$DB" --html "$T/neg.html"
is "$rc" 0 "report of runs and kernels with negative ids"
ok "the run with a negative id is charted (its commit is in the report)" grep -q c2 "$T/neg.html"
ok "the kernel with a negative id is named" grep -q saxpy "$T/neg.html"
sqlite3 "$DB" "UPDATE samples SET run = 1099511627776 WHERE run = -7;
	UPDATE runs SET id = 1099511627776 WHERE id = -7;"
run /usr/bin/time -f '%M' -o "$T/huge.rss" "$KGATE" report --db "$DB" --html "$T/huge.html"
is "$rc" 0 "report of a run with id 2^40"
ok "that run is charted" grep -q c2 "$T/huge.html"
rss_ok "report of a run with id 2^40: peak RSS under 64 MiB" "$T/huge.rss" 65536

cp "$DB" "$T/neg.db"
sqlite3 "$T/neg.db" "PRAGMA user_version = -3"
sum0=$(md5sum < "$T/neg.db")
for cmd in "ingest --records $T/r.jsonl --commit c3" "check --commit c1 --baseline c1 --no-store"; do
	run "$KGATE" $cmd --db "$T/neg.db"
	is "$rc" 3 "schema version -3: '${cmd%% *}' refuses the database"
	like "$err" "schema version -3 is not one kgate writes" "and says why"
done
is "$(md5sum < "$T/neg.db")" "$sum0" "and leaves it untouched"

# --- a WAL database on read-only media without its -shm file ---------------
mkdir -p "$T/mnt"
if mount -t tmpfs -o size=8m tmpfs "$T/mnt" 2>/dev/null; then
	cp "$T/clean.db" "$T/wal.db"
	# a committed change still in the -wal file (no checkpoint), copied with
	# the database but without the -shm file, as a copy of a live database is
	python3 - "$T/wal.db" "$T/mnt/wal.db" <<'EOF'
import os, shutil, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("UPDATE runs SET commit_sha = 'inwal' WHERE commit_sha = 'c1'")
c.commit()
shutil.copy(sys.argv[1], sys.argv[2])
shutil.copy(sys.argv[1] + "-wal", sys.argv[2] + "-wal")
os._exit(0)
EOF
	cp "$T/clean.db" "$T/mnt/plain.db"
	if mount -o remount,ro "$T/mnt" 2>/dev/null; then
		run "$KGATE" check --db "$T/mnt/wal.db" --commit inwal --baseline inwal --no-store
		is "$rc" 3 "read-only media, a -wal without its -shm: refused"
		like "$err" "write-ahead log .*wal.db-wal' holds changes" "and says why"
		run "$KGATE" report --db "$T/mnt/wal.db" --html "$T/ro.html"
		is "$rc" 3 "report refuses it too (not a report without the committed run)"
		run "$KGATE" report --db "$T/mnt/plain.db" --html "$T/ro.html"
		is "$rc" 0 "a database without a -wal on read-only media is still read"
	else
		diag "skip: cannot remount read-only"
		for i in 1 2 3 4; do skip "read-only media: cannot remount read-only"; done
	fi
	umount "$T/mnt"
else
	for i in 1 2 3 4; do skip "read-only media: cannot mount a tmpfs (not root?)"; done
fi

# --- FIFOs never block ------------------------------------------------------
mkfifo "$T/db.fifo" "$T/th.fifo"
run timeout 20 "$KGATE" check --db "$T/db.fifo" --commit c1 --baseline c1 --no-store
is "$rc" 3 "a FIFO as the database is refused at once"
like "$err" "db.fifo': not a regular file" "and says why"
run timeout 20 "$KGATE" ingest --db "$T/db.fifo" --records "$T/r.jsonl" --commit f
is "$rc" 3 "ingest into a FIFO is refused at once"
run timeout 20 "$KGATE" check --db "$T/clean.db" --commit c1 --baseline c1 --no-store -t "$T/th.fifo"
is "$rc" 2 "a FIFO as -t is refused at once"
like "$err" "th.fifo': not a regular file" "and says why"

# --- eight concurrent writers on a loaded machine ---------------------------
# Each ingest holds the write lock for its whole transaction; the others
# wait for it (the busy timeout) and try again while the queue moves.  The
# busy timeout is made short (one ingest holds the lock for a fraction of
# it) so that, without the retries, the last of the eight would give up;
# two CPU-bound processes load the machine.
sh "$GEN" 5000 > "$T/w.jsonl"
WDB="$T/w.db"
"$KGATE" ingest --db "$WDB" --records "$T/w.jsonl" --commit w0 2>/dev/null
busy=2000; [ $san = 1 ] && busy=6000; under_valgrind && busy=20000
sh -c 'while :; do :; done' & burn1=$!
sh -c 'while :; do :; done' & burn2=$!
pids= i=1
while [ $i -le 8 ]; do
	KGATE_BUSY_TIMEOUT_MS=$busy "$KGATE" ingest --db "$WDB" --records "$T/w.jsonl" --commit "w$i" \
		2>"$T/w$i.err" & pids="$pids $!"
	i=$((i + 1))
done
failed=0
for p in $pids; do wait "$p" || failed=$((failed + 1)); done
kill "$burn1" "$burn2"; wait "$burn1" "$burn2" 2>/dev/null
is "$failed" 0 "8 concurrent ingests (busy timeout ${busy} ms, loaded machine): all succeed"
is "$(cat "$T"/w?.err | grep -c 'locked')" 0 "none says 'database is locked'"
is "$(sqlite3 "$WDB" "SELECT count(*) FROM runs")" 9 "all 9 runs stored"
is "$(sqlite3 "$WDB" "SELECT count(*) FROM (SELECT run FROM samples GROUP BY run HAVING count(*) = 35000)")" 9 \
	"every run whole"

# --- application-replay passes are joined to the right repeat ---------------
# two repeats (ppid 100 and 200) of a 2-pass replay; pass 1 carries one
# metric whose value tells its repeat (1100 for the first, 2200 the second)
mkapp() { # OUT PASS PPID VALUE
	python3 - "$T/r.jsonl" "$@" <<'EOF'
import json, sys
src, out, p, ppid, v = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
lines = [json.loads(l) for l in open(src)]
h = lines[0]
h.update({"pass": p, "passes": 2, "replay": "application", "ppid": ppid, "mode": "metrics"})
o = [h]
for r in lines[1:-1]:
    if p == 1:
        r = {k: r[k] for k in ("type", "ordinal", "name", "device", "context", "stream", "corr")}
        r["metrics"] = {"app__value.sum": v}
    o.append(r)
o.append(lines[-1])
open(out, "w").write("".join(json.dumps(x) + "\n" for x in o))
EOF
}
mkapp "$T/a1p0.jsonl" 0 100 0; mkapp "$T/a1p1.jsonl" 1 100 1100
mkapp "$T/a2p0.jsonl" 0 200 0; mkapp "$T/a2p1.jsonl" 1 200 2200
vals() { sqlite3 "$T/app.db" "SELECT group_concat(r || ':' || v, ' ') FROM (SELECT DISTINCT s.repeat AS r,
	CAST(s.value AS INTEGER) AS v FROM samples s JOIN metrics m ON m.id = s.metric JOIN runs u ON u.id = s.run
	WHERE m.name = 'app__value.sum' AND u.commit_sha = '$1' ORDER BY 1, 2)"; }
# the order a shell glob gives (by pass, then by pid): both pass 0 first
run "$KGATE" ingest --db "$T/app.db" --commit glob --benchmark b \
	--records "$T/a1p0.jsonl" --records "$T/a2p0.jsonl" --records "$T/a1p1.jsonl" --records "$T/a2p1.jsonl"
is "$rc" 0 "application-replay files by pass, then by repeat: ingested"
is "$(vals glob)" "0:1100 1:2200" "each pass 1 joined its own repeat (by ppid)"
# one ppid for every file: only pass order tells, and this order cannot
mkapp "$T/b2p0.jsonl" 0 100 0; mkapp "$T/b2p1.jsonl" 1 100 2200
run "$KGATE" ingest --db "$T/app.db" --commit same --benchmark b \
	--records "$T/a1p0.jsonl" --records "$T/b2p0.jsonl" --records "$T/a1p1.jsonl" --records "$T/b2p1.jsonl"
is "$rc" 2 "one ppid and passes out of order: refused"
like "$err" "b2p0.jsonl: pass 0 of benchmark 'b' comes where the next pass of the repeat before is due" \
	"naming the file out of place"
run "$KGATE" ingest --db "$T/app.db" --commit ordered --benchmark b \
	--records "$T/a1p0.jsonl" --records "$T/a1p1.jsonl" --records "$T/b2p0.jsonl" --records "$T/b2p1.jsonl"
is "$rc" 0 "one ppid, in pass order: ingested"
is "$(vals ordered)" "0:1100 1:2200" "each pass 1 joined the pass 0 before it"
run "$KGATE" ingest --db "$T/app.db" --commit short --benchmark b --records "$T/a1p0.jsonl"
is "$rc" 2 "a repeat missing a pass: refused"

# --- exit statuses: input errors are 2 and name the field -------------------
sed '6s/(256, 1, 1)/(nan, 1, 1)/' "$SHARED_FIX/ncu_saxpy_strided_details.csv" > "$T/nan.csv"
run "$KGATE" ingest --db "$T/nan.db" --ncu-csv "$T/nan.csv" --commit n
is "$rc" 2 "an ncu CSV with a NaN block size is an input error"
like "$err" "nan.csv:6: Block Size '\(nan, 1, 1\)' is not three whole numbers" "naming the field and line"
sed '6s/(262144, 1, 1)/(1, -1, 1)/' "$SHARED_FIX/ncu_saxpy_strided_details.csv" > "$T/neg.csv"
run "$KGATE" ingest --db "$T/nan.db" --ncu-csv "$T/neg.csv" --commit n
is "$rc" 2 "a negative grid size too"
like "$err" "Grid Size '\(1, -1, 1\)'" "naming the field"

done_testing
