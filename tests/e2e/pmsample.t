#!/bin/sh
# pmsample.t: metrics mode's PM-sampling engine (KGATE_ENGINE=sampling)
# without a GPU, through the stand-in libcupti (tests/collector/fake_cupti.c):
# its synthetic PM sampling runs each launch's kernel for half an interval to
# one and a half, doing 1000 + 7 * corr instructions (metric j counts j + 1
# times that) spread over the samples it overlaps, so a launch's total is
# exact only when every sample of its window, and none of another's, is
# summed into it.  Checked: the attribution between the idle gaps, the
# counter data image rolled over many times, a decoder slower than the
# samples (the launches wait), lost samples (an overflowed hardware buffer,
# a hole in the sample times) giving no counters rather than wrong ones, the
# refusal when NVML (tests/nvml/nvml_double.c) lists another process, bad
# settings, the filter, and kgate ingest of the records.
. "$(dirname "$0")/lib.sh"

COLL=${KGATE_COLLECTOR:?KGATE_COLLECTOR must name libkgate-collector.so}
CT=${KGATE_BUILD:?KGATE_BUILD must name the build directory}/tests/collector
NVML=$KGATE_BUILD/tests/libnvml-double.so
ok "the stand-in libcupti is built" test -f "$CT/libcupti.so.13"
ok "the NVML stand-in is built" test -f "$NVML"
mkdir -p "$T/pm"
pm() {
	rm -f "$T"/pm/r.*.jsonl
	run env LD_LIBRARY_PATH="$CT" KGATE_RECORDS="$T/pm/r.%p.jsonl" KGATE_MODE=metrics \
		KGATE_ENGINE=sampling KGATE_NVML_LIBRARY="$NVML" "$@"
	f=$(ls "$T"/pm/r.*.jsonl 2>/dev/null | head -1)
}
# per kernel record: "ordinal corr exact|wrong|null duration"; exact when
# m__a.sum is 1000 + 7 * (corr + 1) (the driver call's id is the runtime
# call's + 1) and m__b.sum twice that
check() {
	python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] != "kernel":
        continue
    m = r["metrics"]
    a, b = m.get("m__a.sum", "absent"), m.get("m__b.sum", "absent")
    want = 1000 + 7 * (r["corr"] + 1)
    if a is None and b is None:
        v = "null"
    elif a == "absent":
        v = "absent"
    else:
        v = "exact" if a == want and b == 2 * want else "wrong"
    d = m.get("gpu__time_duration.sum")
    print(r["ordinal"], r["corr"], v, "dur" if isinstance(d, float) and d > 0 else "nodur")
PY
}
count() { printf '%s\n' "$1" | grep -c " $2 " ; }
M="KGATE_METRICS=m__a.sum,m__b.sum"

# --- attribution between the gaps -----------------------------------------
pm "$M" KGATE_DEBUG=1 "$CT/fake_app" "$COLL" pm 200
is "$rc" 0 "sampling: the program exits 0"
like "$(head -1 "$f")" '"mode":"metrics",.*"engine":"sampling",.*"metrics":\["m__a.sum","m__b.sum","gpu__time_duration.sum"\]' \
	"the header says engine sampling and lists the set with the duration added"
like "$(head -1 "$f")" '"cache_control":"none"' "the header says the engine flushes no cache"
unlike "$out" "flush kernels" "and no flush kernel runs"
c=$(check "$f")
is "$(printf '%s\n' "$c" | wc -l | tr -d ' ')" 200 "200 launches, 200 records"
is "$(count "$c" exact)" 200 "every launch's counters are exactly its kernel's (samples summed between the gaps' midpoints)"
is "$(printf '%s\n' "$c" | grep -c ' dur$')" 200 "every launch has a duration (CUDA events around it)"
like "$(tail -1 "$f")" '"kernels":200,"dropped":0,"errors":0' "footer: no error"
like "$out" "fake-cupti: PM sampling every 10000 ns, hardware buffer 256 MB" "the default interval (10 us) and hardware buffer (256 MB)"
like "$out" "fake-cupti: PM sampling disabled" "sampling is disabled at exit"
unlike "$out" "stopped after the runtime's teardown" \
	"sampling stops before the CUDA runtime's exit handler runs (after it, the stop never returns on a GPU)"
like "$(tail -1 "$f")" '"type":"footer"' "the records file ends with its footer"
like "$err" "device 0 stopped: [0-9]+ samples \(1 without values\), 0 holes, 0 overflows" \
	"the priming sample without values is skipped, nothing lost"

run "$KGATE" ingest --db "$T/pm.db" --commit pm1 --records "$f"
is "$rc" 0 "kgate ingest stores the sampling records"
is "$(sqlite3 "$T/pm.db" "SELECT count(*) FROM samples_named WHERE metric = 'm__a.sum'")" 200 "with every launch's counters"

# the interval and a filter: the launches it leaves out are serialised too
# (their samples stay out of the others' windows), with their duration only
pm "$M" KGATE_PM_INTERVAL=4 KGATE_KERNELS=kA "$CT/fake_app" "$COLL" pm 60
like "$out" "PM sampling every 4000 ns" "KGATE_PM_INTERVAL sets the interval in microseconds"
c=$(check "$f")
is "$(count "$c" exact)" 30 "filter: the 30 launches of kA are exact"
is "$(count "$c" absent)" 30 "filter: the 30 of kB have no counters"
is "$(printf '%s\n' "$c" | grep -c ' dur$')" 60 "filter: and every launch its duration"

pm "$M" KGATE_LAUNCH_SKIP=5 KGATE_LAUNCH_COUNT=10 KGATE_DEBUG=1 "$CT/fake_app" "$COLL" pm 40
c=$(check "$f")
is "$(count "$c" exact)" 10 "launch count: 10 launches sampled"
like "$err" "the launch count is reached; sampling stops" "launch count: sampling stops after the last one"
is "$(printf '%s\n' "$c" | awk '$3 == "exact" { print $1 }' | tr '\n' ' ')" "5 6 7 8 9 10 11 12 13 14 " \
	"launch count: the selected ones are launches 5..14"

# --- memory operations between launches --------------------------------------
# a memset runs on the GPU (a kernel of the driver's) and its instructions
# count; unfenced they land in a neighbouring launch's window (on an H100
# two kernels of the encoder step got 851,968 instructions too many)
pm "$M" FAKE_APP_MEMSET=1 KGATE_DEBUG=1 "$CT/fake_app" "$COLL" pm 200
c=$(check "$f")
is "$(count "$c" exact)" 200 "a memset after every fourth launch: every launch still exact"
like "$err" "PM sampling: [1-9][0-9]* memory operations of the driver fenced" "the driver's memsets and copies are fenced"
is "$(grep -c '"type":"kernel"' "$f")" 200 "the memsets make no records"

# --- the counter data image rolled over -------------------------------------
# DecodeData drops the records a full image has no room for (the stand-in
# does as an H100 did: a hole after each roll-over), so the image is renewed
# before a decode could fill it, once its samples are all taken
pm "$M" KGATE_PM_SAMPLES=256 KGATE_DEBUG=1 "$CT/fake_app" "$COLL" pm 300
c=$(check "$f")
is "$(count "$c" exact)" 300 "an image of 256 samples: every launch still exact"
n=$(printf '%s\n' "$err" | sed -n 's/.* \([0-9]*\) images renewed before a decode could fill them.*/\1/p')
ok "the image was renewed many times (${n:-none}) before a decode could fill it" test "${n:-0}" -ge 5
like "$err" " 0 holes, 0 overflows, 0 image roll-overs" "no decode filled it, nothing was lost"
like "$(tail -1 "$f")" '"errors":0' "renewals lose nothing"
# an image of 16 samples: the backlog bound shrinks to fit it
pm "$M" KGATE_PM_SAMPLES=16 KGATE_DEBUG=1 "$CT/fake_app" "$COLL" pm 100
like "$err" "backlog bound 0.1 ms, the most an image of 16 samples takes" "a tiny image: the backlog bound shrinks to fit it"
ok "and most launches are exact ($(count "$(check "$f")" exact) of 100)" test "$(count "$(check "$f")" exact)" -ge 50

# --- a decoder slower than the samples: launches wait, nothing is lost -----
pm "$M" FAKE_PM_DECODE_US=40 KGATE_PM_BACKLOG_MS=2 KGATE_DEBUG=1 "$CT/fake_app" "$COLL" pm 200
c=$(check "$f")
is "$(count "$c" exact)" 200 "a decoder 4 times slower than the samples: every launch exact"
like "$err" "launch [0-9]+: waited [0-9.]+ ms for the decoder" "launches waited for the decoder (KGATE_PM_BACKLOG_MS)"
like "$err" "[1-9][0-9]* windows ended to let the decoder catch up" "the stop line counts the windows ended"

# the program pauses (launches nothing for 300 ms): the decoder ends the
# window itself, so the idle samples never pile up
pm "$M" FAKE_PM_DECODE_US=30 KGATE_PM_BACKLOG_MS=5 FAKE_APP_IDLE_MS=300 KGATE_DEBUG=1 "$CT/fake_app" "$COLL" pm 100
is "$(count "$(check "$f")" exact)" 100 "a pause with a slow decoder: every launch exact"
like "$err" "windows ended to let the decoder catch up \([0-9.]+ ms waited by launches\), [1-9][0-9]* more while idle" "the decoder ended windows while the program paused"

# --- a stop that fails: sampling goes on, and the process still ends --------
# (the drain after a stop decodes until the samples stop coming; after a
# failed stop they never do, and a decoder slower than the samples never
# catches up: the exit's stop, the only one here, fails)
pm "$M" FAKE_PM_STOP_FAIL=1 FAKE_PM_DECODE_US=40 KGATE_PM_BACKLOG_MS=60000 timeout 60 "$CT/fake_app" "$COLL" pm 100
is "$rc" 0 "a failed stop with a slow decoder: the process ends, exit 0"
like "$(cat "$f")" '"message":"cuptiPmSamplingStop failed' "the failure is an error record"
like "$(tail -1 "$f")" '"type":"footer"' "and the records file ends with its footer"

# --- lost samples: no counters, never wrong ones ----------------------------
pm "$M" FAKE_PM_OVERFLOW=50 FAKE_PM_DECODE_US=20 "$CT/fake_app" "$COLL" pm 200
c=$(check "$f")
is "$rc" 0 "an overflowed hardware buffer: the program exits 0"
like "$(cat "$f")" '"code":"samples_lost","message":"PM sampling lost samples on device 0 \(the hardware buffer overflowed' \
	"an error record says the hardware buffer overflowed"
ok "some launches have no counters ($(count "$c" null))" test "$(count "$c" null)" -ge 1
is "$(count "$c" wrong)" 0 "no launch has wrong counters"
is "$(( $(count "$c" null) + $(count "$c" exact) ))" 200 "the others are exact"
like "$(cat "$f")" '"code":"samples_lost","message":"PM sampling on device 0: [0-9]+ launches have no counters' \
	"a closing error record counts the launches without counters"

# the decode fails with out of memory (the hardware buffer overflowed): the
# windows it held lose their counters, and the next window starts afresh, so
# sampling goes on (it used to stop for good; on an H100 a run's last launch
# then went without counters and without a word)
pm "$M" FAKE_PM_OOM=50 FAKE_PM_DECODE_US=20 KGATE_DEBUG=1 "$CT/fake_app" "$COLL" pm 200
c=$(check "$f")
is "$rc" 0 "a decode out of memory: the program exits 0"
like "$(cat "$f")" '"code":"samples_lost","message":"PM sampling on device 0: the hardware buffer overflowed \(cuptiPmSamplingDecodeData: out of memory\); sampling starts again' \
	"an error record says the buffer overflowed and sampling starts again"
like "$err" "the sampling object made anew after the overflow" \
	"the next window makes the sampling object anew (an H100 refused a start otherwise)"
is "$(count "$c" wrong)" 0 "a decode out of memory: no launch has wrong counters"
ok "some launches have no counters ($(count "$c" null))" test "$(count "$c" null)" -ge 1
is "$(printf '%s\n' "$c" | sort -n | tail -1 | awk '{ print $3 }')" exact "sampling goes on after it: the last launch is exact"
nc=$(tail -1 "$f" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("no_counters"))')
is "$nc" "$(( 200 - $(count "$c" exact) ))" "the footer's no_counters counts every launch without its counters"
like "$(cat "$f")" "\"code\":\"no_counters\",\"message\":\"$nc launches meant to be profiled have no counters" \
	"and an error record at the end says how many"

# sampling that fails for good (a window's stop fails): the launches after it
# are traced without counters, and the footer counts them too
pm "$M" FAKE_PM_STOP_FAIL=1 FAKE_PM_DECODE_US=40 KGATE_PM_BACKLOG_MS=2 timeout 60 "$CT/fake_app" "$COLL" pm 100
c=$(check "$f")
like "$(cat "$f")" '"message":"cuptiPmSamplingStop failed' "a failed window stop: an error record"
nc=$(tail -1 "$f" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("no_counters"))')
ok "launches after it have no counters ($nc)" test "$nc" -ge 1
is "$nc" "$(( 100 - $(count "$c" exact) ))" "the footer's no_counters counts them with the launches written without counters"

pm "$M" FAKE_PM_HOLE=80 FAKE_PM_DECODE_US=20 "$CT/fake_app" "$COLL" pm 200
c=$(check "$f")
like "$(cat "$f")" '"code":"samples_lost","message":"PM sampling lost samples on device 0 \(a hole in the sample times' \
	"a sample missing from the times: an error record"
is "$(printf '%s\n' "$c" | awk '$1 == 79 { print $3 }')" null "a hole: the launch whose kernel lost a sample has no counters"
is "$(count "$c" wrong)" 0 "a hole: no launch has wrong counters"
is "$(( $(count "$c" null) + $(count "$c" exact) ))" 200 "a hole: the others are exact"

# a hole in idle time: on an H100 the test program had 20 holes and every
# launch its exact count; a hole between windows costs no launch, so no error
# record (a warning about nothing); one that reaches into the next launch's
# window costs that launch its counters, and the record says so
pm "$M" FAKE_APP_IDLE_MS=300 FAKE_PM_HOLE_IDLE_MS=100 FAKE_APP_IDLE_MEMSET=1 KGATE_DEBUG=1 "$CT/fake_app" "$COLL" pm 100
c=$(check "$f")
like "$err" "1 holes" "a hole in a pause followed by a memset: the stop line counts it"
is "$(count "$c" exact)" 100 "a hole in a pause followed by a memset: every launch exact"
unlike "$(cat "$f")" '"code":"samples_lost"' "a hole that cost no launch its counters: no error record"
like "$(tail -1 "$f")" '"no_counters":0[,}]' "and the footer counts no launch without counters"
pm "$M" FAKE_APP_IDLE_MS=300 FAKE_PM_HOLE_IDLE_MS=100 "$CT/fake_app" "$COLL" pm 100
c=$(check "$f")
is "$(count "$c" null)" 1 "a hole in a pause before a launch: that launch has no counters"
is "$(count "$c" exact)" 99 "a hole in a pause before a launch: the others exact"
like "$(cat "$f")" '"code":"samples_lost","message":"PM sampling lost samples on device 0 \(a hole in the sample times' \
	"a hole that cost a launch its counters: an error record says why"
# whatever the cause, the end counts the profiled launches without counters
like "$(tail -1 "$f")" '"no_counters":1[,}]' "the footer counts the launch without counters"
like "$(cat "$f")" '"code":"no_counters","message":"1 launch meant to be profiled has no counters' \
	"and an error record at the end says so"

# --- refusal: another process computes on the GPU ---------------------------
pm "$M" NVML_DOUBLE_PROCS=4242:1000000 "$CT/fake_app" "$COLL" pm 20
is "$rc" 0 "another process on the GPU: the program exits 0"
like "$(head -1 "$f")" '"mode":"trace"' "the header says trace"
like "$(cat "$f")" '"code":"gpu_shared","message":"another process \(pid 4242\) computes on device 0: PM sampling counts the whole device, so it is refused' \
	"an error record names the other process"
like "$err" "kgate-collector: another process \(pid 4242\)" "and says so on stderr"
unlike "$out" "PM sampling every" "sampling is never set up"
pm "$M" NVML_DOUBLE_PROCS=$$:10 "$CT/fake_app" "$COLL" only-init
like "$(cat "$f")" '"errors":0' "a process that is not this one is another; this one is not (the check excludes it)"
pm "$M" KGATE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$CT/fake_app" "$COLL" pm 10
like "$(cat "$f")" '"code":"gpu_unchecked","message":"NVML is not available: whether another process computes on device 0 cannot be checked' \
	"without NVML: a warning record, sampling goes on"
is "$(count "$(check "$f")" exact)" 10 "without NVML: the launches are sampled"

# --- settings -------------------------------------------------------------
pm KGATE_ENGINE=fast "$M" "$CT/fake_app" "$COLL" pm 4
like "$(cat "$f")" '"code":"bad_config","message":"KGATE_ENGINE=.fast. is not range or sampling' "a bad KGATE_ENGINE is reported"
unlike "$(head -1 "$f")" '"engine"' "and the Range Profiler collects"
pm "KGATE_METRICS=m__a.sum,m__r.avg.pct_of_peak_sustained_elapsed,m__b.sum" "$CT/fake_app" "$COLL" pm 4
like "$(cat "$f")" '"code":"bad_config","message":"PM sampling sums counters over samples: m__r.avg.pct_of_peak_sustained_elapsed is not a sum and left out' \
	"a metric that is not a sum is left out, with an error record"
is "$(count "$(check "$f")" exact)" 4 "and the sums are sampled"
pm "$CT/fake_app" "$COLL" pm 4
like "$(head -1 "$f")" '"metrics":\["gpu__time_duration.sum","smsp__inst_executed.sum","dram__bytes_read.sum","dram__bytes_write.sum"\]' \
	"without KGATE_METRICS: the sampling default set"
pm "$M" KGATE_PM_INTERVAL=0 "$CT/fake_app" "$COLL" pm 4
like "$(cat "$f")" '"code":"bad_config","message":"KGATE_PM_INTERVAL=.0. is not an integer 1..1000000; using 10' "a bad interval is reported"
pm "$M" FAKE_PM_NOTSUP=1 "$CT/fake_app" "$COLL" pm 4
like "$(cat "$f")" '"code":"not_supported","message":"device 0 does not support PM sampling' "a device without PM sampling: an error record"
like "$(head -1 "$f")" '"mode":"trace"' "and a trace"
pm "KGATE_METRICS=m__a.sum,multi__x.sum" "$CT/fake_app" "$COLL" pm 4
like "$(cat "$f")" '"code":"bad_config","message":"the set is 2 passes for PM sampling' "a multi-pass set is refused"

pm "$M" KGATE_CACHE_CONTROL=all "$CT/fake_app" "$COLL" pm 10
like "$(cat "$f")" '"code":"bad_config","message":"KGATE_CACHE_CONTROL=all: PM sampling does not flush the cache' \
	"KGATE_CACHE_CONTROL=all with sampling: an error record"
like "$(head -1 "$f")" '"engine":"sampling",.*"cache_control":"none"' "the header says none"
unlike "$out" "flush kernels" "no flush kernel runs"
is "$(count "$(check "$f")" exact)" 10 "and the launches are sampled"
pm "$M" KGATE_REPLAY=step "$CT/fake_app" "$COLL" pm 4
like "$(cat "$f")" '"code":"bad_config","message":"PM sampling takes one-pass sets, not step replay' \
	"step replay with sampling is refused"
like "$(head -1 "$f")" '"mode":"trace"' "and a trace is collected"

# --- the suite file: collector: { mode: metrics, engine: sampling } --------
cat >"$T/pm.yaml" <<YAML
version: 1
collector: { mode: metrics, engine: sampling, metrics: [smsp__inst_executed.sum, dram__bytes_read.sum] }
benchmarks:
  - name: pm
    cmd: ["$CT/fake_app", "$COLL", "pm", "30"]
    repeat: 2
    warmup: 0
    env: { LD_LIBRARY_PATH: "$CT", KGATE_NVML_LIBRARY: "$NVML" }
YAML
run env KGATE_COLLECTOR="$COLL" KGATE_CUPTI="$CT/libcupti.so.13" "$KGATE" run -c "$T/pm.yaml" \
	--db "$T/suite.db" --commit s1
is "$rc" 0 "kgate run of a suite with engine: sampling: exit 0"
is "$(sqlite3 "$T/suite.db" "SELECT count(*) FROM samples_named WHERE metric = 'smsp__inst_executed.sum'")" 60 \
	"the sampled counters of both repeats are stored"
sed 's/mode: metrics, //' "$T/pm.yaml" >"$T/pm-trace.yaml"
run "$KGATE" run -c "$T/pm-trace.yaml" --db "$T/suite.db" --commit s2
ok "engine: sampling without mode: metrics is a suite error" test "$rc" -ne 0
like "$err" "'engine: sampling' needs mode: metrics" "and says why"
sed 's/engine: sampling/engine: fast/' "$T/pm.yaml" >"$T/pm-bad.yaml"
run "$KGATE" run -c "$T/pm-bad.yaml" --db "$T/suite.db" --commit s3
like "$err" "engine" "a bad engine name is a suite error"
sed 's/engine: sampling,/engine: sampling, cache_control: all,/' "$T/pm.yaml" >"$T/pm-cache.yaml"
run "$KGATE" run -c "$T/pm-cache.yaml" --db "$T/suite.db" --commit s4
ok "engine: sampling with cache_control: all is a suite error" test "$rc" -ne 0
like "$err" "'engine: sampling' does not flush the cache" "and says why"
sed 's/engine: sampling,/engine: sampling, cache_control: none,/' "$T/pm.yaml" >"$T/pm-nocache.yaml"
run env KGATE_COLLECTOR="$COLL" KGATE_CUPTI="$CT/libcupti.so.13" "$KGATE" run -c "$T/pm-nocache.yaml" \
	--db "$T/suite.db" --commit s5
is "$rc" 0 "engine: sampling with cache_control: none runs"
sed 's/engine: sampling,/engine: sampling, replay: step,/' "$T/pm.yaml" >"$T/pm-step.yaml"
run "$KGATE" run -c "$T/pm-step.yaml" --db "$T/suite.db" --commit s6
ok "engine: sampling with replay: step is a suite error" test "$rc" -ne 0
like "$err" "'replay: step' is for the Range Profiler" "and says why"

done_testing
