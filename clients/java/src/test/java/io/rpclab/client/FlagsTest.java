// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The command line: --steps FILE, --help, the client's own settings and their environment variables. */
class FlagsTest {
    /** What running the command line with args (and env) gave: exit code, stdout, stderr. */
    record Run(int code, String out, String err) {}

    static Run run(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl =
                Flags.commandLine(new Flags(), env).setOut(new PrintWriter(out)).setErr(new PrintWriter(err));
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    static Flags parse(Map<String, String> env, String... args) {
        Flags f = new Flags();
        Flags.commandLine(f, env).parseArgs(args);
        return f;
    }

    @Test
    void helpSaysWhatDrivesItTheFormatAndTheExitCodes() {
        for (String h : List.of("--help", "-h")) {
            Run r = run(Map.of(), h);
            assertEquals(0, r.code(), h);
            for (String want : List.of(
                    "--steps=FILE",
                    "rpclab sweep --client java",
                    "docs/clients.md",
                    "schema/step.schema.json",
                    "Exit codes:",
                    "2   bad input",
                    "--jit-warmup-ms",
                    "--channelz-port=PORT",
                    "--stub=blocking|async")) {
                assertTrue(r.out().contains(want), h + ": got usage\n" + r.out() + "\nwant it to say " + want);
            }
        }
    }

    /** Bad input gets picocli's error, naming the flag, and the usage: exit 2, nothing run. */
    @Test
    void badInputExitsTwoNamingTheFlag() throws Exception {
        Path out = Files.createTempFile("rpclab-flags", ".jsonl"); // where a step would write, if one ran
        Path steps = StepSpecTest.file(StepSpecTest.with("out", "\"" + out + "\""));
        Object[][] cases = {
            // {env, want in stderr, args...}
            {Map.of(), "Missing required option: '--steps=FILE'"},
            {Map.of(), "Unknown options: '--target', 'h:1'", "--steps", steps.toString(), "--target", "h:1"},
            {Map.of(), "Unmatched argument at index 2: 'stray'", "--steps", steps.toString(), "stray"},
            {Map.of(), "Missing required parameter for option '--steps'", "--steps"},
            {Map.of(), "Invalid value for option '--stub'", "--steps", steps.toString(), "--stub", "future"},
            {Map.of("RPCLAB_JAVA_STUB", "fast"), "Invalid value for option '--stub'", "--steps", steps.toString()},
            {Map.of(), "'--jit-warmup-ms': '2s' is not a long", "--steps", steps.toString(), "--jit-warmup-ms", "2s"},
            {Map.of("RPCLAB_JAVA_JIT_WARMUP_MS", "0s"), "'0s' is not a long", "--steps", steps.toString()},
            {Map.of(), "--jit-warmup-ms: negative, got -1", "--steps", steps.toString(), "--jit-warmup-ms", "-1"},
            {Map.of(), "--channelz-port: 0 is not a TCP port", "--steps", steps.toString(), "--channelz-port", "0"},
            {Map.of(), "--channelz-port: 65536 is not a TCP port", "--steps", steps.toString(), "--channelz-port=65536"
            },
            {Map.of(), "'--channelz-port': 'x' is not an int", "--steps", steps.toString(), "--channelz-port", "x"},
        };
        for (Object[] c : cases) {
            @SuppressWarnings("unchecked")
            Map<String, String> env = (Map<String, String>) c[0];
            String[] args = java.util.Arrays.copyOfRange(c, 2, c.length, String[].class);
            Run r = run(env, args);
            String at = String.join(" ", args) + " " + env;
            assertEquals(2, r.code(), at + ": " + r.err());
            assertTrue(r.err().contains((String) c[1]), at + ": got\n" + r.err() + "\nwant it to say " + c[1]);
            assertTrue(r.err().contains("Usage: rpclab-client"), at + ": no usage after the error:\n" + r.err());
        }
        assertEquals("", Files.readString(out), "no step ran");
    }

    /** A --channelz-port another socket holds exits 2 naming the flag and the address, before any step runs. */
    @Test
    void channelzPortInUseExitsTwo() throws Exception {
        Path out = Files.createTempFile("rpclab-flags", ".jsonl");
        Path steps = StepSpecTest.file(StepSpecTest.with("out", "\"" + out + "\""));
        try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            String port = Integer.toString(held.getLocalPort());
            Run r = run(Map.of(), "--steps", steps.toString(), "--jit-warmup-ms", "0", "--channelz-port", port);
            assertEquals(2, r.code(), r.err());
            assertTrue(
                    r.err().startsWith("rpclab-client (java): --channelz-port: cannot listen on 127.0.0.1:" + port),
                    r.err());
        }
        assertEquals("", Files.readString(out), "no step ran");
    }

    /** A bad steps file exits 2 with the line and the field, before anything runs. */
    @Test
    void badStepsFileExitsTwo() throws Exception {
        Path steps = StepSpecTest.file(StepSpecTest.GOOD, StepSpecTest.with("inflight", "\"x\""));
        Run r = run(Map.of(), "--steps", steps.toString(), "--jit-warmup-ms", "0");
        assertEquals(2, r.code(), r.err());
        assertTrue(
                r.err().startsWith("rpclab-client (java): --steps " + steps + " line 2: field \"inflight\""), r.err());
    }

    @Test
    void settingsFromFlagsAndEnvironment() {
        Object[][] cases = {
            // {env, args, want stub, want JIT warm-up ms}
            {Map.of(), new String[] {}, Flags.Stub.blocking, 10_000L},
            {Map.of("RPCLAB_JAVA_STUB", " async "), new String[] {}, Flags.Stub.async, 10_000L},
            {
                Map.of("RPCLAB_JAVA_STUB", " ", "RPCLAB_JAVA_JIT_WARMUP_MS", ""),
                new String[] {},
                Flags.Stub.blocking,
                10_000L
            },
            {Map.of("RPCLAB_JAVA_JIT_WARMUP_MS", "0"), new String[] {}, Flags.Stub.blocking, 0L},
            // The flag wins over the environment.
            {
                Map.of("RPCLAB_JAVA_STUB", "async", "RPCLAB_JAVA_JIT_WARMUP_MS", "2000"),
                new String[] {"--stub", "blocking", "--jit-warmup-ms=1"},
                Flags.Stub.blocking,
                1L
            },
        };
        for (Object[] c : cases) {
            @SuppressWarnings("unchecked")
            Map<String, String> env = (Map<String, String>) c[0];
            String[] args = (String[]) c[1];
            String[] all = java.util.stream.Stream.concat(
                            java.util.stream.Stream.of("--steps", "s.jsonl"), java.util.Arrays.stream(args))
                    .toArray(String[]::new);
            Flags f = parse(env, all);
            String at = String.join(" ", all) + " " + env;
            assertEquals(Path.of("s.jsonl"), f.steps, at);
            assertEquals(c[2], f.stub, at);
            assertEquals(c[3], f.jitWarmupMs, at);
            assertEquals(5_000_000_000L, f.dialTimeoutNs, at);
        }
    }
}
