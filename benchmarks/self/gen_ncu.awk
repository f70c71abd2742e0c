# gen_ncu.awk: a large Nsight Compute CSV export made from a real one, for
# bench_ncu.sh.  Prints the export's lines up to and including its header
# (and the raw page's units row) once, then its launch rows n times, each
# copy with the launch ID moved on by the number of launches in the
# original, so that every copy is a launch of its own.  The values are the
# recorded ones, repeated: synthetic as a whole, invented nowhere.
#   awk -v n=200 -f gen_ncu.awk export.csv > big.csv
/^"[0-9]+",/ {
	rows[nr++] = $0
	id = substr($0, 2, index(substr($0, 2), "\"") - 1) + 0
	if (id + 1 > nid)
		nid = id + 1
	next
}
{ print }
END {
	for (r = 0; r < n; r++)
		for (i = 0; i < nr; i++) {
			line = rows[i]
			q = index(substr(line, 2), "\"")
			id = substr(line, 2, q - 1) + 0
			printf "\"%d\"%s\n", r * nid + id, substr(line, q + 2)
		}
}
