# pg.sh: a real PostgreSQL server for a test (sourced after lib.sh).
#
#   pg_start || { skip...; }   initdb into $T/pgdata, pg_ctl start listening
#                              on a Unix socket in $T/pgsock only; stopped
#                              at exit.  Returns 1 (saying why in $PG_WHY)
#                              when the server binaries are not installed.
#   pg_url DB [USER [PASSWORD]]  the postgresql:// URL of database DB
#   pg_createdb DB             a new, empty database
#   pg_psql DB SQL             psql's unaligned, tuples-only answer
#   pg_stop                    stop the server (the fault tests)
#
# initdb refuses to run as root: then the server runs as an unprivileged
# user (added when missing), as procs.t runs kgate.  The superuser is
# "kgate" (trust over the socket); the role "kgpw" logs in by password
# (scram-sha-256), for the wrong-credentials test.
PG_BIN=""
for d in /usr/lib/postgresql/*/bin; do
	[ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && PG_BIN=$d
done
[ -z "$PG_BIN" ] && command -v initdb >/dev/null 2>&1 && PG_BIN=$(dirname "$(command -v initdb)")
PGDATA_DIR="$T/pgdata"
PGSOCK="$T/pgsock"
PG_USER_RUN=""
PG_WHY=""

_pg() { # run a server binary as the server's user
	if [ -n "$PG_USER_RUN" ]; then
		setpriv --reuid="$PG_USER_RUN" --regid="$(id -g "$PG_USER_RUN")" --clear-groups "$@"
	else
		"$@"
	fi
}

pg_start() {
	if [ -z "$PG_BIN" ] || ! command -v psql >/dev/null 2>&1; then
		PG_WHY="the PostgreSQL server is not installed (scripts/install-deps.sh installs it)"
		return 1
	fi
	if [ "$(id -u)" = 0 ]; then
		PG_USER_RUN=kgate-test-user
		id "$PG_USER_RUN" >/dev/null 2>&1 || useradd --system --no-create-home "$PG_USER_RUN" 2>/dev/null
		if ! id "$PG_USER_RUN" >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
			PG_WHY="running as root without useradd and setpriv (initdb refuses root)"
			return 1
		fi
		chmod 755 "$T"
	fi
	mkdir -p "$PGDATA_DIR" "$PGSOCK"
	[ -n "$PG_USER_RUN" ] && chown "$PG_USER_RUN" "$PGDATA_DIR" "$PGSOCK"
	if ! _pg "$PG_BIN/initdb" -D "$PGDATA_DIR" -U kgate --auth=trust -E UTF8 --no-locale \
		>"$T/initdb.log" 2>&1; then
		cat "$T/initdb.log" >&2
		PG_WHY="initdb failed"
		return 1
	fi
	cat > "$PGDATA_DIR/pg_hba.conf" <<HBA
local all kgpw scram-sha-256
local all all trust
HBA
	if ! _pg "$PG_BIN/pg_ctl" -D "$PGDATA_DIR" -l "$PGDATA_DIR/server.log" -w -t 60 start \
		-o "-c listen_addresses='' -k $PGSOCK -c fsync=off -c max_connections=60" >/dev/null 2>&1; then
		cat "$PGDATA_DIR/server.log" >&2
		PG_WHY="pg_ctl start failed"
		return 1
	fi
	trap 'pg_stop; rm -rf "$T"' EXIT
	psql -h "$PGSOCK" -U kgate -d postgres -qAt \
		-c "CREATE ROLE kgpw LOGIN PASSWORD 'Sekr1t-pw' SUPERUSER" >/dev/null
	return 0
}

pg_stop() {
	[ -f "$PGDATA_DIR/postmaster.pid" ] &&
		_pg "$PG_BIN/pg_ctl" -D "$PGDATA_DIR" -m immediate -w stop >/dev/null 2>&1
	return 0
}

pg_url() {
	if [ -n "${3:-}" ]; then
		echo "postgresql://${2}:${3}@/$1?host=$PGSOCK"
	else
		echo "postgresql:///$1?host=$PGSOCK&user=${2:-kgate}"
	fi
}

pg_createdb() { psql -h "$PGSOCK" -U kgate -d postgres -qAt -c "CREATE DATABASE \"$1\"" >/dev/null; }
pg_psql() { psql -h "$PGSOCK" -U kgate -d "$1" -qAt -c "$2"; }
