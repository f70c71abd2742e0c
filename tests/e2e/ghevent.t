#!/bin/sh
# ghevent.t: the commit and the baseline kgate takes from a GitHub Actions
# event (GITHUB_ACTIONS=true, GITHUB_EVENT_PATH): a pull request's head
# commit, never GitHub's merge commit; its merge base with the base commit;
# a push to the default branch against its before, else the branch's
# previous stored run; bad payloads and other checkouts left alone.
# The runs are H200 recordings of transpose_tiled (tests/fixtures/h200/suite)
# stored with kgate ingest.
. "$(dirname "$0")/lib.sh"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
SUITE="$SHARED_FIX/suite/trace"
DB="$T/k.db"
rec() { # base|head: --records arguments of that side's transpose_tiled
	for f in "$SUITE/$1"/transpose_tiled.*.jsonl; do printf -- '--records\n%s\n' "$f"; done
}
ingest() { # SIDE [ARGS...]
	side=$1
	shift
	# shellcheck disable=SC2046
	"$KGATE" ingest --db "$DB" --benchmark transpose_tiled $(rec "$side") "$@"
}
ZERO=0000000000000000000000000000000000000000

git init -q -b main "$T/r"
cd "$T/r" || exit 1
echo 0 >f && git add f && git commit -qm c0
C0=$(git rev-parse HEAD)
echo 1 >f && git commit -qam c1
C1=$(git rev-parse HEAD)
git checkout -q -b topic "$C0"
echo t >g && git add g && git commit -qm topic
H=$(git rev-parse HEAD)
git checkout -q --detach "$C1"
git merge -q --no-ff --no-edit "$H" >/dev/null
M=$(git rev-parse HEAD)

ingest base --commit "$C0" --branch main 2>/dev/null
ingest base --commit "$C1" --branch main 2>/dev/null

cat >"$T/pr.json" <<EOF
{"action": "opened", "number": 12,
 "pull_request": {"number": 12, "head": {"ref": "topic", "sha": "$H"},
                  "base": {"ref": "main", "sha": "$C1"}},
 "repository": {"full_name": "acme/proj", "default_branch": "main"}}
EOF
pr() { env GITHUB_ACTIONS=true GITHUB_EVENT_NAME=pull_request GITHUB_EVENT_PATH="$T/pr.json" "$@"; }

# --- outside Actions, the checkout is the commit
run "$KGATE" ingest --db "$T/plain.db" --benchmark transpose_tiled $(rec head)
like "$err" "commit $(printf '%.12s' "$M")" "outside Actions a run is of the checkout (here a merge commit)"

# --- a pull request: the head commit, against the merge base with the base commit
run pr "$KGATE" ingest --db "$DB" --benchmark transpose_tiled $(rec head)
is "$rc" 0 "in a pull request's job, ingest stores the run"
like "$err" "commit $(printf '%.12s' "$H")" "under the pull request's head commit"
like "$err" "filing the merge commit $(printf '%.12s' "$M") under the head commit" "and says so"
run pr "$KGATE" check --db "$DB" --format json --no-store
is "$rc" 1 "check finds transpose_tiled's 5% more work"
like "$out" "\"head\": \"$H\"" "the check is of the head commit"
is "$(printf '%s\n' "$out" | jq -r '.baseline + " (" + .baseline_reason + ")"')" "$C0 (merge base with main)" \
	"against the merge base of the head and the base commit ($(printf '%.12s' "$C0"), not the base's tip)"
pr "$KGATE" check --db "$DB" >/dev/null 2>&1
run pr "$KGATE" comment --db "$DB" --print
like "$out" "$(printf '%.10s' "$H")" "comment --print shows the head commit's check"

# the merge base has no stored run: the newest stored run of the base branch
cp "$DB" "$T/k2.db"
sqlite3 "$T/k2.db" "DELETE FROM runs WHERE commit_sha = '$C0'"
run pr "$KGATE" check --db "$T/k2.db" --format json --no-store
is "$(printf '%s\n' "$out" | jq -r '.baseline + " (" + .baseline_reason + ")"')" "$C1 (newest run of main)" \
	"no run of the merge base: the base branch's newest run"
like "$err" "no run stored for the merge base $(printf '%.12s' "$C0") with main" "and says so"

# an explicit --commit and --baseline win over the event
run pr "$KGATE" check --db "$DB" --commit "$C1" --baseline "$C0" --format json --no-store
like "$out" "\"head\": \"$C1\"" "--commit wins over the event"
like "$out" "\"baseline\": \"$C0\"" "--baseline too"

# pull_request_target checks out the base: the checkout is left as it is
git checkout -q --detach "$C1"
run env GITHUB_ACTIONS=true GITHUB_EVENT_NAME=pull_request_target GITHUB_EVENT_PATH="$T/pr.json" \
	"$KGATE" ingest --db "$T/other.db" --benchmark transpose_tiled $(rec head)
like "$err" "neither pull request #12's head .* nor its merge commit; using the checkout" \
	"a checkout that is neither the head nor its merge commit is kept, with a warning"
like "$err" "commit $(printf '%.12s' "$C1")" "and the run is of the checkout"

# a payload that cannot be read: a warning, and kgate goes on as outside Actions
echo '{"pull_request": ' >"$T/bad.json"
run env GITHUB_ACTIONS=true GITHUB_EVENT_NAME=pull_request GITHUB_EVENT_PATH="$T/bad.json" \
	"$KGATE" check --db "$DB" --commit "$C1" --no-store
like "$err" "cannot read the GitHub event '$T/bad.json'" "a broken payload is named"
unlike "$rc" "^[23]$" "and the check goes on"

# --- a push to the default branch: against the push's before, else the previous stored run
git checkout -q main
echo 2 >f && git commit -qam c2
C2=$(git rev-parse HEAD)
echo 3 >f && git commit -qam c3
C3=$(git rev-parse HEAD)
ingest head --commit "$C3" --branch main 2>/dev/null
push() { # BEFORE
	printf '{"ref": "refs/heads/main", "before": "%s", "after": "%s", "repository": {"default_branch": "main"}}\n' \
		"$1" "$C3" >"$T/push.json"
	run env GITHUB_ACTIONS=true GITHUB_EVENT_NAME=push GITHUB_EVENT_PATH="$T/push.json" \
		"$KGATE" check --db "$DB" --format json --no-store
}
ingest head --commit "$C3" --branch main --db "$T/only.db" 2>/dev/null
ingest head --commit "$H" --branch topic --db "$T/only-pr.db" 2>/dev/null
push "$C0"
is "$(printf '%s\n' "$out" | jq -r '.baseline + " (" + .baseline_reason + ")"')" "$C0 (main before the push)" "a push is checked against its before when it is stored"
is "$rc" 1 "and the regression is caught"
push "$C2"
is "$(printf '%s\n' "$out" | jq -r '.baseline + " (" + .baseline_reason + ")"')" "$C1 (previous run of main)" \
	"before not stored: the previous stored run of the branch"
like "$err" "no run stored for $(printf '%.12s' "$C2") \\(before the push\\)" "and says so"
is "$rc" 1 "caught all the same"
push "$ZERO"
like "$out" "previous run of main" "a new branch's push (before all zeros): the previous stored run"
unlike "$out" "\"baseline\": \"$C3" "a push is never its own baseline"
# nothing stored before the push: NO BASELINE, saying which commit and branch were tried
printf '{"ref": "refs/heads/main", "before": "%s", "after": "%s", "repository": {"default_branch": "main"}}\n' \
	"$C2" "$C3" >"$T/push.json"
run env GITHUB_ACTIONS=true GITHUB_EVENT_NAME=push GITHUB_EVENT_PATH="$T/push.json" \
	"$KGATE" check --db "$T/only.db" --format json --no-store
like "$out" '"verdict": "NO BASELINE"' "a push with nothing stored before it: NO BASELINE"
like "$err" "push to main: $(printf '%.12s' "$C2") \\(before the push\\) has no stored run.* no other run of main" \
	"naming the push's before and the branch"
# a pull request whose base branch has nothing stored
run pr "$KGATE" check --db "$T/only-pr.db" --commit "$H" --format json --no-store
like "$out" '"verdict": "NO BASELINE"' "a pull request with nothing stored for its base: NO BASELINE"
like "$err" "pull request #12: the merge base $(printf '%.12s' "$C0") of its head .* has no stored run" \
	"naming the pull request and its merge base"
done_testing
