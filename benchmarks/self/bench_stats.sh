#!/bin/sh
# bench_stats.sh: the statistics of one noisy comparison (Mann-Whitney test,
# Hodges-Lehmann shift and interval: stats_shift_test()) per series, at 200
# and 2,000 samples a side (2,000 is the most gate.c keeps a side), with and
# without ties, cold (each series computes its null distribution) and warm
# (series of one shape share it), each against sorting the same two samples
# in the same rounds (synthetic samples; bench_stats.c says which).
# Goals: under 1 ms per series at 200 a side and under 5 ms at 2,000; then
# a sweep of smaller sizes, to show the cost grows smoothly (no cliff where
# the exact distribution gives way to the approximation).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${KGATE_SRC:=$(cd "$here/../.." && pwd)}"
: "${KGATE_BUILD:=$KGATE_SRC/build}"
W=$(mktemp -d "${TMPDIR:-/tmp}/kgate-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
cc -O2 -std=c11 -D_GNU_SOURCE -I"$KGATE_SRC/include" -o "$W/bench_stats" "$here/bench_stats.c" \
	"$KGATE_BUILD/libkgate.a" -lm
"$W/bench_stats" 200 50 ${BENCH_STATS_ROUNDS:-9}
"$W/bench_stats" 2000 5 ${BENCH_STATS_ROUNDS:-9}
for n in 12 13 25 50 100 201; do
	"$W/bench_stats" "$n" 40 3
done
