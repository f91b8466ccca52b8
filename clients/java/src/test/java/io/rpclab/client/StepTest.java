// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import io.grpc.Channel;
import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.Status;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Steps against a real grpc-java server on loopback. */
@Timeout(120) // a hung step fails its test instead of the whole run
class StepTest {
    @AfterEach
    void clearStop() {
        Main.resetStop();
    }

    /**
     * Runs short steps until one measures a call, so the tests' timings are not a cold JVM's (on a
     * loaded 2-core machine a cold JVM's first 300 ms step completed no call).
     */
    @BeforeAll
    static void warmJvm() throws Exception {
        try (TestServer srv = new TestServer()) {
            long end = System.nanoTime() + 60_000_000_000L;
            while (System.nanoTime() < end) {
                Record r = new Step(flags(), RecordTest.ENV, step(srv.target(), "unary", "shared", 2, 200, 300)).run();
                if (r != null && r.status.equals("ok")) {
                    return;
                }
            }
        }
    }

    /**
     * Settings for a test step: no JIT warm-up, and a dial timeout long enough for a cold JVM's first
     * connection on a loaded 2-core machine (which took over 5 s).
     */
    static Flags flags() {
        Flags f = new Flags();
        f.jitWarmupMs = 0;
        f.dialTimeoutNs = 30_000_000_000L;
        return f;
    }

    /** A step against target with no payload, its warm-up and interval in milliseconds, recorded nowhere. */
    static StepSpec step(String target, String rpc, String conn, int inflight, long warmupMs, long intervalMs) {
        return new StepSpec(
                target, "benchmark", rpc, conn, inflight, 0, warmupMs * 1_000_000L, intervalMs * 1_000_000L, null, "");
    }

    static JsonObject run(Flags f, StepSpec s) throws Exception {
        Record r = new Step(f, RecordTest.ENV, s).run();
        assertNotNull(r, "a step that was not stopped writes a record");
        return RecordTest.json(r);
    }

    static Histogram histogram(JsonObject rec) throws Exception {
        return Histogram.decodeFromCompressedByteBuffer(
                ByteBuffer.wrap(
                        Base64.getDecoder().decode(rec.get("histogram_hdr").getAsString())),
                0);
    }

    static long errors(JsonObject rec) {
        return rec.getAsJsonObject("errors").entrySet().stream()
                .mapToLong(e -> e.getValue().getAsLong())
                .sum();
    }

    /** A channel the worker under test never calls (shut down at once, so it never connects). */
    static Channel unused() {
        return Grpc.newChannelBuilder("127.0.0.1:1", InsecureChannelCredentials.create())
                .build()
                .shutdownNow();
    }

    /** A port on 127.0.0.1 with nothing listening. */
    static int closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /**
     * Each layout opens its connections, uses every one of them, and closes them after the step; a
     * pool (ChannelPool, either policy) included.
     */
    @Test
    void layoutsOpenAndUseTheirConnections() throws Exception {
        Object[][] cases = {
            {"shared", 1, null},
            {"per-worker", 3, null},
            {"pool:2", 2, "round-robin"},
            {"pool:2:least-loaded", 2, "least-loaded"}
        };
        for (Object[] c : cases) {
            try (TestServer srv = new TestServer()) {
                srv.delayMs = 1;
                JsonObject rec = run(flags(), step(srv.target(), "unary", (String) c[0], 3, 0, 300));
                assertEquals("ok", rec.get("status").getAsString(), c[0] + ": " + rec);
                assertEquals(c[1], srv.connections.get(), c[0] + ": connections the server accepted");
                assertEquals(
                        c[1],
                        rec.getAsJsonObject("spec").get("conns_requested").getAsInt(),
                        c[0] + ": conns_requested");
                var pick = rec.getAsJsonObject("spec").get("pick");
                assertEquals(c[2], pick == null ? null : pick.getAsString(), c[0] + ": spec.pick");
                assertEquals((int) c[1], srv.perConnection.size(), c[0] + ": connections that carried calls");
                long total = srv.perConnection.values().stream()
                        .mapToLong(AtomicLong::get)
                        .sum();
                for (AtomicLong n : srv.perConnection.values()) {
                    assertTrue(
                            n.get() * 10 >= total / (int) c[1], c[0] + ": calls per connection " + srv.perConnection);
                }
                assertTrue(srv.drained(), c[0] + ": the step left " + srv.open.get() + " connections open");
            }
        }
    }

    /**
     * Latency in nanoseconds of successful calls only; failed calls counted by code; throughput per
     * second.
     */
    @Test
    void recordsNanosecondsAndCountsErrors() throws Exception {
        for (Flags.Stub stub : Flags.Stub.values()) {
            try (TestServer srv = new TestServer()) {
                srv.delayMs = 5;
                srv.failEvery = 3;
                Flags f = flags();
                f.stub = stub;
                JsonObject rec = run(f, step(srv.target(), "unary", "shared", 2, 100, 500));
                String at = stub + ": " + rec;
                assertEquals("ok", rec.get("status").getAsString(), at);
                long requests = rec.get("requests").getAsLong();
                long failed =
                        rec.getAsJsonObject("errors").get("ResourceExhausted").getAsLong();
                assertEquals(1, rec.getAsJsonObject("errors").size(), at);
                assertTrue(requests >= 10 && failed * 5 >= requests && failed * 2 <= requests, at);
                Histogram h = histogram(rec);
                assertEquals(requests - failed, h.getTotalCount(), "one histogram value per successful RPC: " + at);
                long p50 = rec.getAsJsonObject("latency").get("p50_ns").getAsLong();
                assertTrue(p50 >= 5_000_000L && p50 < 500_000_000L, "p50 " + p50 + " ns for a 5 ms server: " + at);
                long dur = rec.get("duration_ns").getAsLong();
                assertTrue(dur >= 500_000_000L && dur < 1_500_000_000L, "duration_ns " + dur + ": " + at);
                assertEquals(
                        (requests - failed) / (dur / 1e9),
                        rec.get("throughput_rps").getAsDouble(),
                        0.01,
                        at);
                assertTrue(rec.get("client_cpu_ns").getAsLong() > 0, at);
                assertTrue(srv.drained(), at);
            }
        }
    }

    /** Streaming: a bidi ping-pong per worker, one stream each, every reply a recorded RPC. */
    @Test
    void streamingPingPong() throws Exception {
        try (TestServer srv = new TestServer()) {
            JsonObject rec = run(
                    flags(),
                    new StepSpec(
                            srv.target(), "benchmark", "streaming", "per-worker", 2, 10, 0, 500_000_000L, null, ""));
            assertEquals("ok", rec.get("status").getAsString(), rec.toString());
            assertEquals(0, errors(rec), rec.toString());
            assertEquals(2, srv.perConnection.size(), "streams per connection: " + srv.perConnection);
            for (AtomicLong streams : srv.perConnection.values()) {
                assertEquals(1, streams.get(), "one stream per worker for the step: " + srv.perConnection);
            }
            long requests = rec.get("requests").getAsLong();
            assertTrue(requests > 5, rec.toString());
            assertEquals(requests, histogram(rec).getTotalCount());
            assertTrue(
                    srv.calls.get() >= requests, srv.calls.get() + " ping-pongs answered, " + requests + " recorded");
        }
    }

    /** Warm-up calls reach the server but not the record. */
    @Test
    void warmupIsNotRecorded() throws Exception {
        try (TestServer srv = new TestServer()) {
            srv.delayMs = 1;
            JsonObject rec = run(flags(), step(srv.target(), "unary", "shared", 2, 600, 200));
            long recorded = rec.get("requests").getAsLong();
            long served = srv.calls.get();
            assertTrue(
                    recorded > 0 && recorded * 10 < served * 6,
                    recorded + " recorded of " + served + " served with 600 ms of warm-up and 200 ms measured");
        }
    }

    /**
     * Which finished RPCs a worker records: begun and ended in the interval, not cancelled by the
     * step's end.
     */
    @Test
    void workerRecordsOnlyTheInterval() throws Exception {
        AtomicInteger phase = new AtomicInteger(Step.MEASURE);
        Context.CancellableContext ctx = Context.current().withCancellation();
        Worker w = new Worker(unused(), phase, ctx, flags(), step("h:1", "unary", "shared", 1, 0, 1));
        w.done(Step.MEASURE, 5_000, Status.Code.OK);
        w.done(Step.WARMUP, 5_000, Status.Code.OK); // began in the warm-up
        w.done(Step.MEASURE, 5_000, Status.Code.UNAVAILABLE);
        w.done(Step.MEASURE, 0, Status.Code.OK); // clamped to the histogram's 1 ns
        w.done(Step.MEASURE, 3 * Worker.HIGHEST, Status.Code.OK); // clamped to its 100 s
        assertEquals(3, w.hist.getTotalCount());
        assertEquals(1, w.hist.getMinValue());
        assertEquals(w.hist.highestEquivalentValue(Worker.HIGHEST), w.hist.getMaxValue());
        assertEquals(3, w.byCode[0]);
        assertEquals(1, w.byCode[Status.Code.UNAVAILABLE.value()]);
        assertEquals(0, w.byCode[Status.Code.CANCELLED.value()]);

        phase.set(Step.DONE);
        w.done(Step.MEASURE, 5_000, Status.Code.OK); // ended after the interval
        phase.set(Step.MEASURE);
        ctx.cancel(null);
        w.done(Step.MEASURE, 5_000, Status.Code.CANCELLED); // the step's own cancellation
        assertEquals(3, w.hist.getTotalCount());
        assertEquals(3, w.byCode[0]);
        assertEquals(0, w.byCode[Status.Code.CANCELLED.value()]);
    }

    @Test
    void mergeKeepsEveryWorkersCounts() throws Exception {
        AtomicInteger phase = new AtomicInteger(Step.MEASURE);
        Context.CancellableContext ctx = Context.current().withCancellation();
        Worker[] ws = new Worker[3];
        for (int i = 0; i < ws.length; i++) {
            ws[i] = new Worker(unused(), phase, ctx, flags(), step("h:1", "unary", "shared", 1, 0, 1));
        }
        ws[0].hist.recordValue(1000);
        ws[1].hist.recordValue(2000);
        ws[1].hist.recordValue(2000);
        ws[2].hist.recordValue(90_000);
        ws[0].byCode[0] = 1;
        ws[1].byCode[0] = 2;
        ws[2].byCode[0] = 1;
        ws[2].byCode[14] = 5;
        ws[0].byCode[4] = 2;
        long[] codes = new long[Worker.CODES];
        Histogram h = Step.merge(ws, codes);
        assertEquals(4, h.getTotalCount());
        assertEquals(1000, h.getMinValue());
        assertEquals(2, h.getCountAtValue(2000));
        assertEquals(h.highestEquivalentValue(90_000), h.getMaxValue());
        assertEquals(4, codes[0]);
        assertEquals(5, codes[14]);
        assertEquals(2, codes[4]);
        assertEquals(11, java.util.Arrays.stream(codes).sum());
        assertEquals(1, ws[0].hist.getTotalCount(), "merging leaves the workers' histograms alone");
    }

    @Test
    void unreachableTargetFailsWithinTheDialTimeout() throws Exception {
        for (String target : List.of("127.0.0.1:" + closedPort(), "localhost:" + closedPort())) {
            long t0 = System.nanoTime();
            Flags f = flags();
            f.dialTimeoutNs = 300_000_000L;
            Record r = new Step(f, RecordTest.ENV, step(target, "unary", "per-worker", 2, 0, 1000)).run();
            long took = System.nanoTime() - t0;
            assertNotNull(r);
            assertTrue(r.unreachable, target);
            JsonObject rec = RecordTest.json(r);
            assertEquals("failed", rec.get("status").getAsString(), rec.toString());
            assertTrue(rec.get("error").getAsString().startsWith("target unreachable: "), rec.toString());
            assertTrue(rec.get("error").getAsString().contains(target), rec.toString());
            assertTrue(took < 3_000_000_000L, target + ": took " + took / 1e6 + " ms with a 300 ms dial timeout");
        }
    }

    /**
     * A signal during the interval ends the step within a second with an interrupted record of what
     * it measured.
     */
    @Test
    void stopDuringTheIntervalKeepsTheRecord() throws Exception {
        try (TestServer srv = new TestServer()) {
            StepSpec s = step(srv.target(), "unary", "shared", 2, 0, 600_000);
            CompletableFuture<Record> step =
                    CompletableFuture.supplyAsync(() -> new Step(flags(), RecordTest.ENV, s).run());
            long end = System.nanoTime() + 30_000_000_000L;
            while (srv.calls.get() < 100 && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            assertTrue(srv.calls.get() >= 100, "the step made no calls");
            long t0 = System.nanoTime();
            Main.stop();
            Record r = step.get(5, TimeUnit.SECONDS);
            long took = System.nanoTime() - t0;
            // The contract says within a second; 2 s leaves room for a loaded 2-core machine.
            assertTrue(took < 2_000_000_000L, "the step took " + took / 1e6 + " ms to stop");
            JsonObject rec = RecordTest.json(r);
            assertEquals("interrupted", rec.get("status").getAsString(), rec.toString());
            assertEquals(
                    "interrupted: the interval was cut short", rec.get("error").getAsString());
            assertTrue(rec.get("requests").getAsLong() > 0, rec.toString());
            assertEquals(0, errors(rec), "the step's own cancellation is not an error: " + rec);
            assertTrue(rec.get("duration_ns").getAsLong() < 60_000_000_000L, rec.toString());
            assertTrue(srv.drained());
        }
    }

    /** A signal cancels the RPCs in flight: a step waiting on slow calls still ends at once. */
    @Test
    void stopCancelsTheCallsInFlight() throws Exception {
        try (TestServer srv = new TestServer()) {
            srv.delayMs = 20_000;
            StepSpec s = step(srv.target(), "unary", "shared", 2, 0, 600_000);
            CompletableFuture<Record> step =
                    CompletableFuture.supplyAsync(() -> new Step(flags(), RecordTest.ENV, s).run());
            long end = System.nanoTime() + 30_000_000_000L;
            while (srv.calls.get() < 2 && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            assertEquals(2, srv.calls.get(), "both workers' calls are in flight");
            long t0 = System.nanoTime();
            Main.stop();
            Record r = step.get(10, TimeUnit.SECONDS);
            long took = System.nanoTime() - t0;
            assertTrue(took < 2_000_000_000L, "the step took " + took / 1e6 + " ms to stop with 20 s calls in flight");
            JsonObject rec = RecordTest.json(r);
            assertEquals("interrupted", rec.get("status").getAsString(), rec.toString());
            assertEquals(0, rec.get("requests").getAsLong(), "cancelled calls are not counted: " + rec);
        }
    }

    @Test
    void stopDuringTheWarmupWritesNothing() throws Exception {
        try (TestServer srv = new TestServer()) {
            StepSpec s = step(srv.target(), "streaming", "shared", 1, 600_000, 1000);
            CompletableFuture<Record> step =
                    CompletableFuture.supplyAsync(() -> new Step(flags(), RecordTest.ENV, s).run());
            long end = System.nanoTime() + 30_000_000_000L;
            while (srv.calls.get() < 10 && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            Main.stop();
            assertNull(step.get(5, TimeUnit.SECONDS), "nothing was measured: no record");
        }
    }

    /**
     * The JIT warm-up runs the sweep's own steps (every kind and layout, in-flight 1 and 4) for its
     * time.
     */
    @Test
    void jitWarmupRunsTheSweepsSteps() throws Exception {
        try (TestServer srv = new TestServer()) {
            Flags f = flags();
            f.jitWarmupMs = 900;
            List<StepSpec> steps = Stream.of("shared", "per-worker", "pool:2", "shared")
                    .map(c -> step(srv.target(), "unary", c, 8, 1000, 1000))
                    .toList();
            long t0 = System.nanoTime();
            Step.jitWarmup(f, steps);
            long took = System.nanoTime() - t0;
            // shared: 1+1 connections, per-worker: 1+4, pool:2: 2+2.
            assertEquals(11, srv.connections.get(), "connections of the warm-up's steps");
            assertTrue(srv.calls.get() > 0);
            assertTrue(took >= 800_000_000L && took < 5_000_000_000L, "took " + took / 1e6 + " ms for 900 ms");
        }
        long t0 = System.nanoTime();
        Flags u = flags();
        u.jitWarmupMs = 10_000;
        String closed = "127.0.0.1:" + closedPort();
        Step.jitWarmup(
                u, List.of(step(closed, "unary", "shared", 1, 0, 1), step(closed, "unary", "per-worker", 1, 0, 1)));
        long took = System.nanoTime() - t0;
        assertTrue(took < 2_500_000_000L, "an unreachable target ends the warm-up at once; took " + took / 1e6 + " ms");
        assertFalse(Main.stopping.get());
    }
}
