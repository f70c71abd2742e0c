#!/bin/sh
# hostile.t: text read from files and servers never acts on what reads
# kgate's output (docs/RELIABILITY.md): no control character in any text
# kgate prints (a CI runner reads a line starting "::" as a workflow
# command), no live Slack mention or link, no live @mention in the PR
# comment; and HTTP replies that would make kgate wait a day, count a
# redirect as posted, or edit someone else's comment.  All records here are
# TEST DATA (tests/faults/gen-records.sh: a made-up "Synthetic GPU").
. "$(dirname "$0")/lib.sh"
GEN="$KGATE_SRC/tests/faults/gen-records.sh"
HTTPD="$KGATE_SRC/tests/e2e/httpd.py"
ESC=$(printf '\033')
CR=$(printf '\r')
# no_ctl FILE: no ESC, CR, C1 CSI, and no line beginning with "::"
no_ctl() { ! grep -q "$ESC\|$CR\|$(printf '\302\233')" "$1" && ! grep -q '^ *::' "$1"; }

# --- control characters in names reach no printed text ----------------------
# a GPU name, a second device's name and a collector error record carrying
# LF, CR, ESC and a workflow command
EVIL='Synthetic\n::error::pwned\r\u001b[2J\u009b31m'
sh "$GEN" 20 > "$T/r.jsonl"
python3 - "$T/r.jsonl" "$T/evil.jsonl" "$EVIL" <<'EOF'
import json, sys
evil = json.loads('"' + sys.argv[3] + '"')
lines = open(sys.argv[1]).read().splitlines()
h = json.loads(lines[0])
h["devices"][0]["name"] = evil
h["devices"].append(dict(h["devices"][0], id=1, name="other" + evil))
out = [json.dumps(h)] + lines[1:-1]
out.append(json.dumps({"type": "error", "code": "CUPTI" + evil, "message": "failed" + evil}))
out.append(lines[-1].replace('"errors":0', '"errors":1'))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
EOF
DB="$T/k.db"
"$KGATE" ingest --db "$DB" --records "$T/evil.jsonl" --commit base --branch main 2>"$T/ingest.err"
ok "ingest stored the run" test "$(sqlite3 "$DB" "SELECT count(*) FROM runs")" = 1
like "$(cat "$T/ingest.err")" "collector error CUPTISynthetic" "ingest warned of the error record"
ok "ingest's warnings carry no control character and no workflow command" no_ctl "$T/ingest.err"
"$KGATE" ingest --db "$DB" --records "$T/evil.jsonl" --commit head 2>/dev/null
"$KGATE" check --db "$DB" --commit head --baseline base --no-store >"$T/check.out" 2>"$T/check.err"
like "$(head -1 "$T/check.out")" "^kgate check: head against base .* on Synthetic" "check's text header names the GPU"
ok "check's text output carries no control character" no_ctl "$T/check.out"
ok "check's messages carry none" no_ctl "$T/check.err"
"$KGATE" stats --db "$DB" --commit head --report kernel_sum >"$T/stats.out" 2>"$T/stats.err"
like "$(head -1 "$T/stats.out")" "Synthetic" "stats' text header names the GPU"
ok "stats' text output carries no control character" no_ctl "$T/stats.out"

# explain's text: its sentence names the kernel, whose name carries ESC, CR,
# LF and a workflow command (the slowdown is injected into stored samples)
sh "$GEN" 30 KNAME | sed 's/KNAME/evil\\u001b[2J\\r\\n::error::x/' > "$T/x.jsonl"
XDB="$T/x.db"
for c in x1 x2 x3 x4 x5 x6; do
	"$KGATE" ingest --db "$XDB" --records "$T/x.jsonl" --commit "$c" --branch main 2>/dev/null
done
sqlite3 "$XDB" "UPDATE samples SET value = value * 1.5 WHERE run > 3 AND
	metric = (SELECT id FROM metrics WHERE name = 'gpu__time_duration.sum')"
"$KGATE" explain --db "$XDB" --commit x6 --baseline x3 >"$T/x.out" 2>/dev/null
like "$(head -1 "$T/x.out")" "evil .*::error::x \+50% time" "explain's text names the kernel"
ok "explain's text carries no control character and no workflow command" no_ctl "$T/x.out"
"$KGATE" check --explain --db "$XDB" --commit x6 --baseline x3 --no-store >"$T/xc.out" 2>/dev/null
like "$(grep '^why: ' "$T/xc.out")" "^why: evil" "check --explain says why"
ok "check --explain's text carries none" no_ctl "$T/xc.out"

# --- the other formats: control characters in their escaped forms ----------
# (include/kgate/escape.h: JSON writes every control character, C1 and DEL
# too, as \u00XX; CSV, Markdown, JUnit and workflow commands have none raw)
for f in json markdown junit; do
	"$KGATE" check --db "$DB" --commit head --baseline base --no-store --format $f >"$T/check.$f" 2>/dev/null
	ok "check --format $f: no raw control character, no workflow command" no_ctl "$T/check.$f"
done
# (workflow commands are github's lines, and CSV's records end in CRLF)
no_ctl_byte() { ! grep -q "$ESC\|$CR\|$(printf '\302\233')" "$1"; }
"$KGATE" check --db "$DB" --commit head --baseline base --no-store --format github >"$T/check.github" 2>/dev/null
ok "check --format github: no raw control character" no_ctl_byte "$T/check.github"
like "$(jq -r .gpu "$T/check.json" | od -An -c | tr -d ' \n')" 'Synthetic\\n::error::pwned\\r033\[2J302233' \
	"check --format json: the GPU name read back exactly"
"$KGATE" stats --db "$DB" --commit head --report kernel_sum --format json >"$T/stats.json" 2>/dev/null
ok "stats --format json: no raw control character" no_ctl "$T/stats.json"
like "$(jq -r .gpu "$T/stats.json" | od -An -c | tr -d ' \n')" 'Synthetic\\n::error::pwned\\r033\[2J302233' \
	"stats --format json: the GPU name read back exactly"
"$KGATE" stats --db "$XDB" --commit x6 --report kernel_sum --format csv 2>/dev/null | sed 's/\r$//' >"$T/stats.csv"
ok "stats --format csv: no raw control character, no workflow command" no_ctl "$T/stats.csv"
like "$(cat "$T/stats.csv")" ',evil \[2J  ::error::x$' "stats --format csv: the kernel's name, its controls as spaces"
"$KGATE" check --db "$XDB" --commit x6 --baseline x3 --no-store --format github >"$T/xc.github" 2>/dev/null
ok "check --format github with a hostile kernel: no line starts a command of its own" \
	test "$(grep -c '^::' "$T/xc.github")" = "$(grep -c '^::[a-z]* \{0,1\}[a-z=]*[^:]*::' "$T/xc.github")"
unlike "$(cat "$T/xc.github")" "$ESC" "check --format github: no ESC"

# --- Slack: no live <!channel>, <!here> or <url|label> ---------------------
KN='<!channel> <!here> @octocat <https://evil.example|click here>'
sh "$GEN" 30 "$KN" > "$T/s.jsonl"
SDB="$T/s.db"
i=1
while [ $i -le 20 ]; do
	"$KGATE" ingest --db "$SDB" --records "$T/s.jsonl" --commit "c$i" --branch main 2>/dev/null
	i=$((i + 1))
done
sqlite3 "$SDB" "UPDATE samples SET value = value * 1.5 WHERE run > 10 AND
	metric = (SELECT id FROM metrics WHERE name = 'gpu__time_duration.sum')"
printf '{}\n' > "$T/script.json"
LOG="$T/log.jsonl"; : > "$LOG"; rm -f "$T/port"
python3 "$HTTPD" "$T/script.json" "$LOG" "$T/port" &
SRV=$!
trap 'kill $SRV 2>/dev/null; rm -rf "$T"' EXIT
i=0; while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
URL="http://127.0.0.1:$(cat "$T/port")"
run "$KGATE" report --db "$SDB" --html "$T/r.html" --post "$URL/hook"
is "$rc" 0 "report posts its summary"
slack=$(python3 -c 'import json,sys; print(json.loads([json.loads(l) for l in open(sys.argv[1])][-1]["body"])["text"])' "$LOG")
like "$slack" "Worst regressions" "the summary lists the regression"
like "$slack" "&lt;!channel&gt; &lt;!here&gt;" "with <!channel> and <!here> escaped"
unlike "$slack" "<!channel>|<!here>|<https://evil" "no live mention or link"

# --- the PR comment: no live @mention ---------------------------------------
"$KGATE" check --db "$SDB" --commit c20 --baseline c10 >/dev/null 2>&1
run "$KGATE" comment --db "$SDB" --commit c20 --print
like "$out" "@&#8203;octocat" "the PR comment breaks '@octocat' with a zero-width space"
unlike "$out" "@octocat" "no live @mention"

# --- HTTP: a long Retry-After on a 5xx is not slept -------------------------
TOKEN=tok-for-tests
PYSRV() { # SCRIPT-JSON: restart the server
	kill $SRV 2>/dev/null; wait $SRV 2>/dev/null
	printf '%s\n' "$1" > "$T/script.json"; : > "$LOG"; rm -f "$T/port"
	python3 "$HTTPD" "$T/script.json" "$LOG" "$T/port" &
	SRV=$!
	i=0; while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	URL="http://127.0.0.1:$(cat "$T/port")"
}
kc() { run env GITHUB_TOKEN="$TOKEN" GITHUB_API_URL="$URL" KGATE_HTTP_BACKOFF_MS=100 "$@"; }
PYSRV '{"token": "'$TOKEN'", "comments": {"7": []}, "faults": [
 {"path": "/repos/", "status": 503, "headers": {"Retry-After": "99999"}}]}'
t0=$(date +%s)
kc timeout 60 "$KGATE" comment --db "$SDB" --repo o/n --pr 7 --commit c20 --strict
t1=$(date +%s)
is "$rc" 3 "a 503 asking to wait 99999 s fails at once (--strict)"
like "$err" "asks to wait 99999 s, longer than KGATE_HTTP_MAX_WAIT" "and says why"
ok "within seconds ($((t1 - t0)) s)" test $((t1 - t0)) -lt 30

# --- HTTP: a redirect is a failure naming the other origin, not its path ----
PYSRV '{"token": "'$TOKEN'", "comments": {"7": []}, "faults": [
 {"method": "POST", "path": "/repos/", "status": 302,
  "headers": {"Location": "https://elsewhere.example:8443/secret/path?token=x"}}]}'
kc "$KGATE" comment --db "$SDB" --repo o/n --pr 7 --commit c20 --strict
is "$rc" 3 "a 302 reply to the POST is not 'posted' (--strict: exit 3)"
like "$err" "HTTP 302, a redirect to https://elsewhere.example:8443" "it names the redirect's origin"
unlike "$err" "secret|token=x|created the kgate comment" "but not its path, and claims nothing"

# --- the PR comment: a marker in someone else's comment is not adopted ------
PYSRV '{"token": "'$TOKEN'", "comments": {"7": [
 {"id": 3, "body": "nice PR <!-- kgate -->", "user": {"login": "author", "id": 5, "type": "User"}}]}}'
kc "$KGATE" comment --db "$SDB" --repo o/n --pr 7 --commit c20
is "$rc" 0 "comment exits 0"
like "$err" "comment 3 holds kgate's marker but was written by 'author'" "it says whose marked comment it leaves alone"
like "$err" "created the kgate comment" "and creates its own"
reqs=$(python3 -c 'import json,sys
for l in open(sys.argv[1]): r=json.loads(l); print(r["method"], r["path"])' "$LOG")
unlike "$reqs" "PATCH /repos/o/n/issues/comments/3" "the author's comment was not edited"
kc "$KGATE" comment --db "$SDB" --repo o/n --pr 7 --commit c20
like "$err" "updated the kgate comment" "the next run updates kgate's own comment"
# an app installation token (GitHub Actions' GITHUB_TOKEN) cannot read /user:
# only github-actions[bot]'s comment is adopted
PYSRV '{"token": "'$TOKEN'", "user_status": 403, "comments": {"7": [
 {"id": 3, "body": "<!-- kgate --> spoof", "user": {"login": "github-actions", "id": 5, "type": "User"}},
 {"id": 4, "body": "<!-- kgate --> old", "user": {"login": "github-actions[bot]", "id": 41898282, "type": "Bot"}}]}}'
kc "$KGATE" comment --db "$SDB" --repo o/n --pr 7 --commit c20
like "$err" "updated the kgate comment" "an app token updates github-actions[bot]'s comment"
reqs=$(python3 -c 'import json,sys
for l in open(sys.argv[1]): r=json.loads(l); print(r["method"], r["path"])' "$LOG")
like "$reqs" "PATCH /repos/o/n/issues/comments/4" "comment 4, not the look-alike"

done_testing
