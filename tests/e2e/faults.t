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
# and a head: the check below needs a baseline run besides its head's own
# (a --baseline with no such run is an error)
"$KGATE" ingest --db "$DB" --records "$T/mid.jsonl" --commit base --branch main 2>/dev/null
"$KGATE" ingest --db "$DB" --records "$T/mid.jsonl" --commit head --branch pr 2>/dev/null
locked=0 lost=0 i=0
# A writer waits up to the busy timeout (10 s) for the other; under valgrind
# one ingest takes longer than that, so the wait is made long enough there.
under_valgrind && export KGATE_BUSY_TIMEOUT_MS=600000
while [ $i -lt 5 ]; do
	"$KGATE" ingest --db "$DB" --records "$T/mid.jsonl" --commit "a$i" 2>"$T/a.err" &
	p1=$!
	"$KGATE" ingest --db "$DB" --records "$T/mid.jsonl" --commit "b$i" 2>"$T/b.err" &
	p2=$!
	"$KGATE" check --db "$DB" --commit head --baseline base --no-store >/dev/null 2>"$T/c.err"
	crc=$?
	wait $p1; r1=$?
	wait $p2; r2=$?
	grep -qi "locked\|busy" "$T/a.err" "$T/b.err" "$T/c.err" && locked=$((locked + 1))
	[ $r1 = 0 ] && [ $r2 = 0 ] && [ $crc -le 1 ] || lost=$((lost + 1))
	i=$((i + 1))
done
is "$locked" 0 "concurrent ingests and check: no 'database is locked'"
is "$lost" 0 "concurrent ingests and check: every command succeeded"
is "$(sqlite3 "$DB" "SELECT count(*) FROM runs")" 12 "all 12 runs stored"
is "$(sqlite3 "$DB" "SELECT count(*) FROM (SELECT run FROM samples GROUP BY run HAVING count(*) = 140000)")" 12 \
	"every run whole (140000 samples each)"
unset KGATE_BUSY_TIMEOUT_MS

# --- a FIFO records file (regression: it was opened once per header read) ---
mkfifo "$T/r.fifo"
sh "$GEN" 100 > "$T/r.fifo" &
run "$KGATE" ingest --db "$T/fifo.db" --records "$T/r.fifo" --commit f
wait
is "$rc" 0 "a records file read from a FIFO is ingested"
is "$(sqlite3 "$T/fifo.db" "SELECT count(*) FROM samples")" 700 "all its samples stored"
# AddressSanitizer's shadow memory and quarantine add a few hundred MiB.
maxrss=262144
# So do valgrind's shadow memory and its own heap.
case "$KGATE" in *build-san*) maxrss=1048576 ;; esac
under_valgrind && maxrss=1048576
run env KGATE="$KGATE" BIG_MAX_RSS_KB=$maxrss sh "$KGATE_SRC/tests/faults/bigrecords.sh" 200
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
# (under valgrind, /usr/bin/time measures valgrind's own memory too)
if under_valgrind; then skip "kgate's peak RSS stays under 64 MiB: valgrind's RSS is not kgate's"
else ok "kgate's peak RSS stays under 64 MiB (${rss} KiB)" test "$rss" -lt 65536; fi
diag "2 GB of benchmark stdout: kgate peak RSS ${rss} KiB"

# --- hostile names: quotes, SQL, HTML, script, control characters, 100 kB ---
EVIL_K="x'); DROP TABLE runs; --\"<img src=x onerror=document.title='pwned'><script>document.title='pwned'</script>"
EVIL_B="b'); DROP TABLE samples; --<img src=x onerror=document.title='pwned'>"
python3 - "$T" "$EVIL_K" "$EVIL_B" <<'EOP'
import json, sys
t, k, b = sys.argv[1:4]
names = [k, k + "\x01\x1b[31m\t", "A" * 100000]
for side, dur in (("base", 1000), ("head", 1000)):
    with open(f"{t}/evil-{side}.jsonl", "w") as f:
        f.write(json.dumps({"type": "header", "format": 1, "collector": "0.1.0", "pid": 1,
                            "pass": 0, "argv": [b], "time": 1764720000,
                            "devices": [{"id": 0, "name": "Synthetic GPU", "driver": 99999}]}) + "\n")
        o = 0
        for n in names:
            for i in range(5):
                f.write(json.dumps({"type": "kernel", "ordinal": o, "name": n, "nvtx": n[:200],
                                    "start": 0, "end": dur + i}) + "\n")
                o += 1
        f.write(json.dumps({"type": "footer", "kernels": o}) + "\n")
EOP
HDB="$T/evil.db"
run "$KGATE" ingest --db "$HDB" --records "$T/evil-base.jsonl" --commit evilbase --branch main
is "$rc" 0 "hostile names: ingest stores them"
run "$KGATE" ingest --db "$HDB" --records "$T/evil-head.jsonl" --commit evilhead
is "$(sqlite3 "$HDB" "SELECT count(*) FROM runs")" 2 "hostile names: no table dropped, both runs there"
is "$(sqlite3 "$HDB" "SELECT count(*) FROM kernels WHERE mangled = '$(printf '%s' "$EVIL_K" | sed "s/'/''/g")'")" 1 \
	"hostile names: the kernel name stored byte for byte"
is "$(sqlite3 "$HDB" "SELECT max(length(mangled)) FROM kernels")" 100000 "a 100 kB name stored whole"
for f in text markdown json junit github; do
	run "$KGATE" check --db "$HDB" --commit evilhead --baseline evilbase --no-store --format "$f"
	ok "check --format $f with hostile names exits 0 or 1 (rc $rc)" test "$rc" -le 1
	unlike "$out" "$(printf '\033')" "check --format $f: no raw escape character printed"
done
run "$KGATE" check --db "$HDB" --commit evilhead --baseline evilbase --no-store --format json
ok "check --format json with hostile names is valid JSON" python3 -m json.tool "$T/.out"
run "$KGATE" check --db "$HDB" --commit evilhead --baseline evilbase --no-store --format junit
ok "check --format junit with hostile names is well-formed XML" python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$T/.out"
run "$KGATE" stats --db "$HDB" --commit evilhead --report kernel_sum
is "$rc" 0 "stats with hostile names"
unlike "$out" "$(printf '\033')" "stats: no raw escape character printed"
run "$KGATE" report --db "$HDB" --html "$T/evil.html"
is "$rc" 0 "report --html with hostile names"
unlike "$(cat "$T/evil.html")" "<img src=x|<script>document" "the HTML holds no injected element"
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROME" ]; then
	dom=$(timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --dump-dom "file://$T/evil.html" 2>/dev/null)
	like "$dom" "<title>" "chromium dumped the report's DOM"
	unlike "$(printf '%s' "$dom" | grep -o '<title>[^<]*</title>')" "pwned" "no script in a name ran (title not pwned)"
	unlike "$dom" "<img src=\"x\"" "no injected img element in the DOM"
else
	diag "skip: no chromium"
fi
printf 'x\377\376y' > "$T/badname"
run "$KGATE" ingest --db "$HDB" --records "$T/evil-base.jsonl" --commit bad8 --benchmark "$(cat "$T/badname")"
ok "invalid UTF-8 in --benchmark: stored or refused cleanly (rc $rc)" test "$rc" -le 2
is "$(sqlite3 "$HDB" "PRAGMA integrity_check")" ok "hostile names: integrity ok"
printf '{"type":"header","format":1,"argv":["b"],"devices":[{"name":"Synthetic GPU"}]}\n{"type":"kernel","ordinal":0,"name":"k\377","start":0,"end":1}\n{"type":"footer"}\n' > "$T/bad8.jsonl"
run "$KGATE" ingest --db "$HDB" --records "$T/bad8.jsonl" --commit bad8b
is "$rc" 2 "invalid UTF-8 inside a records file: exit 2"
like "$err" "bad8.jsonl:2" "names the line"

# --- YAML bombs through kgate check -t: refused in bounded memory ---
{
	echo "a: &a [x, x, x, x, x, x, x, x, x, x]"
	c=a
	for n in b c d e f g h i j; do echo "$n: &$n [*$c, *$c, *$c, *$c, *$c, *$c, *$c, *$c, *$c, *$c]"; c=$n; done
} > "$T/bomb.yaml"
run /usr/bin/time -f '%M' -o "$T/bomb.rss" "$KGATE" check --db "$HDB" --commit evilhead -t "$T/bomb.yaml"
is "$rc" 2 "a YAML alias bomb is refused (exit 2)"
like "$err" "alias" "it says aliases are not supported"
rss=$(rss_of "$T/bomb.rss")
if under_valgrind; then skip "alias bomb: peak RSS under 32 MiB: valgrind's RSS is not kgate's"
else ok "alias bomb: peak RSS under 32 MiB (${rss} KiB)" test "$rss" -lt 32768; fi
python3 -c 'print("a: " + "[" * 100000 + "]" * 100000)' > "$T/deep.yaml"
run /usr/bin/time -f '%M' -o "$T/deep.rss" "$KGATE" check --db "$HDB" --commit evilhead -t "$T/deep.yaml"
is "$rc" 2 "100000-deep nesting is refused (exit 2)"
like "$err" "nesting deeper" "it says the nesting is too deep"
rss=$(rss_of "$T/deep.rss")
if under_valgrind; then skip "deep nesting: peak RSS under 32 MiB: valgrind's RSS is not kgate's"
else ok "deep nesting: peak RSS under 32 MiB (${rss} KiB)" test "$rss" -lt 32768; fi
done_testing
