#!/bin/sh
# bench_copy.sh: "kgate db copy" and "kgate merge" against "kgate ingest" of
# the same runs, side by side.  BENCH_COPY_RUNS runs (default 40) of the H200
# suite recorded in tests/fixtures/h200/suite (9 benchmarks, 6,615 samples a
# run, alternately the base and head recordings under commits of their own)
# are ingested into a new SQLite file (the anchor: what writing those runs
# costs from records files), then copied SQLite -> SQLite, SQLite ->
# PostgreSQL (a server started here, on a Unix socket, as tests/e2e/pg.sh
# does; skipped when it is not installed), PostgreSQL -> SQLite, and once
# more into the full SQLite file (every run a duplicate: the cost of
# recognising them).  Then the same suite in three shards merged, against
# one run copied.  Prints each time and its ratio to the anchor.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${KGATE_SRC:=$(cd "$here/../.." && pwd)}"
: "${KGATE_BUILD:=$KGATE_SRC/build}"
: "${KGATE:=$KGATE_BUILD/kgate}"
N=${BENCH_COPY_RUNS:-40}
T=$(mktemp -d "${TMPDIR:-/tmp}/kgate-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
S="$KGATE_SRC/tests/fixtures/h200/suite/trace"
now() { date +%s.%N; }
ms() { echo "($2 - $1) * 1000" | bc -l; }
args() { # side
	for f in "$S/$1"/*.jsonl; do n=$(basename "$f"); printf -- '--benchmark %s --records %s ' "${n%%.*}" "$f"; done
}
base=$(args base)
head=$(args head)

t0=$(now)
i=0
while [ $i -lt "$N" ]; do
	if [ $((i % 2)) -eq 0 ]; then a=$base; else a=$head; fi
	# shellcheck disable=SC2086
	"$KGATE" ingest --db "$T/src.db" --commit "$(printf '%040d' $i)" --branch main $a 2>/dev/null
	i=$((i + 1))
done
t1=$(now)
samples=$(sqlite3 "$T/src.db" "SELECT count(*) FROM samples")
"$KGATE" db copy "$T/src.db" "$T/ss.db" 2>/dev/null
t2=$(now)
"$KGATE" db copy "$T/src.db" "$T/ss.db" 2>/dev/null
t3=$(now)
ing=$(ms "$t0" "$t1")
printf 'kgate ingest of %s runs (%s samples; the anchor): %.0f ms\n' "$N" "$samples" "$ing"
printf 'db copy SQLite -> SQLite: %.0f ms (%.2f x ingest)\n' "$(ms "$t1" "$t2")" "$(echo "$(ms "$t1" "$t2") / $ing" | bc -l)"
printf 'db copy again, %s duplicates recognised: %.0f ms (%.2f x ingest)\n' "$N" "$(ms "$t2" "$t3")" \
	"$(echo "$(ms "$t2" "$t3") / $ing" | bc -l)"

. "$KGATE_SRC/tests/e2e/pg.sh"
if pg_start 2>/dev/null; then
	pg_createdb copy
	P=$(pg_url copy)
	t4=$(now)
	"$KGATE" db copy "$T/src.db" "$P" 2>/dev/null
	t5=$(now)
	"$KGATE" db copy "$P" "$T/ps.db" 2>/dev/null
	t6=$(now)
	printf 'db copy SQLite -> PostgreSQL: %.0f ms (%.2f x ingest)\n' "$(ms "$t4" "$t5")" \
		"$(echo "$(ms "$t4" "$t5") / $ing" | bc -l)"
	printf 'db copy PostgreSQL -> SQLite: %.0f ms (%.2f x ingest)\n' "$(ms "$t5" "$t6")" \
		"$(echo "$(ms "$t5" "$t6") / $ing" | bc -l)"
else
	echo "db copy with PostgreSQL: skipped ($PG_WHY)"
fi

# three shards of one run merged, against that run copied whole
c=$(printf '%040d' 0)
keep_run="DELETE FROM runs WHERE commit_sha <> '$c'; DELETE FROM samples WHERE run NOT IN (SELECT id FROM runs);
	DELETE FROM run_benchmarks WHERE run NOT IN (SELECT id FROM runs);"
part() { # k names...
	k=$1; shift
	list=$(printf "'%s'," "$@")
	cp "$T/whole.db" "$T/p$k.db"
	sqlite3 "$T/p$k.db" "UPDATE runs SET status = 'shard $k/3';
		DELETE FROM samples WHERE benchmark NOT IN (SELECT id FROM benchmarks WHERE name IN (${list%,}));
		DELETE FROM run_benchmarks WHERE benchmark NOT IN (SELECT id FROM benchmarks WHERE name IN (${list%,}))"
}
cp "$T/src.db" "$T/whole.db"
sqlite3 "$T/whole.db" "$keep_run"
part 1 matmul_naive matmul_tiled reduction_atomic
part 2 reduction_tree stream_triad tail_over_one_wave
part 3 tail_wave transpose_naive transpose_tiled
m0=$(now)
"$KGATE" merge --db "$T/merged.db" --commit "$c" "$T/p1.db" "$T/p2.db" "$T/p3.db" >/dev/null 2>&1
m1=$(now)
"$KGATE" db copy "$T/whole.db" "$T/one.db" >/dev/null 2>&1
m2=$(now)
ms_merge=$(ms "$m0" "$m1")
ms_copy=$(ms "$m1" "$m2")
printf 'kgate merge of 3 shards into one run (%s samples): %.0f ms; db copy of that run whole: %.0f ms: merge/copy %.2f\n' \
	"$(sqlite3 "$T/merged.db" "SELECT count(*) FROM samples")" "$ms_merge" "$ms_copy" \
	"$(echo "$ms_merge / $ms_copy" | bc -l)"
