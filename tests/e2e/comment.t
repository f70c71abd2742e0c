#!/bin/sh
# comment.t: "kgate comment" against a loopback server (tests/e2e/httpd.py):
# methods, paths, headers and bodies, pagination, edit in place, retries on
# 5xx and rate limits, clear errors on 401/404, timeouts, reset connections,
# and the token absent from every output.
. "$(dirname "$0")/lib.sh"
HTTPD="$KGATE_SRC/tests/e2e/httpd.py"
PY=python3
TOKEN="ghp_kgateTestToken0123456789SECRET"
ALL="$T/all-output"
: >"$ALL"

# The database: the real ncu raw export of tests/fixtures/h200 as the base
# commit, and a copy with the strided kernel made 10% slower (ncu_scale.py)
# as the head; "kgate check" stores the verdicts the comment shows.  One
# stored message is then given a pipe, to test the escaping of table cells.
BASE=1111111111111111111111111111111111111111
HEAD=2222222222222222222222222222222222222222
DB="$T/k.db"
RAW="$SHARED_FIX/ncu_saxpy_strided_raw.csv"
python3 "$KGATE_SRC/tests/e2e/ncu_scale.py" "$RAW" "$T/slow.csv" strided gpu__time_duration.sum 1.10
"$KGATE" ingest --db "$DB" --commit $BASE --branch main --benchmark saxpy \
	--ncu-csv "$RAW" --ncu-csv "$RAW" 2>/dev/null
"$KGATE" ingest --db "$DB" --commit $HEAD --branch pr --benchmark saxpy \
	--ncu-csv "$T/slow.csv" --ncu-csv "$T/slow.csv" 2>/dev/null
"$KGATE" check --db "$DB" --commit $HEAD --baseline $BASE >/dev/null 2>&1
sqlite3 "$DB" "UPDATE verdicts SET message = 'stand-in verdict | for a test'
	WHERE id = (SELECT min(id) FROM verdicts WHERE verdict = 'pass')"
nv=$(sqlite3 "$DB" "SELECT count(*) FROM verdicts")
nfail=$(sqlite3 "$DB" "SELECT count(*) FROM verdicts WHERE verdict = 'fail'")
ok "the test database holds verdicts ($nv, $nfail fail)" test "$nv" -gt 0

# start_server SCRIPT-JSON: starts httpd.py, sets $URL, $LOG
start_server() {
	printf '%s\n' "$1" >"$T/script.json"
	LOG="$T/log.$_n.jsonl"
	rm -f "$T/port" "$LOG"
	: >"$LOG"
	$PY "$HTTPD" "$T/script.json" "$LOG" "$T/port" &
	SRV=$!
	i=0
	while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	URL="http://127.0.0.1:$(cat "$T/port")"
}
stop_server() { kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; }
trap 'stop_server; rm -rf "$T"' EXIT
# reqs: "METHOD PATH?QUERY" of each logged request
reqs() { $PY -c 'import json,sys
for l in open(sys.argv[1]): r=json.loads(l); print(r["method"], r["path"] + ("?" + r["query"] if r["query"] else ""))' "$LOG"; }
# field N KEY: header or body of the Nth request (1-based)
hdr() { $PY -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])][int(sys.argv[2])-1]
h={k.lower():v for k,v in r["headers"].items()}; print(h.get(sys.argv[3].lower(),""))' "$LOG" "$1" "$2"; }
body() { $PY -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])][int(sys.argv[2])-1]; print(r["body"])' "$LOG" "$1"; }
kc() { run env GITHUB_TOKEN="$TOKEN" GITHUB_API_URL="$URL" KGATE_HTTP_BACKOFF_MS=100 "$@"; cat "$T/.out" "$T/.err" >>"$ALL"; }

# --- usage and input errors
run "$KGATE" comment --db "$DB" --repo o/n --commit $HEAD
is "$rc" 2 "no --pr is a usage error"
run "$KGATE" comment --db "$DB" --repo 'bad repo' --pr 7 --commit $HEAD
is "$rc" 2 "an invalid --repo is a usage error"
run "$KGATE" comment --db "$DB" --repo o/n --pr 7 --commit 3333333
is "$rc" 2 "no stored check for the commit exits 2"
like "$err" "no check is stored for commit '3333333'" "and says so"

# --- the comment text
run "$KGATE" comment --db "$DB" --commit 2222222 --print
is "$rc" 0 "--print exits 0"
like "$out" '^<!-- kgate -->$' "the comment starts with the hidden marker"
like "$out" '^\| verdict \| benchmark \| kernel \| metric' "it holds the verdict table"
like "$out" "stand-in verdict &#124; for a test" "pipes in cells are escaped (&#124;: cannot end a cell)"
if [ "$nfail" -gt 0 ]; then like "$out" "kgate: .* FAIL: 1 regressed kernel \\($nfail failing comparison" "the headline counts the regressed kernel once, and the FAILs"
else like "$out" "kgate: no regression" "the headline says no regression"; fi

# --- first run: pages followed, then a new comment
start_server '{"token": "'$TOKEN'", "page_size": 2, "comments": {"7": [
 {"id": 1, "body": "first"}, {"id": 2, "body": "second"}, {"id": 3, "body": "third"},
 {"id": 4, "body": "fourth"}, {"id": 5, "body": "fifth"}]}}'
kc "$KGATE" comment --db "$DB" --repo o/n --pr 7 --commit $HEAD --status
is "$rc" 0 "the first run exits 0"
like "$err" "created the kgate comment on o/n#7" "it says it created the comment"
is "$(reqs | tr '\n' ';')" "GET /repos/o/n/issues/7/comments?per_page=100;GET /repos/o/n/issues/7/comments?per_page=2&page=2;GET /repos/o/n/issues/7/comments?per_page=2&page=3;POST /repos/o/n/issues/7/comments;POST /repos/o/n/statuses/$HEAD;" \
	"it lists every page (Link rel=next), then POSTs the comment and the status"
is "$(hdr 1 Authorization)" "Bearer $TOKEN" "the token goes in the Authorization header"
like "$(hdr 1 User-Agent)" '^kgate/[0-9]' "User-Agent names kgate"
is "$(hdr 1 Accept)" "application/vnd.github+json" "Accept asks for GitHub's JSON"
is "$(hdr 1 X-GitHub-Api-Version)" "2022-11-28" "the API version is pinned"
like "$(body 4)" '"body": *"<!-- kgate -->' "the POSTed body carries the marker"
like "$(hdr 4 Content-Type)" '^application/json' "the body is JSON"
want_state=success; [ "$nfail" -gt 0 ] && want_state=failure
like "$(body 5)" "\"state\": *\"$want_state\"" "the status says $want_state"
like "$(body 5)" '"context": *"kgate"' "the status context is kgate"

# --- second run on the same server: the marked comment is edited in place
: >"$LOG"
kc "$KGATE" comment --db "$DB" --repo o/n --pr 7 --commit $HEAD
is "$rc" 0 "the second run exits 0"
like "$err" "updated the kgate comment" "it says it updated the comment"
is "$(reqs | tail -n 1)" "PATCH /repos/o/n/issues/comments/1001" "it PATCHes the comment it made"
is "$(reqs | grep -c '^POST')" 0 "and creates no second comment"
stop_server

# --- a comment body from a file
start_server '{"token": "'$TOKEN'", "comments": {"7": []}}'
printf 'hello from a file\n' >"$T/body.md"
kc "$KGATE" comment --repo o/n --pr 7 --body-file "$T/body.md"
is "$rc" 0 "--body-file posts"
like "$(body 2)" 'hello from a file' "with the file's text"
like "$(body 2)" '<!-- kgate -->' "and the marker added"
run "$KGATE" comment --repo o/n --pr 7 --body-file "$T/missing.md"
is "$rc" 2 "a missing --body-file is an input error"
stop_server

# --- rate limit: 403 with Retry-After: 1 is waited out, then retried
start_server '{"token": "'$TOKEN'", "comments": {"7": []}, "faults": [
 {"method": "GET", "path": "/repos/", "status": 403, "headers": {"Retry-After": "1"},
  "body": "{\"message\": \"You have exceeded a secondary rate limit\"}"}]}'
kc "$KGATE" comment --db "$DB" --repo o/n --pr 7 --commit $HEAD
is "$rc" 0 "a rate-limited request is retried and succeeds"
gap=$($PY -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])]; print("%.1f" % (r[1]["time"] - r[0]["time"]))' "$LOG")
ok "Retry-After: 1 was honoured (waited $gap s)" $PY -c "import sys; sys.exit(0 if $gap >= 0.9 else 1)"
is "$(reqs | sed -n 1,2p | tr '\n' ';')" "GET /repos/o/n/issues/7/comments?per_page=100;GET /repos/o/n/issues/7/comments?per_page=100;" "the same request was sent again"
stop_server

# --- 500 then 200: retried with backoff
start_server '{"token": "'$TOKEN'", "comments": {"7": []}, "faults": [
 {"method": "POST", "path": "/repos/", "status": 500}, {"method": "POST", "path": "/repos/", "status": 502}]}'
kc "$KGATE" comment --db "$DB" --repo o/n --pr 7 --commit $HEAD
is "$rc" 0 "5xx replies are retried until one succeeds"
is "$(reqs | grep -c '^POST /repos/o/n/issues/7/comments')" 3 "the POST was made three times"
stop_server

# --- 5xx that never ends: a warning, exit 0; --strict exits 3
start_server '{"token": "'$TOKEN'", "comments": {"7": []}, "faults": [
 {"path": "/repos/", "status": 503}, {"path": "/repos/", "status": 503}, {"path": "/repos/", "status": 503}]}'
kc env KGATE_HTTP_RETRIES=2 "$KGATE" comment --db "$DB" --repo o/n --pr 7 --commit $HEAD
is "$rc" 0 "a failure to post leaves the exit status alone"
like "$err" "HTTP 503" "the warning names the status"
like "$err" "warning: the pull request comment was not posted" "and says the comment was not posted"
is "$(reqs | wc -l | tr -d ' ')" 3 "KGATE_HTTP_RETRIES=2 made three attempts"
stop_server

# --- 401 and 404: clear errors, not retried
start_server '{"token": "the-right-token", "comments": {"7": []}}'
kc "$KGATE" comment --db "$DB" --repo o/n --pr 7 --commit $HEAD
is "$rc" 0 "a 401 is a warning without --strict"
like "$err" "HTTP 401: authentication failed" "a 401 says authentication failed"
like "$err" "Bad credentials" "with the server's message"
is "$(reqs | wc -l | tr -d ' ')" 1 "a 401 is not retried"
kc "$KGATE" comment --db "$DB" --repo o/n --pr 7 --commit $HEAD --strict
is "$rc" 3 "--strict makes a failure to post exit 3"
stop_server
start_server '{"token": "'$TOKEN'", "comments": {"7": []}}'
kc "$KGATE" comment --db "$DB" --repo o/n --pr 99 --commit $HEAD --strict
is "$rc" 3 "a 404 with --strict exits 3"
like "$err" "HTTP 404: not found; check the URL, repository and number" "a 404 says what to check"
stop_server

# --- a slow reply beyond the timeout, a reset connection
start_server '{"token": "'$TOKEN'", "comments": {"7": []}, "faults": [
 {"path": "/repos/", "delay": 4, "status": 200, "body": "[]"}]}'
kc env KGATE_HTTP_TIMEOUT=1 KGATE_HTTP_RETRIES=0 "$KGATE" comment --db "$DB" --repo o/n --pr 7 --commit $HEAD --strict
is "$rc" 3 "a reply slower than KGATE_HTTP_TIMEOUT fails"
like "$err" "[Tt]imed? ?out|timeout" "with a timeout error"
stop_server
start_server '{"token": "'$TOKEN'", "comments": {"7": []}, "faults": [{"path": "/repos/", "reset": true}]}'
kc env KGATE_HTTP_RETRIES=0 "$KGATE" comment --db "$DB" --repo o/n --pr 7 --commit $HEAD --strict
is "$rc" 3 "a reset connection without retries fails"
like "$err" "cannot list the pull request's comments: GET http://127.0.0.1:[0-9]+: " "the error names the request and origin"
stop_server
start_server '{"token": "'$TOKEN'", "comments": {"7": []}, "faults": [{"path": "/repos/", "reset": true}]}'
kc "$KGATE" comment --db "$DB" --repo o/n --pr 7 --commit $HEAD --strict
is "$rc" 0 "a reset connection is retried"
stop_server

# --- a next page on another host is not followed (the token would leak)
start_server '{"token": "'$TOKEN'", "comments": {"7": []}, "faults": [{"path": "/repos/", "status": 200,
 "body": "[]", "headers": {"Link": "<http://127.0.0.2:9/steal?page=2>; rel=\"next\""}}]}'
kc "$KGATE" comment --db "$DB" --repo o/n --pr 7 --commit $HEAD --strict
is "$rc" 3 "a Link to another host is refused"
like "$err" "next page is on another host" "and says why"
stop_server

# --- no token
run env -u GITHUB_TOKEN GITHUB_API_URL=http://127.0.0.1:9 "$KGATE" comment --db "$DB" --repo o/n --pr 7 --commit $HEAD
is "$rc" 0 "no GITHUB_TOKEN is a warning"
like "$err" "GITHUB_TOKEN is not set" "that says so"

# --- verbose tracing redacts the token
start_server '{"token": "'$TOKEN'", "comments": {"7": []}}'
kc env KGATE_HTTP_VERBOSE=1 "$KGATE" comment --db "$DB" --repo o/n --pr 7 --commit $HEAD
is "$rc" 0 "KGATE_HTTP_VERBOSE=1 still posts"
like "$err" "> Authorization: \\*\\*\\*" "the trace shows the Authorization header redacted"
like "$err" "> GET /repos/o/n/issues/7/comments" "the trace shows the request"
stop_server

# --- the token never appeared in any output above
ok "the trace and every output of this test were captured" test -s "$ALL"
if grep -qF "$TOKEN" "$ALL"; then _result 1 "the token appears in no output"
else _result 0 "the token appears in no output"; fi
done_testing
