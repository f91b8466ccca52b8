import re
import statistics as S
import sys

rows = {}
conns = {}
for f in sys.argv[1:]:
    for l in open(f):
        m = re.match(r"rep (\d+) inflight (\d+) (\S+)\s+(\d+) rpc/s\s+cpu\s+([\d.]+) µs/rpc\s+conns (\d+)", l)
        if not m:
            continue
        rep, n, lay, rps, cpu, c = m.groups()
        n = int(n)
        lay = "pool:auto" if lay.startswith("pool:auto") else lay
        rows.setdefault((n, lay), []).append((float(rps), float(cpu)))
        if lay == "pool:auto":
            conns.setdefault(n, []).append(c)
print(
    "inflight  shared rps/cpu   pool:2 rps/cpu   pool:auto rps/cpu  auto conns  auto/best  cpu x  holds  auto/shared per repeat"
)
for n in sorted(set(k[0] for k in rows)):
    med = {
        l: (S.median([x[0] for x in rows[(n, l)]]), S.median([x[1] for x in rows[(n, l)]]))
        for l in ("shared", "pool:2", "pool:auto")
    }
    best = max(("shared", "pool:2"), key=lambda l: med[l][0])
    tp = med["pool:auto"][0] / med[best][0]
    c = med["pool:auto"][1] / med[best][1]
    h = tp >= 1 or (tp >= 0.9 and c <= 1.1)
    per = [a[0] / s[0] for a, s in zip(rows[(n, "pool:auto")], rows[(n, "shared")])]
    print(
        f"{n:<9} {med['shared'][0]:6.0f}/{med['shared'][1]:5.1f}   {med['pool:2'][0]:6.0f}/{med['pool:2'][1]:5.1f}   {med['pool:auto'][0]:6.0f}/{med['pool:auto'][1]:5.1f}       {','.join(conns[n]):9}   {tp:.2f} ({best})  {c:.2f}  {'yes' if h else 'no'}   {' '.join('%.2f' % x for x in per)}"
    )
