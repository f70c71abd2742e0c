#!/bin/sh
# pg.t: the PostgreSQL store against a real server (tests/e2e/pg.sh starts
# one on a Unix socket in the scratch directory and stops it at exit).
# The same records ingested into SQLite and into PostgreSQL give the same
# verdict JSON, stats and report; 8 concurrent ingests lose no run; the
# server stopped during a write leaves nothing partial (exit 3); a newer
# schema, a foreign database and wrong credentials are refused, and the
# password is never printed; KGATE_DB picks PostgreSQL; without libpq the
# error says so.
#
# Data: the H200 suite recorded in tests/fixtures/h200/suite (trace mode).
. "$(dirname "$0")/lib.sh"
. "$KGATE_SRC/tests/e2e/pg.sh"

if ! pg_start; then
	plan 1
	skip "$PG_WHY"
	exit 0
fi

S="$SHARED_FIX/suite/trace"
B=1111111111111111111111111111111111111111
H=2222222222222222222222222222222222222222
ingest() { # db commit side [benchmark...]
	db=$1 c=$2 side=$3
	shift 3
	[ $# -eq 0 ] && set -- $(for f in "$S/$side"/*.0.*.jsonl; do n=$(basename "$f"); echo "${n%%.*}"; done)
	set -- $(for n in "$@"; do for f in "$S/$side/$n".*.jsonl; do printf -- '--benchmark %s --records %s ' "$n" "$f"; done; done)
	${EXEC:-} "$KGATE" ingest --db "$db" --commit "$c" --branch main "$@"
}

pg_createdb same
P=$(pg_url same)
Q="$T/same.db"

# --- the same records, the same answers -------------------------------------
run ingest "$P" "$B" base
is "$rc" 0 "ingest into PostgreSQL"
like "$err" "stored run 1 \\(commit 111111111111, 9 benchmarks" "it says what it stored"
ingest "$P" "$H" head 2>/dev/null
ingest "$Q" "$B" base 2>/dev/null
ingest "$Q" "$H" head 2>/dev/null
is "$(pg_psql same "SELECT count(*) FROM samples")" "$(sqlite3 "$Q" "SELECT count(*) FROM samples")" \
	"as many samples in PostgreSQL as in SQLite"
is "$(pg_psql same "SELECT version FROM kgate_schema")" "$(sqlite3 "$Q" "PRAGMA user_version")" \
	"the same schema version"
"$KGATE" check --db "$P" --commit "$H" --baseline "$B" --format json >"$T/p.json" 2>"$T/p.err"
prc=$?
"$KGATE" check --db "$Q" --commit "$H" --baseline "$B" --format json >"$T/q.json" 2>"$T/q.err"
qrc=$?
is "$prc" "$qrc" "check: the same exit status from both ($qrc)"
ok "check: a verdict at all" test -s "$T/q.json"
ok "check --format json: identical verdict JSON from PostgreSQL and SQLite" cmp "$T/p.json" "$T/q.json"
is "$(pg_psql same "SELECT count(*) FROM verdicts")" "$(sqlite3 "$Q" "SELECT count(*) FROM verdicts")" \
	"the check's verdicts stored alike"
for r in kernel_sum nvtx_sum; do
	"$KGATE" stats --db "$P" --commit "$H" --report $r --format json >"$T/ps.json" 2>/dev/null
	"$KGATE" stats --db "$Q" --commit "$H" --report $r --format json >"$T/qs.json" 2>/dev/null
	ok "stats --report $r: identical" cmp "$T/ps.json" "$T/qs.json"
done
run "$KGATE" comment --db "$P" --commit "$H" --print
pc=$out
run "$KGATE" comment --db "$Q" --commit "$H" --print
is "$pc" "$out" "comment --print: the stored check reads alike"
run "$KGATE" report --db "$P" --html "$T/p.html"
is "$rc" 0 "report from PostgreSQL"
"$KGATE" report --db "$Q" --html "$T/q.html" 2>/dev/null
# each page's script nonce is drawn at random: the pages alike but for it
for f in p q; do sed 's/nonce[-=]"\{0,1\}[0-9a-f]*/nonce/g' "$T/$f.html" >"$T/$f.nononce.html"; done
ok "report: the same page as from SQLite (but for the script's nonce)" cmp "$T/p.nononce.html" "$T/q.nononce.html"
run env KGATE_DB="$P" "$KGATE" stats --commit "$H" --report nvtx_sum --format json
ok "KGATE_DB names the PostgreSQL database" cmp "$T/.out" "$T/qs.json"

# --- each run's points (schema 7) --------------------------------------------
is "$(pg_psql same "SELECT count(*) FROM run_points")" 2 "each run's points stored with it"
pg_psql same "UPDATE samples SET value = value * 1 WHERE run = 1" >/dev/null
is "$(pg_psql same "SELECT string_agg(run::text, ',') FROM run_points")" 2 \
	"an UPDATE of run 1's samples voids its points"
"$KGATE" report --db "$P" --html "$T/p2.html" 2>/dev/null
sed 's/nonce[-=]"\{0,1\}[0-9a-f]*/nonce/g' "$T/p2.html" >"$T/p2.nononce.html"
ok "report: the same page, run 1 read sample by sample" cmp "$T/p2.nononce.html" "$T/q.nononce.html"
pg_psql same "DROP TABLE run_points; DROP TRIGGER samples_update_points ON samples;
	DROP TRIGGER samples_delete_points ON samples; DROP TRIGGER samples_truncate_points ON samples;
	DROP FUNCTION kgate_points_void_update(); DROP FUNCTION kgate_points_void_delete();
	DROP FUNCTION kgate_points_void_all(); UPDATE kgate_schema SET version = 6" >/dev/null
E=3333333333333333333333333333333333333333
ingest "$P" "$E" head stream_triad 2>/dev/null
ingest "$Q" "$E" head stream_triad 2>/dev/null
is "$(pg_psql same "SELECT version FROM kgate_schema") $(pg_psql same "SELECT count(*) FROM run_points")" \
	"7 3" "schema 6 migrated to 7: the points of the 2 runs before and of the new one"
"$KGATE" report --db "$P" --html "$T/p3.html" 2>/dev/null
"$KGATE" report --db "$Q" --html "$T/q3.html" 2>/dev/null
for f in p3 q3; do sed 's/nonce[-=]"\{0,1\}[0-9a-f]*/nonce/g' "$T/$f.html" >"$T/$f.nononce.html"; done
ok "report: the same page as from SQLite" cmp "$T/p3.nononce.html" "$T/q3.nononce.html"

# --- 8 writers at once -------------------------------------------------------
pg_createdb many
M=$(pg_url many)
N=${KGATE_PG_RUNS:-20}   # KGATE_PG_RUNS=100: the full fault test
for w in 1 2 3 4 5 6 7 8; do
	(
		i=0
		while [ $i -lt $N ]; do
			c=$(printf '%08d%032d' "$w" "$i")
			ingest "$M" "$c" base matmul_naive stream_triad 2>>"$T/w$w.err" || echo "fail $w $i" >>"$T/w.fail"
			i=$((i + 1))
		done
	) &
done
wait
ok "8 concurrent ingests of $N runs each: none failed" test ! -e "$T/w.fail"
[ -e "$T/w.fail" ] && head -5 "$T"/w*.err | sed 's/^/# /'
is "$(pg_psql many "SELECT count(*) FROM runs")" $((8 * N)) "all $((8 * N)) runs stored"
per=$(pg_psql many "SELECT count(*) FROM samples WHERE run = (SELECT min(id) FROM runs)")
is "$(pg_psql many "SELECT count(DISTINCT run) || ' ' || count(*) FROM samples")" "$((8 * N)) $((8 * N * per))" \
	"every run with all its samples"
is "$(pg_psql many "SELECT count(*) FROM benchmarks")" 2 "each name interned once"

# --- the server stopped during a write ---------------------------------------
pg_createdb stop
SP=$(pg_url stop)
ingest "$SP" "$B" base 2>/dev/null
before=$(pg_psql stop "SELECT count(*) || ' ' || (SELECT count(*) FROM samples) FROM runs")
# a lock held on samples blocks the run's COPY: kgate is mid-write
psql -h "$PGSOCK" -U kgate -d stop -qAt -c "BEGIN; LOCK TABLE samples IN SHARE MODE; SELECT pg_sleep(60)" \
	>/dev/null 2>&1 &
lockpid=$!
sleep 1
ingest "$SP" "$H" head >"$T/stop.out" 2>"$T/stop.err" &
kpid=$!
i=0
while [ $i -lt 100 ] && [ "$(pg_psql stop "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")" = 0 ]; do
	sleep 0.1
	i=$((i + 1))
done
ok "kgate is waiting inside its write" test $i -lt 100
pg_stop
wait $kpid
is "$?" 3 "the server stopped during a write: exit 3"
like "$(cat "$T/stop.err")" "^kgate: database 'postgresql:///stop.*': cannot " "with a clear error"
wait $lockpid 2>/dev/null
_pg "$PG_BIN/pg_ctl" -D "$PGDATA_DIR" -l "$PGDATA_DIR/server.log" -w start \
	-o "-c listen_addresses='' -k $PGSOCK -c fsync=off -c max_connections=60" >/dev/null 2>&1
is "$(pg_psql stop "SELECT count(*) || ' ' || (SELECT count(*) FROM samples) FROM runs")" "$before" \
	"nothing of the interrupted run is stored"
# SIGKILL in the same place: the server rolls the run back
before=$(pg_psql stop "SELECT count(*) || ' ' || (SELECT count(*) FROM samples) FROM runs")
psql -h "$PGSOCK" -U kgate -d stop -qAt -c "BEGIN; LOCK TABLE samples IN SHARE MODE; SELECT pg_sleep(60)" \
	>/dev/null 2>&1 &
lockpid=$!
sleep 1
EXEC=exec ingest "$SP" "$H" head >/dev/null 2>&1 &   # $! is kgate
kpid=$!
i=0
while [ $i -lt 100 ] && [ "$(pg_psql stop "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")" = 0 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -9 $kpid
wait $kpid
is "$?" 137 "kgate killed (SIGKILL) inside its write"
pg_psql stop "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()" >/dev/null
wait $lockpid 2>/dev/null
is "$(pg_psql stop "SELECT count(*) || ' ' || (SELECT count(*) FROM samples) FROM runs")" "$before" \
	"nothing of the killed run is stored"
run ingest "$SP" "$H" head
is "$rc" 0 "the next ingest stores it"

# --- a newer schema, a foreign database --------------------------------------
pg_psql stop "UPDATE kgate_schema SET version = 99" >/dev/null
run ingest "$SP" "$B" base
is "$rc" 3 "a schema newer than kgate: exit 3"
like "$err" "database schema version 99 is newer than this kgate understands" "and says so, as for SQLite"
is "$(pg_psql stop "SELECT version FROM kgate_schema")" 99 "the database is left untouched"
pg_createdb foreign
pg_psql foreign "CREATE TABLE t (x int)" >/dev/null
run ingest "$(pg_url foreign)" "$B" base
is "$rc" 3 "a database of other tables is refused"
is "$(pg_psql foreign "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")" 1 "and not written"

# --- credentials ---------------------------------------------------------------
pg_createdb pw
run ingest "$(pg_url pw kgpw Wrong-secret-9)" "$B" base
is "$rc" 3 "wrong password: exit 3"
like "$err" "password authentication failed" "libpq's reason is given"
unlike "$err$out" "Wrong-secret-9" "the password is never printed"
like "$err" "kgpw:\\*\\*\\*@" "the URL is shown with its password hidden"
run "$KGATE" stats --db "postgresql:///pw?host=$PGSOCK&user=kgpw&password=Wrong-secret-9" --report kernel_sum
unlike "$err$out" "Wrong-secret-9" "nor a password= parameter"
run ingest "$(pg_url pw kgpw Sekr1t-pw)" "$B" base
is "$rc" 0 "the right password is taken"
unlike "$err" "Sekr1t-pw" "and not printed either"

# --- without libpq ---------------------------------------------------------------
run env KGATE_LIBPQ=libpq-absent.so.5 "$KGATE" stats --db "$(pg_url pw kgpw Sekr1t-pw)" --report kernel_sum
is "$rc" 3 "libpq missing: exit 3"
like "$err" "^kgate: cannot open 'postgresql://kgpw:\\*\\*\\*@/pw.*': libpq-absent.so.5 is not installed" \
	"a clear error, without the password"
done_testing
