#!/bin/bash
# multipass.sh: a multi-pass metric set, kgate against Nsight Compute, side
# by side in one run on a GPU, split into what a process costs once and
# what each profiled launch costs, for both replay modes of each.
#
#   benchmarks/self/gpu/multipass.sh OUTDIR
#
# Needs build/libkgate-collector.so, build/gpu/launch_overhead (built here
# when missing) and ncu.  The program launches a 1-block kernel 100 times
# as warm-up and then N times, so N=1 profiles 101 launches and N=100 200.
# For each tool and replay mode it times N=1 and N=100; the difference over
# 99 launches is the cost of a profiled launch, and what is left of the
# N=1 run is the fixed cost.  kgate's application replay runs the program
# once per pass (the header of pass 0 says how many), as "kgate run" does.
# With KGATE_DEBUG=1 the collector's stderr times its set-up and every
# launch call; the medians are printed.  Prints one line per measurement
# and a summary table; the figures go to docs/PERFORMANCE.md by hand.
set -u
OUT=${1:?give an output directory}
mkdir -p "$OUT"
# shellcheck source=benchmarks/self/gpu/launch_common.sh
. "$(dirname "$0")/launch_common.sh"
[ -f "$COLL" ] || { echo "multipass: no $COLL (run make)" >&2; exit 2; }

declare -A T

# kgate NAME N REPLAY: one program run (every pass of it under application
# replay), wall seconds into T[NAME]
kgate_run() {
	local name=$1 n=$2 replay=$3 a b passes=1 p=0
	a=$(now)
	while [ "$p" -lt "$passes" ]; do
		env CUDA_INJECTION64_PATH="$COLL" NVTX_INJECTION64_PATH="$COLL" KGATE_MODE=metrics \
			KGATE_METRICS="$MULTI_SET" KGATE_REPLAY="$replay" KGATE_PASS=$p KGATE_DEBUG=1 \
			KGATE_RECORDS="$OUT/$name.p$p.jsonl" "$LO" "$n" >"$OUT/$name.p$p.out" \
			2>"$OUT/$name.p$p.err"
		if [ "$p" -eq 0 ] && [ "$replay" = application ]; then
			passes=$(head -1 "$OUT/$name.p0.jsonl" | sed -n 's/.*"passes":\([0-9]*\).*/\1/p')
			passes=${passes:-1}
		fi
		p=$((p + 1))
	done
	b=$(now)
	T[$name]=$(sub "$a" "$b")
	echo "kgate $replay replay, N=$n ($passes process(es)): ${T[$name]} s wall"
}

ncu_run() { # NAME N REPLAY
	local name=$1 n=$2 replay=$3 a b
	a=$(now)
	"$NCU" --clock-control none --replay-mode "$replay" --metrics "$MULTI_SET" "$LO" "$n" \
		>"$OUT/$name.txt" 2>&1
	b=$(now)
	T[$name]=$(sub "$a" "$b")
	echo "ncu $replay replay, N=$n: ${T[$name]} s wall ($(grep -c 'tiny(int' "$OUT/$name.txt") kernels reported)"
}

bare_run() { # NAME N
	local a b
	a=$(now); "$LO" "$2" >/dev/null; b=$(now)
	T[$1]=$(sub "$a" "$b")
	echo "bare, N=$2: ${T[$1]} s wall"
}

echo "== $MULTI_SET"
for n in 1 100; do
	bare_run bare_$n $n
	kgate_run kg_kernel_$n $n kernel
	kgate_run kg_app_$n $n application
	ncu_run ncu_kernel_$n $n kernel
	ncu_run ncu_app_$n $n application
done

# per_launch NAME: (T[NAME_100] - T[NAME_1]) / 99 in ms; fixed: T[NAME_1] - 101 * that
per() { awk -v a="${T[${1}_1]}" -v b="${T[${1}_100]}" 'BEGIN { printf "%.1f", (b - a) / 99 * 1000 }'; }
fixed() { awk -v a="${T[${1}_1]}" -v b="${T[${1}_100]}" 'BEGIN { printf "%.2f", a - 101 * (b - a) / 99 }'; }
echo "== summary (200 profiled launches at N=100)"
printf '%-24s %10s %10s %12s %10s\n' "tool" "N=1 s" "N=100 s" "ms/launch" "fixed s"
for t in bare kg_kernel kg_app ncu_kernel ncu_app; do
	printf '%-24s %10s %10s %12s %10s\n' "$t" "${T[${t}_1]}" "${T[${t}_100]}" "$(per $t)" "$(fixed $t)"
done
for k in kernel app; do
	echo "ncu_${k} / kg_${k} at N=100: $(awk -v a="${T[ncu_${k}_100]}" -v b="${T[kg_${k}_100]}" 'BEGIN { printf "%.2f", a / b }')"
done
echo "ncu_kernel / kg_app at N=100: $(awk -v a="${T[ncu_kernel_100]}" -v b="${T[kg_app_100]}" 'BEGIN { printf "%.2f", a / b }')"
echo "ncu_app / kg_kernel at N=100: $(awk -v a="${T[ncu_app_100]}" -v b="${T[kg_kernel_100]}" 'BEGIN { printf "%.2f", a / b }')"

# the collector's own timings (KGATE_DEBUG), kernel replay N=100 and pass 0 of application replay
med() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.3f (n %d)", v[int((NR + 1) / 2)], NR; else printf "none" }'; }
for f in "$OUT/kg_kernel_100.p0.err" "$OUT/kg_app_100.p0.err"; do
	echo "-- $(basename "$f"):"
	echo "   context set-up ms: $(sed -n 's/.*context set-up.*: \([0-9.]*\) ms.*/\1/p' "$f" | med)"
	echo "   profiler enabled ms: $(sed -n 's/.*profiler enabled.*: \([0-9.]*\) ms.*/\1/p' "$f" | med)"
	echo "   launch call ms (median): $(sed -n 's/.*launch call \([0-9.]*\) ms.*/\1/p' "$f" | med)"
	echo "   first start ms: $(sed -n 's/.*range started.*start \([0-9.]*\) ms.*/\1/p' "$f" | head -1)"
	echo "   decode ms: $(sed -n 's/.*decode: .*; \([0-9.]*\) ms.*/\1/p' "$f" | med)"
	echo "   evaluate ms: $(sed -n 's/.*evaluate: [0-9]* ranges, \([0-9.]*\) ms.*/\1/p' "$f" | med)"
done
# the two replay modes agree on the instructions of each launch
python3 - "$OUT" <<'EOF' || true
import json, sys, glob, os
out = sys.argv[1]
def vals(files):
    d = {}
    for f in files:
        for line in open(f):
            r = json.loads(line)
            if r.get("type") == "kernel" and r.get("metrics"):
                for k, v in r["metrics"].items():
                    if v is not None:
                        d[(r["ordinal"], k)] = v
    return d
kr = vals([os.path.join(out, "kg_kernel_100.p0.jsonl")])
ar = vals(sorted(glob.glob(os.path.join(out, "kg_app_100.p*.jsonl"))))
m = "smsp__inst_executed.sum"
keys = [k for k in kr if k[1] == m and k in ar]
eq = sum(1 for k in keys if kr[k] == ar[k])
print(f"instructions per launch, kernel vs application replay: equal on {eq} of {len(keys)} launches")
EOF
