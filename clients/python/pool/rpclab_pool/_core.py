# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""What the sync and the aio pool share: docs/pool.md's rules, as code.

The bookkeeping (each channel's state, RPCs in flight, the pick, growth at the
stream limit, the redial of a channel stuck in TRANSIENT_FAILURE) lives in
_Core; the two pools make channels, watch their states and run RPCs.
"""

from __future__ import annotations

import enum
import os
import random
import re
import threading
import time
from collections.abc import Sequence
from typing import Any, Callable

import grpc

try:  # opentelemetry-api is a dependency; without it the metrics are off.
    from opentelemetry import metrics as _otel
except ImportError:  # pragma: no cover
    _otel = None

__version__ = "0.2.0"

MAX_SIZE = 1024
"""The largest size (and max_connections) a pool takes: a process's default
soft limit on open files, the same in all of rpclab's pool libraries."""

DEFAULT_GRACE = 5.0
"""Seconds close() lets RPCs in flight finish before it cancels them."""

DEFAULT_REDIAL_AFTER = 5.0
"""Seconds a channel may stay in TRANSIENT_FAILURE before it is replaced."""

MAX_REDIAL_AFTER = 120.0
"""The redial delay doubles while the target stays down, up to this."""

DEFAULT_IDLE_TIMEOUT = 30.0
"""Seconds a channel added by growth may carry no RPC before it is retired."""

# Makes C-core keep this channel's subchannels in a pool of its own instead of
# the process-wide one, where channels with identical arguments share one
# subchannel (one TCP connection). With it, each channel of the pool connects
# on its own (clients/python/README.md, "Layouts", measured by the
# conformance suite).
LOCAL_SUBCHANNEL_POOL = ("grpc.use_local_subchannel_pool", 1)

_C = grpc.ChannelConnectivity


class _Insecure:
    def __repr__(self):
        return "rpclab_pool.INSECURE"


INSECURE: Any = _Insecure()
"""Pass as credentials= to ask for plaintext channels; there is no default."""


class Policy(enum.Enum):
    """How the pool picks a channel for each RPC (docs/pool.md)."""

    ROUND_ROBIN = "round-robin"
    """The candidate channels in turn."""

    LEAST_LOADED = "least-loaded"
    """Power of two choices: of two candidates drawn at random, the one with
    fewer RPCs in flight."""


def default_size() -> int:
    """The CPUs this process may use, clamped to 2..8 (docs/pool.md)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover: not Linux
        n = os.cpu_count() or 1
    return min(max(n, 2), 8)


_HOSTPORT = re.compile(r"^(?:\[(?P<v6>[^\]]*)\]|(?P<host>[^:]*))(?::(?P<port>[^:]*))?$")


def check_target(target: object) -> str:
    """Returns target, or raises ValueError when it is empty or unparsable
    (docs/pool.md: whitespace or a control character; for no scheme, dns:,
    ipv4: or ipv6:, an empty host or a port not in 1..65535)."""
    if not isinstance(target, str) or not target:
        raise ValueError(f"rpclab_pool: target must be a non-empty string, got {target!r}")
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in target):
        raise ValueError(f"rpclab_pool: target {target!r} has whitespace or a control character")
    scheme, sep, rest = target.partition(":")
    if sep and scheme in ("dns", "ipv4", "ipv6"):
        if rest.startswith("//"):
            rest = rest[2:].split("/", 1)[1] if "/" in rest[2:] else ""
        addrs = rest.split(",") if scheme != "dns" else [rest]
    elif sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme) and not rest[:1].isdigit():
        return target  # another scheme (unix:, xds:, a resolver's): the stack's to judge
    elif target.count(":") > 1 and not target.startswith("["):
        return target  # a bare IPv6 address
    else:
        addrs = [target]
    for addr in addrs:
        m = _HOSTPORT.match(addr)
        host = m and (m.group("v6") if m.group("v6") is not None else m.group("host"))
        port = m and m.group("port")
        if not m or not host:
            raise ValueError(f"rpclab_pool: target {target!r} has an empty host")
        if port is not None and not (port.isdigit() and 1 <= int(port) <= 65535):
            raise ValueError(f"rpclab_pool: target {target!r}: port {port!r} is not a number in 1..65535")
    return target


def check_size(size: object, what: str = "size") -> int:
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"rpclab_pool: {what} must be an int, got {size!r}")
    if size < 1:
        raise ValueError(f"rpclab_pool: {what} must be at least 1, got {size}")
    if size > MAX_SIZE:
        raise ValueError(f"rpclab_pool: {what} {size} is above {MAX_SIZE} (MAX_SIZE)")
    return size


def check_policy(policy: object) -> Policy:
    if isinstance(policy, Policy):
        return policy
    for p in Policy:
        if policy == p.value:
            return p
    want = " or ".join(repr(p.value) for p in Policy)
    raise ValueError(f"rpclab_pool: unknown policy {policy!r} (want {want})")


def check_seconds(value: object, what: str, zero_ok: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise TypeError(f"rpclab_pool: {what} must be a number of seconds, got {value!r}")
    if value < 0 or (value == 0 and not zero_ok):
        raise ValueError(f"rpclab_pool: {what} must be {'at least' if zero_ok else 'above'} 0, got {value}")
    return float(value)


def check_credentials(credentials: object) -> grpc.ChannelCredentials | None:
    """None for INSECURE, else the credentials (docs/pool.md: no default)."""
    if credentials is INSECURE:
        return None
    if not isinstance(credentials, grpc.ChannelCredentials):
        raise TypeError(
            "rpclab_pool: credentials must be grpc.ChannelCredentials or rpclab_pool.INSECURE"
            f" (plaintext, asked for by name), got {credentials!r}"
        )
    return credentials


def channel_options(options: Sequence[tuple[str, object]]) -> list:
    opts = list(options)
    if not any(k == LOCAL_SUBCHANNEL_POOL[0] for k, _ in opts):
        opts.append(LOCAL_SUBCHANNEL_POOL)
    return opts


def usable(state: grpc.ChannelConnectivity | None) -> bool:
    """READY or IDLE (an RPC makes an IDLE channel connect); None, a state
    not reported yet, counts as IDLE."""
    return state is None or state is _C.READY or state is _C.IDLE


def candidates(states: Sequence) -> tuple[int, ...]:
    """The indexes of the channels an RPC may go to: the usable ones when
    there is one, else every channel (where grpcio fails the RPC fast with
    UNAVAILABLE, or holds it for wait_for_ready)."""
    ok = tuple(i for i, s in enumerate(states) if usable(s))
    return ok or tuple(range(len(states)))


def choose(policy: Policy, cands: Sequence[int], inflight: Sequence[int], start: int, rng=random) -> int:
    """The channel for the next RPC among cands.

    ROUND_ROBIN takes the start-th candidate (start is the pool's counter);
    LEAST_LOADED draws two different candidates at random and takes the one
    with fewer RPCs in flight, the first drawn on a tie.
    """
    n = len(cands)
    if policy is Policy.ROUND_ROBIN or n == 1:
        return cands[start % n]
    a = rng.randrange(n)
    b = rng.randrange(n - 1)
    if b >= a:
        b += 1
    i, j = cands[a], cands[b]
    return j if inflight[j] < inflight[i] else i


def pick(policy: Policy, states: Sequence, inflight: Sequence[int], start: int, rng=random) -> int:
    """choose among the candidates of states: the pool's whole pick."""
    return choose(policy, candidates(states), inflight, start, rng)


def aggregate(states: Sequence) -> grpc.ChannelConnectivity:
    """gRPC's round_robin rule: READY if any is, then CONNECTING, then IDLE,
    then TRANSIENT_FAILURE; SHUTDOWN only when every channel is."""
    for want in (_C.READY, _C.CONNECTING, _C.IDLE):
        if any(s is want or (s is None and want is _C.IDLE) for s in states):
            return want
    if states and all(s is _C.SHUTDOWN for s in states):
        return _C.SHUTDOWN
    return _C.TRANSIENT_FAILURE


class _Instruments:
    """docs/pool.md's instruments on one meter (no-ops without a provider)."""

    _cache: dict = {}
    _lock = threading.Lock()

    @classmethod
    def get(cls, meter_provider) -> _Instruments | None:
        if _otel is None:
            return None
        key = id(meter_provider)
        with cls._lock:
            got = cls._cache.get(key)
            if got is None or got.provider is not meter_provider:
                got = cls._cache[key] = cls(meter_provider)
            return got

    def __init__(self, meter_provider):
        self.provider = meter_provider
        meter = _otel.get_meter("rpclab_pool", __version__, meter_provider)
        self.size = meter.create_up_down_counter(
            "rpclab.pool.size", unit="{connection}", description="Channels in the pool."
        )
        self.inflight = meter.create_up_down_counter(
            "rpclab.pool.inflight", unit="{request}", description="RPCs and streams in flight, per channel."
        )
        self.picks = meter.create_counter(
            "rpclab.pool.picks", unit="{pick}", description="RPCs and streams started, per channel."
        )
        self.redials = meter.create_counter(
            "rpclab.pool.redials", unit="{redial}", description="Channels replaced after TRANSIENT_FAILURE."
        )
        self.resizes = meter.create_counter(
            "rpclab.pool.resizes", unit="{resize}", description="Channels added or retired by growth."
        )


class Entry:
    """One channel of the pool and its bookkeeping (guarded by _Core.lock)."""

    __slots__ = ("channel", "index", "state", "inflight", "grown", "idle_since", "tf_since", "delay", "calls", "attrs")

    def __init__(self, channel, index: int, grown: bool, delay: float, target: str):
        self.channel = channel
        self.index = index
        self.state: grpc.ChannelConnectivity | None = None
        self.inflight = 0
        self.grown = grown
        self.idle_since = time.monotonic()
        self.tf_since: float | None = None
        self.delay = delay
        self.calls: dict = {}  # the pool's per-method multi-callables on this channel
        self.attrs = {"rpclab.pool.target": target, "rpclab.pool.connection": index}


class Core:
    """The pool's bookkeeping: picks, in-flight counts, growth, redial.

    make() makes a new channel; retire(channel) closes one the pool no longer
    uses (off the caller's thread where closing blocks). Every method is
    thread-safe; the aio pool calls them from its event loop only.
    """

    def __init__(
        self,
        target: str,
        size: int,
        policy: Policy,
        make: Callable[[], Any],
        retire: Callable[[Any], None],
        max_connections: int | None,
        streams_per_connection: int | None,
        idle_timeout: float,
        redial_after: float,
        meter_provider,
        closed_type: type = ValueError,
    ):
        self.target = target
        self.closed_type = closed_type
        self.size = size
        self.policy = policy
        self.make = make
        self.retire = retire
        self.max = size if max_connections is None else max_connections
        self.limit = streams_per_connection
        self.idle_timeout = idle_timeout
        self.redial_after = redial_after
        # Reentrant: make() runs under it and may subscribe to a channel.
        self.lock = threading.RLock()
        self.drained = threading.Condition(self.lock)  # notified when nothing is in flight
        self.rng = random.Random()
        self.next = 0
        self.closed = False
        self.total = 0
        self.next_index = size
        self.redials = 0
        self.resizes = 0
        self.metrics = _Instruments.get(meter_provider)
        self.base = {"rpclab.pool.target": target}
        self.entries: list[Entry] = []
        self.cands: tuple[int, ...] | None = None  # candidates() of entries' states, cached

    def start(self) -> None:
        """Makes the pool's channels (apart from __init__, so that a state
        callback that comes at once finds the pool whole)."""
        with self.lock:
            self.entries = [Entry(self.make(), i, False, self.redial_after, self.target) for i in range(self.size)]
            self.cands = None
        if self.metrics:
            self.metrics.size.add(self.size, self.base)

    # Called with the lock held.

    def _redial(self, e: Entry, now: float) -> Any | None:
        """Replaces e's channel if it has been in TRANSIENT_FAILURE for its
        delay; returns the old channel to retire."""
        if e.state is not _C.TRANSIENT_FAILURE or e.tf_since is None or now - e.tf_since < e.delay:
            return None
        old = e.channel
        e.channel = self.make()
        e.calls = {}
        e.state = None
        self.cands = None
        e.tf_since = None
        e.delay = min(2 * e.delay, MAX_REDIAL_AFTER)
        self.redials += 1
        if self.metrics:
            self.metrics.redials.add(1, self.base)
        return old

    def _grow(self) -> Entry:
        e = Entry(self.make(), self.next_index, True, self.redial_after, self.target)
        self.next_index += 1
        self.entries.append(e)
        self.cands = None
        self.resizes += 1
        if self.metrics:
            self.metrics.size.add(1, self.base)
            self.metrics.resizes.add(1, {**self.base, "rpclab.pool.direction": "grow"})
        return e

    def _shrink(self, now: float) -> list:
        old = []
        keep = []
        for e in self.entries:
            if e.grown and e.inflight == 0 and now - e.idle_since >= self.idle_timeout:
                old.append(e.channel)
            else:
                keep.append(e)
        if old:
            self.entries = keep
            self.cands = None
            self.resizes += len(old)
            if self.metrics:
                self.metrics.size.add(-len(old), self.base)
                self.metrics.resizes.add(len(old), {**self.base, "rpclab.pool.direction": "shrink"})
        return old

    # Public.

    def set_state(self, channel, state) -> None:
        """Records channel's state (the sync pool's subscription, the aio
        pool's get_state at each pick)."""
        with self.lock:
            for e in self.entries:
                if e.channel is channel:
                    self._note(e, state, time.monotonic())

    def _note(self, e: Entry, state, now: float) -> None:
        if state is e.state:
            return
        if state is _C.TRANSIENT_FAILURE:
            e.tf_since = now
        else:
            e.tf_since = None
            if state is _C.READY:
                e.delay = self.redial_after
        e.state = state
        self.cands = None

    def _candidates(self) -> tuple[int, ...]:
        # Recomputed only after a state or the channels changed.
        if self.cands is None:
            self.cands = candidates([x.state for x in self.entries])
        return self.cands

    def acquire(self, refresh: Callable[[Any], Any] | None = None) -> Entry:
        """Picks a channel for one RPC and counts it in flight; the caller
        calls release(entry) when the RPC ends. refresh(channel), when given,
        reads a channel's state now (the aio pool)."""
        old = []
        now = time.monotonic()
        with self.lock:
            if self.closed:
                raise self.closed_error()
            if refresh is not None:
                for e in self.entries:
                    self._note(e, refresh(e.channel), now)
            for e in self.entries:
                if e.tf_since is not None:
                    ch = self._redial(e, now)
                    if ch is not None:
                        old.append(ch)
            growth = self.max > self.size
            if growth:
                old += self._shrink(now)
            entries = self.entries
            start = self.next
            self.next += 1
            e = None
            if growth and self.limit is not None:
                below = [x for x in entries if x.inflight < self.limit]
                if not below and len(entries) < self.max:
                    e = self._grow()
                elif below and len(below) < len(entries):
                    entries = below
            if e is None:
                if entries is self.entries:
                    cands = self._candidates()
                else:
                    cands = candidates([x.state for x in entries])
                e = entries[choose(self.policy, cands, [x.inflight for x in entries], start, self.rng)]
            e.inflight += 1
            self.total += 1
        for ch in old:
            self.retire(ch)
        if self.metrics:
            self.metrics.picks.add(1, e.attrs)
            self.metrics.inflight.add(1, e.attrs)
        return e

    def release(self, e: Entry, *_) -> None:
        with self.lock:
            e.inflight -= 1
            self.total -= 1
            if e.inflight == 0 and e.grown:
                e.idle_since = time.monotonic()
            if self.total == 0 and self.closed:
                self.drained.notify_all()
        if self.metrics:
            self.metrics.inflight.add(-1, e.attrs)

    def begin_close(self) -> bool:
        """Marks the pool closed; False if it already was."""
        with self.lock:
            if self.closed:
                return False
            self.closed = True
            return True

    def drain(self, grace: float) -> None:
        """Waits until nothing is in flight, or grace seconds."""
        with self.drained:
            self.drained.wait_for(lambda: self.total == 0, grace)

    def finish_close(self) -> list:
        """The channels to close, all of them, taken out of the pool."""
        with self.lock:
            chans = [e.channel for e in self.entries]
            n = len(self.entries)
        if self.metrics:
            self.metrics.size.add(-n, self.base)
        return chans

    def closed_error(self) -> Exception:
        """Use after close: ValueError, what grpcio raises on a closed
        channel (the aio pool raises grpc.aio.UsageError instead)."""
        return self.closed_type(f"rpclab_pool: {self.target}: the pool is closed")

    def snapshot(self) -> list:
        with self.lock:
            return [(e.channel, e.state, e.inflight) for e in self.entries]
