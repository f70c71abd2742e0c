#!/bin/sh
# report.t: "kgate report": the HTML trend report opened in headless
# Chromium (screenshot and DOM), every chart with its points, change points,
# hostile names escaped, no script and no external resource; the webhook
# summary posted to a loopback server; usage and write errors.
. "$(dirname "$0")/lib.sh"
PY=python3
CHROME=$(command -v chromium || command -v chromium-browser || true)
DB="$T/k.db"
D="$SHARED_FIX/ncu_saxpy_strided_details.csv"
R="$SHARED_FIX/ncu_saxpy_strided_raw.csv"

# The database: the real ncu raw export (tests/fixtures/h200) ingested as 16
# nightly commits of main (the details export names no GPU, so its runs would
# form charts of their own).  Then, as a test step, the
# durations of the last 8 are scaled by 1.10 so that the data hold one known
# step for the change-point search to find.  A third copy of the details
# export, with a kernel renamed to hostile HTML, is one more commit on a
# branch "evil".
i=1
while [ $i -le 16 ]; do
	f=$R
	sha=$(printf '%02x%038d' $((i * 7)) $i)
	echo "$sha" >>"$T/shas"
	"$KGATE" ingest --db "$DB" --commit "$sha" --branch main --benchmark saxpy --ncu-csv "$f" 2>/dev/null || echo "ingest failed"
	i=$((i + 1))
done
sqlite3 "$DB" "UPDATE samples SET value = value * 1.10 WHERE run > 8 AND metric =
	(SELECT id FROM metrics WHERE name = 'gpu__time_duration.sum')"
STEP=$(sed -n 9p "$T/shas")
sed "s/\"saxpy(int/\"<script>document.title='pwned'<\/script>saxpy(int/" "$D" >"$T/evil.csv"
"$KGATE" ingest --db "$DB" --commit eeee000000000000000000000000000000000000 --branch evil \
	--benchmark '<img src=x onerror="document.title=1">' --ncu-csv "$T/evil.csv" 2>/dev/null
runs=$(sqlite3 "$DB" "SELECT count(*) FROM runs WHERE branch = 'main'")
is "$runs" 16 "16 runs of main were stored"
# a stand-in for "kgate check" on the newest run: a stored outcome, and
# verdict rows from the samples
sqlite3 "$DB" "INSERT INTO checks (id, run, baseline, time, verdict, exit_status)
	VALUES (1, 16, 'main~1', 1700000000, 'pass', 0);
INSERT INTO verdicts (run, baseline, time, benchmark, nvtx, kernel, metric, verdict,
	shift, base_value, head_value, n_base, n_head, message, fails, check_id)
SELECT 16, 'main~1', 1700000000, benchmark, nvtx, kernel, metric, 'pass', 0, avg(value), avg(value),
	count(*), count(*), 'stand-in <b>verdict</b>', 0, 1 FROM samples_named WHERE run = 16 GROUP BY 4, 5, 6, 7"

want_series=$(sqlite3 "$DB" "SELECT count(*) FROM (SELECT DISTINCT benchmark, nvtx, kernel, metric FROM samples WHERE run <= 16)")
want_points=$(sqlite3 "$DB" "SELECT count(*) FROM (SELECT DISTINCT run, benchmark, nvtx, kernel, metric FROM samples WHERE run <= 16)")
want_dur=$(sqlite3 "$DB" "SELECT count(*) FROM (SELECT DISTINCT benchmark, nvtx, kernel FROM samples_named WHERE run <= 16 AND metric = 'gpu__time_duration.sum')")

# --- usage and errors
run "$KGATE" report --db "$DB"
is "$rc" 2 "no --html or --post is a usage error"
run "$KGATE" report --db "$DB" --since yesterday --html "$T/x.html"
is "$rc" 2 "a bad --since is a usage error"
like "$err" "--since wants an age" "that says what --since wants"
run "$KGATE" report --db "$T/none.db" --html "$T/x.html"
is "$rc" 2 "a missing database exits 2, as for every command"
ok "and writes no file" test ! -e "$T/x.html"
run "$KGATE" report --db "$DB" --html "$T/no/such/dir/r.html"
is "$rc" 3 "an unwritable --html exits 3"

# --- the report of main
run "$KGATE" report --db "$DB" --branch main --html "$T/r.html"
is "$rc" 0 "report --branch main exits 0"
ok "it wrote the file" test -s "$T/r.html"
is "$(ls "$T" | grep -c '\.tmp\.')" 0 "no temporary file is left"
html=$(cat "$T/r.html")
unlike "$html" '<script|<link|<img|<iframe|@import|url\(|src=' "the page has no script and loads nothing"
unlike "$html" 'https?://[^"]*\.(js|css|png|woff)' "no external resource is referenced"

# --- rendered in headless Chromium
if [ -z "$CHROME" ]; then
	diag "chromium not installed: skipping the browser checks"
	i=0; while [ $i -lt 9 ]; do _result 0 "# SKIP no chromium"; i=$((i + 1)); done
else
	export HOME="$T/home"
	mkdir -p "$HOME"
	CH="$CHROME --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir=$T/chrome"
	$CH --screenshot="$T/shot.png" --window-size=1200,2000 "file://$T/r.html" >/dev/null 2>"$T/chrome.err"
	ok "Chromium took a screenshot" test -s "$T/shot.png"
	is "$(head -c 8 "$T/shot.png" | od -An -tx1 | tr -d ' \n')" "89504e470d0a1a0a" "the screenshot is a PNG"
	$CH --dump-dom "file://$T/r.html" >"$T/dom.html" 2>>"$T/chrome.err"
	ok "Chromium dumped the DOM" test -s "$T/dom.html"
	$PY - "$T/dom.html" >"$T/dom.txt" <<'PYEOF'
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.charts=[]; s.cur=None; s.title=""; s.intitle=False; s.scripts=0; s.cpl=0; s.body=None
    def handle_starttag(s, tag, a):
        a=dict(a)
        if tag=="script": s.scripts+=1
        if tag=="body": s.body=a.get("data-kgate-report")
        if tag=="title" and s.cur is None: s.intitle=True
        if tag=="figure" and "chart" in (a.get("class") or "").split():
            s.cur={"points":int(a["data-points"]),"cps":int(a["data-change-points"]),"metric":a.get("data-metric"),"circles":0,"lines":0}
            s.charts.append(s.cur)
        if tag=="circle" and s.cur is not None and "pt" in (a.get("class") or "").split(): s.cur["circles"]+=1
        if tag=="line" and s.cur is not None and "cp" in (a.get("class") or "").split(): s.cur["lines"]+=1
    def handle_endtag(s, tag):
        if tag=="figure": s.cur=None
        if tag=="title": s.intitle=False
    def handle_data(s, d):
        if s.intitle: s.title+=d
p=P(); p.feed(open(sys.argv[1]).read())
print("title", p.title)
print("body", p.body)
print("scripts", p.scripts)
print("charts", len(p.charts))
print("points", sum(c["points"] for c in p.charts))
print("mismatch", sum(1 for c in p.charts if c["circles"]!=c["points"]))
dur=[c for c in p.charts if c["metric"]=="gpu__time_duration.sum"]
print("dur_charts", len(dur))
print("dur_with_cp", sum(1 for c in dur if c["cps"]>=1 and c["lines"]==c["cps"]))
print("other_cp", sum(c["cps"] for c in p.charts if c["metric"]!="gpu__time_duration.sum"))
PYEOF
	get() { sed -n "s/^$1 //p" "$T/dom.txt"; }
	is "$(get body)" 1 "the DOM is the kgate report"
	is "$(get scripts)" 0 "the DOM has no script element"
	is "$(get charts)" "$want_series" "one chart per (benchmark, NVTX path, kernel, metric): $want_series"
	is "$(get points)" "$want_points" "the charts hold one point per run and series: $want_points"
	is "$(get mismatch)" 0 "every chart draws as many hover points as its data-points"
	is "$(get dur_with_cp)" "$want_dur" "each duration chart marks the known step as a change point"
fi
like "$html" "<code title=\"$STEP\">$(printf '%.12s' "$STEP")</code>" "the change-point table names the commit that introduced the step"
is "$(printf '%s' "$html" | grep -o 'data-change-points="[1-9]' | wc -l | tr -d ' ')" "$want_dur" "no other series has a change point"
like "$html" 'stand-in &lt;b&gt;verdict&lt;/b&gt;' "the newest verdicts are listed, escaped"
like "$html" 'id="no-roofline"' "without FLOP counts the roofline says what it needs"

# --- the directory form: an index and pages of charts
run "$KGATE" report --db "$DB" --branch main --html "$T/both.html" --dir "$T/both"
is "$rc" 2 "--html and --dir together are a usage error"
run "$KGATE" report --db "$DB" --branch main --dir "$T/rd" --charts-per-page 0
is "$rc" 2 "--charts-per-page 0 is a usage error"
run "$KGATE" report --db "$DB" --branch main --dir "$T/rd" --charts-per-page 10
is "$rc" 0 "report --dir exits 0"
ok "it wrote index.html" test -s "$T/rd/index.html"
is "$(cat "$T/rd"/p*.html | grep -o '<figure class="chart"' | wc -l | tr -d ' ')" "$want_series" \
	"the pages hold every chart once: $want_series"
is "$(grep -c '<figure class="chart"' "$T/rd/index.html")" 0 "the index draws no chart"
npages=$(ls "$T/rd" | grep -c '^p[0-9]*\.html$')
ok "the charts are spread over pages ($npages)" test "$npages" -ge 2
bad=0
for a in $(grep -o 'href="p[0-9]*\.html#s[0-9]*"' "$T/rd/index.html" | sed 's/href="//; s/"$//'); do
	grep -q "id=\"${a#*#}\"" "$T/rd/${a%%#*}" || bad=$((bad + 1))
done
is "$bad" 0 "each change point links to the page that draws its chart"
is "$(grep -o 'href="p[0-9]*\.html"' "$T/rd/index.html" | sort -u | wc -l | tr -d ' ')" "$npages" "the index links every page"
unlike "$(cat "$T/rd"/*.html)" '<script|<link|<img|<iframe|@import|url\(|src=' "no page has a script or loads anything"

# --- y-axis labels fit the margin: SI prefixes and units, not 4.29498e+09
long=$(grep -o '<text class="ax" x="68"[^>]*>[^<]*<' "$T/r.html" | sed 's/.*>//; s/<$//' | awk 'length($0) > 10' | head -1)
is "$long" "" "no y-axis label is longer than 10 characters"
like "$html" '<text class="ax" x="68"[^>]*>[0-9.]+ GB<' "byte counts are labelled in GB"

# --- a series of more commits than pixel columns: aggregated, steps kept.
# report_db.sh (the report benchmark's database): 600 runs of 3 kernels x 4
# metrics from the real export, with a synthetic 15% step in kernel 0.
# 14 kernels: 100,800 samples, enough for the read in two threads.
KGATE="$KGATE" KGATE_SRC="$KGATE_SRC" sh "$KGATE_SRC/benchmarks/self/report_db.sh" "$T/agg.db" 600 14
run "$KGATE" report --db "$T/agg.db" --branch main --html "$T/agg.html"
is "$rc" 0 "a report of 600 commits exits 0"
$PY - "$T/agg.html" >"$T/agg.txt" <<'PYEOF'
import re, sys
h = open(sys.argv[1]).read()
figs = re.findall(r'<figure class="chart"[^>]*>.*?</figure>', h, re.S)
print("charts", len(figs))
print("aggregated", sum(1 for f in figs if 'data-columns=' in f))
# a change point may split a column in two
cols = [int(re.search(r'data-columns="(\d+)"', f).group(1)) - int(re.search(r'data-change-points="(\d+)"', f).group(1))
        for f in figs if 'data-columns=' in f]
print("max_columns", max(cols) if cols else 0)
# the median path: M x y, then l and relative pairs
def npts(d):
    return 1 + len(re.findall(r'-?\d+', d.split('l', 1)[1])) // 2 if 'l' in d else 1
meds = [npts(m) for f in figs for m in re.findall(r'class="median" d="([^"]*)"', f)]
print("max_median_points", max(meds))
k0 = [f for f in figs if 'bench_kernel_0000' in f]
print("k0_with_cp", sum(1 for f in k0 if re.search(r'data-change-points="[1-9]', f) and 'class="cp"' in f))
print("k0", len(k0))
PYEOF
get2() { sed -n "s/^$1 //p" "$T/agg.txt"; }
is "$(get2 aggregated)" "$(get2 charts)" "every chart of 600 commits is drawn in columns"
ok "no chart has more columns than its 556 pixels hold at 2 each, besides those split at a change point ($(get2 max_columns))" test "$(get2 max_columns)" -le 278
ok "the median line has a point per column, not per commit ($(get2 max_median_points))" test "$(get2 max_median_points)" -le 300
is "$(get2 k0_with_cp)" "$(get2 k0)" "each chart of the stepped kernel marks its change point"
# A run whose rows are not together in the table (one row of the first run
# moved to the newest): the report reads again in run order, and the newest
# commit of that series holds the moved value too.
sqlite3 "$T/agg.db" "UPDATE samples SET run = (SELECT max(id) FROM runs WHERE branch = 'main')
	WHERE rowid = (SELECT min(rowid) FROM samples WHERE run = (SELECT min(id) FROM runs WHERE branch = 'main'))"
run "$KGATE" report --db "$T/agg.db" --branch main --html "$T/agg2.html"
is "$rc" 0 "a run whose rows came apart: exit 0"
is "$(grep -o 'n = 4</title>' "$T/agg2.html" | wc -l | tr -d ' ')" 1 "its values are one point: one series' newest commit has 4 values"
is "$(grep -o '<figure class="chart"' "$T/agg2.html" | wc -l | tr -d ' ')" "$(get2 charts)" "and every chart is still drawn"

# --- hostile names: escaped, and nothing runs
run "$KGATE" report --db "$DB" --branch evil --html "$T/evil.html"
is "$rc" 0 "a report with hostile names exits 0"
ehtml=$(cat "$T/evil.html")
unlike "$ehtml" '<script|<img' "no hostile tag reaches the page"
like "$ehtml" "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" "the kernel name is shown escaped"
like "$ehtml" "&lt;img src=x onerror=&quot;document.title=1&quot;&gt;" "the benchmark name is shown escaped"
if [ -n "$CHROME" ]; then
	$CH --dump-dom "file://$T/evil.html" >"$T/edom.html" 2>>"$T/chrome.err"
	etitle=$(sed -n 's:.*<title>\([^<]*\)</title>.*:\1:p' "$T/edom.html" | head -n 1)
	is "$etitle" "kgate trend report: evil" "in Chromium the title is untouched (no injected script ran)"
	unlike "$(cat "$T/edom.html")" '<script|<img' "and the DOM holds no injected element"
else
	_result 0 "# SKIP no chromium"; _result 0 "# SKIP no chromium"
fi

# --- --since: only recent runs (the fixtures were stored just now)
run "$KGATE" report --db "$DB" --branch main --since 1d --html "$T/recent.html"
like "$(cat "$T/recent.html")" 'data-runs="16"' "--since 1d keeps today's runs"

# --- the webhook summary
printf '{}\n' >"$T/script.json"
: >"$T/hook.jsonl"
$PY "$KGATE_SRC/tests/e2e/httpd.py" "$T/script.json" "$T/hook.jsonl" "$T/port" &
SRV=$!
trap 'kill $SRV 2>/dev/null; rm -rf "$T"' EXIT
n=0; while [ ! -s "$T/port" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
HOOK="http://127.0.0.1:$(cat "$T/port")/hook"
run "$KGATE" report --db "$DB" --branch main --post "$HOOK" --link "https://example.org/report.html"
is "$rc" 0 "--post exits 0"
unlike "$err" "/hook" "the webhook's path is not printed"
summary=$($PY -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])][-1]
print(r["method"], r["path"], r["headers"].get("Content-Type")); print(json.loads(r["body"])["text"])' "$T/hook.jsonl")
like "$summary" '^POST /hook application/json' "it POSTs JSON to the webhook"
like "$summary" "$want_dur change points" "the summary counts the change points"
like "$summary" 'Worst regressions:' "and lists the worst regressions"
like "$summary" "gpu__time_duration.sum: [0-9.]+ us → [0-9.]+ us \\(\\+10\\.[0-9]%\\) at \`$(printf '%.12s' "$STEP")\`" "with the values in their unit, the size and the commit (12 digits) of the step"
like "$summary" '<https://example.org/report.html\|Open the report>' "and links the report"
kill $SRV 2>/dev/null; wait $SRV 2>/dev/null
run env KGATE_HTTP_RETRIES=0 "$KGATE" report --db "$DB" --branch main --post "$HOOK"
is "$rc" 3 "a webhook that cannot be reached exits 3"
like "$err" "cannot post the summary: POST http://127.0.0.1:[0-9]+: " "with the origin, not the path, in the error"
# A selection with no runs: an empty report, not a crash (regression: the
# series were sorted with qsort(NULL, 0), undefined behaviour that
# UndefinedBehaviorSanitizer reports).
run "$KGATE" report --db "$DB" --branch no-such-branch --html "$T/none.html"
is "$rc" 0 "a report of a branch without runs exits 0"
like "$err" "0 runs, 0 series" "and says it holds nothing"
# --- quick runs (kgate run --quick, the pre-push hook's) are not in the trend
cp "$DB" "$T/q.db"
Q=abcdef0000000000000000000000000000000001
"$KGATE" ingest --db "$T/q.db" --commit "$Q" --branch main --benchmark saxpy --ncu-csv "$R" 2>/dev/null
"$KGATE" report --db "$T/q.db" --branch main --html "$T/q1.html" 2>/dev/null
ok "a full run's commit is in the trend" grep -q "abcdef0000" "$T/q1.html"
sqlite3 "$T/q.db" "UPDATE runs SET status = 'quick' WHERE commit_sha = '$Q'"
"$KGATE" report --db "$T/q.db" --branch main --html "$T/q2.html" 2>/dev/null
ok "a quick run's is not" sh -c "! grep -q abcdef0000 '$T/q2.html'"
done_testing
