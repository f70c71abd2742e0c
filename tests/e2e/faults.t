#!/bin/sh
# faults.t: kgate under faults and hostile input (docs/RELIABILITY.md).
#
# SIGKILL at random points (a 10-kill version of tests/faults/kill.sh),
# concurrent writers and a reader on one file, a full disk, a read-only
# database, a benchmark printing 2 GB, hostile names end to end, YAML
# bombs, and a records file streamed from a FIFO.  All records here are
# TEST DATA (tests/faults/gen-records.sh: a made-up "Synthetic GPU").
. "$(dirname "$0")/lib.sh"
GEN="$KGATE_SRC/tests/faults/gen-records.sh"
export TMPDIR="$T"
rss_of() { awk 'END { print $1 }' "$1"; }

# --- SIGKILL at random points: whole run or nothing, integrity ok ---
run env KGATE="$KGATE" KILL_RECORDS=20000 sh "$KGATE_SRC/tests/faults/kill.sh" 10
is "$rc" 0 "10 random SIGKILLs of ingest and of run: no partial run, integrity ok"
like "$out" "^ingest: 10 kills .*partial runs 0; integrity failures 0" "ingest kill figures"
like "$out" "^run: 10 kills .*partial runs 0; integrity failures 0" "run kill figures"
printf '%s\n' "$out" | grep kills | sed 's/^/# /'

# --- two ingests and a check at once, repeated ---
DB="$T/c.db"
sh "$GEN" 20000 > "$T/mid.jsonl"
"$KGATE" ingest --db "$DB" --records "$T/mid.jsonl" --commit base --branch main 2>/dev/null
locked=0 lost=0 i=0
while [ $i -lt 5 ]; do
	"$KGATE" ingest --db "$DB" --records "$T/mid.jsonl" --commit "a$i" 2>"$T/a.err" &
	p1=$!
	"$KGATE" ingest --db "$DB" --records "$T/mid.jsonl" --commit "b$i" 2>"$T/b.err" &
	p2=$!
	"$KGATE" check --db "$DB" --commit base --baseline base --no-store >/dev/null 2>"$T/c.err"
	crc=$?
	wait $p1; r1=$?
	wait $p2; r2=$?
	grep -qi "locked\|busy" "$T/a.err" "$T/b.err" "$T/c.err" && locked=$((locked + 1))
	[ $r1 = 0 ] && [ $r2 = 0 ] && [ $crc -le 1 ] || lost=$((lost + 1))
	i=$((i + 1))
done
is "$locked" 0 "concurrent ingests and check: no 'database is locked'"
is "$lost" 0 "concurrent ingests and check: every command succeeded"
is "$(sqlite3 "$DB" "SELECT count(*) FROM runs")" 11 "all 11 runs stored"
is "$(sqlite3 "$DB" "SELECT count(DISTINCT run) FROM samples GROUP BY NULL HAVING count(*) = 11 * 140000")" 1 \
	"every run whole (11 x 140000 samples)"

# --- a FIFO records file (regression: it was opened once per header read) ---
mkfifo "$T/r.fifo"
sh "$GEN" 100 > "$T/r.fifo" &
run "$KGATE" ingest --db "$T/fifo.db" --records "$T/r.fifo" --commit f
wait
is "$rc" 0 "a records file read from a FIFO is ingested"
is "$(sqlite3 "$T/fifo.db" "SELECT count(*) FROM samples")" 700 "all its samples stored"
run env KGATE="$KGATE" sh "$KGATE_SRC/tests/faults/bigrecords.sh" 200
is "$rc" 0 "200 MB streamed from a FIFO in bounded memory"
diag "$out"

# --- a full disk ---
sh "$GEN" 10 > "$T/small.jsonl"
sh "$GEN" 60000 > "$T/huge.jsonl"
mkdir "$T/mnt"
if mount -t tmpfs -o size=2m tmpfs "$T/mnt" 2>/dev/null; then
	"$KGATE" ingest --db "$T/mnt/k.db" --records "$T/small.jsonl" --commit early 2>/dev/null
	run "$KGATE" ingest --db "$T/mnt/k.db" --records "$T/huge.jsonl" --commit big
	is "$rc" 3 "full filesystem: exit 3"
	like "$err" "database or disk is full" "full filesystem: a clear error"
	like "$err" "nothing stored" "full filesystem: says nothing was stored"
	is "$(sqlite3 "$T/mnt/k.db" "PRAGMA integrity_check")" ok "full filesystem: integrity ok"
	is "$(sqlite3 "$T/mnt/k.db" "SELECT group_concat(commit_sha) FROM runs")" early "full filesystem: the earlier run is kept"
	# read-only: the same tmpfs remounted ro
	sqlite3 "$T/mnt/k.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
	"$KGATE" ingest --db "$T/mnt/k.db" --records "$T/small.jsonl" --commit late 2>/dev/null
	if mount -o remount,ro "$T/mnt" 2>/dev/null; then
		run "$KGATE" check --db "$T/mnt/k.db" --commit late --baseline early --no-store
		is "$rc" 0 "read-only database: check works"
		like "$out" "PASS|pass" "read-only database: check prints verdicts"
		run "$KGATE" report --db "$T/mnt/k.db" --html "$T/ro.html"
		is "$rc" 0 "read-only database: report works"
		run "$KGATE" stats --db "$T/mnt/k.db" --commit late --report kernel_sum
		is "$rc" 0 "read-only database: stats works"
		run "$KGATE" ingest --db "$T/mnt/k.db" --records "$T/small.jsonl" --commit x
		is "$rc" 3 "read-only database: ingest exits 3"
	else
		diag "skip: cannot remount read-only"
	fi
	umount "$T/mnt"
else
	diag "skip: cannot mount a tmpfs (not root?): full-disk and read-only tests skipped"
fi
"$KGATE" ingest --db "$T/f.db" --records "$T/small.jsonl" --commit early 2>/dev/null
sqlite3 "$T/f.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
run sh -c "ulimit -f 1024; trap '' XFSZ; exec '$KGATE' ingest --db '$T/f.db' --records '$T/huge.jsonl' --commit big"
is "$rc" 3 "ulimit -f: exit 3"
like "$err" "nothing stored" "ulimit -f: says nothing was stored"
is "$(sqlite3 "$T/f.db" "PRAGMA integrity_check")" ok "ulimit -f: integrity ok"
is "$(sqlite3 "$T/f.db" "SELECT group_concat(commit_sha) FROM runs")" early "ulimit -f: the earlier run is kept"

# --- a benchmark printing 2 GB on stdout ---
: > "$T/libkgate-collector.so"
export KGATE_COLLECTOR="$T/libkgate-collector.so" KGATE_CUPTI="$T/libkgate-collector.so"
cat > "$T/loud" <<EOB
#!/bin/sh
# TEST DOUBLE: prints 2 GB, then writes a synthetic records file
head -c 2G /dev/zero | tr '\0' 'x'
cp "$T/small.jsonl" "\$(printf '%s' "\$KGATE_RECORDS" | sed "s/%p/\$\$/g")"
EOB
chmod +x "$T/loud"
printf '%s\n' "version: 1" "benchmarks:" "  - name: loud" "    cmd: [\"$T/loud\"]" \
	"    repeat: 1" "    warmup: 0" > "$T/loud.yaml"
run /usr/bin/time -f '%M' -o "$T/loud.rss" "$KGATE" run -c "$T/loud.yaml" --db "$T/loud.db" --commit loud
is "$rc" 0 "a benchmark printing 2 GB: the run finishes and is stored"
rss=$(rss_of "$T/loud.rss")
ok "kgate's peak RSS stays under 64 MiB (${rss} KiB)" test "$rss" -lt 65536
diag "2 GB of benchmark stdout: kgate peak RSS ${rss} KiB"
