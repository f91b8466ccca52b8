#!/usr/bin/env python3
# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""One table of the known-answer run: per in-flight count, the RPC/s of
each fixed size, of pool:auto (with the size it ended the interval at), of
the published policies (with theirs), and pool:auto over the best fixed
size. Usage: summarize.py records.jsonl anchors.txt"""

import json
import sys


def fixed_and_auto(path):
    out = {}  # (inflight, label) -> (rps, size)
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("kind", "ping") != "ping" or r.get("status") == "failed":
                continue
            s = r["spec"]
            n = s["inflight"]
            if s["conn_mode"] == "pool-auto":
                sizes = r.get("pool_sizes") or [{"size": s.get("conns_min", 1)}]
                out[(n, "auto")] = (r["throughput_rps"], sizes[-1]["size"])
            elif s["conn_mode"] == "pool":
                out[(n, "pool:%d" % s["conns_requested"])] = (r["throughput_rps"], s["conns_requested"])
    return out


def anchors(path):
    out = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 10 and p[0].isdigit():
                out[(int(p[0]), p[1])] = (float(p[2]), int(p[6]))
    return out


def main():
    runs = fixed_and_auto(sys.argv[1])
    runs.update(anchors(sys.argv[2]))
    cols = ["pool:1", "pool:2", "pool:4", "pool:8", "auto", "spanner", "a105", "yarpc"]
    print("in flight (= right size) | " + " | ".join(cols) + " | auto / best fixed")
    print("|".join(["---"] * (len(cols) + 2)))
    for n in sorted({k[0] for k in runs}):
        cells, best = [], 0.0
        for c in cols:
            v = runs.get((n, c))
            if v is None:
                cells.append("-")
                continue
            if c.startswith("pool:"):
                best = max(best, v[0])
                cells.append("%.0f" % v[0])
            else:
                cells.append("%.0f (%d conns)" % v)
        auto = runs.get((n, "auto"))
        ratio = "%.2f" % (auto[0] / best) if auto and best else "-"
        print("%d | %s | %s" % (n, " | ".join(cells), ratio))


if __name__ == "__main__":
    main()
