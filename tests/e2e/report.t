#!/bin/sh
# report.t: "kgate report": the HTML trend report opened in headless
# Chromium: screenshots at 1400 and 1000 px wide, the DOM after the page's
# script ran (the summary first, one chart per varying series with its
# points, constant series folded, units on every axis, no label clipped, no
# console error) and the page's self-test (#selftest: hover and zoom through
# scripted mouse events, results written into the DOM); change points,
# hostile names escaped, no external resource; the GPU state; the webhook
# summary posted to a loopback server; usage and write errors.  Without
# Chromium the browser checks are skipped, saying so.
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
# step for the change-point search to find, and the SM throughput of each
# run scaled by 1 + 0.001 x (run mod 3): SYNTHETIC noise of 0.2%, under the
# search's 1%, which must show as a flat line, not as mountains.  Every
# other series is the same in each run: constant, folded, not charted.  A third copy of the details
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
	(SELECT id FROM metrics WHERE name = 'gpu__time_duration.sum');
UPDATE samples SET value = value * (1 + 0.001 * (run % 3)) WHERE metric =
	(SELECT id FROM metrics WHERE name = 'sm__throughput.avg.pct_of_peak_sustained_elapsed')"
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
want_var=$(sqlite3 "$DB" "SELECT count(*) FROM (SELECT DISTINCT benchmark, nvtx, kernel, metric FROM samples_named WHERE run <= 16 AND metric IN
	('gpu__time_duration.sum', 'sm__throughput.avg.pct_of_peak_sustained_elapsed'))")
want_var_points=$((want_var * 16))
want_const=$((want_series - want_var))

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
is "$(printf '%s' "$html" | grep -o '<script' | wc -l | tr -d ' ')" 1 "the page has one script, kgate's own"
like "$html" "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-[0-9a-f]{24}'\">" \
	"its Content-Security-Policy loads nothing and runs only that script"
like "$html" '<script nonce="[0-9a-f]{24}">' "which carries the nonce"
unlike "$html" '<link|<img|<iframe|@import|url\([^#]|src=' "the page loads nothing"
unlike "$html" 'https?://[^"]*\.(js|css|png|woff)' "no external resource is referenced"
is "$(printf '%s' "$html" | grep -o '<figure class="chart"' | wc -l | tr -d ' ')" "$want_var" \
	"a chart for each series that varies: $want_var"
like "$html" "<details class=\"unchanged\" data-series=\"$want_const\"><summary>$want_const series unchanged" \
	"the $want_const constant series are folded into one line"

# --- rendered in headless Chromium
# chrome_dom FILE OUT: the DOM of FILE#selftest after its script ran
if [ -n "$CHROME" ]; then
	export HOME="$T/home"
	mkdir -p "$HOME"
	CH="$CHROME --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir=$T/chrome"
fi
chrome_dom() {
	$CH --virtual-time-budget=5000 --window-size=1400,1000 --dump-dom "file://$1#selftest" >"$2" 2>>"$T/chrome.err"
}
# selftest DOM: the page's self-test results (JSON), one key a line as "key value"
cat >"$T/st.py" <<'PYEOF'
import json, re, sys, html
dom = open(sys.argv[1]).read()
m = re.search(r'<pre id="kgate-selftest">(.*?)</pre>', dom, re.S)
r = json.loads(html.unescape(m.group(1))) if m else {}
for k in ("first_h2", "summary_first", "charts", "drawn", "points", "axes_with_units", "x_dated", "overflow"):
    print(k, json.dumps(r.get(k)))
print("clipped", len(r.get("clipped", [])), " ".join(r.get("clipped", [])[:5]))
print("errors", len(r.get("errors", [])), " | ".join(r.get("errors", [])[:3]))
h = r.get("hover") or {}
print("hover_shown", json.dumps(h.get("shown")))
print("hover_text", h.get("text", ""))
print("hover_commit", (h.get("commit") or "")[:12])
z, rs, rg = r.get("zoom") or {}, r.get("reset") or {}, r.get("range") or {}
print("zoom", z.get("before"), z.get("after"), z.get("view"))
print("reset", rs.get("after"), rs.get("view"))
print("range", rg.get("view"))
# the y-axis labels: the longest, and those of byte counts
labels = r.get("labels", [])
print("longest_label", max((len(t) for l in labels for t in l[1:]), default=0))
print("byte_labels", " ".join(t for l in labels if l[0] == "dram__bytes_read.sum" for t in l[1:2]))
print("noise_ticks", " ".join(t for l in labels if l[0] == "sm__throughput.avg.pct_of_peak_sustained_elapsed" for t in l[1:]))
# charts in the DOM: drawn paths, change-point lines
figs = re.findall(r'<figure class="chart"[^>]*>.*?</figure>', dom, re.S)
print("svgs", sum(1 for f in figs if "<svg" in f))
print("cp_lines_ok", sum(1 for f in figs if f.count('class="cp"') == int(re.search(r'data-change-points="(\d+)"', f).group(1))))
PYEOF
st() { sed -n "s/^$1 //p" "$2"; }
if [ -z "$CHROME" ]; then
	diag "chromium not installed (scripts/install-deps.sh installs it): skipping the browser checks"
	i=0; while [ $i -lt 27 ]; do skip "no chromium"; i=$((i + 1)); done
else
	for w in 1400 1000; do
		$CH --screenshot="$T/shot$w.png" --window-size=$w,1600 "file://$T/r.html" >/dev/null 2>>"$T/chrome.err"
		is "$($PY -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print(d[:8].hex(), struct.unpack(">I", d[16:20])[0])' "$T/shot$w.png")" \
			"89504e470d0a1a0a $w" "Chromium took a screenshot $w px wide"
	done
	[ -n "${KGATE_REPORT_SHOTS:-}" ] && cp "$T"/shot*.png "$KGATE_REPORT_SHOTS/" 2>/dev/null
	chrome_dom "$T/r.html" "$T/dom.html"
	ok "Chromium dumped the DOM" test -s "$T/dom.html"
	$PY "$T/st.py" "$T/dom.html" >"$T/st.txt"
	is "$(st errors "$T/st.txt")" "0 " "no console error and no script error"
	is "$(st first_h2 "$T/st.txt")" '"What changed"' "the page opens on what changed"
	is "$(st summary_first "$T/st.txt")" true "the summary comes before any chart"
	is "$(st charts "$T/st.txt")" "$want_var" "the script drew a chart per varying series: $want_var"
	is "$(st svgs "$T/st.txt")" "$want_var" "each with its SVG"
	is "$(st points "$T/st.txt")" "$want_var_points" "the charts carry a point per run: $want_var_points"
	is "$(st drawn "$T/st.txt")" "$want_var_points" "and draw every one"
	is "$(st cp_lines_ok "$T/st.txt")" "$want_var" "each chart draws a line per change point it carries"
	is "$(st axes_with_units "$T/st.txt")" "$want_var" "every y axis is labelled in its unit"
	is "$(st x_dated "$T/st.txt")" "$want_var" "every x axis is labelled with dates"
	is "$(st clipped "$T/st.txt")" "0 " "no axis label is clipped"
	is "$(st overflow "$T/st.txt")" 0 "nothing is wider than the window"
	ok "no y-axis label is longer than 10 characters ($(st longest_label "$T/st.txt"))" test "$(st longest_label "$T/st.txt")" -le 10
	like "$(st noise_ticks "$T/st.txt")" '^[0-9.]+% [0-9.]+%' "throughput is labelled in %"
	# the noise of 0.2% drawn within the change-point search's 1% around its level: the
	# labels span at least 1.5% of it
	like "$($PY - "$T/st.txt" <<'PYEOF'
import sys
for l in open(sys.argv[1]):
    if l.startswith("noise_ticks "):
        v = [float(t.rstrip("%")) for t in l.split()[1:] if t.endswith("%")]
        print("wide" if v and (max(v) - min(v)) / max(v) >= 0.015 else "narrow %s" % v)
PYEOF
)" '^wide' "0.2% noise is not stretched into mountains: the y range spans the search's 1% either side"
	is "$(st hover_shown "$T/st.txt")" true "a scripted mouse move shows the hover box"
	hov=$(st hover_text "$T/st.txt")
	like "$hov" "$(st hover_commit "$T/st.txt")" "it names the commit"
	like "$hov" '[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} UTC' "its date"
	like "$hov" '^[0-9.]+ (us|ms) median' "the value in its unit"
	like "$hov" 'IQR [0-9.]+ (us|ms) – [0-9.]+ (us|ms), range .*n = 5' "and the spread"
	set -- $(st zoom "$T/st.txt")
	ok "a scripted drag zooms: $1 points drawn before, $2 after (runs $3)" test "$2" -lt "$1" -a "$2" -ge 2
	set -- $(st reset "$T/st.txt")
	is "$1 $2" "16 0-15" "a double click returns to every run"
	like "$(cat "$T/chrome.err")" '^$|' "(Chromium's own messages are in chrome.err)"
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
run "$KGATE" report --db "$DB" --branch main --dir "$T/rd" --charts-per-page 2
is "$rc" 0 "report --dir exits 0"
ok "it wrote index.html" test -s "$T/rd/index.html"
is "$(cat "$T/rd"/p*.html | grep -o '<figure class="chart"' | wc -l | tr -d ' ')" "$want_var" \
	"the pages hold every chart once: $want_var"
is "$(grep -c '<figure class="chart"' "$T/rd/index.html")" 0 "the index draws no chart"
like "$(cat "$T/rd/index.html")" "<details class=\"unchanged\" data-series=\"$want_const\">" "the index folds the constant series"
npages=$(ls "$T/rd" | grep -c '^p[0-9]*\.html$')
ok "the charts are spread over pages ($npages)" test "$npages" -ge 2
bad=0
for a in $(grep -o 'href="p[0-9]*\.html#s[0-9]*"' "$T/rd/index.html" | sed 's/href="//; s/"$//'); do
	grep -q "id=\"${a#*#}\"" "$T/rd/${a%%#*}" || bad=$((bad + 1))
done
is "$bad" 0 "each change point and kernel links to the page that draws its chart"
is "$(grep -o 'href="p[0-9]*\.html"' "$T/rd/index.html" | sort -u | wc -l | tr -d ' ')" "$npages" "the index links every page"
unlike "$(cat "$T/rd"/*.html)" '<link|<img|<iframe|@import|url\([^#]|src=' "no page loads anything"
if [ -n "$CHROME" ]; then
	chrome_dom "$T/rd/p1.html" "$T/pdom.html"
	$PY "$T/st.py" "$T/pdom.html" >"$T/pst.txt"
	is "$(st errors "$T/pst.txt") $(st charts "$T/pst.txt")" "0  2" "a chart page draws its charts in Chromium, without errors"
else
	skip "no chromium"
fi

# --- a series of more commits than the chart holds: columns, steps kept.
# report_db.sh (the report benchmark's database): 600 runs of 14 kernels x 4
# metrics from the real export, with SYNTHETIC steps (kernel 0: +15%).
# 14 kernels: 100,800 samples, enough for the read in two threads.
KGATE="$KGATE" KGATE_SRC="$KGATE_SRC" sh "$KGATE_SRC/benchmarks/self/report_db.sh" "$T/agg.db" 600 14
run "$KGATE" report --db "$T/agg.db" --branch main --html "$T/agg.html"
is "$rc" 0 "a report of 600 commits exits 0"
# decode.py PAGE: each chart's data as the script reads them (data-d: 8
# numbers a datum, deltas, empty for 0)
cat >"$T/decode.py" <<'PYEOF'
import re, sys, html
h = open(sys.argv[1]).read()
figs = re.findall(r'<figure class="chart"([^>]*)>(.*?)</figure>', h, re.S)
out = []
for a, body in figs:
    at = dict((k, html.unescape(v)) for k, v in re.findall(r'([a-z-]+)="([^"]*)"', a))
    f = [int(x) if x else 0 for x in at["data-d"].split(",")]
    d, p1, m = [], -1, 0
    for k in range(0, len(f), 8):
        p0 = p1 + 1 + f[k]; p1 = p0 + f[k + 1]; m += f[k + 2]
        d.append((p0, p1, m, f[k + 7]))
    at["k0"] = "<b>bench_kernel_0000" in body
    out.append((at, d))
print("charts", len(out))
print("aggregated", sum(1 for at, d in out if "data-columns" in at and int(at["data-columns"]) == len(d)))
print("max_columns", max([len(d) - int(at["data-change-points"]) for at, d in out] or [0]))
print("runs_covered", min([sum(p1 - p0 + 1 for p0, p1, m, n in d) for at, d in out] or [0]))
print("k0_with_cp", sum(1 for at, d in out if at["k0"] and int(at["data-change-points"]) >= 1))
print("k0", sum(1 for at, d in out if at["k0"]))
print("newest_n4", sum(1 for at, d in out if d and d[-1][3] - (d[-1][1] - d[-1][0] + 1) * 3 == 1))
PYEOF
$PY "$T/decode.py" "$T/agg.html" >"$T/agg.txt"
get2() { sed -n "s/^$1 //p" "$T/agg.txt"; }
is "$(get2 aggregated)" "$(get2 charts)" "every chart of 600 commits carries columns"
ok "none more than 400, besides those split at a change point ($(get2 max_columns))" test "$(get2 max_columns)" -le 400
is "$(get2 runs_covered)" 600 "the columns cover every run"
is "$(get2 k0_with_cp)" "$(get2 k0)" "each chart of the stepped kernel marks its change point"
if [ -n "$CHROME" ]; then
	chrome_dom "$T/agg.html" "$T/adom.html"
	$PY "$T/st.py" "$T/adom.html" >"$T/ast.txt"
	is "$(st errors "$T/ast.txt")" "0 " "Chromium draws it without errors"
	is "$(st clipped "$T/ast.txt")" "0 " "no label clipped"
	ok "no y-axis label is longer than 10 characters ($(st longest_label "$T/ast.txt"))" test "$(st longest_label "$T/ast.txt")" -le 10
	like "$(st byte_labels "$T/ast.txt")" '^[0-9.]+ (GB|MB)( |$)' "byte counts are labelled in MB or GB, not 4.29498e+09"
else
	i=0; while [ $i -lt 4 ]; do skip "no chromium"; i=$((i + 1)); done
fi
# A run whose rows are not together in the table (one row of the first run
# moved to the newest): the report reads again in run order, and the newest
# commit of that series holds the moved value too.
sqlite3 "$T/agg.db" "UPDATE samples SET run = (SELECT max(id) FROM runs WHERE branch = 'main')
	WHERE rowid = (SELECT min(rowid) FROM samples WHERE run = (SELECT min(id) FROM runs WHERE branch = 'main'))"
run "$KGATE" report --db "$T/agg.db" --branch main --html "$T/agg2.html"
is "$rc" 0 "a run whose rows came apart: exit 0"
$PY "$T/decode.py" "$T/agg2.html" >"$T/agg2.txt"
is "$(sed -n 's/^newest_n4 //p' "$T/agg2.txt")" 1 "its values are one point: one series' newest column has one value more"
is "$(sed -n 's/^charts //p' "$T/agg2.txt")" "$(get2 charts)" "and every chart is still drawn"

# --- the roofline: the diagnostic records of the H200 (matmul, stream
# triad, transpose: FLOP and DRAM byte counts with durations), one run
for f in matmul_naive matmul_tiled stream_triad transpose_naive; do
	"$KGATE" ingest --db "$T/roof.db" --commit cccc000000000000000000000000000000000001 --branch main \
		--benchmark "$f" --records "$FIX/h200/diag/$f.jsonl" 2>/dev/null || echo "ingest $f failed"
done
run "$KGATE" report --db "$T/roof.db" --branch main --html "$T/roof.html" --peak-gflops 60000 --peak-gbs 4800
is "$rc" 0 "a report with FLOP and byte counts exits 0"
rhtml=$(cat "$T/roof.html")
nroof=$(printf '%s' "$rhtml" | sed -n 's/.*<figure class="roofline" data-points="\([0-9]*\)".*/\1/p')
ok "it draws a roofline of $nroof kernels" test "${nroof:-0}" -ge 2
is "$(printf '%s' "$rhtml" | grep -o '<text class="rl"' | wc -l | tr -d ' ')" "$nroof" "each dot labelled"
like "$rhtml" '<text class="rl"[^>]*>mm_naive<' "with its kernel's name"
like "$rhtml" '>arithmetic intensity \(FLOP per DRAM byte\)</text>' "the x axis titled"
like "$rhtml" 'rotate\(-90\)[^>]*>achieved GFLOP/s</text>' "the y axis titled"
if [ -n "$CHROME" ]; then
	chrome_dom "$T/roof.html" "$T/rdom.html"
	$PY "$T/st.py" "$T/rdom.html" >"$T/rst.txt"
	is "$(st clipped "$T/rst.txt") $(st errors "$T/rst.txt")" "0  0 " "no roofline label clipped, no error"
else
	skip "no chromium"
fi

# --- the GPU state (kgate run with the SYNTHETIC NVML stand-in of
# tests/nvml and a TEST DOUBLE benchmark writing synthetic records, as in
# gpustate.t): three runs, the second on a throttled GPU shared with another
# process
: > "$T/libkgate-collector.so"
: > "$T/libcupti.so"
cat > "$T/fake" <<'EOS'
#!/bin/sh
# TEST DOUBLE for a benchmark under the collector: synthetic records only.
f=$(printf '%s' "$KGATE_RECORDS" | sed "s/%p/$$/g")
{
	printf '{"type":"header","format":1,"collector":"0.1.0","cupti":130000,"mode":"trace",'
	printf '"pid":%d,"ppid":1,"pass":0,"passes":1,"replay":"kernel","argv":["fake"],' $$
	printf '"time":1764720000,"devices":[{"id":0,"name":"Synthetic GPU","uuid":"GPU-synthetic",'
	printf '"chip":"SYN0","sms":4,"cc":"0.0","driver":99999,"runtime":99999}],'
	printf '"metrics":["gpu__time_duration.sum"]}\n'
	for i in 0 1 2 3; do
		d=$(( 1000 + i + ${FAKE_ADD:-0} ))
		printf '{"type":"kernel","ordinal":%d,"name":"_Z5saxpyifPKfPf","device":0,' $i
		printf '"context":1,"stream":7,"corr":%d,"start":1000,"end":%d,' $((i + 1)) $((1000 + d))
		printf '"grid":[4,1,1],"block":[256,1,1],"regs":16,"nvtx":"step"}\n'
	done
	printf '{"type":"footer","kernels":4,"dropped":0,"errors":0}\n'
} > "$f"
EOS
chmod +x "$T/fake"
printf 'version: 1\nbenchmarks:\n  - { name: alpha, cmd: ["%s"], repeat: 3, warmup: 0 }\n' "$T/fake" > "$T/suite.yaml"
gpurun() { # gpurun COMMIT ADD [env...]
	c=$1 a=$2; shift 2
	env KGATE_COLLECTOR="$T/libkgate-collector.so" KGATE_CUPTI="$T/libcupti.so" \
		KGATE_NVML_LIBRARY="$KGATE_BUILD/tests/libnvml-double.so" FAKE_ADD=$a "$@" \
		"$KGATE" run -c "$T/suite.yaml" --db "$T/gpu.db" --commit "$c" --branch main >/dev/null 2>&1 ||
		echo "kgate run $c failed"
}
gpurun aaaa000000000000000000000000000000000001 0
gpurun aaaa000000000000000000000000000000000002 40 NVML_DOUBLE_EVENTS=0x4 NVML_DOUBLE_PROCS=4242:1048576
gpurun aaaa000000000000000000000000000000000003 0
run "$KGATE" report --db "$T/gpu.db" --branch main --html "$T/gpu.html"
is "$rc" 0 "a report of runs with GPU states exits 0"
ghtml=$(cat "$T/gpu.html")
like "$ghtml" 'Recorded for 3 of 3 runs; 1 with something' "the summary counts the runs with a GPU state and with a concern"
like "$ghtml" '<td>alpha</td><td>SM 1980 MHz \(max 1980\), up to 35 C' "the newest run's clocks, temperature and power per benchmark"
like "$ghtml" '<code>aaaa00000000</code></td><td>[^<]*</td><td>alpha: clocks slowed \(sw_power_cap\); 1 other process computing \(pid 4242\)' \
	"the run with a concern, what was seen"
like "$ghtml" 'data-gpu="\{&quot;1&quot;:&quot;alpha: clocks slowed' "the charts get it for the second run"
if [ -n "$CHROME" ]; then
	chrome_dom "$T/gpu.html" "$T/gdom.html"
	like "$(cat "$T/gdom.html")" '<path class="gpu"[^>]*><title>GPU at aaaa00000000: alpha: clocks slowed' "and mark it on the chart"
else
	skip "no chromium"
fi

# --- hostile names: escaped, and nothing runs
run "$KGATE" report --db "$DB" --branch evil --html "$T/evil.html"
is "$rc" 0 "a report with hostile names exits 0"
ehtml=$(cat "$T/evil.html")
is "$(printf '%s' "$ehtml" | grep -o '<script' | wc -l | tr -d ' ')" 1 "no hostile script reaches the page (one script: kgate's)"
unlike "$ehtml" '<img' "nor any other hostile tag"
like "$ehtml" "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" "the kernel name is shown escaped"
like "$ehtml" "&lt;img src=x onerror=&quot;document.title=1&quot;&gt;" "the benchmark name is shown escaped"
if [ -n "$CHROME" ]; then
	$CH --dump-dom "file://$T/evil.html" >"$T/edom.html" 2>>"$T/chrome.err"
	etitle=$(sed -n 's:.*<title>\([^<]*\)</title>.*:\1:p' "$T/edom.html" | head -n 1)
	is "$etitle" "kgate trend report: evil" "in Chromium the title is untouched (no injected script ran)"
	unlike "$(cat "$T/edom.html")" '<img|<script>document' "and the DOM holds no injected element"
else
	skip "no chromium"; skip "no chromium"
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
like "$summary" '• saxpy / saxpy\(int' "each line names the benchmark and kernel"
# where the server is known (GitHub Actions), commits are links
run env GITHUB_SERVER_URL=https://github.example GITHUB_REPOSITORY=o/r \
	"$KGATE" report --db "$DB" --branch main --post "$HOOK" --html "$T/linked.html"
summary=$($PY -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])][-1]
print(json.loads(r["body"])["text"])' "$T/hook.jsonl")
like "$summary" "at <https://github.example/o/r/commit/$STEP\\|$(printf '%.12s' "$STEP")>" "the summary links the step's commit"
like "$(cat "$T/linked.html")" "<a href=\"https://github.example/o/r/commit/$STEP\"><code" "and so does the page"
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
