#!/bin/sh
# bench_ncu.sh: importing Nsight Compute CSV exports (the header reads and
# the import into a run, as "kgate ingest --ncu-csv" does), the current
# importer against the one before its one-pass rewrite (ncu_csv_anchor.c),
# both built into the same driver (bench_ncu.c) and run alternately in the
# same rounds.  The exports are real H200 ones (tests/fixtures/h200/ncu/)
# with their launch rows repeated (gen_ncu.awk; synthetic as a whole): a
# raw page (--page raw, 2,238 columns a launch) and a details page.
# Prints per page each side's best time and rate and the ratio of rates
# (min and median over the rounds).  Goal: the current importer >= 1.5x the
# anchor's rate.  BENCH_NCU_BASE=DIR adds a third side in the same rounds:
# the same driver linked against another build of kgate (DIR/include,
# DIR/build/libkgate.a: another commit's checkout after make), and the
# current/base ratio.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${KGATE_SRC:=$(cd "$here/../.." && pwd)}"
: "${KGATE_BUILD:=$KGATE_SRC/build}"
ROUNDS=${BENCH_NCU_ROUNDS:-5}
RAW_COPIES=${BENCH_NCU_RAW:-300}
DETAILS_COPIES=${BENCH_NCU_DETAILS:-3000}
W=$(mktemp -d "${TMPDIR:-/tmp}/kgate-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

LIBS="-Wl,-Bstatic -lyaml -lsqlite3 -ljansson -lz -Wl,-Bdynamic -lcurl -lstdc++ -lm -lpthread -ldl"
cc -O2 -std=c11 -D_GNU_SOURCE -I"$KGATE_SRC/include" -o "$W/cur" "$here/bench_ncu.c" \
	"$KGATE_BUILD/libkgate.a" $LIBS
cc -O2 -std=c11 -D_GNU_SOURCE -I"$KGATE_SRC/include" -o "$W/anchor" "$here/bench_ncu.c" \
	"$here/ncu_csv_anchor.c" "$KGATE_BUILD/libkgate.a" $LIBS

sides="anchor cur"
if [ -n "${BENCH_NCU_BASE:-}" ]; then
	cc -O2 -std=c11 -D_GNU_SOURCE -I"$BENCH_NCU_BASE/include" -o "$W/base" "$here/bench_ncu.c" \
		"$BENCH_NCU_BASE/build/libkgate.a" $LIBS
	sides="anchor base cur"
fi

fx=$KGATE_SRC/tests/fixtures/h200/ncu
awk -v n="$RAW_COPIES" -f "$here/gen_ncu.awk" "$fx/matmul_naive.raw.csv" > "$W/raw.csv"
awk -v n="$DETAILS_COPIES" -f "$here/gen_ncu.awk" "$fx/matmul_naive.details.csv" > "$W/details.csv"

for page in raw details; do
	: > "$W/times"
	for r in $(seq "$ROUNDS"); do
		for side in $sides; do
			rm -f "$W/$side.db" "$W/$side.db-wal" "$W/$side.db-shm"
			set -- $("$W/$side" "$W/$side.db" "$W/$page.csv")
			echo "$r $side $1 $2 $3" >> "$W/times"
		done
	done
	awk -v page="$page" -v bytes="$(wc -c < "$W/$page.csv")" '
	$2 == "anchor" { a[$1] = $3; k = $4; sa = $5 }
	$2 == "cur" { c[$1] = $3; sc = $5 }
	$2 == "base" { b[$1] = $3; sb = $5; nb++ }
	END {
		if (sa != sc) { printf "bench_ncu: %s page: %d samples against the anchor'\''s %d\n", page, sc, sa; exit 1 }
		n = 0; ba = 1e9; bc = 1e9
		for (r in a) { q[n++] = a[r] / c[r]; if (a[r] < ba) ba = a[r]; if (c[r] < bc) bc = c[r] }
		for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (q[j] < q[i]) { t = q[i]; q[i] = q[j]; q[j] = t }
		med = n % 2 ? q[(n - 1) / 2] : (q[n / 2 - 1] + q[n / 2]) / 2
		printf "ncu %s page, %.1f MB, %d launches, %d samples: anchor best %.3f s (%.0f samples/s), current best %.3f s (%.0f samples/s); current/anchor rate over %d rounds: min %.2fx, median %.2fx (goal >= 1.5x: %s)\n",
			page, bytes / 1e6, k, sc, ba, sc / ba, bc, sc / bc, n, q[0], med, (q[0] >= 1.5 ? "met" : (med >= 1.5 ? "met at the median" : "missed"))
		if (nb) {
			m = 0; bb = 1e9
			for (r in b) { p[m++] = b[r] / c[r]; if (b[r] < bb) bb = b[r] }
			for (i = 0; i < m; i++) for (j = i + 1; j < m; j++) if (p[j] < p[i]) { t = p[i]; p[i] = p[j]; p[j] = t }
			bmed = m % 2 ? p[(m - 1) / 2] : (p[m / 2 - 1] + p[m / 2]) / 2
			printf "ncu %s page: base (%s) best %.3f s (%.0f samples/s); current/base rate: min %.2fx, median %.2fx\n",
				page, base, bb, sb / bb, p[0], bmed
		}
	}' base="${BENCH_NCU_BASE:-}" "$W/times"
done
