#!/bin/sh
# kname.t: one kernel identity across sources (src/kname.c).  The same
# kernels recorded by kgate's collector (mangled names, NVTX paths) and
# exported by Nsight Compute (mangled, demangled in ncu's own spelling, or
# bare function names; no NVTX paths) compare with no MISSING and no NEW; the pairing of ncu's demangled names gives the very
# verdicts of its mangled names.  Inputs: the real H200 recordings of
# tests/fixtures/h200/ (suite/trace/base/ and ncu/ of the same benchmarks,
# torch/ of one PyTorch training step) and the two XPlacer gaussian exports
# of tests/fixtures/ncu/ (function names against demangled names).
. "$(dirname "$0")/lib.sh"

H="$FIX/h200"
DB="$T/k.db"

# --- the benchmark suite: collector records against ncu's raw and details pages ---
rec="" raw="" det=""
for v in matmul_tiled reduction_atomic reduction_tree stream_triad tail_wave tail_over_one_wave \
	 transpose_naive transpose_tiled; do
	rec="$rec --benchmark $v $(ls "$H/suite/trace/base/$v".*.jsonl | tr '\n' ' ')"
	raw="$raw --benchmark $v $H/ncu/$v.raw.csv"
	det="$det --benchmark $v $H/ncu/$v.details.csv"
done
"$KGATE" ingest --db "$DB" --commit rec $rec 2>/dev/null
"$KGATE" ingest --db "$DB" --commit raw $raw 2>/dev/null
"$KGATE" ingest --db "$DB" --commit det --gpu "NVIDIA H200" $det 2>/dev/null
is "$(sqlite3 "$DB" "SELECT count(*) FROM runs")" 3 "the suite's records and ncu pages stored"
q_paths() { sqlite3 "$DB" "SELECT count(DISTINCT n.path) FROM samples s JOIN nvtx n ON n.id = s.nvtx JOIN runs r ON r.id = s.run WHERE r.commit_sha = '$1' AND n.path <> ''"; }
ok "the collector's records carry NVTX paths" test "$(q_paths rec)" -gt 0
is "$(q_paths raw)" 0 "ncu's export carries none"
for c in "raw rec" "det rec"; do
	set -- $c
	run "$KGATE" check --db "$DB" --commit "$1" --baseline "$2" --format json
	like "$out" '"new": 0,' "$1 against $2: no NEW"
	like "$out" '"missing": 0,' "$1 against $2: no MISSING"
	like "$out" '"benchmark": "transpose_tiled"' "$1 against $2: the kernels are compared"
done

# --- a PyTorch step: the collector's records against ncu's three kernel name bases ---
"$KGATE" ingest --db "$DB" --commit trec --benchmark torch "$H"/torch/metrics1.*.jsonl 2>/dev/null
for b in mangled demangled function; do
	"$KGATE" ingest --db "$DB" --commit "t$b" --benchmark torch "$H/torch/ncu1.$b.csv" 2>/dev/null
	run "$KGATE" check --db "$DB" --commit "t$b" --baseline trec --format json
	printf '%s\n' "$out" > "$T/$b.json"
	like "$out" '"new": 0,' "ncu --print-kernel-base $b against the collector: no NEW"
	like "$out" '"missing": 0,' "ncu --print-kernel-base $b against the collector: no MISSING"
done
verdicts() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("\n".join(sorted("%s %s %s" % (r["kernel"], r["metric"], r["verdict"]) for r in d["results"])))' "$1"
}
is "$(verdicts "$T/demangled.json")" "$(verdicts "$T/mangled.json")" \
	"ncu's demangled spelling pairs each kernel as its mangled name does (the same verdicts, kernel by kernel)"
is "$(python3 -c 'import json,sys; print(len({r["kernel"] for r in json.load(open(sys.argv[1]))["results"]}))' "$T/mangled.json")" \
	"$(sqlite3 "$DB" "SELECT count(DISTINCT k.mangled) FROM samples s JOIN kernels k ON k.id = s.kernel JOIN runs r ON r.id = s.run WHERE r.commit_sha = 'trec'")" \
	"every kernel of the step compared"

# --- XPlacer's gaussian: ncu function names against demangled names (2020, V100) ---
X="$FIX/ncu"
"$KGATE" ingest --db "$DB" --commit xf --benchmark gaussian "$X/xplacer_2020_lassen_v100_gaussian_matrix3.log" 2>/dev/null
"$KGATE" ingest --db "$DB" --commit xd --benchmark gaussian "$X/xplacer_2020_aws_v100_gaussian_matrix3.log" 2>/dev/null
is "$(sqlite3 "$DB" "SELECT group_concat(m) FROM (SELECT DISTINCT k.mangled AS m FROM samples s JOIN kernels k ON k.id = s.kernel JOIN runs r ON r.id = s.run WHERE r.commit_sha IN ('xf', 'xd') ORDER BY m)")" \
	"Fan2,Fan2(float*, float*, float*, int, int, int)" "one export names the kernel Fan2, the other with its parameters"
run "$KGATE" check --db "$DB" --commit xd --baseline xf --format json
like "$out" '"new": 0,' "function against demangled: no NEW"
like "$out" '"missing": 0,' "function against demangled: no MISSING"
like "$out" '"passed": [1-9]' "the kernel is compared"

# --- --gpu: a details page alone names no GPU; --gpu names it ---
DB2="$T/gpu.db"
"$KGATE" ingest --db "$DB2" --commit rec $rec 2>/dev/null
"$KGATE" ingest --db "$DB2" --commit det0 $det 2>/dev/null
run "$KGATE" check --db "$DB2" --commit det0 --baseline rec --format json
is "$rc" 2 "a details page alone does not meet the H200 runs"
run "$KGATE" ingest --db "$DB2" --commit raw2 --gpu "NVIDIA A100" $raw
is "$rc" 2 "--gpu naming another GPU than the export: exit 2"
like "$err" "--gpu 'NVIDIA A100': the inputs were recorded on NVIDIA H200" "and says which"
is "$(sqlite3 "$DB2" "SELECT count(*) FROM runs WHERE commit_sha LIKE 'raw2%'")" 0 "nothing stored"

done_testing
