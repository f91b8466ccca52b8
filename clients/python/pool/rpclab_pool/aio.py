# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""ChannelPool for asyncio: grpc.aio channels behind the grpc.aio.Channel
interface, with the same rules as rpclab_pool.ChannelPool (docs/pool.md).

    async with ChannelPool(target, 4, credentials=INSECURE) as pool:
        stub = FooStub(pool)
        reply = await stub.Bar(request)

Use it on one event loop, the one it was made on.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from typing import Any

import grpc
import grpc.aio

from rpclab_pool import _core
from rpclab_pool._core import DEFAULT_GRACE, DEFAULT_IDLE_TIMEOUT, DEFAULT_REDIAL_AFTER, INSECURE, MAX_SIZE, Policy
from rpclab_pool._pool import _check

__all__ = ["ChannelPool", "Policy", "INSECURE", "MAX_SIZE", "DEFAULT_GRACE"]

_C = grpc.ChannelConnectivity


class ChannelPool(grpc.aio.Channel):
    """size grpc.aio channels to one target, each with its own TCP connection.

    The arguments are rpclab_pool.ChannelPool's, plus interceptors (given to
    every channel). The states are read at each pick (get_state, no poller);
    a channel stuck in TRANSIENT_FAILURE is replaced at the first pick after
    redial_after. Use after close raises grpc.aio.UsageError.
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
        interceptors: Sequence[Any] | None = None,
        max_connections: int | None = None,
        streams_per_connection: int | None = None,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        redial_after: float = DEFAULT_REDIAL_AFTER,
        meter_provider: Any = None,
    ):
        checked = _check(
            target, size, credentials, policy, max_connections, streams_per_connection, idle_timeout, redial_after
        )
        creds = _core.check_credentials(credentials)
        opts = _core.channel_options(options)
        if creds is None:
            self._new = functools.partial(grpc.aio.insecure_channel, target, opts, compression, interceptors)
        else:
            self._new = functools.partial(grpc.aio.secure_channel, target, creds, opts, compression, interceptors)
        self._target = target
        self._retiring: set[asyncio.Task] = set()
        self._core = _core.Core(
            target,
            checked["size"],
            checked["policy"],
            self._make,
            self._retire,
            max_connections,
            streams_per_connection,
            idle_timeout,
            redial_after,
            meter_provider,
            closed_type=grpc.aio.UsageError,
        )
        self._core.start()

    def _make(self) -> grpc.aio.Channel:
        ch = self._new()
        ch.get_state(try_to_connect=True)
        return ch

    def _retire(self, ch: grpc.aio.Channel) -> None:
        task = asyncio.get_running_loop().create_task(ch.close())
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    @property
    def channels(self) -> tuple[grpc.aio.Channel, ...]:
        """The pool's channels now, in the order of their index."""
        return tuple(ch for ch, _, _ in self._core.snapshot())

    @property
    def policy(self) -> Policy:
        return self._core.policy

    @property
    def redials(self) -> int:
        return self._core.redials

    @property
    def resizes(self) -> int:
        return self._core.resizes

    def inflight(self) -> tuple[int, ...]:
        """The RPCs in flight on each channel now."""
        return tuple(n for _, _, n in self._core.snapshot())

    def states(self) -> tuple[grpc.ChannelConnectivity, ...]:
        return tuple(ch.get_state(False) for ch in self.channels)

    async def connect(self, timeout: float | None = None) -> None:
        """Waits until every channel is READY; asyncio.TimeoutError after
        timeout seconds (None: no bound)."""
        if self._core.closed:
            raise self._core.closed_error()
        await asyncio.wait_for(asyncio.gather(*(ch.channel_ready() for ch in self.channels)), timeout)

    # grpc.aio.Channel

    async def __aenter__(self) -> ChannelPool:
        return self

    async def __aexit__(self, exc_type, exc_val, exc_tb) -> None:
        await self.close()

    async def close(self, grace: float | None = DEFAULT_GRACE) -> None:
        """Stops taking RPCs (new ones raise grpc.aio.UsageError), lets those
        in flight finish for up to grace seconds (None or 0: none), then
        cancels the rest (CANCELLED): every channel at once. A second close
        returns at once."""
        if grace is not None:
            grace = _core.check_seconds(grace, "grace", zero_ok=True) or None
        core = self._core
        if not core.begin_close():
            return
        chans = core.finish_close()
        await asyncio.gather(*(ch.close(grace) for ch in chans), *list(self._retiring))

    def get_state(self, try_to_connect: bool = False) -> grpc.ChannelConnectivity:
        """The pool's state by gRPC's round_robin rule (READY when a channel
        is); SHUTDOWN once closed."""
        if self._core.closed:
            return _C.SHUTDOWN
        return _core.aggregate([ch.get_state(try_to_connect) for ch in self.channels])

    async def wait_for_state_change(self, last_observed_state: grpc.ChannelConnectivity) -> None:
        while self.get_state(False) == last_observed_state:
            waits = [asyncio.ensure_future(ch.wait_for_state_change(ch.get_state(False))) for ch in self.channels]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
                await asyncio.gather(*waits, return_exceptions=True)

    async def channel_ready(self) -> None:
        while True:
            state = self.get_state(True)
            if state is _C.READY:
                return
            if state is _C.SHUTDOWN:
                raise grpc.aio.UsageError("rpclab_pool: the pool is closed")
            await self.wait_for_state_change(state)

    def unary_unary(self, method, request_serializer=None, response_deserializer=None, **kwargs):
        return _UnaryUnary(self._core, "unary_unary", (method, request_serializer, response_deserializer), kwargs)

    def unary_stream(self, method, request_serializer=None, response_deserializer=None, **kwargs):
        return _UnaryStream(self._core, "unary_stream", (method, request_serializer, response_deserializer), kwargs)

    def stream_unary(self, method, request_serializer=None, response_deserializer=None, **kwargs):
        return _StreamUnary(self._core, "stream_unary", (method, request_serializer, response_deserializer), kwargs)

    def stream_stream(self, method, request_serializer=None, response_deserializer=None, **kwargs):
        return _StreamStream(self._core, "stream_stream", (method, request_serializer, response_deserializer), kwargs)

    def __repr__(self):
        core = self._core
        return f"rpclab_pool.aio.ChannelPool({self._target!r}, {core.size}, policy={core.policy.value!r})"


def _state(ch: grpc.aio.Channel) -> grpc.ChannelConnectivity:
    return ch.get_state(False)


class _Calls:
    """A method's multi-callable, made on each channel as the pool picks it.
    A call is in flight from its start until it is done (any status)."""

    def __init__(self, core: _core.Core, kind: str, args: tuple, kwargs: dict):
        self._core = core
        self._kind = kind
        self._args = args
        self._kwargs = kwargs

    def __call__(self, *args, **kwargs):
        core = self._core
        e = core.acquire(_state)
        try:
            c = e.calls.get(self)
            if c is None:
                c = e.calls[self] = getattr(e.channel, self._kind)(*self._args, **self._kwargs)
            call = c(*args, **kwargs)
        except BaseException:
            core.release(e)
            raise
        call.add_done_callback(functools.partial(core.release, e))
        return call


class _UnaryUnary(_Calls, grpc.aio.UnaryUnaryMultiCallable):
    pass


class _UnaryStream(_Calls, grpc.aio.UnaryStreamMultiCallable):
    pass


class _StreamUnary(_Calls, grpc.aio.StreamUnaryMultiCallable):
    pass


class _StreamStream(_Calls, grpc.aio.StreamStreamMultiCallable):
    pass
