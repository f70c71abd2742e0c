#!/usr/bin/env python3
# aa_replay.py: a TEST DOUBLE for build/benchmarks/many under the collector,
# giving back the processes recorded on a GPU by
# benchmarks/self/gpu/aa_confirm.sh (fixture: tests/fixtures/h100/aa/), so
# that tests/e2e/aa.t replays its compares without a GPU.
#
#   aa_replay.py FIXTURE STATE LABEL       (as a suite's cmd)
#
# Each call writes, where KGATE_RECORDS says, the records file of the first
# recorded process of LABEL ("base", "head-0", "head-0.03", ...) that was
# not given back yet and whose number is at least the one in STATE/start
# (the first process of the compare being replayed), and notes it in
# STATE/used.  The processes of one label come back in the order they ran on
# the GPU, so a compare replayed with its recorded seed gets, run for run
# and confirmation round for confirmation round, the samples it got there.
# The records are the collector's trace-mode records: the recorded header,
# then per launch the identity table's kernel, NVTX path, grid and block
# with the recorded duration, then a footer.
import gzip
import json
import os
import sys

fix, state, label = sys.argv[1], sys.argv[2], sys.argv[3]
start = int(open(os.path.join(state, "start")).read())
usedf = os.path.join(state, "used")
used = set(open(usedf).read().split()) if os.path.exists(usedf) else set()

pick = None
with gzip.open(os.path.join(fix, "durations.tsv.gz"), "rt") as f:
    for line in f:
        num, lab, rest = line.rstrip("\n").split("\t", 2)
        if lab == label and int(num) >= start and num not in used:
            pick = (num, rest.split("\t"))
            break
if pick is None:
    sys.stderr.write("aa_replay: no recorded process of %s left from %d\n" % (label, start))
    sys.exit(1)
with open(usedf, "a") as f:
    f.write(pick[0] + "\n")

ident = []
with open(os.path.join(fix, "identities.tsv")) as f:
    next(f)
    for line in f:
        o, nvtx, kern, grid, block = line.rstrip("\n").split("\t")
        ident.append((int(o), nvtx, kern, int(grid), int(block)))
if len(ident) != len(pick[1]):
    sys.stderr.write("aa_replay: process %s has %d launches, the identity table %d\n"
                     % (pick[0], len(pick[1]), len(ident)))
    sys.exit(1)

hdr = json.loads(open(os.path.join(fix, "header.jsonl")).readline())
hdr["pid"] = os.getpid()
hdr["ppid"] = os.getppid()
out = os.environ["KGATE_RECORDS"].replace("%p", str(os.getpid()))
t = hdr["time"] * 1000000000
with open(out, "w") as o:
    o.write(json.dumps(hdr, separators=(",", ":")) + "\n")
    for (ordinal, nvtx, kern, grid, block), d in zip(ident, pick[1]):
        d = int(d)
        rec = {"type": "kernel", "ordinal": ordinal, "name": kern, "device": 0, "context": 1,
               "stream": 7, "corr": ordinal + 1, "start": t, "end": t + d,
               "grid": [grid, 1, 1], "block": [block, 1, 1], "regs": 16, "smem_static": 0,
               "smem_dynamic": 0, "local_per_thread": 0, "nvtx": nvtx,
               "metrics": {"gpu__time_duration.sum": float(d), "launch__grid_size": grid,
                           "launch__block_size": block, "launch__registers_per_thread": 16,
                           "launch__shared_mem_per_block_static": 0,
                           "launch__shared_mem_per_block_dynamic": 0,
                           "launch__local_mem_per_thread": 0}}
        o.write(json.dumps(rec, separators=(",", ":")) + "\n")
        t += d + 4000
    o.write('{"type":"footer","kernels":%d,"dropped":0,"errors":0,"unmatched":0,"replayed":0,'
            '"no_timestamp":0}\n' % len(ident))
