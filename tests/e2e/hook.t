#!/bin/sh
# hook.t: "kgate hook install" and scripts/pre-push, run for real by git push
# in a throwaway repository with a remote.
. "$(dirname "$0")/lib.sh"
HOOK="$KGATE_SRC/scripts/pre-push"
export KGATE_HOOK_SCRIPT="$HOOK"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
git init -q --bare -b main "$T/remote.git"
git init -q -b main "$T/w"
cd "$T/w" || exit 1
echo one >f && git add f && git commit -qm one
git remote add origin "$T/remote.git"
git push -q --no-verify -u origin main 2>/dev/null

# --- install
run "$KGATE" hook
is "$rc" 2 "hook without a subcommand is a usage error"
run "$KGATE" hook install
is "$rc" 0 "hook install exits 0"
ok "it made .git/hooks/pre-push a symbolic link" test -L .git/hooks/pre-push
is "$(readlink -f .git/hooks/pre-push)" "$(readlink -f "$HOOK")" "to scripts/pre-push"
like "$err" "git push --no-verify" "it says how to skip the hook"
run "$KGATE" hook install
is "$rc" 0 "installing again is fine"
like "$err" "already installed" "and says so"
run "$KGATE" hook path
is "$out" "$(readlink -f "$HOOK")" "hook path prints the script"

git init -q "$T/other"
printf '#!/bin/sh\necho mine\n' >"$T/other/.git/hooks/pre-push"
run sh -c "cd '$T/other' && '$KGATE' hook install"
is "$rc" 2 "an existing pre-push hook is refused"
like "$err" "exists and is not kgate's" "with a reason"
is "$(cat "$T/other/.git/hooks/pre-push")" "$(printf '#!/bin/sh\necho mine')" "and is left untouched"

git init -q "$T/custom"
git -C "$T/custom" config core.hooksPath myhooks
run sh -c "cd '$T/custom' && '$KGATE' hook install"
is "$rc" 0 "with core.hooksPath set, install exits 0"
ok "and links into that directory" test -L "$T/custom/myhooks/pre-push"

# A parent that ignores SIGCHLD (inherited through exec) left git's exit
# status nothing to be waited for: every question kgate asked git hung.
if command -v python3 >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1; then
	git init -q "$T/nochld"
	git -C "$T/nochld" commit -q --allow-empty -m one
	nochld() {
		run sh -c "cd '$T/nochld' && timeout 60 python3 -c 'import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execv(sys.argv[1], sys.argv[1:])' '$KGATE' $*"
	}
	nochld hook install
	is "$rc" 0 "with SIGCHLD ignored by its parent, install exits 0 (and does not hang)"
	ok "and links the hook" test -L "$T/nochld/.git/hooks/pre-push"
	nochld comment --print --db none.db
	like "$rc/$err" "^2/kgate: cannot open 'none.db': no such database" \
		"and git names HEAD for another command (it does not hang)"
else
	skip "python3 or timeout is not installed"
	skip "python3 or timeout is not installed"
	skip "python3 or timeout is not installed"
fi

mkdir "$T/nogit"
run env GIT_CEILING_DIRECTORIES="$T" sh -c "cd '$T/nogit' && '$KGATE' hook install"
is "$rc" 2 "outside a git repository install exits 2"
like "$err" "not in a git repository" "and says so"

# --- the hook, run by git push
mkdir -p "$T/bin"
# a machine without a GPU: nvidia-smi -L fails
printf '#!/bin/sh\necho "NVIDIA-SMI has failed" >&2\nexit 9\n' >"$T/bin/nvidia-smi"
chmod +x "$T/bin/nvidia-smi"
PATH="$T/bin:$PATH"
export PATH KGATE

commit() { echo "$1" >>f && git commit -qam "$1"; }

commit two
run git push origin main
is "$rc" 0 "without kgate.yaml the push goes through"
like "$err" "no kgate.yaml in" "saying there is nothing to check"

printf 'version: 1\nbenchmarks:\n  - name: saxpy\n    cmd: [./k]\n' >kgate.yaml
git add kgate.yaml && git commit -qm yaml && git push -q --no-verify origin main 2>/dev/null
base=$(git rev-parse HEAD)
commit three
run env KGATE_SKIP=1 git push origin main
is "$rc" 0 "KGATE_SKIP=1 lets the push through"
like "$err" "skipped \\(KGATE_SKIP=1\\)" "and says it skipped"

commit four
run git push origin main
is "$rc" 0 "with no database the push goes through"
like "$err" "no stored baseline: kgate.db does not exist" "saying the baseline is missing"
like "$err" "kgate run -c kgate.yaml --db .*--commit [0-9a-f]{40}" "and how to record one"
base=$(git merge-base HEAD origin/main)

"$KGATE" ingest --db kgate.db --commit 0000000000000000000000000000000000000000 --branch elsewhere --benchmark saxpy \
	--ncu-csv "$SHARED_FIX/ncu_saxpy_strided_raw.csv" 2>/dev/null
commit five
run git push origin main
is "$rc" 0 "a database without the baseline commit lets the push through"
like "$err" "no stored baseline for origin/main at $(printf '%.12s' "$base")" "naming the default branch and the merge base"

base=$(git merge-base HEAD origin/main)
"$KGATE" ingest --db kgate.db --commit "$base" --branch main --benchmark saxpy \
	--ncu-csv "$SHARED_FIX/ncu_saxpy_strided_raw.csv" 2>/dev/null
commit five-and-a-half
run git push origin main
is "$rc" 0 "with no GPU the push goes through"
like "$err" "no GPU found .*skipping the performance check" "with the skip message"

# a GPU machine, with a stand-in kgate that records how the hook calls it
# and answers the check with a chosen exit status
printf '#!/bin/sh\nexit 0\n' >"$T/bin/nvidia-smi"
cat >"$T/bin/kgate-stub" <<EOF2
#!/bin/sh
echo "\$*" >>"$T/stub.log"
case \$1 in check) echo "| FAIL | saxpy | ..."; exit \${STUB_CHECK:-0} ;; esac
exit 0
EOF2
chmod +x "$T/bin/kgate-stub"
commit six
head=$(git rev-parse HEAD)
base=$(git merge-base HEAD origin/main)
"$KGATE" ingest --db kgate.db --commit "$base" --branch main --benchmark saxpy \
	--ncu-csv "$SHARED_FIX/ncu_saxpy_strided_raw.csv" 2>/dev/null
run env KGATE="$T/bin/kgate-stub" STUB_CHECK=1 git push origin main
is "$rc" 1 "a regression refuses the push"
like "$err" "push refused: a kernel regressed against origin/main" "saying why"
like "$err" "git push --no-verify, or KGATE_SKIP=1 git push" "and how to skip"
like "$out$err" "\\| FAIL \\| saxpy" "the verdict table is shown"
is "$(sed -n 1p "$T/stub.log")" "run --quick -c kgate.yaml --db kgate.db --commit $head" "the hook runs the suite in quick mode on HEAD"
is "$(sed -n 2p "$T/stub.log")" "check --db kgate.db --commit $head" "and checks it as kgate check does (the merge base with the default branch)"
is "$(git rev-parse origin/main)" "$base" "the remote did not move"
run env KGATE="$T/bin/kgate-stub" STUB_CHECK=1 git push --no-verify origin main
is "$rc" 0 "git push --no-verify skips the hook"
commit seven
"$KGATE" ingest --db kgate.db --commit "$(git merge-base HEAD origin/main)" --branch main \
	--benchmark saxpy --ncu-csv "$SHARED_FIX/ncu_saxpy_strided_raw.csv" 2>/dev/null
run env KGATE="$T/bin/kgate-stub" STUB_CHECK=0 git push origin main
is "$rc" 0 "a passing check lets the push through"
commit eight
"$KGATE" ingest --db kgate.db --commit "$(git merge-base HEAD origin/main)" --branch main \
	--benchmark saxpy --ncu-csv "$SHARED_FIX/ncu_saxpy_strided_raw.csv" 2>/dev/null
run env KGATE="$T/bin/kgate-stub" STUB_CHECK=2 git push origin main
is "$rc" 0 "a check that cannot decide does not block"
like "$err" "could not decide \\(exit 2\\)" "and says so"
done_testing
