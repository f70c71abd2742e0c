#!/bin/sh
# lifecycle.t: the gate through its whole CI life cycle, without GitHub and
# without a GPU.
#
# A throwaway CUDA project (its only kgate files: kgate.yaml and a
# thresholds file) lives in a git repository with an origin.  Its
# "benchmarks" are TEST DOUBLES that replay records files the collector
# wrote on an NVIDIA H200 (tests/fixtures/h200/calib: the real programs at
# 0% and 5% extra work); which recording a benchmark replays is the
# project's "code" (perf/<name>), so a commit can really regress.  GitHub is
# played by ghactions.py (it runs ci/action.yml's steps in order, with the
# inputs ci/workflows/*.yml pass, the event payloads GitHub sends, and a
# local cache and artifact store) and by httpd.py on 127.0.0.1 (it records
# the comments and the commit statuses).  kgate is the binary under test,
# put where the action's build step would put it.
#
# The walk: a pull request with a regression (FAIL comment, failure status on
# the head commit, not on the merge commit GitHub checks out), fixed; its
# merge (the baseline recorded); the next pull request compared with it; a
# push to main with a regression (caught); the nightly report; the cache
# gone; the pre-push hook against the merge base; KGATE_SKIP=1 followed by
# a normal push (refused).
. "$(dirname "$0")/lib.sh"

PY=
if python3 -c 'import yaml' 2>/dev/null; then PY=python3; fi
if [ -z "$PY" ]; then
	echo "1..0 # SKIP no python3 with PyYAML (python3-yaml)"
	exit 0
fi
CAL="$SHARED_FIX/calib"
GHA="$KGATE_SRC/tests/e2e/ghactions.py"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
KG=$(readlink -f "$(command -v "$KGATE")")

# --- kgate's side: the action's own directory (a copy of ci/ and scripts/),
# and make played by a stand-in that records how it is called and links the
# kgate under test where the build would have put it
mkdir -p "$T/kgate-action/scripts" "$T/bin"
cp -r "$KGATE_SRC/ci" "$T/kgate-action/ci"
cp "$KGATE_SRC/scripts/install-deps.sh" "$KGATE_SRC/scripts/pre-push" "$KGATE_SRC/scripts/restore-db.py" \
	"$T/kgate-action/scripts/"
cat >"$T/bin/make" <<EOF
#!/bin/sh
echo "make \$* (in \$(pwd))" >>"$T/make.log"
dir=.
while [ \$# -gt 0 ]; do
	case \$1 in -C) dir=\$2; shift ;; esac
	shift
done
mkdir -p "\$dir/build" && ln -sf "$KG" "\$dir/build/kgate"
EOF
# a GPU machine as far as the pre-push hook asks
printf '#!/bin/sh\necho "GPU 0: NVIDIA H200 (replayed)"\n' >"$T/bin/nvidia-smi"
chmod +x "$T/bin/make" "$T/bin/nvidia-smi"
PATH="$T/bin:$PATH"
export PATH
# Stand-ins for the collector library and libcupti: the replaying
# benchmarks never load them; kgate only passes their paths on.
: >"$T/libkgate-collector.so"
: >"$T/libcupti.so"
export KGATE_COLLECTOR="$T/libkgate-collector.so" KGATE_CUPTI="$T/libcupti.so"
export REPLAY_RECORDINGS="$CAL"

# --- GitHub's API
echo '{"token": "s3cret", "any_pr": true}' >"$T/gh.json"
"$PY" "$KGATE_SRC/tests/e2e/httpd.py" "$T/gh.json" "$T/gh.log" "$T/port" &
HTTPD=$!
trap 'kill $HTTPD 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
API="http://127.0.0.1:$(cat "$T/port")"

# --- the project: kgate.yaml, thresholds, two benchmarks
git init -q --bare -b main "$T/origin.git"
git init -q -b main "$T/dev"
cd "$T/dev" || exit 1
git remote add origin "$T/origin.git"
mkdir bench perf
cat >kgate.yaml <<'EOF'
version: 1
thresholds: thresholds.yaml
collector: { mode: trace }
benchmarks:
  - name: transpose_tiled
    cmd: [sh, bench/replay.sh, transpose_tiled]
    repeat: 4
    quick_repeat: 3
    warmup: 0
  - name: stream_triad
    cmd: [sh, bench/replay.sh, stream_triad]
    repeat: 4
    quick_repeat: 3
    warmup: 0
EOF
cp "$KGATE_SRC/thresholds/default.yaml" thresholds.yaml
cat >bench/replay.sh <<'EOF'
#!/bin/sh
# TEST DOUBLE of a CUDA benchmark under the collector: it writes, where the
# collector would, the records the real program's collector wrote on an
# NVIDIA H200 with the extra work perf/<name> names (one recorded process
# after another).
name=$1
extra=$(cat "perf/$name")
dir=$(dirname "$KGATE_RECORDS")
n=$(cat "$dir/.n.$name" 2>/dev/null || echo 0)
echo $((n + 1)) >"$dir/.n.$name"
for f in "$REPLAY_RECORDINGS/$name/$extra/$((n % 6))".*.jsonl; do
	cp "$f" "$(printf '%s' "$KGATE_RECORDS" | sed "s/%p/$$/g")"
done
EOF
echo 0 >perf/transpose_tiled
echo 0 >perf/stream_triad
echo "a CUDA project" >README
git add -A && git commit -qm "the project" && git push -q origin main 2>/dev/null
C0=$(git rev-parse HEAD)
ZERO=0000000000000000000000000000000000000000

# --- one job of a workflow: JOB NAME WORKFLOW EVENT SHA [INPUT=VALUE...]
# The workspace is a fresh clone of origin (fetch-depth: 0) at SHA; the
# event payload is $T/ev.json; the action's inputs are those WORKFLOW's
# kgate step passes (build-command played by true), then the INPUT=VALUEs.
RUN_ID=100
job() {
	name=$1 wf=$2 ev=$3 sha=$4
	shift 4
	RUN_ID=$((RUN_ID + 1))
	ws="$T/ws/$name"
	rm -rf "$ws"
	git clone -q "$T/origin.git" "$ws" 2>/dev/null
	git -C "$ws" fetch -q origin '+refs/pull/*:refs/remotes/pull/*'
	git -C "$ws" checkout -q --detach "$sha"
	"$PY" - "$KGATE_SRC/ci/workflows/$wf" "$ev" "$ws" "$T" "$RUN_ID" "$API" "$@" >"$T/job.json" <<'PYEOF'
import json, sys, yaml
wf, ev, ws, t, run_id, api = sys.argv[1:7]
w = yaml.safe_load(open(wf))
inputs = {}
for j in w["jobs"].values():
    for st in j["steps"]:
        if "/ci@" in st.get("uses", ""):
            inputs = dict(st.get("with") or {})
inputs["build-command"] = "true"
inputs["install-deps"] = "false"
for kv in sys.argv[7:]:
    k, v = kv.split("=", 1)
    inputs[k] = v
event = json.load(open(t + "/ev.json"))
gh = {"event_name": ev, "event": event, "repository": "acme/proj", "run_id": run_id,
      "job": "gate", "api_url": api, "server_url": "https://github.example"}
if ev.startswith("pull_request"):
    n = event["number"]
    gh.update(ref="refs/pull/%d/merge" % n, ref_name="%d/merge" % n,
              head_ref=event["pull_request"]["head"]["ref"],
              base_ref=event["pull_request"]["base"]["ref"])
else:
    gh.update(ref="refs/heads/main", ref_name="main", head_ref="", base_ref="")
gh["sha"] = open(ws + "/.git/HEAD").read().strip()
print(json.dumps({"inputs": inputs, "github": gh, "workspace": ws,
                  "runner_temp": ws + ".tmp", "cache_dir": t + "/cache",
                  "artifact_dir": t + "/artifacts", "outputs": ws + ".out.json",
                  "secrets": {"GITHUB_TOKEN": "s3cret"}}))
PYEOF
	"$PY" "$GHA" "$T/kgate-action/ci/action.yml" "$T/job.json" >"$ws.log" 2>&1
	jrc=$?
	jlog=$(cat "$ws.log")
}
# output NAME: the action's output NAME of the last job
output() { "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], ""))' "$ws.out.json" "$1"; }
# a pull request's event, as GitHub sends it: PR NUMBER HEAD_BRANCH HEAD_SHA BASE_SHA
pr_event() {
	cat >"$T/ev.json" <<EOF
{"action": "synchronize", "number": $1,
 "pull_request": {"number": $1, "state": "open", "title": "change $1",
   "head": {"label": "acme:$2", "ref": "$2", "sha": "$3", "repo": {"full_name": "acme/proj"}},
   "base": {"label": "acme:main", "ref": "main", "sha": "$4", "repo": {"full_name": "acme/proj"}},
   "merge_commit_sha": null, "html_url": "https://github.example/acme/proj/pull/$1"},
 "repository": {"full_name": "acme/proj", "default_branch": "main"},
 "sender": {"login": "t"}}
EOF
}
push_event() { # BEFORE AFTER
	cat >"$T/ev.json" <<EOF
{"ref": "refs/heads/main", "before": "$1", "after": "$2", "created": false, "forced": false,
 "head_commit": {"id": "$2", "message": "x"},
 "repository": {"full_name": "acme/proj", "default_branch": "main", "master_branch": "main"},
 "pusher": {"name": "t"}}
EOF
}
# GitHub's test merge of a pull request: refs/pull/N/head and refs/pull/N/merge
# (parents: the base, then the head); prints the merge commit
pr_refs() { # N HEAD BASE
	git -C "$T/dev" checkout -q --detach "$3"
	git -C "$T/dev" merge -q --no-ff --no-edit -m "Merge $2 into $3" "$2" >/dev/null
	m=$(git -C "$T/dev" rev-parse HEAD)
	git -C "$T/dev" push -q origin "$2:refs/pull/$1/head" "$m:refs/pull/$1/merge" 2>/dev/null
	git -C "$T/dev" checkout -q main
	echo "$m"
}
statuses() { grep '"path": "/repos/acme/proj/statuses/' "$T/gh.log" | "$PY" -c '
import json, sys
for ln in sys.stdin:
    r = json.loads(ln)
    print(r["path"].rsplit("/", 1)[1], json.loads(r["body"])["state"])'; }
comments() { # PR: the bodies of its comments, as the API has them now
	"$PY" - "$API" "$1" <<'PYEOF'
import json, sys, urllib.request
req = urllib.request.Request("%s/repos/acme/proj/issues/%s/comments" % (sys.argv[1], sys.argv[2]),
                             headers={"Authorization": "Bearer s3cret"})
for c in json.load(urllib.request.urlopen(req)):
    print("=== comment %d" % c["id"])
    print(c["body"])
PYEOF
}
short() { printf '%.12s' "$1"; }

# --- 0. the first push to main: recorded, nothing to compare with yet
push_event "$ZERO" "$C0"
job push0 pr.yml push "$C0"
is "$jrc" 0 "the first push to main passes the job"
like "$(cat "$T/make.log")" "^make -C $T/kgate-action NODEPS=1" "kgate is built from the action's own directory"
unlike "$(cat "$T/make.log")" "-C $T/ws" "never from the checkout of the project"
ok "main's database is saved to the cache" test -f "$T/cache/kgate-db-h200-main-$RUN_ID/kgate.db"

# --- 1. a pull request with a regression
git checkout -q -b slow
echo 0.05 >perf/transpose_tiled && git commit -qam "transpose: 5% more rows"
H1=$(git rev-parse HEAD)
git push -q origin slow 2>/dev/null
git checkout -q main
M1=$(pr_refs 1 "$H1" "$C0")
pr_event 1 slow "$H1" "$C0"
job pr1 pr.yml pull_request "$M1"
is "$jrc" 1 "PR #1 (a 5% slower kernel): the job fails"
is "$(output verdict)" FAIL "its verdict output is FAIL"
res=$(output results-json)
ok "the results-json output names a file" test -s "$res"
like "$(cat "$res" 2>/dev/null)" "\"head\": \"$H1\"" "the results are of the head commit"
like "$jlog" "::error.*transpose_tiled" "an annotation on the regressed kernel"
like "$(output _summary)" "$H1" "the job summary names the head commit"
unlike "$(output _summary)" "$M1" "not the merge commit"
is "$(statuses)" "$H1 failure" "one commit status: failure, on the head commit"
c=$(comments 1)
like "$c" "FAIL" "the pull request comment says FAIL"
like "$c" "FAIL \\| transpose\\\\_tiled" "and names the kernel"
like "$c" "$(printf '%.10s' "$H1")" "and the head commit"
unlike "$c" "$(printf '%.10s' "$M1")" "never the merge commit"
like "$(output comment-url)" "^$API/c/[0-9]+$" "the comment-url output is the comment's address"
is "$(ls "$T/cache" | wc -l | tr -d ' ')" 1 "a pull request saves no database"
ok "its database and results are uploaded" test -f "$T/artifacts/kgate-$RUN_ID-gate/kgate.db"

# --- 1b. fixed: the same comment, now passing
git checkout -q slow
echo 0 >perf/transpose_tiled && echo "faster again" >>README && git commit -qam "transpose: back"
H2=$(git rev-parse HEAD)
git push -q origin slow 2>/dev/null
git checkout -q main
M2=$(pr_refs 1 "$H2" "$C0")
pr_event 1 slow "$H2" "$C0"
job pr1b pr.yml pull_request "$M2"
is "$jrc" 0 "PR #1 fixed: the job passes"
is "$(output verdict)" PASS "verdict PASS"
is "$(statuses | tail -1)" "$H2 success" "success on the new head commit"
is "$(comments 1 | grep -c '^=== comment')" 1 "still one kgate comment on the pull request"
unlike "$(comments 1)" "$(printf '%.10s' "$H1")" "edited in place for the new head"

# --- 2. its merge: main records the baseline
git merge -q --no-ff --no-edit slow
C1=$(git rev-parse HEAD)
git push -q origin main 2>/dev/null
push_event "$C0" "$C1"
job push1 pr.yml push "$C1"
is "$jrc" 0 "the merge's push passes"
like "$jlog" "against $(short "$C0")" "checked against the push's before ($(short "$C0"))"
ok "and recorded: a new cache entry of main" test -f "$T/cache/kgate-db-h200-main-$RUN_ID/kgate.db"

# --- 3. the next pull request is compared with it
git checkout -q -b next
echo "docs" >>README && git commit -qam "docs only"
H3=$(git rev-parse HEAD)
git push -q origin next 2>/dev/null
git checkout -q main
M3=$(pr_refs 2 "$H3" "$C1")
pr_event 2 next "$H3" "$C1"
job pr2 pr.yml pull_request "$M3"
is "$jrc" 0 "PR #2 passes"
like "$(comments 2)" "$(short "$C1")" "its comment names the merged commit as the baseline"
is "$(statuses | tail -1)" "$H3 success" "success on PR #2's head"

# --- 4. a push to main with a regression is caught
echo 0.05 >perf/stream_triad && git commit -qam "stream: 5% more elements"
C2=$(git rev-parse HEAD)
git push -q origin main 2>/dev/null
push_event "$C1" "$C2"
job push2 pr.yml push "$C2"
is "$jrc" 1 "a regression pushed to main fails the job"
is "$(output verdict)" FAIL "verdict FAIL"
like "$jlog" "::error.*stream_triad" "on stream_triad"
like "$jlog" "against $(short "$C1")" "against the previous push"
ok "the push is recorded all the same (it is main now)" test -f "$T/cache/kgate-db-h200-main-$RUN_ID/kgate.db"
LASTPUSH=$RUN_ID

# --- 5. the nightly report
echo '{"schedule": "17 3 * * *", "repository": {"full_name": "acme/proj", "default_branch": "main"}}' >"$T/ev.json"
ncache=$(ls "$T/cache" | wc -l)
job nightly nightly.yml schedule "$C2"
is "$jrc" 0 "the nightly job passes (fail-on: never)"
rep=$(output report)
ok "it writes the trend report" test -s "$rep"
like "$(cat "$rep" 2>/dev/null)" "stream_triad" "with the suite's kernels"
ok "and uploads it" test -f "$T/artifacts/kgate-$RUN_ID-gate/kgate-report.html"
is "$(ls "$T/cache" | wc -l)" "$ncache" "the nightly job never writes main's history"

# --- 6. the cache gone (7 days unused): no baseline, said as such
mv "$T/cache" "$T/cache.evicted"
git checkout -q -b third
echo "more docs" >>README && git commit -qam "more docs"
H4=$(git rev-parse HEAD)
git push -q origin third 2>/dev/null
git checkout -q main
M4=$(pr_refs 3 "$H4" "$C2")
pr_event 3 third "$H4" "$C2"
job pr3 pr.yml pull_request "$M4" restore-artifact=false
like "$jlog" "no baseline" "with no database, the check says there is no baseline"
is "$(output verdict)" "NO BASELINE" "its verdict is NO BASELINE, never PASS"
like "$(comments 3)" "NO BASELINE" "and the comment says so"
unlike "$(comments 3)" "no regression" "never that there is no regression"
# ... unless the action restores the database from the newest artifact of a
# push to main: GitHub's artifact API played by httpd.py with SYNTHETIC
# answers in GitHub's shape, the archive zipped from the last push job's
# uploaded files
"$PY" - "$T/artifacts/kgate-$LASTPUSH-gate" "$T/last.zip" <<'PYEOF'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[2], "w") as z:
    for root, _, files in os.walk(sys.argv[1]):
        for f in files:
            p = os.path.join(root, f)
            z.write(p, os.path.relpath(p, sys.argv[1]))
PYEOF
cat >"$T/gh2.json" <<EOF
{"token": "s3cret", "any_pr": true, "actions": {
 "runs": [{"id": $LASTPUSH, "name": "kgate", "head_branch": "main", "head_sha": "$C2", "event": "push",
           "status": "completed", "conclusion": "failure", "created_at": "2026-11-03T10:00:00Z"}],
 "artifacts": {"$LASTPUSH": [{"id": 9001, "name": "kgate-$LASTPUSH-gate", "expired": false,
                              "created_at": "2026-11-03T10:05:00Z",
                              "workflow_run": {"id": $LASTPUSH, "head_branch": "main", "head_sha": "$C2"}}]},
 "zips": {"9001": "$T/last.zip"}}}
EOF
kill $HTTPD 2>/dev/null
rm -f "$T/port"
"$PY" "$KGATE_SRC/tests/e2e/httpd.py" "$T/gh2.json" "$T/gh.log" "$T/port" &
HTTPD=$!
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
API="http://127.0.0.1:$(cat "$T/port")"
job pr3b pr.yml pull_request "$M4"
like "$jlog" "restored '.*kgate.db' \([0-9]+ bytes\) from artifact kgate-$LASTPUSH-gate of run $LASTPUSH" \
	"the cache gone, the action restores the database from the last push's artifact"
is "$(output verdict)" PASS "and the check has its baseline again"
unlike "$jlog" "s3cret" "the token is never printed"
mv "$T/cache.evicted" "$T/cache"

# --- 7. pre-push, on a developer's clone with the database CI saved
git clone -q "$T/origin.git" "$T/laptop" 2>/dev/null
cd "$T/laptop" || exit 1
cp "$T/artifacts/kgate-$LASTPUSH-gate/kgate.db" kgate.db
KGATE_HOOK_SCRIPT="$KGATE_SRC/scripts/pre-push" "$KGATE" hook install 2>/dev/null
export KGATE
git checkout -q -b mine
echo 0.05 >perf/transpose_tiled && git commit -qam "transpose: slower"
run git push origin mine
is "$rc" 1 "pre-push: a regressed branch is refused"
like "$err" "push refused: a kernel regressed against origin/main" "against the default branch"
like "$out$err" "$(short "$C2")" "compared with the stored run of the merge base"
ok "the branch did not reach origin" sh -c "! git rev-parse --verify -q refs/remotes/origin/mine"

git checkout -q main
echo 0.05 >perf/transpose_tiled && git commit -qam "transpose: slower, on main"
R=$(git rev-parse HEAD)
run git push origin main
is "$rc" 1 "pushing the regression to main is refused"
run env KGATE_SKIP=1 git push origin main
is "$rc" 0 "KGATE_SKIP=1 lets it through once"
is "$(git rev-parse origin/main)" "$R" "origin has it"
echo "a note" >>README && git commit -qam "a note"
run git push origin main
is "$rc" 1 "the next normal push is refused: the skipped regression is still measured"
unlike "$out$err" "against $(short "$R")" "its quick run did not become the baseline"
done_testing
