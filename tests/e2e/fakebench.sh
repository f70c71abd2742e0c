# fakebench.sh: a TEST DOUBLE of CUDA benchmarks under the collector, for
# the tests of "kgate run" without a GPU (sourced after lib.sh).
#
#   $T/fake      writes a records file where the collector would, with
#                SYNTHETIC records (a made-up "Synthetic GPU") whose values
#                depend only on its settings (FAKE_* below), so that two runs
#                record the same samples
#   suite FILE BENCH...   a suite file; each BENCH is
#                "name|kernels|launches|dur|repeat|extra env yaml"
# KGATE_COLLECTOR and KGATE_CUPTI name empty stand-ins: the double never
# loads them, kgate only passes their paths on.
: > "$T/libkgate-collector.so"
: > "$T/libcupti.so"
export KGATE_COLLECTOR="$T/libkgate-collector.so" KGATE_CUPTI="$T/libcupti.so"

cat > "$T/fake" <<'EOF'
#!/bin/sh
# TEST DOUBLE for a benchmark under the collector: synthetic records only.
# FAKE_KERNELS kernels of FAKE_LAUNCHES launches each, durations from
# FAKE_DUR and the launch, no randomness; FAKE_GPU the device's name;
# FAKE_SLEEP seconds of "work" first.
[ -n "$FAKE_SLEEP" ] && sleep "$FAKE_SLEEP"
f=$(printf '%s' "$KGATE_RECORDS" | sed "s/%p/$$/g")
awk -v pid=$$ -v n="${FAKE_LAUNCHES:-2}" -v k="${FAKE_KERNELS:-1}" -v d="${FAKE_DUR:-1000}" \
    -v gpu="${FAKE_GPU:-Synthetic GPU}" 'BEGIN {
	printf "{\"type\":\"header\",\"format\":1,\"collector\":\"0.1.0\",\"cupti\":130000,"
	printf "\"mode\":\"trace\",\"pid\":%d,\"ppid\":1,\"pass\":0,\"passes\":1,", pid
	printf "\"replay\":\"kernel\",\"argv\":[\"fake\"],\"time\":1764720000,"
	printf "\"devices\":[{\"id\":0,\"name\":\"%s\",\"uuid\":\"GPU-synthetic\",", gpu
	printf "\"chip\":\"SYN0\",\"sms\":4,\"cc\":\"0.0\",\"driver\":99999,\"runtime\":99999}],"
	printf "\"metrics\":[\"gpu__time_duration.sum\"]}\n"
	o = 0
	for (j = 0; j < k; j++)
		for (i = 0; i < n; i++) {
			e = 1000 + d * (j + 1) + 7 * i
			printf "{\"type\":\"kernel\",\"ordinal\":%d,\"name\":\"_Z4kern%dv\",\"device\":0,", o, j
			printf "\"context\":1,\"stream\":7,\"corr\":%d,\"start\":1000,\"end\":%d,", o + 1, e
			printf "\"grid\":[4,1,1],\"block\":[256,1,1],\"regs\":16,\"nvtx\":\"step\"}\n"
			o++
		}
	printf "{\"type\":\"footer\",\"kernels\":%d,\"dropped\":0,\"errors\":0}\n", o
}' > "$f"
exit 0
EOF
chmod +x "$T/fake"

# suite FILE BENCH... : each BENCH is "name|kernels|launches|dur|repeat|extra env"
suite() {
	f=$1; shift
	{
		echo "version: 1"
		echo "benchmarks:"
		for b in "$@"; do
			IFS='|' read -r name k n d rep extra <<EOB
$b
EOB
			echo "  - name: $name"
			echo "    cmd: [\"$T/fake\"]"
			echo "    repeat: ${rep:-2}"
			echo "    warmup: 0"
			echo "    timeout: 20s"
			echo "    env: { FAKE_KERNELS: \"$k\", FAKE_LAUNCHES: \"$n\", FAKE_DUR: \"$d\"$extra }"
		done
	} > "$f"
}
