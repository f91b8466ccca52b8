# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""ChannelPool: N grpcio channels behind the grpc.Channel interface."""

import enum
import functools
import itertools
import threading
from collections.abc import Sequence
from typing import Callable, Optional

import grpc

# Makes C-core keep this channel's subchannels in a pool of its own instead of
# the process-wide one, where channels with identical arguments share one
# subchannel (one TCP connection). With it, each channel of the pool connects
# on its own (clients/python/README.md, "Layouts", measured by the
# conformance suite).
LOCAL_SUBCHANNEL_POOL = ("grpc.use_local_subchannel_pool", 1)

_C = grpc.ChannelConnectivity


class Policy(enum.Enum):
    """How the pool picks a channel for each RPC."""

    ROUND_ROBIN = "round-robin"
    """The channels in turn."""

    LEAST_LOADED = "least-loaded"
    """The channel with the fewest RPCs in flight; ties go round robin."""


def _usable(state: Optional[grpc.ChannelConnectivity]) -> bool:
    # None: not reported yet; the channel is being made, so it counts as IDLE.
    return state is None or state is _C.READY or state is _C.IDLE


def candidates(states: Sequence) -> tuple[int, ...]:
    """The indexes of the channels an RPC may go to, given their states.

    The usable channels (READY or IDLE: an RPC on an IDLE channel makes it
    connect) when there is one, else every channel, where grpcio fails the
    RPC fast with UNAVAILABLE (or holds it, for wait_for_ready). Computed at
    each state change, not per RPC.
    """
    usable = tuple(i for i, s in enumerate(states) if _usable(s))
    return usable or tuple(range(len(states)))


def choose(policy: Policy, cands: Sequence[int], inflight: Sequence[int], start: int) -> int:
    """The channel for the next RPC among cands (see candidates).

    ROUND_ROBIN takes the start-th candidate (start is the pool's round-robin
    counter); LEAST_LOADED the candidate with the fewest RPCs in flight, the
    first from the start-th on among equals.
    """
    n = len(cands)
    if policy is Policy.ROUND_ROBIN or n == 1:
        return cands[start % n]
    best = cands[start % n]
    low = inflight[best]
    for k in range(1, n):
        i = cands[(start + k) % n]
        if inflight[i] < low:
            best, low = i, inflight[i]
    return best


def pick(policy: Policy, states: Sequence, inflight: Sequence[int], start: int) -> int:
    """choose among the candidates of states: the pool's whole pick."""
    return choose(policy, candidates(states), inflight, start)


def _aggregate(states: Sequence) -> grpc.ChannelConnectivity:
    # gRPC's round_robin rule: READY if any is, then CONNECTING, then IDLE,
    # then TRANSIENT_FAILURE; SHUTDOWN only when every channel is.
    for want in (_C.READY, _C.CONNECTING, _C.IDLE):
        if any(s is want or (s is None and want is _C.IDLE) for s in states):
            return want
    if all(s is _C.SHUTDOWN for s in states):
        return _C.SHUTDOWN
    return _C.TRANSIENT_FAILURE


def _policy(policy) -> Policy:
    if isinstance(policy, Policy):
        return policy
    for p in Policy:
        if policy == p.value:
            return p
    want = " or ".join(repr(p.value) for p in Policy)
    raise ValueError(f"rpclab_pool: unknown policy {policy!r} (want {want})")


class ChannelPool(grpc.Channel):
    """size grpcio channels to one target, each with its own TCP connection.

    A ChannelPool is a grpc.Channel: a generated FooStub(pool) works
    unchanged, and each RPC goes to the channel the policy picks (a stream
    stays on the channel it was opened on). Construction does not block or
    wait for the target: the channels start connecting in the background, and
    connect() waits for them. Thread-safe.

    target, credentials, options and compression are those of
    grpc.insecure_channel / grpc.secure_channel (credentials None: insecure),
    given to every channel, plus grpc.use_local_subchannel_pool=1 unless
    options set it. size has no default: it is the number of TCP connections.
    policy is a Policy or its value ("round-robin", the default, or
    "least-loaded").

    Health: a channel that is CONNECTING, in TRANSIENT_FAILURE or SHUTDOWN
    is skipped while another is READY or IDLE, so when the server restarts
    RPCs go to the channels that have reconnected, and IDLE ones reconnect on
    their next RPC, without the caller doing anything.
    """

    def __init__(
        self,
        target: str,
        size: int,
        *,
        policy=Policy.ROUND_ROBIN,
        credentials: Optional[grpc.ChannelCredentials] = None,
        options: Sequence[tuple[str, object]] = (),
        compression: Optional[grpc.Compression] = None,
    ):
        if not isinstance(target, str) or not target:
            raise ValueError(f"rpclab_pool: target must be a non-empty string, got {target!r}")
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"rpclab_pool: size must be an int, got {size!r}")
        if size < 1:
            raise ValueError(f"rpclab_pool: size must be at least 1, got {size}")
        self._policy = _policy(policy)
        self._target = target
        opts = list(options)
        if not any(k == LOCAL_SUBCHANNEL_POOL[0] for k, _ in opts):
            opts.append(LOCAL_SUBCHANNEL_POOL)
        if credentials is None:
            make = functools.partial(grpc.insecure_channel, target, opts, compression)
        else:
            make = functools.partial(grpc.secure_channel, target, credentials, opts, compression)
        self._channels: tuple[grpc.Channel, ...] = tuple(make() for _ in range(size))

        self._lock = threading.Lock()  # guards _states, _inflight, _subscribers
        self._ready = threading.Condition(self._lock)  # a channel's state changed
        self._deliver = threading.RLock()  # one delivery to subscribers at a time
        self._states: list[Optional[grpc.ChannelConnectivity]] = [None] * size
        self._inflight = [0] * size
        self._candidates = candidates(self._states)
        self._next = itertools.count()  # next() is atomic in CPython
        self._subscribers: list[list] = []  # [callback, last state delivered]
        self._closed = False
        self._watchers = [functools.partial(self._on_state, i) for i in range(size)]
        for ch, watch in zip(self._channels, self._watchers):
            ch.subscribe(watch, try_to_connect=True)

    @property
    def channels(self) -> tuple[grpc.Channel, ...]:
        """The pool's channels, in the order of their index."""
        return self._channels

    @property
    def policy(self) -> Policy:
        return self._policy

    def inflight(self) -> tuple[int, ...]:
        """The RPCs in flight on each channel now."""
        with self._lock:
            return tuple(self._inflight)

    def states(self) -> tuple[Optional[grpc.ChannelConnectivity], ...]:
        """Each channel's last reported state (None: none reported yet)."""
        with self._lock:
            return tuple(self._states)

    def connect(self, timeout: Optional[float] = None) -> None:
        """Makes every channel connect and waits until each is READY.

        Raises grpc.FutureTimeoutError when one is not READY after timeout
        seconds (None: no bound), and ValueError once the pool is closed.
        """
        self._kick_idle()
        with self._ready:
            ok = self._ready.wait_for(lambda: self._closed or all(s is _C.READY for s in self._states), timeout)
            if self._closed:
                raise ValueError("rpclab_pool: connect on a closed pool")
            if not ok:
                states = ", ".join(s.name if s else "UNKNOWN" for s in self._states)
                raise grpc.FutureTimeoutError(
                    f"rpclab_pool: {self._target}: channels not all READY after {timeout}s: {states}"
                )

    def _kick_idle(self) -> None:
        # Only IDLE channels: the others are connecting or connected already.
        for ch, state in zip(self._channels, self.states()):
            if state is _C.IDLE:
                _kick(ch)

    def _on_state(self, index: int, state: grpc.ChannelConnectivity) -> None:
        with self._ready:
            self._states[index] = state
            self._candidates = candidates(self._states)
            self._ready.notify_all()
        self._notify()

    def _notify(self) -> None:
        with self._deliver:
            with self._lock:
                agg = _aggregate(self._states)
                due = []
                for sub in self._subscribers:
                    if sub[1] is not agg:
                        sub[1] = agg
                        due.append(sub[0])
            for callback in due:
                callback(agg)

    def _acquire(self) -> int:
        start = next(self._next)
        with self._lock:
            i = choose(self._policy, self._candidates, self._inflight, start)
            self._inflight[i] += 1
        return i

    def _release(self, index: int, *_) -> None:
        with self._lock:
            self._inflight[index] -= 1

    # grpc.Channel

    def subscribe(self, callback: Callable[[grpc.ChannelConnectivity], None], try_to_connect=False) -> None:
        """Calls callback with the pool's state now and at each change.

        The pool's state is READY when a channel is READY, else CONNECTING
        when one is, else IDLE, else TRANSIENT_FAILURE (gRPC's round_robin
        rule), so grpc.channel_ready_future(pool) works.
        """
        if try_to_connect:
            self._kick_idle()
        with self._lock:
            self._subscribers.append([callback, None])
        self._notify()

    def unsubscribe(self, callback: Callable[[grpc.ChannelConnectivity], None]) -> None:
        with self._lock:
            for i, (cb, _) in enumerate(self._subscribers):
                if cb == callback:
                    del self._subscribers[i]
                    break

    def unary_unary(self, method, request_serializer=None, response_deserializer=None, **kwargs):
        return _UnaryUnary(
            self, [ch.unary_unary(method, request_serializer, response_deserializer, **kwargs) for ch in self._channels]
        )

    def unary_stream(self, method, request_serializer=None, response_deserializer=None, **kwargs):
        return _UnaryStream(
            self,
            [ch.unary_stream(method, request_serializer, response_deserializer, **kwargs) for ch in self._channels],
        )

    def stream_unary(self, method, request_serializer=None, response_deserializer=None, **kwargs):
        return _StreamUnary(
            self,
            [ch.stream_unary(method, request_serializer, response_deserializer, **kwargs) for ch in self._channels],
        )

    def stream_stream(self, method, request_serializer=None, response_deserializer=None, **kwargs):
        return _StreamStream(
            self,
            [ch.stream_stream(method, request_serializer, response_deserializer, **kwargs) for ch in self._channels],
        )

    def close(self) -> None:
        """Closes every channel; RPCs in flight end with CANCELLED.

        grpcio's connectivity poller (which subscribe starts) may print a
        ValueError traceback on its own thread when a channel closes while
        it polls, as with any subscribed grpcio channel (grpc/grpc#18995);
        it is harmless.
        """
        with self._ready:
            if self._closed:
                return
            self._closed = True
            self._subscribers.clear()
            self._ready.notify_all()
        for ch, watch in zip(self._channels, self._watchers):
            ch.unsubscribe(watch)
            ch.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
        return False

    def __repr__(self):
        return f"ChannelPool({self._target!r}, {len(self._channels)}, policy={self._policy.value!r})"


def _nothing(_state) -> None:
    pass


def _kick(channel: grpc.Channel) -> None:
    # grpcio's public way to make an IDLE channel connect: a subscription with
    # try_to_connect sets a flag its connectivity poller acts on (at most
    # 0.2 s later), and that flag outlives the subscription.
    channel.subscribe(_nothing, try_to_connect=True)
    channel.unsubscribe(_nothing)


class _Calls:
    """A method's multi-callable on each channel of the pool."""

    def __init__(self, pool: ChannelPool, callables: list):
        self._pool = pool
        self._callables = callables

    def _blocking(self, name, args, kwargs):
        i = self._pool._acquire()
        try:
            return getattr(self._callables[i], name)(*args, **kwargs)
        finally:
            self._pool._release(i)

    def _future(self, args, kwargs):
        i = self._pool._acquire()
        try:
            f = self._callables[i].future(*args, **kwargs)
        except BaseException:
            self._pool._release(i)
            raise
        f.add_done_callback(functools.partial(self._pool._release, i))
        return f

    def _stream(self, args, kwargs):
        # A response-streaming call is in flight until it terminates.
        i = self._pool._acquire()
        try:
            call = self._callables[i](*args, **kwargs)
        except BaseException:
            self._pool._release(i)
            raise
        if not call.add_callback(functools.partial(self._pool._release, i)):
            self._pool._release(i)  # already over
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
