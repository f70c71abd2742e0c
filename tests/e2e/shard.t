#!/bin/sh
# shard.t: "kgate run --shard I/N" and "kgate merge", without a GPU.
#
# The benchmarks are TEST DOUBLES of CUDA programs under the collector (as
# in run.t): shell scripts writing a records file where the collector
# would, with SYNTHETIC records (a made-up "Synthetic GPU") whose values
# depend only on the benchmark's settings, so that two runs of one
# benchmark record the same samples.  What is tested: a suite split 1/3,
# 2/3, 3/3 and merged holds the unsharded run's kernels and samples; the
# parts as SQLite files (CI artifacts) and in one PostgreSQL database; the
# plan balanced by stored wall times; missing, doubled and mismatched
# shards refused or reported; a shard never a check's head or a baseline.
. "$(dirname "$0")/lib.sh"
. "$KGATE_SRC/tests/e2e/pg.sh"

. "$KGATE_SRC/tests/e2e/fakebench.sh"
suite "$T/kgate.yaml" "a1|1|2|100" "b2|2|3|200" "c3|3|1|300" "d4|1|4|400" "e5|2|2|500" "f6|1|1|600" "g7|3|2|700"
C=3333333333333333333333333333333333333333
# the samples of a run as sorted lines (no run id, no row id)
samples() { # db run
	sqlite3 "$1" "SELECT benchmark, nvtx, kernel, metric, repeat, ordinal, value FROM samples_named
		      WHERE run = $2" | LC_ALL=C sort
}
kernels() { # db run
	sqlite3 "$1" "SELECT DISTINCT benchmark, nvtx, kernel FROM samples_named WHERE run = $2" | LC_ALL=C sort
}
benches() { # db run
	sqlite3 "$1" "SELECT b.name FROM run_benchmarks r JOIN benchmarks b ON b.id = r.benchmark
		      WHERE r.run = $2 ORDER BY b.name" | tr '\n' ' '
}

# --- the options -------------------------------------------------------------
for bad in 0/3 4/3 3 a/b 1/0 -1/3 1/1001 "1/3x"; do
	run "$KGATE" run --shard "$bad" --db "$T/x.db" --commit $C
	is "$rc" 2 "--shard '$bad' is a usage error"
done
like "$err" "not I/N with 1 <= I <= N" "and it says what --shard takes"
run "$KGATE" run --shard 1/8 --db "$T/x.db" --commit $C
is "$rc" 2 "more shards than benchmarks: a usage error"
like "$err" "7 benchmarks to share out, fewer than 8 shards" "it says so"
ok "nothing was stored" test ! -e "$T/x.db"

# --- the whole suite, then the same in three shards (SQLite part files) ------
run "$KGATE" run --db "$T/full.db" --commit $C --branch main
is "$rc" 0 "the unsharded run"
like "$(sqlite3 "$T/full.db" "SELECT gpu_state FROM run_benchmarks LIMIT 1")" '"wall_s":[0-9]' \
	"a benchmark's GPU state records the wall time of its processes"
for i in 1 2 3; do
	run "$KGATE" run --shard $i/3 --balance count --db "$T/part$i.db" --commit $C --branch main --format json
	is "$rc" 0 "shard $i/3 runs"
	like "$err" "shard $i/3: [0-9] of 7 benchmarks, balanced by count" "shard $i/3 says its plan"
	is "$(sqlite3 "$T/part$i.db" "SELECT status FROM runs")" "shard $i/3" "shard $i/3 is stored as a shard"
done
is "$(benches "$T/part1.db" 1)$(benches "$T/part2.db" 1)$(benches "$T/part3.db" 1)" \
	"a1 d4 g7 b2 e5 c3 f6 " "by count: the benchmarks dealt out in name order"
run "$KGATE" check --db "$T/part1.db" --commit $C
is "$rc" 2 "a shard is not checked as a run"
like "$err" "is shard 1/3 of a sharded run: put the shards together first" "check says to merge first"

run "$KGATE" merge --db "$T/m.db" --commit $C --format json "$T/part1.db" "$T/part2.db"
is "$rc" 2 "a missing shard: refused"
like "$err" "shard 3/3 missing \(2 of 3 stored\); nothing merged" "it names the missing shard"
like "$out" '"missing":\[3\]' "and the JSON lists it"
is "$(sqlite3 "$T/m.db" "SELECT count(*) FROM runs")" 0 "nothing stored"

run "$KGATE" merge --db "$T/m.db" --commit $C "$T/part3.db" "$T/part1.db" "$T/part2.db"
is "$rc" 0 "the three shards merge"
like "$err" "stored run 1 \(commit 333333333333, 3 shards merged" "merge says what it stored"
like "$out" "^shard 1/3  run 1 of .*part1.db  3 benchmarks" "and lists the shards in order"
is "$(sqlite3 "$T/m.db" "SELECT status FROM runs WHERE id = 1")" ok "the merged run is a complete run"
is "$(benches "$T/m.db" 1)" "$(benches "$T/full.db" 1)" "merged: the unsharded run's benchmarks"
is "$(kernels "$T/m.db" 1 | cksum)" "$(kernels "$T/full.db" 1 | cksum)" "merged: the unsharded run's kernels"
is "$(samples "$T/m.db" 1 | cksum)" "$(samples "$T/full.db" 1 | cksum)" \
	"merged: the unsharded run's samples ($(samples "$T/full.db" 1 | wc -l) of them, values and all)"
ok "there are samples at all" test "$(samples "$T/full.db" 1 | wc -l)" -gt 50
run "$KGATE" merge --db "$T/m.db" --commit $C "$T/part1.db" "$T/part2.db" "$T/part3.db"
is "$rc" 0 "merging again"
like "$err" "already merged as run 1" "says it is merged already"
is "$(sqlite3 "$T/m.db" "SELECT count(*) FROM runs")" 1 "and stores nothing twice"
"$KGATE" db copy "$T/full.db" "$T/m.db" 2>/dev/null
run "$KGATE" check --db "$T/m.db" --commit $C --baseline $C
like "$err$out" "." "a check of the merged run runs"

# --- the plan balanced by stored wall time -----------------------------------
suite "$T/slow.yaml" "s1|1|1|100|2|, FAKE_SLEEP: \"0.4\"" "s2|1|1|100" "s3|1|1|100" "s4|1|1|100"
"$KGATE" run -c "$T/slow.yaml" --db "$T/slow.db" --commit 4444444444444444444444444444444444444444 >/dev/null 2>&1
cp "$T/slow.db" "$T/hist.db"
run "$KGATE" run -c "$T/slow.yaml" --shard 1/2 --balance count --db "$T/slow.db" --commit $C --format json
like "$out" '"benchmarks":\[\{"name":"s1".*\{"name":"s3"' "by count: s1 and s3 in shard 1"
run "$KGATE" run -c "$T/slow.yaml" --shard 1/2 --db "$T/slow.db" --commit $C --format json
like "$err" "balanced by wall times of run 1 \(4 of 4 benchmarks\)" "by time: the stored wall times"
like "$out" '"benchmarks":\[\{"name":"s1"[^]]*\]' "by time: the slow s1 in shard 1"
unlike "$out" '"name":"s[234]"' "alone"
run "$KGATE" run -c "$T/slow.yaml" --shard 2/2 --db "$T/slow.db" --commit $C --format json
like "$out" '"name":"s2".*"name":"s3".*"name":"s4"' "and the three quick ones in shard 2"
run "$KGATE" merge -c "$T/slow.yaml" --db "$T/slow.db" --commit $C --format json
is "$rc" 0 "shard 1/2 run again (by time after by count): merged"
like "$err" "shard 1/2 is stored twice: run 2 of .* and run 3 of .*\(other samples: a shard run again\?\); taking the newer, run 3" \
	"the older shard 1/2 left out, and said"
like "$out" '"duplicates":\[\{"shard":1,"taken":3,[^]]*"left":2' "the JSON says which was taken"
run "$KGATE" run -c "$T/slow.yaml" --shard 2/2 --balance count --db "$T/slow2.db" --commit $C
"$KGATE" run -c "$T/slow.yaml" --shard 1/2 --db "$T/hist.db" --commit $C 2>/dev/null >/dev/null
run "$KGATE" merge -c "$T/slow.yaml" --db "$T/slow3.db" --commit $C "$T/slow2.db" "$T/hist.db"
is "$rc" 2 "shards of two plans (count, then time): refused"
like "$err" "benchmark 's3' of the suite is in no shard" "it names the benchmark no shard ran"
like "$err" "read the same history" "and says what to look at"

# --- mismatches --------------------------------------------------------------
run "$KGATE" run --shard 2/3 --balance count --db "$T/gpu2.db" --commit $C
suite "$T/other.yaml" "a1|1|2|100|2|, FAKE_GPU: \"Other GPU\"" "b2|2|3|200|2|, FAKE_GPU: \"Other GPU\"" \
	"c3|3|1|300|2|, FAKE_GPU: \"Other GPU\"" "d4|1|4|400|2|, FAKE_GPU: \"Other GPU\"" \
	"e5|2|2|500|2|, FAKE_GPU: \"Other GPU\"" "f6|1|1|600|2|, FAKE_GPU: \"Other GPU\"" \
	"g7|3|2|700|2|, FAKE_GPU: \"Other GPU\""
run "$KGATE" run -c "$T/other.yaml" --shard 3/3 --balance count --db "$T/gpu3.db" --commit $C
run "$KGATE" merge --db "$T/mm.db" --commit $C "$T/part1.db" "$T/part2.db" "$T/gpu3.db"
is "$rc" 2 "shards of two GPU models: refused"
like "$err" "Synthetic GPU.*Other GPU.*differ in their GPU model" "it names both"
is "$(sqlite3 "$T/mm.db" "SELECT count(*) FROM runs")" 0 "nothing stored"
run "$KGATE" merge --db "$T/mm.db" --commit $C "$T/part1.db" "$T/part2.db" "$T/gpu2.db" "$T/part3.db"
is "$rc" 0 "a shard stored twice (a job run again): merged"
like "$err" "shard 2/3 is stored twice: run 1 of '.*part2.db' and run 1 of '.*gpu2.db' \(the same samples\); taking the newer" \
	"and said"
run "$KGATE" merge --db "$T/mm.db" --commit 5555555555555555555555555555555555555555 "$T/part1.db"
is "$rc" 2 "no shard of the commit: refused"
like "$err" "no shard of commit 555555555555 is stored in the 1 part database given" "it says so"

# --- PostgreSQL: every shard writes to the one database ----------------------
if ! pg_start; then
	skip "$PG_WHY"
	done_testing
	exit
fi
pg_createdb fleet
P=$(pg_url fleet)
for i in 3 1 2; do
	"$KGATE" run --shard $i/3 --balance count --db "$P" --commit $C --branch main >/dev/null 2>"$T/pg$i.err" &
done
wait
is "$(pg_psql fleet "SELECT string_agg(status, ',' ORDER BY status) FROM runs")" \
	"shard 1/3,shard 2/3,shard 3/3" "three shards written at once into PostgreSQL"
run "$KGATE" check --db "$P" --commit $C
is "$rc" 2 "check of a shard in PostgreSQL: refused"
run "$KGATE" merge --db "$P" --commit $C --format json
is "$rc" 0 "merge from the database itself"
like "$out" '"shards":3' "three shards"
ID=$(pg_psql fleet "SELECT id FROM runs WHERE status = 'ok'")
pgsamples() {
	pg_psql fleet "SELECT benchmark, nvtx, kernel, metric, repeat, ordinal, value FROM samples_named
		       WHERE run = $ID" | tr '|' '|' | LC_ALL=C sort
}
is "$(pgsamples | wc -l)" "$(samples "$T/full.db" 1 | wc -l)" "PostgreSQL: as many samples as the unsharded run"
"$KGATE" db copy "$P" "$T/back.db" 2>/dev/null
BK=$(sqlite3 "$T/back.db" "SELECT id FROM runs WHERE status = 'ok'")
is "$(samples "$T/back.db" "$BK" | cksum)" "$(samples "$T/full.db" 1 | cksum)" \
	"PostgreSQL: the merged run holds the unsharded run's samples"
done_testing
