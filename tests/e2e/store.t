#!/bin/sh
# store.t: which database a command opens.  A path, or sqlite: or file: and
# a path, is an SQLite file; KGATE_DB names the default database where --db
# is not given (else kgate.db in the working directory); a postgresql:// or
# postgres:// URL gets a clear error from a kgate built without PostgreSQL,
# as does a URL of a scheme kgate does not know, and neither prints the
# password the URL holds.
. "$(dirname "$0")/lib.sh"

REC="$FIX/records/good.jsonl"
runs() { sqlite3 "$1" "SELECT group_concat(commit_sha) FROM runs"; }

# --- SQLite, by path and by scheme ---
run "$KGATE" ingest --db "$T/a.db" --commit c1 --records "$REC"
is "$rc" 0 "a path: ingest exits 0"
is "$(runs "$T/a.db")" "c1" "a path: the run is stored in that file"
run "$KGATE" ingest --db "sqlite:$T/a.db" --commit c2 --records "$REC"
is "$rc" 0 "sqlite:PATH: ingest exits 0"
is "$(runs "$T/a.db")" "c1,c2" "sqlite:PATH: the run is stored in PATH"
run "$KGATE" ingest --db "file://$T/a.db" --commit c3 --records "$REC"
is "$rc" 0 "file:///abs/path: ingest exits 0"
is "$(runs "$T/a.db")" "c1,c2,c3" "file:///abs/path: the run is stored in /abs/path"
run "$KGATE" stats --db "sqlite:$T/a.db" --commit c3 --report kernel_sum
is "$rc" 0 "sqlite:PATH is read as well as written"
ok "no file named for the scheme was made" test ! -e "$T/sqlite:$T/a.db"

# --- the default database: KGATE_DB, else kgate.db ---
mkdir "$T/wd" && cd "$T/wd" || exit 2
run "$KGATE" ingest --commit d1 --records "$REC"
is "$rc" 0 "no --db, no KGATE_DB: ingest exits 0"
is "$(runs "$T/wd/kgate.db")" "d1" "no --db, no KGATE_DB: kgate.db in the working directory"
KGATE_DB="$T/env.db" run "$KGATE" ingest --commit e1 --records "$REC"
is "$rc" 0 "KGATE_DB: ingest exits 0"
is "$(runs "$T/env.db")" "e1" "KGATE_DB names the database"
is "$(runs "$T/wd/kgate.db")" "d1" "KGATE_DB: kgate.db untouched"
KGATE_DB="$T/env.db" run "$KGATE" stats --commit e1 --report kernel_sum
is "$rc" 0 "KGATE_DB is read by the reading commands too"
KGATE_DB="$T/env.db" run "$KGATE" ingest --db "$T/b.db" --commit b1 --records "$REC"
is "$(runs "$T/b.db"),$(runs "$T/env.db")" "b1,e1" "--db wins over KGATE_DB"
KGATE_DB= run "$KGATE" ingest --commit d2 --records "$REC"
is "$(runs "$T/wd/kgate.db")" "d1,d2" "an empty KGATE_DB is not set"
cd "$T" || exit 2

# --- PostgreSQL, not built in; unknown schemes ---
for url in "postgresql://kg:s3cr3tpw@db.example:5432/kgate" "postgres://kg:s3cr3tpw@localhost/kgate" \
	   "postgresql://kg@localhost/kgate?sslmode=require&password=s3cr3tpw"; do
	for cmd in "ingest --commit x --records $REC" "check --commit x --baseline y" \
		   "report --html $T/r.html" "stats --commit x --report kernel_sum"; do
		# shellcheck disable=SC2086
		run "$KGATE" $cmd --db "$url"
		name=${cmd%% *}
		is "$rc" 3 "$name --db ${url%%:*}://...: exit 3"
		like "$err" "^kgate: cannot open 'postgres(ql)?://kg(:\*\*\*)?@[^']*': this kgate was built without PostgreSQL support" \
			"$name --db ${url%%:*}://...: says PostgreSQL is not built in"
		unlike "$err" "s3cr3tpw" "$name --db ${url%%:*}://...: the password is not printed"
	done
done
KGATE_DB="postgresql://kg:s3cr3tpw@db.example/kgate" run "$KGATE" ingest --commit x --records "$REC"
is "$rc" 3 "KGATE_DB=postgresql://...: exit 3"
like "$err" "built without PostgreSQL support" "KGATE_DB=postgresql://...: the same error"
unlike "$err" "s3cr3tpw" "KGATE_DB=postgresql://...: the password is not printed"
run "$KGATE" ingest --db "mysql://kg:s3cr3tpw@db.example/kgate" --commit x --records "$REC"
is "$rc" 3 "an unknown scheme: exit 3"
like "$err" "^kgate: cannot open 'mysql://kg:\*\*\*@db.example/kgate': no database of scheme 'mysql'" \
	"an unknown scheme is said, not taken for a path"
unlike "$err" "s3cr3tpw" "an unknown scheme: the password is not printed"
ok "an unknown scheme: no file or directory made" test ! -e "$T/mysql:"

done_testing
