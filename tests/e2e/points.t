#!/bin/sh
# points.t: each run's points (schema 7: per series, the count, median,
# quartiles and range of its samples in the run, one blob a run): stored
# with every run; the trend report drawn from them alone is the page drawn
# from the samples; samples changed or removed with SQL void their runs'
# points; a database of schema 6 gets its runs' points from the migration.
# (PostgreSQL: pg.t.)
#
# Data: the H200 suite recorded in tests/fixtures/h200/suite (trace mode),
# each run one recorded repeat of every benchmark (base, then head).
. "$(dirname "$0")/lib.sh"
S="$SHARED_FIX/suite/trace"
DB="$T/p.db"
i=0
while [ $i -lt 10 ]; do
	side=base
	[ $i -ge 5 ] && side=head
	set --
	for f in "$S/$side"/*.$((i % 5)).*.jsonl; do
		n=$(basename "$f")
		set -- "$@" --benchmark "${n%%.*}" --records "$f"
	done
	"$KGATE" ingest --db "$DB" --commit "$(printf '%040d' $i)" --branch main "$@" 2>/dev/null ||
		echo "ingest $i failed"
	i=$((i + 1))
done
q() { sqlite3 "$1" "$2"; }
# the page less its script's nonce, drawn at random
page() { # db out
	"$KGATE" report --db "$1" --branch main --html "$2.raw" 2>/dev/null &&
		sed 's/nonce[-=]"\{0,1\}[0-9a-f]*/nonce/g' "$2.raw" >"$2"
}

is "$(q "$DB" "SELECT count(*) FROM runs")" 10 "10 runs stored"
is "$(q "$DB" "SELECT count(*) FROM run_points")" 10 "each with its points"
is "$(q "$DB" "PRAGMA application_id")" 1801937268 "the file's header says it is kgate's (\"kgat\")"
ok "the report from the stored points" page "$DB" "$T/a.html"
ok "the runs vary: a chart at all" grep -q 'class="chart' "$T/a.html"

# The points alone: the samples removed under the trigger that would void them.
cp "$DB" "$T/only.db"
q "$T/only.db" "DROP TRIGGER samples_delete_points; DELETE FROM samples"
is "$(q "$T/only.db" "SELECT (SELECT count(*) FROM samples) || ' ' || (SELECT count(*) FROM run_points)")" \
	"0 10" "a copy with the points and no samples"
ok "the report from the points alone" page "$T/only.db" "$T/only.html"
ok "draws the same page" cmp "$T/a.html" "$T/only.html"

# The samples alone: every run read sample by sample.
cp "$DB" "$T/none.db"
q "$T/none.db" "DELETE FROM run_points"
ok "the report from the samples alone" page "$T/none.db" "$T/none.html"
ok "draws the same page" cmp "$T/a.html" "$T/none.html"

# Samples changed with SQL void their run's points, and only those.
cp "$DB" "$T/upd.db"
q "$T/upd.db" "UPDATE samples SET value = value * 3 WHERE run = 8"
is "$(q "$T/upd.db" "SELECT group_concat(run) FROM (SELECT run FROM run_points ORDER BY run)")" \
	"1,2,3,4,5,6,7,9,10" "an UPDATE of run 8's samples voids its points"
ok "the report" page "$T/upd.db" "$T/upd.html"
q "$T/upd.db" "DELETE FROM run_points"
ok "the report from the samples alone" page "$T/upd.db" "$T/upd2.html"
ok "sees the change" test -n "$(cmp "$T/a.html" "$T/upd.html" 2>&1)"
ok "as the samples have it" cmp "$T/upd.html" "$T/upd2.html"
cp "$DB" "$T/del.db"
q "$T/del.db" "DELETE FROM samples WHERE run = 2 AND rowid % 2 = 0"
is "$(q "$T/del.db" "SELECT count(*) FROM run_points WHERE run = 2")" 0 \
	"a DELETE of some of run 2's samples voids its points"
q "$T/del.db" "DELETE FROM runs WHERE id = 10"
is "$(q "$T/del.db" "SELECT count(*) FROM run_points WHERE run = 10")" 0 \
	"a deleted run's points go with it"
q "$T/del.db" "DELETE FROM samples WHERE run = 10"
"$KGATE" ingest --db "$T/del.db" --commit "$(printf '%040d' 99)" --branch main \
	--benchmark stream_triad --records "$(ls "$S"/base/stream_triad.0.*.jsonl)" 2>/dev/null
is "$(q "$T/del.db" "SELECT max(id) FROM runs")" 10 "a new run takes the deleted run's id"
ok "the report" page "$T/del.db" "$T/del.html"
q "$T/del.db" "DELETE FROM run_points"
ok "the report from the samples alone" page "$T/del.db" "$T/del2.html"
ok "draws the same page: no points of the deleted run" cmp "$T/del.html" "$T/del2.html"

# A database of schema 6: the migration computes every run's points.
cp "$DB" "$T/v6.db"
q "$T/v6.db" "DROP TRIGGER samples_update_points; DROP TRIGGER samples_delete_points;
	DROP TRIGGER runs_delete_points; DROP TABLE run_points; PRAGMA application_id = 0;
	PRAGMA user_version = 6"
run "$KGATE" report --db "$T/v6.db" --branch main --html "$T/v6.html"
is "$rc" 3 "schema 6 read-only: refused, as before"
"$KGATE" ingest --db "$T/v6.db" --commit "$(printf '%040d' 99)" --branch other \
	--benchmark stream_triad --records "$(ls "$S"/base/stream_triad.0.*.jsonl)" 2>/dev/null
is "$(q "$T/v6.db" "PRAGMA user_version")" 7 "an ingest migrates it to 7"
is "$(q "$T/v6.db" "PRAGMA application_id")" 1801937268 "with the application id"
run "$KGATE" ingest --db "$T/x.db" --commit x "$T/v6.db"
like "$err" "this looks like a kgate database: give it as --db" "ingest tells it from an Nsight Systems export"
is "$(q "$T/v6.db" "SELECT count(*) FROM run_points")" 11 "with the points of the 10 runs before and the new one"
ok "the report" page "$T/v6.db" "$T/v6.html"
ok "draws the page of the points stored with each run" cmp "$T/a.html" "$T/v6.html"
done_testing
