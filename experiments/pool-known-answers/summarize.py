#!/usr/bin/env python3
# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""One table of the known-answer run: per in-flight count, the RPC/s of
each layout (median over the repeats' records files, with the repeats'
range in brackets), pool:auto:1:8 with the sizes its repeats ended at,
the published policies (with theirs), and pool:auto:1:8's median over
the best fixed size's. Usage: summarize.py anchors.txt records-1.jsonl
[records-2.jsonl ...] (anchors.txt may be empty)."""

import json
import statistics
import sys


def label(s):
    if s["conn_mode"] == "pool-auto":
        return "auto:%d:%d" % (s.get("conns_min", 1), s["conns_requested"])
    if s["conn_mode"] == "pool":
        return "pool:%d" % s["conns_requested"]
    return s["conn_mode"]


def records(paths):
    out = {}  # (inflight, label) -> [(rps, size)]
    for path in paths:
        seen = {}
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                if r.get("kind", "ping") != "ping" or r.get("status") == "failed":
                    continue
                s = r["spec"]
                key = (s["inflight"], label(s))
                size = s.get("conns_requested", 0)
                if s["conn_mode"] == "pool-auto":
                    sizes = r.get("pool_sizes") or [{"size": s.get("conns_min", 1)}]
                    size = sizes[-1]["size"]
                # The same layout twice in one file (an A/A) is two columns.
                seen[key] = seen.get(key, 0) + 1
                if seen[key] > 1:
                    key = (key[0], "%s#%d" % (key[1], seen[key]))
                out.setdefault(key, []).append((r["throughput_rps"], size))
    return out


def anchors(path):
    out = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 10 and p[0].isdigit():
                out[(int(p[0]), p[1])] = [(float(p[2]), int(p[6]))]
    return out


def cell(v, sized):
    rps = [x[0] for x in v]
    text = "%.0f" % statistics.median(rps)
    if len(rps) > 1:
        text += " [%.0f-%.0f]" % (min(rps), max(rps))
    if sized:
        text += " (%s)" % ",".join(str(x[1]) for x in v)
    return text


def main():
    runs = anchors(sys.argv[1])
    runs.update(records(sys.argv[2:]))
    cols = sorted({k[1] for k in runs}, key=lambda c: (not c.startswith("pool:"), not c.startswith("auto"), c))
    print("in flight | " + " | ".join(cols) + " | auto:1:8 / best fixed")
    print("|".join(["---"] * (len(cols) + 2)))
    for n in sorted({k[0] for k in runs}):
        cells, best = [], 0.0
        for c in cols:
            v = runs.get((n, c))
            if v is None:
                cells.append("-")
                continue
            if c.startswith("pool:"):
                best = max(best, statistics.median(x[0] for x in v))
            cells.append(cell(v, not c.startswith("pool:")))
        auto = runs.get((n, "auto:1:8"))
        ratio = "%.2f" % (statistics.median(x[0] for x in auto) / best) if auto and best else "-"
        print("%d | %s | %s" % (n, " | ".join(cells), ratio))


if __name__ == "__main__":
    main()
