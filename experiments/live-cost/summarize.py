#!/usr/bin/env python3
# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""The table of a live-cost run: per arm the client's RPC/s and CPU per
RPC (median and range over the rounds), the ratios on/off and off2/off
(the A/A) per round with their medians and ranges, and what the sampler
itself used. Usage: summarize.py OUT"""

import json
import os
import statistics
import sys


def steps(path):
    out = []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("kind") == "ping" and r.get("status") == "ok":
                out.append((r["throughput_rps"], r["client_cpu_ns_per_rpc"] / 1e3))
    return out


def spread(xs):
    return "%.3f [%.3f, %.3f]" % (statistics.median(xs), min(xs), max(xs))


def main():
    d = sys.argv[1]
    arms = {a: steps(os.path.join(d, a + ".jsonl")) for a in ("off", "on", "off2")}
    n = min(len(v) for v in arms.values())
    print("arm   rounds  RPC/s median [min, max]      client CPU µs/RPC median [min, max]")
    for a, v in arms.items():
        print("%-5s %6d  %-28s %s" % (a, len(v), spread([x[0] for x in v]), spread([x[1] for x in v])))
    for num, label in (("on", "on/off (sampling)"), ("off2", "off2/off (A/A)")):
        rps = [arms[num][i][0] / arms["off"][i][0] for i in range(n)]
        cpu = [arms[num][i][1] / arms["off"][i][1] for i in range(n)]
        print("%-18s RPC/s %s   CPU/RPC %s" % (label, spread(rps), spread(cpu)))
    live = os.path.join(d, "live.jsonl")
    if os.path.exists(live):
        use = []
        with open(live) as f:
            for line in f:
                r = json.loads(line)
                if r.get("duration_ns"):
                    use.append(100.0 * r.get("sampler_cpu_ns", 0) / r["duration_ns"])
        if use:
            print("sampler: %s%% of one CPU over its windows (median [min, max])" % spread(use))


if __name__ == "__main__":
    main()
