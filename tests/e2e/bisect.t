#!/bin/sh
# bisect.t: "kgate bisect" in a throwaway repository of 20 commits.
#
# The benchmarks replay records files recorded on an NVIDIA H200
# (tests/fixtures/h200/suite/trace/base: matmul_naive and stream_triad), one
# recorded file per repeat.  From commit 13 on, the repository's slow.txt
# says 1.10, and the replay stretches every mm_naive launch by that factor:
# an INJECTED slowdown, synthetic, on top of real durations.  The build
# command copies slow.txt to where the replay reads it, so a commit's runs
# show its own slowdown only once it was built.  Commits 1 and 20 are stored
# before the bisection; each commit the bisection measures adds one run.
. "$(dirname "$0")/lib.sh"

command -v git >/dev/null 2>&1 || { echo "1..0 # skip git is not installed"; exit 0; }
command -v python3 >/dev/null 2>&1 || { echo "1..0 # skip python3 is not installed"; exit 0; }

: > "$T/libkgate-collector.so"
: > "$T/libcupti.so"
export KGATE_COLLECTOR="$T/libkgate-collector.so" KGATE_CUPTI="$T/libcupti.so"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid

REC="$SHARED_FIX/suite/trace/base"
R="$T/repo"
DB="$T/k.db"
mkdir -p "$R" "$T/state"

# The replay: the N-th call writes the N-th recorded file (mod 5) of its
# benchmark where the collector would, mm_naive stretched by the built factor.
cat > "$T/replay.py" <<'EOF'
# TEST DOUBLE for a benchmark under the collector: replays H200 records,
# with an injected (synthetic) slowdown of one kernel.
import glob, json, os, sys
bench, rec, state = sys.argv[1], sys.argv[2], sys.argv[3]
files = sorted(glob.glob(os.path.join(rec, bench + ".*.jsonl")))
cnt = os.path.join(state, bench + ".count")
i = int(open(cnt).read()) if os.path.exists(cnt) else 0
open(cnt, "w").write(str(i + 1))
factor = float(open(os.path.join(state, "built")).read())
if os.path.exists(os.path.join(state, "hang")):
    open(os.path.join(state, "started"), "w").write("1")
    import time
    time.sleep(60)
out = os.environ["KGATE_RECORDS"].replace("%p", str(os.getpid()))
with open(files[i % len(files)]) as f, open(out, "w") as o:
    for line in f:
        r = json.loads(line)
        if r["type"] == "header":
            r["pid"] = os.getpid()
            r["ppid"] = os.getppid()
        if r["type"] == "kernel" and r["name"] == "_Z8mm_naivePKfS0_Pfii":
            d = (r["end"] - r["start"]) * factor
            r["end"] = r["start"] + int(d)
            r["metrics"]["gpu__time_duration.sum"] *= factor
        o.write(json.dumps(r) + "\n")
EOF

cd "$R" || exit 2
git init -q -b main .
cat > kgate.yaml <<EOF
version: 1
collector: { mode: trace }
benchmarks:
  - name: matmul_naive
    cmd: [python3, "$T/replay.py", matmul_naive, "$REC", "$T/state"]
    repeat: 3
  - name: stream_triad
    cmd: [python3, "$T/replay.py", stream_triad, "$REC", "$T/state"]
    repeat: 3
EOF
echo '*.db*' > .gitignore
git add kgate.yaml .gitignore
i=1
while [ $i -le 20 ]; do
	if [ $i -ge 13 ]; then echo 1.10 > slow.txt; else echo 1.00 > slow.txt; fi
	echo "$i" > version.txt
	git add slow.txt version.txt
	git commit -q -m "commit $i"
	eval "c$i=\$(git rev-parse HEAD)"
	i=$((i + 1))
done
BUILD="cp slow.txt '$T/state/built'"

measure() { # commit: check it out, build, run, store
	git checkout -q "$1" && sh -c "$BUILD" &&
		"$KGATE" run --db "$DB" --commit "$1" --branch main >/dev/null 2>&1
}
git checkout -q main
measure "$c1"
measure "$c20"
git checkout -q main
runs_before=$(sqlite3 "$DB" 'SELECT count(*) FROM runs' 2>/dev/null || echo 2)
head_before=$(git rev-parse HEAD)



run "$KGATE" bisect --good "$c1" --bad "$c20" --kernel mm_naive --build "$BUILD" --db "$DB"
cp "$T/.err" "$T/first.err"
is "$rc" 1 "a slowdown found: exit 1"
like "$out" "^first bad commit: $c13 commit 13$" "the first bad commit is commit 13"
like "$out" "matmul_naive \[compute\]: _Z8mm_naivePKfS0_Pfii  gpu__time_duration.sum .*\(\+10\.[0-9]+%, FAIL\) against ${c12%????????????????????????????}" \
	"the shift there, about +10%, against its parent"
measured=$(printf '%s\n' "$out" | sed -n 's/^  \([0-9]*\) runs\{0,1\} measured.*/\1/p')
ok "at most 5 runs measured (got $measured)" test "${measured:-99}" -le 5
runs_after=$(sqlite3 "$DB" 'SELECT count(*) FROM runs' 2>/dev/null || echo "")
[ -n "$runs_after" ] && is "$((runs_after - runs_before))" "$measured" "the runs said are the runs stored" ||
	skip "no sqlite3 shell to count the runs"
is "$(git rev-parse HEAD)" "$head_before" "HEAD is where it was"
is "$(git symbolic-ref --short HEAD)" main "still on branch main"
is "$(git status --porcelain)" "" "the work tree is clean"
ok "no bisection is left under way" sh -c '! git bisect log'

# Again: every commit it needs is stored now, so nothing is measured.
run "$KGATE" bisect --good "$c1" --bad "$c20" --kernel mm_naive --build "$BUILD" --db "$DB" --format json
like "$out" "\"first_bad\":\"$c13\".*\"runs_measured\":0" "a second bisection reuses the stored runs (json)"

# A kernel that did not change: nothing to bisect, exit 0.
run "$KGATE" bisect --good "$c1" --bad "$c20" --kernel triad --build "$BUILD" --db "$DB"
is "$rc" 0 "an unchanged kernel: nothing to bisect, exit 0"

# Bad usage.
run "$KGATE" bisect --good "$c1" --bad "$c20" --kernel no_such_kernel --db "$DB"
is "$rc" 2 "an unknown kernel: exit 2"
echo dirty > version.txt
run "$KGATE" bisect --good "$c1" --bad "$c20" --kernel mm_naive --db "$DB"
like "$rc:$err" "^2:.*changes to tracked files" "a dirty work tree is refused"
git checkout -q version.txt

# Interrupted: a fresh database, so the step has to run a benchmark, which
# hangs; kgate gets SIGTERM and must leave the repository as it was.
DB2="$T/k2.db"
measure "$c1" && git checkout -q "$c20" && sh -c "$BUILD" &&
	"$KGATE" run --db "$DB2" --commit "$c20" --branch main >/dev/null 2>&1
git checkout -q main
touch "$T/state/hang"
"$KGATE" bisect --good "$c1" --bad "$c20" --kernel mm_naive --build "$BUILD" --db "$DB2" \
	>/dev/null 2>"$T/int.err" &
pid=$!
i=0
while [ ! -f "$T/state/started" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM "$pid"
wait "$pid"
is "$?" 3 "interrupted: exit 3"
rm -f "$T/state/hang"
state="$(git rev-parse HEAD) $(git symbolic-ref --short HEAD 2>/dev/null) $(git status --porcelain | wc -l)"
is "$state" "$head_before main 0" "after the interruption: HEAD, branch and work tree as they were"
done_testing
cat "$T/first.err" >&2
