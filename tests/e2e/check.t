#!/bin/sh
# check.t: "kgate check" on real H200 data.  The baseline is the raw ncu
# export of tests/fixtures/h200 ingested twice (10 launches per kernel);
# heads are the same export, or copies with one metric of one kernel scaled
# by ncu_scale.py (a known change made out of real measurements).  Checks
# the verdicts, every output format, stored verdicts, the baseline choice
# through git, and the error cases.
. "$(dirname "$0")/lib.sh"

RAW="$FIX/h200/ncu_saxpy_strided_raw.csv"
SCALE="$KGATE_SRC/tests/e2e/ncu_scale.py"
DB="$T/k.db"
unset GITHUB_STEP_SUMMARY

ingest() { # commit branch file [file]
	c=$1 b=$2
	shift 2
	set -- $(for f in "$@"; do printf -- '--ncu-csv %s ' "$f"; done)
	"$KGATE" ingest --db "$DB" --commit "$c" --branch "$b" "$@" 2>/dev/null
}
dbsum() { sqlite3 "$DB" .dump | md5sum; }

run "$KGATE" check --help
is "$rc" 0 "--help exits 0"
like "$out" "^usage: kgate check" "--help prints the usage"

ingest base0 main "$RAW" "$RAW"
ingest same1 pr "$RAW" "$RAW"
python3 "$SCALE" "$RAW" "$T/slow10.csv" strided gpu__time_duration.sum 1.10
ingest slow10 pr "$T/slow10.csv" "$T/slow10.csv"
python3 "$SCALE" "$RAW" "$T/slow1.csv" strided gpu__time_duration.sum 1.01
ingest slow1 pr "$T/slow1.csv" "$T/slow1.csv"
python3 "$SCALE" "$RAW" "$T/inst.csv" saxpy smsp__inst_executed.sum 1.01
ingest inst1 pr "$T/inst.csv" "$T/inst.csv"
python3 "$SCALE" "$RAW" "$T/nostrided.csv" strided gpu__time_duration.sum 1 --drop
ingest gone1 pr "$T/nostrided.csv" "$T/nostrided.csv"
ingest few1 pr "$RAW"

# --- verdicts -------------------------------------------------------------
run "$KGATE" check --db "$DB" --commit same1 --baseline base0
is "$rc" 0 "the same measurements pass"
like "$out" "^0 failed, 14 passed, 0 inconclusive, 0 new, 0 missing: PASS$" "all 14 comparisons pass"

run "$KGATE" check --db "$DB" --commit slow10 --baseline base0
is "$rc" 1 "a kernel 10% slower fails the check"
is "$(printf '%s\n' "$out" | grep -c '^FAIL ')" 2 "exactly one FAIL row and one FAIL note"
like "$out" "^FAIL +k: strided\(int, float const\*, float\*, int\) +gpu__time_duration.sum .* \+10\.00%" \
	"the FAIL row names the strided kernel, its metric and +10.00%"
unlike "$out" "FAIL .*saxpy" "the unchanged saxpy kernel does not fail"
like "$out" "slower by 10.00% \(limit 3%\) \(p = " "the note says by how much, the limit and p"
like "$out" "^1 failed, 13 passed" "summary line"

run "$KGATE" check --db "$DB" --commit slow1 --baseline base0
is "$rc" 0 "1% slower, under the 3% limit, passes"
like "$out" "0 failed, 14 passed, 0 inconclusive" "and is not even inconclusive with 10 samples a side"

run "$KGATE" check --db "$DB" --commit inst1 --baseline base0
is "$rc" 1 "1% more instructions fails (deterministic counter, limit 0.1%)"
like "$out" "^FAIL +k: saxpy.* smsp__inst_executed.sum .*39845888 +40244347 +\+1\.00%" \
	"the instruction count row shows both counts"
like "$out" "deterministic counter changed by \+1%" "and says why"

run "$KGATE" check --db "$DB" --commit gone1 --baseline base0
is "$rc" 1 "a vanished kernel fails (on_missing_kernel: fail)"
like "$out" "^MISSING +k: strided" "it is reported as MISSING"

run "$KGATE" check --db "$DB" --commit base0 --baseline gone1 --no-store
is "$rc" 0 "a new kernel warns only (on_new_kernel: warn)"
like "$out" "^NEW +k: strided" "it is reported as NEW"

run "$KGATE" check --db "$DB" --commit few1 --baseline base0
is "$rc" 0 "too few samples is a warning by default"
like "$out" "^INCONCLUSIVE +k: .*gpu__time_duration.sum" "5 launches a side is INCONCLUSIVE, never PASS"
like "$out" "too few samples \(5 base|too few samples \(10 base, 5 head" "and says why"

cat >"$T/strict.yaml" <<'EOF'
version: 1
defaults:
  gpu__time_duration.sum: { regression: 3% }
on_inconclusive: fail
EOF
run "$KGATE" check --db "$DB" --commit few1 --baseline base0 -t "$T/strict.yaml"
is "$rc" 1 "on_inconclusive: fail turns it into a failure"

cat >"$T/tight.yaml" <<'EOF'
version: 1
defaults:
  gpu__time_duration.sum: { regression: 20% }
rules:
  - match: { kernel: "regex:^strided" }
    metrics:
      gpu__time_duration.sum: { regression: 12% }
      sm__throughput.avg.pct_of_peak_sustained_elapsed: { min: 95 }
EOF
run "$KGATE" check --db "$DB" --commit slow10 --baseline base0 -t "$T/tight.yaml"
is "$rc" 1 "a min bound fails"
like "$out" "FAIL .*strided.*sm__throughput.avg.pct_of_peak_sustained_elapsed: .* is under the minimum 95" \
	"the bound message"
unlike "$out" "FAIL .*gpu__time_duration" "+10% is within a 12% rule"

# --- formats --------------------------------------------------------------
run "$KGATE" check --db "$DB" --commit slow10 --baseline base0 --format json --no-store
is "$rc" 1 "json: same exit status"
is "$(printf '%s' "$out" | jq -r '.summary.failed')" 1 "json: one failure"
is "$(printf '%s' "$out" | jq -r '[.results[] | select(.verdict == "FAIL")][0].demangled')" \
	"strided(int, float const*, float*, int)" "json: the failing kernel"
is "$(printf '%s' "$out" | jq -r '[.results[] | select(.verdict == "FAIL")][0].shift * 1000 | round')" \
	100 "json: shift is 0.100"
is "$(printf '%s' "$out" | jq -r '.results | length')" 14 "json lists every comparison"

run "$KGATE" check --db "$DB" --commit slow10 --baseline base0 --format junit --no-store
printf '%s\n' "$out" >"$T/j.xml"
ok "junit is well-formed XML" python3 -c "import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])" "$T/j.xml"
like "$out" '<testsuites name="kgate" tests="14" failures="1" skipped="0">' "junit counts"
like "$out" '<failure type="FAIL" message="slower by 10.00% \(limit 3%\)">' "junit failure element"

run "$KGATE" check --db "$DB" --commit slow10 --baseline base0 --format github --no-store
like "$out" '^::error title=kgate FAIL%3A k::strided\(int, float const\*, float\*, int\): slower by 10.00%25' \
	"github: an error annotation, % and : encoded"
like "$out" '^::notice title=kgate::' "github: a notice with the summary"

run "$KGATE" check --db "$DB" --commit slow10 --baseline base0 --format markdown --no-store
like "$out" '^\| \*\*FAIL\*\* \| k \| <code>strided\(int, float const\*, float\*, int\)</code> \| <code>gpu__time_duration.sum</code> \|' \
	"markdown: the FAIL row"
run "$KGATE" check --db "$DB" --commit slow10 --baseline base0 --format yaml
is "$rc" 2 "an unknown format is a usage error"
like "$err" "--format 'yaml' is not one of: text, markdown, json, junit, github" "with the choices"

GITHUB_STEP_SUMMARY="$T/summary.md" run "$KGATE" check --db "$DB" --commit slow10 --baseline base0 --no-store
like "$(cat "$T/summary.md")" "^### kgate: :x: FAIL: performance regression" "the job summary is written"

# --- stored verdicts ------------------------------------------------------
n0=$(sqlite3 "$DB" "SELECT count(*) FROM verdicts")
run "$KGATE" check --db "$DB" --commit slow10 --baseline base0
is "$(sqlite3 "$DB" "SELECT count(*) FROM verdicts")" $((n0 + 14)) "a check stores its 14 verdicts"
is "$(sqlite3 "$DB" "SELECT verdict || ' ' || metric FROM verdicts WHERE verdict = 'fail' ORDER BY id DESC LIMIT 1")" \
	"fail gpu__time_duration.sum" "the stored FAIL"
run "$KGATE" check --db "$DB" --commit slow10 --baseline base0 --no-store
is "$(sqlite3 "$DB" "SELECT count(*) FROM verdicts")" $((n0 + 14)) "--no-store stores nothing"

# --- hostile names (synthetic records: only the names matter here) --------
mkrec() { # file name duration
	{
		printf '{"type":"header","format":1,"collector":"test","cupti":130000,"mode":"trace","pid":1,"ppid":1,"pass":0,"passes":1,"replay":"kernel","argv":["hostile"],"time":1764720000,"devices":[{"id":0,"name":"Synthetic GPU","uuid":"GPU-0","chip":"SYN0","sms":4,"cc":"0.0","driver":1,"runtime":1}],"metrics":["gpu__time_duration.sum"]}\n'
		i=0
		while [ $i -lt 8 ]; do
			printf '{"type":"kernel","ordinal":%d,"name":"%s","device":0,"context":1,"stream":7,"corr":%d,"start":0,"end":%d,"grid":[1,1,1],"block":[32,1,1],"regs":8,"smem_static":0,"smem_dynamic":0,"local_per_thread":0,"nvtx":"a|b","metrics":{"gpu__time_duration.sum":%d}}\n' \
				$i "$2" $i $(($3 + i)) $(($3 + i))
			i=$((i + 1))
		done
		printf '{"type":"footer","kernels":8,"dropped":0,"errors":0}\n'
	} >"$1"
}
EVIL='k<script>alert(1)</script>|`x`*_[y](z)\"q\"%0A::error::'
mkrec "$T/h0.jsonl" "$EVIL" 1000
mkrec "$T/h1.jsonl" "$EVIL" 2000
"$KGATE" ingest --db "$DB" --commit hostile0 --records "$T/h0.jsonl" 2>/dev/null
"$KGATE" ingest --db "$DB" --commit hostile1 --records "$T/h1.jsonl" 2>/dev/null
run "$KGATE" check --db "$DB" --commit hostile1 --baseline hostile0 --format markdown --no-store
is "$rc" 1 "the hostile kernel doubles in time: FAIL"
unlike "$out" "<script>" "markdown: no raw script tag"
like "$out" '<code>k&lt;script&gt;alert\(1\)&lt;/script&gt;&#124;&#96;x&#96;\*_\[y\]\(z\)"q"%0A::error::</code>' \
	"markdown: the name HTML-escaped inside <code>, pipes and backticks as entities"
like "$out" '\| hostile <sub>a&#124;b</sub> \|' "markdown: the NVTX path's pipe escaped"
run "$KGATE" check --db "$DB" --commit hostile1 --baseline hostile0 --format github --no-store
is "$(printf '%s\n' "$out" | grep -c '^::')" 2 "github: one annotation and the notice, no injected command"
like "$out" "::error title=kgate FAIL%3A hostile::k<script>alert\(1\)</script>\|.*%250A::error::" \
	"github: the name's % encoded, so '%0A' stays text"
run "$KGATE" check --db "$DB" --commit hostile1 --baseline hostile0 --format junit --no-store
printf '%s\n' "$out" >"$T/h.xml"
ok "junit with the hostile name is well-formed XML" python3 -c "import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])" "$T/h.xml"
run "$KGATE" check --db "$DB" --commit hostile1 --baseline hostile0 --format json --no-store
is "$(printf '%s' "$out" | jq -r '.results[0].kernel')" 'k<script>alert(1)</script>|`x`*_[y](z)"q"%0A::error::' \
	"json: the name round-trips exactly"

# --- the GPU fingerprint --------------------------------------------------
sed 's/"name":"Synthetic GPU"/"name":"Other GPU"/' "$T/h0.jsonl" >"$T/o.jsonl"
"$KGATE" ingest --db "$DB" --commit other0 --records "$T/o.jsonl" 2>/dev/null
run "$KGATE" check --db "$DB" --commit hostile1 --baseline other0 --no-store
is "$rc" 2 "runs on another GPU model are never a baseline: an explicit --baseline without a run on this GPU is an error"
like "$err" "baseline 'other0' \(other0\) has no stored run on Synthetic GPU with driver 1; other0 has runs on Other GPU" "and it says so"
like "$err" "stored for Synthetic GPU: hostile0 \(no branch, driver 1\)" "and what is stored for this GPU"
is "$out" "" "and prints no verdicts"

# --- the baseline through git ---------------------------------------------
R="$T/repo"
g() { git -C "$R" -c user.name=t -c user.email=t@t -c init.defaultBranch=main "$@" >/dev/null 2>&1; }
mkdir "$R" && g init && g commit --allow-empty -m one && g commit --allow-empty -m two
mb=$(git -C "$R" rev-parse HEAD)
g checkout -b feature && g commit --allow-empty -m three
hd=$(git -C "$R" rev-parse HEAD)
"$KGATE" ingest --db "$DB" --commit "$mb" --branch main --ncu-csv "$RAW" --ncu-csv "$RAW" 2>/dev/null
"$KGATE" ingest --db "$DB" --commit "$hd" --branch feature --ncu-csv "$T/slow10.csv" --ncu-csv "$T/slow10.csv" 2>/dev/null
run sh -c "cd '$R' && '$KGATE' check --db '$DB' --no-store"
is "$rc" 1 "without --commit and --baseline: HEAD against its merge base with main"
like "$out" "^kgate check: $(printf '%.12s' "$hd") against $(printf '%.12s' "$mb") \(merge base with main\) \(1 run\)" "the heading names both"
run sh -c "cd '$R' && '$KGATE' check --db '$DB' --no-store --format json"
is "$(printf '%s\n' "$out" | jq -r '.head, .baseline, .baseline_reason' | tr '\n' ' ')" "$hd $mb merge base with main " "in JSON: both commits whole, the reason in baseline_reason"
run sh -c "cd '$R' && '$KGATE' check --db '$DB' --no-store --baseline HEAD~1"
is "$rc" 1 "--baseline takes a git ref"
like "$out" "against $(printf '%.12s' "$mb") \(HEAD~1\)" "resolved by git"
g checkout main && g commit --allow-empty -m four
run sh -c "cd '$R' && '$KGATE' check --db '$DB' --no-store --commit '$hd'"
is "$rc" 1 "the merge base is still found after main moves on"

# --- a database another job holds the write lock of -----------------------
# The lock is held until the two commands below are done ($T/release; at
# most 120 s), however slowly they run (a sanitizer build, valgrind, a
# loaded machine), and they start only once it is held.
rm -f "$T/release"
(printf 'BEGIN EXCLUSIVE;\nINSERT INTO benchmarks(name) VALUES (%s);\n' "'lock'"
	i=0; while [ ! -e "$T/release" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
	printf 'ROLLBACK;\n') |
	sqlite3 "$DB" &
lockpid=$!
i=0
while sqlite3 "$DB" "BEGIN IMMEDIATE; ROLLBACK;" 2>/dev/null && [ $i -lt 300 ]; do
	sleep 0.1; i=$((i + 1))
done
KGATE_BUSY_TIMEOUT_MS=100 run "$KGATE" check --db "$DB" --commit slow10 --baseline base0
is "$rc" 1 "a check still reads a database another job is writing (WAL)"
like "$err" "verdicts were not stored" "and says its verdicts could not be stored"
KGATE_BUSY_TIMEOUT_MS=100 run "$KGATE" ingest --db "$DB" --commit locked1 --ncu-csv "$RAW"
is "$rc" 3 "ingest into a locked database past the busy timeout is a runtime error"
like "$err" "^kgate: .*(locked|busy)" "and says the database is locked"
touch "$T/release"
wait "$lockpid"
is "$(sqlite3 "$DB" "SELECT count(*) FROM runs WHERE commit_sha = 'locked1'")" 0 "nothing was stored"

# --- errors: clear message, exit status, database unchanged ---------------
sum0=$(dbsum)
run "$KGATE" check --db "$T/none.db" --commit x
is "$rc" 2 "a missing database is an input error"
like "$err" "^kgate: cannot open '.*none.db': no such database" "and says so"
ok "and is not created" test ! -e "$T/none.db"
run "$KGATE" check --db "$DB" --commit nosuch --baseline base0
is "$rc" 2 "an unknown head commit"
like "$err" "no run is stored for commit 'nosuch'" "says which"
run "$KGATE" check --db "$DB" --commit slow10 --baseline no/such/ref
is "$rc" 2 "an unknown baseline"
like "$err" "baseline 'no/such/ref' is neither a stored commit nor a ref git knows" "says which"
printf 'version: 1\ndefaults:\n  gpu__time_duration.sum: { regresion: 3%% }\n' >"$T/bad.yaml"
run "$KGATE" check --db "$DB" --commit slow10 --baseline base0 -t "$T/bad.yaml"
is "$rc" 2 "a bad thresholds file"
like "$err" "bad.yaml:3:29: unknown key 'regresion'.*regression" "file:line:column and the suggestion"
run "$KGATE" check --db "$DB" --commit slow10 --bogus
is "$rc" 2 "an unknown option"
printf 'not a database, just text\n' >"$T/corrupt.db"
run "$KGATE" check --db "$T/corrupt.db" --commit x
is "$rc" 3 "a corrupt database is a runtime error"
like "$err" "corrupt.db.*not a database" "and says so"
is "$(cat "$T/corrupt.db")" "not a database, just text" "and is left as it was"
is "$(dbsum)" "$sum0" "failed checks changed nothing"

done_testing
