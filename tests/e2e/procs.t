#!/bin/sh
# procs.t: benchmarks that escape or resist kgate's process control, and
# benchmark output kgate must not block on (docs/RELIABILITY.md).
#
# The benchmarks are TEST DOUBLES of a CUDA program under the collector:
# shell scripts writing synthetic records (a made-up "Synthetic GPU") where
# the collector would.  What is tested: processes moved out of the
# benchmark's process group (setsid; setpgid and a double fork) are ended
# with a warning,
# also after a timeout; a process kgate may not signal (a setuid-root
# program, with kgate run by an unprivileged user) ends the run with
# "could not be killed", exit 3, within its timeout and grace; a FIFO or a
# broken file at a records path is the benchmark's failure, exit 3.
. "$(dirname "$0")/lib.sh"
: > "$T/libkgate-collector.so"
: > "$T/libcupti.so"
export KGATE_COLLECTOR="$T/libkgate-collector.so" KGATE_CUPTI="$T/libcupti.so"
PIDS="$T/pids"
: > "$PIDS"
# every process a test double reports is ended at exit, whatever happened
cleanup() { while read -r p; do kill -9 "$p" 2>/dev/null; done < "$PIDS"; rm -rf "$T"; }
trap cleanup EXIT

cat > "$T/fake" <<'EOF'
#!/bin/sh
# TEST DOUBLE for a benchmark under the collector: synthetic records only.
f=$(printf '%s' "$KGATE_RECORDS" | sed "s/%p/$$/g")
records() {
	printf '{"type":"header","format":1,"collector":"0.1.0","cupti":130000,"mode":"trace","pid":%d,"ppid":1,"pass":0,"passes":1,"replay":"kernel","argv":["fake"],"time":1764720000,"devices":[{"id":0,"name":"Synthetic GPU","uuid":"GPU-synthetic","chip":"SYN0","sms":4,"cc":"0.0","driver":99999,"runtime":99999}],"metrics":["gpu__time_duration.sum"]}\n' $$
	printf '{"type":"kernel","ordinal":0,"name":"_Z5saxpyifPKfPf","device":0,"context":1,"stream":7,"corr":1,"start":1000,"end":2000,"grid":[4,1,1],"block":[256,1,1],"regs":16}\n'
	printf '{"type":"footer","kernels":1,"dropped":0,"errors":0}\n'
}
case "$FAKE_MODE" in
setsid)   setsid sleep 300 & echo $! >> "$FAKE_PIDS"; records > "$f" ;;
dfork)    python3 -c 'import os, sys
if os.fork() == 0:
    os.setpgid(0, 0)
    if os.fork() == 0:
        open(sys.argv[1], "a").write("%d\n" % os.getpid())
        os.execvp("sleep", ["sleep", "301"])
    os._exit(0)
os.wait()' "$FAKE_PIDS"; records > "$f" ;;
setsid_hang) setsid sleep 302 & echo $! >> "$FAKE_PIDS"; records > "$f"; sleep 300 ;;
setuid)   echo $$ >> "$FAKE_PIDS"; records > "$f"; exec "$FAKE_HOLD" ;;
fifo)     mkfifo "$f" ;;
broken)   records | sed 's/"kernel","ordinal"/"kernel" "ordinal"/' > "$f" ;;
*)        records > "$f" ;;
esac
EOF
chmod 755 "$T/fake"
suite() { # NAME MODE TIMEOUT
	cat > "$T/$1.yaml" <<EOF
version: 1
benchmarks:
  - name: $1
    cmd: ["$T/fake"]
    repeat: 1
    warmup: 0
    timeout: ${3}s
    env: { FAKE_MODE: "$2", FAKE_PIDS: "$PIDS", FAKE_HOLD: "$T/hold" }
EOF
}
alive() { kill -0 "$1" 2>/dev/null; }

# --- processes moved out of the group --------------------------------------
for mode in setsid dfork; do
	suite "esc_$mode" "$mode" 30
	: > "$PIDS.before"; cp "$PIDS" "$PIDS.before"
	run "$KGATE" run -c "$T/esc_$mode.yaml" --db "$T/k.db" --commit "c_$mode"
	is "$rc" 0 "$mode: the run succeeds"
	like "$err" "left processes running when it exited .*kgate ended them" "$mode: with a warning"
	p=$(tail -1 "$PIDS")
	sleep 0.2
	ok "$mode: the escaped process ($p) is gone" sh -c "! kill -0 $p 2>/dev/null"
done
suite esc_hang setsid_hang 2
t0=$(date +%s)
run "$KGATE" run -c "$T/esc_hang.yaml" --db "$T/k.db" --commit c_hang
t1=$(date +%s)
is "$rc" 3 "a benchmark that escapes a process and hangs: timeout, exit 3"
like "$err" "timed out after 2 s" "it says it timed out"
p=$(tail -1 "$PIDS")
sleep 0.2
ok "the process it moved out of its group ($p) is gone too" sh -c "! kill -0 $p 2>/dev/null"
ok "within the timeout and grace ($((t1 - t0)) s)" test $((t1 - t0)) -lt 15

# --- a FIFO or a broken records file ----------------------------------------
suite fifo fifo 30
run timeout 60 "$KGATE" run -c "$T/fifo.yaml" --db "$T/k.db" --commit c_fifo
is "$rc" 3 "a FIFO at the records path: exit 3, not blocked"
like "$err" "in place of a records file .*not a regular file" "and says why"
suite broken broken 30
run "$KGATE" run -c "$T/broken.yaml" --db "$T/k.db" --commit c_broken
is "$rc" 3 "a benchmark's broken records file: exit 3 (a runtime failure, as documented)"
like "$err" "bad JSON" "naming the bad line"
is "$(sqlite3 "$T/k.db" "SELECT count(*) FROM runs WHERE commit_sha IN ('c_fifo', 'c_broken', 'c_hang')")" 0 \
	"nothing stored for the failed runs"

# --- a process kgate may not signal -----------------------------------------
# kgate runs as an unprivileged user; the benchmark execs a setuid-root
# program that takes every user id (setresuid(0, 0, 0)), so that kill(2)
# from kgate's user fails with EPERM, as for a setuid program of a
# driver stack or a process in uninterruptible sleep.
U=kgate-test-user
can_user=0
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	id "$U" >/dev/null 2>&1 || useradd --system --no-create-home "$U" 2>/dev/null
	id "$U" >/dev/null 2>&1 && can_user=1
fi
if [ $can_user = 1 ]; then
	# tests/progs/setuid_hold.c, built by make
	cp "${KGATE_BUILD:?}/tests/progs/setuid_hold" "$T/hold" && chown 0:0 "$T/hold" && chmod 4755 "$T/hold"
	mkdir -p "$T/u" && chown "$U" "$T/u" && chmod 755 "$T" && chmod 666 "$PIDS"
	suite setuid setuid 2
	chmod 644 "$T/setuid.yaml"
	# the build may sit below a directory the user cannot enter (a checkout
	# in a mode-700 temporary directory): then the user runs a copy
	KU="$KGATE"
	if ! setpriv --reuid="$U" --regid="$(id -g "$U")" --clear-groups test -x "$KGATE"; then
		cp "$KGATE" "$T/kgate-user" && chmod 755 "$T/kgate-user" && KU="$T/kgate-user"
	fi
	t0=$(date +%s)
	run timeout 120 setpriv --reuid="$U" --regid="$(id -g "$U")" --clear-groups \
		env TMPDIR="$T/u" "$KU" run -c "$T/setuid.yaml" --db "$T/u/k.db" --commit c_suid
	t1=$(date +%s)
	is "$rc" 3 "a process kgate cannot signal: exit 3, not polled for ever"
	like "$err" "could not be killed" "it says it could not be killed"
	ok "within timeout and grace ($((t1 - t0)) s)" test $((t1 - t0)) -lt 30
else
	for i in 1 2 3; do skip "needs root (to add an unprivileged user) and setpriv"; done
fi

done_testing
