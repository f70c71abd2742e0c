#!/usr/bin/env bash
# test-gpu.sh: the collector against ncu on a real GPU (`make test-gpu`).
#
#   scripts/test-gpu.sh [OUTDIR]        (default: $OUT, else ./test-gpu-out)
#
# Needs: an NVIDIA GPU, CUDA 13 (nvcc, libcupti) under $CUDA (/usr/local/cuda),
# ncu on PATH or in $CUDA/bin, python3 (PyTorch for the torch step), and
# build/kgate plus build/libkgate-collector.so (built on any machine: `make`).
# It builds the test programs of tests/gpu/ with nvcc when build/gpu/ lacks
# them, then:
#   1. runs tests/gpu/kg_gpu_app under the collector in trace mode, checks
#      the records file and every kernel's NVTX path;
#   2. runs it in metrics mode (the default, single-pass metric set: a
#      user-replay session; and with KGATE_SESSION=0, kernel replay) and with
#      the default set plus sm__throughput (multi-pass kernel replay), also
#      with its two threads launching at once (20 runs of the single-pass set,
#      3 of the multi-pass one);
#   3. runs it under ncu with the same metrics (--clock-control none);
#   4. compares per launch: instructions equal, DRAM bytes within 0.1%,
#      duration medians within 3%, the same kernels;
#   5. runs tests/gpu/torch_step.py in trace mode: every kernel has a path;
#      then larger (KGATE_GPU_TORCH_ARGS, default 5 steps, batch 8192, width
#      1024: data beyond the L2) in metrics mode and under ncu with the same
#      metrics, twice each, compared as in 4 and each tool with itself;
#   4b. the test program with the collector's default cache control (all)
#      against ncu's default (--cache-control all); 4c. under PM sampling
#      (KGATE_ENGINE=sampling), against ncu without the flush;
#   5b. the PyTorch step with cache control all against ncu's default, twice,
#      DRAM bytes held to ncu's own run-to-run agreement; 5c. its 11 steps
#      under step replay of the multi-pass set (KGATE_REPLAY=step);
#   6. failure modes: the CUPTI subscription already taken, a bad metric
#      name, the app started by ncu with the collector set: an error record
#      (or no file) and exit status 0 every time;
#   7. ingests every records file with kgate ingest into a scratch database,
#      and checks the kernel names kgate stored against ncu's;
#   8. prints a PASS/FAIL table; everything (records files, ncu reports and
#      CSV, logs, results.tsv) stays under OUTDIR.
# Each step reports its own failure and the script goes on; the exit status
# is 1 when any check failed, 0 otherwise.  SKIP_APP=1 leaves out the steps
# of the test program (1-4 and 6), for a run of the PyTorch steps alone.
if [ -z "${BASH_VERSION:-}" ]; then
	exec bash "$0" "$@"
fi
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTDIR=${1:-${OUT:-$PWD/test-gpu-out}}
mkdir -p "$OUTDIR" || { echo "test-gpu: cannot create '$OUTDIR'" >&2; exit 2; }
OUTDIR=$(cd "$OUTDIR" && pwd)
BUILD=${KGATE_BUILD:-$ROOT/build}
KGATE=${KGATE:-$BUILD/kgate}
COLL=${KGATE_COLLECTOR:-$BUILD/libkgate-collector.so}
CUDA=${CUDA:-/usr/local/cuda}
CUPTI_DIR=$CUDA/targets/x86_64-linux/lib
NVCC=${NVCC:-$CUDA/bin/nvcc}
NCU=${NCU:-$(command -v ncu || echo "$CUDA/bin/ncu")}
PY=${PYTHON:-python3}
COMPARE=$ROOT/tests/gpu/compare.py
APP=$BUILD/gpu/kg_gpu_app
HOLDER=$BUILD/gpu/cupti_holder
ITERS=${KGATE_GPU_ITERS:-5}
N=${KGATE_GPU_N:-67108864}
RESULTS=$OUTDIR/results.tsv
LOG=$OUTDIR/test-gpu.log
: >"$RESULTS"
: >"$LOG"
export LD_LIBRARY_PATH="$CUPTI_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

log() { printf '%s\n' "$*" | tee -a "$LOG" >&2; }
# result CHECK VERDICT DETAIL
result() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$RESULTS"; log "[$2] $1: $3"; }
# results from compare.py (already CHECK<TAB>VERDICT<TAB>DETAIL)
collect() {
	local line
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		printf '%s\n' "$line" >>"$RESULTS"
		log "[$(printf '%s' "$line" | cut -f2)] $(printf '%s' "$line" | cut -f1): $(printf '%s' "$line" | cut -f3-)"
	done
}
# the one records file a run wrote (pattern under OUTDIR)
one_file() {
	local f
	for f in "$OUTDIR"/$1; do
		[ -f "$f" ] && { printf '%s\n' "$f"; return 0; }
	done
	return 1
}
# ncu_exports REPORT BASE: ncu's raw page of REPORT as CSV, once for each way
# of printing kernel names, into BASE_mangled.csv, BASE_demangled.csv and
# BASE_function.csv (the same launch IDs in each); 0 when all three worked
ncu_exports() {
	local kb
	for kb in mangled demangled function; do
		"$NCU" --import "$1" --csv --page raw --print-units base --print-kernel-base $kb \
			>"${2}_$kb.csv" 2>>"${2}-import.stderr" || return 1
	done
}
# ncu_report TAG CACHE METRICS CMD...: CMD under ncu (--cache-control CACHE),
# its report OUTDIR/TAG.ncu-rep and the exports OUTDIR/TAG_*.csv; 0 when all
# worked
ncu_report() {
	local tag=$1 cache=$2 metrics=$3
	shift 3
	rm -f "$OUTDIR/$tag.ncu-rep"
	"$NCU" --clock-control none --cache-control "$cache" --metrics "$metrics" --force-overwrite \
		-o "$OUTDIR/$tag" "$@" >"$OUTDIR/$tag.stdout" 2>"$OUTDIR/$tag.stderr" &&
		ncu_exports "$OUTDIR/$tag.ncu-rep" "$OUTDIR/$tag"
}
# under_collector MODE TAG CMD...: run CMD with the collector; sets RC
under_collector() {
	local mode=$1 tag=$2
	shift 2
	rm -f "$OUTDIR/$tag".*.jsonl
	# no cache flush: the ncu runs compared against use --cache-control none
	# (benchmarks/self/gpu/cache_step.sh compares the flush with ncu's)
	env CUDA_INJECTION64_PATH="$COLL" NVTX_INJECTION64_PATH="$COLL" KGATE_CACHE_CONTROL=none \
		KGATE_MODE="$mode" KGATE_RECORDS="$OUTDIR/$tag.%p.jsonl" "$@" \
		>"$OUTDIR/$tag.stdout" 2>"$OUTDIR/$tag.stderr"
	RC=$?
	log "ran ($mode) $*: exit $RC, stderr in $tag.stderr"
}

log "test-gpu: output in $OUTDIR"
log "collector $COLL; kgate $KGATE; CUDA $CUDA; ncu $NCU"
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader >"$OUTDIR/nvidia-smi.txt" 2>&1
log "GPU: $(cat "$OUTDIR/nvidia-smi.txt")"
for f in "$COLL" "$KGATE"; do
	[ -e "$f" ] || result "prerequisite $f" FAIL "missing (run make first)"
done
"$NCU" --version >"$OUTDIR/ncu-version.txt" 2>&1 || result "prerequisite ncu" FAIL "$NCU does not run"

DEFAULT=$("$PY" - "$COLL" <<'PYEOF'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
f = lib.kgate_metrics_default
f.restype = ctypes.POINTER(ctypes.c_char_p)
p = f()
names = []
i = 0
while p[i]:
    names.append(p[i].decode())
    i += 1
print(",".join(names))
PYEOF
)
if [ -z "$DEFAULT" ]; then
	result "default metric set" FAIL "cannot read kgate_metrics_default from $COLL"
	DEFAULT="gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum"
fi
log "default metric set: $DEFAULT"
MULTI="$DEFAULT,sm__throughput.avg.pct_of_peak_sustained_elapsed"
EXPECT="saxpy=step/forward:$ITERS,attention=step/forward/attention:$ITERS,strided=step/backward:$ITERS,scale=worker:$ITERS,graph_k=graph:2,tail=:1"

if [ -z "${SKIP_APP:-}" ]; then
# ---- 1. build the test programs ------------------------------------------
mkdir -p "$BUILD/gpu"
if [ ! -x "$APP" ] || [ "$ROOT/tests/gpu/kg_gpu_app.cu" -nt "$APP" ]; then
	if "$NVCC" -O2 -arch=sm_90 -lineinfo -o "$APP" "$ROOT/tests/gpu/kg_gpu_app.cu" -ldl \
		>"$OUTDIR/build-app.log" 2>&1; then
		result "build kg_gpu_app" PASS "$APP"
	else
		result "build kg_gpu_app" FAIL "see build-app.log"
	fi
fi
if [ ! -x "$HOLDER" ] || [ "$ROOT/tests/gpu/cupti_holder.c" -nt "$HOLDER" ]; then
	if "$NVCC" -O2 -o "$HOLDER" "$ROOT/tests/gpu/cupti_holder.c" -I"$CUDA/include" \
		-L"$CUPTI_DIR" -L"$CUPTI_DIR/stubs" -lcupti -lcuda -Xlinker -rpath -Xlinker "$CUPTI_DIR" \
		>"$OUTDIR/build-holder.log" 2>&1; then
		result "build cupti_holder" PASS "$HOLDER"
	else
		result "build cupti_holder" FAIL "see build-holder.log"
	fi
fi
APPARGS=(--n "$N" --iters "$ITERS" --serial)

# ---- 1b. the program alone, for its exit status and time --------------------
start=$(date +%s%N)
"$APP" "${APPARGS[@]}" >"$OUTDIR/plain.stdout" 2>"$OUTDIR/plain.stderr"
rc=$?
plain_ms=$((($(date +%s%N) - start) / 1000000))
result "app runs without the collector" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" "exit $rc, ${plain_ms} ms"

# ---- 2. trace and metrics mode -------------------------------------------
start=$(date +%s%N)
under_collector trace trace "$APP" "${APPARGS[@]}"
trace_ms=$((($(date +%s%N) - start) / 1000000))
result "trace mode: app exits 0" "$([ $RC -eq 0 ] && echo PASS || echo FAIL)" "exit $RC, ${trace_ms} ms (plain ${plain_ms} ms)"
TRACE=$(one_file 'trace.*.jsonl') || TRACE=
if [ -n "$TRACE" ]; then
	"$PY" "$COMPARE" trace "$TRACE" --expect "$EXPECT" 2>>"$LOG" | collect
else
	result "trace: records file" FAIL "none written; see trace.stderr"
fi

under_collector metrics metrics env KGATE_METRICS="$DEFAULT" "$APP" "${APPARGS[@]}"
result "metrics mode: app exits 0" "$([ $RC -eq 0 ] && echo PASS || echo FAIL)" "exit $RC"
METRICS=$(one_file 'metrics.*.jsonl') || METRICS=
[ -n "$METRICS" ] || result "metrics: records file" FAIL "none written; see metrics.stderr"

# a one-pass set is collected in one user-replay session; KGATE_SESSION=0
# keeps kernel replay for it (compared with ncu below as well)
if [ -n "$METRICS" ] && head -1 "$METRICS" | grep -q '"replay":"user"'; then
	result "metrics mode, one-pass set: a user-replay session" PASS "header says replay user"
else
	result "metrics mode, one-pass set: a user-replay session" FAIL "header: $( [ -n "$METRICS" ] && head -1 "$METRICS" | grep -o '"replay":"[a-z]*"')"
fi
under_collector metrics kreplay env KGATE_SESSION=0 KGATE_METRICS="$DEFAULT" "$APP" "${APPARGS[@]}"
result "metrics mode, one-pass set with kernel replay: app exits 0" "$([ $RC -eq 0 ] && echo PASS || echo FAIL)" "exit $RC"
KREPLAY=$(one_file 'kreplay.*.jsonl') || KREPLAY=

under_collector metrics multi env KGATE_METRICS="$MULTI" "$APP" "${APPARGS[@]}"
result "metrics mode, multi-pass set: app exits 0" "$([ $RC -eq 0 ] && echo PASS || echo FAIL)" "exit $RC"
MULTIREC=$(one_file 'multi.*.jsonl') || MULTIREC=

# two threads launching profiled kernels at once (no --serial), a stream
# capture after: 20 runs of the single-pass set (KGATE_GPU_CONC_RUNS) and 3
# of the multi-pass set; every one exits 0 and every launch outside the
# graph has values
conc_ok=0
conc_all=0
conc_detail=
for set in DEFAULT MULTI; do
	runs=3
	[ "$set" = DEFAULT ] && runs=${KGATE_GPU_CONC_RUNS:-20}
	for r in $(seq 1 "$runs"); do
		conc_all=$((conc_all + 1))
		under_collector metrics "conc$set$r" env KGATE_METRICS="${!set}" "$APP" --n "$N" --iters "$ITERS"
		f=$(one_file "conc$set$r.*.jsonl") || f=
		got=$([ -n "$f" ] && grep '"type":"kernel"' "$f" | grep -v '"graph":' | grep -c '"smsp__inst_executed.sum":[0-9]')
		all=$([ -n "$f" ] && grep '"type":"kernel"' "$f" | grep -vc '"graph":')
		[ "$RC" -eq 0 ] && [ -n "$f" ] && [ "$got" = "$all" ] && conc_ok=$((conc_ok + 1))
		conc_detail="$conc_detail ${set,,}$r:exit $RC ${got:-0}/${all:-0}"
	done
done
result "metrics mode, two threads at once: exit 0, every launch profiled" \
	"$([ $conc_ok -eq $conc_all ] && echo PASS || echo FAIL)" "$conc_ok of $conc_all runs:$conc_detail"

# application replay: one run per single-pass group
passes=
for pass in 0 1 2 3 4 5 6 7 8 9; do
	under_collector metrics "app$pass" env KGATE_METRICS="$MULTI" KGATE_REPLAY=application \
		KGATE_PASS="$pass" "$APP" "${APPARGS[@]}"
	f=$(one_file "app$pass.*.jsonl") || break
	passes=$("$PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["passes"])' "$f" 2>/dev/null)
	[ -n "$passes" ] && [ $((pass + 1)) -ge "$passes" ] && break
done
result "application replay: passes" "$([ -n "$passes" ] && echo PASS || echo FAIL)" \
	"${passes:-?} single-pass groups for the multi-pass set"

# ---- 3. ncu --------------------------------------------------------------
NCUCSV=$OUTDIR/ncu_raw_mangled.csv
rm -f "$OUTDIR/ncu.ncu-rep"
if "$NCU" --clock-control none --cache-control none --metrics "$MULTI" --force-overwrite \
	-o "$OUTDIR/ncu" "$APP" "${APPARGS[@]}" >"$OUTDIR/ncu.stdout" 2>"$OUTDIR/ncu.stderr" &&
	ncu_exports "$OUTDIR/ncu.ncu-rep" "$OUTDIR/ncu_raw"; then
	result "ncu run" PASS "$(grep -c . "$NCUCSV") CSV lines in ncu_raw_mangled.csv"
else
	result "ncu run" FAIL "see ncu.stdout / ncu.stderr"
	NCUCSV=
fi

# ---- 4. compare ----------------------------------------------------------
if [ -n "$METRICS" ] && [ -n "$NCUCSV" ] && [ -n "$TRACE" ]; then
	"$PY" "$COMPARE" metrics "$METRICS" "$NCUCSV" "$TRACE" "$DEFAULT" 2>>"$LOG" | collect
else
	result "collector vs ncu" FAIL "missing input (metrics records, ncu CSV or trace records)"
fi
if [ -n "$KREPLAY" ] && [ -n "$NCUCSV" ] && [ -n "$TRACE" ]; then
	"$PY" "$COMPARE" metrics "$KREPLAY" "$NCUCSV" "$TRACE" "$DEFAULT" 2>>"$LOG" |
		sed 's/^/kernel replay: /' | collect
fi
if [ -n "$MULTIREC" ] && [ -n "$NCUCSV" ] && [ -n "$TRACE" ]; then
	"$PY" "$COMPARE" metrics "$MULTIREC" "$NCUCSV" "$TRACE" "$MULTI" 2>>"$LOG" |
		sed 's/^/multi-pass: /' | collect
fi

# ---- 4b. cache control all against ncu's default -------------------------
# the collector's default KGATE_CACHE_CONTROL=all (a flush before each
# profiled launch) against ncu's default --cache-control all
under_collector metrics appall env KGATE_CACHE_CONTROL=all "$APP" "${APPARGS[@]}"
APPALL=$(one_file 'appall.*.jsonl') || APPALL=
if ncu_report ncu_all all "$DEFAULT" "$APP" "${APPARGS[@]}" && [ -n "$APPALL" ] && [ -n "$TRACE" ]; then
	"$PY" "$COMPARE" metrics "$APPALL" "$OUTDIR/ncu_all_mangled.csv" "$TRACE" "$DEFAULT" 2>>"$LOG" |
		sed 's/^/cache all: /' | collect
else
	result "cache all: collector vs ncu --cache-control all" FAIL "exit $RC; see appall.stderr, ncu_all.stdout"
fi

# ---- 4c. PM sampling (KGATE_ENGINE=sampling) --------------------------------
# its set (duration, instructions, DRAM read and write; no flush) against
# ncu's run without the flush: the process ends (120 s at most), every launch
# outside the graph has counters, instructions equal (DRAM reads and durations
# reported: the samples count the whole device, durations come from events)
PMSET=gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum
under_collector metrics pm timeout -k 5 120 env KGATE_ENGINE=sampling KGATE_METRICS="$PMSET" "$APP" "${APPARGS[@]}"
PMREC=$(one_file 'pm.*.jsonl') || PMREC=
result "PM sampling: the process ends, exit 0" "$([ $RC -eq 0 ] && echo PASS || echo FAIL)" "exit $RC (124: still running after 120 s)"
if [ -n "$PMREC" ] && [ -n "$NCUCSV" ] && [ -n "$TRACE" ]; then
	"$PY" "$COMPARE" metrics "$PMREC" "$NCUCSV" "$TRACE" "$PMSET" \
		--info "dram__bytes_read.sum=samples count the whole device over a launch's window; the first launch after the set-up reads up to 0.17% more on an H100" \
		--info "gpu__time_duration.sum=timed by events around the launch, its latency included" 2>>"$LOG" |
		sed 's/^/PM sampling: /' | collect
else
	result "PM sampling: collector vs ncu" FAIL "no records file (see pm.stderr) or no ncu CSV"
fi

fi # SKIP_APP

# ---- 5. PyTorch ----------------------------------------------------------
if "$PY" -c 'import torch; assert torch.cuda.is_available()' >/dev/null 2>&1; then
	# PyTorch loads the libcupti of its own wheel at import; the collector
	# binds to that copy and, named as NVTX's library, hands NVTX to it
	under_collector trace torch "$PY" "$ROOT/tests/gpu/torch_step.py" 3
	result "torch: exits 0" "$([ $RC -eq 0 ] && echo PASS || echo FAIL)" "exit $RC"
	TORCH=$(one_file 'torch.*.jsonl') || TORCH=
	if [ -n "$TORCH" ]; then
		"$PY" "$COMPARE" torch "$TORCH" 2>>"$LOG" | collect
	else
		result "torch: records file" FAIL "none written; see torch.stderr"
	fi
	# the same step, larger (data beyond the L2), in metrics mode and under
	# ncu with the same metrics, twice each: the same launches, compared per
	# launch as the test program's, and each tool against itself
	read -r -a TARGS <<<"${KGATE_GPU_TORCH_ARGS:-5 8192 1024}"
	under_collector trace torcht "$PY" "$ROOT/tests/gpu/torch_step.py" "${TARGS[@]}"
	TORCHT=$(one_file 'torcht.*.jsonl') || TORCHT=
	for r in 1 2; do
		under_collector metrics "torchm$r" env KGATE_METRICS="$DEFAULT" "$PY" "$ROOT/tests/gpu/torch_step.py" "${TARGS[@]}"
		result "torch, metrics mode, run $r: exits 0" "$([ $RC -eq 0 ] && echo PASS || echo FAIL)" "exit $RC"
		if ncu_report "ncu_torch$r" none "$DEFAULT" "$PY" "$ROOT/tests/gpu/torch_step.py" "${TARGS[@]}"; then
			result "torch: ncu run $r" PASS "$(($(grep -c . "$OUTDIR/ncu_torch${r}_mangled.csv") - 2)) launches profiled"
		else
			result "torch: ncu run $r" FAIL "see ncu_torch$r.stdout / ncu_torch$r.stderr"
		fi
	done
	TORCHM=$(one_file 'torchm1.*.jsonl') || TORCHM=
	TORCHM2=$(one_file 'torchm2.*.jsonl') || TORCHM2=
	if [ -n "$TORCHM" ] && [ -s "$OUTDIR/ncu_torch1_mangled.csv" ]; then
		"$PY" "$COMPARE" metrics "$TORCHM" "$OUTDIR/ncu_torch1_mangled.csv" "${TORCHT:-$TORCHM}" "$DEFAULT" \
			"$OUTDIR/ncu_torch2_mangled.csv" \
			--info "dram__bytes_read.sum=no flush, so a kernel's reads depend on what the L2 holds from the one before, which ncu's replay changes (5b holds the goal, with the flush)" 2>>"$LOG" |
			sed 's/^/torch: /' | collect
	else
		result "torch: collector vs ncu" FAIL "missing the metrics records or ncu's export"
	fi
	[ -n "$TORCHM" ] && [ -n "$TORCHM2" ] &&
		"$PY" "$COMPARE" repeat "torch, collector" "$TORCHM" "$TORCHM2" 2>>"$LOG" | collect
	[ -s "$OUTDIR/ncu_torch1_mangled.csv" ] && [ -s "$OUTDIR/ncu_torch2_mangled.csv" ] &&
		"$PY" "$COMPARE" repeat "torch, ncu" "$OUTDIR/ncu_torch1_mangled.csv" "$OUTDIR/ncu_torch2_mangled.csv" 2>>"$LOG" | collect

	# 5b. the same with the collector's default cache control (all) against
	# ncu's (--cache-control all), twice: DRAM bytes held to ncu's own
	# run-to-run agreement (compare.py)
	under_collector metrics torcha env KGATE_CACHE_CONTROL=all KGATE_METRICS="$DEFAULT" "$PY" "$ROOT/tests/gpu/torch_step.py" "${TARGS[@]}"
	TORCHA=$(one_file 'torcha.*.jsonl') || TORCHA=
	for r in 1 2; do
		ncu_report "ncu_torcha$r" all "$DEFAULT" "$PY" "$ROOT/tests/gpu/torch_step.py" "${TARGS[@]}"
	done
	if [ -n "$TORCHA" ] && [ -s "$OUTDIR/ncu_torcha1_mangled.csv" ] && [ -s "$OUTDIR/ncu_torcha2_mangled.csv" ]; then
		"$PY" "$COMPARE" metrics "$TORCHA" "$OUTDIR/ncu_torcha1_mangled.csv" "${TORCHT:-$TORCHA}" "$DEFAULT" \
			"$OUTDIR/ncu_torcha2_mangled.csv" 2>>"$LOG" |
			sed 's/^/torch, cache all: /' | collect
	else
		result "torch, cache all: collector vs ncu --cache-control all" FAIL "missing the records (torcha.stderr) or ncu's exports"
	fi
	# 5c. step replay of the multi-pass set over the step's NVTX range "step":
	# 11 steps, one complete group of 9 (the first step after the profiler's
	# start), every launch of its first step with every metric, no mismatch
	under_collector metrics torchstep env KGATE_REPLAY=step KGATE_METRICS="$MULTI" "$PY" "$ROOT/tests/gpu/torch_step.py" 11 "${TARGS[@]:1}"
	f=$(one_file 'torchstep.*.jsonl') || f=
	if [ $RC -eq 0 ] && [ -n "$f" ]; then
		res=$("$PY" - "$f" "$MULTI" <<'PYEOF'
import json, sys
want = sys.argv[2].split(",")
recs = [json.loads(l) for l in open(sys.argv[1])]
ks = [r for r in recs if r.get("type") == "kernel"]
full = [r for r in ks if all((r.get("metrics") or {}).get(m) is not None for m in want)]
groups = sorted({r.get("step") for r in full})
bad = [r["code"] for r in recs if r.get("type") == "error" and r.get("code") == "step_mismatch"]
print("PASS" if full and not bad else "FAIL",
      "%d launches with all %d metrics in %d group(s) (steps %s), %d step_mismatch" % (len(full), len(want), len(groups), groups, len(bad)))
PYEOF
)
		result "torch, step replay of the multi-pass set" "${res%% *}" "${res#* }"
	else
		result "torch, step replay of the multi-pass set" FAIL "exit $RC, file '${f:-none}'"
	fi
else
	result "torch" FAIL "python3 has no CUDA-enabled PyTorch"
fi

if [ -z "${SKIP_APP:-}" ]; then
# ---- 6. failure modes ----------------------------------------------------
# 6a. another CUPTI client holds the subscription
under_collector trace held "$HOLDER"
f=$(one_file 'held.*.jsonl') || f=
if [ $RC -eq 0 ] && [ -n "$f" ] && grep -q '"code":"subscriber_busy"' "$f" && tail -1 "$f" | grep -q '"type":"footer"'; then
	result "subscription held: error record, exit 0" PASS "$(grep -o '"message":"[^"]*"' "$f" | head -1)"
else
	result "subscription held: error record, exit 0" FAIL "exit $RC, file '${f:-none}'"
fi
# 6b. a bad metric name: error record, trace goes on, exit 0
under_collector metrics badmetric env KGATE_METRICS="gpu__time_duration.sum,bogus__metric.sum" "$APP" "${APPARGS[@]}"
f=$(one_file 'badmetric.*.jsonl') || f=
if [ $RC -eq 0 ] && [ -n "$f" ] && grep -q "bogus__metric.sum" "$f" && grep -q '"type":"kernel"' "$f"; then
	result "bad metric: error naming it, trace kept, exit 0" PASS "$(grep -c '"type":"kernel"' "$f") kernel records, mode $(head -1 "$f" | grep -o '"mode":"[a-z]*"')"
else
	result "bad metric: error naming it, trace kept, exit 0" FAIL "exit $RC, file '${f:-none}'"
fi
# 6c. under ncu.  ncu itself refuses to start a process whose environment
# already names an injection library: it exits 1 with an ==ERROR== line
# naming CUDA_INJECTION64_PATH (ncu's behaviour, nothing of the collector's)
rm -f "$OUTDIR"/underncu.*.jsonl
env CUDA_INJECTION64_PATH="$COLL" NVTX_INJECTION64_PATH="$COLL" KGATE_RECORDS="$OUTDIR/underncu.%p.jsonl" \
	"$NCU" --clock-control none --metrics gpu__time_duration.sum --target-processes all \
	"$APP" --n 1048576 --iters 1 >"$OUTDIR/underncu.stdout" 2>"$OUTDIR/underncu.stderr"
rc=$?
if [ $rc -ne 0 ] && grep -q 'CUDA_INJECTION64_PATH' "$OUTDIR/underncu.stderr" && ! one_file 'underncu.*.jsonl' >/dev/null; then
	result "under ncu: ncu refuses the collector's environment" PASS "ncu exit $rc: $(grep -m1 '==ERROR==' "$OUTDIR/underncu.stderr" | cut -c1-120)"
else
	result "under ncu: ncu refuses the collector's environment" FAIL "ncu exit $rc; see underncu.stderr"
fi
# 6d. the collector named inside the process ncu starts (the benchmark's
# own environment sets it, under ncu): ncu's injection is replaced, or
# CUPTI's subscription is ncu's; either way the program must exit 0, and a
# records file, if any, must end in a footer
rm -f "$OUTDIR"/inncu.*.jsonl
"$NCU" --clock-control none --metrics gpu__time_duration.sum --target-processes all \
	env CUDA_INJECTION64_PATH="$COLL" NVTX_INJECTION64_PATH="$COLL" KGATE_RECORDS="$OUTDIR/inncu.%p.jsonl" \
	"$APP" --n 1048576 --iters 1 >"$OUTDIR/inncu.stdout" 2>"$OUTDIR/inncu.stderr"
rc=$?
f=$(one_file 'inncu.*.jsonl') || f=
profiled=$(grep -c '==PROF== Profiling' "$OUTDIR/inncu.stdout" "$OUTDIR/inncu.stderr" | awk -F: '{ s += $2 } END { print s + 0 }')
if [ -z "$f" ] && [ $rc -ne 0 ] && grep -q 'CUDA_INJECTION64_PATH' "$OUTDIR/inncu.stderr"; then
	# seen with ncu 2025.3.1: its injection, finding another one named,
	# ends the program with status 1 before any CUDA work
	result "collector inside ncu's process: ncu refuses" PASS "exit $rc; $(grep -m1 '==ERROR==' "$OUTDIR/inncu.stderr" | cut -c1-100)"
elif [ -z "$f" ]; then
	result "collector inside ncu's process" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" "exit $rc; no records file; ncu profiled $profiled launches"
elif tail -1 "$f" | grep -q '"type":"footer"'; then
	result "collector inside ncu's process" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" "exit $rc; ncu profiled $profiled launches; records: $(grep -c '"type":"kernel"' "$f") kernels, errors $(grep -o '"code":"[a-z_]*"' "$f" | sort -u | tr '\n' ' ')"
else
	result "collector inside ncu's process" FAIL "exit $rc; $f has no footer"
fi

fi # SKIP_APP

# ---- 7. ingest -----------------------------------------------------------
DB=$OUTDIR/ingest.db
rm -f "$DB" "$DB-wal" "$DB-shm"
n=0
for f in "$OUTDIR"/*.jsonl; do
	[ -f "$f" ] || continue
	tag=$(basename "$f" .jsonl)
	# one pass of application replay is not a run: the passes are stored
	# together below
	case $tag in app[0-9]*) continue ;; esac
	n=$((n + 1))
	"$KGATE" ingest --db "$DB" --commit "test-gpu-$n" --branch test-gpu --records "$f" \
		>"$OUTDIR/ingest-$tag.out" 2>"$OUTDIR/ingest-$tag.err"
	rc=$?
	if grep -q '"type":"kernel"' "$f"; then
		result "ingest $tag" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" "exit $rc: $(tail -1 "$OUTDIR/ingest-$tag.err")"
	else
		# no kernels: ingest must read it cleanly and say there is nothing to store
		if grep -Eq 'bad JSON|truncated|no footer|must be' "$OUTDIR/ingest-$tag.err"; then
			result "ingest $tag (no kernels)" FAIL "$(head -1 "$OUTDIR/ingest-$tag.err")"
		else
			result "ingest $tag (no kernels)" PASS "exit $rc: $(tail -1 "$OUTDIR/ingest-$tag.err")"
		fi
	fi
done
[ "$n" -gt 0 ] || result "ingest" FAIL "no records files"
# application replay: all passes of one run as one repeat
set -- "$OUTDIR"/app[0-9]*.jsonl
if [ -f "$1" ]; then
	args=()
	for f in "$@"; do args+=(--records "$f"); done
	"$KGATE" ingest --db "$DB" --commit test-gpu-app --branch test-gpu --benchmark appreplay "${args[@]}" \
		>"$OUTDIR/ingest-app.out" 2>"$OUTDIR/ingest-app.err"
	rc=$?
	result "ingest application replay passes together" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" "exit $rc: $(tail -1 "$OUTDIR/ingest-app.err")"
fi

# kgate's demangled names, as stored, against ncu's
for set in app:ncu_raw torch:ncu_torch1; do
	b=$OUTDIR/${set#*:}
	if [ -s "${b}_mangled.csv" ] && [ -s "${b}_demangled.csv" ] && [ -s "${b}_function.csv" ] && [ -s "$DB" ]; then
		"$PY" "$COMPARE" names "$DB" "${b}_mangled.csv" "${b}_demangled.csv" "${b}_function.csv" \
			"${set%%:*}" 2>>"$LOG" | collect
	fi
done

# ---- 8. the table --------------------------------------------------------
{
	echo
	echo "== test-gpu results ($(date -u +%Y-%m-%dT%H:%M:%SZ)) =="
	awk -F'\t' '{ printf "%-5s %-55s %s\n", $2, substr($1, 1, 55), substr($3, 1, 200) }' "$RESULTS"
	echo
	printf 'PASS %d  FAIL %d  INFO %d   (everything under %s)\n' \
		"$(cut -f2 "$RESULTS" | grep -c '^PASS$')" "$(cut -f2 "$RESULTS" | grep -c '^FAIL$')" \
		"$(cut -f2 "$RESULTS" | grep -c '^INFO$')" "$OUTDIR"
} | tee "$OUTDIR/summary.txt"
! cut -f2 "$RESULTS" | grep -q '^FAIL$'
