#!/bin/bash
# suite_wall.sh: wall time of a full "kgate run" of the repository's suite
# (kgate.yaml) against the same programs run bare, the same number of times
# (warmup + repeat each), side by side in one job on a GPU.
#
#   benchmarks/self/gpu/suite_wall.sh [ROUNDS]     (default 2)
#
# Needs `make` and `make benchmarks` built.  Alternates bare and kgate
# rounds; prints one line per round and the ratio of the medians.
# REPEAT=R runs the suite with repeat R instead of kgate.yaml's (a copy of
# kgate.yaml with that repeat, beside it, removed afterwards).
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$ROOT" || exit 2
KGATE=${KGATE:-$ROOT/build/kgate}
ROUNDS=${1:-2}
DB=$(mktemp -d)/suite.db
CFG=kgate.yaml
if [ -n "${REPEAT:-}" ]; then
	CFG=$(mktemp "$ROOT/kgate.wall.XXXXXX.yaml")
	trap 'rm -f "$CFG"' EXIT
	sed "s/^\( *repeat:\).*/\1 $REPEAT/" kgate.yaml >"$CFG"
fi

now() { date +%s.%N; }
# The commands of kgate.yaml, one per line ("cmd: [a, b, "c"]" -> a b c).
mapfile -t CMDS < <(sed -n 's/^ *cmd: *\[\(.*\)\] *$/\1/p' "$CFG" | sed 's/[",]//g')
RUNS=$((1 + ${REPEAT:-10})) # warmup 1 (the default) + repeat, as kgate.yaml says
bare() {
	local c i
	for c in "${CMDS[@]}"; do
		for ((i = 0; i < RUNS; i++)); do
			# shellcheck disable=SC2086
			$c >/dev/null 2>&1 || { echo "bare: '$c' failed" >&2; return 1; }
		done
	done
}
echo "== suite of ${#CMDS[@]} benchmarks, $RUNS processes each"
bs=() ks=()
for ((r = 1; r <= ROUNDS; r++)); do
	a=$(now); bare; b=$(now)
	"$KGATE" run -c "$CFG" --db "$DB" --commit "wall$r" --branch main >/dev/null 2>"$DB.err$r" ||
		{ echo "kgate run failed:"; tail -5 "$DB.err$r"; }
	c=$(now)
	bt=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b - a }')
	kt=$(awk -v a="$b" -v b="$c" 'BEGIN { printf "%.2f", b - a }')
	bs+=("$bt") ks+=("$kt")
	echo "round $r: bare $bt s, kgate run $kt s, ratio $(awk -v a="$bt" -v b="$kt" 'BEGIN { printf "%.3f", b / a }')"
done
med() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mb=$(med "${bs[@]}") mk=$(med "${ks[@]}")
echo "median: bare $mb s, kgate run $mk s, kgate/bare $(awk -v a="$mb" -v b="$mk" 'BEGIN { printf "%.3f", b / a }')"
