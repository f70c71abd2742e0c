#!/usr/bin/env python3
"""ranks_gen.py: synthetic records files of a distributed job (not GPU
measurements): one file per rank, each rank on its own device of a
"Synthetic GPU" machine, a compute kernel and an NCCL all-reduce per step.

    ranks_gen.py DIR SEED NRANKS SLOW_RANK SLOWDOWN [NDEVICES]

SLOW_RANK's compute kernel takes SLOWDOWN (0.10: 10%) longer; every value
has 1% noise from a seeded generator.  The rank is in the header, written
as the collector writes it with RANK set (format 2)."""
import json
import random
import sys

out, seed, nranks, slow, slowdown = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), float(sys.argv[5])
ndev = int(sys.argv[6]) if len(sys.argv) > 6 else nranks
rng = random.Random(seed)
devices = [{"id": i, "name": "Synthetic GPU", "uuid": "GPU-00000000-0000-0000-0000-00000000000%d" % i,
            "chip": "SYN0", "sms": 4, "cc": "0.0", "driver": 99999, "runtime": 99999}
           for i in range(ndev)]
KERNELS = [("_Z4gemmPKfS0_Pfi", 10000.0, False),
           ("_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL24ncclDevKernelArgsStorageILm4096EE",
            20000.0, True)]
for rank in range(nranks):
    dev = rank % ndev
    lines = [{"type": "header", "format": 2, "collector": "synthetic", "cupti": 130000,
              "mode": "trace", "pid": 1000 + rank, "ppid": 999, "pass": 0, "passes": 1,
              "replay": "kernel", "argv": ["train"], "time": 1764720000,
              "rank": rank, "rank_from": "RANK", "local_rank": rank, "world_size": nranks,
              "devices": devices, "metrics": ["gpu__time_duration.sum"]}]
    ordinal = 0
    for step in range(30):
        for name, base, comm in KERNELS:
            d = base * (1 + 0.01 * rng.gauss(0, 1))
            if rank == slow and not comm:
                d *= 1 + slowdown
            lines.append({"type": "kernel", "ordinal": ordinal, "name": name, "device": dev,
                          "context": 1, "stream": 7, "corr": ordinal, "start": 0, "end": int(d),
                          "grid": [8, 1, 1], "block": [256, 1, 1], "regs": 32,
                          "nvtx": "step", "metrics": {"gpu__time_duration.sum": round(d, 1)}})
            ordinal += 1
    lines.append({"type": "footer", "kernels": ordinal, "dropped": 0, "errors": 0})
    with open("%s/train.rank%d.jsonl" % (out, rank), "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
