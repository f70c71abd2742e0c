#!/bin/bash
# cache_step.sh: metrics mode's cache control, user ranges and multi-pass
# sets over training steps, on a GPU, side by side with Nsight Compute in one
# job (under 8 minutes on an H200):
#
#   benchmarks/self/gpu/cache_step.sh OUTDIR
#
#   a. DRAM bytes per launch with KGATE_CACHE_CONTROL=all against ncu's
#      default (--cache-control all): tests/gpu/kg_gpu_app --serial and the
#      PyTorch step tests/gpu/torch_step.py, with auto and with user ranges,
#      and with cache control none for contrast (compare.py per launch);
#      user ranges with kg_gpu_app's two threads launching at once (5 runs,
#      each launch's count against the serial run's);
#      the cost of the flush per profiled launch (the 1-block kernel of
#      launch_overhead at 100 and 400 launches, all against none);
#   b. auto against user ranges (KGATE_RANGE): cost per profiled launch, the
#      durations against ncu (events, and the user range's own), and a kernel
#      filter (KGATE_KERNELS=regex:gemm) on the encoder step of
#      benchmarks/torch_step.py, per step against the bare step;
#   c. the 9-pass set (the default set + sm__throughput) on the encoder
#      step: kernel replay, ncu, and step replay (KGATE_REPLAY=step) when the
#      collector has it, against 9 times the single-pass step;
#   f. where the flush runs (KGATE_CACHE_FLUSH): in the collector's own
#      context against on the launch's stream, and no flush: cost per
#      profiled launch, DRAM bytes against ncu's default, the encoder step.
#
# Builds only the 1-block program when it is missing (launch_common.sh):
# the collector (COLL, default build/libkgate-collector.so) and the test
# program (APP: build/gpu/kg_gpu_app, built on another machine with nvcc
# -arch=sm_90) must be there.  Needs ncu and python3 with PyTorch.  Every step is independent
# and time-limited (TMO, default 90 s a process, never past the job's
# LIMIT, default 450 s); a step is skipped when fewer than its estimate of
# seconds are left.  STEPS (default "a1 a3 a2 b1 b2 c"; "f" too) chooses the steps.  Prints a table (also
# OUTDIR/table.txt); logs and records files stay in OUTDIR.
set -u
OUT=${1:?give an output directory}
mkdir -p "$OUT"
# shellcheck source=benchmarks/self/gpu/launch_common.sh
. "$(dirname "$0")/launch_common.sh"
torch_env
TMO=${TMO:-90}
LIMIT=${LIMIT:-450}
START=$(date +%s)
TABLE=$OUT/table.txt
: >"$TABLE"
STEPS=" ${STEPS:-a1 a3 a2 b1 b2 c} "
rem() { echo $((LIMIT - ($(date +%s) - START))); }
# left NAME SECONDS: enough time left for a step of about SECONDS (and the
# step, the first word of NAME, among STEPS)
left() {
	case $STEPS in *" ${1%% *} "*) ;; *) return 1 ;; esac
	[ "$(rem)" -ge "${2:-20}" ] || { row "($1: skipped, the job has run $(($(date +%s) - START)) s)"; return 1; }
}
# tmo [SECONDS]: a process's time limit, never past the job's
tmo() { local t=${1:-$TMO} r; r=$(($(rem) - 3)); [ "$r" -lt "$t" ] && t=$r; [ "$t" -lt 1 ] && t=1; echo "$t"; }
# coll MODE TAG [env ...] CMD...: the collector, records OUT/TAG.*.jsonl
coll() {
	local mode=$1 tag=$2
	shift 2
	rm -f "$OUT/$tag".*.jsonl
	timeout -k 2 "$(tmo)" env CUDA_INJECTION64_PATH="$COLL" NVTX_INJECTION64_PATH="$COLL" \
		KGATE_MODE="$mode" KGATE_METRICS="${SET:-$DEFAULT_SET}" KGATE_RECORDS="$OUT/$tag.%p.jsonl" "$@" \
		>"$OUT/$tag.stdout" 2>"$OUT/$tag.stderr"
}
rec() { find "$OUT" -maxdepth 1 -name "$1.*.jsonl" | head -1; }
timed() { local a b; a=$(now); "$@"; b=$(now); sub "$a" "$b"; }
# ncu_csv TAG NCU-ARGS... CMD...: a report and its raw CSV (OUT/TAG.csv); the
# report's options go before the caller's, whose last are the program's
ncu_csv() {
	local t=$1
	shift
	timeout -k 2 "$(tmo $((TMO * 2)))" "$NCU" --clock-control none --force-overwrite -o "$OUT/$t" "$@" \
		>"$OUT/$t.stdout" 2>&1 &&
		"$NCU" --import "$OUT/$t.ncu-rep" --csv --page raw --print-units base --print-kernel-base mangled \
			>"$OUT/$t.csv" 2>>"$OUT/$t.stdout"
}
# cmp LABEL RECORDS NCU_CSV TRACE [NCU_CSV2]: compare.py's instruction, DRAM
# and duration lines, prefixed
cmp() {
	local l=$1
	shift
	if [ ! -s "$1" ] || [ ! -s "$2" ]; then
		row "$l: no records or no ncu CSV"
		return
	fi
	python3 "$COMPARE" metrics "$1" "$2" "$3" "$DEFAULT_SET" ${4:+"$4"} 2>&1 |
		grep -E 'instructions|dram__bytes_read|gpu__time_duration|every launch' | awk -v l="$l" '{ print l ": " $0 }' | cut -c1-260 | tee -a "$TABLE"
}
errs() { grep -ho '"code":"[a-z_]*"' "$@" 2>/dev/null | sort | uniq -c | tr -s ' \n' ' '; }
ms() { sed -n 's/.*mean_ms=\([0-9.]*\) wall_ms=\([0-9.]*\).*/\1 \2/p' | tail -1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.used --format=csv,noheader >"$OUT/gpu.txt" 2>&1
row "gpu: $(cat "$OUT/gpu.txt"); ncu: $("$NCU" --version 2>/dev/null | tail -1)"
for f in "$COLL" "$LO" "$APP"; do [ -e "$f" ] || row "missing: $f (build it first)"; done

# ---- a1. kg_gpu_app: DRAM bytes against ncu's default cache control -------
N=67108864
if left a1 40; then
	coll trace app_trace "$APP" --n $N --iters 5 --serial
	ncu_csv ncu_app_all --cache-control all --metrics "$DEFAULT_SET" "$APP" --n $N --iters 5 --serial
	ncu_csv ncu_app_none --cache-control none --metrics "$DEFAULT_SET" "$APP" --n $N --iters 5 --serial
	for cfg in "auto all" "user all" "auto none"; do
		read -r R C <<<"$cfg"
		coll metrics "app_${R}_$C" env KGATE_RANGE="$R" KGATE_CACHE_CONTROL="$C" "$APP" --n $N --iters 5 --serial
		rc=$?
		f=$(rec "app_${R}_$C")
		row "a1 kg_gpu_app, $R ranges, cache $C: exit $rc, $(grep -c '"type":"kernel"' "$f" 2>/dev/null) records, $(grep -c '"smsp__inst_executed.sum":[0-9]' "$f" 2>/dev/null) with counters, errors: $(errs "$f")"
		cmp "a1 $R/$C vs ncu cache all" "$f" "$OUT/ncu_app_all.csv" "$(rec app_trace)"
	done
	cmp "a1 auto/none vs ncu cache none" "$(rec app_auto_none)" "$OUT/ncu_app_none.csv" "$(rec app_trace)"
	# durations: the user range's own (inflated) against ncu's
	coll metrics app_user_rangedur env KGATE_RANGE=user KGATE_DURATION=range "$APP" --n $N --iters 5 --serial
	cmp "a1 user ranges, the range's own duration, vs ncu" "$(rec app_user_rangedur)" "$OUT/ncu_app_all.csv" "$(rec app_trace)"
fi

# ---- a3. user ranges with two threads launching at once ------------------
# kg_gpu_app without --serial: its two threads launch on two streams at once;
# with user ranges a range is pushed around one launch while the other
# thread's kernel may still run, so each launch's count is checked against
# the serial run's (every kernel comes from one thread only)
if left a3 30; then
	ok=0
	for r in 1 2 3 4 5; do
		coll metrics "app_user_mt$r" env KGATE_RANGE=user KGATE_CACHE_CONTROL=all "$APP" --n $N --iters 5
		rc=$?
		f=$(rec "app_user_mt$r")
		c=$(grep -c '"smsp__inst_executed.sum":[0-9]' "$f" 2>/dev/null)
		d=$(python3 "$COMPARE" repeat mt "$(rec app_user_all)" "$f" 2>&1 | cut -f3)
		row "a3 two threads at once, user ranges, cache all, run $r: exit $rc, $c with counters, against the serial run: $d"
		[ "$rc" = 0 ] && [ "$c" = 21 ] && case $d in *", 0 differ"*) ok=$((ok + 1)) ;; esac
	done
	row "a3 two threads at once, user ranges: $ok of 5 runs with every launch profiled and its count equal to the serial run's"
fi

# ---- a2. the PyTorch step: DRAM bytes against ncu's default -----------------
if left a2 60; then
	coll trace torch_trace python3 "$TTS" 5 8192 1024
	for r in 1 2; do
		ncu_csv "ncu_torch_all$r" --cache-control all --metrics "$DEFAULT_SET" python3 "$TTS" 5 8192 1024
	done
	for cfg in "auto all" "user all" "auto none"; do
		left "a2 $cfg" 20 || break
		read -r R C <<<"$cfg"
		coll metrics "torch_${R}_$C" env KGATE_RANGE="$R" KGATE_CACHE_CONTROL="$C" python3 "$TTS" 5 8192 1024
		rc=$?
		f=$(rec "torch_${R}_$C")
		row "a2 torch_step, $R ranges, cache $C: exit $rc, $(grep -c '"type":"kernel"' "$f" 2>/dev/null) records, $(grep -c '"smsp__inst_executed.sum":[0-9]' "$f" 2>/dev/null) with counters, errors: $(errs "$f")"
		cmp "a2 $R/$C vs ncu cache all" "$f" "$OUT/ncu_torch_all1.csv" "$(rec torch_trace)" "$OUT/ncu_torch_all2.csv"
	done
fi

# ---- b1. cost per profiled launch: flush, auto and user ranges ----------
# lo_cost LABEL TAG ENV...: launch_overhead N (100 warm-up launches, then N,
# every one profiled) under the collector with ENV; the process's wall time
# at N=100 and N=400 (records OUT/TAG_100.*, OUT/TAG_400.*), the difference
# over 300 as one row
lo_cost() {
	local label=$1 t=$2 s1 s4
	shift 2
	s1=$(timed coll metrics "${t/_RUN/_100}" env "$@" "$LO" 100)
	s4=$(timed coll metrics "${t/_RUN/_400}" env "$@" "$LO" 400)
	row "$label: 200 launches ${s1} s, 500 launches ${s4} s, per profiled launch $(per "$s1" "$s4" 300) ms; program: $(tail -1 "$OUT/${t/_RUN/_400}.stdout" | cut -c1-80); errors: $(errs "$(rec "${t/_RUN/_400}")")"
}
if left b1 40; then
	for r in 1 2; do
		for cfg in "auto none" "auto all" "user none" "user all"; do
			read -r R C <<<"$cfg"
			lo_cost "b1 1-block kernel, $R ranges, cache $C, run $r" "lo_${R}_${C}_RUN_$r" \
				KGATE_RANGE="$R" KGATE_CACHE_CONTROL="$C"
		done
	done
	coll metrics lo_user_debug env KGATE_RANGE=user KGATE_DEBUG=1 "$LO" 400
	python3 - "$OUT/lo_user_debug.stderr" <<'PYEOF' | sed 's/^/b1 /' | tee -a "$TABLE"
import re, statistics, sys
calls = []
for l in open(sys.argv[1], errors="replace"):
    m = re.search(r"in the session \(profiled\), launch call ([0-9.]+) ms", l)
    if m:
        calls.append(float(m.group(1)))
if calls:
    print("user ranges, KGATE_DEBUG: %d launches, launch call and pop median %.3f ms (%.3f-%.3f)"
          % (len(calls), statistics.median(calls), min(calls), max(calls)))
PYEOF
fi

# ---- b2. a kernel filter on the encoder step: auto against user ranges ----
if left b2 40; then
	p=$(timeout -k 2 "$(tmo)" python3 "$TS" --model encoder --iters 13 2>&1 | ms)
	row "b2 encoder step, bare: $p ms event/wall per step"
	for cfg in "auto none" "user none" "user all"; do
		left "b2 $cfg" 15 || break
		read -r R C <<<"$cfg"
		coll metrics "encf_${R}_$C" env KGATE_RANGE="$R" KGATE_CACHE_CONTROL="$C" KGATE_KERNELS=regex:gemm python3 "$TS" --model encoder --iters 13
		f=$(rec "encf_${R}_$C")
		row "b2 encoder step, KGATE_KERNELS=regex:gemm, $R ranges, cache $C: $(ms <"$OUT/encf_${R}_${C}.stdout") ms event/wall per step, $(grep -c '"type":"kernel"' "$f" 2>/dev/null) records, $(grep -c '"smsp__inst_executed.sum":[0-9]' "$f" 2>/dev/null) with counters, errors: $(errs "$f")"
	done
fi

# ---- c. the 9-pass set on the encoder step ---------------------------------
# every kernel profiled; 3 measured steps after 1 warm-up (kernel replay and
# ncu take seconds a step)
if left c 30; then
	for cfg in "auto none" "auto all" "user all"; do
		left "c $cfg" 15 || break
		read -r R C <<<"$cfg"
		coll metrics "enc1_${R}_$C" env KGATE_RANGE="$R" KGATE_CACHE_CONTROL="$C" python3 "$TS" --model encoder --iters 13
		row "c encoder step, single-pass set, $R ranges, cache $C: $(ms <"$OUT/enc1_${R}_${C}.stdout") ms event/wall per step (x 9: the goal's base)"
	done
	if left "c kernel replay" 35; then
		w=$(SET=$MULTI_SET timed coll metrics enc9_kernel python3 "$TS" --model encoder --iters 3 --warmup 1)
		row "c encoder step, 9-pass set, kernel replay: $(ms <"$OUT/enc9_kernel.stdout") ms event/wall per step, process ${w} s, errors: $(errs "$(rec enc9_kernel)")"
	fi
	if left "c step replay" 30; then
		if grep -q KGATE_STEP_RANGE "$COLL" 2>/dev/null; then
			w=$(SET=$MULTI_SET timed coll metrics enc9_step env KGATE_REPLAY=step KGATE_STEP_RANGE=step python3 "$TS" --model encoder --iters 20 --warmup 2)
			f=$(rec enc9_step)
			row "c encoder step, 9-pass set, step replay: $(ms <"$OUT/enc9_step.stdout") ms event/wall per step, process ${w} s, $(grep -c '"smsp__inst_executed.sum":[0-9]' "$f" 2>/dev/null) records with counters, errors: $(errs "$f")"
		else
			row "c step replay: not in this collector (no KGATE_STEP_RANGE)"
		fi
	fi
	if left "c ncu" 60; then
		a=$(now)
		timeout -k 2 "$(tmo $((TMO * 2)))" "$NCU" --clock-control none --metrics "$MULTI_SET" python3 "$TS" --model encoder --iters 2 --warmup 1 \
			>"$OUT/ncu_enc9.stdout" 2>&1
		rc=$?
		row "c encoder step, 9-pass set, ncu (cache all): exit $rc, $(ms <"$OUT/ncu_enc9.stdout") ms event/wall per step, process $(sub "$a" "$(now)") s"
	fi
fi

# ---- f. where the flush runs: the collector's own context or the stream ---
# KGATE_CACHE_FLUSH=context (the default) runs the flush in a context of the
# collector's own, unseen by the profiler; stream runs it on the launch's
# stream (with auto ranges a range of its own).  The cost per profiled
# launch (as b1), DRAM bytes against ncu's default (as a1 and a2), the
# encoder step every kernel (as c)
if left f 60; then
	for r in 1 2; do
		for cfg in "none -" "all stream" "all context"; do
			read -r C F <<<"$cfg"
			lo_cost "f 1-block kernel, auto ranges, cache $C, flush $F, run $r" "lo_f_${C}_${F}_RUN_$r" \
				KGATE_CACHE_CONTROL="$C" KGATE_CACHE_FLUSH="${F#-}"
		done
	done
	[ -s "$OUT/ncu_app_all.csv" ] || ncu_csv ncu_app_all --cache-control all --metrics "$DEFAULT_SET" "$APP" --n $N --iters 5 --serial
	[ -n "$(rec app_trace)" ] || coll trace app_trace "$APP" --n $N --iters 5 --serial
	for F in context stream; do
		coll metrics "app_f_$F" env KGATE_CACHE_FLUSH="$F" "$APP" --n $N --iters 5 --serial
		f=$(rec "app_f_$F")
		row "f kg_gpu_app, cache all, flush $F: $(grep -c '"smsp__inst_executed.sum":[0-9]' "$f" 2>/dev/null) with counters, errors: $(errs "$f")"
		cmp "f flush $F vs ncu cache all" "$f" "$OUT/ncu_app_all.csv" "$(rec app_trace)"
	done
	if left "f torch" 60; then
		[ -n "$(rec torch_trace)" ] || coll trace torch_trace python3 "$TTS" 5 8192 1024
		for r in 1 2; do
			[ -s "$OUT/ncu_torch_all$r.csv" ] || ncu_csv "ncu_torch_all$r" --cache-control all --metrics "$DEFAULT_SET" python3 "$TTS" 5 8192 1024
		done
		coll metrics torch_f_context env KGATE_CACHE_FLUSH=context python3 "$TTS" 5 8192 1024
		cmp "f torch flush context vs ncu cache all" "$(rec torch_f_context)" "$OUT/ncu_torch_all1.csv" "$(rec torch_trace)" "$OUT/ncu_torch_all2.csv"
	fi
	if left "f encoder" 40; then
		p=$(timeout -k 2 "$(tmo)" python3 "$TS" --model encoder --iters 13 2>&1 | ms)
		row "f encoder step, bare: $p ms event/wall per step"
		for cfg in "none -" "all stream" "all context"; do
			left "f encoder $cfg" 15 || break
			read -r C F <<<"$cfg"
			coll metrics "enc_f_${C}_$F" env KGATE_CACHE_CONTROL="$C" KGATE_CACHE_FLUSH="${F#-}" python3 "$TS" --model encoder --iters 13
			f=$(rec "enc_f_${C}_$F")
			row "f encoder step, every kernel, cache $C, flush $F: $(ms <"$OUT/enc_f_${C}_$F.stdout") ms event/wall per step, $(grep -c '"smsp__inst_executed.sum":[0-9]' "$f" 2>/dev/null) of $(grep -c '"type":"kernel"' "$f" 2>/dev/null) records with counters, errors: $(errs "$f")"
		done
	fi
fi

row "collector messages (count, first 10):"
cat "$OUT"/*.stderr 2>/dev/null | grep '^kgate-collector: ' | sort | uniq -c | sort -rn | head -10 | cut -c1-200 | tee -a "$TABLE"
row "job: $(($(date +%s) - START)) s"
echo
echo "== table"
cat "$TABLE"
