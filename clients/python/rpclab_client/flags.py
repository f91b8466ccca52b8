# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""The flags of docs/clients.md, parsed and checked as rpclab's own sweep
checks them. A bad flag raises Usage naming the flag; main exits 2 on it."""

import re
from dataclasses import dataclass, field

MAX_INFLIGHT = 20000
MAX_PAYLOAD = (4 << 20) - 64

USAGE = """usage: rpclab-client --target HOST:PORT [--inflight 1,2,4 | --min-inflight A --max-inflight B [--step S]]
  [--conn shared,per-worker,channel-per-worker,local-pool,distinct-args,pool:N] [--rpc unary,streaming]
  [--payload BYTES] [--warmup DUR] [--interval DUR] [--dial-timeout DUR] [--rpc-timeout DUR] [--out FILE]
durations in Go syntax (500ms, 2s, 1m); see docs/clients.md"""

# Layouts of a C-core stack; see Conn.
MODES = ("shared", "per-worker", "channel-per-worker", "local-pool", "distinct-args", "pool")


class Usage(Exception):
    """A bad flag value: the flag's name and what is wrong."""

    def __init__(self, flag, msg):
        super().__init__(f"{flag}: {msg}")
        self.flag = flag
        self.msg = msg


@dataclass(frozen=True)
class Conn:
    """A connection layout (spec.conn_mode), with the pool size for pool:N.

    shared: one channel for every worker.
    per-worker: a channel per worker with grpc.use_local_subchannel_pool=1
      (so each really opens its own connection).
    channel-per-worker: a channel per worker with identical arguments: C-core's
      global subchannel pool hands them all one connection (the trap).
    local-pool: a channel per worker with grpc.use_local_subchannel_pool=1.
    distinct-args: a channel per worker with a unique channel argument.
    pool: n channels (each with its own connection), round-robin per RPC.
    """

    mode: str
    n: int = 0

    def channels(self, inflight):
        """How many channels the layout makes for inflight workers."""
        if self.mode == "shared":
            return 1
        if self.mode == "pool":
            return self.n
        return inflight

    def conns(self, inflight):
        """Connections the layout asks for (spec.conns_requested)."""
        return self.channels(inflight)


@dataclass
class Flags:
    target: str = ""
    inflight: list = field(default_factory=list)
    conns: list = field(default_factory=list)
    rpcs: list = field(default_factory=lambda: ["unary"])
    payload: int = 0
    warmup_ns: int = 1_000_000_000
    interval_ns: int = 3_000_000_000
    dial_timeout_ns: int = 5_000_000_000
    # Deadline of each RPC (each ping-pong on a stream); 0: none.
    rpc_timeout_ns: int = 0
    out: str = ""


def parse(args):
    """Parses the command line (without the program name) into Flags."""
    f = Flags()
    lst = lo = hi = step = None
    conns = "shared,per-worker"
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("-"):
            raise Usage(a, "unexpected argument (flags only, see --help)")
        name = a.lstrip("-")
        if name in ("help", "h"):
            raise Usage("--help", USAGE)
        if "=" in name:
            name, value = name.split("=", 1)
        else:
            i += 1
            if i >= len(args):
                raise Usage(f"--{name}", "needs a value")
            value = args[i]
        flag = f"--{name}"
        if name == "target":
            f.target = value.strip()
        elif name == "inflight":
            lst = value
        elif name == "min-inflight":
            lo = _int(flag, value)
        elif name == "max-inflight":
            hi = _int(flag, value)
        elif name == "step":
            step = _int(flag, value)
        elif name == "conn":
            conns = value
        elif name == "rpc":
            f.rpcs = _items(flag, value)
        elif name == "payload":
            f.payload = _int(flag, value)
        elif name == "warmup":
            f.warmup_ns = go_duration(flag, value)
        elif name == "interval":
            f.interval_ns = go_duration(flag, value)
        elif name == "dial-timeout":
            f.dial_timeout_ns = go_duration(flag, value)
        elif name == "rpc-timeout":
            f.rpc_timeout_ns = go_duration(flag, value)
        elif name in ("out", "o"):
            f.out = value
        else:
            raise Usage(flag, "unknown flag")
        i += 1

    if not f.target:
        raise Usage("--target", "required (HOST:PORT)")
    if lst is not None and (lo is not None or hi is not None or step is not None):
        raise Usage("--inflight", "give a list or --min-inflight/--max-inflight, not both")
    if lst is not None:
        f.inflight = [_int("--inflight", s) for s in _items("--inflight", lst)]
    elif lo is not None or hi is not None:
        lo = 1 if lo is None else lo
        hi = lo if hi is None else hi
        step = 1 if step is None else step
        if lo < 1:
            raise Usage("--min-inflight", f"must be at least 1, got {lo}")
        if hi < lo:
            raise Usage("--max-inflight", f"{hi} is below --min-inflight {lo}")
        if step < 1:
            raise Usage("--step", f"must be at least 1, got {step}")
        if hi > MAX_INFLIGHT:
            raise Usage("--max-inflight", f"{hi} is above {MAX_INFLIGHT}")
        f.inflight = list(range(lo, hi + 1, step))
    else:
        f.inflight = [1, 2, 4, 8, 16, 32]
    for n in f.inflight:
        if not 1 <= n <= MAX_INFLIGHT:
            raise Usage("--inflight", f"{n} is outside 1..{MAX_INFLIGHT}")
    f.conns = [parse_conn(c) for c in _items("--conn", conns)]
    for r in f.rpcs:
        if r not in ("unary", "streaming"):
            raise Usage("--rpc", f"unknown RPC kind {r!r} (want unary or streaming)")
    if f.payload > MAX_PAYLOAD:
        raise Usage("--payload", f"{f.payload} is outside 0..{MAX_PAYLOAD} bytes (gRPC's default 4 MiB message limit)")
    if f.interval_ns <= 0:
        raise Usage("--interval", "must be positive")
    if f.dial_timeout_ns <= 0:
        raise Usage("--dial-timeout", "must be positive")
    return f


def parse_conn(s):
    p = s.strip().split(":")
    want = "want shared, per-worker, channel-per-worker, local-pool, distinct-args or pool:N"
    if p[0] == "pool":
        n = int(p[1]) if len(p) == 2 and p[1].isdigit() else 0
        if n < 1:
            raise Usage("--conn", f"{s!r}: want pool:N with N an integer of at least 1")
        return Conn("pool", n)
    if p[0] in MODES:
        if len(p) != 1:
            raise Usage("--conn", f"{p[0]!r} takes no size")
        return Conn(p[0])
    raise Usage("--conn", f"unknown connection mode {s!r} ({want})")


def _items(flag, v):
    out = [s.strip() for s in v.split(",")]
    if any(not s for s in out):
        raise Usage(flag, f"empty item in {v!r}")
    return out


def _int(flag, v):
    v = v.strip()
    if not v.isdigit():
        raise Usage(flag, f"{v!r} is not a non-negative integer")
    return int(v)


_UNITS = {"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}
_PART = re.compile(r"([0-9]*\.?[0-9]*)([^0-9.]*)")


def go_duration(flag, s):
    """Parses a duration as Go's time.ParseDuration does ("1m0s", "1.5s",
    "300ms") into nanoseconds."""
    v = s.strip()
    bad = Usage(flag, f"invalid duration {s!r} (want e.g. 500ms, 2s, 1m)")
    if v.startswith("-"):
        if v[1:] == "0":
            return 0
        raise Usage(flag, f"negative duration {s!r}")
    if v.startswith("+"):
        v = v[1:]
    if v == "0":
        return 0
    if not v:
        raise bad
    total = 0.0
    pos = 0
    while pos < len(v):
        m = _PART.match(v, pos)
        num, unit = m.group(1), m.group(2)
        if num in ("", ".") or unit not in _UNITS:
            raise bad
        total += float(num) * _UNITS[unit]
        pos = m.end()
    if total >= 2**63:
        raise Usage(flag, f"duration {s!r} is too long")
    return int(round(total))
