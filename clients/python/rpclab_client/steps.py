# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""The command line, --steps FILE (argparse), and the step spec
(docs/clients.md, "The step spec"): one Step per line of a JSON Lines file,
read with json and validated by jsonschema against schema/step.schema.json,
the one schema, read from the checkout (nothing is copied). Every line is
checked before any step runs; a bad one raises StepError naming the line
and the field, on which parse exits 2."""

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for

# clients/python/rpclab_client/steps.py -> the checkout's schema/.
SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "schema" / "step.schema.json").read_text("utf-8"))
FIELDS = SCHEMA["properties"]
MAX_INFLIGHT = FIELDS["inflight"]["maximum"]
_validator = validator_for(SCHEMA)(SCHEMA)


class StepError(Exception):
    """A bad step: where (file:line), the field (None: the whole line), and why."""

    def __init__(self, where, field, why):
        super().__init__(f"{where}: {field}: {why}" if field else f"{where}: {why}")
        self.field = field
        self.why = why


@dataclass(frozen=True)
class Conn:
    """A connection layout (spec.conn_mode; README.md, "Layouts"): for pool:N
    its size n and pick ("round-robin" or "least-loaded")."""

    mode: str
    n: int = 0
    pick: str = ""

    @classmethod
    def parse(cls, s):
        """The layout of a conn the schema's pattern has matched."""
        mode, _, rest = s.partition(":")
        if mode != "pool":
            return cls(mode)
        n, _, pick = rest.partition(":")
        return cls(mode, int(n), pick or "round-robin")

    def channels(self, inflight):
        """How many channels (so connections, spec.conns_requested) the
        layout makes for inflight workers."""
        return 1 if self.mode == "shared" else self.n if self.mode == "pool" else inflight


@dataclass(frozen=True)
class Step:
    """One step, complete in itself; durations in ns. out "-" is stdout."""

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


def _field(err):
    """The step field a jsonschema error is about (None: the whole line)."""
    if err.path:
        return str(err.path[0])
    if err.validator == "required":
        return next(k for k in err.validator_value if k not in err.instance)
    if err.validator == "additionalProperties":
        return next(k for k in err.instance if k not in FIELDS)
    return None


def from_dict(d, where):
    """The Step of one decoded line, validated against the schema."""
    err = best_match(_validator.iter_errors(d))
    if err is not None:
        raise StepError(where, _field(err), err.message)
    # What the schema cannot say: the layouts and services of this client.
    if d["service"] != "benchmark":
        raise StepError(where, "service", f"{d['service']!r} is not supported by the Python client")
    conn = Conn.parse(d["conn"])
    if conn.n > MAX_INFLIGHT:
        raise StepError(where, "conn", f"a pool of {conn.n} channels is more than {MAX_INFLIGHT}")
    # JSON Schema's integers include 1.0: make them Python ints.
    ints = {k: int(d[k]) for k in ("inflight", "payload_bytes", "warmup_ns", "interval_ns")}
    cpus = d.get("client_cpus")
    return Step(**{**d, **ints, "conn": conn, "client_cpus": tuple(map(int, cpus)) if cpus is not None else None})


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


def _port(v):
    """A TCP port, for --channelz-port."""
    try:
        n = int(v)
    except ValueError:
        n = -1
    if not 1 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"{v} is not a TCP port")
    return n


def _parser():
    p = argparse.ArgumentParser(
        prog="rpclab-client",
        allow_abbrev=False,
        description="rpclab's Python client: closed-loop gRPC load on grpcio, one record per step. "
        "Humans run it through `rpclab sweep --client python`, which writes the steps file.",
        epilog="exit codes: 0 every step ok, 1 a step failed, 2 bad input (flags or steps file)",
    )
    p.add_argument(
        "--steps", required=True, metavar="FILE",
        help="the steps to run: JSON Lines, one step per line (docs/clients.md, schema/step.schema.json)",
    )  # fmt: skip
    p.add_argument(
        "--channelz-port", type=_port, default=0, metavar="PORT",
        help="serve grpcio's channelz (grpc.channelz.v1) on 127.0.0.1:PORT for rpclab doctor --pid --channelz "
        "(needs grpcio-channelz: the package's channelz extra; default: off)",
    )  # fmt: skip
    return p


def channelz_port(argv):
    """The command line's --channelz-port, 0 when not given. Exits 2 on a bad one."""
    return _parser().parse_args(argv).channelz_port


def parse(argv):
    """The steps of the command line's --steps FILE. Exits 2 with argparse's
    error and usage on a bad command line or steps file."""
    p = _parser()
    try:
        return load(p.parse_args(argv).steps)
    except StepError as e:
        p.error(f"argument --steps: {e}")
