#!/bin/sh
# run.sh: kgate's own speed, against its anchors.  Runs every bench_*.sh in
# this directory in turn (each prints its measurements); `make bench` calls
# it with $KGATE (the binary), $KGATE_BUILD and $KGATE_SRC set.  On a
# machine with a GPU (nvidia-smi lists one) and the suite built (`make
# benchmarks`), it then runs the GPU benchmarks of gpu/: the collector's
# cost (overhead.sh), a multi-pass set against ncu in both replay modes,
# fixed and per-launch costs apart (multipass.sh), a full `kgate run` of the
# suite against the same programs bare (suite_wall.sh) and what `kgate
# explain --collect` adds (explain_cost.sh), their output under
# $KGATE_BUILD/bench-gpu.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${KGATE_SRC:=$(cd "$here/../.." && pwd)}"
: "${KGATE_BUILD:=$KGATE_SRC/build}"
: "${KGATE:=$KGATE_BUILD/kgate}"
export KGATE KGATE_BUILD KGATE_SRC
status=0
for b in "$here"/bench_*.sh; do
	[ -e "$b" ] || continue
	echo "== $(basename "$b")"
	if ! sh "$b"; then
		echo "!! $(basename "$b") failed" >&2
		status=1
	fi
done
if nvidia-smi -L >/dev/null 2>&1 && [ -x "$KGATE_BUILD/benchmarks/stream" ]; then
	g=$KGATE_BUILD/bench-gpu
	mkdir -p "$g"
	echo "== gpu/suite_wall.sh"
	REPEAT=${REPEAT:-2} bash "$here/gpu/suite_wall.sh" 1 || status=1
	echo "== gpu/overhead.sh"
	SKIP_MULTI=${SKIP_MULTI:-} bash "$here/gpu/overhead.sh" "$g/overhead" || status=1
	echo "== gpu/multipass.sh"
	bash "$here/gpu/multipass.sh" "$g/multipass" || status=1
	echo "== gpu/explain_cost.sh"
	bash "$here/gpu/explain_cost.sh" "$g/explain" || status=1
else
	echo "== gpu/: skipped (no GPU, or the suite is not built: make benchmarks)"
fi
exit $status
