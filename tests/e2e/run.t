#!/bin/sh
# run.t: "kgate run" and "kgate compare" end to end, without a GPU.
#
# The benchmarks here are TEST DOUBLES of a CUDA program running under the
# collector: small shell scripts that write a records file where the
# collector would ($KGATE_RECORDS, with %p replaced by their pid).  Their
# records are synthetic (a made-up "Synthetic GPU"), not GPU data; what is
# tested is kgate's process control and storage: repeats, warmup, --only,
# environment and working directory, child processes' files, and every way
# a benchmark can fail (exit status, signal, timeout with its whole process
# group killed, no footer, no file), each of which must store nothing.
. "$(dirname "$0")/lib.sh"

DB="$T/k.db"
# The tests run the collector on a stand-in CUPTI (tests/collector/): kgate
# is told a driver is loaded, whatever this machine has; the no-GPU case is
# tested on its own below.
: >"$T/nvidia-version"
export KGATE_NVIDIA_PROC="$T/nvidia-version"
# Stand-ins for the collector library and libcupti: the test doubles below
# never load them; kgate only passes their paths on.
: > "$T/libkgate-collector.so"
: > "$T/libcupti.so"
export KGATE_COLLECTOR="$T/libkgate-collector.so" KGATE_CUPTI="$T/libcupti.so"

# The test double.  FAKE_MODE picks a behaviour; FAKE_LAUNCHES launches of
# one kernel, FAKE_DUR ns each (plus a little pid-seeded jitter).
cat > "$T/fake" <<'EOF'
#!/bin/sh
# TEST DOUBLE for a benchmark under the collector: synthetic records only.
records() { # $1: pid whose file it is; $2: 1 to write the footer
	f=$(printf '%s' "$KGATE_RECORDS" | sed "s/%p/$1/g")
	awk -v pid="$1" -v n="${FAKE_LAUNCHES:-2}" -v d="${FAKE_DUR:-1000}" -v foot="$2" \
	    -v kname="${FAKE_KERNEL:-_Z5saxpyifPKfPf}" 'BEGIN {
		srand(pid);
		printf "{\"type\":\"header\",\"format\":1,\"collector\":\"0.1.0\",\"cupti\":130000,"
		printf "\"mode\":\"trace\",\"pid\":%d,\"ppid\":1,\"pass\":0,\"passes\":1,", pid
		printf "\"replay\":\"kernel\",\"argv\":[\"fake\"],\"time\":1764720000,"
		printf "\"devices\":[{\"id\":0,\"name\":\"Synthetic GPU\",\"uuid\":\"GPU-synthetic\","
		printf "\"chip\":\"SYN0\",\"sms\":4,\"cc\":\"0.0\",\"driver\":99999,\"runtime\":99999}],"
		printf "\"metrics\":[\"gpu__time_duration.sum\"]}\n"
		for (i = 0; i < n; i++) {
			e = 1000 + int(d * (1 + 0.01 * rand()))
			printf "{\"type\":\"kernel\",\"ordinal\":%d,\"name\":\"%s\",\"device\":0,", i, kname
			printf "\"context\":1,\"stream\":7,\"corr\":%d,\"start\":1000,\"end\":%d,", i + 1, e
			printf "\"grid\":[4,1,1],\"block\":[256,1,1],\"regs\":16,\"nvtx\":\"step\"}\n"
		}
		if (foot)
			printf "{\"type\":\"footer\",\"kernels\":%d,\"dropped\":0,\"errors\":0}\n", n
	}' > "$f"
}
if [ -n "$FAKE_LOG" ]; then
	{
		echo "pwd=$(pwd)"
		echo "inj=$CUDA_INJECTION64_PATH"
		echo "nvtx=$NVTX_INJECTION64_PATH"
		echo "mode=$KGATE_MODE"
		echo "my=$MY_SETTING"
		echo "args=$*"
	} >> "$FAKE_LOG"
fi
echo "fake: starting ($FAKE_MODE)" >&2
case "$FAKE_MODE" in
exit1)    echo "fake: out of memory, giving up" >&2; exit 1 ;;
signal)   echo "fake: about to crash" >&2; kill -SEGV $$ ;;
hang)     sleep 1000 & echo $! > "$FAKE_PIDFILE"
	  echo "fake: waiting forever" >&2; sleep 1000 ;;
nofooter) records $$ 0; echo "fake: died before the footer" >&2 ;;
nofile)   echo "fake: no CUDA work done" >&2 ;;
child)    FAKE_MODE= FAKE_LAUNCHES=3 "$0" & records $$ 1; wait ;;
leave)    sleep 1000 & echo $! > "$FAKE_PIDFILE"; records $$ 1 ;;
stubborn) trap '' TERM; echo "fake: ignoring SIGTERM" >&2; sleep 1000 ;;
passes)   # application replay: pass 0 says two passes are needed
	  echo "pass=$KGATE_PASS replay=$KGATE_REPLAY" >> "$FAKE_LOG"
	  records $$ 1
	  f=$(printf '%s' "$KGATE_RECORDS" | sed "s/%p/$$/g")
	  sed -i "1s/\"pass\":0,\"passes\":1/\"pass\":$KGATE_PASS,\"passes\":2/" "$f" ;;
*)        records $$ 1 ;;
esac
exit 0
EOF
chmod +x "$T/fake"

# suite FILE BENCH... : a suite; each BENCH is "name|mode|repeat|warmup|extra yaml"
suite() {
	f=$1; shift
	{
		echo "version: 1"
		echo "benchmarks:"
		for b in "$@"; do
			IFS='|' read -r name mode rep warm extra <<EOB
$b
EOB
			echo "  - name: $name"
			echo "    cmd: [\"$T/fake\", --size, \"64\"]"
			echo "    repeat: ${rep:-3}"
			echo "    warmup: ${warm:-0}"
			echo "    timeout: 2s"
			echo "    env: { FAKE_MODE: \"$mode\", FAKE_PIDFILE: \"$T/hang.pid\"$extra }"
		done
	} > "$f"
}
runs() { sqlite3 "$DB" "SELECT count(*) FROM runs"; }
# durs COMMIT [AND ...]: duration samples of the run of COMMIT
durs() { sqlite3 "$DB" "SELECT count(*) FROM samples_named WHERE run = (SELECT id FROM runs WHERE commit_sha = '$1') AND metric = 'gpu__time_duration.sum'$2"; }
dump() { sqlite3 "$DB" .dump | cksum; }

run "$KGATE" run --help
is "$rc" 0 "run --help exits 0"
like "$out" "^usage: kgate run" "run --help prints the usage"
run "$KGATE" compare --help
is "$rc" 0 "compare --help exits 0"
like "$out" "^usage: kgate compare" "compare --help prints the usage"

# --- a good suite: one run, every repeat stored ---
mkdir "$T/work"
suite "$T/suite.yaml" "alpha|ok|4|2|, FAKE_LOG: \"$T/alpha.log\", MY_SETTING: \"x y\"" \
	"beta|ok|3|0|, FAKE_LAUNCHES: \"5\""
run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit c1 --branch main
is "$rc" 0 "a good suite runs"
like "$err" "stored run 1 \(commit c1, 2 benchmarks, Synthetic GPU\)" "stored message"
like "$out" "^alpha +4 runs +1 kernel +8 launches" "summary line for alpha"
like "$out" "^beta +3 runs +1 kernel +15 launches" "summary line for beta"
is "$(runs)" 1 "one run stored"
is "$(durs c1 " AND benchmark = 'alpha'")" 8 "alpha: 4 repeats x 2 launches (warmups not stored)"
is "$(durs c1 " AND benchmark = 'beta'")" 15 "beta: 3 repeats x 5 launches"
is "$(sqlite3 "$DB" "SELECT group_concat(DISTINCT repeat) FROM (SELECT repeat FROM samples_named WHERE run = 1 AND benchmark = 'alpha' ORDER BY repeat)")" \
	"0,1,2,3" "repeat index is the repeat number"
is "$(grep -c '^pwd=' "$T/alpha.log")" 6 "alpha ran 2 warmups + 4 repeats"
is "$(sqlite3 "$DB" "SELECT gpu_name || '/' || gpu_uuid || '/' || gpu_chip || '/' || driver || '/' || branch FROM runs WHERE id = 1")" \
	"Synthetic GPU/GPU-synthetic/SYN0/99999/main" "GPU fingerprint from the records headers"

# --- environment and working directory ---
is "$(sort -u "$T/alpha.log" | grep -c .)" 6 "the same environment every time"
like "$(cat "$T/alpha.log")" "^pwd=$T\$" "workdir defaults to the suite file's directory"
like "$(cat "$T/alpha.log")" "^inj=$KGATE_COLLECTOR\$" "CUDA_INJECTION64_PATH is the collector"
like "$(cat "$T/alpha.log")" "^nvtx=$KGATE_CUPTI\$" "NVTX_INJECTION64_PATH is $KGATE_CUPTI when set"
like "$(cat "$T/alpha.log")" "^mode=trace\$" "KGATE_MODE from the collector section"
like "$(cat "$T/alpha.log")" "^my=x y\$" "the benchmark's env is passed"
like "$(cat "$T/alpha.log")" "^args=--size 64\$" "argv passed as given"
rm -f "$T/alpha.log"
{
	echo "version: 1"
	echo "collector: { mode: metrics, metrics: [gpu__time_duration.sum], launch_skip: 2 }"
	echo "benchmarks:"
	echo "  - name: wd"
	echo "    cmd: [\"$T/fake\"]"
	echo "    repeat: 1"
	echo "    workdir: work"
	echo "    env: { FAKE_LOG: \"$T/wd.log\" }"
} > "$T/wd.yaml"
run "$KGATE" run -c "$T/wd.yaml" --db "$DB" --commit c2
is "$rc" 0 "suite with a workdir runs"
like "$(cat "$T/wd.log")" "^pwd=$T/work\$" "workdir is relative to the suite file"
like "$(cat "$T/wd.log")" "^mode=metrics\$" "metrics mode passed on"
rm -f "$T/wd.log"
run env -u KGATE_CUPTI "$KGATE" run -c "$T/wd.yaml" --db "$T/nv.db" --commit c2b
like "$(cat "$T/wd.log")" "^nvtx=$KGATE_COLLECTOR\$" "without KGATE_CUPTI, NVTX_INJECTION64_PATH is the collector (it forwards NVTX)"

# --- --only and --quick ---
run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit c3 --only '^b'
is "$rc" 0 "--only runs"
is "$(sqlite3 "$DB" "SELECT group_concat(DISTINCT benchmark) FROM samples_named WHERE run = 3")" "beta" "--only keeps the matching benchmarks"
printf '%s\n' "version: 1" "benchmarks:" "  - name: q" "    cmd: [\"$T/fake\"]" \
	"    repeat: 9" "    quick_repeat: 2" > "$T/quick.yaml"
run "$KGATE" run -c "$T/quick.yaml" --db "$DB" --commit c4 --quick --format json
is "$rc" 0 "--quick runs"
is "$(durs c4)" 4 "--quick: quick_repeat repeats (2 x 2 launches)"
like "$out" '"run": ?4' "JSON summary names the run"
like "$out" '"name": ?"q", ?"processes": ?2' "JSON summary per benchmark"
run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit c5 --only 'zzz'
is "$rc" 2 "--only matching nothing is a usage error"
like "$err" "matches no benchmark .*alpha, beta" "lists the benchmarks"
run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit c5 --only '('
is "$rc" 2 "a bad --only regex is a usage error"
run "$KGATE" run -c "$T/nope.yaml" --db "$DB" --commit c5
is "$rc" 2 "a missing suite file is a usage error"
run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit c5 --format xml
is "$rc" 2 "a bad --format is a usage error"
run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit c5 --bogus
is "$rc" 2 "an unknown option is a usage error"
like "$err" "unknown option '--bogus'" "names the option"
run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit
is "$rc" 2 "an option without its value is a usage error"
run sh -c "cd '$T' && GIT_CEILING_DIRECTORIES='$T' '$KGATE' run -c suite.yaml --db '$DB'"
is "$rc" 2 "no --commit outside a repository is a usage error"
like "$err" "no --commit given" "says so"
is "$(runs)" 4 "no run stored by any usage error"

# --- child processes write their own records files ---
suite "$T/child.yaml" "kids|child|2|0|"
run "$KGATE" run -c "$T/child.yaml" --db "$DB" --commit c6
is "$rc" 0 "a benchmark with a child process runs"
is "$(durs c6)" 10 "both processes' files ingested (2 repeats x (2 + 3) launches)"

# --- processes left behind are ended, with a warning ---
rm -f "$T/hang.pid"
suite "$T/leave.yaml" "leaver|leave|1|0|"
run "$KGATE" run -c "$T/leave.yaml" --db "$DB" --commit c7
is "$rc" 0 "a benchmark leaving a process behind still stores its run"
like "$err" "warning: benchmark 'leaver' left processes running when it exited" "it is warned about"
pid=$(cat "$T/hang.pid" 2>/dev/null)
ok "the process it left ($pid) was ended" sh -c "[ -n '$pid' ] && { [ ! -e /proc/$pid/stat ] || [ \$(awk '{print \$3}' /proc/$pid/stat) = Z ]; }"

# --- metrics mode, application replay: one process per pass ---
{
	echo "version: 1"
	echo "collector: { mode: metrics, replay: application, metrics: [gpu__time_duration.sum] }"
	echo "benchmarks:"
	echo "  - name: replayed"
	echo "    cmd: [\"$T/fake\"]"
	echo "    repeat: 2"
	echo "    env: { FAKE_MODE: passes, FAKE_LOG: \"$T/passes.log\" }"
} > "$T/passes.yaml"
run "$KGATE" run -c "$T/passes.yaml" --db "$DB" --commit c8
is "$rc" 0 "application replay runs"
is "$(grep '^pass=' "$T/passes.log" | tr '\n' ' ')" \
	"pass=0 replay=application pass=1 replay=application pass=0 replay=application pass=1 replay=application pass=0 replay=application pass=1 replay=application " \
	"one process per pass, KGATE_PASS set (warmup + 2 repeats)"
is "$(sqlite3 "$DB" "SELECT group_concat(repeat) FROM (SELECT DISTINCT repeat FROM samples_named WHERE run = (SELECT id FROM runs WHERE commit_sha = 'c8') ORDER BY repeat)")" \
	"0,1" "the passes of a repeat share its repeat index"
is "$(durs c8)" 4 "derived durations from pass 0 of each repeat only (2 x 2 launches)"
is "$(sqlite3 "$DB" "SELECT count(*) FROM samples_named WHERE run = (SELECT id FROM runs WHERE commit_sha = 'c8') AND metric = 'launch__grid_size'")" 4 \
	"launch configuration from pass 0 only: the later pass joins it"

# --- failures: exit 3, the name, its last stderr line, nothing stored ---
sqlite3 "$DB" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
before=$(dump)
nruns=$(runs)
fails() { # mode, what the message says
	suite "$T/bad.yaml" "good|ok|2|0|" "broken|$1|2|0|"
	run "$KGATE" run -c "$T/bad.yaml" --db "$DB" --commit bad
	is "$rc" 3 "$1: exit status 3"
	like "$err" "^kgate: benchmark 'broken' $2 \(repeat 0\)" "$1: names the benchmark, what happened, the repeat"
	like "$err" "$3" "$1: quotes its last stderr line"
	like "$err" "nothing stored" "$1: says nothing was stored"
	is "$(runs)" "$nruns" "$1: run count unchanged"
	is "$(dump)" "$before" "$1: database unchanged"
}
fails exit1 "exited with status 1" "^    fake: out of memory, giving up$"
fails signal "was killed by signal 11 \(Segmentation fault\)" "^    fake: about to crash$"
rm -f "$T/hang.pid"
fails hang "timed out after 2 s" "^    fake: waiting forever$"
pid=$(cat "$T/hang.pid" 2>/dev/null)
ok "hang: its background child was started" test -n "$pid"
# gone: no such process, or a zombie waiting for init to reap it
gone() { [ ! -e "/proc/$1/stat" ] || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
ok "hang: the whole process group was killed (child $pid gone)" gone "$pid"
fails nofooter "wrote a records file without its footer" "^    fake: died before the footer$"
fails nofile "wrote no records file" "^    fake: no CUDA work done$"
like "$err" "the collector was not loaded" "nofile: hints at the collector"
# No driver here: the missing GPU is said, with where to try kgate without
# one, and neither the environment nor wrapper scripts are blamed.
suite "$T/bad.yaml" "broken|nofile|1|0|"
run env KGATE_NVIDIA_PROC="$T/no-such-file" "$KGATE" run -c "$T/bad.yaml" --db "$DB" --commit bad
is "$rc" 3 "no GPU: exit status 3"
like "$err" "wrote no records file \(repeat 0\): no NVIDIA driver or GPU here; to try kgate without one: 'make demo'" "no GPU: says so"
like "$err" "kgate ingest --records" "no GPU: and points at kgate ingest"
unlike "$err" "wrapper|CUDA_INJECTION64_PATH" "no GPU: blames no wrapper script or environment"
suite "$T/bad.yaml" "broken|exit1|1|0|"
run env KGATE_NVIDIA_PROC="$T/no-such-file" "$KGATE" run -c "$T/bad.yaml" --db "$DB" --commit bad
like "$err" "no NVIDIA driver or GPU here" "no GPU: a benchmark that exits 1 is explained too"

# A benchmark that ignores SIGTERM gets SIGKILL after the grace period.
suite "$T/bad.yaml" "broken|stubborn|1|0|"
run "$KGATE" run -c "$T/bad.yaml" --db "$DB" --commit bad
is "$rc" 3 "a benchmark ignoring SIGTERM exits 3"
like "$err" "benchmark 'broken' timed out after 2 s \(repeat 0\)" "it timed out"
like "$err" "^    fake: ignoring SIGTERM$" "its stderr is quoted"
is "$(dump)" "$before" "stubborn: database unchanged"

# kgate itself interrupted: the benchmark's group (not the terminal's
# foreground group, so it would miss a ^C) is ended too.
rm -f "$T/hang.pid"
suite "$T/bad.yaml" "broken|hang|1|0|"
sed -i 's/timeout: 2s/timeout: 60s/' "$T/bad.yaml"
"$KGATE" run -c "$T/bad.yaml" --db "$DB" --commit bad >/dev/null 2>"$T/int.err" &
kpid=$!
for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "$T/hang.pid" ] && break; sleep 0.2; done
kill -TERM "$kpid"
wait "$kpid"
is "$?" 3 "interrupted: exit status 3"
like "$(cat "$T/int.err")" "interrupted while benchmark 'broken' ran" "interrupted: says so"
pid=$(cat "$T/hang.pid" 2>/dev/null)
ok "interrupted: the benchmark's child ($pid) was ended" gone "$pid"
is "$(dump)" "$before" "interrupted: database unchanged"

# A warmup failure is a failure too.
suite "$T/bad.yaml" "broken|exit1|2|1|"
run "$KGATE" run -c "$T/bad.yaml" --db "$DB" --commit bad
is "$rc" 3 "a failed warmup exits 3"
like "$err" "benchmark 'broken' exited with status 1 \(warmup 0\)" "the warmup is named"
is "$(dump)" "$before" "failed warmup: database unchanged"

# A collector that is not there.
run env KGATE_COLLECTOR="$T/missing.so" "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit bad
is "$rc" 3 "a missing collector exits 3"
like "$err" "cannot open '.*missing.so' \(KGATE_COLLECTOR\)" "names the collector path"

# A program that does not exist.
printf '%s\n' "version: 1" "benchmarks:" "  - name: ghost" "    cmd: [\"$T/no-such-program\"]" > "$T/ghost.yaml"
run "$KGATE" run -c "$T/ghost.yaml" --db "$DB" --commit bad
is "$rc" 3 "a missing program exits 3"
like "$err" "benchmark 'ghost' cannot be started .*No such file" "says it cannot be started"
is "$(dump)" "$before" "every failed run left the database unchanged"

# Output is kept bounded: a benchmark printing 21 MB, then failing.
printf '%s\n' '#!/bin/sh' 'yes "line of noise" | head -n 1500000 >&2' 'echo "fake: the real error" >&2' 'exit 4' > "$T/noisy"
chmod +x "$T/noisy"
printf '%s\n' "version: 1" "benchmarks:" "  - name: noisy" "    cmd: [\"$T/noisy\"]" "    repeat: 1" > "$T/noisy.yaml"
run "$KGATE" run -c "$T/noisy.yaml" --db "$DB" --commit bad
is "$rc" 3 "a noisy failing benchmark exits 3"
like "$err" "^    fake: the real error$" "its last stderr line is quoted"
is "$(printf '%s\n' "$err" | grep -c '^    ')" 20 "at most 20 lines quoted"

# --- compare: head 10% slower than base -> regression ---
mkdir "$T/base" "$T/head"
for side in base head; do
	dur=100000; [ "$side" = head ] && dur=110000
	suite "$T/$side/kgate.yaml" "slow|ok|10|1|, FAKE_LAUNCHES: \"5\", FAKE_DUR: \"$dur\""
done
run "$KGATE" compare --base-dir "$T/base" --head-dir "$T/head" --db "$T/cmp.db" --seed 42
is "$rc" 1 "compare: a 10% slower head is a regression"
like "$out" "FAIL" "compare: the FAIL verdict is printed"
like "$err" "seed 42" "compare: the seed is printed"
is "$(sqlite3 "$T/cmp.db" "SELECT group_concat(label || ':' || commit_sha) FROM (SELECT * FROM runs ORDER BY id)")" \
	"base:base,head:head" "compare: two runs labelled base and head (commit: the dir name outside git)"
is "$(sqlite3 "$T/cmp.db" "SELECT count(*) FROM samples_named WHERE metric = 'gpu__time_duration.sum' GROUP BY run")" \
	"$(printf '50\n50')" "compare: 10 repeats x 5 launches each side"
sed -i 's/110000/100000/' "$T/head/kgate.yaml"
run "$KGATE" compare --base-dir "$T/base" --head-dir "$T/head" --db "$T/cmp2.db" --seed 42 --format json
is "$rc" 0 "compare: the same speed passes"
run "$KGATE" compare --base-dir "$T/base" --db "$T/cmp.db"
is "$rc" 2 "compare without --head-dir is a usage error"
run "$KGATE" compare --base-dir "$T/base" --head-dir "$T/nowhere" --db "$T/cmp.db"
is "$rc" 2 "compare with a missing dir is a usage error"
sed -i 's/FAKE_MODE: "ok"/FAKE_MODE: "exit1"/' "$T/head/kgate.yaml"
n=$(sqlite3 "$T/cmp.db" "SELECT count(*) FROM runs")
run "$KGATE" compare --base-dir "$T/base" --head-dir "$T/head" --db "$T/cmp.db" --seed 1
is "$rc" 3 "compare: a failing head benchmark exits 3"
like "$err" "benchmark 'slow' exited with status 1 \(head (warmup|repeat) 0\)" "compare: names the side"
is "$(sqlite3 "$T/cmp.db" "SELECT count(*) FROM runs")" "$n" "compare: nothing stored"

# --- progress: one line rewritten in place on a terminal (under a
# pseudo-terminal from script(1)), plain lines otherwise
suite "$T/prog.yaml" "alpha||2|1|" "beta||1|0|"
run "$KGATE" run -c "$T/prog.yaml" --db "$T/prog.db" --commit p1
is "$rc" 0 "progress: the run exits 0"
is "$(printf '%s\n' "$err" | grep -c '^\[[0-9]/4\] ')" 4 "without a terminal: a plain line per process"
like "$err" '^\[1/4\] alpha \(warmup 0\), [0-9]+:[0-9]{2} elapsed$' "a line names the benchmark, the repeat and the time elapsed"
like "$err" '^\[3/4\] alpha \(repeat 1\), [0-9]+:[0-9]{2} elapsed, about [0-9]+:[0-9]{2} left$' "and, after the first, an estimate of the time left"
unlike "$err" "$(printf '\r')|$(printf '\033')" "without a terminal: no carriage return or escape sequence"
if script -qec true /dev/null >/dev/null 2>&1; then
	TERM=xterm script -qec "'$KGATE' run -c '$T/prog.yaml' --db '$T/prog.db' --commit p2" /dev/null >"$T/tty.out" 2>&1
	tty=$(cat "$T/tty.out")
	is "$(printf '%s' "$tty" | grep -o "$(printf '\r\033')\[K\[[0-9]/4\]" | wc -l | tr -d ' ')" 4 "on a terminal: each step rewrites the one line (CR, erase line)"
	is "$(printf '%s' "$tty" | tr '\r' '\n' | grep -c '\[[0-9]/4\].*left$')" 3 "with the estimate on each step after the first"
	like "$tty" "$(printf '\033')\[Kkgate: stored run [0-9]+ \(commit p2" "the line is erased before the closing note"
	run sh -c "TERM=dumb script -qec \"'$KGATE' run -c '$T/prog.yaml' --db '$T/prog.db' --commit p3\" /dev/null"
	unlike "$out" "$(printf '\033')" "TERM=dumb: plain lines"
else
	skip "no script(1) here"; skip "no script(1) here"; skip "no script(1) here"; skip "no script(1) here"
fi
done_testing
