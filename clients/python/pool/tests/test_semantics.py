# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""docs/pool.md's rules, against a real grpcio server on loopback: close
(drain, cancel, together, twice, use after), nothing left behind, redial,
growth at the stream limit, metrics, and the grpc.aio pool."""

import asyncio
import os
import threading
import time
import unittest
from concurrent import futures

import grpc
import grpc.aio
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from rpclab_pool import INSECURE, MAX_SIZE, ChannelPool, default_size
from rpclab_pool import aio as pool_aio

from rpclab_client import pb
from tests.test_pool import TIMEOUT, connections_to, established, explain

HOLD = 7  # a request with this response_size waits at the server for the gate


class GateServicer(pb.benchmark_service_pb2_grpc.BenchmarkServiceServicer):
    """Holds each HOLD request until gate is set, counting those held."""

    def __init__(self):
        self.cond = threading.Condition()
        self.gate = threading.Event()
        self.held = 0
        self.done = 0

    def UnaryCall(self, request, context):
        if request.response_size == HOLD:
            with self.cond:
                self.held += 1
                self.cond.notify_all()
            self.gate.wait(TIMEOUT)
            with self.cond:
                self.held -= 1
        with self.cond:
            self.done += 1
            self.cond.notify_all()
        return pb.messages_pb2.SimpleResponse()

    def StreamingCall(self, request_iterator, context):
        for _ in request_iterator:
            yield pb.messages_pb2.SimpleResponse()

    def wait_held(self, n):
        with self.cond:
            return self.cond.wait_for(lambda: self.held >= n, TIMEOUT)


def serve(workers=32):
    servicer = GateServicer()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers))
    pb.benchmark_service_pb2_grpc.add_BenchmarkServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, port, servicer


def held_request():
    return pb.SimpleRequest(response_size=HOLD)


def client_threads():
    """This process's threads but the in-process server's workers, once
    grpcio's connectivity pollers of closed channels have ended. Such a
    poller ends on its own time, at its next poll after its channel closed
    (0.2 s at most, after close has returned), so it is joined, bounded,
    rather than counted while it ends."""
    for t in threading.enumerate():
        if t.name.endswith("(_run)"):  # grpcio's threads run through cygrpc's _run_with_context
            t.join(TIMEOUT)
    return sorted(t.name for t in threading.enumerate() if not t.name.startswith("ThreadPoolExecutor"))


def fds(port):
    """This process's open descriptors but the in-process server's sockets
    (those whose local port is port, in any TCP state: the server closes its
    side when it sees the client's close, on its own time)."""
    server = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port:
                    server.add(f"socket:[{fields[9]}]")
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            n += os.readlink(f"/proc/self/fd/{fd}") not in server
        except OSError:
            pass  # closed meanwhile (the listing's own descriptor)
    return n


class TestClose(unittest.TestCase):
    def setUp(self):
        self.server, self.port, self.servicer = serve()
        self.addCleanup(self.server.stop, None)
        self.addCleanup(self.servicer.gate.set)
        self.target = f"127.0.0.1:{self.port}"

    def test_drain_then_cancel_and_nothing_left(self):
        # A first pool warms grpcio up (its process-wide threads), so the
        # counts below see only what a pool makes.
        with ChannelPool(self.target, 2, credentials=INSECURE) as warm:
            warm.connect(TIMEOUT)
        threads0, fds0 = client_threads(), fds(self.port)

        p = ChannelPool(self.target, 4, credentials=INSECURE)
        p.connect(TIMEOUT)
        stub = pb.BenchmarkServiceStub(p)
        # Drain: an RPC held at the server finishes OK while close waits.
        drained = stub.UnaryCall.future(held_request(), timeout=TIMEOUT)
        self.assertTrue(self.servicer.wait_held(1), "the held RPC never reached the server")
        closer = threading.Thread(target=p.close, kwargs={"grace": TIMEOUT})
        closer.start()
        # New RPCs are refused as soon as close has begun.
        deadline = time.monotonic() + TIMEOUT
        while not p._core.closed and time.monotonic() < deadline:
            threading.Event().wait(0.001)  # yields to the closer; not a synchronisation
        with self.assertRaises(ValueError):
            stub.UnaryCall(pb.SimpleRequest(), timeout=TIMEOUT)
        self.servicer.gate.set()
        closer.join(TIMEOUT)
        self.assertFalse(closer.is_alive(), "close did not return after the drain")
        self.assertIsInstance(drained.result(TIMEOUT), pb.messages_pb2.SimpleResponse)

        # Cancel: with no grace, an RPC still running ends CANCELLED.
        self.servicer.gate.clear()
        p2 = ChannelPool(self.target, 4, credentials=INSECURE)
        p2.connect(TIMEOUT)
        cut = pb.BenchmarkServiceStub(p2).UnaryCall.future(held_request(), timeout=TIMEOUT)
        self.assertTrue(self.servicer.wait_held(1), "the held RPC never reached the server")
        p2.close(grace=0)
        self.assertEqual(cut.exception(TIMEOUT).code(), grpc.StatusCode.CANCELLED)
        self.servicer.gate.set()

        # Close twice; use after close.
        p2.close()
        with self.assertRaises(ValueError):
            pb.BenchmarkServiceStub(p2).UnaryCall(pb.SimpleRequest(), timeout=TIMEOUT)
        with self.assertRaises(ValueError):
            p2.connect(TIMEOUT)

        # Nothing left: no thread or descriptor the pools made.
        self.assertEqual(client_threads(), threads0, "threads before and after")
        self.assertEqual(fds(self.port), fds0, "file descriptors before and after")
        self.assertEqual(connections_to(self.port), 0, explain(self.port, established()))

    def test_close_together(self):
        # 64 channels close in about the time of one: reported, not asserted
        # (a timed assertion on a shared machine).
        p = ChannelPool(self.target, 64, credentials=INSECURE)
        p.connect(TIMEOUT)
        t0 = time.monotonic()
        p.close()
        took = time.monotonic() - t0
        print(f"\nclose of 64 connected channels: {took:.3f}s", flush=True)
        self.assertEqual(connections_to(self.port), 0, explain(self.port, established()))


class TestRedial(unittest.TestCase):
    def test_redial_after_transient_failure(self):
        # Nothing listens: the channel goes to TRANSIENT_FAILURE and, at the
        # first pick past redial_after, is replaced by a new one.
        s = __import__("socket").socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        p = ChannelPool(f"127.0.0.1:{port}", 1, credentials=INSECURE, redial_after=0.05)
        self.addCleanup(p.close)
        first = p.channels[0]
        stub = pb.BenchmarkServiceStub(p)
        deadline = time.monotonic() + TIMEOUT
        while p.redials == 0 and time.monotonic() < deadline:
            with self.assertRaises(grpc.RpcError) as cm:
                stub.UnaryCall(pb.SimpleRequest(), timeout=1)
            self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertGreaterEqual(p.redials, 1, f"no redial within {TIMEOUT}s; states {p.states()}")
        self.assertIsNot(p.channels[0], first, "the channel was not replaced")


class TestGrowth(unittest.TestCase):
    def setUp(self):
        self.server, self.port, self.servicer = serve(workers=40)
        self.addCleanup(self.server.stop, None)
        self.addCleanup(self.servicer.gate.set)
        self.target = f"127.0.0.1:{self.port}"

    def run16(self, **kwargs):
        self.servicer.gate.clear()
        reader = InMemoryMetricReader()
        provider = MeterProvider(metric_readers=[reader])
        self.addCleanup(provider.shutdown)
        p = ChannelPool(self.target, 1, credentials=INSECURE, meter_provider=provider, **kwargs)
        stub = pb.BenchmarkServiceStub(p)
        calls = [stub.UnaryCall.future(held_request(), timeout=TIMEOUT) for _ in range(16)]
        self.assertTrue(self.servicer.wait_held(16), f"only {self.servicer.held} of 16 RPCs reached the server")
        socks = established()
        conns = connections_to(self.port, socks)
        inflight = p.inflight()
        self.servicer.gate.set()
        for c in calls:
            c.result(TIMEOUT)
        p.close()
        return conns, inflight, reader, socks

    def test_grows_to_the_stream_limit(self):
        conns, inflight, reader, socks = self.run16(max_connections=8, streams_per_connection=4)
        self.assertEqual(
            conns,
            4,
            f"got {conns} connections at 16 in flight with 4 streams each, want 4; {explain(self.port, socks)}",
        )
        self.assertEqual(inflight, (4, 4, 4, 4))
        got = metric_points(reader)
        self.assertEqual(got["rpclab.pool.resizes"], {"grow": 3}, got)
        self.assertEqual(sum(got["rpclab.pool.picks"].values()), 16, got)

    def test_off_by_default(self):
        conns, inflight, _, socks = self.run16()
        self.assertEqual(conns, 1, f"got {conns} connections with growth off, want 1; {explain(self.port, socks)}")
        self.assertEqual(inflight, (16,))

    def test_retires_idle_extras(self):
        p = ChannelPool(
            self.target, 1, credentials=INSECURE, max_connections=4, streams_per_connection=1, idle_timeout=0.01
        )
        self.addCleanup(p.close)
        self.servicer.gate.clear()
        stub = pb.BenchmarkServiceStub(p)
        calls = [stub.UnaryCall.future(held_request(), timeout=TIMEOUT) for _ in range(3)]
        self.assertTrue(self.servicer.wait_held(3))
        self.assertEqual(len(p.channels), 3)
        self.servicer.gate.set()
        for c in calls:
            c.result(TIMEOUT)
        # Past the idle time (time.sleep never returns early: a bound on the
        # pool's own monotonic clock, not a guess at another thread's
        # progress), the next pick retires both grown channels. Picks made
        # sooner would keep a round robin's channels busy in turn.
        time.sleep(0.05)
        stub.UnaryCall(pb.SimpleRequest(), timeout=TIMEOUT)
        self.assertEqual(len(p.channels), 1, "the idle grown channels were not retired")
        self.assertEqual(p.resizes, 4)


def metric_points(reader):
    """{instrument name: {attribute key: value}} from an InMemoryMetricReader:
    picks by connection, resizes by direction, size and inflight summed."""
    out = {}
    data = reader.get_metrics_data()
    for rm in data.resource_metrics if data else ():
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                got = out.setdefault(m.name, {})
                for dp in m.data.data_points:
                    a = dp.attributes
                    key = a.get("rpclab.pool.direction", a.get("rpclab.pool.connection", "all"))
                    got[key] = got.get(key, 0) + dp.value
    return out


class TestMetrics(unittest.TestCase):
    def test_read_back(self):
        server, port, _ = serve()
        self.addCleanup(server.stop, None)
        reader = InMemoryMetricReader()
        provider = MeterProvider(metric_readers=[reader])
        self.addCleanup(provider.shutdown)
        p = ChannelPool(f"127.0.0.1:{port}", 2, credentials=INSECURE, meter_provider=provider)
        p.connect(TIMEOUT)  # both READY: strict turns, none skipped
        stub = pb.BenchmarkServiceStub(p)
        for _ in range(6):
            stub.UnaryCall(pb.SimpleRequest(), timeout=TIMEOUT)
        got = metric_points(reader)
        self.assertEqual(got["rpclab.pool.size"], {"all": 2}, got)
        self.assertEqual(got["rpclab.pool.picks"], {0: 3, 1: 3}, got)
        self.assertEqual(got["rpclab.pool.inflight"], {0: 0, 1: 0}, got)
        scopes = {sm.scope.name for rm in reader.get_metrics_data().resource_metrics for sm in rm.scope_metrics}
        self.assertEqual(scopes, {"rpclab_pool"})
        p.close()
        self.assertEqual(metric_points(reader)["rpclab.pool.size"], {"all": 0})


class TestDefaults(unittest.TestCase):
    def test_default_size(self):
        n = default_size()
        self.assertTrue(2 <= n <= 8, n)
        self.assertEqual(MAX_SIZE, 1024)
        with ChannelPool("127.0.0.1:1", credentials=INSECURE) as p:
            self.assertEqual(len(p.channels), n)


class TestAio(unittest.IsolatedAsyncioTestCase):
    async def test_aio_pool(self):
        server, port, servicer = serve()
        self.addCleanup(server.stop, None)
        self.addCleanup(servicer.gate.set)
        p = pool_aio.ChannelPool(f"127.0.0.1:{port}", 4, credentials=INSECURE, policy="least-loaded")
        await p.connect(TIMEOUT)
        got = connections_to(port)
        self.assertEqual(got, 4, explain(port, established()))
        stub = pb.BenchmarkServiceStub(p)
        for _ in range(8):
            self.assertIsInstance(
                await stub.UnaryCall(pb.SimpleRequest(), timeout=TIMEOUT), pb.messages_pb2.SimpleResponse
            )
        replies = [r async for r in stub.StreamingCall(iter([pb.SimpleRequest()] * 3), timeout=TIMEOUT)]
        self.assertEqual(len(replies), 3)
        self.assertEqual(p.inflight(), (0, 0, 0, 0))
        self.assertIs(p.get_state(), grpc.ChannelConnectivity.READY)
        # Close with an RPC held past the grace: it ends CANCELLED.
        # (grpc.aio's own way: the call's code is CANCELLED, and awaiting it
        # raises asyncio.CancelledError.)
        held = stub.UnaryCall(held_request(), timeout=TIMEOUT)
        await asyncio.get_running_loop().run_in_executor(None, servicer.wait_held, 1)
        await p.close(grace=0.05)
        self.assertEqual(await held.code(), grpc.StatusCode.CANCELLED)
        with self.assertRaises(asyncio.CancelledError):
            await held
        await p.close()  # twice
        with self.assertRaises(grpc.aio.UsageError):
            stub.UnaryCall(pb.SimpleRequest(), timeout=TIMEOUT)
        self.assertIs(p.get_state(), grpc.ChannelConnectivity.SHUTDOWN)


if __name__ == "__main__":
    unittest.main()
