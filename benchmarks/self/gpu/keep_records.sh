#!/bin/sh
# keep_records.sh: run a benchmark under kgate and keep a copy of the records
# file its process wrote (kgate deletes them once stored):
#
#   keep_records.sh ARCHIVE LABEL CMD [ARG...]     (as a suite's cmd)
#
# The copy is ARCHIVE/NNNNN-LABEL.jsonl, NNNNN counting the processes in the
# order they ran, so that a replay can give them back in the same order.
arch=$1 label=$2
shift 2
"$@" &
pid=$!
wait "$pid"
rc=$?
f=$(printf '%s' "${KGATE_RECORDS:-}" | sed "s/%p/$pid/g")
if [ -n "$f" ] && [ -f "$f" ]; then
	mkdir -p "$arch"
	n=$(find "$arch" -name '*.jsonl' | wc -l)
	cp "$f" "$arch/$(printf %05d "$n")-$label.jsonl"
fi
exit "$rc"
