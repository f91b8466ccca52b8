// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

class FlagsTest {
    private static final Map<String, String> NO_ENV = Map.of();

    private static Flags parse(String... args) {
        return Flags.parse(args, NO_ENV);
    }

    private static List<String> kinds(Flags f) {
        return f.conns.stream().map(c -> Flags.conn(c).kind()).toList();
    }

    @Test
    void defaults() throws Exception {
        Flags f = parse("--target", "h:1");
        assertEquals("h:1", f.target);
        assertEquals(List.of(1, 2, 4, 8, 16, 32), f.inflight);
        assertEquals(List.of("shared", "per-worker"), kinds(f));
        assertEquals(List.of("unary"), f.rpcs);
        assertEquals(0, f.payload);
        assertEquals(1_000_000_000L, f.warmupNs);
        assertEquals(3_000_000_000L, f.intervalNs);
        assertEquals(5_000_000_000L, f.dialTimeoutNs);
        assertEquals(0L, f.rpcTimeoutNs);
        assertEquals(10_000_000_000L, f.jitWarmupNs);
        assertEquals("blocking", f.stub);
        assertEquals("", f.out);
    }

    /** Every flag, in both spellings (--flag value and --flag=value), and -o. */
    @Test
    void everyFlag() throws Exception {
        Flags f = parse(
                "--target",
                " 127.0.0.1:9 ",
                "--min-inflight",
                "2",
                "--max-inflight",
                "8",
                "--step",
                "3",
                "--conn",
                "shared,pool:4,per-worker",
                "--rpc=unary,streaming",
                "--payload",
                "100",
                "--warmup",
                "500ms",
                "--interval=2s",
                "--dial-timeout",
                "750ms",
                "--rpc-timeout",
                "1s",
                "--stub",
                "async",
                "--jit-warmup",
                "0s",
                "-o",
                "x.jsonl");
        assertEquals("127.0.0.1:9", f.step("unary", "shared", 1).target());
        assertEquals(List.of(2, 5, 8), f.inflight);
        assertEquals(List.of("shared", "pool", "per-worker"), kinds(f));
        assertEquals(List.of("unary", "streaming"), f.rpcs);
        assertEquals(100, f.payload);
        assertEquals(500_000_000L, f.warmupNs);
        assertEquals(2_000_000_000L, f.intervalNs);
        assertEquals(750_000_000L, f.dialTimeoutNs);
        assertEquals(1_000_000_000L, f.rpcTimeoutNs);
        assertEquals("async", f.stub);
        assertEquals(0L, f.jitWarmupNs);
        assertEquals("x.jsonl", f.out);

        Flags g = parse("--target=h:2", "--inflight", "3,1,7", "--out=y", "--stub=blocking");
        assertEquals("h:2", g.target);
        assertEquals(List.of(3, 1, 7), g.inflight);
        assertEquals("y", g.out);
        assertEquals("blocking", g.stub);
    }

    @Test
    void targets() throws Exception {
        for (String t : List.of(
                "127.0.0.1:50051",
                "localhost:1",
                "[::1]:65535",
                "dns:///localhost:50051",
                "unix:///tmp/s.sock",
                "unix:s.sock")) {
            assertEquals(t, parse("--target", t).target);
        }
    }

    @Test
    void inflightRanges() throws Exception {
        assertEquals(List.of(1, 2, 3, 4), parse("--target", "h:1", "--max-inflight", "4").inflight);
        assertEquals(List.of(3), parse("--target", "h:1", "--min-inflight", "3", "--max-inflight", "3").inflight);
        assertEquals(List.of(1, 5, 9), parse("--target", "h:1", "--max-inflight", "10", "--step", "4").inflight);
        assertEquals(
                Flags.MAX_INFLIGHT,
                parse("--target", "h:1", "--inflight", "" + Flags.MAX_INFLIGHT)
                        .inflight
                        .get(0));
    }

    /**
     * The layouts grpc-java has, and how many channels (so connections) each opens at a given
     * in-flight.
     */
    @Test
    void connectionLayouts() throws Exception {
        assertEquals(new Flags.Conn("shared", 0, "round-robin"), Flags.conn("shared"));
        assertEquals(new Flags.Conn("per-worker", 0, "round-robin"), Flags.conn(" per-worker "));
        assertEquals(new Flags.Conn("pool", 3, "round-robin"), Flags.conn("pool:3"));
        assertEquals(new Flags.Conn("pool", 3, "least-loaded"), Flags.conn("pool:3:least-loaded"));
        assertEquals(1, Flags.conn("shared").conns(16));
        assertEquals(16, Flags.conn("per-worker").conns(16));
        assertEquals(1, Flags.conn("per-worker").conns(1));
        assertEquals(3, Flags.conn("pool:3").conns(16));
        assertEquals(3, Flags.conn("pool:3").conns(1));
    }

    @Test
    void cCoreLayoutsAreRefusedWithTheReason() {
        for (String c : List.of("channel-per-worker", "local-pool", "distinct-args")) {
            ParameterException e = assertThrows(ParameterException.class, () -> parse("--target", "h:1", "--conn", c));
            assertTrue(e.getMessage().startsWith("--conn: \"" + c + "\" is a C-core layout"), e.getMessage());
        }
    }

    @Test
    void environment() throws Exception {
        assertEquals(
                "async", Flags.parse(new String[] {"--target", "h:1"}, Map.of("RPCLAB_JAVA_STUB", " async ")).stub);
        assertEquals("blocking", Flags.parse(new String[] {"--target", "h:1"}, Map.of("RPCLAB_JAVA_STUB", " ")).stub);
        // The flag wins over the environment.
        assertEquals(
                "blocking",
                Flags.parse(new String[] {"--target", "h:1", "--stub", "blocking"}, Map.of("RPCLAB_JAVA_STUB", "async"))
                        .stub);
        assertEquals(
                2_000_000_000L,
                Flags.parse(new String[] {"--target", "h:1"}, Map.of("RPCLAB_JAVA_JIT_WARMUP", "2s")).jitWarmupNs);
        assertEquals(
                1_000_000L,
                Flags.parse(
                                new String[] {"--target", "h:1", "--jit-warmup", "1ms"},
                                Map.of("RPCLAB_JAVA_JIT_WARMUP", "2s"))
                        .jitWarmupNs);
        ParameterException e = assertThrows(
                ParameterException.class,
                () -> Flags.parse(new String[] {"--target", "h:1"}, Map.of("RPCLAB_JAVA_JIT_WARMUP", "soon")));
        assertTrue(e.getMessage().contains("--jit-warmup") && e.getMessage().contains("\"soon\""), e.getMessage());
        e = assertThrows(
                ParameterException.class,
                () -> Flags.parse(new String[] {"--target", "h:1"}, Map.of("RPCLAB_JAVA_STUB", "fast")));
        assertTrue(e.getMessage().contains("\"fast\"") && e.getMessage().contains("RPCLAB_JAVA_STUB"), e.getMessage());
    }

    /**
     * Each bad input gives an error that starts with the flag (or argument) at fault and names the
     * value.
     */
    @Test
    void badInputNamesTheFlag() {
        String[][] cases = {
            // {want prefix, want in message, args...}
            {"--target", "required", "--inflight", "1"},
            {"--target", "required", "--target", " "},
            {"--target", "\"h\" has no port", "--target", "h"},
            {"--target", "port \"99999\" is not in 1..65535", "--target", "127.0.0.1:99999"},
            {"--target", "port \"0\" is not in 1..65535", "--target", "h:0"},
            {"--target", "port \"\" is not in", "--target", "h:"},
            {"--target", "port \"http\" is not in", "--target", "h:http"},
            {"--target", "has no host", "--target", ":50051"},
            {"--target", "in brackets", "--target", "::1:50051"},
            {"stray", "Unmatched argument", "--target", "h:1", "stray"},
            {"--bogus", "Unknown option", "--target", "h:1", "--bogus", "1"},
            {"--warmup", "Missing required parameter", "--target", "h:1", "--warmup"},
            {"--inflight", "'x' is not an int", "--target", "h:1", "--inflight", "1,x"},
            {"--inflight", "'' is not an int", "--target", "h:1", "--inflight", "1,,2"},
            {"--inflight", "must have a minimum value of 1", "--target", "h:1", "--inflight", "0"},
            {"--inflight", "not both", "--target", "h:1", "--inflight", "1", "--min-inflight", "2"},
            {"--inflight", "not both", "--target", "h:1", "--inflight", "1", "--step", "2"},
            {
                "--min-inflight",
                "must be at least 1, got 0",
                "--target",
                "h:1",
                "--min-inflight",
                "0",
                "--max-inflight",
                "2"
            },
            {"--min-inflight", "needs --max-inflight", "--target", "h:1", "--min-inflight", "2"},
            {
                "--max-inflight",
                "2 is below --min-inflight 4",
                "--target",
                "h:1",
                "--min-inflight",
                "4",
                "--max-inflight",
                "2"
            },
            {"--max-inflight", "20001 is above 20000", "--target", "h:1", "--max-inflight", "20001"},
            {"--max-inflight", "'9999999999' is not an int", "--target", "h:1", "--max-inflight", "9999999999"},
            {"--step", "must be at least 1, got 0", "--target", "h:1", "--max-inflight", "4", "--step", "0"},
            {"--step", "needs --max-inflight", "--target", "h:1", "--step", "2"},
            {"--conn", "does not match the regex pattern", "--target", "h:1", "--conn", "bogus"},
            {"--conn", "does not match", "--target", "h:1", "--conn", "pool:0"},
            {"--rpc", "does not have a value in the enumeration", "--target", "h:1", "--rpc", "bidi"},
            {"--payload", "must have a minimum value of 0", "--target", "h:1", "--payload", "-1"},
            {"--payload", "'1KB' is not an int", "--target", "h:1", "--payload", "1KB"},
            {"--warmup", "must have a minimum value of 0", "--target", "h:1", "--warmup", "-1s"},
            {"--warmup", "invalid duration \"2\"", "--target", "h:1", "--warmup", "2"},
            {"--interval", "must have a minimum value of 1", "--target", "h:1", "--interval", "0s"},
            {"--dial-timeout", "must be positive", "--target", "h:1", "--dial-timeout", "0s"},
            {"--rpc-timeout", "negative duration", "--target", "h:1", "--rpc-timeout", "-1ms"},
            {"--jit-warmup", "negative duration", "--target", "h:1", "--jit-warmup", "-1s"},
            {"--stub", "unknown stub \"future\"", "--target", "h:1", "--stub", "future"},
        };
        // The steps' ranges and layouts come from docs/step.schema.json (StepSpecTest has each bound).
        for (String[] c : cases) {
            String[] args = java.util.Arrays.copyOfRange(c, 2, c.length);
            ParameterException e = assertThrows(
                    ParameterException.class, () -> parse(args), String.join(" ", args) + ": want an error");
            assertTrue(
                    e.getMessage().contains(c[0]),
                    String.join(" ", args) + ": got \"" + e.getMessage() + "\", want it to name " + c[0]);
            assertTrue(
                    e.getMessage().contains(c[1]),
                    String.join(" ", args) + ": got \"" + e.getMessage() + "\", want it to say " + c[1]);
        }
    }

    @Test
    void payloadBounds() throws Exception {
        assertEquals(0, parse("--target", "h:1", "--payload", "0").payload);
        assertEquals(4194240, parse("--target", "h:1", "--payload", "4194240").payload);
    }

    @Test
    void helpGivesUsage() {
        for (String h : List.of("--help", "-h")) {
            Flags f = new Flags();
            CommandLine cl = Flags.commandLine(f, NO_ENV);
            cl.parseArgs(h);
            assertTrue(cl.isUsageHelpRequested(), h);
        }
        String usage = Flags.commandLine(new Flags(), NO_ENV).getUsageMessage();
        for (String flag : List.of("--target", "--steps", "--inflight", "--conn", "--warmup", "--out")) {
            assertTrue(usage.contains(flag), "usage lacks " + flag + ":\n" + usage);
        }
    }

    /** --steps gives every step: the flags that make steps cannot come with it. */
    @Test
    void stepsExcludesTheStepFlags() {
        assertEquals("s.jsonl", parse("--steps", "s.jsonl", "--stub", "async").steps);
        ParameterException e =
                assertThrows(ParameterException.class, () -> parse("--steps", "s.jsonl", "--inflight", "2"));
        assertTrue(e.getMessage().startsWith("--inflight: "), e.getMessage());
    }
}
