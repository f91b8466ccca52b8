# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""ChannelPool: grpcio channels behind the grpc.Channel interface."""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Sequence
from typing import Any, Callable

import grpc

from rpclab_pool import _core
from rpclab_pool._core import DEFAULT_GRACE, DEFAULT_IDLE_TIMEOUT, DEFAULT_REDIAL_AFTER, Policy

_LOGGER = logging.getLogger(__name__)

_C = grpc.ChannelConnectivity


class ChannelPool(grpc.Channel):
    """size grpcio channels to one target, each with its own TCP connection.

    A ChannelPool is a grpc.Channel: a generated FooStub(pool) works
    unchanged, and each RPC goes to the channel the policy picks (a stream
    stays on the channel it was opened on). Construction does not block or
    wait for the target: the channels start connecting in the background, and
    connect() waits for them. Thread-safe. The rules (size, picks, in flight,
    skipped states, redial, close, growth, metrics) are docs/pool.md's.

    target: a gRPC target, checked (ValueError when empty or unparsable).
    size: the number of channels, 1..MAX_SIZE; None: default_size(), the
    CPUs this process may use clamped to 2..8.
    credentials: grpc.ChannelCredentials, or INSECURE for plaintext; there
    is no default.
    policy: Policy or its value, "round-robin" (the default) or
    "least-loaded" (power of two choices).
    options, compression: those of grpc.secure_channel, given to every
    channel, plus grpc.use_local_subchannel_pool=1 unless options set it.
    max_connections, streams_per_connection: growth at the server's stream
    limit, off unless max_connections is above size: when every channel
    carries streams_per_connection RPCs, the pool adds a channel (up to
    max_connections), and retires an added one idle for idle_timeout seconds.
    redial_after: seconds a channel may stay in TRANSIENT_FAILURE before the
    pool replaces it (checked at each pick; doubles while the target stays
    down, up to 120).
    meter_provider: an OpenTelemetry MeterProvider for the pool's metrics;
    None: the global one (a no-op unless the application installs one).
    """

    def __init__(
        self,
        target: str,
        size: int | None = None,
        *,
        credentials: Any,
        policy: Any = Policy.ROUND_ROBIN,
        options: Sequence[tuple[str, Any]] = (),
        compression: grpc.Compression | None = None,
        max_connections: int | None = None,
        streams_per_connection: int | None = None,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        redial_after: float = DEFAULT_REDIAL_AFTER,
        meter_provider: Any = None,
    ):
        core = _check(
            target, size, credentials, policy, max_connections, streams_per_connection, idle_timeout, redial_after
        )
        creds = _core.check_credentials(credentials)
        opts = _core.channel_options(options)
        if creds is None:
            self._new = functools.partial(grpc.insecure_channel, target, opts, compression)
        else:
            self._new = functools.partial(grpc.secure_channel, target, creds, opts, compression)
        self._target = target
        self._watchers: dict[int, tuple[grpc.Channel, Callable]] = {}
        self._retiring: list[threading.Thread] = []
        self._subscribers: list[list] = []  # [callback, last state delivered]
        self._delivering = False  # a thread is calling subscribers back
        self._core = _core.Core(
            target,
            core["size"],
            core["policy"],
            self._make,
            self._retire,
            max_connections,
            streams_per_connection,
            idle_timeout,
            redial_after,
            meter_provider,
        )
        self._changed = threading.Condition(self._core.lock)  # a channel's state changed
        self._core.start()

    def _make(self) -> grpc.Channel:
        ch = self._new()
        watch = functools.partial(self._on_state, ch)
        self._watchers[id(ch)] = (ch, watch)
        ch.subscribe(watch, try_to_connect=True)
        return ch

    def _close_channel(self, ch: grpc.Channel) -> None:
        got = self._watchers.pop(id(ch), None)
        if got is not None:
            ch.unsubscribe(got[1])
        ch.close()

    def _retire(self, ch: grpc.Channel) -> None:
        # grpcio's close of a subscribed channel waits for its connectivity
        # poller (up to 0.2 s): off the RPC's thread.
        t = threading.Thread(target=self._close_channel, args=(ch,), name="rpclab_pool-retire", daemon=True)
        with self._core.lock:
            self._retiring = [x for x in self._retiring if x.is_alive()]
            self._retiring.append(t)
        t.start()

    @property
    def channels(self) -> tuple[grpc.Channel, ...]:
        """The pool's channels now, in the order of their index."""
        return tuple(ch for ch, _, _ in self._core.snapshot())

    @property
    def policy(self) -> Policy:
        return self._core.policy

    @property
    def redials(self) -> int:
        """Channels replaced after TRANSIENT_FAILURE so far."""
        return self._core.redials

    @property
    def resizes(self) -> int:
        """Channels added or retired by growth so far."""
        return self._core.resizes

    def inflight(self) -> tuple[int, ...]:
        """The RPCs in flight on each channel now."""
        return tuple(n for _, _, n in self._core.snapshot())

    def states(self) -> tuple[grpc.ChannelConnectivity | None, ...]:
        """Each channel's last reported state (None: none reported yet)."""
        return tuple(s for _, s, _ in self._core.snapshot())

    def connect(self, timeout: float | None = None) -> None:
        """Makes every channel connect and waits until each is READY.

        Raises grpc.FutureTimeoutError when one is not READY after timeout
        seconds (None: no bound), and ValueError once the pool is closed.
        """
        self._kick_idle()
        core = self._core
        with self._changed:
            ok = self._changed.wait_for(lambda: core.closed or all(e.state is _C.READY for e in core.entries), timeout)
            if core.closed:
                raise core.closed_error()
            if not ok:
                states = ", ".join(e.state.name if e.state else "UNKNOWN" for e in core.entries)
                raise grpc.FutureTimeoutError(
                    f"rpclab_pool: {self._target}: channels not all READY after {timeout}s: {states}"
                )

    def _kick_idle(self) -> None:
        for ch, state, _ in self._core.snapshot():
            if state is _C.IDLE:
                _kick(ch)

    def _on_state(self, channel: grpc.Channel, state: grpc.ChannelConnectivity) -> None:
        with self._changed:
            self._core.set_state(channel, state)
            self._changed.notify_all()
        self._notify()

    def _notify(self) -> None:
        # As grpcio delivers a channel's state: one thread at a time calls
        # subscribers back, holding no lock while it does, and looks again
        # until none is due; a thread that finds a delivery under way leaves
        # its part to it. A subscriber may hold its own lock while it
        # subscribes (grpc.channel_ready_future does), so waiting here for a
        # delivery that calls it back would deadlock.
        core = self._core
        with core.lock:
            if self._delivering:
                return
            self._delivering = True
        while True:
            with core.lock:
                agg = _core.aggregate([e.state for e in core.entries])
                due = []
                for sub in self._subscribers:
                    if sub[1] is not agg:
                        sub[1] = agg
                        due.append(sub[0])
                if not due:
                    self._delivering = False
                    return
            for callback in due:
                try:
                    callback(agg)
                except Exception:  # as grpcio does: a bad callback stops no other
                    _LOGGER.exception("rpclab_pool: a connectivity callback raised")

    # grpc.Channel

    def subscribe(self, callback: Callable[[grpc.ChannelConnectivity], None], try_to_connect: bool = False) -> None:
        """Calls callback with the pool's state now and at each change: READY
        when a channel is READY, else CONNECTING when one is, else IDLE, else
        TRANSIENT_FAILURE (gRPC's round_robin rule), so
        grpc.channel_ready_future(pool) works."""
        if try_to_connect:
            self._kick_idle()
        with self._core.lock:
            self._subscribers.append([callback, None])
        self._notify()

    def unsubscribe(self, callback: Callable[[grpc.ChannelConnectivity], None]) -> None:
        with self._core.lock:
            for i, (cb, _) in enumerate(self._subscribers):
                if cb == callback:
                    del self._subscribers[i]
                    break

    def unary_unary(self, method, request_serializer=None, response_deserializer=None, **kwargs):
        return _UnaryUnary(self._core, "unary_unary", (method, request_serializer, response_deserializer), kwargs)

    def unary_stream(self, method, request_serializer=None, response_deserializer=None, **kwargs):
        return _UnaryStream(self._core, "unary_stream", (method, request_serializer, response_deserializer), kwargs)

    def stream_unary(self, method, request_serializer=None, response_deserializer=None, **kwargs):
        return _StreamUnary(self._core, "stream_unary", (method, request_serializer, response_deserializer), kwargs)

    def stream_stream(self, method, request_serializer=None, response_deserializer=None, **kwargs):
        return _StreamStream(self._core, "stream_stream", (method, request_serializer, response_deserializer), kwargs)

    def close(self, grace: float | None = DEFAULT_GRACE) -> None:
        """Stops taking RPCs (new ones raise ValueError), lets those in flight
        finish for up to grace seconds (None or 0: none), then closes every
        channel at once; RPCs still in flight end with CANCELLED. A second
        close returns at once."""
        if grace is not None:
            grace = _core.check_seconds(grace, "grace", zero_ok=True)
        core = self._core
        if not core.begin_close():
            return
        with self._changed:
            self._subscribers.clear()
            self._changed.notify_all()
        if grace:
            core.drain(grace)
        chans = core.finish_close()
        # Together: grpcio's close of a subscribed channel waits for its
        # connectivity poller, up to 0.2 s each.
        closers = [threading.Thread(target=self._close_channel, args=(ch,), daemon=True) for ch in chans]
        for t in closers:
            t.start()
        with core.lock:
            closers += self._retiring
        for t in closers:
            t.join()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
        return False

    def __repr__(self):
        core = self._core
        return f"ChannelPool({self._target!r}, {core.size}, policy={core.policy.value!r})"


def _check(
    target, size, credentials, policy, max_connections, streams_per_connection, idle_timeout, redial_after
) -> dict:
    """Every argument's check, shared by the sync and the aio pool."""
    _core.check_target(target)
    size = _core.default_size() if size is None else _core.check_size(size)
    policy = _core.check_policy(policy)
    _core.check_credentials(credentials)
    if max_connections is not None:
        _core.check_size(max_connections, "max_connections")
        if max_connections < size:
            raise ValueError(f"rpclab_pool: max_connections {max_connections} is below size {size}")
        if max_connections > size and streams_per_connection is None:
            raise ValueError(
                "rpclab_pool: max_connections needs streams_per_connection"
                " (grpcio does not expose the server's SETTINGS)"
            )
    if streams_per_connection is not None:
        _core.check_size(streams_per_connection, "streams_per_connection")
    _core.check_seconds(idle_timeout, "idle_timeout")
    _core.check_seconds(redial_after, "redial_after")
    return {"size": size, "policy": policy}


def _nothing(_state) -> None:
    pass


def _kick(channel: grpc.Channel) -> None:
    # grpcio's public way to make an IDLE channel connect: a subscription with
    # try_to_connect sets a flag its connectivity poller acts on (at most
    # 0.2 s later), and that flag outlives the subscription.
    channel.subscribe(_nothing, try_to_connect=True)
    channel.unsubscribe(_nothing)


class _Calls:
    """A method's multi-callable, made on each channel as the pool picks it."""

    def __init__(self, core: _core.Core, kind: str, args: tuple, kwargs: dict):
        self._core = core
        self._kind = kind
        self._args = args
        self._kwargs = kwargs

    def _on(self, e: _core.Entry):
        c = e.calls.get(self)
        if c is None:
            c = e.calls[self] = getattr(e.channel, self._kind)(*self._args, **self._kwargs)
        return c

    def _blocking(self, name, args, kwargs):
        e = self._core.acquire()
        try:
            return getattr(self._on(e), name)(*args, **kwargs)
        finally:
            self._core.release(e)

    def _future(self, args, kwargs):
        e = self._core.acquire()
        try:
            f = self._on(e).future(*args, **kwargs)
        except BaseException:
            self._core.release(e)
            raise
        f.add_done_callback(functools.partial(self._core.release, e))
        return f

    def _stream(self, args, kwargs):
        # A response-streaming call is in flight until it terminates.
        e = self._core.acquire()
        try:
            call = self._on(e)(*args, **kwargs)
        except BaseException:
            self._core.release(e)
            raise
        if not call.add_callback(functools.partial(self._core.release, e)):
            self._core.release(e)  # already over
        return call


class _UnaryUnary(_Calls, grpc.UnaryUnaryMultiCallable):
    def __call__(self, *args, **kwargs):
        return self._blocking("__call__", args, kwargs)

    def with_call(self, *args, **kwargs):
        return self._blocking("with_call", args, kwargs)

    def future(self, *args, **kwargs):
        return self._future(args, kwargs)


class _StreamUnary(_Calls, grpc.StreamUnaryMultiCallable):
    def __call__(self, *args, **kwargs):
        return self._blocking("__call__", args, kwargs)

    def with_call(self, *args, **kwargs):
        return self._blocking("with_call", args, kwargs)

    def future(self, *args, **kwargs):
        return self._future(args, kwargs)


class _UnaryStream(_Calls, grpc.UnaryStreamMultiCallable):
    def __call__(self, *args, **kwargs):
        return self._stream(args, kwargs)


class _StreamStream(_Calls, grpc.StreamStreamMultiCallable):
    def __call__(self, *args, **kwargs):
        return self._stream(args, kwargs)
