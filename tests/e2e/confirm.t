#!/bin/sh
# confirm.t: "kgate compare --confirm" end to end, without a GPU.
#
# The benchmark is a shell TEST DOUBLE writing SYNTHETIC records (five
# launches of FAKE_DUR ns, 1% pid-seeded jitter); with FAKE_SLOW_FILE it is
# 10% slower while that file holds a count above zero (and counts down),
# which plays a transient slowdown: the machine, not the code.  Checked: a
# real slowdown is confirmed, a transient one is cleared, nothing flagged
# means no rounds, the rounds' runs are not stored, and the verdicts say how
# many rounds each took.
. "$(dirname "$0")/lib.sh"

: > "$T/libkgate-collector.so"
: > "$T/libcupti.so"
export KGATE_COLLECTOR="$T/libkgate-collector.so" KGATE_CUPTI="$T/libcupti.so"
cat > "$T/fake" <<'EOS'
#!/bin/sh
# TEST DOUBLE for a benchmark under the collector: synthetic records only.
d=${FAKE_DUR:-100000}
if [ -n "$FAKE_SLOW_FILE" ] && [ -f "$FAKE_SLOW_FILE" ]; then
	left=$(cat "$FAKE_SLOW_FILE")
	if [ "$left" -gt 0 ]; then
		d=$((d + d / 10))
		echo $((left - 1)) > "$FAKE_SLOW_FILE"
	fi
fi
f=$(printf '%s' "$KGATE_RECORDS" | sed "s/%p/$$/g")
awk -v pid="$$" -v d="$d" 'BEGIN {
	srand(pid);
	printf "{\"type\":\"header\",\"format\":1,\"collector\":\"0.1.0\",\"cupti\":130000,"
	printf "\"mode\":\"trace\",\"pid\":%d,\"ppid\":1,\"pass\":0,\"passes\":1,", pid
	printf "\"replay\":\"kernel\",\"argv\":[\"fake\"],\"time\":1764720000,"
	printf "\"devices\":[{\"id\":0,\"name\":\"Synthetic GPU\",\"uuid\":\"GPU-synthetic\","
	printf "\"chip\":\"SYN0\",\"sms\":4,\"cc\":\"0.0\",\"driver\":99999,\"runtime\":99999}],"
	printf "\"metrics\":[\"gpu__time_duration.sum\"]}\n"
	for (i = 0; i < 5; i++) {
		e = 1000 + int(d * (1 + 0.01 * rand()))
		printf "{\"type\":\"kernel\",\"ordinal\":%d,\"name\":\"_Z5saxpyifPKfPf\",\"device\":0,", i
		printf "\"context\":1,\"stream\":7,\"corr\":%d,\"start\":1000,\"end\":%d,", i + 1, e
		printf "\"grid\":[4,1,1],\"block\":[256,1,1],\"regs\":16,\"nvtx\":\"step\"}\n"
	}
	printf "{\"type\":\"footer\",\"kernels\":5,\"dropped\":0,\"errors\":0}\n"
}' > "$f"
EOS
chmod +x "$T/fake"
# side DIR DUR [SLOWFILE]: a suite of one benchmark, 10 repeats, 1 warmup
side() {
	mkdir -p "$1"
	{
		echo "version: 1"
		echo "benchmarks:"
		echo "  - name: slow"
		echo "    cmd: [\"$T/fake\"]"
		echo "    repeat: 10"
		echo "    warmup: 1"
		echo "    env: { FAKE_DUR: \"$2\", FAKE_SLOW_FILE: \"${3:-}\" }"
	} > "$1/kgate.yaml"
}

# --- a real slowdown: confirmed in the first round ---
side "$T/base" 100000
side "$T/head" 110000
run "$KGATE" compare --base-dir "$T/base" --head-dir "$T/head" --db "$T/a.db" --seed 7 --confirm
is "$rc" 1 "a real 10% slowdown still fails"
like "$err" "confirm: round 1 of 3: 1 benchmark" "one round of the flagged benchmark"
unlike "$err" "round 2 of 3" "no second round: settled in the first"
like "$out" "confirmed in 1 round" "the verdict says it took one round"
is "$(sqlite3 "$T/a.db" "SELECT count(*) FROM runs")" 2 "the rounds' runs are not stored"
is "$(sqlite3 "$T/a.db" "SELECT verdict FROM checks")" fail "the outcome stored is the confirmed one"

# --- a transient slowdown: flagged, then cleared ---
echo 11 > "$T/slowcount"      # the warmup and the ten repeats of the screen
side "$T/head" 100000 "$T/slowcount"
run "$KGATE" compare --base-dir "$T/base" --head-dir "$T/head" --db "$T/b.db" --seed 7
is "$rc" 1 "without --confirm the transient slowdown fails"
echo 11 > "$T/slowcount"
run "$KGATE" compare --base-dir "$T/base" --head-dir "$T/head" --db "$T/c.db" --seed 7 --confirm --format json
is "$rc" 0 "with --confirm it is cleared"
like "$out" "within limit in 1 confirmation round \(was FAIL\)" "json: the message says so"
is "$(sqlite3 "$T/c.db" "SELECT verdict FROM checks")" pass "the stored outcome is PASS"
like "$(sqlite3 "$T/c.db" "SELECT message FROM verdicts WHERE metric = 'gpu__time_duration.sum'")" \
	"confirmation round" "the stored verdict row says it was confirmed"

# --- nothing flagged: no rounds ---
side "$T/head" 100000
run "$KGATE" compare --base-dir "$T/base" --head-dir "$T/head" --db "$T/d.db" --seed 7 --confirm
is "$rc" 0 "the same speed passes"
like "$err" "nothing to confirm" "and says there was nothing to confirm"
unlike "$err" "round 1 of" "no round ran"

# --- options ---
run "$KGATE" compare --base-dir "$T/base" --head-dir "$T/head" --db "$T/e.db" --confirm-rounds 0
is "$rc" 2 "--confirm-rounds 0 is a usage error"
like "$err" "from 1 to 20" "and says the range"
run "$KGATE" compare --base-dir "$T/base" --head-dir "$T/head" --db "$T/e.db" --confirm-budget soon
is "$rc" 2 "--confirm-budget needs a duration"
done_testing
