# Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0
"""rpclab's Python client (docs/clients.md): a closed-loop sweep on grpcio's
sync API against a grpc.testing.BenchmarkService server, one JSON Lines
record per step, appended to the step's out (the steps of --steps FILE,
which `rpclab sweep --client python` writes). Exit codes: 0 every step ok,
1 a step failed, 2 bad flags or steps file.
SIGINT/SIGTERM end the running step at once; its record ("interrupted") and
every earlier one are kept.

A thread per worker, each with one RPC in flight and its own histogram,
merged after the interval. The GIL serializes the Python side of every RPC
(grpcio releases it only while it waits in C-core), so the workers share one
CPU's worth of Python whatever the in-flight count."""

import os
import queue
import signal
import sys
import threading
import time
from types import SimpleNamespace

import grpc
from rpclab_pool import INSECURE, LOCAL_SUBCHANNEL_POOL, ChannelPool

from rpclab_client import steps as st
from rpclab_client.pb import BenchmarkServiceStub, Payload, SimpleRequest
from rpclab_client.record import CODES, HIGHEST, Env, Record, merge, new_histogram

WARMUP, MEASURE, DONE = 0, 1, 2
OK, UNKNOWN, UNAVAILABLE = 0, 2, 14
PROG = "rpclab-client (python)"
DIAL_TIMEOUT_NS = 5_000_000_000  # how long a step waits for its channels to be READY


def open_channels(step):
    """The layout's channels (docs/clients.md): one for every worker (shared,
    and pool:N, a rpclab_pool.ChannelPool that picks a channel per RPC), or
    one per worker. C-core keys its global subchannel pool on the target and
    the channel arguments: channels with identical arguments share one
    subchannel, so one TCP connection."""
    conn, target = step.conn, step.target
    if conn.mode == "pool":
        return [ChannelPool(target, conn.n, credentials=INSECURE, policy=conn.pick)]
    if conn.mode == "shared":
        return [grpc.insecure_channel(target)]

    def options(i):
        if conn.mode == "distinct-args":
            return [("rpclab.channel_index", i)]  # unknown to C-core, but part of the key
        # channel-per-worker: the trap, one connection for all; per-worker
        # and local-pool: a subchannel pool of the channel's own.
        return [] if conn.mode == "channel-per-worker" else [LOCAL_SUBCHANNEL_POOL]

    return [grpc.insecure_channel(target, options=options(i)) for i in range(step.inflight)]


class Stop:
    """Set by SIGINT/SIGTERM. A plain attribute: the handler runs on the
    main thread between bytecodes, so it must take no lock."""

    def __init__(self):
        self.set = False

    def install(self):
        def handler(signum, frame):
            self.set = True

        signal.signal(signal.SIGINT, handler)
        signal.signal(signal.SIGTERM, handler)

    def sleep(self, ns):
        """Sleeps for ns; False if a stop came first. Wakes every 50 ms to
        look, so a stop ends a step within that."""
        end = time.monotonic_ns() + ns
        while not self.set:
            left = end - time.monotonic_ns()
            if left <= 0:
                return True
            time.sleep(min(left, 50_000_000) / 1e9)
        return False


def serve_channelz(port):
    """Serves grpcio's channelz (collected by default in C-core) on
    127.0.0.1:port, so rpclab doctor --pid can read this process's channels.
    Exits 2 when grpcio-channelz is not installed."""
    try:
        from concurrent import futures

        from grpc_channelz.v1 import channelz
    except ImportError:
        need = "grpcio-channelz (pip install 'rpclab-client[channelz]')"
        print(f"rpclab-client: --channelz-port needs {need}", file=sys.stderr)
        sys.exit(2)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    channelz.add_channelz_servicer(server)
    if server.add_insecure_port(f"127.0.0.1:{port}") == 0:
        print(f"rpclab-client: --channelz-port: cannot listen on 127.0.0.1:{port}", file=sys.stderr)
        sys.exit(2)
    server.start()
    print(f"rpclab-client: channelz on 127.0.0.1:{port}", file=sys.stderr)
    return server


def main():
    steps = st.parse(sys.argv[1:])
    port = st.channelz_port(sys.argv[1:])
    channelz_server = serve_channelz(port) if port else None  # noqa: F841 (kept alive until exit)
    stop = Stop()
    stop.install()
    code = run(steps, stop)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: grpcio's threads can hold it past the
    # second a stopped client has.
    os._exit(code)


class Outputs:
    """Each step's out, opened once to append; "-" is stdout. Every write is
    flushed and synced, so they stay open until main's os._exit."""

    def __init__(self):
        self.files = {"-": sys.stdout}

    def write(self, path, line):
        f = self.files.get(path)
        if f is None:
            f = self.files[path] = open(path, "a", encoding="utf-8")
        f.write(line + "\n")
        f.flush()
        if f is not sys.stdout:
            os.fsync(f.fileno())


def run(steps, stop):
    """Runs the steps in order, appending each record to its step's out;
    returns the exit code."""
    env = Env(grpc.__version__)
    outs = Outputs()
    failed = 0
    unreachable = None
    for i, step in enumerate(steps, 1):
        if stop.set:
            return 1
        what = f"{step.rpc} {step.conn.mode} inflight={step.inflight}"
        if unreachable:
            rec = Record(step)
            rec.fail(f"target unreachable: not run: {unreachable}")
        else:
            rec = run_step(step, stop)
            if rec is None:
                return 1  # stopped before this step measured anything
        if rec.unreachable:
            unreachable = f"step {i} ({what}) could not connect"
        if rec.status == "failed":
            failed += 1
        try:
            outs.write(step.out, rec.json(env))
        except OSError as e:
            print(f"{PROG}: write {step.out}: {e}", file=sys.stderr)
            return 1
        print(f"{PROG}: step {i}/{len(steps)} {what}: {rec.summary()}", file=sys.stderr, flush=True)
        if rec.status == "interrupted":
            return 1
    return 1 if failed else 0


def connect(step, stop):
    """Opens the layout's channels and waits until each is READY. Returns
    (channels, error); error is None, "stopped" or why it failed."""
    channels = open_channels(step)
    deadline = time.monotonic_ns() + DIAL_TIMEOUT_NS
    # Every channel of a pool READY, not only one (the pool's own state).
    each = (ch for c in channels for ch in (c.channels if isinstance(c, ChannelPool) else (c,)))
    futures = [grpc.channel_ready_future(ch) for ch in each]
    err = None
    for fut in futures:
        while err is None:
            try:
                fut.result(timeout=0.05)
                break
            except grpc.FutureTimeoutError:
                if stop.set:
                    err = "stopped"
                elif time.monotonic_ns() >= deadline:
                    err = f"target unreachable: no connection to {step.target} within {DIAL_TIMEOUT_NS / 1e9:g}s"
    if err is not None:
        for fut in futures:
            fut.cancel()
        for ch in channels:
            ch.close()
        return None, err
    return channels, None


def run_step(step, stop):
    """Runs one step on fresh channels; None if a stop came before its interval."""
    rec = Record(step)
    channels, err = connect(step, stop)
    if err == "stopped":
        return None
    if err is not None:
        rec.unreachable = True
        rec.fail(err)
        return rec

    # The step's phase, read by every worker: a plain attribute, whose reads
    # and writes are atomic under the GIL.
    phase = SimpleNamespace(v=WARMUP)
    req = SimpleRequest(response_size=step.payload_bytes, payload=Payload(body=bytes(step.payload_bytes)))
    stubs = [BenchmarkServiceStub(ch) for ch in channels]
    workers = [Worker(stubs[i % len(stubs)], phase, req) for i in range(step.inflight)]
    threads = [
        threading.Thread(target=w.streaming if step.rpc == "streaming" else w.unary, name=f"worker-{i}", daemon=True)
        for i, w in enumerate(workers)
    ]
    for t in threads:
        t.start()

    warmed = stop.sleep(step.warmup_ns)
    cpu0 = time.process_time_ns()
    t0 = time.monotonic_ns()
    rec.started_at_ns = time.time_ns()
    interrupted = not warmed
    if warmed:
        phase.v = MEASURE
        interrupted = not stop.sleep(step.interval_ns)
    phase.v = DONE
    elapsed = time.monotonic_ns() - t0
    cpu = time.process_time_ns() - cpu0
    # Closing a channel cancels its RPCs, so no worker stays blocked (a
    # pool's close drains first unless told grace=0).
    for ch in channels:
        if isinstance(ch, ChannelPool):
            ch.close(grace=0)
        else:
            ch.close()
    for t in threads:
        t.join(timeout=1.0)
    if not warmed:
        return None
    by_code = [sum(n) for n in zip(*(w.by_code for w in workers))]
    rec.fill(merge(w.hist for w in workers), by_code, elapsed, cpu)
    if interrupted:
        rec.status = "interrupted"
        rec.error = "interrupted: the interval was cut short"
    return rec


def code_of(e):
    """The status code value of a failed RPC."""
    try:
        c = e.code()
    except Exception:  # not a call's error
        return UNKNOWN
    return c.value[0] if c is not None else UNKNOWN


class Worker:
    """One closed-loop worker: one RPC in flight at a time, its own histogram.
    A failed RPC is counted by its status code (an error that is not a call's,
    e.g. its channel closed at the end of the step, as Unknown, and not at all
    once the step is done)."""

    def __init__(self, stub, phase, req):
        self.stub = stub
        self.phase = phase
        self.req = req
        self.hist = new_histogram()
        self.by_code = [0] * CODES

    def done(self, began, d, code):
        """Records an RPC that began and ended inside the measured interval."""
        if began != MEASURE or self.phase.v != MEASURE:
            return
        self.by_code[code] += 1
        if code == OK:
            self.hist.record_value(min(max(d, 1), HIGHEST))

    def unary(self):
        phase, req, now, call = self.phase, self.req, time.perf_counter_ns, self.stub.UnaryCall
        while phase.v != DONE:
            ph, t0 = phase.v, now()
            try:
                call(req)
                code = OK
            except Exception as e:
                code = code_of(e)
            self.done(ph, now() - t0, code)

    def streaming(self):
        """Bidi ping-pong: one stream, a reply awaited for every request; a
        stream that fails is counted by its status and reopened."""
        phase, req, now = self.phase, self.req, time.perf_counter_ns
        while phase.v != DONE:
            reqs = queue.SimpleQueue()  # the requests, None ends them; grpcio reads them on a thread of its own
            call = None
            ph, t0 = phase.v, now()
            reqs.put(req)
            try:
                call = self.stub.StreamingCall(iter(reqs.get, None))
                for _ in call:
                    self.done(ph, now() - t0, OK)
                    if phase.v == DONE:
                        return
                    ph, t0 = phase.v, now()
                    reqs.put(req)
                self.done(ph, now() - t0, UNAVAILABLE)  # the server ended the stream
            except Exception as e:
                self.done(ph, now() - t0, code_of(e))
            finally:
                reqs.put(None)
                if call is not None:
                    call.cancel()
