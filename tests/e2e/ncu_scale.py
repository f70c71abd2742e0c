#!/usr/bin/env python3
"""ncu_scale.py: derive a test input from a real ncu raw-page export.

usage: ncu_scale.py IN OUT KERNEL METRIC FACTOR [--drop]

Copies the export IN to OUT with METRIC multiplied by FACTOR on every launch
whose kernel name contains KERNEL (with --drop, those launches are removed
instead).  Everything else (program output, units row, other columns) is
kept as ncu wrote it.  The tests use it to make a known regression out of
real GPU data; the derived file is never committed.
"""
import csv
import sys


def main():
    src, dst, kern, metric, fac = sys.argv[1:6]
    drop = "--drop" in sys.argv[6:]
    lines = open(src, newline="").read().splitlines(True)
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    rows = list(csv.reader(lines[start:]))
    hdr = rows[0]
    col, kcol = hdr.index(metric), hdr.index("Kernel Name")
    with open(dst, "w", newline="") as out:
        out.writelines(lines[:start])
        w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(hdr)
        w.writerow(rows[1])
        for r in rows[2:]:
            if len(r) > col and kern in r[kcol]:
                if drop:
                    continue
                r[col] = "%.0f" % (float(r[col].replace(",", "")) * float(fac))
            w.writerow(r)


if __name__ == "__main__":
    main()
