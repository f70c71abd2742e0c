#!/bin/sh
# run.sh: kgate's own speed, against its anchors.  Runs every bench_*.sh in
# this directory in turn (each prints its measurements); `make bench` calls
# it with $KGATE (the binary), $KGATE_BUILD and $KGATE_SRC set.
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
exit $status
