#!/usr/bin/env python3
"""records_tsv.py: the kernel records of many records files as one table.

    records_tsv.py DIR OUT.tsv

DIR holds NNNNN-LABEL.jsonl files (keep_records.sh).  OUT.tsv gets one line
per kernel record: file number, label, ordinal, NVTX path, kernel name, grid
and block size (threads), and gpu__time_duration.sum in ns; OUT.tsv.header
gets the first file's header line (the machine, driver and collector) and
OUT.tsv.first.jsonl its kernel records as written.  A
replay (tests/e2e/aa.t) turns the lines back into records files.
"""
import json
import os
import sys

src, out = sys.argv[1], sys.argv[2]
names = sorted(n for n in os.listdir(src) if n.endswith(".jsonl"))
with open(out, "w") as o:
    o.write("file\tlabel\tordinal\tnvtx\tkernel\tgrid\tblock\tduration_ns\n")
    for i, n in enumerate(names):
        num, label = n[:-6].split("-", 1)
        with open(os.path.join(src, n)) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r.get("type") == "header" and i == 0:
                    with open(out + ".header", "w") as h:
                        h.write(line)
                if r.get("type") != "kernel":
                    continue
                if i == 0:
                    with open(out + ".first.jsonl", "a") as h:
                        h.write(line)
                g, b = r.get("grid", [0]), r.get("block", [0])
                d = (r.get("metrics") or {}).get("gpu__time_duration.sum")
                if d is None and "start" in r and "end" in r:
                    d = r["end"] - r["start"]
                o.write("%s\t%s\t%d\t%s\t%s\t%d\t%d\t%s\n" % (
                    num, label, r.get("ordinal", -1), r.get("nvtx") or "",
                    r.get("name", ""), g[0] * g[1] * g[2], b[0] * b[1] * b[2],
                    "" if d is None else "%.0f" % d))
print("records_tsv: %d files" % len(names), file=sys.stderr)
