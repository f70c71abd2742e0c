#!/bin/sh
# restore.t: scripts/restore-db.py, which the GitHub Action runs when the
# Actions cache holds no database: the newest unexpired artifact of a push
# run of the default branch, downloaded and its database written.
#
# GitHub is played by httpd.py on 127.0.0.1; its API answers are SYNTHETIC,
# in the shape GitHub's REST API documents for "List workflow runs for a
# repository", "List workflow run artifacts" and "Download an artifact" (a
# 302 to a signed URL).  The network is never reached.
. "$(dirname "$0")/lib.sh"

PY=$(command -v python3)
if [ -z "$PY" ]; then
	echo "1..0 # SKIP no python3"
	exit 0
fi
HTTPD="$KGATE_SRC/tests/e2e/httpd.py"
RESTORE="$KGATE_SRC/scripts/restore-db.py"
TOKEN=s3cret-token-value

# a database to put in the artifacts, from the recorded H200 suite
S="$SHARED_FIX/suite/trace"
set -- $(for f in "$S/base"/*.0.*.jsonl; do n=$(basename "$f"); printf -- '--benchmark %s --records %s ' "${n%%.*}" "$f"; done)
"$KGATE" ingest --db "$T/hist.db" --commit 1111111111111111111111111111111111111111 "$@" 2>/dev/null
ok "a database to restore" test -s "$T/hist.db"
sqlite3 "$T/hist.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null

# zipdir ZIP MEMBER=FILE...: an archive as upload-artifact writes one
zipdir() {
	z=$1; shift
	$PY - "$z" "$@" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for m in sys.argv[2:]:
        name, path = m.split("=", 1)
        z.write(path, name)
EOF
}
echo "<html>synthetic report</html>" >"$T/report.html"
zipdir "$T/a31.zip" "proj/proj/kgate.db=$T/hist.db" "_temp/kgate-report.html=$T/report.html"
zipdir "$T/a21.zip" "kgate.db=$T/report.html"
zipdir "$T/a11.zip" "_temp/kgate-report.html=$T/report.html"
printf 'not a zip' >"$T/bad.zip"

# run_json ID BRANCH EVENT CREATED: a workflow run (SYNTHETIC, GitHub's shape)
run_json() {
	printf '{"id": %s, "name": "pr", "node_id": "WFR_synthetic%s", "head_branch": "%s", "head_sha": "%040d", "path": ".github/workflows/pr.yml", "run_number": %s, "event": "%s", "status": "completed", "conclusion": "success", "workflow_id": 7, "url": "https://api.github.example/repos/acme/proj/actions/runs/%s", "created_at": "%s", "updated_at": "%s", "repository": {"id": 42, "full_name": "acme/proj"}, "head_repository": {"id": 42, "full_name": "acme/proj"}}' \
		"$1" "$1" "$2" "$1" "$1" "$3" "$1" "$4" "$4"
}
# art_json ID NAME RUN EXPIRED: an artifact (SYNTHETIC, GitHub's shape)
art_json() {
	printf '{"id": %s, "node_id": "MDg6QXJ0aWZhY3Q%s", "name": "%s", "size_in_bytes": 4096, "url": "https://api.github.example/repos/acme/proj/actions/artifacts/%s", "archive_download_url": "https://api.github.example/repos/acme/proj/actions/artifacts/%s/zip", "expired": %s, "created_at": "2026-11-0%sT10:00:00Z", "expires_at": "2026-12-0%sT10:00:00Z", "updated_at": "2026-11-0%sT10:00:00Z", "workflow_run": {"id": %s, "repository_id": 42, "head_repository_id": 42, "head_branch": "main", "head_sha": "%040d"}}' \
		"$1" "$1" "$2" "$1" "$1" "$4" "${3%?}" "${3%?}" "${3%?}" "$3" "$3"
}
start_server() { # SCRIPT-JSON
	printf '%s\n' "$1" >"$T/script.json"
	LOG="$T/log.$_n.jsonl"
	rm -f "$T/port"
	: >"$LOG"
	$PY "$HTTPD" "$T/script.json" "$LOG" "$T/port" &
	SRV=$!
	i=0
	while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	URL="http://127.0.0.1:$(cat "$T/port")"
}
stop_server() { kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; }
trap 'stop_server; rm -rf "$T"' EXIT
reqs() { $PY -c 'import json,sys
for l in open(sys.argv[1]): r=json.loads(l); print(r["method"], r["path"] + ("?" + r["query"] if r["query"] else ""), "auth=" + ("yes" if "Authorization" in r["headers"] else "no"))' "$LOG"; }
restore() { # OUT [args]
	o=$1; shift
	run env GITHUB_TOKEN="$TOKEN" GITHUB_API_URL="$URL" "$PY" "$RESTORE" --repo acme/proj \
		--branch main --artifact 'kgate-{run_id}-gate' --file kgate.db --out "$o" "$@"
}

# The newest push run of main (31) has the artifact; a newer pull request
# run (41, branch "main" of a fork) and a push to another branch (35) do not
# count; 21's artifact holds no database, 11's has none either.
RUNS="[$(run_json 41 main pull_request 2026-11-05T10:00:00Z), $(run_json 35 dev push 2026-11-04T10:00:00Z), $(run_json 31 main push 2026-11-03T10:00:00Z), $(run_json 21 main push 2026-11-02T10:00:00Z), $(run_json 11 main push 2026-11-01T10:00:00Z)]"
ARTS="{\"41\": [$(art_json 410 kgate-41-gate 41 false)], \"35\": [$(art_json 350 kgate-35-gate 35 false)], \"31\": [$(art_json 310 kgate-31-gate 31 false), $(art_json 311 kgate-31-other 31 false)], \"21\": [$(art_json 210 kgate-21-gate 21 false)], \"11\": [$(art_json 110 kgate-11-gate 11 false)]}"
ZIPS="{\"410\": \"$T/a21.zip\", \"350\": \"$T/a21.zip\", \"310\": \"$T/a31.zip\", \"311\": \"$T/a21.zip\", \"210\": \"$T/a21.zip\", \"110\": \"$T/a11.zip\"}"
start_server "{\"token\": \"$TOKEN\", \"actions\": {\"runs\": $RUNS, \"artifacts\": $ARTS, \"zips\": $ZIPS}}"
restore "$T/out.db"
is "$rc" 0 "restored"
ok "the database written is the artifact's" cmp "$T/out.db" "$T/hist.db"
like "$err" "restored '.*out.db' \([0-9]+ bytes\) from artifact kgate-31-gate of run 31" "it says from where"
is "$(reqs | sed -n 1p | sed 's/&per_page=[0-9]*//')" \
	"GET /repos/acme/proj/actions/runs?branch=main&event=push&status=completed&exclude_pull_requests=true auth=yes" \
	"it asks for the completed push runs of the branch"
is "$(reqs | sed -n 2p)" "GET /repos/acme/proj/actions/runs/31/artifacts?name=kgate-31-gate auth=yes" \
	"then the newest such run's artifact by name"
is "$(reqs | sed -n 3p)" "GET /repos/acme/proj/actions/artifacts/310/zip auth=yes" "then its archive"
is "$(reqs | sed -n 4p)" "GET /blob/310?sig=synthetic auth=no" "the signed URL fetched without the token"
unlike "$err" "$TOKEN" "the token is never printed"
run "$KGATE" stats --db "$T/out.db" --commit 111111111111 --report kernel_sum --format json
is "$rc" 0 "kgate reads the restored database"

restore "$T/out.db"
is "$rc" 2 "an existing database is never replaced"
ok "and is left as it was" cmp "$T/out.db" "$T/hist.db"
stop_server

# 31's artifact expired: 21's holds no SQLite database (a report named
# kgate.db): refused, nothing written
ARTS2=$(printf '%s' "$ARTS" | sed 's/"expired": false, "created_at": "2026-11-03/"expired": true, "created_at": "2026-11-03/g')
start_server "{\"token\": \"$TOKEN\", \"actions\": {\"runs\": $RUNS, \"artifacts\": $ARTS2, \"zips\": $ZIPS}}"
restore "$T/x.db"
is "$rc" 3 "an artifact whose kgate.db is no database: exit 3"
like "$err" "'kgate.db' in artifact kgate-21-gate is not an SQLite database; nothing restored" "said"
ok "nothing written" test ! -e "$T/x.db"
unlike "$(reqs)" "artifacts/310/zip" "the expired artifact is not downloaded"
stop_server

# only run 11, whose artifact holds no kgate.db: nothing to restore
start_server "{\"token\": \"$TOKEN\", \"actions\": {\"runs\": [$(run_json 11 main push 2026-11-01T10:00:00Z)], \"artifacts\": $ARTS, \"zips\": $ZIPS}}"
restore "$T/x.db"
is "$rc" 1 "no artifact with the database: exit 1"
like "$err" "holds no 'kgate.db'; trying an older run" "it says what it skipped"
like "$err" "nothing restored" "and that nothing was restored"
ok "nothing written" test ! -e "$T/x.db"
stop_server

# no runs at all (a new repository)
start_server "{\"token\": \"$TOKEN\", \"actions\": {\"runs\": []}}"
restore "$T/x.db"
is "$rc" 1 "no runs: exit 1"
stop_server

# a broken archive
start_server "{\"token\": \"$TOKEN\", \"actions\": {\"runs\": $RUNS, \"artifacts\": $ARTS, \"zips\": {\"310\": \"$T/bad.zip\"}}}"
restore "$T/x.db"
is "$rc" 3 "a broken archive: exit 3"
like "$err" "not a zip archive" "said"
ok "nothing written" test ! -e "$T/x.db"
restore "$T/x.db" --max-bytes 100
is "$rc" 3 "an archive over --max-bytes: exit 3"
stop_server

# the API refuses (a token without actions: read), or fails
start_server "{\"token\": \"$TOKEN\", \"actions\": {\"runs\": $RUNS}, \"faults\": [{\"path\": \"/repos/\", \"status\": 403, \"body\": \"{\\\"message\\\": \\\"Resource not accessible by integration\\\"}\"}]}"
restore "$T/x.db"
is "$rc" 3 "the API refuses: exit 3"
like "$err" "HTTP 403" "with the status"
unlike "$err" "$TOKEN" "and no token"
ok "nothing written" test ! -e "$T/x.db"
stop_server
run env GITHUB_TOKEN="$TOKEN" GITHUB_API_URL="http://127.0.0.1:9" "$PY" "$RESTORE" --repo acme/proj \
	--branch main --artifact 'kgate-{run_id}-gate' --file kgate.db --out "$T/x.db"
is "$rc" 3 "no server: exit 3"
done_testing
