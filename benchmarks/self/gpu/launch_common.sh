# launch_common.sh: what the GPU scripts of this folder share, sourced by
# overhead.sh, multipass.sh, session.sh, cache_step.sh and pmsample.sh: the
# paths (ROOT, and COLL, LO, APP unless the caller set them; NCU, CUDA,
# CUPTI_DIR), the collector's default single-pass metric set and the 9-pass
# set beside it, the 1-block launch program built when missing, wall-clock
# helpers, row (a line of the table: stdout and $TABLE), torch_env for
# the scripts that run PyTorch steps, and a trap that stops the programs
# still running when the script is stopped.
# shellcheck shell=bash disable=SC2034  # the variables are the sourcing script's
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
COLL=${COLL:-$ROOT/build/libkgate-collector.so}
LO=${LO:-$ROOT/build/gpu/launch_overhead}
APP=${APP:-$ROOT/build/gpu/kg_gpu_app}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
CUDA=${CUDA:-/usr/local/cuda}
CUPTI_DIR=$CUDA/targets/x86_64-linux/lib
DEFAULT_SET=gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__inst_executed.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
MULTI_SET=$DEFAULT_SET,sm__throughput.avg.pct_of_peak_sustained_elapsed

mkdir -p "$ROOT/build/gpu"
if [ ! -x "$LO" ]; then
	"$CUDA/bin/nvcc" -O2 -arch=sm_90 -o "$LO" "$ROOT/benchmarks/self/gpu/launch_overhead.cu" ||
		{ echo "$(basename "$0"): cannot build $LO" >&2; exit 2; }
fi

# Stopped (a job's time limit), stop the programs still running too: each
# runs under timeout(1), which puts it in a process group of its own, so a
# signal to this script's group would leave it holding the GPU's profiler.
trap 'pkill -TERM -P $$; exit 124' TERM INT

now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
per() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.3f", (b - a) / n * 1000 }'; } # ms
row() { printf '%s\n' "$*" | tee -a "$TABLE"; }

# The PyTorch steps and the agreement checker (COMPARE, TS, TTS, unless the
# caller set them), and CUPTI's directory first on the loader's path.
torch_env() {
	COMPARE=${COMPARE:-$ROOT/tests/gpu/compare.py}
	TS=${TS:-$ROOT/benchmarks/torch_step.py}
	TTS=${TTS:-$ROOT/tests/gpu/torch_step.py}
	export LD_LIBRARY_PATH="$CUPTI_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}
