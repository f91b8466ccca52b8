# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""The command line (docs/clients.md): --steps FILE, or the human flags,
which build the same Steps. Parsed by argparse: a bad flag gets its error
and usage, exit 2."""

import argparse
import re
from dataclasses import dataclass

from rpclab_client import steps as st

# The flags a sweep is made of; none goes with --steps.
SWEEP = "target inflight min_inflight max_inflight step conn rpc payload warmup interval out".split()

# The flag of each step field.
FLAGS = {k: f"--{k}" for k in ("target", "rpc", "conn", "inflight")}
FLAGS.update(payload_bytes="--payload", warmup_ns="--warmup", interval_ns="--interval")

_UNITS = {"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}
_DURATION = re.compile(r"(?:(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h))+")
_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def go_duration(s):
    """Parses a duration as Go's time.ParseDuration does ("1m0s", "1.5s",
    "300ms", "0") into ns; Python's standard library has no such parser."""
    v = s.strip().lstrip("+")
    if v in ("0", "-0"):
        return 0
    if not _DURATION.fullmatch(v):
        raise argparse.ArgumentTypeError(f"invalid duration {s!r} (want e.g. 500ms, 2s, 1m)")
    ns = sum(float(n) * _UNITS[u] for n, u in _PART.findall(v))
    if ns >= 2**63:
        raise argparse.ArgumentTypeError(f"duration {s!r} is too long")
    return int(round(ns))


def _list(item):
    def parse(v):
        parts = [p.strip() for p in v.split(",")]
        if not all(parts):
            raise argparse.ArgumentTypeError(f"empty item in {v!r}")
        return [item(p) for p in parts]

    return parse


@dataclass(frozen=True)
class Options:
    """How every step runs, beyond the step spec."""

    dial_timeout_ns: int = 5_000_000_000
    rpc_timeout_ns: int = 0  # deadline of each RPC (each ping-pong on a stream); 0: none


def parser():
    p = argparse.ArgumentParser(
        prog="rpclab-client",
        allow_abbrev=False,
        description="rpclab's Python client: a closed-loop sweep on grpcio (docs/clients.md)",
        epilog="durations in Go syntax (500ms, 2s, 1m); lists are comma-separated",
    )
    a = p.add_argument
    a("--steps", metavar="FILE", help="run the steps of this JSON Lines file (docs/step.schema.json)")
    a("--target", metavar="HOST:PORT", help="the server (required without --steps)")
    a("--inflight", type=_list(int), metavar="1,2,4", help="in-flight counts (default 1,2,4,8,16,32)")
    a("--min-inflight", type=int, metavar="A")
    a("--max-inflight", type=int, metavar="B")
    a("--step", type=int, metavar="S")
    a("--conn", type=_list(str), metavar="LAYOUTS", help="default shared,per-worker; pool:N[:least-loaded]")
    a("--rpc", type=_list(str), metavar="unary,streaming", help="default unary")
    a("--payload", type=int, metavar="BYTES", help="default 0")
    a("--warmup", type=go_duration, metavar="DUR", help="default 1s")
    a("--interval", type=go_duration, metavar="DUR", help="default 3s")
    a("--dial-timeout", type=go_duration, default=5_000_000_000, metavar="DUR", help="default 5s")
    a("--rpc-timeout", type=go_duration, default=0, metavar="DUR", help="default none")
    a("--out", "-o", metavar="FILE", help="JSON Lines output (default stdout)")
    return p


def parse(argv):
    """(steps, options, truncate): the steps to run, how, and the --out
    file a human command line starts afresh (None with --steps, which
    appends). Exits 2 with usage on a bad command line or steps file."""
    p = parser()
    a = p.parse_args(argv)
    if a.dial_timeout <= 0:
        p.error("argument --dial-timeout: must be positive")
    opts = Options(a.dial_timeout, a.rpc_timeout)
    if a.steps is not None:
        given = [f"--{k.replace('_', '-')}" for k in SWEEP if getattr(a, k) is not None]
        if given:
            p.error(f"argument --steps: not allowed with {', '.join(given)}")
        try:
            return st.load(a.steps), opts, None
        except st.StepError as e:
            p.error(f"argument --steps: {e}")
    if a.target is None:
        p.error("argument --target: required (HOST:PORT) without --steps")
    ranged = (a.min_inflight, a.max_inflight, a.step) != (None, None, None)
    if a.inflight is not None and ranged:
        p.error("argument --inflight: give a list or --min-inflight/--max-inflight, not both")
    inflight = a.inflight or [1, 2, 4, 8, 16, 32]
    if ranged:
        lo = 1 if a.min_inflight is None else a.min_inflight
        hi = lo if a.max_inflight is None else a.max_inflight
        step = 1 if a.step is None else a.step
        if not (1 <= lo <= hi <= st.MAX_INFLIGHT and step >= 1):
            p.error(f"argument --min-inflight/--max-inflight/--step: want 1 <= A <= B <= {st.MAX_INFLIGHT}, S >= 1")
        inflight = range(lo, hi + 1, step)
    # Each step is checked as a steps file's line is, by the schema.
    steps = []
    for rpc in a.rpc or ["unary"]:
        for conn in a.conn or ["shared", "per-worker"]:
            for n in inflight:
                d = {"target": a.target.strip(), "service": "benchmark", "rpc": rpc, "conn": conn, "inflight": n,
                     "payload_bytes": a.payload or 0, "warmup_ns": 10**9 if a.warmup is None else a.warmup,
                     "interval_ns": 3 * 10**9 if a.interval is None else a.interval, "out": a.out or "-"}  # fmt: skip
                try:
                    steps.append(st.from_dict(d, "the command line"))
                except st.StepError as e:
                    p.error(f"argument {FLAGS[e.field]}: {e.why}")
    return steps, opts, a.out or None
