#!/usr/bin/env python3
"""How far one fixed layout moves between its own repeats, against issue 27's bars.

    python3 spread.py ramp FILE...   # ramp outputs (experiments/peers/run.sh ramp, 3 repeats)
    python3 spread.py closed DIR...  # closed-loop dirs (experiments/adaptive/run.sh, ORDER=process)

ramp: each fixed size's P99 over its repeats at every step, largest over smallest (the ramp
table's "p99 range"), against the bar's 10%. closed: each fixed layout's throughput over its
repeats at every in-flight count, largest over smallest, against the bar's 0.9x.
"""

import collections
import glob
import json
import statistics
import sys


def ramp_rows(f):
    """A ramp table's fixed sizes with a P99 range: (step, rate, size, median P99, least, most)."""
    for line in open(f):
        p = line.split()
        if len(p) >= 8 and p[0].isdigit() and p[2].startswith("pool:") and "-" in p[5]:
            lo, hi = map(float, p[5].split("-"))
            yield int(p[0]), int(p[1]), p[2], float(p[4]), lo, hi


def records(d):
    """A closed-loop dir's records that ran ok: (run, repeat, record), from one-RUN-REP-COUNT.jsonl."""
    for f in glob.glob(d + "/one-*.jsonl"):
        run, rep = f.rsplit("/", 1)[-1].split("-")[1:3]
        for line in open(f):
            r = json.loads(line)
            if r.get("status") == "ok":
                yield run, rep, r


def ramp(paths):
    for f in paths:
        spans, below = [], []
        for _, rate, _, _, lo, hi in ramp_rows(f):
            spans.append(hi / lo)
            if rate <= 20000:
                below.append(hi / lo)
        if not spans:
            print(f"{f}: no fixed size with a P99 range")
            continue
        low = f"{statistics.median(below):.2f}x" if below else "none"
        print(
            f"{f}: fixed sizes' P99, largest over smallest repeat: median {statistics.median(spans):.2f}x"
            f" (steps up to 20k RPC/s: {low}); within 1.1x at"
            f" {sum(s <= 1.1 for s in spans)} of {len(spans)} size-steps"
        )


def closed(dirs):
    for d in dirs:
        tp = collections.defaultdict(list)
        for _, _, r in records(d):
            s = r["spec"]
            if s["conn_mode"] != "pool-auto":
                tp[(s["conn_mode"], s.get("conns_requested"), s["inflight"])].append(r["throughput_rps"])
        spans = [max(v) / min(v) for v in tp.values() if len(v) >= 2]
        if not spans:
            print(f"{d}: no fixed layout with two repeats")
            continue
        print(
            f"{d}: fixed layouts' throughput, largest over smallest repeat: median {statistics.median(spans):.2f}x,"
            f" largest {max(spans):.2f}x; within 1/0.9 = 1.11x at {sum(s <= 1 / 0.9 for s in spans)} of {len(spans)} layout-counts"
        )


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("ramp", "closed"):
        sys.exit(__doc__)
    (ramp if sys.argv[1] == "ramp" else closed)(sys.argv[2:])
