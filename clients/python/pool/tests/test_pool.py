# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""ChannelPool against a real grpcio server on loopback.

Runs with `python -m unittest discover -s tests -t .` (what clients/conformance
runs) or `python -m pytest tests`, in clients/python/pool with the client's
venv, which has the stubs generated from ../../proto (clients/python/build.sh).
"""

import os
import queue
import random
import socket
import threading
import unittest
from concurrent import futures

import grpc
from rpclab_pool import INSECURE, ChannelPool, Policy, pick

from rpclab_client import pb  # the generated BenchmarkService stubs

# Bounds every wait in these tests; none is a sleep.
TIMEOUT = 20.0

_C = grpc.ChannelConnectivity


class Servicer(pb.benchmark_service_pb2_grpc.BenchmarkServiceServicer):
    """Counts unary RPCs and records each RPC's peer (the client's address)."""

    def __init__(self):
        self.cond = threading.Condition()
        self.unary = 0
        self.peers = []  # of UnaryCall, in arrival order
        self.stream_peers = []  # of StreamingCall

    def UnaryCall(self, request, context):
        with self.cond:
            self.unary += 1
            self.peers.append(context.peer())
            self.cond.notify_all()
        return pb.messages_pb2.SimpleResponse()

    def StreamingCall(self, request_iterator, context):
        with self.cond:
            self.stream_peers.append(context.peer())
            self.cond.notify_all()
        for _ in request_iterator:
            yield pb.messages_pb2.SimpleResponse()


def serve(port=0):
    """Starts a server on 127.0.0.1:port; returns (server, port, servicer)."""
    servicer = Servicer()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    pb.benchmark_service_pb2_grpc.add_BenchmarkServiceServicer_to_server(servicer, server)
    got = server.add_insecure_port(f"127.0.0.1:{port}")
    if got == 0:
        raise OSError(f"cannot listen on 127.0.0.1:{port}")
    server.start()
    return server, got, servicer


def connections_to(port, socks=None):
    """This process's ESTABLISHED TCP connections to port, as the kernel has
    them: the socket inodes of /proc/self/fd matched against /proc/net/tcp*
    (or socks, one read of established() to count and explain alike).
    The in-process server's own sockets have port as their local port, so
    they are not counted."""
    return sum(remote == port for _, remote, _ in (established() if socks is None else socks))


def established():
    """This process's ESTABLISHED TCP sockets: (local port, remote port,
    inode) each, from /proc/self/fd and /proc/net/tcp*."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # closed meanwhile
        if link.startswith("socket:["):
            inodes.add(link[len("socket:[") : -1])
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.readlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
            if state == "01" and inode in inodes:
                out.append((_port_of(local), _port_of(remote), inode))
    return out


def _port_of(address):
    """The port of a /proc/net/tcp address ("0100007F:1F90")."""
    return int(address.rsplit(":", 1)[1], 16)


def explain(port, socks):
    """For a failed count: every ESTABLISHED socket of this process (socks,
    the read that was counted), to tell where connections to port came
    from."""
    listed = ", ".join(f"{lp}->{rp} (inode {i})" for lp, rp, i in sorted(socks))
    return f"this process's ESTABLISHED sockets (local->remote port; the server's is {port}): {listed}"


class TestPick(unittest.TestCase):
    """pick, the pure function behind every RPC's choice."""

    def test_pick(self):
        R, Idle, C, T, S = _C.READY, _C.IDLE, _C.CONNECTING, _C.TRANSIENT_FAILURE, _C.SHUTDOWN
        rr, ll = Policy.ROUND_ROBIN, Policy.LEAST_LOADED
        cases = [
            ("round robin takes start", rr, [R, R, R], [5, 0, 0], 0, 0),
            ("round robin wraps", rr, [R, R, R], [0, 0, 0], 2, 2),
            ("round robin skips TRANSIENT_FAILURE while one is READY", rr, [T, R], [0, 0], 0, 1),
            ("round robin skips CONNECTING while one is IDLE", rr, [C, Idle], [0, 0], 0, 1),
            ("round robin skips SHUTDOWN", rr, [S, T, R], [0, 0, 0], 0, 2),
            ("none usable: round robin as if healthy", rr, [T, C, T], [0, 0, 0], 1, 1),
            ("not reported yet counts as usable", rr, [None, T], [0, 0], 1, 0),
            ("least loaded takes the idle one", ll, [R, R], [3, 0], 0, 1),
            ("least loaded skips a failed idle one", ll, [T, R], [0, 9], 0, 1),
            ("least loaded, none usable", ll, [T, T], [2, 1], 0, 1),
        ]
        for name, policy, states, inflight, start, want in cases:
            with self.subTest(name):
                got = pick(policy, states, inflight, start)
                self.assertEqual(got, want, f"got {got}, want {want}")

    def test_least_loaded_is_two_choices(self):
        # Power of two choices: the lesser loaded of two different channels
        # drawn at random, so the busiest is never taken and every other one
        # is, and a failed channel never while one is READY.
        rng = random.Random(1)
        R, T = _C.READY, _C.TRANSIENT_FAILURE
        got = [pick(Policy.LEAST_LOADED, [R, R, R, R, T], [4, 2, 1, 3, 0], i, rng) for i in range(1000)]
        self.assertEqual(set(got), {1, 2, 3}, "want channels 1..3 taken, never the busiest (0) or the failed one (4)")
        self.assertGreater(got.count(2), got.count(1), "the least loaded channel wins most draws")


class TestBadInput(unittest.TestCase):
    def test_bad_input(self):
        # A missing credentials argument is Python's own TypeError.
        with self.assertRaises(TypeError):
            ChannelPool("127.0.0.1:1", 1)
        cases = [
            ("size 0", dict(size=0), ValueError, "0"),
            ("negative size", dict(size=-3), ValueError, "-3"),
            ("size not an int", dict(size="4"), TypeError, "'4'"),
            ("size a bool", dict(size=True), TypeError, "True"),
            ("unknown policy", dict(size=2, policy="fastest"), ValueError, "'fastest'"),
            ("policy with the wrong spelling", dict(size=2, policy="least_loaded"), ValueError, "'least_loaded'"),
            ("empty target", dict(target="", size=2), ValueError, "''"),
            ("size above the maximum", dict(size=1025), ValueError, "1024"),
            ("a huge size, refused before any channel", dict(size=10**9), ValueError, "1000000000"),
            ("target with a space", dict(target="127.0.0.1 :1", size=2), ValueError, "whitespace"),
            ("port out of range", dict(target="127.0.0.1:99999", size=2), ValueError, "99999"),
            ("port 0", dict(target="127.0.0.1:0", size=2), ValueError, "'0'"),
            ("dns: with no host", dict(target="dns:///", size=2), ValueError, "empty host"),
            ("no credentials", dict(size=2, credentials=None), TypeError, "INSECURE"),
            ("max_connections below size", dict(size=4, max_connections=2, streams_per_connection=4), ValueError, "2"),
            ("growth with no stream limit", dict(size=1, max_connections=4), ValueError, "streams_per_connection"),
            (
                "max_connections above the maximum",
                dict(size=1, max_connections=2000, streams_per_connection=4),
                ValueError,
                "2000",
            ),
            ("redial_after 0", dict(size=1, redial_after=0), ValueError, "redial_after"),
        ]
        for name, kwargs, exc, named in cases:
            with self.subTest(name):
                kwargs.setdefault("target", "127.0.0.1:1")
                kwargs.setdefault("credentials", INSECURE)
                with self.assertRaises(exc) as cm:
                    ChannelPool(**kwargs)
                self.assertIn(named, str(cm.exception), f"got {cm.exception}, want it to name {named}")

    def test_policy_by_value(self):
        for value, want in (("round-robin", Policy.ROUND_ROBIN), ("least-loaded", Policy.LEAST_LOADED)):
            with self.subTest(value), ChannelPool("127.0.0.1:1", 1, credentials=INSECURE, policy=value) as p:
                self.assertIs(p.policy, want, f"got {p.policy}, want {want}")

    def test_target_never_answers(self):
        # A socket that accepts TCP (the kernel does, into the backlog) and
        # never speaks HTTP/2: construction must not wait for it, and RPCs
        # and connect() end at their deadlines.
        silent = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.addCleanup(silent.close)
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        target = f"127.0.0.1:{silent.getsockname()[1]}"
        made = []
        t = threading.Thread(target=lambda: made.append(ChannelPool(target, 2, credentials=INSECURE)), daemon=True)
        t.start()
        t.join(TIMEOUT)
        self.assertFalse(t.is_alive(), "construction hangs on a target that never answers")
        pool = made[0]
        self.addCleanup(pool.close)
        stub = pb.BenchmarkServiceStub(pool)
        with self.assertRaises(grpc.RpcError) as cm:
            stub.UnaryCall(pb.SimpleRequest(), timeout=0.2)
        codes = (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE)
        self.assertIn(cm.exception.code(), codes, f"got {cm.exception.code()}, want one of {codes}")
        with self.assertRaises(grpc.FutureTimeoutError):
            pool.connect(timeout=0.2)


class TestServer(unittest.TestCase):
    def setUp(self):
        self.server, self.port, self.servicer = serve()
        self.addCleanup(self.server.stop, None)
        self.target = f"127.0.0.1:{self.port}"

    def pool(self, size, **kwargs):
        p = ChannelPool(self.target, size, credentials=INSECURE, **kwargs)
        self.addCleanup(p.close)
        return p

    def test_connections(self):
        # What the kernel sees: one TCP connection per channel of the pool.
        # The last case is the trap the pool avoids: plain channels with
        # identical arguments share C-core's global subchannel, one connection.
        cases = [("pool of 1", 1, True, 1), ("pool of 4", 4, True, 4), ("4 plain channels", 4, False, 1)]
        for name, size, pooled, want in cases:
            with self.subTest(name):
                server, port, _ = serve()
                try:
                    target = f"127.0.0.1:{port}"
                    if pooled:
                        with ChannelPool(target, size, credentials=INSECURE) as p:
                            p.connect(TIMEOUT)
                            socks = established()
                            got = connections_to(port, socks)
                            why = f"{explain(port, socks)}; the pool's channels: {[s.name for s in p.states()]}"
                    else:
                        chans = [grpc.insecure_channel(target) for _ in range(size)]
                        try:
                            for ch in chans:
                                grpc.channel_ready_future(ch).result(timeout=TIMEOUT)
                            socks = established()
                            got = connections_to(port, socks)
                            why = explain(port, socks)
                        finally:
                            for ch in chans:
                                ch.close()
                    self.assertEqual(got, want, f"got {got} connections, want {want}; {why}")
                finally:
                    server.stop(None)

    def test_generated_stub(self):
        # Every kind of RPC through FooStub(pool), with the pool as a context
        # manager and grpc.channel_ready_future taking it as a channel.
        with ChannelPool(self.target, 3, credentials=INSECURE) as p:
            grpc.channel_ready_future(p).result(timeout=TIMEOUT)
            stub = pb.BenchmarkServiceStub(p)
            req = pb.SimpleRequest()
            for _ in range(6):
                self.assertIsInstance(stub.UnaryCall(req, timeout=TIMEOUT), pb.messages_pb2.SimpleResponse)
            resp, call = stub.UnaryCall.with_call(req, timeout=TIMEOUT)
            self.assertEqual(call.code(), grpc.StatusCode.OK, f"got {call.code()}, want OK")
            self.assertIsInstance(stub.UnaryCall.future(req, timeout=TIMEOUT).result(), pb.messages_pb2.SimpleResponse)
            got = len(list(stub.StreamingCall(iter([req] * 3), timeout=TIMEOUT)))
            self.assertEqual(got, 3, f"got {got} responses, want 3")
            # StreamingFromServer is not implemented by the servicer: the
            # status comes back through the pool unchanged.
            with self.assertRaises(grpc.RpcError) as cm:
                list(stub.StreamingFromServer(req, timeout=TIMEOUT))
            self.assertEqual(cm.exception.code(), grpc.StatusCode.UNIMPLEMENTED)
            with self.assertRaises(grpc.RpcError) as cm:
                stub.StreamingFromClient(iter([req]), timeout=TIMEOUT)
            self.assertEqual(cm.exception.code(), grpc.StatusCode.UNIMPLEMENTED)
            got = p.inflight()
            self.assertEqual(got, (0, 0, 0), f"got {got} in flight after every RPC ended, want none")
        with self.assertRaises(ValueError):  # closed: grpcio's own error
            stub.UnaryCall(req, timeout=TIMEOUT)

    def test_subscribe_while_a_delivery_runs(self):
        # grpc.channel_ready_future subscribes while it holds its own lock,
        # and its callback takes that lock. So subscribe must not wait for a
        # delivery under way (which may call that callback): here one
        # subscriber's callback is held in another thread while a second
        # subscribes holding its lock; the second subscribe must return, and
        # the held delivery then reaches it.
        p = self.pool(2)
        p.connect(TIMEOUT)
        release, first_called = threading.Event(), threading.Event()

        def first(state):
            first_called.set()
            release.wait(TIMEOUT)

        self.addCleanup(release.set)
        threading.Thread(target=p.subscribe, args=(first,), daemon=True).start()
        self.assertTrue(first_called.wait(TIMEOUT), "the first subscriber was never called")
        cond, got = threading.Condition(), []

        def second(state):
            with cond:
                got.append(state)
                cond.notify_all()

        def subscribe_holding_lock():
            with cond:
                p.subscribe(second)

        t = threading.Thread(target=subscribe_holding_lock, daemon=True)
        t.start()
        t.join(TIMEOUT / 4)
        self.assertFalse(t.is_alive(), "subscribe waited for another subscriber's callback")
        release.set()
        with cond:
            cond.wait_for(lambda: got, TIMEOUT)
        self.assertEqual(got, [_C.READY], f"the second subscriber got {got}, want [READY]")

    def test_round_robin_spreads(self):
        p = self.pool(4)
        p.connect(TIMEOUT)
        stub = pb.BenchmarkServiceStub(p)
        for _ in range(8):
            stub.UnaryCall(pb.SimpleRequest(), timeout=TIMEOUT)
        got = len(set(self.servicer.peers))
        self.assertEqual(got, 4, f"8 RPCs came from {got} connections, want 4")

    def test_least_loaded_prefers_idle(self):
        # A stream holds one channel busy; every unary RPC meanwhile goes to
        # the other one (round robin would send half of them to the busy one).
        for policy, want_on_busy in ((Policy.LEAST_LOADED, 0), (Policy.ROUND_ROBIN, 3)):
            with self.subTest(policy.value):
                servicer = self.servicer
                servicer.peers.clear()
                servicer.stream_peers.clear()
                p = self.pool(2, policy=policy)
                p.connect(TIMEOUT)
                stub = pb.BenchmarkServiceStub(p)
                reqs = queue.Queue()
                reqs.put(pb.SimpleRequest())
                stream = stub.StreamingCall(iter(reqs.get, None), timeout=TIMEOUT)
                next(stream)  # the server has recorded the stream's peer
                busy = servicer.stream_peers[0]
                for _ in range(6):
                    stub.UnaryCall(pb.SimpleRequest(), timeout=TIMEOUT)
                reqs.put(None)
                self.assertEqual(list(stream), [])
                got = sum(peer == busy for peer in servicer.peers)
                self.assertEqual(got, want_on_busy, f"got {got} of 6 RPCs on the busy connection, want {want_on_busy}")

    def test_server_restart(self):
        # RPCs keep going while the server stops and a new one starts on the
        # same port; they reach the new server without the caller doing
        # anything, and every channel reconnects.
        p = self.pool(3, policy=Policy.LEAST_LOADED)
        stub = pb.BenchmarkServiceStub(p)
        stop = threading.Event()
        failed = []

        def caller():
            while not stop.is_set():
                try:
                    stub.UnaryCall(pb.SimpleRequest(), timeout=TIMEOUT)
                except grpc.RpcError as e:
                    failed.append(e.code())

        threads = [threading.Thread(target=caller, daemon=True) for _ in range(2)]
        for t in threads:
            t.start()
        self.addCleanup(lambda: [t.join(TIMEOUT) for t in threads])
        self.addCleanup(stop.set)
        with self.servicer.cond:
            self.assertTrue(
                self.servicer.cond.wait_for(lambda: self.servicer.unary >= 20, TIMEOUT), "no RPCs before the restart"
            )
        self.server.stop(None).wait(TIMEOUT)
        server2, port, servicer2 = serve(self.port)
        self.addCleanup(server2.stop, None)
        self.assertEqual(port, self.port)
        with servicer2.cond:
            ok = servicer2.cond.wait_for(lambda: servicer2.unary >= 50, TIMEOUT)
        self.assertTrue(ok, f"got {servicer2.unary} RPCs on the new server, want 50 (failures: {len(failed)})")
        stop.set()
        for t in threads:
            t.join(TIMEOUT)
        # The old server's stop cancels the RPCs it runs (CANCELLED); while
        # no server listens, RPCs fail fast (UNAVAILABLE).
        allowed = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
        bad = {c for c in failed if c not in allowed}
        self.assertEqual(bad, set(), f"got failures {bad}, want {allowed} only")
        p.connect(TIMEOUT)
        got = connections_to(self.port)
        self.assertEqual(got, 3, f"got {got} connections after the restart, want 3")


if __name__ == "__main__":
    unittest.main()
