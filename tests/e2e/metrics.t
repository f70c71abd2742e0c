#!/bin/sh
# metrics.t: "kgate metrics".  Without the collector library: exit 3 and a
# clear message, derived metrics still answered.  With it ($KGATE_COLLECTOR
# exporting kgate_metrics_list and kgate_metrics_passes): validation,
# suggestions and pass counts for GH100 through the CUPTI host API, offline.
# Also checks that the metricinfo test double of test_config.c defines every
# symbol src/metricinfo.c defines (else the unit test could link twice).
. "$(dirname "$0")/lib.sh"

COLL=${KGATE_COLLECTOR:-}

run "$KGATE" metrics --help
is "$rc" 0 "--help exits 0"
like "$out" "^usage: kgate metrics" "--help prints the usage"

# --- no collector ---
run env KGATE_COLLECTOR=/nonexistent "$KGATE" metrics dram__bytes_read.sum
is "$rc" 3 "no collector: exit 3"
case $err in
*AddressSanitizer*) # such a build never loads the collector (src/metricinfo.c)
	like "$err" "^kgate: cannot load the collector library libkgate-collector.so \(set KGATE_COLLECTOR to its path\): not loaded in an AddressSanitizer build" "no collector: an AddressSanitizer build says why it loads none" ;;
*)
	like "$err" "^kgate: cannot load the collector library libkgate-collector.so \(set KGATE_COLLECTOR to its path\): /nonexistent" "no collector: says which file and how to point at it" ;;
esac
is "$out" "" "no collector: nothing on stdout"
run env KGATE_COLLECTOR=/nonexistent "$KGATE" metrics
is "$rc" 3 "no collector: the list exits 3"
run env KGATE_COLLECTOR=/nonexistent "$KGATE" metrics launch__grid_size launch__registers_per_thread
is "$rc" 0 "no collector: derived launch metrics are still valid"
like "$out" "^launch__grid_size +valid .*deterministic +derived by kgate" "derived metric: valid, deterministic"
like "$out" "passes: 0 on gh100" "derived metrics need no replay"
run env KGATE_COLLECTOR=/nonexistent "$KGATE" metrics --format json launch__grid_size
is "$(printf '%s' "$out" | jq -r '.metrics[0].valid, .metrics[0].derived, .passes' | tr '\n' ' ')" "true true 0 " "JSON: valid, derived, passes"
printf 'not an ELF file\n' > "$T/libkgate-collector.so"
run env KGATE_COLLECTOR="$T/libkgate-collector.so" "$KGATE" metrics sm__throughput.avg.pct_of_peak_sustained_elapsed
is "$rc" 3 "a file that is not a library: exit 3"
like "$err" "cannot load the collector library" "says so"

# --- usage ---
run "$KGATE" metrics --format xml
is "$rc" 2 "bad --format exits 2"
run "$KGATE" metrics --bogus
is "$rc" 2 "unknown option exits 2"
run "$KGATE" metrics --chip ""
is "$rc" 2 "empty --chip exits 2"

# --- the test double of test_config.c covers metricinfo.o ---
OBJ="${KGATE_BUILD:-$KGATE_SRC/build}/obj/metricinfo.o"
UNIT="$KGATE_SRC/tests/unit/test_config.c"
if command -v nm >/dev/null 2>&1 && [ -f "$OBJ" ]; then
	missing=""
	for s in $(nm -g --defined-only "$OBJ" | awk '$3 !~ /^__/ { print $3 }'); do   # __odr_asan.*: sanitizer builds
		grep -Eq "^(const char \*const |int |size_t |void )$s(\[| *\()" "$UNIT" || missing="$missing $s"
	done
	is "$missing" "" "test_config.c's double defines every symbol of metricinfo.o"
else
	echo "ok $((_n + 1)) # skip nm or $OBJ not found"; _n=$((_n + 1))
fi

# --- with the collector library ---
have_syms() {
	[ -n "$COLL" ] && [ -f "$COLL" ] && command -v nm >/dev/null 2>&1 &&
		nm -D --defined-only "$COLL" 2>/dev/null | grep -q ' kgate_metrics_list$' &&
		nm -D --defined-only "$COLL" 2>/dev/null | grep -q ' kgate_metrics_passes$'
}
if ! have_syms; then
	echo "ok $((_n + 1)) # skip collector library '$COLL' absent or without kgate_metrics_list/passes"
	_n=$((_n + 1))
	done_testing
	exit $?
fi
export KGATE_COLLECTOR="$COLL"
run "$KGATE" metrics dram__bytes_read.sum
case $err in *AddressSanitizer*)
	echo "ok $((_n + 1)) # skip CUPTI's host API cannot run in an AddressSanitizer build"
	_n=$((_n + 1))
	done_testing
	exit $?
esac

run "$KGATE" metrics gpu__time_duration.sum dram__bytes_read.sum smsp__inst_executed.sum \
	dram__throughput.avg.pct_of_peak_sustained_elapsed sm__cycles_elapsed.max
is "$rc" 0 "five valid GH100 metrics exit 0"
like "$out" "^dram__bytes_read.sum +valid +byte +deterministic" "a byte counter: unit and deterministic"
like "$out" "^dram__throughput.avg.pct_of_peak_sustained_elapsed +valid +% +noisy" "a throughput: noisy"
like "$out" "passes: 1 on gh100" "the cheap set is single-pass on GH100 (as measured with CUPTI 13.0)"

run "$KGATE" metrics --format json gpu__time_duration.sum sm__throughput.avg.pct_of_peak_sustained_elapsed
is "$rc" 0 "with sm__throughput: valid"
p=$(printf '%s' "$out" | jq -r .passes)
ok "sm__throughput needs more than one pass ($p)" test "$p" -gt 1

# The vocabulary the gate uses: a bandwidth is a noisy rate, higher is better;
# IPC too; instructions are a deterministic count, lower is better.
run "$KGATE" metrics --format json dram__bytes.sum.per_second smsp__inst_executed.avg.per_cycle_active \
	smsp__inst_executed.sum
is "$(printf '%s' "$out" | jq -r '.metrics[] | "\(.name) \(.deterministic) \(.better) \(.unit)"' | tr '\n' ';')" \
	"dram__bytes.sum.per_second false higher byte/s;smsp__inst_executed.avg.per_cycle_active false higher inst/cycle;smsp__inst_executed.sum true lower inst;" \
	"json: deterministic, better and unit from the metric vocabulary"

run "$KGATE" metrics dram__bytes_reed.sum
is "$rc" 2 "a misspelt name exits 2"
like "$out" "^dram__bytes_reed.sum +invalid .*did you mean: dram__bytes_read.sum" "suggests the nearest valid name"
like "$err" "1 of 1 metric name is not valid on gh100" "summary on stderr"
run "$KGATE" metrics dram__bytes_read
is "$rc" 2 "a name without rollup exits 2"
like "$out" "needs a rollup, such as 'dram__bytes_read.sum'" "says it needs a rollup"
run "$KGATE" metrics sm__throughput.avg.per_second
is "$rc" 2 "a submetric the metric's type lacks exits 2"
like "$out" "did you mean: .*sm__throughput.avg.pct_of_peak_sustained" "suggests a submetric it has"
run "$KGATE" metrics gpu__time_duration.sum nonsense
is "$rc" 2 "one invalid name among valid ones exits 2"
unlike "$out" "passes:" "no pass count for a set with an invalid name"

# A thresholds file's names confirmed once are remembered per chip (a cache
# file stamped with the collector library), so later checks never load CUPTI.
cp "$COLL" "$T/coll.so"
printf '%s\n' '{"type":"header","format":1,"argv":["b"]}' \
	'{"type":"kernel","ordinal":0,"name":"k0","metrics":{"gpu__time_duration.sum":1}}' \
	'{"type":"footer"}' > "$T/r.jsonl"
"$KGATE" ingest --db "$T/mc.db" --commit a --records "$T/r.jsonl" 2>/dev/null
"$KGATE" ingest --db "$T/mc.db" --commit b --records "$T/r.jsonl" 2>/dev/null
printf 'version: 1\ndefaults:\n  dram__bytes_read.sum: { deterministic: true }\n' > "$T/th.yaml"
loads_cupti() { # prints how often the dynamic linker opened libcupti
	env XDG_CACHE_HOME="$T/cache" KGATE_COLLECTOR="$T/coll.so" LD_DEBUG=files \
		"$KGATE" check --db "$T/mc.db" --commit b --baseline a --thresholds "$T/th.yaml" \
		--no-store >/dev/null 2>"$T/ld.err"
	echo "rc=$? $(grep -c 'file=.*libcupti' "$T/ld.err")"
}
like "$(loads_cupti)" "^rc=0 [1-9]" "a thresholds file's first check asks CUPTI"
ok "the confirmed name is in the chip's cache file" grep -qx dram__bytes_read.sum "$T/cache/kgate/metrics-gh100.txt"
is "$(loads_cupti)" "rc=0 0" "the next check does not load CUPTI"
touch -d '2001-01-01' "$T/coll.so"
like "$(loads_cupti)" "^rc=0 [1-9]" "another collector library (its mtime changed): CUPTI is asked again"
is "$(loads_cupti)" "rc=0 0" "and remembered again"
printf 'version: 1\ndefaults:\n  dram__bytes_reed.sum: { deterministic: true }\n' > "$T/th.yaml"
like "$(loads_cupti)" "^rc=2 [1-9]" "an unknown name is still refused, through CUPTI"

run "$KGATE" metrics
is "$rc" 0 "the list exits 0"
ok "the list holds dram__bytes_read" grep -qx dram__bytes_read "$T/.out"
n=$(printf '%s\n' "$out" | wc -l)
ok "the list is long ($n names)" test "$n" -gt 1000
is "$(printf '%s\n' "$out" | LC_ALL=C sort -c 2>&1 && echo sorted)" "sorted" "the list is sorted"
run "$KGATE" metrics --chip nosuchchip dram__bytes_read.sum
is "$rc" 3 "an unknown chip exits 3"
like "$err" "nosuchchip" "names the chip"

done_testing
