#!/usr/bin/env python3
"""ncu_count.py: what an Nsight Compute CSV export holds, read with Python's
csv module, independently of kgate's reader, for ncu.t to check kgate's
import against.

  ncu_count.py FILE            -> "LAUNCHES SAMPLES": the launches (raw page:
                                  rows; details page: distinct IDs) and the
                                  numbers kgate should store (details: each
                                  (launch, section, label) with a number, plus
                                  the block and grid size of a launch when its
                                  Launch Statistics do not give them; raw: each
                                  number of a metric column, device__ and
                                  profiler-side columns aside)
  ncu_count.py FILE LABEL      -> the first value of details label LABEL
                                  ("Section/Label"), converted to kgate's
                                  stored unit (ns, byte, byte/s, hz)
"""
import csv
import re
import sys

C_NUMBER = re.compile(r'-?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?([eE][-+]?\d+)?')
DIM3 = re.compile(r'\((\d+), (\d+), (\d+)\)')
SKIP_PREFIX = ('device__', 'c2clink__', 'numa__', 'nvlink__', 'profiler__', 'pmsampling__')
SKIP_EXACT = {'launch__context_id', 'launch__device_id', 'launch__stream_id',
              'launch__kernel_name', 'launch__function_pcs'}
RAW_NAME = re.compile(r'[a-z0-9_.]*__[a-z0-9_.]*')
# SI prefixes and the base units kgate stores in (time in ns)
PREFIX = {'': 1, 'K': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12, 'm': 1e-3, 'u': 1e-6, 'n': 1e-9}


def records(path):
    with open(path, newline='', encoding='utf-8', errors='replace') as f:
        return list(csv.reader(line for line in f if line.startswith('"')))


def number(v):
    return float(v.replace(',', '')) if C_NUMBER.fullmatch(v.strip()) else None


def to_stored(value, unit):
    num, _, den = unit.partition('/')
    scale = 1.0
    for part, sign in ((num, 1), (den, -1)):
        if not part:
            continue
        m = re.fullmatch(r'([KMGTmun]?)(second|s|byte|hz|cycle)', part)
        if m:
            f = PREFIX[m.group(1)] * (1e9 if m.group(2) in ('second', 's') and sign > 0 else 1)
            scale *= f if sign > 0 else 1 / f
    return value * scale


def main():
    rows = records(sys.argv[1])
    head = rows[0]
    if 'Metric Value' in head:
        idx = {n: head.index(n) for n in ('ID', 'Section Name', 'Metric Name', 'Metric Unit',
                                          'Metric Value')}
        if len(sys.argv) > 2:
            sec, lab = sys.argv[2].split('/', 1)
            for r in rows[1:]:
                if len(r) > idx['Metric Value'] and r[idx['Section Name']] == sec \
                   and r[idx['Metric Name']] == lab:
                    print('%.9g' % to_stored(number(r[idx['Metric Value']]),
                                         r[idx['Metric Unit']]))
                    return
            sys.exit('no such label')
        launches, seen, dims = {}, set(), {}
        for r in rows[1:]:
            if len(r) <= idx['Metric Value'] or not r[0].isdigit() or not r[idx['Metric Name']]:
                continue
            launches.setdefault(r[0], set())
            for col in ('Block Size', 'Grid Size'):
                if col in head and DIM3.fullmatch(r[head.index(col)]):
                    dims.setdefault((r[0], col), 1)
            if number(r[idx['Metric Value']]) is not None:
                seen.add((r[0], r[idx['Section Name']], r[idx['Metric Name']]))
                if r[idx['Section Name']] == 'Launch Statistics' and \
                   r[idx['Metric Name']] in ('Block Size', 'Grid Size'):
                    launches[r[0]].add(r[idx['Metric Name']])
        extra = sum(1 for (lid, col) in dims if col not in launches[lid])
        print(len(launches), len(seen) + extra)
    else:
        units, data = rows[1], rows[2:]
        keep = [i for i, n in enumerate(head)
                if RAW_NAME.fullmatch(n) and not n.startswith(SKIP_PREFIX) and n not in SKIP_EXACT]
        samples = sum(1 for r in data for i in keep if number(r[i]) is not None)
        assert all(u == '' for u in units[:11])
        print(len(data), samples)


main()
