#!/bin/sh
# bigrecords.sh [MB]: stream a records file of MB megabytes (default 10240,
# i.e. 10 GB) through "kgate ingest" from a FIFO, so that nothing that big
# lands on disk, and print kgate's peak RSS and the time taken.
#
# TEST DATA: synthetic records of a made-up "Synthetic GPU".  Each kernel
# record carries an ignored 8 KiB "pad" field, so that the stream is large
# while the database stays small (one duration sample per record): what is
# measured is that the reader streams, in bounded memory.  Exits 1 when the
# run is not stored whole or the peak RSS exceeds BIG_MAX_RSS_KB (256 MiB).
: "${KGATE:?KGATE must name the kgate binary}"
MB=${1:-10240}
MAX_KB=${BIG_MAX_RSS_KB:-262144}
W=$(mktemp -d "${TMPDIR:-/tmp}/kgate-big.XXXXXX")
trap 'rm -rf "$W"' EXIT
export NO_COLOR=1
mkfifo "$W/records.fifo" || exit 1
# record length: 8192 bytes of pad plus about 190 of JSON
n=$((MB * 1048576 / 8384))
awk -v n="$n" 'BEGIN {
	pad = "x"; while (length(pad) < 8192) pad = pad pad
	printf "{\"type\":\"header\",\"format\":1,\"collector\":\"0.1.0\",\"pid\":42,\"pass\":0,"
	printf "\"argv\":[\"big\"],\"time\":1764720000,\"devices\":[{\"id\":0,"
	printf "\"name\":\"Synthetic GPU\",\"uuid\":\"GPU-synthetic\",\"driver\":99999}]}\n"
	for (i = 0; i < n; i++)
		printf "{\"type\":\"kernel\",\"ordinal\":%d,\"name\":\"_Z5saxpyifPKfPf\",\"start\":1000,\"end\":%d,\"metrics\":{},\"pad\":\"%s\"}\n", i, 2000 + i % 97, pad
	printf "{\"type\":\"footer\",\"kernels\":%d,\"dropped\":0,\"errors\":0}\n", n
}' > "$W/records.fifo" &
gen=$!
/usr/bin/time -f '%M %e' -o "$W/time" "$KGATE" ingest --db "$W/big.db" \
	--records "$W/records.fifo" --commit big 2>"$W/err"
rc=$?
wait "$gen"
read -r rss secs < "$W/time"
got=$(sqlite3 "$W/big.db" "SELECT count(*) FROM samples" 2>/dev/null)
dbkb=$(du -k "$W/big.db" | cut -f1)
rate=$(awk -v m="$MB" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0 ? m / s : 0) }')
echo "bigrecords: ${MB} MB, $n kernel records streamed from a FIFO: exit $rc, ${secs} s" \
	"($rate MB/s)," \
	"peak RSS $((rss / 1024)) MiB; $got samples stored; database ${dbkb} KiB"
[ "$rc" = 0 ] || { cat "$W/err"; exit 1; }
[ "$got" = "$n" ] || { echo "bigrecords: FAIL: $got samples stored, $n expected"; exit 1; }
[ "$rss" -le "$MAX_KB" ] || { echo "bigrecords: FAIL: peak RSS over $((MAX_KB / 1024)) MiB"; exit 1; }
