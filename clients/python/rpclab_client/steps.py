# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""The step spec (docs/clients.md, "The step spec"; docs/step.schema.json):
one Step per line of a JSON Lines file, read with json and checked whole
before any step runs. A bad line raises StepError naming the line and the
field; main exits 2 on it."""

import json
from dataclasses import dataclass
from typing import Optional

MAX_INFLIGHT = 20000
MAX_PAYLOAD = (4 << 20) - 64
SERVICES = ("benchmark", "ydb-debug")
RPCS = ("unary", "streaming")
# Layouts of a C-core stack; see Conn.
MODES = ("shared", "per-worker", "channel-per-worker", "local-pool", "distinct-args", "pool")


class StepError(Exception):
    """A bad steps file: where (file:line), the field, and what is wrong."""

    def __init__(self, where, field, msg):
        super().__init__(f"{where}: {field}: {msg}" if field else f"{where}: {msg}")
        self.field = field


@dataclass(frozen=True)
class Conn:
    """A connection layout (spec.conn_mode; README.md, "Layouts"), with the
    pool size n for pool:N (round-robin per RPC)."""

    mode: str
    n: int = 0

    def channels(self, inflight):
        """How many channels (so connections, spec.conns_requested) the
        layout makes for inflight workers."""
        return 1 if self.mode == "shared" else self.n if self.mode == "pool" else inflight


def parse_conn(s):
    """Parses a layout as --conn takes it; ValueError says what is wrong."""
    p = s.strip().split(":")
    if p[0] == "pool":
        n = int(p[1]) if len(p) in (2, 3) and p[1].isdigit() else 0
        if n < 1:
            raise ValueError(f"{s!r}: want pool:N with N an integer of at least 1")
        if len(p) == 3 and p[2] != "round-robin":
            raise ValueError(f"{s!r}: the Python client picks round-robin only")
        return Conn("pool", n)
    if p[0] in MODES:
        if len(p) != 1:
            raise ValueError(f"{p[0]!r} takes no size")
        return Conn(p[0])
    raise ValueError(
        f"unknown connection mode {s!r} (want shared, per-worker, "
        "channel-per-worker, local-pool, distinct-args or pool:N)"
    )


@dataclass(frozen=True)
class Step:
    """One step, complete in itself; durations in ns. out "" is stdout."""

    target: str
    service: str
    rpc: str
    conn: Conn
    inflight: int
    payload_bytes: int
    warmup_ns: int
    interval_ns: int
    out: str
    client_cpus: Optional[tuple] = None


def _string(v):
    if not isinstance(v, str):
        return "want a string"
    return None if v else "must not be empty"


def _int_in(lo, hi=None):
    def check(v):
        if not isinstance(v, int) or isinstance(v, bool):
            return f"want an integer, got {json.dumps(v)}"
        if v < lo or (hi is not None and v > hi):
            return f"{v} is outside {lo}..{hi if hi is not None else ''}"
        return None

    return check


def _one_of(choices, supported):
    def check(v):
        if v not in choices:
            return f"want one of {', '.join(choices)}, got {json.dumps(v)}"
        return None if v in supported else f"{v!r} is not supported by the Python client"

    return check


def _conn(v):
    if not isinstance(v, str):
        return "want a string"
    try:
        parse_conn(v)
    except ValueError as e:
        return str(e)
    return None


def _cpus(v):
    if not isinstance(v, list):
        return "want an array of CPU numbers"
    return next((e for e in map(_int_in(0), v) if e), None)


# Each field's check: None if the value is good, else what is wrong.
FIELDS = {
    "target": _string,
    "service": _one_of(SERVICES, ("benchmark",)),
    "rpc": _one_of(RPCS, RPCS),
    "conn": _conn,
    "inflight": _int_in(1, MAX_INFLIGHT),
    "payload_bytes": _int_in(0, MAX_PAYLOAD),
    "warmup_ns": _int_in(0),
    "interval_ns": _int_in(1),
    "client_cpus": _cpus,
    "out": _string,
}
OPTIONAL = ("client_cpus",)


def from_dict(d, where):
    """The Step of one decoded line, checked field by field."""
    if not isinstance(d, dict):
        raise StepError(where, None, "not a JSON object")
    for k in d:
        if k not in FIELDS:
            raise StepError(where, k, "unknown field")
    for k, check in FIELDS.items():
        if k not in d:
            if k in OPTIONAL:
                continue
            raise StepError(where, k, "missing (required)")
        why = check(d[k])
        if why:
            raise StepError(where, k, why)
    cpus = d.get("client_cpus")
    return Step(**{**d, "conn": parse_conn(d["conn"]), "client_cpus": tuple(cpus) if cpus is not None else None})


def load(path):
    """Reads and checks every step of the steps file at path."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except OSError as e:
        raise StepError(path, None, f"cannot read: {e.strerror}") from e
    steps = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{i}"
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            raise StepError(where, None, f"not JSON: {e}") from e
        steps.append(from_dict(d, where))
    if not steps:
        raise StepError(path, None, "no steps")
    return steps
