# Per pool:auto repeat: the warm-up it ran past its settle time (the wait
# on pool.Pool.Settling), when its last resize came before the window, and
# any resize inside the window. Run from this folder: python3 settle.py .
import glob
import json
import re
import sys

d = sys.argv[1] if len(sys.argv) > 1 else "."
SETTLE = {1: 5.0}  # 1 in flight: no climb, the sweep's 5 s; else pool.Rule.SettleTime, 2m7s
rows, late, inside, waits = [], 0, 0, []
for f in sorted(glob.glob(d + "/one-*.jsonl"), key=lambda x: [int(p) for p in re.findall(r"\d+", x.rsplit("/", 1)[1])]):
    run, rep, c = map(int, re.search(r"one-(\d+)-(\d+)-(\d+)\.jsonl", f).groups())
    for line in open(f):
        r = json.loads(line)
        if "spec" not in r or r["spec"].get("conn_mode") != "pool-auto":
            continue
        wu = r["spec"]["warmup_ns"] / 1e9
        wait = wu - SETTLE.get(c, 127.0)
        ev = [l.rstrip("\n").split("\t") for l in open(f[:-6] + "-events.tsv")][1:]
        moves = [e[5] for e in ev if e[8] != "hold"]  # "at s": negative in the warm-up ("-0.0" too)
        before = [float(a) for a in moves if a.startswith("-")]
        during = [float(a) for a in moves if not a.startswith("-")]
        last = max(before) if before else None
        if last is not None and last > -35:
            late += 1
        if during:
            inside += 1
        if c > 1:
            waits.append(wait)
        rows.append(
            "run %d rep %d %2d in flight: warm-up %.1f s (%.1f s past settle), last resize %s, resizes in the window %s, sizes %s"
            % (
                run,
                rep,
                c,
                wu,
                wait,
                "%.0f s before the window" % -last if last is not None else "none",
                len(during),
                [s["size"] for s in r.get("pool_sizes", [])],
            )
        )
print("\n".join(rows))
print(
    "repeats from 2 in flight: %d; waited past settle in %d (at most %.1f s); last resize within 35 s of the window: %d of %d; a resize inside the window: %d"
    % (len(waits), sum(1 for w in waits if w > 0.05), max(waits) if waits else 0, late, len(rows), inside)
)
