#!/bin/sh
# ci_files.t: the GitHub Action and the example workflows: the YAML passes
# yamllint, every input used is declared (and every declared input used),
# the workflows pass only inputs the action declares, no run: script expands
# ${{ }} itself (inputs travel through env:), and every embedded shell script
# and every script in scripts/ passes shellcheck.
. "$(dirname "$0")/lib.sh"
S="$KGATE_SRC"
PY=""
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import yaml' 2>/dev/null; then PY=$p; break; fi
done

for f in "$S/ci/action.yml" "$S/ci/workflows/pr.yml" "$S/ci/workflows/nightly.yml" \
	"$S/ci/workflows/sharded.yml"; do
	name=${f#"$S/"}
	ok "$name exists" test -s "$f"
	if command -v yamllint >/dev/null; then
		run yamllint -f parsable -d relaxed "$f"
		is "$rc" 0 "yamllint -d relaxed passes $name"
		unlike "$out" '\[error\]' "yamllint finds no error in $name"
	else
		_result 0 "# SKIP yamllint not installed"; _result 0 "# SKIP yamllint not installed"
	fi
done

if [ -z "$PY" ]; then
	diag "no python3 with PyYAML: skipping the structural checks"
	done_testing
	exit $?
fi

# Extract every run: script (action and workflows) into $T/sh/, and check
# the action's structure.
mkdir -p "$T/sh"
run "$PY" - "$S" "$T/sh" <<'PYEOF'
import os, re, sys, yaml
src, outdir = sys.argv[1], sys.argv[2]
problems = []
def load(p):
    with open(os.path.join(src, p)) as f:
        return yaml.safe_load(f), open(os.path.join(src, p)).read()
action, atext = load("ci/action.yml")
declared = set((action.get("inputs") or {}).keys())
used = set(re.findall(r"inputs\.([A-Za-z0-9_-]+)", atext))
for u in sorted(used - declared):
    problems.append("action.yml uses undeclared input %s" % u)
for d in sorted(declared - used):
    problems.append("action.yml declares unused input %s" % d)
if action.get("runs", {}).get("using") != "composite":
    problems.append("action.yml is not a composite action")
n = 0
def take(where, steps, need_shell):
    global n
    for i, st in enumerate(steps or []):
        if "run" not in st:
            continue
        if need_shell and "shell" not in st:
            problems.append("%s step %d has run: but no shell:" % (where, i))
        if "${{" in st["run"]:
            problems.append("%s step %d expands ${{ }} inside its script" % (where, i))
        shell = st.get("shell", "bash")
        n += 1
        with open(os.path.join(outdir, "%02d.sh" % n), "w") as f:
            f.write("#!/bin/%s\n# %s step %d\n" % ("bash" if "bash" in shell else "sh", where, i))
            f.write(st["run"])
take("action.yml", action["runs"]["steps"], True)
for wf in ("ci/workflows/pr.yml", "ci/workflows/nightly.yml", "ci/workflows/sharded.yml"):
    w, _ = load(wf)
    on = w.get("on", w.get(True))
    if not on:
        problems.append("%s has no on:" % wf)
    for jname, job in (w.get("jobs") or {}).items():
        take("%s job %s" % (wf, jname), job.get("steps"), False)
        for st in job.get("steps") or []:
            if st.get("uses", "").endswith("/ci") or st.get("uses") == "./ci" or "/ci@" in st.get("uses", ""):
                for k in (st.get("with") or {}):
                    if k not in declared:
                        problems.append("%s passes undeclared input %s" % (wf, k))
for p in problems:
    print(p)
print("scripts", n)
PYEOF
is "$rc" 0 "the action and the workflows parse"
unlike "$out" 'undeclared|unused|not a composite|no shell|expands|has no on' "inputs declared and used, shells named, no \${{ }} in scripts"
if [ -n "$out" ] && printf '%s\n' "$out" | grep -qv '^scripts'; then diag "$out"; fi
nscripts=$(printf '%s\n' "$out" | sed -n 's/^scripts //p')
ok "the run: scripts were extracted ($nscripts)" test "${nscripts:-0}" -ge 5

if command -v shellcheck >/dev/null; then
	for f in "$T"/sh/*.sh; do
		run shellcheck "$f"
		is "$rc" 0 "shellcheck passes $(sed -n 2p "$f" | sed 's/^# //')"
		[ "$rc" -eq 0 ] || diag "$out"
	done
	for f in "$S"/scripts/*.sh "$S/scripts/pre-push"; do
		run shellcheck "$f"
		is "$rc" 0 "shellcheck passes ${f#"$S/"}"
		[ "$rc" -eq 0 ] || diag "$out"
	done
else
	diag "shellcheck not installed: skipping"
fi

# The "Run and check" step, run with a fake kgate that logs its arguments:
# explain: true adds --explain and, on a regression only, explain --collect,
# whose failure leaves the exit code alone.
gate=$(grep -l '^collect_why()' "$T"/sh/*.sh 2>/dev/null | head -1)
ok "the action's gate step was extracted" test -n "$gate"
cat > "$T/fakekgate" <<'EOF'
#!/bin/sh
echo "$*" >> "$FAKE_LOG"
case $1 in
check|compare) exit "${FAKE_CHECK_RC:-0}" ;;
explain) echo "why: something"; exit "${FAKE_EXPLAIN_RC:-0}" ;;
esac
exit 0
EOF
chmod +x "$T/fakekgate"
mkdir -p "$T/repo" "$T/rt"
git -C "$T/repo" init -q && git -C "$T/repo" -c user.name=t -c user.email=t@t commit -q --allow-empty -m one &&
	git -C "$T/repo" -c user.name=t -c user.email=t@t commit -q --allow-empty -m two
sha=$(git -C "$T/repo" rev-parse HEAD)
parent=$(git -C "$T/repo" rev-parse HEAD~1)
gate_step() { # mode explain check-rc explain-rc
	: > "$T/log"; : > "$T/ghout"; : > "$T/summary"
	(cd "$T/repo" && env KGATE="$T/fakekgate" FAKE_LOG="$T/log" FAKE_CHECK_RC="$3" FAKE_EXPLAIN_RC="$4" \
		KG_CONFIG=kgate.yaml KG_THRESHOLDS= KG_DB=k.db KG_BASELINE="$parent" KG_MODE="$1" KG_BUILD=true \
		KG_EXPLAIN="$2" KG_CONFIRM="${5:-false}" KG_BASE_REF=main GITHUB_OUTPUT="$T/ghout" GITHUB_STEP_SUMMARY="$T/summary" \
		RUNNER_TEMP="$T/rt" bash "$gate" 2>&1)
}
out=$(gate_step history true 1 0)
like "$(cat "$T/log")" "^check -c kgate.yaml --db k.db --baseline $parent --format github --explain$" "history, explain: check --explain"
like "$(cat "$T/log")" "^check -c kgate.yaml --db k.db --baseline $parent --no-store --format json$" "and once more as json, for the results-json output"
unlike "$(cat "$T/log")" "--commit" "the commit is left to kgate (the event's head commit), not git rev-parse HEAD"
like "$(cat "$T/log")" "^explain --collect -c kgate.yaml --db k.db --baseline $parent --format markdown$" \
	"on a regression: explain --collect, against the same baseline"
is "$(cat "$T/ghout")" "exit-code=1" "the exit code is check's"
ok "the explanation reaches the job summary" grep -q "why: something" "$T/summary"
out=$(gate_step history true 1 3)
is "$(cat "$T/ghout")" "exit-code=1" "explain --collect failing leaves the exit code alone"
like "$out" "::warning::kgate: explain --collect failed" "and says so"
gate_step history true 0 0 >/dev/null
unlike "$(cat "$T/log")" "^explain" "no regression: nothing collected"
gate_step history false 1 0 >/dev/null
unlike "$(cat "$T/log")" "explain" "explain: false: no --explain, no explain"
out=$(gate_step compare true 1 0)
like "$(cat "$T/log")" "^compare --base-dir $T/rt/kgate-base --head-dir \\. .*--format github --explain$" "compare, explain: compare --explain"
like "$(cat "$T/log")" "^explain --collect .*--baseline $parent --base-dir $T/rt/kgate-base --format markdown$" \
	"compare: the base side collected in the base checkout"
is "$(cat "$T/ghout")" "exit-code=1" "compare: the exit code is compare's"
gate_step compare false 0 0 true >/dev/null
like "$(cat "$T/log")" "^compare --base-dir $T/rt/kgate-base --head-dir \\. .*--format github --confirm$" "compare, confirm: compare --confirm"
gate_step compare false 0 0 >/dev/null
unlike "$(cat "$T/log")" "--confirm" "confirm: false: no --confirm"

# The workflows can be copied into another repository as they are: they
# use the action by its repository path, never ./ci, and run nothing of
# kgate's own tree (its scripts/, make benchmarks) but from a checkout of
# kgate they make themselves (.kgate/scripts/).
for wf in "$S"/ci/workflows/*.yml; do
	n=${wf#"$S/"}
	unlike "$(grep -E '^[^#]*(uses: \./|(^|[^/])scripts/|make benchmarks)' "$wf")" . "$n uses nothing of kgate's own tree"
done
# Every uses: line of the docs and workflows that names kgate's action names
# a directory of this repository that holds action.yml.
uses=$(grep -hoE 'uses: [A-Za-z0-9_<>-]+/kgate/[^@ ]+@' "$S"/docs/*.md "$S"/README.md "$S"/ci/workflows/*.yml "$S"/ci/action.yml | sort -u)
ok "the docs and workflows name the action" test -n "$uses"
for u in $(printf '%s\n' "$uses" | sed -E 's|^uses: [^/]+/kgate/||; s|@$||'); do
	ok "uses: .../kgate/$u names a real path: $u/action.yml" test -f "$S/$u/action.yml"
done
# Pull requests' older runs are cancelled, the default branch's never: the
# recording of a baseline is never lost to a newer push.
pr_conc=$("$PY" -c 'import sys, yaml; c = yaml.safe_load(open(sys.argv[1]))["concurrency"]; print(c["cancel-in-progress"])' "$S/ci/workflows/pr.yml")
like "$pr_conc" "event_name == 'pull_request'" "pr.yml cancels in progress only for pull requests"
unlike "$(grep -E 'cancel-in-progress: *true' "$S"/ci/workflows/*.yml)" . "no workflow cancels every run"
# One writer per branch: the nightly job never saves main's database.
like "$(grep -A12 'OWNER/kgate/ci@' "$S/ci/workflows/nightly.yml")" 'save: never' "nightly.yml never saves the database"

# the documentation names every input of the action
for i in $("$PY" -c 'import sys, yaml; print(" ".join(yaml.safe_load(open(sys.argv[1]))["inputs"]))' "$S/ci/action.yml"); do
	ok "docs/CI.md documents the input $i" grep -q "\`$i\`" "$S/docs/CI.md"
done
done_testing
