#!/bin/sh
# gpustate.t: what the GPU was doing, recorded with every run, without a GPU.
#
# NVML is the SYNTHETIC stand-in tests/nvml/nvml_double.c (its clocks,
# reasons and processes come from NVML_DOUBLE_* variables set here), loaded
# through KGATE_NVML_LIBRARY; the benchmark is a shell TEST DOUBLE writing
# synthetic records.  Checked: the state is stored per benchmark and shown
# by "kgate stats --report gpu_state"; NVML absent or failing changes
# nothing but says "not recorded"; check warns, naming the benchmark, when
# a side was throttled, shared the GPU or ran under other clocks;
# require_idle_gpu refuses while another process computes, and runs once
# it ends; the clock view gives a time change in SM cycles (from
# sm__cycles_elapsed.max when measured, else from the recorded clocks).
. "$(dirname "$0")/lib.sh"

DOUBLE="$KGATE_BUILD/tests/libnvml-double.so"
DB="$T/k.db"
: > "$T/libkgate-collector.so"
: > "$T/libcupti.so"
export KGATE_COLLECTOR="$T/libkgate-collector.so" KGATE_CUPTI="$T/libcupti.so"
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
	s=${FAKE_SCALE:-100}
	for i in 0 1 2 3 4 5 6 7; do
		d=$(( (1000 + i) * s / 100 ))
		printf '{"type":"kernel","ordinal":%d,"name":"_Z5saxpyifPKfPf","device":0,' $i
		printf '"context":1,"stream":7,"corr":%d,"start":1000,"end":%d,' $((i + 1)) $((1000 + d))
		printf '"grid":[4,1,1],"block":[256,1,1],"regs":16,"nvtx":"step"'
		[ -n "$FAKE_CYCLES" ] && printf ',"metrics":{"gpu__time_duration.sum":%d,"sm__cycles_elapsed.max":%d}' \
			$d $((FAKE_CYCLES + i))
		printf '}\n'
	done
	printf '{"type":"footer","kernels":8,"dropped":0,"errors":0}\n'
} > "$f"
EOS
chmod +x "$T/fake"
suite() { # suite FILE [extra top-level yaml]
	{
		echo "version: 1"
		[ -n "${2:-}" ] && printf '%s\n' "$2"
		echo "benchmarks:"
		echo "  - { name: alpha, cmd: [\"$T/fake\"], repeat: 3, warmup: 0 }"
	} > "$1"
}
suite "$T/suite.yaml"
unset NVML_DOUBLE_PROCS NVML_DOUBLE_EVENTS NVML_DOUBLE_INIT NVML_DOUBLE_APP_SM

# --- recorded and shown ---
export KGATE_NVML_LIBRARY="$DOUBLE"
run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit c1 --branch main
is "$rc" 0 "a run with NVML"
run "$KGATE" stats --db "$DB" --commit c1 --report gpu_state
is "$rc" 0 "stats --report gpu_state"
like "$out" "^alpha: SM 1980 MHz \(max 1980\), up to 35 C, up to 75 W of 700 W$" \
	"the state of alpha's processes"
unlike "$out" "seen:" "nothing worrying on an idle GPU"
run "$KGATE" stats --db "$DB" --commit c1 --report gpu_state --format json
like "$out" '"processes": 3' "json: three processes"
like "$out" '"sm_mhz_max": 1980' "json: the clock"
run "$KGATE" stats --db "$DB" --commit c1 --report gpu_state --format csv
like "$out" '^alpha,3,3,' "csv: processes and recorded"

# --- a second run, throttled and shared: check warns ---
NVML_DOUBLE_EVENTS=0x4 NVML_DOUBLE_PROCS=4242:1048576 \
	run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit c2 --branch main
is "$rc" 0 "a run on a busy, throttled GPU still runs"
run "$KGATE" stats --db "$DB" --commit c2 --report gpu_state
like "$out" "seen: clocks slowed \(sw_power_cap\); 1 other process computing \(pid 4242\)" \
	"stats names the throttle reason and the other process"
run "$KGATE" check --db "$DB" --commit c2 --baseline c1
like "$err" "benchmark 'alpha', head run 2: clocks slowed \(sw_power_cap\); 1 other process computing \(pid 4242\)" \
	"check warns about the head run's GPU, naming the benchmark"
unlike "$err" "different clocks" "same clocks: no clock warning"

# --- other clocks ---
NVML_DOUBLE_APP_SM=1410 NVML_DOUBLE_SM=1410 \
	run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit c3 --branch main
run "$KGATE" check --db "$DB" --commit c3 --baseline c1
like "$err" "benchmark 'alpha': head run 3 and baseline run 1 ran under different clocks \(application clocks differ: SM 1410 MHz" \
	"check warns when the sides ran under different clocks"

# --- the clock view ---
# 10% slower at a 10% lower SM clock: the same work in cycles.
NVML_DOUBLE_SM=1800 FAKE_SCALE=110 \
	run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit c3b --branch main
run "$KGATE" check --db "$DB" --commit c3b --baseline c1 --format json
is "$rc" 1 "a 10% slower time fails"
like "$out" "in SM cycles [+-]0\.[0-9]+% \(the clock changed, not the work\)" \
	"the message gives the change in cycles from the recorded clocks"
like "$out" '"cycle_source": "recorded SM clock"' "json: where the cycles came from"
# Measured cycles win: 10% more cycles is more work, whatever the clock.
FAKE_CYCLES=5000 run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit m1 --branch main
FAKE_CYCLES=5500 FAKE_SCALE=110 run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit m2 --branch main
run "$KGATE" check --db "$DB" --commit m2 --baseline m1 --format json
like "$out" "in SM cycles \+9\.[0-9]+%\"" "with sm__cycles_elapsed.max: the measured cycles"
like "$out" '"cycle_source": "sm__cycles_elapsed.max"' "json: from the counter"
unlike "$out" "the clock changed" "more cycles: not the clock"

# --- NVML absent, or failing: nothing else changes ---
KGATE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
	run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit c4 --branch main
is "$rc" 0 "no NVML: the run runs"
run "$KGATE" stats --db "$DB" --commit c4 --report gpu_state
like "$out" "^alpha: not recorded: NVML not loaded" "no NVML: not recorded, and why"
NVML_DOUBLE_INIT=fail run "$KGATE" run -c "$T/suite.yaml" --db "$DB" --commit c5 --branch main
is "$rc" 0 "NVML that fails to start: the run runs"
run "$KGATE" stats --db "$DB" --commit c5 --report gpu_state
like "$out" "^alpha: not recorded: NVML did not start: Unknown Error" "NVML failing: not recorded, and why"
run "$KGATE" check --db "$DB" --commit c5 --baseline c4
unlike "$err" "timings may not compare|different clocks" "no state: no warning"

# --- require_idle_gpu ---
suite "$T/idle.yaml" "require_idle_gpu: true
idle_wait: 1s"
before=$(sqlite3 "$DB" "SELECT count(*) FROM runs")
NVML_DOUBLE_PROCS=777:1 run "$KGATE" run -c "$T/idle.yaml" --db "$DB" --commit c6 --branch main
is "$rc" 3 "require_idle_gpu: another process computing is refused (exit 3)"
like "$err" "GPU GPU-00000000-0000-0000-0000-000000000000 is not idle: 1 other process computing \(pid 777\); require_idle_gpu refuses to run benchmark 'alpha'" \
	"the refusal names the GPU, the process and the benchmark"
is "$(sqlite3 "$DB" "SELECT count(*) FROM runs")" "$before" "nothing stored"
# The other process ends while kgate waits.
suite "$T/idle.yaml" "require_idle_gpu: true
idle_wait: 60s"
echo "888:1" > "$T/procs"
( sleep 2; rm -f "$T/procs" ) &
NVML_DOUBLE_PROCS_FILE="$T/procs" run "$KGATE" run -c "$T/idle.yaml" --db "$DB" --commit c7 --branch main
wait
is "$rc" 0 "require_idle_gpu: runs once the other process ends"
like "$err" "waiting up to 60 s for it to end" "it said it was waiting"
KGATE_NVML_LIBRARY=/nonexistent run "$KGATE" run -c "$T/idle.yaml" --db "$DB" --commit c8 --branch main
is "$rc" 0 "require_idle_gpu without NVML: runs"
like "$err" "require_idle_gpu: cannot tell whether the GPU is idle \(NVML not loaded" \
	"and says it cannot tell"
done_testing
