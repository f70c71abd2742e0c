#!/bin/bash
# record-ranks.sh: record the multi-GPU fixtures: a two-rank PyTorch DDP job
# (NCCL) with a slowdown injected on rank 1.
#
# IT CANNOT RUN WITHOUT TWO GPUS.  It needs a machine with at least two
# NVIDIA GPUs (recorded for kgate on two H200s), PyTorch with CUDA and NCCL,
# torchrun, and kgate built there (`make`).  Nothing in kgate's CI runs it;
# CI replays what it recorded.  Run it from the repository root:
#
#   scripts/record-ranks.sh [OUTDIR]      (default tests/fixtures/h200x2)
#
# It writes, under OUTDIR:
#   <mode>/<side>/train.<repeat>.<pid>.jsonl
#       the records files of `torchrun --nproc-per-node 2 benchmarks/ddp_step.py`
#       under the collector, one per rank (each header has the rank torchrun
#       gave it), in trace and in metrics mode; side "base" is the job as
#       it is, side "head" the same with rank 1 doing 10% more work in its
#       forward pass (--slow-rank 1 --extra-work 0.10).
#   kgate/<mode>.check.json, kgate/<mode>.check.txt
#       `kgate check` of head against base, from a `kgate run` of the same
#       job (kgate.yaml written here): what the fixtures must show (rank 1
#       FAILs and is named the slowest rank, rank 0 PASSes, the NCCL kernels
#       are communication).
#   kgate/<mode>.run.txt   what `kgate run` said (each rank's files counted)
#   env.txt   GPUs, driver, CUDA, PyTorch and NCCL versions, date
#   log.txt   everything the programs printed
# and prints a short table.  Add a README.md (what was recorded, where, and
# that it was recorded, not made up) before committing the directory.
set -u
OUT=${1:-tests/fixtures/h200x2}
REPEATS=${REPEATS:-5}
MREPEATS=${MREPEATS:-2}
PY=${PYTHON:-python3}
TORCHRUN=${TORCHRUN:-torchrun}
KGATE=$PWD/build/kgate
COLL=$PWD/build/libkgate-collector.so
JOB=(benchmarks/ddp_step.py --iters 20)
SLOW=(--slow-rank 1 --extra-work 0.10)
mkdir -p "$OUT/kgate"
LOG=$OUT/log.txt
: >"$LOG"

ngpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
if [ "${ngpu:-0}" -lt 2 ]; then
	echo "record-ranks.sh: this machine has ${ngpu:-0} GPU(s); two are needed" >&2
	exit 2
fi
if ! "$PY" -c 'import torch, torch.distributed as d; assert torch.cuda.device_count() >= 2 and d.is_nccl_available()' 2>>"$LOG"; then
	echo "record-ranks.sh: PyTorch with CUDA and NCCL on two GPUs is needed (see $LOG)" >&2
	exit 2
fi
for f in "$KGATE" "$COLL"; do
	[ -e "$f" ] || { echo "record-ranks.sh: $f is missing; run make first" >&2; exit 2; }
done

{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.max.sm --format=csv,noheader
	nvidia-smi topo -m
	"$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())))'
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

fails=0
# The fixtures: each rank under the collector directly, its records kept.
record() { # mode side repeats extra-args...
	local mode=$1 side=$2 n=$3 r
	shift 3
	local dir=$OUT/$mode/$side
	mkdir -p "$dir"
	for r in $(seq 1 "$n"); do
		echo "== $mode $side repeat $r" >>"$LOG"
		if ! env CUDA_INJECTION64_PATH="$COLL" NVTX_INJECTION64_PATH="$COLL" \
			KGATE_MODE="$mode" KGATE_RECORDS="$dir/train.$r.%p.jsonl" \
			"$TORCHRUN" --standalone --nproc-per-node 2 "${JOB[@]}" "$@" >>"$LOG" 2>&1; then
			echo "FAIL: $mode $side repeat $r (see $LOG)"
			fails=$((fails + 1))
		fi
	done
	# torchrun's own process never initialises CUDA, so the collector is
	# never loaded there: one file per rank and repeat is expected
	local ranks
	ranks=$(for f in "$dir"/*.jsonl; do
		head -1 "$f" | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.readline()).get("rank", "none"))'
	done | sort | uniq -c | tr -s ' \n' ' ')
	echo "$mode $side: files by rank:$ranks"
}
for mode in trace metrics; do
	n=$REPEATS
	[ "$mode" = metrics ] && n=$MREPEATS
	record "$mode" base "$n"
	record "$mode" head "$n" "${SLOW[@]}"
done

# The whole path: kgate run of the same job, then kgate check.
for mode in trace metrics; do
	n=$REPEATS
	[ "$mode" = metrics ] && n=$MREPEATS
	db=$OUT/kgate/$mode.db
	rm -f "$db"
	for side in base head; do
		extra=""
		[ "$side" = head ] && extra=", \"--slow-rank\", \"1\", \"--extra-work\", \"0.10\""
		cat >"$OUT/kgate/$mode.$side.yaml" <<YAML
version: 1
collector: { mode: $mode }
benchmarks:
  - name: train
    cmd: ["$TORCHRUN", "--standalone", "--nproc-per-node", "2", "$PWD/benchmarks/ddp_step.py", "--iters", "20"$extra]
    repeat: $n
    warmup: 1
    timeout: 900s
YAML
		"$KGATE" run -c "$OUT/kgate/$mode.$side.yaml" --db "$db" --commit "$side" \
			>>"$OUT/kgate/$mode.run.txt" 2>&1 || { echo "FAIL: kgate run $mode $side"; fails=$((fails + 1)); }
	done
	"$KGATE" check --db "$db" --commit head --baseline base --no-store --all \
		>"$OUT/kgate/$mode.check.txt" 2>&1
	"$KGATE" check --db "$db" --commit head --baseline base --no-store --format json \
		>"$OUT/kgate/$mode.check.json" 2>>"$LOG"
	echo "$mode: check exit $? ; slowest ranks:"
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); [print("  rank %d %+.1f%% %s" % (s["rank"], 100*s["shift"], s["kernel"][:70])) for s in d.get("slowest_ranks", [])[:10]]' \
		"$OUT/kgate/$mode.check.json" 2>>"$LOG"
	rm -f "$db" "$db-wal" "$db-shm"
done
grep -h "records of\|wrote no records" "$OUT"/kgate/*.run.txt | sort | uniq -c
echo "failures: $fails"
[ "$fails" -eq 0 ]
