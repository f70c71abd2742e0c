#!/bin/sh
# policy.t: every combination of on_new_kernel, on_missing_kernel,
# on_inconclusive and on_no_baseline, through every output (text, markdown,
# json, junit, github annotations, the job summary, the stored check, the
# pull request comment and its commit status), agrees with the exit status
# of "kgate check".
#
# The data is the raw ncu export of tests/fixtures/h200 (real H200
# measurements), arranged in three benchmarks so that one check holds at
# once a MISSING kernel (benchmark a: the strided kernel dropped from the
# head), a NEW one (benchmark b: dropped from the base) and INCONCLUSIVE
# comparisons (benchmark c: 5 launches in the head, under min_samples 7);
# every other comparison passes.  The no-baseline check is a head whose
# baseline commit has no run on its GPU model and driver.
. "$(dirname "$0")/lib.sh"

RAW="$FIX/h200/ncu_saxpy_strided_raw.csv"
DB="$T/p.db"
HTTPD="$KGATE_SRC/tests/e2e/httpd.py"
unset GITHUB_STEP_SUMMARY GITHUB_ACTIONS
python3 "$KGATE_SRC/tests/e2e/ncu_scale.py" "$RAW" "$T/nostrided.csv" strided gpu__time_duration.sum 1 --drop
BASE=1111111111111111111111111111111111111111
HEAD=2222222222222222222222222222222222222222
LONE=3333333333333333333333333333333333333333
"$KGATE" ingest --db "$DB" --commit $BASE --branch main \
	--benchmark a --ncu-csv "$RAW" --ncu-csv "$RAW" \
	--benchmark b --ncu-csv "$T/nostrided.csv" --ncu-csv "$T/nostrided.csv" \
	--benchmark c --ncu-csv "$RAW" --ncu-csv "$RAW" 2>/dev/null
"$KGATE" ingest --db "$DB" --commit $HEAD --branch pr \
	--benchmark a --ncu-csv "$T/nostrided.csv" --ncu-csv "$T/nostrided.csv" \
	--benchmark b --ncu-csv "$RAW" --ncu-csv "$RAW" \
	--benchmark c --ncu-csv "$RAW" 2>/dev/null
# the lone head: the same data, on another driver than any stored run
"$KGATE" ingest --db "$DB" --commit $LONE --branch pr2 \
	--benchmark a --ncu-csv "$RAW" --ncu-csv "$RAW" 2>/dev/null
sqlite3 "$DB" "UPDATE runs SET driver = 'other-driver' WHERE commit_sha = '$LONE'"

run "$KGATE" check --db "$DB" --commit $HEAD --baseline $BASE --no-store --format json
is "$(printf '%s' "$out" | jq -c '[.summary.missing, .summary.new, (.summary.inconclusive > 0), .summary.failed]')" \
	'[1,1,true,0]' "the data: one MISSING, one NEW, some INCONCLUSIVE, no FAIL"

# verdict_of FORMAT FILE: the check's verdict as that output shows it
# (PASS, FAIL, NO BASELINE), or nothing when it shows none.
verdict_of() {
	case $1 in
	text) tail -n 1 "$2" | sed -n 's/.*: \(PASS\|FAIL\|NO BASELINE\)\( (on_no_baseline: [a-z]*)\)\{0,1\}$/\1/p' ;;
	markdown|summary) sed -n '1s/^### kgate: [^A-Z]*\(PASS\|FAIL\|NO BASELINE\).*/\1/p' "$2" ;;
	comment) sed -n '2s/^### kgate: [^A-Z]*\(PASS\|FAIL\|NO BASELINE\).*/\1/p' "$2" ;;
	esac
}

n=0 bad=0
check_combo() { # sc new missing inconclusive nobase: runs every output of one check
	sc=$1
	cat >"$T/t.yaml" <<EOF
version: 1
defaults:
  gpu__time_duration.sum: { regression: 3% }
  smsp__inst_executed.sum: { regression: 0.1% }
on_new_kernel: $2
on_missing_kernel: $3
on_inconclusive: $4
on_no_baseline: $5
EOF
	if [ "$sc" = base ]; then
		want=0
		[ "$2" = fail ] || [ "$3" = fail ] || [ "$4" = fail ] && want=1
		wantv=PASS; [ $want = 1 ] && wantv=FAIL
		args="--commit $HEAD --baseline $BASE"
	else
		want=0; [ "$5" = fail ] && want=1
		wantv="NO BASELINE"
		args="--commit $LONE"
	fi
	combo="$sc new=$2 missing=$3 inconclusive=$4 no_baseline=$5"
	why=""
	# one check: text on stdout, the other formats through --output, the
	# job summary, the stored outcome; then the comment reads it back
	rm -f "$T/o.summary"
	GITHUB_STEP_SUMMARY="$T/o.summary" "$KGATE" check --db "$DB" $args -t "$T/t.yaml" \
		--output markdown="$T/o.markdown" --output json="$T/o.json" \
		--output junit="$T/o.junit" --output github="$T/o.github" >"$T/o.text" 2>"$T/e.text"
	r=$?
	[ "$r" = "$want" ] || why="$why exit=$r"
	for f in text markdown summary; do
		v=$(verdict_of $f "$T/o.$f")
		[ "$v" = "$wantv" ] || why="$why $f:'$v'"
	done
	[ -s "$T/o.summary" ] || why="$why no-summary"
	[ "$(jq -r '"\(.verdict) \(.exit_status)"' "$T/o.json")" = "$wantv $want" ] || why="$why json"
	fails=$(sed -n 's/^<testsuites .* failures="\([0-9]*\)".*/\1/p' "$T/o.junit")
	{ [ "$want" = 1 ] && [ "${fails:-0}" -gt 0 ]; } || { [ "$want" = 0 ] && [ "$fails" = 0 ]; } ||
		why="$why junit:failures=$fails"
	errs=$(grep -c '^::error ' "$T/o.github")
	{ [ "$want" = 1 ] && [ "$errs" -gt 0 ]; } || { [ "$want" = 0 ] && [ "$errs" = 0 ]; } ||
		why="$why github:errors=$errs"
	grep -q "^::notice title=kgate::.*: $wantv" "$T/o.github" || why="$why github:notice"
	c=${args#--commit }
	c=${c%% *}
	"$KGATE" comment --db "$DB" --commit "$c" --print >"$T/o.comment" 2>/dev/null
	v=$(verdict_of comment "$T/o.comment")
	[ "$v" = "$wantv" ] || why="$why comment:'$v'"
	st=$(sqlite3 "$DB" "SELECT exit_status || ' ' || verdict FROM checks WHERE id = (SELECT max(id) FROM checks)")
	kw=$(printf '%s' "$wantv" | tr 'A-Z ' 'a-z_')
	[ "$st" = "$want $kw" ] || why="$why checks:'$st'"
	n=$((n + 1))
	if [ -n "$why" ]; then
		bad=$((bad + 1))
		diag "$combo (want exit $want, $wantv):$why"
	fi
}

# With a baseline, on_no_baseline does not apply; it takes both values in turn.
nb=warn
for new in ignore warn fail; do
	for missing in ignore warn fail; do
		for inc in ignore warn fail; do
			check_combo base $new $missing $inc $nb
			if [ $nb = warn ]; then nb=fail; else nb=warn; fi
		done
	done
done
is "$bad" 0 "with a baseline: all $n policy combinations agree with the exit status in every output"
n=0 bad=0
for new in ignore warn fail; do
	for missing in ignore fail; do
		for nb in warn fail; do
			check_combo none $new $missing warn $nb
		done
	done
done
is "$bad" 0 "without a baseline: all $n combinations say NO BASELINE, never PASS, with on_no_baseline's exit status"

# The text of the no-baseline case names the ref tried and the driver.
check_combo none fail fail fail warn
like "$(cat "$T/o.text")" "^no baseline: .* no run of branch main .* driver other-driver" \
	"the text says why there is no baseline"
like "$(cat "$T/o.comment")" "No baseline:" "and so does the comment"
unlike "$(cat "$T/o.comment")" "PASS" "which never says PASS"

# The commit status the comment sets is the stored outcome's.
start_server() {
	printf '%s\n' "$1" >"$T/script.json"
	rm -f "$T/port"
	: >"$T/log.jsonl"
	python3 "$HTTPD" "$T/script.json" "$T/log.jsonl" "$T/port" &
	SRV=$!
	i=0
	while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	URL="http://127.0.0.1:$(cat "$T/port")"
}
trap 'kill "$SRV" 2>/dev/null; rm -rf "$T"' EXIT
state_of() { # the state of the last status request
	python3 -c 'import json,sys
rs=[json.loads(l) for l in open(sys.argv[1])]
st=[json.loads(r["body"])["state"] for r in rs if "/statuses/" in r["path"]]
print(st[-1] if st else "none")' "$T/log.jsonl"
}
start_server '{"token": "tok", "comments": {"7": []}}'
for combo in "base fail warn warn warn 1" "base warn warn warn warn 0" "none warn warn warn warn 0" \
	"none warn warn warn fail 1"; do
	set -- $combo
	check_combo "$1" "$2" "$3" "$4" "$5"
	c=$HEAD; [ "$1" = none ] && c=$LONE
	GITHUB_TOKEN=tok GITHUB_API_URL="$URL" "$KGATE" comment --db "$DB" --repo o/n --pr 7 \
		--commit $c --status >/dev/null 2>&1
	want=success; [ "$6" = 1 ] && want=failure
	is "$(state_of)" "$want" "commit status of '$combo' is $want, as the exit status"
done
kill "$SRV" 2>/dev/null

done_testing
