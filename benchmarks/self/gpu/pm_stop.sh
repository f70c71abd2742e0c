#!/bin/bash
# pm_stop.sh: where a process sampled by the PM-sampling engine stops
# ending, on a GPU:
#
#   benchmarks/self/gpu/pm_stop.sh OUTDIR
#
# Runs launch_overhead 10 under KGATE_ENGINE=sampling with KGATE_DEBUG=1
# two ways: as it is (sampling stopped at the exit), and with sampling
# stopped by the launch count (KGATE_LAUNCH_COUNT=5), in a launch's callback.
# (On an H100 on 2026-12-05 it found the exit's stop never returning when
# the collector's exit handler ran after the CUDA runtime's; the collector
# has since stopped sampling from a handler registered after the runtime's.)  A process still running after
# WAIT seconds (default 15) has each thread's stack written to its stderr
# (the helper stackdump.so, preloaded, on SIGUSR2 sent to each thread), its
# threads' kernel wait channels listed, and is killed.  Prints a table
# (also OUTDIR/table.txt).
set -u
OUT=${1:?give an output directory}
mkdir -p "$OUT"
# shellcheck source=benchmarks/self/gpu/launch_common.sh
. "$(dirname "$0")/launch_common.sh"
TABLE=$OUT/table.txt
: >"$TABLE"
SD=$ROOT/build/gpu/stackdump.so
[ -e "$SD" ] || cc -O1 -g -shared -fPIC -o "$SD" "$ROOT/benchmarks/self/gpu/stackdump.c" || SD=
WAIT=${WAIT:-15}
probe() { # TAG ENV... -- CMD...
	local tag=$1 pid i t
	shift
	env CUDA_INJECTION64_PATH="$COLL" KGATE_MODE=metrics KGATE_ENGINE=sampling KGATE_DEBUG=1 \
		KGATE_RECORDS="$OUT/$tag.%p.jsonl" ${SD:+LD_PRELOAD=$SD} "$@" >"$OUT/$tag.stdout" 2>"$OUT/$tag.stderr" &
	pid=$!
	for ((i = 0; i < WAIT * 10; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		row "$tag: still running after $WAIT s; its threads (tid comm state wchan):"
		for t in /proc/"$pid"/task/*; do
			printf '  %s %s %s %s\n' "${t##*/}" "$(cat "$t/comm")" "$(cut -d' ' -f3 "$t/stat")" "$(cat "$t/wchan" 2>/dev/null)"
			{ echo "== kernel stack of ${t##*/}"; cat "$t/stack" 2>/dev/null; } >>"$OUT/$tag.kstack"
		done | tee -a "$TABLE"
		for t in /proc/"$pid"/task/*; do
			python3 -c 'import ctypes,sys; ctypes.CDLL(None).syscall(234, int(sys.argv[1]), int(sys.argv[2]), 12)' "$pid" "${t##*/}"
			sleep 0.2
		done
		sleep 1
		kill -9 "$pid"
		wait "$pid" 2>/dev/null
	else
		wait "$pid"
		row "$tag: exit $? after $((i / 10)).$((i % 10)) s"
	fi
	row "  its last debug lines:"
	grep -v 'enters: offered\|: sampled$\|^==\|^/\|^\[' "$OUT/$tag.stderr" | tail -12 | cut -c1-220 | sed 's/^/    /' | tee -a "$TABLE"
	row "  $(grep -c '"type":"kernel"' "$OUT/$tag".*.jsonl 2>/dev/null | head -1) kernel records, footer: $(grep -c '"type":"footer"' "$OUT/$tag".*.jsonl 2>/dev/null | head -1)"
}
row "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1); debuggers: $(command -v gdb cuda-gdb eu-stack | tr '\n' ' ')"
probe as_is "$LO" 10
probe count5 KGATE_LAUNCH_COUNT=5 "$LO" 10
echo
echo "== table"
cat "$TABLE"
