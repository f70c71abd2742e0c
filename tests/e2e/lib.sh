# lib.sh: a small TAP harness for kgate's end-to-end tests (sourced).
#
#   plan N | ok COND-CMD... desc | is GOT WANT desc | diag MSG | done_testing
# $KGATE is the binary under test; $T is a scratch directory removed at exit.
: "${KGATE:?KGATE must name the kgate binary}"
: "${KGATE_SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
FIX="$KGATE_SRC/tests/fixtures"
SHARED_FIX="$KGATE_SRC/tests/fixtures/h200"
T=$(mktemp -d "${TMPDIR:-/tmp}/kgate-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
# Tests run in their scratch directory, so that no kgate.yaml or kgate.db of
# the source tree is picked up by a command that looks in its working
# directory.
cd "$T" || exit 2
# kgate looks for kgate.yaml and kgate.db in the directories above, as git
# looks for .git: neither looks above the scratch directory.
GIT_CEILING_DIRECTORIES=$(dirname "$T")
export GIT_CEILING_DIRECTORIES
# Every failure is also appended, with the last command's stderr, to
# $KGATE_TEST_LOG (when set), so a CI log can end with what failed and why.
_log() { [ -n "${KGATE_TEST_LOG:-}" ] && printf '%s\n' "$@" >>"$KGATE_TEST_LOG"; return 0; }
_n=0
_failed=0
export NO_COLOR=1
# Run inside a GitHub Actions job (kgate's own CI), kgate would read that
# job's event and environment; the tests set what they need themselves.
unset GITHUB_ACTIONS GITHUB_EVENT_PATH GITHUB_EVENT_NAME GITHUB_HEAD_REF GITHUB_REF_NAME \
	GITHUB_STEP_SUMMARY GITHUB_OUTPUT GITHUB_ENV GITHUB_RUN_ID GITHUB_REPOSITORY GITHUB_SERVER_URL
# The database is the one each test names, never one of the environment.
unset KGATE_DB
# The cache of confirmed metric names (src/metricinfo.c) goes to the scratch
# directory, not the user's ~/.cache.
export XDG_CACHE_HOME="$T/cache"

plan() { echo "1..$1"; }
diag() { echo "# $*"; }
_result() {
	_n=$((_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $_n - $2"
	else
		echo "not ok $_n - $2"; _failed=$((_failed + 1))
		_log "$(basename "$0") $_n: $2" "  last command: ${_cmd:-?} (exit ${rc:-?})"
		[ -s "$T/.err" ] && _log "$(head -c 2000 "$T/.err" | sed 's/^/  stderr: /')"
	fi
}
# ok DESC CMD...: passes when CMD exits 0
ok() { _d=$1; shift; if "$@" >/dev/null 2>&1; then _result 0 "$_d"; else _result 1 "$_d"; fi; }
# is GOT WANT DESC
is() {
	if [ "$1" = "$2" ]; then _result 0 "$3"
	else _result 1 "$3"; diag "got:  '$1'"; diag "want: '$2'"; _log "  got '$1', want '$2'"; fi
}
# like TEXT PATTERN DESC (grep -E)
like() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then _result 0 "$3"
	else _result 1 "$3"; diag "no match for /$2/ in:"; printf '%s\n' "$1" | head -20 | sed 's/^/#   /'; fi
}
unlike() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then _result 1 "$3"; diag "unexpected /$2/"
	else _result 0 "$3"; fi
}
# skip DESC: a TAP skip, for an assertion that cannot hold in this build
skip() { _n=$((_n + 1)); echo "ok $_n # skip $*"; }
# under_valgrind: true when make valgrind runs the tests ($KGATE is then
# kgate under memcheck, many times slower: assertions bound to wall time,
# such as a kill after a delay, do not hold)
under_valgrind() { [ "${KGATE_UNDER_VALGRIND:-0}" = 1 ]; }
# run CMD...: sets $out (stdout), $err (stderr), $rc
run() {
	_cmd="$*"
	"$@" >"$T/.out" 2>"$T/.err"
	rc=$?
	out=$(cat "$T/.out")
	err=$(cat "$T/.err")
}
done_testing() { echo "1..$_n"; [ "$_failed" -eq 0 ]; }
