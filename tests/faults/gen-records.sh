#!/bin/sh
# gen-records.sh N [KERNEL] [BENCH]: a synthetic records file of N kernel
# records on stdout (TEST DATA: a made-up "Synthetic GPU", not GPU data),
# with its footer.  Each record gives 3 metrics plus the launch
# configuration and the duration, so 9 samples per record.
# KERNEL and BENCH default to saxpy-like names; they are written as JSON
# strings as given (the caller escapes them).
n=${1:?usage: gen-records.sh N [KERNEL] [BENCH]}
exec awk -v n="$n" -v kname="${2:-_Z5saxpyifPKfPf}" -v bench="${3:-fake}" 'BEGIN {
	printf "{\"type\":\"header\",\"format\":1,\"collector\":\"0.1.0\",\"cupti\":130000,"
	printf "\"mode\":\"trace\",\"pid\":42,\"ppid\":1,\"pass\":0,\"passes\":1,"
	printf "\"replay\":\"kernel\",\"argv\":[\"%s\"],\"time\":1764720000,", bench
	printf "\"devices\":[{\"id\":0,\"name\":\"Synthetic GPU\",\"uuid\":\"GPU-synthetic\","
	printf "\"chip\":\"SYN0\",\"sms\":4,\"cc\":\"0.0\",\"driver\":99999,\"runtime\":99999}],"
	printf "\"metrics\":[\"gpu__time_duration.sum\"]}\n"
	for (i = 0; i < n; i++) {
		printf "{\"type\":\"kernel\",\"ordinal\":%d,\"name\":\"%s\",\"device\":0,", i, kname
		printf "\"context\":1,\"stream\":7,\"corr\":%d,\"start\":1000,\"end\":%d,", i + 1, 2000 + i % 97
		printf "\"grid\":[4,1,1],\"block\":[256,1,1],\"regs\":16,\"nvtx\":\"step\","
		printf "\"metrics\":{\"dram__bytes.sum\":%d,\"sm__inst_executed.sum\":%d,\"sm__throughput.avg.pct_of_peak_sustained_elapsed\":%.2f}}\n", 4096 + i % 13, 100000 + i % 7, 50 + (i % 10) / 10.0
	}
	printf "{\"type\":\"footer\",\"kernels\":%d,\"dropped\":0,\"errors\":0}\n", n
}'
