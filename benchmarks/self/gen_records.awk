# gen_records.awk: a synthetic records file for kgate's own benchmarks (not
# GPU data): N kernel records over 20 kernel names, each with 5 metrics, so
# 5 samples per record.  With csv=FILE it also writes the same samples as
# CSV rows of integer ids (run, benchmark, nvtx, kernel, metric, repeat,
# ordinal, value) for the sqlite3 .import anchor.
#   awk -v n=200000 -v csv=rows.csv -f gen_records.awk > records.jsonl
BEGIN {
	srand(1)
	printf "{\"type\":\"header\",\"format\":1,\"collector\":\"bench\",\"cupti\":0,\"mode\":\"trace\",\"pid\":1,\"ppid\":0,\"pass\":0,\"passes\":1,\"replay\":\"kernel\",\"argv\":[\"bench\"],\"time\":0,\"devices\":[{\"id\":0,\"name\":\"Synthetic bench GPU\",\"uuid\":\"GPU-bench\",\"chip\":\"SYN0\",\"sms\":1,\"cc\":\"0.0\",\"driver\":0,\"runtime\":0}],\"metrics\":[]}\n"
	t = 1000000
	for (i = 0; i < n; i++) {
		k = i % 20
		d = 3000 + int(rand() * 300)
		thr = 30 + rand() * 10
		printf "{\"type\":\"kernel\",\"ordinal\":%d,\"name\":\"_Z7kernel%dPKfPfi\",\"device\":0,\"context\":1,\"stream\":7,\"corr\":%d,\"start\":%d,\"end\":%d,\"grid\":[%d,1,1],\"block\":[256,1,1],\"regs\":32,\"nvtx\":\"step/forward\",\"metrics\":{\"gpu__time_duration.sum\":%d,\"sm__throughput.avg.pct_of_peak_sustained_elapsed\":%.2f,\"launch__grid_size\":%d,\"launch__block_size\":256,\"launch__registers_per_thread\":32}}\n", i, k, i, t, t + d, 1024 + k, d, thr, 1024 + k
		if (csv != "") {
			printf "1,1,1,%d,1,0,%d,%d\n1,1,1,%d,2,0,%d,%.2f\n1,1,1,%d,3,0,%d,%d\n1,1,1,%d,4,0,%d,256\n1,1,1,%d,5,0,%d,32\n", k + 1, i, d, k + 1, i, thr, k + 1, i, 1024 + k, k + 1, i, k + 1, i > csv
		}
		t += d + 1000
	}
	printf "{\"type\":\"footer\",\"kernels\":%d,\"dropped\":0,\"errors\":0}\n", n
}
