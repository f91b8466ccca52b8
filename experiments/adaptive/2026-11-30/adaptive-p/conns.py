import collections
import glob
import json
import re
import sys

# per in-flight count: pool:auto's connections seen by the kernel and pool sizes over the window, per repeat
d = sys.argv[1]
out = collections.defaultdict(list)
for f in sorted(glob.glob(d + "/one-*.jsonl")):
    m = re.search(r"one-(\d+)-(\d+)-(\d+)\.jsonl", f)
    run, rep, c = map(int, m.groups())
    for line in open(f):
        r = json.loads(line)
        if r.get("kind") != "step" and "spec" not in r:
            continue
        sp = r["spec"]
        if sp.get("conn_mode") != "auto" and "auto" not in json.dumps(sp.get("conn_mode", "")):
            continue
        sizes = [s["size"] for s in r.get("pool_sizes", [])] if r.get("pool_sizes") else []
        out[(run, c)].append((rep, r.get("conns_observed"), sizes))
for k in sorted(out):
    print(
        "run %d, %3d in flight:" % k, "; ".join("rep %d kernel %s sizes %s" % (a, b, c) for a, b, c in sorted(out[k]))
    )
