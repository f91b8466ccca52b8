# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""One step's result record (docs/results.md, schema/result.schema.json),
written as one JSON line, and the env it carries."""

import json
import os
import platform
import socket
import sys
import time

import grpc
from hdrh.histogram import HdrHistogram

# Histogram geometry shared by every rpclab client: 1 ns .. 100 s, 3 digits.
LOWEST = 1
HIGHEST = 100_000_000_000
DIGITS = 3

# Status code names as the schema spells them (Go's codes), by code value:
# grpcio's names in CamelCase, but for two that Go spells otherwise.
_GO_NAMES = {"OK": "OK", "CANCELLED": "Canceled"}
CODE_NAMES = tuple(
    _GO_NAMES.get(c.name) or c.name.title().replace("_", "") for c in sorted(grpc.StatusCode, key=lambda c: c.value[0])
)
CODES = len(CODE_NAMES)


def new_histogram():
    return HdrHistogram(LOWEST, HIGHEST, DIGITS)


def merge(hists):
    """Merges per-worker histograms into a new one. Empty ones are skipped:
    HdrHistogram_py's add() takes an empty histogram's min as 0."""
    out = new_histogram()
    for h in hists:
        if h.get_total_count() > 0:
            out.add(h)
    return out


def encode(h):
    """The histogram in HdrHistogram's compressed V2 form, base64
    ("HISTFAAA..."), as hdrhistogram-go's Decode reads it."""
    return h.encode().decode("ascii")


def cpu_list(s):
    """Expands a kernel CPU list ("0-2,5"); [] if it is malformed."""
    out = []
    for part in (p.strip() for p in s.split(",")):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            return []
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def rfc3339(ns):
    """RFC 3339 in UTC with nanoseconds, e.g. 2026-11-22T23:01:02.123456789Z."""
    secs, frac = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{frac:09d}Z"


class Env:
    """Which client measured, on what."""

    def __init__(self, grpc_version):
        try:
            with open("/sys/devices/system/cpu/online") as f:
                host = len(cpu_list(f.read().strip()))
        except OSError:
            host = 0
        self.host_cpus = host or os.cpu_count() or 1
        try:
            allowed = sorted(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            allowed = []
        # Pinned only if the affinity is narrower than the machine.
        self.client_cpus = allowed if len(allowed) < self.host_cpus else []
        self.grpc_version = grpc_version
        impl = platform.python_implementation()
        self.runtime = f"{impl} {platform.python_version()} (grpcio sync API, a thread per worker)"

    def to_dict(self, client_cpus=None):
        """The env object; client_cpus (a step's pin) replaces the affinity seen."""
        cpus = list(client_cpus) if client_cpus is not None else self.client_cpus
        d = {
            "language": "python",
            "grpc_impl": "grpcio",
            "grpc_version": self.grpc_version,
            "runtime_version": self.runtime,
            "host_cpus": self.host_cpus,
        }
        if cpus:
            d["client_cpus"] = cpus
        d["hostname"] = socket.gethostname()
        d["os"] = sys.platform
        return d


class Record:
    """One step's result; to_dict is the record as the schema has it."""

    def __init__(self, step):
        self.step = step
        self.status = "ok"
        self.error = ""
        self.started_at_ns = time.time_ns()
        self.unreachable = False
        self.requests = 0
        self.by_code = [0] * CODES
        self.duration_ns = 0
        self.throughput = 0.0
        self.lat = [0] * 6  # min, p50, p90, p99, p99.9, max
        self.mean = 0.0
        self.hdr = ""
        self.cpu_ns = 0
        self.cpu_per_rpc = 0.0

    def fail(self, why):
        self.status = "failed"
        self.error = why

    def fill(self, h, by_code, elapsed_ns, cpu_ns):
        self.by_code = list(by_code)
        self.requests = sum(by_code)
        ok = by_code[0]
        self.duration_ns = elapsed_ns
        if elapsed_ns > 0:
            self.throughput = ok / (elapsed_ns / 1e9)
        if h.get_total_count() > 0:
            self.lat = (
                [h.get_min_value()] + [h.get_value_at_percentile(p) for p in (50, 90, 99, 99.9)] + [h.get_max_value()]
            )
            self.mean = h.get_mean_value()
        self.hdr = encode(h)
        self.cpu_ns = cpu_ns
        if self.requests > 0:
            self.cpu_per_rpc = cpu_ns / self.requests
        if ok == 0:
            if self.requests == 0:
                self.fail("no RPC completed in the interval")
            else:
                self.fail(f"every RPC failed ({self.requests})")

    def summary(self):
        if self.status != "ok":
            return f"{self.status}: {self.error}"
        return f"{self.throughput:.0f} rps, p99 {self.lat[3] / 1e3:.1f} µs, cpu {self.cpu_per_rpc / 1e3:.1f} µs/rpc"

    def to_dict(self, env):
        st = self.step
        mn, p50, p90, p99, p999, mx = self.lat
        return {
            "schema_version": 1,
            "kind": "ping",
            "status": self.status,
            **({"error": self.error} if self.error else {}),
            "started_at": rfc3339(self.started_at_ns),
            "spec": {
                "target": st.target,
                "rpc": st.rpc,
                "conn_mode": st.conn.mode,
                "conns_requested": st.conn.channels(st.inflight),
                **({"pick": st.conn.pick} if st.conn.mode == "pool" else {}),
                "inflight": st.inflight,
                "payload_bytes": st.payload_bytes,
                "warmup_ns": st.warmup_ns,
                "interval_ns": st.interval_ns,
                "load_model": "closed",
            },
            "env": env.to_dict(st.client_cpus),
            "requests": self.requests,
            "errors": {CODE_NAMES[c]: n for c, n in enumerate(self.by_code) if c > 0 and n > 0},
            "duration_ns": self.duration_ns,
            "throughput_rps": round(self.throughput, 3),
            "latency": {
                "min_ns": mn,
                "mean_ns": round(self.mean, 3),
                "p50_ns": p50,
                "p90_ns": p90,
                "p99_ns": p99,
                "p999_ns": p999,
                "p100_ns": mx,
            },
            "histogram_hdr": self.hdr,
            "conns_observed": -1,
            "client_cpu_ns": self.cpu_ns,
            "client_cpu_ns_per_rpc": round(self.cpu_per_rpc, 3),
        }

    def json(self, env):
        return json.dumps(self.to_dict(env), ensure_ascii=False, separators=(",", ":"))
