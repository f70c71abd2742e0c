#!/bin/sh
# explain_collect.t: "kgate explain --collect" end to end, without a GPU.
#
# The benchmark is a TEST DOUBLE of a CUDA program under the collector (as
# in run.t): a shell script that writes a records file where the collector
# would.  Every number it writes is TEST INPUT made up here (a "Synthetic
# GPU"), not GPU data.  In trace mode it writes durations of two kernels
# (one slower in head, so that the gate FAILs it; one unchanged); in
# metrics mode it checks that kgate started it with the collector settings
# of --collect (mode, the diagnostic metric list of src/explain.c, the
# kernel regex, the launch count) and writes load sector/request counts
# (FAKE_SPR sectors per request) for the kernels the regex matches, as the
# collector would.  What is tested: the options reach the collector, the
# collected counters reach the explanation (UncoalescedGlobalAccess fires
# from the fake's sector counts), nothing is stored in the database, and a
# crash or bad usage fails cleanly.
. "$(dirname "$0")/lib.sh"

DB="$T/k.db"
unset GITHUB_STEP_SUMMARY
# Stand-ins for the collector library and libcupti: never loaded by the double.
: > "$T/libkgate-collector.so"
: > "$T/libcupti.so"
export KGATE_COLLECTOR="$T/libkgate-collector.so" KGATE_CUPTI="$T/libcupti.so"

# The diagnostic metric list, as src/explain.c defines it.
WANT_METRICS=$(sed -n '/explain_diagnostic_metrics\[\] = {/,/NULL/p' "$KGATE_SRC/src/explain.c" |
	grep -o '"[^"]*"' | tr -d '"' | paste -sd, -)

cat > "$T/fake" <<'EOF'
#!/bin/sh
# TEST DOUBLE for a benchmark under the collector: synthetic records only.
f=$(printf '%s' "$KGATE_RECORDS" | sed "s/%p/$$/g")
K1=_Z6kernelILi4EEvPf; D1='void kernel<4>(float*)'     # fails in head
K2=_Z4copyPfPKf;       D2='copy(float*, float const*)' # unchanged
header() {
	printf '{"type":"header","format":1,"collector":"0.1.0","cupti":130000,'
	printf '"mode":"%s","pid":%d,"ppid":1,"pass":0,"passes":1,' "$1" $$
	printf '"replay":"kernel","argv":["fake"],"time":1764720000,'
	printf '"devices":[{"id":0,"name":"Synthetic GPU","uuid":"GPU-synthetic",'
	printf '"chip":"SYN0","sms":4,"cc":"0.0","driver":99999,"runtime":99999}],'
	printf '"metrics":["gpu__time_duration.sum"]}\n'
}
kernel() { # name ordinal end metrics-json
	printf '{"type":"kernel","ordinal":%d,"name":"%s","device":0,"context":1,' "$2" "$1"
	printf '"stream":7,"corr":%d,"start":1000,"end":%d,"grid":[4,1,1],' "$(($2 + 1))" "$3"
	printf '"block":[256,1,1],"regs":16,"nvtx":"step","metrics":{%s}}\n' "$4"
}
fail() { echo "fake: $*" >&2; exit 1; }
case "$KGATE_MODE" in
trace)
	{
		header trace
		i=0
		while [ $i -lt 20 ]; do
			kernel $K1 $((2 * i)) $((1000 + ${FAKE_DUR:?} + (i * 7 + $$) % 10)) ""
			kernel $K2 $((2 * i + 1)) $((1500 + (i * 3 + $$) % 10)) ""
			i=$((i + 1))
		done
		echo '{"type":"footer","kernels":40,"dropped":0,"errors":0}'
	} > "$f" ;;
metrics)
	[ -n "$FAKE_LOG" ] && env | grep '^KGATE_' | sort >> "$FAKE_LOG"
	[ -z "$FAKE_CRASH" ] || fail "crashing as asked (FAKE_CRASH)"
	[ "$KGATE_METRICS" = "$FAKE_WANT_METRICS" ] || fail "KGATE_METRICS is '$KGATE_METRICS'"
	[ "$KGATE_LAUNCH_COUNT" = "$FAKE_WANT_LAUNCHES" ] || fail "KGATE_LAUNCH_COUNT is '$KGATE_LAUNCH_COUNT'"
	re=${KGATE_KERNELS#regex:}
	[ "$re" != "$KGATE_KERNELS" ] || fail "KGATE_KERNELS is not a regex: '$KGATE_KERNELS'"
	# The collector matches the demangled name; the mangled one must match too.
	for k in "$D1" "$K1"; do printf '%s\n' "$k" | grep -Eq -- "$re" || fail "'$re' does not match '$k'"; done
	for k in "$D2" "$K2" "x$D1" "${K1}x"; do
		printf '%s\n' "$k" | grep -Eq -- "$re" && fail "'$re' matches '$k'"
	done
	{
		header metrics
		i=0
		while [ $i -lt "$KGATE_LAUNCH_COUNT" ]; do
			kernel $K1 $i 2000 "\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\":$((100 * FAKE_SPR)),\"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\":100,\"smsp__inst_executed.sum\":5000"
			i=$((i + 1))
		done
		echo "{\"type\":\"footer\",\"kernels\":$KGATE_LAUNCH_COUNT,\"dropped\":0,\"errors\":0}"
	} > "$f" ;;
*) fail "KGATE_MODE is '$KGATE_MODE'" ;;
esac
exit 0
EOF
chmod +x "$T/fake"

# suite FILE DUR SPR [extra env yaml]
suite() {
	cat > "$1" <<EOY
version: 1
collector:
  mode: trace
benchmarks:
  - name: synth
    cmd: ["$T/fake"]
    repeat: 3
    warmup: 0
    timeout: 5s
    env: { FAKE_DUR: "$2", FAKE_SPR: "$3", FAKE_LOG: "$T/env.log", FAKE_WANT_METRICS: "$WANT_METRICS", FAKE_WANT_LAUNCHES: "${LAUNCHES:-3}"$4 }
EOY
}
# The runs, samples and verdicts: what --collect must leave alone (the
# explanations are kept, beside the verdicts).
dump() { sqlite3 "$DB" 'SELECT * FROM runs; SELECT * FROM samples; SELECT * FROM verdicts' | cksum; }
whys() { sqlite3 "$DB" 'SELECT count(*) FROM explanations'; }

mkdir "$T/base" "$T/head"
suite "$T/base/kgate.yaml" 1000 4
suite "$T/head/kgate.yaml" 3000 32
"$KGATE" run -c "$T/base/kgate.yaml" --db "$DB" --commit b1 --branch main >/dev/null 2>&1
"$KGATE" run -c "$T/head/kgate.yaml" --db "$DB" --commit h1 --branch pr >/dev/null 2>&1
is "$(sqlite3 "$DB" 'SELECT count(*) FROM runs')" 2 "two trace runs stored"
before=$(dump)

# Without --collect: the advice.
run "$KGATE" explain --db "$DB" --commit h1 --baseline b1
is "$rc" 0 "explain without counters exits 0"
like "$out" "diagnostic counters were not collected" "the stored trace runs lack the counters"
like "$out" "^synth \\[step\\]: void kernel<4>\\(float\\*\\)" "the failed kernel is explained, by its demangled name"
unlike "$out" "_Z4copyPfPKf" "the unchanged kernel is not"
is "$(whys)" 1 "the explanation is stored"
run "$KGATE" explain --db "$DB" --commit h1 --baseline b1 --no-store
is "$(whys)" 1 "--no-store stores none"

# --collect, head side only: the base side has what is stored.
cd "$T/head" || exit 1
: > "$T/env.log"
run "$KGATE" explain --db "$DB" --commit h1 --baseline b1 --collect
cd - >/dev/null || exit 1
is "$rc" 0 "--collect exits 0"
like "$err" "collecting the diagnostic counters of benchmark 'synth' \\(head side\\)" "it says what it collects"
is "$(grep -c '^KGATE_MODE=metrics$' "$T/env.log")" 1 "the benchmark ran once, in metrics mode"
is "$(sed -n 's/^KGATE_KERNELS=//p' "$T/env.log")" 'regex:^(_Z6kernelILi4EEvPf|void kernel<4>\(float\*\))$' \
	"KGATE_KERNELS: the failed kernel's mangled and demangled names, escaped and anchored"
is "$(sed -n 's/^KGATE_METRICS=//p' "$T/env.log")" "$WANT_METRICS" "KGATE_METRICS: the diagnostic metrics"
is "$(sed -n 's/^KGATE_LAUNCH_COUNT=//p' "$T/env.log")" 3 "KGATE_LAUNCH_COUNT: 3 by default"
like "$out" "UncoalescedGlobalAccess +base n/a +head fires" "the rule fires from the collected sector counts"
like "$out" "global load 32.0 sectors/request \\(ideal 4.0\\).*\\(uncoalesced\\)" "the sentence has the fake's 32 sectors/request"
like "$out" "base side has no collected counters" "it says the base side has no counters"
unlike "$out" "diagnostic counters were not collected" "no advice once collected"
like "$out" "\\+(199|200|201)% time" "the time change is the stored one (the collected launches took 1000 ns on both sides)"
is "$(dump)" "$before" "no run, sample or verdict stored in the database"
is "$(whys)" 2 "the collected explanation is stored too"

# --collect --base-dir, --launches, json: both sides collected.
cd "$T/head" || exit 1
: > "$T/env.log"
LAUNCHES=2 suite "$T/base/kgate.yaml" 1000 4
LAUNCHES=2 suite "$T/head/kgate.yaml" 3000 32
run "$KGATE" explain --db "$DB" --commit h1 --baseline b1 --collect --base-dir "$T/base" --launches 2
jout=$(cd "$T/head" && "$KGATE" explain --db "$DB" --commit h1 --baseline b1 --collect --base-dir "$T/base" --launches 2 --format json 2>/dev/null)
cd - >/dev/null || exit 1
is "$rc" 0 "--collect --base-dir exits 0"
is "$(grep -c '^KGATE_MODE=metrics$' "$T/env.log")" 4 "one metrics run per side (twice: text and json)"
is "$(sed -n 's/^KGATE_LAUNCH_COUNT=//p' "$T/env.log" | sort -u)" 2 "--launches reaches the collector"
like "$out" "global load sectors/request 4.0 -> 32.0 \\(uncoalesced\\)" "base 4.0 against head 32.0, both collected"
like "$out" "UncoalescedGlobalAccess +base ok +head fires" "the rule is ok in base, fires in head"
unlike "$out" "base side has no collected counters" "no note when the base side was collected"
ok "json: collected on both sides" python3 -c "
import json,sys; d=json.loads(sys.argv[1]); e=d['explanations'][0]
assert e['collected_base'] and e['collected_head'] and e['base_diagnostics'] and not d['diagnostics_missing']
assert '4.0 -> 32.0' in e['why']" "$jout"
is "$(dump)" "$before" "still no run, sample or verdict stored"

# The comment and the report show the newest explanation of the kernel.
cp "$DB" "$T/c.db"
"$KGATE" check --db "$T/c.db" --commit h1 --baseline b1 >/dev/null 2>&1
run "$KGATE" comment --db "$T/c.db" --commit h1 --print
is "$rc" 0 "comment --print exits 0"
like "$out" "^#### Why" "the comment has a Why section"
like "$out" "^synth .*step.*: void kernel&lt;4&gt;.*global load sectors/request 4.0 -&gt; 32.0 \\(uncoalesced\\)" \
	"with the newest explanation (both sides collected)"
like "$out" "^\\| UncoalescedGlobalAccess \\| ok \\| fires: " "and its rules table"
is "$(printf '%s\n' "$out" | grep -c '^synth ')" 1 "one explanation per kernel"
"$KGATE" report --db "$T/c.db" --html "$T/r.html" 2>/dev/null
ok "the report shows it" grep -q '<p class="why">synth \[step\]: void kernel&lt;4&gt;(float\*).*4.0 -&gt; 32.0' "$T/r.html"
ok "with the rule that newly fires marked" grep -q '<tr class="fires"><td>UncoalescedGlobalAccess</td><td>ok</td><td>fires</td>' "$T/r.html"

# A benchmark that crashes under --collect: exit 3, its message, nothing changed.
suite "$T/crash.yaml" 3000 32 ', FAKE_CRASH: "1"'
run "$KGATE" explain --db "$DB" --commit h1 --baseline b1 --collect -c "$T/crash.yaml"
is "$rc" 3 "a crashing benchmark: exit 3"
like "$err" "kgate: benchmark 'synth' exited with status 1 \\(head repeat 0\\)" "suiterun's message"
like "$err" "crashing as asked" "with the benchmark's stderr"
is "$out" "" "nothing explained on stdout"
is "$(dump)" "$before" "the database is unchanged"

# A suite without the failed kernel's benchmark: exit 2, nothing run.
sed 's/name: synth/name: other/' "$T/head/kgate.yaml" > "$T/other.yaml"
: > "$T/env.log"
run "$KGATE" explain --db "$DB" --commit h1 --baseline b1 --collect -c "$T/other.yaml"
is "$rc" 2 "benchmark not in the suite: exit 2"
like "$err" "benchmark 'synth' is not in the head suite" "said"
is "$(wc -c < "$T/env.log" | tr -d ' ')" 0 "nothing ran"

# Bad usage.
run "$KGATE" explain --db "$DB" --commit h1 --base-dir "$T/base"
is "$rc" 2 "--base-dir without --collect: exit 2"
like "$err" "--base-dir is an option of --collect" "said"
run "$KGATE" explain --db "$DB" --commit h1 --launches 2
is "$rc" 2 "--launches without --collect: exit 2"
for n in 0 -1 x 3x ""; do
	run "$KGATE" explain --db "$DB" --commit h1 --collect --launches "$n"
	is "$rc" 2 "--launches '$n': exit 2"
	like "$err" "--launches '$n' is not a positive integer" "--launches '$n': said"
done
run "$KGATE" explain --db "$DB" --commit h1 --baseline b1 --collect -c "$T/none.yaml"
is "$rc" 2 "a missing suite: exit 2"
run "$KGATE" explain --db "$DB" --commit h1 --baseline b1 --collect --base-dir "$T/nodir"
is "$rc" 2 "a missing --base-dir: exit 2"
like "$err" "cannot open '$T/nodir'" "said"
is "$(dump)" "$before" "the database is unchanged after all of it"

done_testing
