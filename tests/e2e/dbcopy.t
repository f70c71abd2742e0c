#!/bin/sh
# dbcopy.t: "kgate db copy FROM TO" between SQLite files and through a real
# PostgreSQL server (tests/e2e/pg.sh): a round trip SQLite -> PostgreSQL ->
# SQLite gives the same runs, samples, GPU states and check JSON; runs
# already there are skipped and counted; a run of the same identity with
# other samples is a conflict, reported and not copied; --dry-run writes
# nothing; two SQLite files merge into one.
#
# Data: the H200 suite recorded in tests/fixtures/h200/suite (trace mode),
# and a run of the SYNTHETIC test-double benchmarks (fakebench.sh) with the
# SYNTHETIC NVML stand-in (tests/nvml), for the GPU states.
. "$(dirname "$0")/lib.sh"
. "$KGATE_SRC/tests/e2e/pg.sh"
. "$KGATE_SRC/tests/e2e/fakebench.sh"

S="$SHARED_FIX/suite/trace"
B=1111111111111111111111111111111111111111
H=2222222222222222222222222222222222222222
R=3333333333333333333333333333333333333333
ingest() { # db commit side
	db=$1 c=$2 side=$3
	set -- $(for f in "$S/$side"/*.jsonl; do n=$(basename "$f"); printf -- '--benchmark %s --records %s ' "${n%%.*}" "$f"; done)
	"$KGATE" ingest --db "$db" --commit "$c" --branch main "$@" >/dev/null 2>&1
}
A="$T/a.db"
ingest "$A" $B base
ingest "$A" $H head
suite "$T/kgate.yaml" "alpha|2|3|100" "beta|1|2|200"
KGATE_NVML_LIBRARY="$KGATE_BUILD/tests/libnvml-double.so" \
	"$KGATE" run --db "$A" --commit $R --branch main >/dev/null 2>&1
"$KGATE" check --db "$A" --commit $H --baseline $B --format json >"$T/a.json" 2>/dev/null
ok "the source's check gives a verdict" test -s "$T/a.json"
like "$(sqlite3 "$A" "SELECT gpu_state FROM run_benchmarks WHERE run = 3 LIMIT 1")" '"sm_mhz_max":' \
	"the source holds GPU states (from the NVML stand-in)"

# what a database holds, whatever its ids: runs, samples, GPU states
runs_of() { sqlite3 "$1" "SELECT commit_sha, branch, parent, time, host, gpu_name, gpu_uuid, gpu_chip,
	driver, cuda, collector, config_hash, source, label, ci_url, status FROM runs ORDER BY time, id"; }
samples_of() { sqlite3 "$1" "SELECT r.commit_sha, s.benchmark, s.nvtx, s.kernel, s.demangled, s.base,
	s.metric, s.unit, s.deterministic, s.repeat, s.ordinal, s.value FROM samples_named s
	JOIN runs r ON r.id = s.run" | LC_ALL=C sort | cksum; }
states_of() { sqlite3 "$1" "SELECT r.commit_sha, b.name, x.gpu_state FROM run_benchmarks x
	JOIN runs r ON r.id = x.run JOIN benchmarks b ON b.id = x.benchmark" | LC_ALL=C sort; }

# --- usage ---------------------------------------------------------------------
run "$KGATE" db
is "$rc" 2 "db without a subcommand: usage error"
run "$KGATE" db move "$A" "$T/b.db"
is "$rc" 2 "an unknown subcommand: usage error"
like "$err" "'move' is not a 'kgate db' subcommand" "it says so"
run "$KGATE" db copy "$A"
is "$rc" 2 "copy with one database: usage error"
run "$KGATE" db copy "$A" "sqlite:$A"
is "$rc" 2 "FROM and TO the same database: refused"
run "$KGATE" db copy "$T/none.db" "$T/b.db"
ok "a FROM that does not exist: an error" test "$rc" -ne 0
ok "and TO is not created" test ! -e "$T/b.db"

# --- SQLite to SQLite ------------------------------------------------------------
run "$KGATE" db copy --dry-run --format json "$A" "$T/b.db"
is "$rc" 0 "--dry-run"
like "$out" '"dry_run":true,"runs":3,"copied":3' "--dry-run: it would copy three runs"
ok "--dry-run: TO is not created" test ! -e "$T/b.db"
run "$KGATE" db copy "$A" "$T/b.db"
is "$rc" 0 "copy into a new SQLite file"
like "$err" "copied 3 of 3 runs \([0-9]+ samples\); 0 duplicates skipped; 0 conflicts" "the summary on stderr"
is "$(runs_of "$T/b.db")" "$(runs_of "$A")" "the runs, field for field"
is "$(samples_of "$T/b.db")" "$(samples_of "$A")" "every sample, with its names, repeat and ordinal"
is "$(states_of "$T/b.db")" "$(states_of "$A")" "every benchmark's GPU state"
"$KGATE" check --db "$T/b.db" --commit $H --baseline $B --format json >"$T/b.json" 2>/dev/null
ok "the copy's check JSON is the source's" cmp "$T/a.json" "$T/b.json"
before=$(sqlite3 "$T/b.db" .dump | cksum)
run "$KGATE" db copy --format json "$A" "$T/b.db"
is "$rc" 0 "copying again"
like "$out" '"copied":0,"samples":0,"duplicates":3' "every run a duplicate, counted"
is "$(sqlite3 "$T/b.db" .dump | cksum)" "$before" "and nothing written"

# two files merged into one: each with a run the other lacks, and one shared
"$KGATE" db copy "$A" "$T/c.db" 2>/dev/null
ingest "$T/c.db" 4444444444444444444444444444444444444444 head
ingest "$T/d.db" 5555555555555555555555555555555555555555 base
"$KGATE" db copy "$T/c.db" "$T/d.db" 2>/dev/null
run "$KGATE" db copy --format json "$T/b.db" "$T/d.db"
is "$rc" 0 "merging a file that shares runs with TO"
like "$out" '"runs":3,"copied":0,"samples":0,"duplicates":3' "the shared runs skipped"
is "$(sqlite3 "$T/d.db" "SELECT count(*) FROM runs")" 5 "TO holds the union: 5 runs"

# a conflict: the same run with one value changed (a SYNTHETIC edit)
cp "$A" "$T/e.db"
sqlite3 "$T/e.db" "UPDATE samples SET value = value * 2 WHERE id = (SELECT min(id) FROM samples WHERE run = 2)"
before=$(sqlite3 "$T/b.db" .dump | cksum)
run "$KGATE" db copy --dry-run --format json "$T/e.db" "$T/b.db"
is "$rc" 2 "--dry-run: a conflict is exit 2"
run "$KGATE" db copy --format json "$T/e.db" "$T/b.db"
is "$rc" 2 "a conflict: exit 2"
like "$err" "run 2 of '.*e.db' \(commit 222222222222\) conflicts with run 2 of '.*b.db': the same identity, other samples; not copied" \
	"the conflict named, with both runs"
like "$out" '"duplicates":2,.*"conflicts":\[\{"from":2,"to":2,"commit":"2222' "and in the JSON"
is "$(sqlite3 "$T/b.db" .dump | cksum)" "$before" "the conflicting run is not copied"

# killed mid-copy (SIGKILL): TO holds whole runs only, and copying again
# completes it without a duplicate
i=0
while [ $i -lt 8 ]; do
	ingest "$T/many.db" "$(printf '9%039d' $i)" head
	i=$((i + 1))
done
killed_copy() { # TO: kill -9 a copy of many.db into TO after a moment
	"$KGATE" db copy "$T/many.db" "$1" 2>/dev/null &
	p=$!
	sleep 0.3
	kill -9 $p 2>/dev/null
	wait $p 2>/dev/null
}
killed_copy "$T/k.db"
whole=$(sqlite3 "$T/many.db" "SELECT count(*) FROM samples WHERE run = 1")
is "$(sqlite3 "$T/k.db" "SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM samples s WHERE s.run = r.id) <> $whole" 2>/dev/null || echo 0)" 0 \
	"SQLite, killed mid-copy: every run there is whole ($(sqlite3 "$T/k.db" "SELECT count(*) FROM runs" 2>/dev/null || echo 0) of 8 copied)"
run "$KGATE" db copy "$T/many.db" "$T/k.db"
is "$rc" 0 "copying again after the kill"
is "$(runs_of "$T/k.db")" "$(runs_of "$T/many.db")" "then every run once"

# --- SQLite -> PostgreSQL -> SQLite ------------------------------------------------
if ! pg_start; then
	skip "$PG_WHY"
	done_testing
	exit
fi
pg_createdb trip
P=$(pg_url trip)
run "$KGATE" db copy "$A" "$P"
is "$rc" 0 "SQLite to PostgreSQL"
like "$err" "copied 3 of 3 runs" "three runs"
is "$(pg_psql trip "SELECT b.name || '|' || x.gpu_state FROM run_benchmarks x JOIN benchmarks b
	ON b.id = x.benchmark WHERE x.gpu_state IS NOT NULL ORDER BY 1")" \
	"$(sqlite3 "$A" "SELECT b.name || '|' || x.gpu_state FROM run_benchmarks x JOIN benchmarks b
	ON b.id = x.benchmark WHERE x.gpu_state IS NOT NULL ORDER BY 1")" \
	"the GPU states stored in PostgreSQL as in SQLite"
"$KGATE" check --db "$P" --commit $H --baseline $B --format json >"$T/p.json" 2>/dev/null
ok "PostgreSQL's check JSON is the source's" cmp "$T/a.json" "$T/p.json"
"$KGATE" stats --db "$P" --commit $R --report gpu_state --format json >"$T/ps.json" 2>/dev/null
"$KGATE" stats --db "$A" --commit $R --report gpu_state --format json >"$T/as.json" 2>/dev/null
ok "stats --report gpu_state from PostgreSQL is the source's" cmp "$T/as.json" "$T/ps.json"
run "$KGATE" db copy --format json "$A" "$P"
like "$out" '"copied":0,"samples":0,"duplicates":3' "PostgreSQL: copying again skips every run"
run "$KGATE" db copy "$P" "$T/back.db"
is "$rc" 0 "PostgreSQL back to SQLite"
is "$(runs_of "$T/back.db")" "$(runs_of "$A")" "round trip: the runs, field for field"
is "$(samples_of "$T/back.db")" "$(samples_of "$A")" "round trip: every sample"
is "$(states_of "$T/back.db")" "$(states_of "$A")" "round trip: every GPU state (schema 5)"
"$KGATE" check --db "$T/back.db" --commit $H --baseline $B --format json >"$T/back.json" 2>/dev/null
ok "round trip: the check JSON is identical" cmp "$T/a.json" "$T/back.json"
pg_createdb killed
K=$(pg_url killed)
killed_copy "$K"
is "$(pg_psql killed "SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM samples s WHERE s.run = r.id) <> $whole" 2>/dev/null || echo 0)" 0 \
	"PostgreSQL, killed mid-copy: every run there is whole ($(pg_psql killed "SELECT count(*) FROM runs" 2>/dev/null || echo 0) of 8 copied)"
run "$KGATE" db copy "$T/many.db" "$K"
is "$rc" 0 "copying again after the kill"
is "$(pg_psql killed "SELECT count(*) FROM runs")" 8 "then every run once"
run "$KGATE" db copy --format json "$T/e.db" "$P"
is "$rc" 2 "a conflict with a run in PostgreSQL: exit 2"
like "$out" '"conflicts":\[\{"from":2,' "reported"
is "$(pg_psql trip "SELECT count(*) FROM runs")" 3 "and not copied"
done_testing
