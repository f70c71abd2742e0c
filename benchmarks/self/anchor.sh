# anchor.sh: sourced by the ingest benchmarks (bench_ingest.sh,
# bench_importers.sh, bench_traces.sh): the clock, and the anchor each
# ingest is measured against in the same round, the sqlite3 shell's .import
# of the same rows as CSV into a table laid out as kgate's samples (a rowid
# table, the same columns but rank, the index on run; WAL, one transaction).

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc -l; }

# anchor_import DB CSV [WRAPPER...]: a fresh DB holding the table, then the
# .import of CSV into it, run under WRAPPER (a CPU timer) when one is given;
# prints the wall-clock seconds of the .import alone.
anchor_import() {
	anchor_db=$1 anchor_csv=$2
	shift 2
	rm -f "$anchor_db" "$anchor_db-wal" "$anchor_db-shm"
	sqlite3 "$anchor_db" "PRAGMA journal_mode=WAL;" \
		"CREATE TABLE samples (run INTEGER NOT NULL, benchmark INTEGER NOT NULL,
		 nvtx INTEGER NOT NULL, kernel INTEGER NOT NULL, metric INTEGER NOT NULL,
		 repeat INTEGER NOT NULL, ordinal INTEGER NOT NULL, value REAL NOT NULL);
		 CREATE INDEX samples_run ON samples(run);" >/dev/null
	anchor_t0=$(now)
	"$@" sqlite3 "$anchor_db" -cmd "PRAGMA synchronous=NORMAL" ".mode csv" ".import $anchor_csv samples"
	anchor_t1=$(now)
	elapsed "$anchor_t0" "$anchor_t1"
}
