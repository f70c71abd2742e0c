#!/bin/sh
# collector.t: what libkgate-collector.so does without a GPU: its exports and
# links, the offline metric queries through the CUPTI host API (names, pass
# counts, errors naming the bad metric or chip), and the injection entry
# point run in a process with no CUDA driver: the records file must still be
# a header, error records and a footer, valid JSON with hostile argv bytes
# escaped, that kgate ingest reads; the host program must exit 0.
. "$(dirname "$0")/lib.sh"

COLL=${KGATE_COLLECTOR:?KGATE_COLLECTOR must name libkgate-collector.so}

ok "the collector library exists" test -f "$COLL"

syms=$(nm -D --defined-only "$COLL" | awk '{print $3}')
for s in InitializeInjection InitializeInjectionNvtx2 kgate_metrics_list kgate_metrics_passes kgate_metrics_default; do
	like "$syms" "^$s\$" "exports $s"
done
unlike "$(printf '%s\n' "$syms" | grep -v -E '^(InitializeInjection|InitializeInjectionNvtx2|kgate_metrics_[a-z]+|_init|_fini|_edata|_end|__bss_start)$')" . \
	"exports nothing else"
needed=$(readelf -d "$COLL" | sed -n 's/.*NEEDED.*\[\(.*\)\].*/\1/p')
like "$needed" "^libcupti\.so" "links libcupti"
unlike "$needed" "jansson|stdc\+\+|libcuda\.so|yaml|sqlite|curl" "links no jansson, libstdc++, libcuda or CLI library"

# The drivers and the stand-in libcupti are tests/collector/*.c, built by
# make (make test-progs) into $KGATE_BUILD/tests/collector.
CT=${KGATE_BUILD:?KGATE_BUILD must name the build directory}/tests/collector
# the offline queries: dlopen the collector like the CLI does
ok "the query driver is built" test -x "$CT/query_driver"
# the injection entry point, called the way the driver would
ok "the injection driver is built" test -x "$CT/inject_driver"

# --- metric names ------------------------------------------------------
run "$CT/query_driver" "$COLL" list GH100
is "$rc" 0 "kgate_metrics_list(GH100) succeeds"
n=$(printf '%s\n' "$out" | wc -l)
ok "lists over 1000 base metrics (got $n)" test "$n" -gt 1000
for m in gpu__time_duration dram__bytes_read smsp__inst_executed sm__throughput; do
	like "$out" "^$m\$" "lists $m"
done
is "$(printf '%s\n' "$out" | LC_ALL=C sort -u | wc -l)" "$n" "sorted, no duplicates"
is "$(printf '%s\n' "$out" | LC_ALL=C sort)" "$out" "sorted in byte order"
run "$CT/query_driver" "$COLL" list gh100
is "$(printf '%s\n' "$out" | wc -l)" "$n" "the chip name is case-insensitive"
run "$CT/query_driver" "$COLL" list XX999
is "$rc" 1 "an unknown chip is an error"
like "$out" "chip 'XX999'" "the error names the chip"

# --- pass counts -------------------------------------------------------
default=$("$CT/query_driver" "$COLL" default)
like "$default" "^gpu__time_duration\.sum$" "the default set has the duration"
like "$default" "^smsp__inst_executed\.sum$" "the default set has instructions"
like "$default" "^dram__bytes_read\.sum$" "the default set has DRAM reads"
like "$default" "^dram__bytes_write\.sum$" "the default set has DRAM writes"
like "$default" "pct_of_peak" "the default set has a throughput percentage"
# shellcheck disable=SC2086
run "$CT/query_driver" "$COLL" passes GH100 $default
is "$out" "rc=0 passes=1 err=" "the default set is one pass on GH100"
diag "default set ($(printf '%s\n' "$default" | wc -l) metrics): $out"
run "$CT/query_driver" "$COLL" passes GH100 sm__throughput.avg.pct_of_peak_sustained_elapsed
like "$out" "^rc=0 passes=([2-9]|[1-9][0-9]+) " "sm__throughput...elapsed needs more than one pass"
diag "sm__throughput.avg.pct_of_peak_sustained_elapsed alone: $out"
# shellcheck disable=SC2086
run "$CT/query_driver" "$COLL" passes GH100 $default sm__throughput.avg.pct_of_peak_sustained_elapsed
diag "the default set plus sm__throughput: $out"
like "$out" "^rc=0 passes=([2-9]|[1-9][0-9]+) " "adding sm__throughput makes the set multi-pass"
run "$CT/query_driver" "$COLL" passes GH100 gpu__time_duration.sum bogus__metric.sum dram__bytes_read.sum
is "$out" "rc=-1 passes=-1 err=unknown metric 'bogus__metric.sum' for chip GH100" \
	"a bogus name: -1 and an error naming it"
run "$CT/query_driver" "$COLL" passes GH100 gpu__time_duration.sum dram__bytes_read
like "$out" "^rc=-1 .*'dram__bytes_read' .*rollup" "a name without its rollup: -1, named, the fix said"
run "$CT/query_driver" "$COLL" passes GH100 launch__registers_per_thread launch__grid_size
is "$out" "rc=0 passes=0 err=" "the launch__ metrics derived from activity records cost no pass"
# shellcheck disable=SC2086
run "$CT/query_driver" "$COLL" passes GH100 $default launch__block_size
is "$out" "rc=0 passes=1 err=" "and add none to the default set"
run "$CT/query_driver" "$COLL" passes GH100 launch__waves_per_multiprocessor
like "$out" "^rc=-1 .*'launch__waves_per_multiprocessor'" "an ncu-only launch__ name kgate does not derive is not a metric"
run "$CT/query_driver" "$COLL" passes GH100
like "$out" "^rc=-1 .*no metrics" "an empty set is an error"
run "$CT/query_driver" "$COLL" passes XX999 gpu__time_duration.sum
like "$out" "^rc=-1 .*chip 'XX999'" "passes for an unknown chip: the chip is named"

# --- the injection entry point without a GPU -----------------------------
# Hostile bytes in argv: quote, backslash, control character, a lone
# continuation byte, a truncated sequence, an overlong '/', and good UTF-8.
hostile=$(printf 'q"b\\s\001\377x\303(\300\257 h\303\251')
mkdir -p "$T/rec"
run env KGATE_RECORDS="$T/rec/r.%p.jsonl" "$CT/inject_driver" "$COLL" "$hostile"
is "$rc" 0 "the host program exits 0 without a driver"
like "$out" "^init=1 " "InitializeInjection returns 1 (success) even so"
like "$err" "^kgate-collector: no CUDA driver" "one stderr line says why nothing was recorded"
f=$(ls "$T"/rec/r.*.jsonl 2>/dev/null | head -1)
ok "KGATE_RECORDS got its file" test -n "$f"
pid=${f##*/r.}
pid=${pid%.jsonl}
ok "%p became the pid ($pid)" test "$pid" -gt 0
is "$(wc -l <"$f" | tr -d ' ')" 3 "header, one error, footer"
is "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" '\n' "the last line ends with a newline"
check=$(python3 - "$f" "$pid" <<'PYEOF'
import json, sys
lines = open(sys.argv[1], "rb").read().decode("utf-8").splitlines()
recs = [json.loads(l) for l in lines]
h, e, f = recs
print(h["type"], h["format"], h["mode"], h["pid"] == int(sys.argv[2]), h["devices"], h["replay"], h["passes"])
print(ascii(h["argv"][2])[1:-1])
print(e["type"], e["code"])
print(f["type"], f["kernels"], f["errors"], f["dropped"])
PYEOF
)
like "$check" "^header 2 trace True \[\] kernel 1$" "header: format 2, trace, the pid, no devices"
want_argv='q"b\\s\x01\ufffdx\ufffd(\ufffd\ufffd h\xe9'
is "$(printf '%s\n' "$check" | sed -n 2p)" "$want_argv" \
	"argv survives: escapes, control char, bad bytes as U+FFFD, good UTF-8 kept"
like "$check" "^error no_device$" "the error record says no_device"
like "$check" "^footer 0 1 0$" "the footer counts 0 kernels and 1 error"
run "$KGATE" ingest --db "$T/k.db" --commit abc --records "$f"
like "$err" "collector error no_device: no CUDA driver" "kgate ingest reads it and warns about the error record"
unlike "$err" "bad JSON|truncated|no footer|must be" "kgate ingest finds nothing malformed"

# A bad setting is an error record too, and collection goes on.
rm -f "$T"/rec/*
run env KGATE_RECORDS="$T/rec/b.jsonl" KGATE_MODE=fast KGATE_LAUNCH_SKIP=-3 "$CT/inject_driver" "$COLL"
is "$rc" 0 "bad settings: the host program still exits 0"
like "$(cat "$T/rec/b.jsonl")" '"code":"bad_config","message":"KGATE_MODE=.fast. is not trace or metrics' "a bad KGATE_MODE is reported"
like "$(cat "$T/rec/b.jsonl")" '"code":"bad_config","message":"KGATE_LAUNCH_SKIP=.-3. is not an integer' "a negative launch skip is reported"
like "$(tail -1 "$T/rec/b.jsonl")" '^\{"type":"footer","kernels":0,"dropped":0,"errors":3' "the footer counts all three errors"

# An unwritable records path: say so, record nothing, keep the host alive.
run env KGATE_RECORDS="$T/no/such/dir/r.jsonl" "$CT/inject_driver" "$COLL"
is "$rc" 0 "an unwritable records path: the host program exits 0"
like "$err" "^kgate-collector: cannot open '$T/no/such/dir/r.jsonl': No such file" "the path and the reason are printed"

# --- the collector's logic through a stand-in libcupti --------------------
# Without a GPU, CUPTI never calls back.  A stand-in libcupti.so.13
# (tests/collector/fake_cupti.c, driven by fake_app.c; found
# first through LD_LIBRARY_PATH) delivers the callbacks and activity records
# a real one would, so that NVTX paths per thread, the runtime/driver launch
# join, graph launches, ordinals, escaping, dropped counts and the footer are
# checked here; the same records against a real GPU are scripts/test-gpu.sh's.
mkdir -p "$T/fake"
ok "the stand-in libcupti is built" test -f "$CT/libcupti.so.13"
ok "the scenario driver is built" test -x "$CT/fake_app"
# (the cache flush is tested on its own below)
fake() { run env LD_LIBRARY_PATH="$CT" KGATE_RECORDS="$T/fake/r.%p.jsonl" KGATE_CACHE_CONTROL=none "$@"; }

rm -f "$T"/fake/r.*.jsonl
fake FAKE_DROPPED=3 "$CT/fake_app" "$COLL"
is "$rc" 0 "trace through the stand-in: the program exits 0"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
ok "it wrote a records file" test -n "$f"
check=$(python3 - "$f" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
print("first", recs[0]["type"], recs[0]["mode"], "last", recs[-1]["type"])
ks = [r for r in recs if r["type"] == "kernel"]
for k in sorted(ks, key=lambda k: (k["ordinal"])):
    m = k["metrics"]
    print("K", k["ordinal"], ascii(k["name"]), ascii(k.get("nvtx", "-")),
          m.get("gpu__time_duration.sum", "-"), m["launch__grid_size"], m["launch__block_size"])
f = recs[-1]
print("footer", f["kernels"], f["dropped"], f["errors"], f["unmatched"], f["no_timestamp"])
PYEOF
)
like "$check" "^first header trace last footer$" "header first, footer last"
like "$check" "^K 0 '_Z5saxpyifPKfPf' 'step/forward' 3300.0 8 256$" "runtime launch: ordinal 0, nested path, duration, grid product"
like "$check" "^K 1 '_Z7stridediPKfPfi' 'step/backward' 4000.0 4 128$" "a record carrying the nested driver call's id joins the same launch; a registered-string domain range names it"
like "$check" "^K 2 '_Z5scaleifPf' 'worker' 400.0 2 64$" "a second thread has its own NVTX stack"
is "$(printf '%s\n' "$check" | grep -c "^K [0-9]* '_Z7graph_kiPKfPf' 'graph' 100.0 2 32$")" 2 "both kernels of a graph launch carry the graph launch's path"
like "$check" "^K 3 '_Z4tailiPf' '-' - 2 32$" "outside any range: no nvtx; no timestamps: no duration"
like "$check" "^K 4 'k\"\\\\ufffd' '\\\\x01evil\"/x' 500.0 2 32$" "hostile kernel and range names arrive escaped and repaired"
like "$check" "^K 5 '_Z4widev' 'wide\\\\xe9' 100.0 2 32$" "nvtxRangePushW: wide strings become UTF-8"
like "$check" "^K 8 '_Z7unknownv' '-' 100.0 2 32$" "a kernel without a launch callback takes a fresh ordinal"
is "$(printf '%s\n' "$check" | grep '^K' | awk '{print $2}' | sort -n | uniq | wc -l | tr -d ' ')" 9 "nine records, nine distinct ordinals"
like "$check" "^footer 9 3 0 1 1$" "footer: 9 kernels, 3 dropped, 0 errors, 1 unmatched, 1 without timestamps"
run "$KGATE" ingest --db "$T/fake.db" --commit fake1 --records "$f"
is "$rc" 0 "kgate ingest stores it"
like "$err" "dropped" "ingest warns about the dropped records"
is "$(sqlite3 "$T/fake.db" "SELECT nvtx FROM samples_named WHERE base = 'saxpy' AND metric = 'gpu__time_duration.sum'")" \
	"step/forward" "the NVTX path reaches the store"

rm -f "$T"/fake/r.*.jsonl
fake FAKE_BUSY=1 "$CT/fake_app" "$COLL" only-init
is "$rc" 0 "subscription taken: the program exits 0"
like "$err" "kgate-collector: another profiler holds the CUPTI subscription \(Nsight Compute\)" "stderr names the holder"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(sed -n 2p "$f")" '"code":"subscriber_busy","cupti":39' "an error record subscriber_busy with CUPTI's code"
like "$(tail -1 "$f")" '^\{"type":"footer","kernels":0,"dropped":0,"errors":1' "and the footer"

rm -f "$T"/fake/r.*.jsonl
fake FAKE_NOPROF=1 KGATE_MODE=metrics "$CT/fake_app" "$COLL"
is "$rc" 0 "metrics mode without the profiler: the program exits 0"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(cat "$f")" '"code":"metrics_unavailable"' "an error record says metrics mode is unavailable"
like "$(head -1 "$f")" '"mode":"trace"' "the header says the run degraded to trace"
is "$(grep -c '"type":"kernel"' "$f")" 9 "and every kernel is still recorded"

rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics KGATE_METRICS=m__a.sum "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
ok "counters free: launches carry values" test "$(grep -c '"m__a.sum":1' "$f")" -gt 0
rm -f "$T"/fake/r.*.jsonl
fake FAKE_HWBUSY=1 KGATE_MODE=metrics KGATE_METRICS=m__a.sum "$CT/fake_app" "$COLL"
is "$rc" 0 "counters busy: the program exits 0"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(cat "$f")" '"code":"hardware_busy"' "an error record hardware_busy"
is "$(grep -c '"type":"kernel"' "$f")" 9 "and every kernel is still recorded"
is "$(grep -c '"m__a.sum":1' "$f")" 0 "without counter values"

rm -f "$T"/fake/r.*.jsonl
fake FAKE_NOHOST=1 KGATE_MODE=metrics "$CT/fake_app" "$COLL"
is "$rc" 0 "libnvperf_host.so missing: the program exits 0"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(cat "$f")" '"code":"metrics_unavailable","message":"CUPTI.s host API is unavailable: libcupti could not load libnvperf_host.so' \
	"an error record names the missing library"
like "$err" "kgate-collector: CUPTI's host API is unavailable: libcupti could not load libnvperf_host.so" "and stderr says it once"
is "$(grep -c '"type":"kernel"' "$f")" 9 "and every kernel is still recorded"

rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "KGATE_KERNELS=regex:([" "$CT/fake_app" "$COLL" only-init
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(cat "$f")" "\"code\":\"bad_config\",\"message\":\"KGATE_KERNELS='regex:\(\[': bad regular expression" "a bad kernel regex is reported"

rm -f "$T"/fake/r.*.jsonl
fake FAKE_FORK=1 "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
is "$(grep -c '"type":"header"' "$f") $(grep -c '"type":"kernel"' "$f") $(grep -c '"type":"footer"' "$f")" "1 9 1" \
	"a forked child that exits writes nothing into the parent's file"

# a thread with no range open launches while the main thread is inside a
# range (PyTorch's autograd thread during loss.backward()): the main
# thread's path, and the record says where it came from
for mode in trace metrics; do
	rm -f "$T"/fake/r.*.jsonl
	fake KGATE_MODE=$mode KGATE_METRICS=m__a.sum "$CT/fake_app" "$COLL" autograd
	f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
	like "$(grep '"ordinal":0,' "$f")" '"nvtx":"step/backward","nvtx_from":"main_thread"' \
		"$mode: a launch from a thread without ranges takes the main thread's open path"
	unlike "$(grep '"ordinal":1,' "$f")" '"nvtx"' "$mode: and none when the main thread has none open"
done

# NVTX_INJECTION64_PATH must name the libcupti the process uses
rm -f "$T"/fake/r.*.jsonl
fake NVTX_INJECTION64_PATH=/bin/sh "$CT/fake_app" "$COLL" only-init
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(cat "$f")" "\"code\":\"nvtx_mismatch\",\"message\":\"NVTX_INJECTION64_PATH names $(realpath /bin/sh) but this process uses $(realpath "$CT/libcupti.so.13")" \
	"an NVTX path naming another file than the loaded libcupti is reported"
rm -f "$T"/fake/r.*.jsonl
fake NVTX_INJECTION64_PATH="$CT/libcupti.so.13" "$CT/fake_app" "$COLL" only-init
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
unlike "$(cat "$f")" '"type":"error"' "the same file: no error"

# NVTX_INJECTION64_PATH naming the collector (what kgate run sets): NVTX's
# first call, before cuInit, starts the collector and is handed over to the
# libcupti it is bound to; a range opened then is on the kernel's path.
rm -f "$T"/fake/r.*.jsonl
fake NVTX_INJECTION64_PATH="$COLL" "$CT/fake_app" "$COLL" nvtx-first
like "$out" "^fake-cupti: NVTX handed over, table 42" "the collector forwards NVTX's init to libcupti, with NVTX's table"
like "$out" "^nvtx=1" "and returns libcupti's answer"
like "$out" "^init=1" "the driver's later InitializeInjection finds the collector running"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(cat "$f")" '"type":"kernel".*"nvtx":"early"' "a range opened before the first CUDA call names the kernel"
unlike "$(cat "$f")" '"type":"error"' "the collector as NVTX's library: no nvtx_mismatch"

# The same entry point with the real NVTX header and the real libcupti, on a
# machine without a CUDA driver: NVTX loads the collector at the first push,
# the collector starts, says there is no driver, and the program runs on.
if [ -x "$CT/nvtx_only" ]; then
	rm -f "$T"/nv.*.jsonl
	run env -u CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH="$COLL" KGATE_RECORDS="$T/nv.%p.jsonl" "$CT/nvtx_only"
	is "$rc $out" "0 done" "real NVTX, real libcupti, no driver: the program runs as without the collector"
	f=$(ls "$T"/nv.*.jsonl 2>/dev/null | head -1)
	like "$(head -1 "$f" 2>/dev/null)" '^\{"type":"header"' "NVTX's first call started the collector (a records file with its header)"
	unlike "$(cat "$f" 2>/dev/null)" '"code":"nvtx_unavailable"' "the collector found libcupti's NVTX entry point"
	like "$(tail -1 "$f" 2>/dev/null)" '^\{"type":"footer"' "and the file has its footer"
else
	skip "the NVTX program is not built"
fi

# metrics mode: the stand-in's profiler gives metric i of the k-th range
# the value 100 k + i.  The filter is a regex on the demangled name
# (the driver links libstdc++, so __cxa_demangle is there), skip 1, count 1:
# of saxpy, strided, scale only strided is profiled.  Once with kernel
# replay (KGATE_SESSION=0), once in a session (user replay, the default for
# a one-pass set; a record before its launch cannot happen there).
M="KGATE_METRICS=m__a.sum,gpu__time_duration.sum,m__b.sum"
F="KGATE_KERNELS=regex:^(saxpy|scale|strided)\("
for order in FAKE_DUP FAKE_EARLY FAKE_LATECTX FAKE_DUP,S FAKE_LATECTX,S; do
	rm -f "$T"/fake/r.*.jsonl
	sess=0
	case $order in *,S) sess=1 order=${order%,S} ;; esac
	fake "$order=1" KGATE_SESSION=$sess KGATE_MODE=metrics "$M" "$F" KGATE_LAUNCH_SKIP=1 KGATE_LAUNCH_COUNT=1 "$CT/fake_app" "$COLL"
	order="$order, session $sess"
	f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
	is "$rc" 0 "metrics mode ($order): the program exits 0"
	like "$(head -1 "$f")" '"mode":"metrics".*"metrics":\["m__a.sum","gpu__time_duration.sum","m__b.sum"\]' "metrics ($order): the header lists the metrics"
	like "$(grep strided "$f")" '"ordinal":1,.*"nvtx":"step/backward","metrics":\{"m__a.sum":100.0,"gpu__time_duration.sum":101.0,"m__b.sum":102.0,"launch__grid_size":4,' \
		"metrics ($order): the selected launch has the profiler's values, duration included, and its launch configuration"
	unlike "$(grep -v strided "$f")" 'm__a.sum"?:' "metrics ($order): the skipped and the uncounted launches are not profiled"
	like "$(grep saxpy "$f")" '"metrics":\{"gpu__time_duration.sum":3300.0,' "metrics ($order): an unprofiled launch keeps its trace duration"
done
like "$(tail -1 "$f")" '"kernels":9,.*"replayed":0' "values before or after the activity record: one record each"
# the range starts in the nested driver call, the record carries the runtime call's id
rm -f "$T"/fake/r.*.jsonl
for sess in 0 1; do
	rm -f "$T"/fake/r.*.jsonl
	fake FAKE_LATECTX=1 KGATE_SESSION=$sess KGATE_MODE=metrics "$M" "$F" KGATE_LAUNCH_COUNT=1 "$CT/fake_app" "$COLL"
	f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
	like "$(grep saxpy "$f")" '"corr":10,.*"metrics":\{"m__a.sum":100.0,"gpu__time_duration.sum":101.0,' "a range started in the nested call joins the record of the outer one (session $sess)"
	is "$(grep -c '"type":"kernel"' "$f")" 9 "and makes one record, not two (session $sess)"
done
rm -f "$T"/fake/r.*.jsonl
fake FAKE_DUP=1 KGATE_SESSION=0 KGATE_MODE=metrics "$M" "$F" KGATE_LAUNCH_SKIP=1 KGATE_LAUNCH_COUNT=1 "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(tail -1 "$f")" '"kernels":9,.*"replayed":1' "a replay pass's second activity record is dropped and counted"
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "KGATE_METRICS=m__a.sum, launch__grid_size ,m__b.sum" "$CT/fake_app" "$COLL" only-init
like "$(head -1 "$(ls "$T"/fake/r.*.jsonl)")" '"metrics":\["m__a.sum","m__b.sum"\]' "launch__ names are left to the trace, spaces trimmed"

# --- one-pass sets: one long user-replay session per context -------------
# Every kernel launched while the session is open makes a range (the
# stand-in counts them at the driver's launch call), so the k-th range is
# the k-th launch since the session began; kernel activity is off while it
# is open (the stand-in then delivers no activity record for the launch).
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" KGATE_PROFILE_BATCH=2 "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
is "$rc" 0 "session: the program exits 0"
like "$out" "fake-cupti: set config, user replay" "session: the profiler is set up for user replay"
unlike "$out" "kernel replay" "session: and never for kernel replay"
like "$(head -1 "$f")" '"replay":"user"' "session: the header says user replay"
check=$(python3 - "$f" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
ks = [r for r in recs if r["type"] == "kernel"]
for k in sorted(ks, key=lambda k: k["ordinal"]):
    m = k["metrics"]
    print("K", k["ordinal"], k["name"][:12], k.get("nvtx", "-"), m.get("m__a.sum", "-"),
          m.get("gpu__time_duration.sum", "-"), m["launch__grid_size"], m["launch__block_size"],
          k.get("stream"), "start" in k)
print("footer", recs[-1]["kernels"], recs[-1]["replayed"], recs[-1]["errors"])
PYEOF
)
for o in 0 1 2 3 4 5; do
	like "$check" "^K $o [^ ]* [^ ]* $((100 * (o + 1))).0 $((100 * (o + 1) + 1)).0 " \
		"session, batches of 2, a graph launch and a second thread: launch $o has range $((o + 1))'s values"
done
like "$check" "^K 0 _Z5saxpyifPK step/forward 100.0 101.0 8 256 7 False$" \
	"session: the launch configuration and stream from the launch call, no timestamps"
like "$check" "^K 2 _Z5scaleifPf worker 300.0 301.0 2 64 7 False$" "session: a second thread's launch in the same session"
is "$(printf '%s\n' "$check" | grep -c '^K [0-9]* _Z7graph_kiP graph - 100.0 2 32 7 True$')" 2 \
	"session: a graph launch ends the session first; its kernels keep their trace records"
like "$check" "^footer 9 0 0$" "session: nine records, no activity record of a session's launch, no error"

# a filter in a session: launches it does not select, made while the
# session is open, make ranges too; they get their range's duration only
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" "KGATE_KERNELS=regex:^(saxpy|tail)\(" "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(grep strided "$f")" '"ordinal":1,.*"metrics":\{"gpu__time_duration.sum":201.0,"launch__grid_size":4,' \
	"session: a launch the filter leaves out, in the open session: its range's duration, no counters"
like "$(grep '"ordinal":3,' "$f")" '_Z4tailiPf.*"metrics":\{"m__a.sum":400.0,' "session: the next selected launch after a graph launch opens a new session"
like "$(grep '_Z4widev' "$f")" '"metrics":\{"gpu__time_duration.sum":601.0,' "session: the session stays open to the end (exit decodes it)"
# user ranges (KGATE_RANGE=user): a range is pushed around each selected
# launch only, so launches the filter leaves out make none and cost nothing;
# durations come from CUDA events around the launch (the stand-in's clock:
# 1/1024 ms a kernel), as a user range's own duration is inflated
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" KGATE_RANGE=user KGATE_PROFILE_BATCH=2 "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
is "$rc" 0 "user ranges: the program exits 0"
like "$out" "fake-cupti: set config, user replay, user ranges" "user ranges: the session is set up with user ranges"
like "$(head -1 "$f")" '"replay":"user","cache_control":"none","range":"user","duration":"events"' "user ranges: the header says so"
for o in 0 1 2 3; do
	like "$(grep "\"ordinal\":$o," "$f")" "\"metrics\":\\{\"m__a.sum\":$((100 * (o + 1))).0,\"gpu__time_duration.sum\":976.5625," \
		"user ranges, batches of 2: launch $o has range $((o + 1))'s values and its events' duration"
done
like "$(tail -1 "$f")" '"errors":0' "user ranges: no error"
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" KGATE_RANGE=user "KGATE_KERNELS=regex:^(saxpy|tail)\(" "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(grep strided "$f")" '"ordinal":1,.*"metrics":\{"gpu__time_duration.sum":976.5625,"launch__grid_size":4,' \
	"user ranges: a launch the filter leaves out, in the open session: its events' duration, no range"
like "$(grep '"ordinal":3,' "$f")" '_Z4tailiPf.*"metrics":\{"m__a.sum":200.0,' \
	"user ranges: the next selected launch has the second range (no range for those left out)"
unlike "$(grep '_Z4widev' "$f")" 'm__a' "user ranges: a launch left out at the end has no counters"
like "$(grep '_Z4widev' "$f")" '"gpu__time_duration.sum":976.5625' "and its events' duration"
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" KGATE_RANGE=user KGATE_KERNELS=saxpy "$CT/fake_app" "$COLL" many
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
is "$(grep '_Z5otherv' "$f" | grep -vc '"start":')" 30 "user ranges: 30 launches left out in a row do not stop the session"
like "$(grep '"ordinal":31,' "$f")" '"metrics":\{"m__a.sum":200.0,' "user ranges: the next selected launch has range 2"
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" KGATE_RANGE=user KGATE_DURATION=range "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(grep saxpy "$f")" '"metrics":\{"m__a.sum":100.0,"gpu__time_duration.sum":101.0,' \
	"user ranges, KGATE_DURATION=range: the range's own duration"
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" KGATE_DURATION=events "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(grep saxpy "$f")" '"metrics":\{"m__a.sum":100.0,"gpu__time_duration.sum":976.5625,' \
	"auto ranges, KGATE_DURATION=events: the events' duration"
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics KGATE_RANGE=manual KGATE_DURATION=clock KGATE_CACHE_CONTROL=some "$CT/fake_app" "$COLL" only-init
f=$(cat "$(ls "$T"/fake/r.*.jsonl)")
like "$f" "KGATE_RANGE='manual' is not auto or user; using auto" "a bad KGATE_RANGE is reported"
like "$f" "KGATE_DURATION='clock' is not range or events; using range" "a bad KGATE_DURATION is reported"
like "$f" "KGATE_CACHE_CONTROL='some' is not none or all; using all" "a bad KGATE_CACHE_CONTROL is reported"

# cache control all (the default; the tests above turn it off): the
# collector's flush kernel before each profiled launch, never a launch of
# the program (no record, no ordinal).  By default it runs on the launch's
# stream: with auto ranges it makes a range of its own, dropped; with user
# ranges it runs before the range is pushed.  KGATE_CACHE_FLUSH=context
# runs it in a context of the collector's own, which the profiler never sees
# the footer without the flush, to compare
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" "$CT/fake_app" "$COLL"
foot_none=$(tail -1 "$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)")
# flush_case WHERE OWN STEP: with KGATE_CACHE_FLUSH=WHERE, OWN flushes ran in
# the collector's own context and launch o has range STEP * (o + 1)'s values
flush_case() {
	rm -f "$T"/fake/r.*.jsonl
	fake KGATE_MODE=metrics "$M" KGATE_CACHE_CONTROL=all KGATE_CACHE_FLUSH="$1" "$CT/fake_app" "$COLL"
	f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
	is "$rc" 0 "cache control, flush $1: the program exits 0"
	nprof=$(grep -c '"m__a.sum":[0-9]' "$f")
	like "$out" "fake-cupti: $nprof flush kernels, 0 inside a user range, $(($2 ? nprof : 0)) in a context of their own" \
		"cache control, flush $1: a flush before each of the $nprof profiled launches"
	like "$(head -1 "$f")" "\"cache_control\":\"all\",\"cache_flush\":\"$1\"" "cache control: the header says all, flush $1"
	for o in 0 1 2 3; do
		like "$(grep "\"ordinal\":$o," "$f")" "\"metrics\":\\{\"m__a.sum\":$((100 * $3 * (o + 1))).0," \
			"cache control, flush $1, auto ranges: launch $o has range $(($3 * (o + 1)))'s values"
	done
	unlike "$(cat "$f")" 'kgate_flush' "cache control, flush $1: the flush kernel has no record"
	is "$(tail -1 "$f")" "$foot_none" "cache control, flush $1: the same footer as without it (records, unmatched, errors)"
}
# on the stream (the default): the flush's range before each launch is dropped
flush_case stream 0 2
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" KGATE_CACHE_CONTROL=all "$CT/fake_app" "$COLL"
like "$(head -1 "$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)")" '"cache_flush":"stream"' \
	"cache control: by default the flush runs on the stream"
# in its own context: the flush makes no range
flush_case context 1 1
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" KGATE_CACHE_CONTROL=all KGATE_CACHE_FLUSH=context FAKE_NOCTX=1 "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
is "$rc" 0 "cache control, no context for the flush: the program exits 0"
like "$(cat "$f")" '"code":"cache_control","message":"cannot create a context for the cache flush \(CUDA error 2\); the flush runs on each profiled launch.s stream instead' \
	"one error record says why"
like "$out" "fake-cupti: $nprof flush kernels, 0 inside a user range, 0 in a context of their own" "and the flush runs on the stream"
like "$(grep '"ordinal":1,' "$f")" '"metrics":\{"m__a.sum":400.0,' "its range dropped as on the stream"
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" KGATE_CACHE_CONTROL=all KGATE_RANGE=user "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$out" "fake-cupti: $nprof flush kernels, 0 inside a user range" "cache control, user ranges: a flush before each profiled launch, outside its range"
like "$(grep saxpy "$f")" '"metrics":\{"m__a.sum":100.0,' "cache control, user ranges: the flush makes no range"
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" "$F" KGATE_SESSION=0 "$CT/fake_app" "$COLL"
foot_none=$(tail -1 "$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)")
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" "$F" KGATE_CACHE_CONTROL=all KGATE_SESSION=0 "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
nprof=$(grep -c '"m__a.sum":[0-9]' "$f")
like "$out" "fake-cupti: $nprof flush kernels" "cache control, kernel replay: a flush before each of the $nprof profiled launches"
like "$(grep saxpy "$f")" '"metrics":\{"m__a.sum":100.0,' "cache control, kernel replay: outside the range"
unlike "$(cat "$f")" 'kgate_flush' "cache control, kernel replay: the flush's activity record is dropped"
is "$(tail -1 "$f")" "$foot_none" "cache control, kernel replay: the same footer as without it (nothing unmatched)"
# the profiler fails mid-run (the third range's start): the launches it
# would have profiled from there on are traced without counters, and the
# footer's no_counters counts them, with one error record at the end
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" KGATE_SESSION=0 "$CT/fake_app" "$COLL"
nok=$(grep -c '"m__a.sum":[0-9]' "$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)")
like "$(tail -1 "$(ls "$T"/fake/r.*.jsonl | head -1)")" '"no_counters":0[,}]' "kernel replay: the footer counts no launch without counters"
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" KGATE_SESSION=0 FAKE_RP_START_FAIL=3 "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
is "$rc" 0 "the profiler failing mid-run: the program exits 0"
like "$(cat "$f")" '"message":"cuptiRangeProfilerStart failed' "its failure is an error record"
is "$(grep -c '"m__a.sum":[0-9]' "$f")" 2 "the two launches before it have counters"
like "$(tail -1 "$f")" "\"no_counters\":$((nok - 2))[,}]" "the footer counts the $((nok - 2)) launches it would have profiled after it"
like "$(cat "$f")" "\"code\":\"no_counters\",\"message\":\"$((nok - 2)) launches meant to be profiled have no counters" \
	"and an error record at the end says so"
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" KGATE_CACHE_CONTROL=all FAKE_NOMODULE=1 "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
is "$rc" 0 "cache control, the flush kernel cannot load: the program exits 0"
like "$(cat "$f")" '"code":"cache_control","message":"cannot flush the caches before profiled launches: cuModuleLoadData' \
	"one error record says why"
like "$(grep saxpy "$f")" '"metrics":\{"m__a.sum":100.0,' "and the launches are profiled without it"
rm -f "$T"/fake/r.*.jsonl
fake KGATE_CACHE_CONTROL=all "$CT/fake_app" "$COLL"
unlike "$out" "flush kernels" "cache control: nothing flushed in trace mode"

# step replay (KGATE_REPLAY=step): a set of 2 passes in the stand-in (a
# "multi" name) over steps, each a push of the NVTX range "step": pass p of
# a group on its p-th step, the values to the first step's launches, which
# say which steps gave them; the later pass's launches have none
steps() {
	rm -f "$T"/fake/r.*.jsonl
	fake KGATE_MODE=metrics KGATE_METRICS=m__a.sum,m__multi.sum KGATE_REPLAY=step "$@" "$CT/fake_app" "$COLL" steps
	f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
	check=$(python3 - "$f" <<'PYEOF'
import json, sys
for l in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(l)
    if r["type"] == "kernel":
        m = r["metrics"]
        print("K", r["ordinal"], r["name"][:10], r.get("step", "-"), r.get("step_passes", "-"),
              m.get("m__a.sum", "-"), m.get("m__multi.sum", "-"), "start" in r)
    elif r["type"] == "error":
        print("E", r["code"], r["message"])
PYEOF
)
}
steps
is "$rc" 0 "step replay: the program exits 0"
like "$out" "fake-cupti: set config, user replay, auto ranges" "step replay: user replay with auto ranges"
like "$(head -1 "$f")" '"passes":1,"replay":"step","step_range":"step","step_passes":2,' "step replay: the header says so (one run)"
like "$check" "^K 1 _Z5saxpyif 0 2 100.0 101.0 False$" "step replay: the first step's first launch has range 1's values of both passes, from steps 0 and 1"
like "$check" "^K 2 _Z7strided 0 2 200.0 201.0 False$" "step replay: its second launch range 2's (the join by launch ordinal within the step)"
like "$check" "^K 3 _Z5saxpyif - - - - False$" "step replay: a launch of the second pass's step has no values"
like "$check" "^K 5 _Z5saxpyif 2 2 300.0 301.0 False$" "step replay: the next group begins at step 2"
like "$check" "^K 0 _Z4initv - - - - True$" "step replay: a launch before the first step is traced"
like "$check" "^K 11 _Z4tailiPf - - - - True$" "step replay: and after the last"
like "$check" "^E step_incomplete step replay: the group of steps from step 4 .* 1 of 2 passes collected\) has no values" \
	"step replay: a group the program ends in the middle of: an error record"
like "$check" "^K 9 _Z5saxpyif - - None None False$" "step replay: and its launches have no values"
run "$KGATE" ingest --db "$T/step.db" --commit step1 --records "$f"
is "$rc" 0 "step replay: kgate ingest stores the records"
unlike "$err" "must be|bad JSON" "and finds nothing malformed"
steps FAKE_STEP_ODD=3
like "$check" "^E step_mismatch step replay: the group of steps from step 2 .* launch 1 of step 3 is _Z3oddv, of the group's first step _Z7stridediPKfPfi" \
	"step replay: a step that launches another kernel breaks the join: an error record names it"
like "$check" "^K 6 _Z7strided - - None None False$" "step replay: and the group's launches have no values"
like "$check" "^K 1 _Z5saxpyif 0 2 100.0 101.0 False$" "step replay: the group before it keeps its values"
steps FAKE_STEPS=1
like "$check" "^E step_incomplete step replay: the group of steps from step 0 " "step replay: one step for two passes: no values, an error record"
steps KGATE_CACHE_CONTROL=all
like "$check" "^K 1 _Z5saxpyif 0 2 200.0 201.0 False$" "step replay with cache control: the flush's range before each launch is dropped, in every pass"
like "$check" "^K 6 _Z7strided 2 2 800.0 801.0 False$" "step replay with cache control: the second group too"
steps KGATE_CACHE_CONTROL=all KGATE_CACHE_FLUSH=context
like "$check" "^K 1 _Z5saxpyif 0 2 100.0 101.0 False$" "step replay with cache control in its own context: no range for the flush, in any pass"
like "$check" "^K 6 _Z7strided 2 2 400.0 401.0 False$" "step replay with cache control in its own context: the second group too"
like "$out" "in a context of their own" "step replay: the flush ran in its own context"
steps KGATE_STEP_RANGE=iteration
like "$check" "^K 1 _Z5saxpyif - - - - True$" "step replay, KGATE_STEP_RANGE names a range the program never pushes: traced"
unlike "$check" "^K [0-9]+ [^ ]+ [0-9]|^E " "and nothing profiled, no error"
like "$(head -1 "$f")" '"step_range":"iteration"' "and the header names the range"

# kernel_name_base (as ncu's --kernel-name-base): the same selection by the
# function's base name, and by the mangled name
for nb in "function|regex:^(saxpy|tail)\$" "mangled|regex:^_Z(5saxpy|4tail)"; do
	rm -f "$T"/fake/r.*.jsonl
	fake KGATE_MODE=metrics "$M" "KGATE_KERNELS=${nb#*|}" "KGATE_KERNEL_NAME_BASE=${nb%%|*}" \
		"$CT/fake_app" "$COLL"
	f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
	like "$(grep strided "$f")" '"ordinal":1,.*"metrics":\{"gpu__time_duration.sum":201.0,"launch__grid_size":4,' \
		"kernel_name_base ${nb%%|*}: the launch it leaves out has no counters"
	like "$(grep '"ordinal":3,' "$f")" '_Z4tailiPf.*"metrics":\{"m__a.sum":400.0,' \
		"kernel_name_base ${nb%%|*}: the launch it selects has them"
done
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" "KGATE_KERNELS=regex:^(saxpy|tail)\(" KGATE_KERNEL_NAME_BASE=mangled \
	"$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
unlike "$(cat "$f")" '"m__a.sum":[0-9]' "kernel_name_base mangled: a demangled regex selects nothing"
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" KGATE_KERNEL_NAME_BASE=base "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(cat "$f")" "KGATE_KERNEL_NAME_BASE='base' is not function, demangled or mangled" "a bad kernel_name_base is reported"

# the last launch the filter can select ends the session: later launches
# are traced as without profiling
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" "$F" KGATE_LAUNCH_COUNT=1 "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(grep strided "$f")" '"start":5000,.*"metrics":\{"gpu__time_duration.sum":4000.0,' \
	"session: after the launch count, kernel activity is back on: trace records with timestamps"
# launches the filter leaves out, many in a row: the session takes 24 of
# them as ranges, then stops; the rest are traced; the next selected launch
# starts a new session
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics "$M" KGATE_KERNELS=saxpy "$CT/fake_app" "$COLL" many
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
is "$(grep '_Z5otherv' "$f" | grep -vc '"start":')" 24 "session: 24 launches left out in a row are ranges of the open session"
is "$(grep '_Z5otherv' "$f" | grep -c '"start":[0-9]*,"end"')" 6 "session: then it stops, and the other 6 keep their activity records"
like "$(grep '"ordinal":31,' "$f")" '"metrics":\{"m__a.sum":2600.0,' "session: the next selected launch starts a new one (range 26)"
unlike "$(grep '_Z5otherv' "$f")" 'm__a' "session: no launch left out has counters"

# without the duration in the set, the session adds it (it is the launch's duration)
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics KGATE_METRICS=m__a.sum "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
like "$(head -1 "$f")" '"metrics":\["m__a.sum","gpu__time_duration.sum"\]' "session: the duration is added to a set without it"
like "$(grep saxpy "$f")" '"metrics":\{"m__a.sum":100.0,"gpu__time_duration.sum":101.0,' "and measured by the range"
# a multi-pass set keeps kernel replay
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics KGATE_METRICS=m__a.sum,m__multi.sum "$CT/fake_app" "$COLL"
like "$out" "fake-cupti: set config, kernel replay" "a multi-pass set: kernel replay"
like "$(head -1 "$(ls "$T"/fake/r.*.jsonl)")" '"replay":"kernel"' "and the header says so"
rm -f "$T"/fake/r.*.jsonl
fake KGATE_MODE=metrics KGATE_SESSION=2 "$CT/fake_app" "$COLL" only-init
like "$(cat "$(ls "$T"/fake/r.*.jsonl)")" '"code":"bad_config","message":"KGATE_SESSION=.2. is not 0 or 1' "a bad KGATE_SESSION is reported"

# application replay: "multi" names cost 2 passes in the stand-in, so
# m__a | m__multi | gpu__time_duration are three single-pass groups
rm -f "$T"/fake/a*.jsonl
for p in 0 1 2; do
	run env LD_LIBRARY_PATH="$CT" KGATE_RECORDS="$T/fake/a$p.%p.jsonl" KGATE_MODE=metrics \
		KGATE_REPLAY=application KGATE_PASS=$p KGATE_METRICS=m__a.sum,m__multi.sum,gpu__time_duration.sum \
		"$CT/fake_app" "$COLL"
done
a0=$(ls "$T"/fake/a0.*.jsonl) a1=$(ls "$T"/fake/a1.*.jsonl) a2=$(ls "$T"/fake/a2.*.jsonl)
like "$(head -1 "$a1")" '"pass":1,"passes":3,"replay":"application".*"metrics":\["m__multi.sum"\]' "application replay: pass 1 of 3 collects its group only"
like "$(grep saxpy "$a0")" '"metrics":\{"m__a.sum":100.0,"gpu__time_duration.sum":null,"launch__grid_size":8' "pass 0: its values, the launch configuration, and null for a duration another pass measures"
like "$(grep saxpy "$a1")" '"metrics":\{"m__multi.sum":100.0\}' "a later pass: only its own values"
run "$KGATE" ingest --db "$T/app.db" --commit app1 --benchmark b --records "$a0" --records "$a1" --records "$a2"
is "$rc" 0 "kgate ingest joins the three passes"
is "$(sqlite3 "$T/app.db" "SELECT group_concat(metric || '=' || value, ' ') FROM (SELECT metric, value FROM samples_named WHERE base = 'saxpy' ORDER BY metric)")" \
	"gpu__time_duration.sum=100.0 launch__block_size=256.0 launch__grid_size=8.0 launch__local_mem_per_thread=0.0 launch__registers_per_thread=16.0 launch__shared_mem_per_block_dynamic=0.0 launch__shared_mem_per_block_static=1024.0 m__a.sum=100.0 m__multi.sum=100.0" \
	"one sample per metric and launch, none twice"

for case in "FAKE_NOPRIV=1|insufficient_privileges\",\"cupti\":35" \
	"KGATE_METRICS=m__a.sum,bogus.sum|invalid_metric\",\"message\":\"unknown metric 'bogus.sum' for chip FAKE1" \
	"KGATE_PASS=5|bad_config\",\"message\":\"KGATE_PASS=5 but the metric set has"; do
	rm -f "$T"/fake/r.*.jsonl
	fake KGATE_MODE=metrics KGATE_REPLAY=application "${case%%|*}" "$CT/fake_app" "$COLL"
	f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
	like "$(cat "$f")" "\"code\":\"${case#*|}" "${case%%|*}: the error record says why"
	like "$(head -1 "$f")" '"mode":"trace"' "${case%%|*}: the header says trace"
	is "$(grep -c '"type":"kernel"' "$f")" 9 "${case%%|*}: every kernel is still recorded"
done

# --- a distributed job's rank -----------------------------------------------
# The rank comes from the first launcher variable set to a non-negative
# integer (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID); without one
# the header has no rank, and the samples none.
unset RANK LOCAL_RANK WORLD_SIZE OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_LOCAL_RANK \
	OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE MPI_LOCALRANKID SLURM_PROCID SLURM_LOCALID SLURM_NTASKS
rankof() { # the header's rank fields of the newest file
	python3 -c 'import json,sys; h=json.loads(open(sys.argv[1]).readline()); print(h.get("rank","-"), h.get("rank_from","-"), h.get("local_rank","-"), h.get("world_size","-"))' "$1"
}
for case in "RANK=1 LOCAL_RANK=1 WORLD_SIZE=2|1 RANK 1 2" \
	"OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_SIZE=4|3 OMPI_COMM_WORLD_RANK 1 4" \
	"PMI_RANK=2 PMI_SIZE=3|2 PMI_RANK - 3" \
	"SLURM_PROCID=5 SLURM_LOCALID=1 SLURM_NTASKS=8|5 SLURM_PROCID 1 8" \
	"RANK=x OMPI_COMM_WORLD_RANK=-1 PMI_RANK=7|7 PMI_RANK - -" \
	"RANK=|- - - -"; do
	rm -f "$T"/fake/r.*.jsonl
	# shellcheck disable=SC2086
	fake ${case%%|*} "$CT/fake_app" "$COLL"
	f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
	is "$(rankof "$f")" "${case#*|}" "${case%%|*}: the header's rank, its variable, local rank, world size"
done
rm -f "$T"/fake/r.*.jsonl
fake RANK=1 "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
run "$KGATE" ingest --db "$T/rank.db" --commit r1 --records "$f"
is "$rc" 0 "kgate ingest reads the stand-in's records with a rank"
is "$(sqlite3 "$T/rank.db" "SELECT group_concat(DISTINCT rank) FROM samples")" 1 "every sample stored with rank 1"
rm -f "$T"/fake/r.*.jsonl
fake "$CT/fake_app" "$COLL"
f=$(ls "$T"/fake/r.*.jsonl 2>/dev/null | head -1)
run "$KGATE" ingest --db "$T/norank.db" --commit r0 --records "$f"
is "$(sqlite3 "$T/norank.db" "SELECT count(*) FROM samples WHERE rank IS NOT NULL")" 0 \
	"without a rank variable, no sample has a rank"

# kgate run of a launcher that starts its workers as torchrun does (RANK,
# WORLD_SIZE in each worker's environment), each under the collector and
# the stand-in libcupti: each rank's records are grouped by rank, and the
# rank of the job that wrote nothing is named.
cat >"$T/launch.sh" <<EOF
#!/bin/sh
# TEST DOUBLE of a launcher (torchrun): workers of ranks 0 and 1 of a job of
# WORLD_SIZE ranks; rank 2, when the job has 3, never starts.
for r in 0 1; do
	RANK=\$r LOCAL_RANK=\$r "$CT/fake_app" "$COLL" &
done
wait
EOF
chmod 755 "$T/launch.sh"
for w in 2 3; do
	cat >"$T/job$w.yaml" <<EOF
version: 1
benchmarks:
  - name: job
    cmd: ["$T/launch.sh"]
    repeat: 2
    warmup: 0
    env: { LD_LIBRARY_PATH: "$CT", WORLD_SIZE: "$w" }
EOF
	run env KGATE_COLLECTOR="$COLL" KGATE_CUPTI="$CT/libcupti.so.13" "$KGATE" run -c "$T/job$w.yaml" \
		--db "$T/job$w.db" --commit "job$w"
	is "$rc" 0 "kgate run of a launcher with $w ranks: exit 0"
	like "$err" "benchmark 'job' \(repeat 1\): records of $w ranks \(rank 0: 1, rank 1: 1" \
		"$w ranks: each rank's records file counted under its rank"
	is "$(sqlite3 "$T/job$w.db" "SELECT group_concat(r) FROM (SELECT DISTINCT rank AS r FROM samples ORDER BY r)")" \
		"0,1" "$w ranks: the samples stored under ranks 0 and 1"
done
like "$err" "benchmark 'job' \(repeat 1\): rank 2 of 3 wrote no records file" \
	"a rank of the job that wrote nothing is named"
run env KGATE_COLLECTOR="$COLL" KGATE_CUPTI="$CT/libcupti.so.13" "$KGATE" run -c "$T/job2.yaml" \
	--db "$T/job2.db" --commit job2
unlike "$err" "wrote no records file" "a job whose every rank wrote its file: no warning"

done_testing
