#!/bin/sh
# explain.t: "kgate explain" and "kgate check --explain" on real H200 ncu
# exports (tests/fixtures/h200/ncu, --set full raw pages).  Expected numbers
# are read from the raw pages, and ncu's own estimated speed-ups from the
# rule rows of the details pages, in this test; kgate's must agree within
# 10 percentage points.
. "$(dirname "$0")/lib.sh"
. "$KGATE_SRC/tests/e2e/rules.sh"

N="$FIX/h200/ncu"
DB="$T/k.db"
unset GITHUB_STEP_SUMMARY

ingest() { # commit branch file
	"$KGATE" ingest --db "$DB" --commit "$1" --branch "$2" --benchmark transpose --ncu-csv "$3" 2>/dev/null
}
# rawval FILE METRIC: the metric's value in a raw page, separators dropped.
rawval() {
	python3 - "$1" "$2" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
h = [i for i, r in enumerate(rows) if r[0] == "ID"][0]
print(rows[h + 2][rows[h].index(sys.argv[2])].replace(",", ""))
PY
}

run "$KGATE" explain --help
is "$rc" 0 "--help exits 0"
like "$out" "^usage: kgate explain" "--help prints the usage"

ingest tiled main "$N/transpose_tiled.raw.csv"
ingest naive pr "$N/transpose_naive.raw.csv"
ingest extra pr "$N/transpose_tiled_extra.raw.csv"

# Sectors per request of the naive kernel's global stores, from the raw page.
s=$(rawval "$N/transpose_naive.raw.csv" l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum)
q=$(rawval "$N/transpose_naive.raw.csv" l1tex__t_requests_pipe_lsu_mem_global_op_st.sum)
spr=$(python3 -c "print('%.1f' % ($s / $q))")
s=$(rawval "$N/transpose_tiled.raw.csv" l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum)
q=$(rawval "$N/transpose_tiled.raw.csv" l1tex__t_requests_pipe_lsu_mem_global_op_st.sum)
spr0=$(python3 -c "print('%.1f' % ($s / $q))")
diag "store sectors/request: tiled $spr0, naive $spr"

# The kernel replaced by another: tr_tiled MISSING, tr_naive NEW, paired.
run "$KGATE" explain --db "$DB" --commit naive --baseline tiled
is "$rc" 0 "explain exits 0"
like "$out" "tr_tiled.* -> tr_naive" "the MISSING and the NEW kernel are paired"
like "$out" "global store sectors/request $spr0 -> $spr \\(uncoalesced\\)" "the sentence names the store sectors/request from the file"
like "$out" "ncu rule UncoalescedGlobalAccess, est. speed-up" "the sentence names the rule"
like "$out" "UncoalescedGlobalAccess +base ok +head fires" "UncoalescedGlobalAccess newly fires in head"
naive_out=$out

run "$KGATE" explain --db "$DB" --commit naive --baseline tiled --pair tr_tiled=tr_naive
is "$rc" 0 "--pair exits 0"
like "$out" "global store sectors/request $spr0 -> $spr" "--pair explains the two named kernels"

for r in UncoalescedGlobalAccess AchievedOccupancy IssueSlotUtilization CPIStall; do
	want=$(ncurule "$N/transpose_naive.details.csv" "$r")
	got=$(kgrule "$naive_out" "$r")
	diag "$r: ncu $want%, kgate $got%"
	ok "$r estimate within 10 points of ncu's ($want%)" within10 "${got:-999}" "$want"
done
for r in IssueSlotUtilization UncoalescedGlobalAccess; do
	run "$KGATE" explain --db "$DB" --commit extra --baseline tiled
	want=$(ncurule "$N/transpose_tiled_extra.details.csv" "$r")
	got=$(kgrule "$out" "$r")
	diag "tiled+5% $r: ncu $want%, kgate $got%"
	ok "tiled+5% $r estimate within 10 points of ncu's ($want%)" within10 "${got:-999}" "$want"
done

# Tiled against tiled with 5% more work: the extra work is named.
g0=$(rawval "$N/transpose_tiled.raw.csv" launch__grid_size)
g1=$(rawval "$N/transpose_tiled_extra.raw.csv" launch__grid_size)
i0=$(rawval "$N/transpose_tiled.raw.csv" smsp__inst_executed.sum)
i1=$(rawval "$N/transpose_tiled_extra.raw.csv" smsp__inst_executed.sum)
ip=$(python3 -c "print('%+.1f' % (($i1 - $i0) / $i0 * 100))")
run "$KGATE" explain --db "$DB" --commit extra --baseline tiled
is "$rc" 0 "explain of the 5% regression exits 0"
like "$out" "^transpose: tr_tiled\\(.*\\) \\+[0-9]+% time" "one sentence for the failed kernel"
like "$out" "grid $g0 -> $g1" "the grid change from the files"
like "$out" "instructions \\$ip% \\(more work\\)" "instructions up $ip%"

run "$KGATE" explain --db "$DB" --commit extra --baseline tiled --format json
is "$rc" 0 "json exits 0"
ok "json parses and has a why" python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert 'more work' in d['explanations'][0]['why']" "$out"
run "$KGATE" explain --db "$DB" --commit extra --baseline tiled --format markdown
like "$out" "^\\| rule \\| base \\| head" "markdown has the rule table"

# kgate check --explain: verdicts, then the why.
run "$KGATE" check --db "$DB" --commit extra --baseline tiled --no-store --explain
is "$rc" 1 "check --explain keeps the FAIL exit status"
like "$out" "^FAIL" "the verdicts are there"
like "$out" "instructions \\$ip% \\(more work\\)" "and the explanation"
run "$KGATE" check --db "$DB" --commit extra --baseline tiled --no-store --explain --format json
ok "check --explain json has why on the failed results" python3 -c "
import json,sys; d=json.loads(sys.argv[1])
f=[r for r in d['results'] if r['verdict']=='FAIL']
assert f and all('more work' in r['why'] for r in f)
x=d['explanations']; assert len(x) == 1 and x[0]['details']['rules'][0]['id'] == 'SOLBottleneck'" "$out"

# Every format carries the why.
run "$KGATE" check --db "$DB" --commit extra --baseline tiled --no-store --explain --format markdown
like "$out" "^\\*\\*Why:\\*\\* tr\\\\_tiled.*more work" "markdown: the why after the table"
like "$out" "^\\| UncoalescedGlobalAccess \\| ok \\| fires: " "markdown: with its rules"
run "$KGATE" check --db "$DB" --commit extra --baseline tiled --no-store --explain --format github
is "$(printf '%s\n' "$out" | grep -c '%0Awhy: tr_tiled')" 1 "github: the why once, in the kernel's first annotation"
like "$out" "^::error .*%0Awhy: .*est. speed-up 9%25" "github: escaped as a workflow command"
# the grid size gated too (on_change: fail), for two failures of one kernel
sed 's/launch__grid_size: { deterministic: true }/launch__grid_size: { deterministic: true, on_change: fail }/' \
	"$KGATE_SRC/thresholds/default.yaml" >"$T/grid-fails.yaml"
run "$KGATE" check --db "$DB" -t "$T/grid-fails.yaml" --commit extra --baseline tiled --no-store --explain --format junit
ok "junit: well-formed, the why in each failure, the rules in the first" python3 -c "
import sys, xml.etree.ElementTree as E
f=[x.text for x in E.fromstring(sys.argv[1]).iter('failure')]
assert len(f) == 2 and all('why: tr_tiled' in t for t in f)
assert 'SOLBottleneck' in f[0] and 'SOLBottleneck' not in f[1]" "$out"
run "$KGATE" check --db "$DB" --commit naive --baseline tiled --no-store --explain --format github
like "$out" "^::error title=kgate MISSING.*%0Awhy: .* -> tr_naive" "github: a replaced kernel's why on its MISSING annotation"
GITHUB_STEP_SUMMARY="$T/summary.md" "$KGATE" check --db "$DB" --commit extra --baseline tiled --no-store --explain >/dev/null
ok "the job summary has the why" grep -q '^\*\*Why:\*\* ' "$T/summary.md"

# Stored with the verdicts, shown by the comment and the report.
for c in "tiled main transpose_tiled" "naive pr transpose_naive" "extra pr transpose_tiled_extra"; do
	set -- $c
	"$KGATE" ingest --db "$T/s.db" --commit "$1" --branch "$2" --benchmark transpose --ncu-csv "$N/$3.raw.csv" 2>/dev/null
done
"$KGATE" check --db "$T/s.db" -t "$T/grid-fails.yaml" --commit extra --baseline tiled --explain >/dev/null
is "$(sqlite3 "$T/s.db" "SELECT count(*) FROM explanations e JOIN verdicts v ON v.run = e.run AND v.time = e.time WHERE v.verdict = 'fail'")" 2 \
	"check --explain stores one explanation beside the verdicts"
run "$KGATE" comment --db "$T/s.db" --commit extra --print
like "$out" "^transpose: tr\\\\_tiled.*\\(more work\\)" "comment: the stored why"
like "$out" "<details><summary>rules and counters</summary>" "comment: the rules folded"
"$KGATE" check --db "$T/s.db" --commit extra --baseline tiled >/dev/null
run "$KGATE" comment --db "$T/s.db" --commit extra --print
like "$out" "^#### Why" "a later check without --explain still shows the stored why of the same run"
"$KGATE" report --db "$T/s.db" --html "$T/r.html" 2>/dev/null
ok "report: the why under the newest verdicts" grep -q '<p class="why">transpose: tr_tiled' "$T/r.html"
ok "report: the HTML rules table" grep -q '<table class="rules">' "$T/r.html"
"$KGATE" check --db "$T/s.db" --commit naive --baseline tiled >/dev/null
run "$KGATE" comment --db "$T/s.db" --commit naive --print
unlike "$out" "Why" "no why for a run that was never explained"

# No diagnostic counters: the command says what to collect.
"$KGATE" ingest --db "$T/thin.db" --commit b0 --branch main --ncu-csv "$FIX/h200/ncu_saxpy_strided_raw.csv" --ncu-csv "$FIX/h200/ncu_saxpy_strided_raw.csv" 2>/dev/null
python3 "$KGATE_SRC/tests/e2e/ncu_scale.py" "$FIX/h200/ncu_saxpy_strided_raw.csv" "$T/slow.csv" strided gpu__time_duration.sum 1.5
"$KGATE" ingest --db "$T/thin.db" --commit h0 --branch pr --ncu-csv "$T/slow.csv" --ncu-csv "$T/slow.csv" 2>/dev/null
run "$KGATE" explain --db "$T/thin.db" --commit h0 --baseline b0
is "$rc" 0 "explain without counters exits 0"
like "$out" "diagnostic counters were not collected" "it says the counters are missing"
like "$out" "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum" "it lists the metrics to collect"
like "$out" "kgate metrics" "and how to check their pass count"

# Bad usage.
run "$KGATE" explain --db "$T/none.db" --commit x
is "$rc" 2 "missing database: exit 2"
like "$err" "^kgate: cannot open" "missing database: said"
run "$KGATE" explain --db "$DB" --commit naive --pair nope
is "$rc" 2 "bad --pair: exit 2"
run "$KGATE" explain --db "$DB" --commit naive --format junit
is "$rc" 2 "unsupported format: exit 2"
run "$KGATE" explain --db "$DB" --commit nosuch
is "$rc" 2 "no head run: exit 2"

done_testing
