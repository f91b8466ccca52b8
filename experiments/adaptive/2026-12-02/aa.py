#!/usr/bin/env python3
"""Issue 27's bars held by a copy of the best fixed layout itself (an A/A check by simulation).

    python3 aa.py closed DIR...  # closed-loop dirs (experiments/adaptive/run.sh, ORDER=process)
    python3 aa.py ramp FILE...   # ramp outputs (experiments/peers/run.sh ramp, 3 repeats)
    python3 aa.py pair A B DIR...  # a measured copy: layout A over layout B, closed-loop dirs

Each bar compares pool:auto's median of three repeats with the best fixed layout's, with a 10%
margin, at every in-flight count (or ramp step), in two runs. This asks how often a candidate
that IS the best fixed layout (the same true throughput, CPU per RPC or P99) would pass, given
the noise the run's own fixed layouts showed between their repeats. If that is rare, a miss of
the bar says nothing about the pool.

closed: per in-flight count, the fixed layouts' log throughput and log client CPU per RPC over
the repeats are split into a layout's mean, a repeat's shift shared by every layout measured in
that repeat's process, and a residual (a two-way table, rows layouts, columns repeats). A
simulated run draws, per count, each repeat's shift and each side's residual (throughput and CPU
as a pair) from the run's own, scaled for the degrees of freedom the split used up; the copy gets
the level of the layout with the highest. It passes a count when its median throughput is at least
0.9x that of the simulated fixed layout with the highest median (as experiments/ratios --best picks the
best) and its median CPU per RPC at most 1.1x that layout's.

ramp: the table gives each fixed size's median P99 and its range over three repeats, which are
the three repeats' values but not which repeat each came from, so repeats are drawn independent
(no shared shift), each step from its own nine residuals (a P99 past capacity is the queue's, which
spreads more than below it): per step the candidate gets the fastest fixed size's P99 and passes within
1.1x of the best simulated median.

Both print, per run, the share of simulated runs in which the copy passes every count (or step)
with 3 repeats as the bar is measured, and with 5 and 9 to show what more repeats would buy; and
how many counts (steps) the copy holds, median and middle 90%, to set beside pool:auto's own.
Fixed seed: the same input prints the same figures.

pair: no model. Layout A's throughput and client CPU per RPC over layout B's at every in-flight
count, the medians' ratio and the ratio within each repeat (the two measured in one process);
with A a copy of B (experiments/adaptive/run.sh AUTO=pool:auto:2:2 beside pool:2) it measures what the
model above draws.
"""

import collections
import math
import random
import statistics
import sys

from spread import ramp_rows, records

SIMS = 4000


def layout(spec):
    """A record's layout as rpclab spells it: shared, pool:N, pool:auto:MIN:MAX."""
    if spec["conn_mode"] == "pool-auto":
        return f"pool:auto:{spec.get('conns_min')}:{spec.get('conns_requested')}"
    return "shared" if spec["conn_mode"] == "shared" else f"pool:{spec.get('conns_requested')}"


def measured(d):
    """A closed-loop dir's records: (run, repeat, in flight, layout, throughput, client CPU per RPC)."""
    for run, rep, r in records(d):
        if r.get("throughput_rps") and r.get("client_cpu_ns_per_rpc"):
            s = r["spec"]
            yield run, rep, s["inflight"], layout(s), r["throughput_rps"], r["client_cpu_ns_per_rpc"]


def simulate(judge):
    """Runs SIMS simulated runs; judge() draws one and says, per count (step), whether the copy
    held the bar. Returns the share of runs held at every one, each one's share, and how many each
    run held."""
    every, per, held = 0, collections.Counter(), []
    for _ in range(SIMS):
        oks = judge()
        every += all(oks.values())
        per.update(u for u, ok in oks.items() if ok)
        held.append(sum(oks.values()))
    return every / SIMS, {u: per[u] / SIMS for u in oks}, held


def spread(held):
    """How many counts (or steps) the copy held: median and the middle 90% of the simulated runs."""
    h = sorted(held)
    return f"median {statistics.median(h):g} (90%: {h[len(h) // 20]}-{h[len(h) * 19 // 20]})"


def two_way(table):
    """table: {row: [v per column]} all of equal length. Returns row means, column shifts, residuals."""
    rows = list(table)
    ncol = len(table[rows[0]])
    grand = statistics.fmean(v for r in rows for v in table[r])
    rmean = {r: statistics.fmean(table[r]) for r in rows}
    cshift = [statistics.fmean(table[r][c] for r in rows) - grand for c in range(ncol)]
    resid = {r: [table[r][c] - rmean[r] - cshift[c] for c in range(ncol)] for r in rows}
    return rmean, cshift, resid


def closed(dirs):
    for d in dirs:
        runs = collections.defaultdict(lambda: collections.defaultdict(dict))
        for run, rep, c, lay, tp, cpu in measured(d):
            if not lay.startswith("pool:auto"):
                # (count, layout) -> {repeat: (log throughput, log cpu per rpc)}
                runs[run][(c, lay)][rep] = (math.log(tp), math.log(cpu))
        for run in sorted(runs):
            closed_run(d if len(runs) == 1 else f"{d} run {run}", runs[run])


def closed_run(d, cell):
    counts = sorted({c for c, _ in cell})
    means, shifts, resids = {}, [], []
    for c in counts:
        lays = [l for (cc, l) in cell if cc == c]
        reps = sorted(set.intersection(*(set(cell[(c, l)]) for l in lays)))
        if len(lays) < 2 or len(reps) < 2:
            continue
        L, R = len(lays), len(reps)
        fy = 1 / math.sqrt((L - 1) * (R - 1) / (L * R))  # residuals' variance, unbiased
        fa = 1 / math.sqrt((R - 1) / R)
        m = {}
        for k in (0, 1):
            rm, cs, rs = two_way({l: [cell[(c, l)][p][k] for p in reps] for l in lays})
            m[k] = (rm, cs, rs)
        means[c] = {l: (m[0][0][l], m[1][0][l]) for l in lays}
        shifts += [(m[0][1][i] * fa, m[1][1][i] * fa) for i in range(R)]
        resids += [(m[0][2][l][i] * fy, m[1][2][l][i] * fy) for l in lays for i in range(R)]
    if not means:
        print(f"{d}: no in-flight count with two fixed layouts over two repeats")
        return
    rnd = random.Random(27)
    sd = statistics.pstdev(e[0] for e in resids)
    sa = statistics.pstdev(a[0] for a in shifts)
    line = [
        f"{d}: {len(means)} counts; a layout's log throughput over its repeats: residual sd {sd:.3f},"
        f" a repeat's shared shift sd {sa:.3f}."
    ]
    for n in (3, 5, 9):

        def judge():
            oks = {}
            for c, mu in means.items():
                best = max(mu, key=lambda l: mu[l][0])
                sides = list(mu) + ["copy"]
                draws = {s: [] for s in sides}
                for _ in range(n):
                    a = rnd.choice(shifts)
                    for s in sides:
                        e = rnd.choice(resids)
                        base = mu[best] if s == "copy" else mu[s]
                        draws[s].append((base[0] + a[0] + e[0], base[1] + a[1] + e[1]))
                med = {
                    s: (statistics.median(v[0] for v in draws[s]), statistics.median(v[1] for v in draws[s]))
                    for s in sides
                }
                top = max(mu, key=lambda l: med[l][0])
                ok = med["copy"][0] >= med[top][0] + math.log(0.9) and med["copy"][1] <= med[top][1] + math.log(1.1)
                oks[c] = ok
            return oks

        p, per, held = simulate(judge)
        each = ", ".join(f"{c}: {per[c]:.2f}" for c in sorted(per))
        line.append(
            f"  {n} repeats: the copy holds every count in {p:.1%} of runs, two runs in a row {p * p:.1%};"
            f" {spread(held)} of {len(means)} counts (per count {each})"
        )
    print("\n".join(line))


def ramp(paths):
    for f in paths:
        steps = collections.defaultdict(dict)  # step -> size -> [log p99 x3]
        for st, _, size, med, lo, hi in ramp_rows(f):
            steps[st][size] = [math.log(lo), math.log(med), math.log(hi)]
        resids = {}  # per step: a P99 past capacity is a queue's, with a spread of its own
        for st, sizes in steps.items():
            resids[st] = [(x - statistics.fmean(v)) * math.sqrt(3 / 2) for v in sizes.values() for x in v]
        if not resids:
            print(f"{f}: no fixed size with a P99 range")
            continue
        rnd = random.Random(27)
        allr = [e for r in resids.values() for e in r]
        line = [
            f"{f}: {len(steps)} steps; a size's log P99 over its repeats: sd {statistics.pstdev(allr):.3f}"
            f" (per step {', '.join(f'{statistics.pstdev(resids[s]):.2f}' for s in sorted(resids))})."
        ]
        for n in (3, 5, 9):

            def judge():
                oks = {}
                for st, sizes in steps.items():
                    mu = {s: statistics.fmean(v) for s, v in sizes.items()}
                    best = min(mu, key=lambda s: statistics.median(sizes[s]))
                    med = {s: statistics.median(mu[s] + rnd.choice(resids[st]) for _ in range(n)) for s in mu}
                    copy = statistics.median(mu[best] + rnd.choice(resids[st]) for _ in range(n))
                    oks[st] = copy <= min(med.values()) + math.log(1.1)
                return oks

            p, per, held = simulate(judge)
            line.append(
                f"  {n} repeats: the copy holds every step in {p:.1%} of runs, two runs in a row {p * p:.2%};"
                f" {spread(held)} of {len(steps)} steps (per step {', '.join(f'{per[s]:.2f}' for s in sorted(per))})"
            )
        print("\n".join(line))


def pair(a, b, dirs):
    for d in dirs:
        v = collections.defaultdict(dict)  # (run, count, layout) -> {repeat: (throughput, cpu per rpc)}
        for run, rep, c, lay, tp, cpu in measured(d):
            v[(run, c, lay)][rep] = (tp, cpu)
        for run in sorted({k[0] for k in v}):
            print(f"{d} run {run}: {a} over {b}; throughput x (CPU per RPC x), medians; then paired within each repeat")
            for c in sorted({k[1] for k in v if k[0] == run}):
                x, y = v.get((run, c, a), {}), v.get((run, c, b), {})
                reps = sorted(set(x) & set(y))
                if not reps:
                    print(f"  {c:>3}: {a} or {b} not measured")
                    continue

                def med(m, k):
                    return statistics.median(m[p][k] for p in reps)

                paired = ", ".join(f"{x[p][0] / y[p][0]:.2f}" for p in reps)
                print(f"  {c:>3} in flight: {med(x, 0) / med(y, 0):.2f} ({med(x, 1) / med(y, 1):.2f}); paired {paired}")


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "pair":
        pair(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) < 3 or sys.argv[1] not in ("ramp", "closed"):
        sys.exit(__doc__)
    else:
        (ramp if sys.argv[1] == "ramp" else closed)(sys.argv[2:])
