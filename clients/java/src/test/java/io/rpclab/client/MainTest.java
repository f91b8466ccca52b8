// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Main.run: the sweep's steps in order, one JSON line each, and its exit code. */
@Timeout(120) // a hung step fails its test instead of the whole run
class MainTest {
    @AfterEach
    void clearStop() {
        Main.resetStop();
    }

    @BeforeAll
    static void warmJvm() throws Exception {
        StepTest.warmJvm();
    }

    /** Runs steps, their records appended to out; returns the exit code. */
    static int run(Flags f, Path out, List<StepSpec> steps) {
        return Main.run(
                f,
                steps.stream()
                        .map(s -> new StepSpec(
                                s.target(),
                                s.service(),
                                s.rpc(),
                                s.conn(),
                                s.inflight(),
                                s.payloadBytes(),
                                s.warmupNs(),
                                s.intervalNs(),
                                null,
                                out.toString()))
                        .toList());
    }

    /** The steps for each rpc, conn and in-flight count, in that order (outermost first). */
    static List<StepSpec> steps(
            String target,
            List<String> rpcs,
            List<String> conns,
            List<Integer> inflight,
            long warmupMs,
            long intervalMs) {
        List<StepSpec> steps = new ArrayList<>();
        for (String rpc : rpcs) {
            for (String conn : conns) {
                for (int n : inflight) {
                    steps.add(StepTest.step(target, rpc, conn, n, warmupMs, intervalMs));
                }
            }
        }
        return steps;
    }

    static List<JsonObject> lines(Path out) throws IOException {
        String text = Files.readString(out);
        List<JsonObject> recs = new ArrayList<>();
        for (String l : text.split("\n", -1)) {
            if (!l.isEmpty()) {
                recs.add(JsonParser.parseString(l).getAsJsonObject());
            }
        }
        assertTrue(text.endsWith("\n"), "each record ends its line");
        return recs;
    }

    static String step(JsonObject r) {
        JsonObject s = r.getAsJsonObject("spec");
        return s.get("rpc").getAsString()
                + " "
                + s.get("conn_mode").getAsString()
                + " "
                + s.get("inflight").getAsInt();
    }

    @Test
    void stepsRunInOrder() throws Exception {
        try (TestServer srv = new TestServer()) {
            List<StepSpec> steps = steps(
                    srv.target(),
                    List.of("unary", "streaming"),
                    List.of("shared", "per-worker"),
                    List.of(1, 2),
                    0,
                    100);
            Path out = Files.createTempFile("rpclab-main", ".jsonl");
            int code = run(StepTest.flags(), out, steps);
            List<String> got = lines(out).stream().map(MainTest::step).toList();
            assertEquals(
                    List.of(
                            "unary shared 1",
                            "unary shared 2",
                            "unary per-worker 1",
                            "unary per-worker 2",
                            "streaming shared 1",
                            "streaming shared 2",
                            "streaming per-worker 1",
                            "streaming per-worker 2"),
                    got);
            boolean allOk = true;
            for (JsonObject r : lines(out)) {
                assertEquals("java", r.getAsJsonObject("env").get("language").getAsString());
                allOk &= r.get("status").getAsString().equals("ok");
            }
            // (A loaded machine may leave a 100 ms step of a cold JVM with no RPC: then the exit code
            // must say so.)
            assertEquals(allOk ? 0 : 1, code, "exit code; records: " + out);
            assertTrue(
                    lines(out).stream()
                                    .filter(r -> r.get("status").getAsString().equals("ok"))
                                    .count()
                            >= 4,
                    "most steps ok: " + out);
        }
    }

    /** After a step that cannot connect, the rest are written as not run, at once; exit 1. */
    @Test
    void unreachableTargetSkipsTheRest() throws Exception {
        String target = "127.0.0.1:" + StepTest.closedPort();
        Flags f = StepTest.flags();
        f.dialTimeoutNs = 200_000_000L;
        Path out = Files.createTempFile("rpclab-main", ".jsonl");
        long t0 = System.nanoTime();
        assertEquals(
                1,
                run(f, out, steps(target, List.of("unary"), List.of("shared", "pool:2"), List.of(1, 2), 1000, 3000)));
        long took = System.nanoTime() - t0;
        List<JsonObject> recs = lines(out);
        assertEquals(4, recs.size());
        assertTrue(
                recs.get(0).get("error").getAsString().startsWith("target unreachable: no connection to " + target),
                recs.get(0).toString());
        for (JsonObject r : recs.subList(1, 4)) {
            assertEquals("failed", r.get("status").getAsString());
            assertEquals(
                    "target unreachable: not run: step 1 (shared unary inflight=1) could not connect",
                    r.get("error").getAsString());
        }
        assertEquals(
                "pool 2",
                recs.get(3).getAsJsonObject("spec").get("conn_mode").getAsString()
                        + " "
                        + recs.get(3).getAsJsonObject("spec").get("inflight").getAsInt());
        assertTrue(took < 3_000_000_000L, "took " + took / 1e6 + " ms");
    }

    /** A failed step does not end the sweep; it makes the exit code 1. */
    @Test
    void failedStepsAreWrittenAndExitOne() throws Exception {
        try (TestServer srv = new TestServer()) {
            srv.failEvery = 1;
            Path out = Files.createTempFile("rpclab-main", ".jsonl");
            List<StepSpec> steps = steps(srv.target(), List.of("unary"), List.of("shared"), List.of(1, 2), 200, 500);
            assertEquals(1, run(StepTest.flags(), out, steps));
            List<JsonObject> recs = lines(out);
            assertEquals(2, recs.size());
            long failed = 0;
            for (JsonObject r : recs) {
                assertEquals("failed", r.get("status").getAsString());
                if (r.get("requests").getAsLong() > 0) { // (a cold JVM on a loaded machine may finish none)
                    assertEquals(
                            "every RPC failed (" + r.get("requests").getAsLong() + ")",
                            r.get("error").getAsString());
                    failed +=
                            r.getAsJsonObject("errors").get("ResourceExhausted").getAsLong();
                }
            }
            assertTrue(failed > 0, "failed RPCs counted: " + out);
        }
    }

    /**
     * A signal mid-sweep: the running step's interrupted record is written, no later step runs, exit
     * 1.
     */
    @Test
    void stopEndsTheSweepKeepingTheRecord() throws Exception {
        try (TestServer srv = new TestServer()) {
            Path out = Files.createTempFile("rpclab-main", ".jsonl");
            List<StepSpec> steps =
                    steps(srv.target(), List.of("unary"), List.of("shared"), List.of(1, 2, 4), 0, 600_000);
            CompletableFuture<Integer> code = CompletableFuture.supplyAsync(() -> run(StepTest.flags(), out, steps));
            long end = System.nanoTime() + 30_000_000_000L;
            while (srv.calls.get() < 100 && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            Main.stop();
            assertEquals(1, code.get(5, TimeUnit.SECONDS));
            List<JsonObject> recs = lines(out);
            assertEquals(1, recs.size(), recs.toString());
            assertEquals("interrupted", recs.get(0).get("status").getAsString());
            assertTrue(recs.get(0).get("requests").getAsLong() > 0);
        }
    }

    /**
     * A steps file: its steps run in file order, each record appended to that step's out, client_cpus
     * kept.
     */
    @Test
    void stepsFileRunsEachStepToItsOut() throws Exception {
        try (TestServer srv = new TestServer()) {
            Path dir = Files.createTempDirectory("rpclab-steps");
            Path a = dir.resolve("a.jsonl");
            Path b = dir.resolve("b.jsonl");
            String step = "{\"target\":\"%s\",\"service\":\"benchmark\",\"rpc\":\"%s\",\"conn\":\"%s\",\"inflight\":%d,"
                    + "\"payload_bytes\":0,\"warmup_ns\":0,\"interval_ns\":100000000,%s\"out\":\"%s\"}%n";
            Path file = dir.resolve("steps.jsonl");
            Files.writeString(
                    file,
                    String.format(step, srv.target(), "streaming", "pool:2", 3, "\"client_cpus\":[1],", a)
                            + String.format(step, srv.target(), "unary", "shared", 1, "", b)
                            + String.format(step, srv.target(), "unary", "per-worker", 2, "", a));
            Main.run(StepTest.flags(), StepSpec.read(file));
            assertEquals(
                    List.of("streaming pool 3", "unary per-worker 2"),
                    lines(a).stream().map(MainTest::step).toList());
            assertEquals(
                    List.of("unary shared 1"),
                    lines(b).stream().map(MainTest::step).toList());
            assertEquals(
                    "[1]",
                    lines(a).get(0).getAsJsonObject("env").get("client_cpus").toString());
            var cpus = lines(b).get(0).getAsJsonObject("env").get("client_cpus");
            assertTrue(cpus == null || !cpus.toString().equals("[1]"), "a step's pin is its own: " + cpus);
        }
    }
}
