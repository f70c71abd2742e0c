#!/bin/bash
# calibrate.sh: noise, false-alarm and detection rates of kgate's gate,
# measured with kgate itself on the calibration records.
#
#   scripts/calibrate.sh [-d CALIBDIR] [-o OUTDIR] [-b BENCHMARK]... [-n MAX]
#                        [-k "1 2 3"] [-a "1 2"] [-l "0.01 0.02 0.03 0.05"] [-j 2]
#                        [-J OTHERDIR]
#
# CALIBDIR holds <benchmark>/<extra>/<round>.<pid>.jsonl as
# scripts/record-calibration.sh writes them (default: the H200 recording,
# tests/fixtures/h200/calib).  Every comparison is real kgate: each side is
# stored with "kgate ingest" as its own commit, and "kgate check --format
# json" judges the head side against the base side.  The experiments:
#
#   noise  all extra-0 processes of a benchmark in one run; coefficient of
#          variation of gpu__time_duration.sum (path compute) within each
#          process and across the per-process medians (sqlite3 + awk);
#   aa     extra 0 against extra 0: every ordered pair of disjoint sets of
#          K processes (-k, default 1 2 3); with the default thresholds and
#          with gpu__time_duration.sum at regression 1% (thr "1pct");
#   ab     extra L (-l) against extra 0 with K processes a side (-a, default
#          1 2): every pair of sets when there are at most 6 sets a side,
#          else each base set against three head sets (every head set is
#          used three times: 45 pairs of 15 sets); once with the default
#          thresholds (thr "default")
#          and once with gpu__time_duration.sum at regression 1% (thr "1pct");
#   hist   extra-0 rounds 0+1 against rounds 4+5 (the furthest apart), and
#          rounds 0+1 against 2+3 for reference.
#   job    with -J OTHERDIR (a recording made by another job, hours apart,
#          same layout), and then alone: history from other processes, not
#          interleaved.  Every pair of 2 extra-0 processes of CALIBDIR
#          (disjoint pairs of rounds) is the base; the head is 2 processes
#          of OTHERDIR at each level, 0 (A/A across jobs) and -l's.
#
# -n MAX keeps at most MAX comparisons per experiment, level and set size
# (for a quick run).  -b picks benchmarks (default: every directory); -j
# how many benchmarks run at once (default 2).
# Results: OUTDIR/results.tsv (one line per kernel, path and metric of each
# check), OUTDIR/noise.tsv, and markdown tables on stdout.  OUTDIR defaults
# to a fresh temporary directory, printed on stderr.
#
# Exit status: 0 done; 2 bad usage or missing input; 3 a kgate command failed.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
KGATE=${KGATE:-$ROOT/build/kgate}
CALIB=$ROOT/tests/fixtures/h200/calib
OUT=
BENCHES=()
MAX=0
AA_SIZES="1 2 3"
AB_SIZES="1 2"
LEVELS="0.01 0.02 0.03 0.05"
JOBS=2
OTHER=

usage() {
	sed -n '4,5p' "$0" | sed 's/^# *//; s/^  */  /' >&2
	exit 2
}
# die MESSAGE [STATUS]: a runtime failure (3) also shows the end of kgate's log
die() {
	echo "calibrate: $1" >&2
	if [ "${2:-2}" = 3 ] && [ -s "${OUT:-}/kgate.log" ]; then
		tail -n 5 "$OUT/kgate.log" | sed 's/^/calibrate:   kgate: /' >&2
	fi
	exit "${2:-2}"
}

while getopts 'd:o:b:n:k:a:l:j:J:h' opt; do
	case $opt in
	d) CALIB=$OPTARG ;;
	o) OUT=$OPTARG ;;
	b) BENCHES+=("$OPTARG") ;;
	n) MAX=$OPTARG ;;
	k) AA_SIZES=$OPTARG ;;
	a) AB_SIZES=$OPTARG ;;
	l) LEVELS=$OPTARG ;;
	j) JOBS=$OPTARG ;;
	J) OTHER=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
case $MAX in '' | *[!0-9]*) die "-n must be a whole number, got '$MAX'" ;; esac
case $JOBS in '' | 0 | *[!0-9]*) die "-j must be a whole number above 0, got '$JOBS'" ;; esac
[ -x "$KGATE" ] || die "cannot run '$KGATE' (build it with make)"
[ -d "$CALIB" ] || die "cannot open '$CALIB': no such directory"
[ -z "$OTHER" ] || [ -d "$OTHER" ] || die "cannot open '$OTHER': no such directory"
for tool in jq sqlite3 awk; do
	command -v "$tool" >/dev/null || die "$tool is needed"
done
if [ ${#BENCHES[@]} -eq 0 ]; then
	for d in "$CALIB"/*/; do
		[ -d "$d/0" ] && BENCHES+=("$(basename "$d")")
	done
fi
[ ${#BENCHES[@]} -gt 0 ] || die "no benchmarks under '$CALIB'"
if [ -z "$OUT" ]; then
	OUT=$(mktemp -d "${TMPDIR:-/tmp}/kgate-calib.XXXXXX") || die "cannot make a directory" 3
	echo "calibrate: results in $OUT" >&2
fi
mkdir -p "$OUT" || die "cannot make '$OUT'" 3
OUT=$(cd "$OUT" && pwd)

THR_DEFAULT=$ROOT/thresholds/default.yaml
THR_1PCT=$OUT/thresholds-1pct.yaml
# The defaults with only the timing limit lowered to 1% (a thresholds file
# replaces the built-in one as a whole, so the counters are restated).
sed 's/^\(  gpu__time_duration\.sum: { regression: \)3%/\11%/' "$THR_DEFAULT" >"$THR_1PCT"
grep -q 'gpu__time_duration.sum: { regression: 1% }' "$THR_1PCT" ||
	die "cannot derive the 1% thresholds from '$THR_DEFAULT'"

RESULTS=$OUT/results.tsv
NOISE=$OUT/noise.tsv
printf 'exp\tbenchmark\tthr\tlevel\tk\tbase\thead\tnvtx\tmetric\tverdict\tshift\tn_base\tn_head\n' >"$RESULTS"
printf 'benchmark\tround\tn\tmean\tsd\tmedian\n' >"$NOISE"

# The rounds recorded for benchmark $1 at level $2 (under $3, default
# CALIBDIR), in order.
rounds_of() {
	local f r
	for f in "${3:-$CALIB}/$1/$2"/*.jsonl; do
		[ -e "$f" ] || continue
		r=$(basename "$f")
		echo "${r%%.*}"
	done | sort -n | uniq
}

# combos K ITEM...: every K-subset of the items, one per line, "+"-joined.
combos() {
	local k=$1 first rest
	shift
	if [ "$k" -eq 0 ]; then
		echo ""
		return
	fi
	[ $# -ge "$k" ] || return 0
	first=$1
	shift
	combos $((k - 1)) "$@" | while IFS= read -r rest; do
		echo "$first${rest:++$rest}"
	done
	combos "$k" "$@"
}

# disjoint A B: whether two "+"-joined sets share no item.
disjoint() {
	local x y
	for x in ${1//+/ }; do
		for y in ${2//+/ }; do
			[ "$x" = "$y" ] && return 1
		done
	done
	return 0
}

declare -A COMMIT
NCOMMIT=0
# side DB BENCH LEVEL SET: the commit holding those processes (stored once).
side() {
	local db=$1 b=$2 l=$3 set=$4 dir=${SIDE_DIR:-$CALIB} args=() r f
	local key="$1|$2|$3|$4|$dir"
	if [ -z "${COMMIT[$key]:-}" ]; then
		NCOMMIT=$((NCOMMIT + 1))
		COMMIT[$key]=$(printf 'ca1b%036x' "$NCOMMIT")
		for r in ${set//+/ }; do
			for f in "$dir/$b/$l/$r".*.jsonl; do
				[ -e "$f" ] || die "no records for $b extra $l round $r"
				args+=(--records "$f")
			done
		done
		"$KGATE" ingest --db "$db" --commit "${COMMIT[$key]}" --branch calib \
			--benchmark "$b" "${args[@]}" 2>>"$OUT/kgate.log" ||
			die "kgate ingest failed for $b extra $l rounds $set (see $OUT/kgate.log)" 3
	fi
	SIDE=${COMMIT[$key]}
}

# compare EXP DB BENCH THR-NAME THR-FILE LEVEL K BASE-SET HEAD-SET [BASE-LEVEL]
# (HEAD_DIR: the head side's recording, default CALIBDIR)
compare() {
	local exp=$1 db=$2 b=$3 tn=$4 tf=$5 l=$6 k=$7 bs=$8 hs=$9 bl=${10:-0} base head json rc
	side "$db" "$b" "$bl" "$bs"
	base=$SIDE
	SIDE_DIR=${HEAD_DIR:-} side "$db" "$b" "$l" "$hs"
	head=$SIDE
	json=$("$KGATE" check --db "$db" -t "$tf" --commit "$head" --baseline "$base" \
		--no-store --format json 2>>"$OUT/kgate.log")
	rc=$?
	[ "$rc" -le 1 ] || die "kgate check failed (status $rc) for $b $exp (see $OUT/kgate.log)" 3
	printf '%s\n' "$json" | jq -r --arg e "$exp" --arg t "$tn" --arg l "$l" --arg k "$k" \
		--arg bs "$bs" --arg hs "$hs" \
		'.results[] | [$e, .benchmark, $t, $l, $k, $bs, $hs, .nvtx, .metric, .verdict,
		  (if .shift == null then "" else .shift end), .n_base, .n_head] | @tsv' >>"$RESULTS" ||
		die "cannot read kgate's JSON for $b $exp" 3
}

# bench B: every experiment of one benchmark, into OUT/B.results.tsv and
# OUT/B.noise.tsv.
bench() {
	local b=$1 db all k a c l done_n i j RESULTS
	local -a R0 RL S H
	RESULTS=$OUT/$b.results.tsv
	: >"$RESULTS"
	[ -d "$CALIB/$b/0" ] || die "cannot open '$CALIB/$b/0': no such directory"
	db=$OUT/$b.db
	rm -f "$db"
	mapfile -t R0 < <(rounds_of "$b" 0)
	[ ${#R0[@]} -ge 2 ] || die "$b: fewer than two extra-0 processes"
	echo "calibrate: $b (${#R0[@]} processes at extra 0)" >&2

	# Another job's recording as the head (-J): only that.
	if [ -n "$OTHER" ]; then
		: >"$OUT/$b.noise.tsv"
		mapfile -t S < <(combos 2 "${R0[@]}")
		for l in 0 $LEVELS; do
			[ -d "$OTHER/$b/$l" ] || continue
			mapfile -t RL < <(rounds_of "$b" "$l" "$OTHER")
			[ ${#RL[@]} -ge 2 ] || continue
			for a in "${S[@]}"; do
				HEAD_DIR=$OTHER compare job "$db" "$b" default "$THR_DEFAULT" "$l" 2 "$a" "${RL[0]}+${RL[1]}"
				HEAD_DIR=$OTHER compare job "$db" "$b" 1pct "$THR_1PCT" "$l" 2 "$a" "${RL[0]}+${RL[1]}"
			done
		done
		return 0
	fi

	# Noise: all extra-0 processes as the repeats of one run.
	all=$(
		IFS=+
		echo "${R0[*]}"
	)
	side "$db" "$b" 0 "$all"
	sqlite3 -separator ' ' "$db" "SELECT repeat, value FROM samples_named s
		JOIN runs r ON r.id = s.run WHERE r.commit_sha = '$SIDE' AND nvtx = 'compute'
		AND metric = 'gpu__time_duration.sum' ORDER BY repeat, value" |
		awk -v b="$b" -v OFS='\t' '
		function flush() {
			if (n == 0) return
			m = s / n; v = 0
			for (i = 1; i <= n; i++) v += (x[i] - m) ^ 2
			sd = n > 1 ? sqrt(v / (n - 1)) : 0
			med = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
			print b, rep, n, m, sd, med
			n = 0; s = 0
		}
		$1 != rep { flush(); rep = $1 }
		{ x[++n] = $2; s += $2 }
		END { flush() }' >"$OUT/$b.noise.tsv"

	# A/A: disjoint process sets at extra 0.
	for k in $AA_SIZES; do
		mapfile -t S < <(combos "$k" "${R0[@]}")
		done_n=0
		for a in "${S[@]}"; do
			for c in "${S[@]}"; do
				disjoint "$a" "$c" || continue
				[ "$MAX" -gt 0 ] && [ "$done_n" -ge "$MAX" ] && break 2
				compare aa "$db" "$b" default "$THR_DEFAULT" 0 "$k" "$a" "$c"
				compare aa "$db" "$b" 1pct "$THR_1PCT" 0 "$k" "$a" "$c"
				done_n=$((done_n + 1))
			done
		done
	done

	# A/B: extra L against extra 0.
	for l in $LEVELS; do
		[ -d "$CALIB/$b/$l" ] || continue
		mapfile -t RL < <(rounds_of "$b" "$l")
		for k in $AB_SIZES; do
			mapfile -t S < <(combos "$k" "${R0[@]}")
			mapfile -t H < <(combos "$k" "${RL[@]}")
			done_n=0
			for ((i = 0; i < ${#S[@]}; i++)); do
				for ((j = 0; j < ${#H[@]}; j++)); do
					# With more than 6 sets a side, three head sets per
					# base set (each head set is used three times too).
					if [ ${#H[@]} -gt 6 ] && [ $(((j - i + ${#H[@]}) % (${#H[@]} / 3))) -ne 0 ]; then
						continue
					fi
					[ "$MAX" -gt 0 ] && [ "$done_n" -ge "$MAX" ] && break 2
					compare ab "$db" "$b" default "$THR_DEFAULT" "$l" "$k" "${S[i]}" "${H[j]}"
					compare ab "$db" "$b" 1pct "$THR_1PCT" "$l" "$k" "${S[i]}" "${H[j]}"
					done_n=$((done_n + 1))
				done
			done
		done
	done

	# History: early rounds against late ones (and against the middle).
	if [ ${#R0[@]} -ge 6 ]; then
		compare hist "$db" "$b" default "$THR_DEFAULT" 0 2 "${R0[0]}+${R0[1]}" "${R0[4]}+${R0[5]}"
		compare hist "$db" "$b" default "$THR_DEFAULT" 0 2 "${R0[0]}+${R0[1]}" "${R0[2]}+${R0[3]}"
		compare hist "$db" "$b" default "$THR_DEFAULT" 0 2 "${R0[4]}+${R0[5]}" "${R0[0]}+${R0[1]}"
	fi
}

# Two benchmarks at a time (-j), each in its own database.
pids=()
for b in "${BENCHES[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n
	done
	bench "$b" &
	pids+=($!)
done
status=0
for p in "${pids[@]}"; do
	wait "$p" || status=$?
done
[ "$status" -eq 0 ] || exit "$status"
for b in "${BENCHES[@]}"; do
	cat "$OUT/$b.results.tsv" >>"$RESULTS"
	cat "$OUT/$b.noise.tsv" >>"$NOISE"
done

# ---- tables ----------------------------------------------------------------

if [ -n "$OTHER" ]; then
	echo "### Against another job's recording (2 processes a side, not interleaved)"
	echo
	echo "| benchmark | extra work | thresholds | comparisons | compute timing FAIL | INCONCLUSIVE | median shift |"
	echo "|---|---:|---|---:|---:|---:|---:|"
	awk -F'\t' '$1 == "job" && $8 == "compute" && $9 == "gpu__time_duration.sum" {
		g = $2 SUBSEP $4 SUBSEP $3; if (!(g in n)) order[++ng] = g
		n[g]++; f[g] += $10 == "FAIL"; inc[g] += $10 == "INCONCLUSIVE"; sh[g, n[g]] = $11
	}
	END { for (j = 1; j <= ng; j++) { g = order[j]; split(g, p, SUBSEP); m = n[g]
		for (i = 1; i <= m; i++) v[i] = sh[g, i]
		for (i = 2; i <= m; i++) { x = v[i]; k = i - 1; while (k > 0 && v[k] > x) { v[k + 1] = v[k]; k-- } v[k + 1] = x }
		med = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
		printf "| %s | %s | %s | %d | %d | %d | %+.2f%% |\n", p[1], p[2], p[3], m, f[g], inc[g], 100 * med } }' "$RESULTS"
	exit 0
fi

echo "### Noise of gpu__time_duration.sum at extra 0 (path compute)"
echo
echo "| benchmark | processes | launches per process | within-process CV, median (max) | across-process CV of medians | spread of medians (max/min - 1) |"
echo "|---|---:|---:|---:|---:|---:|"
awk -F'\t' 'NR > 1 {
	b = $1; if (!(b in np)) order[++nb] = b
	i = ++np[b]; cv[b, i] = $4 > 0 ? $5 / $4 : 0; med[b, i] = $6; nl[b] = $3
}
END {
	for (j = 1; j <= nb; j++) {
		b = order[j]; n = np[b]
		for (i = 1; i <= n; i++) c[i] = cv[b, i]
		for (i = 2; i <= n; i++) for (k = i; k > 1 && c[k - 1] > c[k]; k--) { t = c[k]; c[k] = c[k - 1]; c[k - 1] = t }
		mc = n % 2 ? c[(n + 1) / 2] : (c[n / 2] + c[n / 2 + 1]) / 2
		s = 0; lo = med[b, 1]; hi = lo
		for (i = 1; i <= n; i++) { s += med[b, i]; if (med[b, i] < lo) lo = med[b, i]; if (med[b, i] > hi) hi = med[b, i] }
		m = s / n; v = 0
		for (i = 1; i <= n; i++) v += (med[b, i] - m) ^ 2
		sd = n > 1 ? sqrt(v / (n - 1)) : 0
		printf "| %s | %d | %d | %.2f%% (%.2f%%) | %.2f%% | %.2f%% |\n", b, n, nl[b], 100 * mc, 100 * c[n], 100 * sd / m, 100 * (hi / lo - 1)
	}
}' "$NOISE"
echo

echo "### Per-process medians by round (ns, extra 0, path compute)"
echo
awk -F'\t' 'NR > 1 { if (!($1 in seen)) { seen[$1] = 1; order[++nb] = $1 }
	line[$1] = line[$1] sprintf(" %.0f |", $6); if ($2 + 1 > nr) nr = $2 + 1 }
END {
	printf "| benchmark |"; for (i = 0; i < nr; i++) printf " round %d |", i; print ""
	printf "|---|"; for (i = 0; i < nr; i++) printf "---:|"; print ""
	for (j = 1; j <= nb; j++) printf "| %s |%s\n", order[j], line[order[j]]
}' "$NOISE"
echo

# Exact one-sided 95% upper bound on a binomial rate (Clopper-Pearson):
# the p where P(X <= x) = 0.05, by bisection.
AWK_UB='function ub(x, n,   lo, hi, mid, it) {
	if (n == 0) return 1
	lo = x / n; hi = 1
	for (it = 0; it < 60; it++) { mid = (lo + hi) / 2; if (cdf(x, n, mid) > 0.05) lo = mid; else hi = mid }
	return hi
}
function cdf(x, n, p,   i, pm, s) {
	if (p >= 1) return x >= n
	pm = (1 - p) ^ n; s = pm
	for (i = 0; i < x; i++) { pm *= (n - i) / (i + 1) * p / (1 - p); s += pm }
	return s
}'

for thr in default 1pct; do
if [ "$thr" = default ]; then
	echo "### A/A: extra 0 against extra 0, disjoint process sets, default thresholds"
else
	echo "### A/A: extra 0 against extra 0, disjoint process sets, gpu__time_duration.sum regression 1%"
fi
echo
echo "Counts are kernel comparisons (one per check and NVTX path); the timing columns are gpu__time_duration.sum, the counter column any launch__* metric."
echo
echo "| benchmark | processes a side | checks | compute timing FAIL | compute INCONCLUSIVE | warmup timing FAIL | warmup INCONCLUSIVE | counter FAIL |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
awk -F'\t' -v thr="$thr" "$AWK_UB"'
$1 == "aa" && $3 == thr {
	g = $2 SUBSEP $5; if (!(g in seen)) { seen[g] = 1; order[++ng] = g }
	if ($9 == "gpu__time_duration.sum") {
		if ($8 == "compute") { n[g]++; N++; if ($10 == "FAIL") { cf[g]++; CF++ } if ($10 == "INCONCLUSIVE") { ci[g]++; CI++ } }
		else { nw[g]++; NW++; if ($10 == "FAIL") { wf[g]++; WF++ } if ($10 == "INCONCLUSIVE") { wi[g]++; WI++ } }
	} else if ($10 == "FAIL") { df[g]++; DF++ }
}
END {
	for (j = 1; j <= ng; j++) { g = order[j]; split(g, p, SUBSEP)
		printf "| %s | %s | %d | %d | %d | %d | %d | %d |\n", p[1], p[2], n[g], cf[g], ci[g], wf[g], wi[g], df[g] }
	printf "| **all** | | %d | %d | %d | %d | %d | %d |\n", N, CF, CI, WF, WI, DF
	print ""
	printf "False-alarm rate (compute timing FAIL): %d of %d = %.2f%%, one-sided 95%% upper bound %.2f%%.\n", CF, N, N ? 100 * CF / N : 0, 100 * ub(CF, N)
	printf "False-alarm rate (any FAIL, both paths and counters): %d of %d kernel comparisons = %.2f%%, upper bound %.2f%%.\n", CF + WF + DF, N + NW, (N + NW) ? 100 * (CF + WF + DF) / (N + NW) : 0, 100 * ub(CF + WF + DF, N + NW)
	printf "Compute timing INCONCLUSIVE: %d of %d; warmup timing INCONCLUSIVE: %d of %d.\n", CI, N, WI, NW
}' "$RESULTS"
echo
done

for thr in default 1pct; do
	if [ "$thr" = default ]; then
		echo "### A/B: extra L against extra 0, default thresholds (timing regression 3%)"
	else
		echo "### A/B: extra L against extra 0, gpu__time_duration.sum regression 1%"
	fi
	echo
	echo "Compute-path gpu__time_duration.sum verdicts (FAIL / PASS / INCONCLUSIVE of n checks) and the median measured shift."
	echo
	echo "| benchmark | extra | processes a side | n | FAIL | PASS | INCONCLUSIVE | fraction FAIL | median shift |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	awk -F'\t' -v thr="$thr" '
	$1 == "ab" && $3 == thr && $8 == "compute" && $9 == "gpu__time_duration.sum" {
		g = $2 SUBSEP $4 SUBSEP $5; if (!(g in seen)) { seen[g] = 1; order[++ng] = g }
		n[g]++; v[g, $10]++; sh[g, n[g]] = $11
	}
	END {
		for (j = 1; j <= ng; j++) { g = order[j]; split(g, p, SUBSEP); m = n[g]
			for (i = 1; i <= m; i++) c[i] = sh[g, i] + 0
			for (i = 2; i <= m; i++) for (k = i; k > 1 && c[k - 1] > c[k]; k--) { t = c[k]; c[k] = c[k - 1]; c[k - 1] = t }
			md = m % 2 ? c[(m + 1) / 2] : (c[m / 2] + c[m / 2 + 1]) / 2
			printf "| %s | %s | %s | %d | %d | %d | %d | %.2f | %+.2f%% |\n", p[1], p[2], p[3], m, v[g, "FAIL"], v[g, "PASS"], v[g, "INCONCLUSIVE"], m ? v[g, "FAIL"] / m : 0, 100 * md }
	}' "$RESULTS"
	echo
done

echo "### Deterministic counters under extra work"
echo
echo "| benchmark | extra | checks | checks with a counter FAIL | counters that changed (shift) |"
echo "|---|---:|---:|---:|---|"
awk -F'\t' '
$1 == "ab" && $3 == "default" {
	g = $2 SUBSEP $4; if (!(g in seen)) { seen[g] = 1; order[++ng] = g }
	c = $4 SUBSEP $5 SUBSEP $6 SUBSEP $7
	if (!((g, c) in chk)) { chk[g, c] = 1; n[g]++ }
	if ($9 != "gpu__time_duration.sum" && $10 == "FAIL") {
		if (!((g, c) in hit)) { hit[g, c] = 1; f[g]++ }
		if (!((g, $9) in what)) { what[g, $9] = 1; w[g] = w[g] (w[g] == "" ? "" : ", ") sprintf("%s %+.2f%%", $9, 100 * $11) }
	}
}
END { for (j = 1; j <= ng; j++) { g = order[j]; split(g, p, SUBSEP)
	printf "| %s | %s | %d | %d | %s |\n", p[1], p[2], n[g], f[g], w[g] == "" ? "none" : w[g] } }' "$RESULTS"
echo

echo "### Early against late processes (extra 0, 2 processes a side)"
echo
echo "| benchmark | base rounds | head rounds | compute timing verdict | shift |"
echo "|---|---|---|---|---:|"
awk -F'\t' '$1 == "hist" && $8 == "compute" && $9 == "gpu__time_duration.sum" {
	printf "| %s | %s | %s | %s | %+.2f%% |\n", $2, $6, $7, $10, 100 * $11 }' "$RESULTS"
