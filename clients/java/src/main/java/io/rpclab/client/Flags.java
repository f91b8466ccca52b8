// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * The human command line of docs/clients.md, parsed by picocli into the same typed steps as a steps
 * file (--steps FILE, docs/step.schema.json), plus the Java client's own settings.
 */
@Command(
        name = "rpclab-client",
        description = "rpclab's Java client (docs/clients.md). Durations in Go syntax (500ms, 2s, 1m).")
final class Flags {
    /** One connection layout: shared, per-worker or pool:N with its policy (round-robin or least-loaded). */
    record Conn(String kind, int n, String policy) {
        int conns(int inflight) {
            return switch (kind) {
                case "shared" -> 1;
                case "per-worker" -> inflight;
                default -> n;
            };
        }
    }

    /** docs/step.schema.json's bound, checked before an --min-inflight..--max-inflight list is made. */
    static final int MAX_INFLIGHT = 20000;

    @Option(
            names = {"-h", "--help"},
            usageHelp = true,
            description = "this usage")
    boolean help;

    @Option(names = "--steps", paramLabel = "FILE", description = "JSON Lines steps (docs/step.schema.json)")
    String steps;

    @Option(names = "--target", paramLabel = "HOST:PORT", description = "the server")
    String target = "";

    @Option(names = "--inflight", split = ",", description = "in-flight counts (default 1,2,4,8,16,32)")
    List<Integer> inflight = new ArrayList<>();

    @Option(names = "--min-inflight", paramLabel = "N")
    Integer min;

    @Option(names = "--max-inflight", paramLabel = "N")
    Integer max;

    @Option(names = "--step", paramLabel = "S", description = "step of the --min-inflight..--max-inflight range")
    Integer step;

    @Option(names = "--conn", split = ",", description = "shared, per-worker, pool:N[:least-loaded]")
    List<String> conns = new ArrayList<>(List.of("shared", "per-worker"));

    @Option(names = "--rpc", split = ",", description = "unary, streaming")
    List<String> rpcs = new ArrayList<>(List.of("unary"));

    @Option(names = "--payload", paramLabel = "BYTES")
    int payload;

    @Option(names = "--warmup", converter = GoDuration.class, paramLabel = "DUR", defaultValue = "1s")
    long warmupNs;

    @Option(names = "--interval", converter = GoDuration.class, paramLabel = "DUR", defaultValue = "3s")
    long intervalNs;

    @Option(names = "--dial-timeout", converter = GoDuration.class, paramLabel = "DUR", defaultValue = "5s")
    long dialTimeoutNs;

    @Option(names = "--rpc-timeout", converter = GoDuration.class, paramLabel = "DUR", defaultValue = "0s")
    long rpcTimeoutNs;

    /** Unrecorded calls before the first step, so the JIT has compiled the RPC path. */
    @Option(
            names = "--jit-warmup",
            converter = GoDuration.class,
            paramLabel = "DUR",
            defaultValue = "10s",
            description = "unrecorded calls before the first step (also $RPCLAB_JAVA_JIT_WARMUP)")
    long jitWarmupNs;

    /** "blocking": a thread per worker in a blocking call; "async": callbacks chain the calls. */
    @Option(
            names = "--stub",
            defaultValue = "blocking",
            description = "blocking or async (unary; also $RPCLAB_JAVA_STUB)")
    String stub;

    @Option(
            names = {"--out", "-o"},
            paramLabel = "FILE",
            description = "JSON Lines records (default stdout)")
    String out = "";

    /** The command line f is parsed by, with env standing for the process environment. */
    static CommandLine commandLine(Flags f, Map<String, String> env) {
        CommandLine cl = new CommandLine(f).setOverwrittenOptionsAllowed(true); // as Go's flag: last wins
        cl.setDefaultValueProvider(arg -> {
            String name = arg instanceof OptionSpec o ? o.longestName() : "";
            String v = env.get(
                    switch (name) {
                        case "--stub" -> "RPCLAB_JAVA_STUB";
                        case "--jit-warmup" -> "RPCLAB_JAVA_JIT_WARMUP";
                        default -> "";
                    });
            return v == null || v.isBlank() ? null : v.trim();
        });
        return cl;
    }

    /** Parses and checks args; a ParameterException names the flag at fault. */
    static Flags parse(String[] args, Map<String, String> env) {
        Flags f = new Flags();
        CommandLine cl = commandLine(f, env);
        cl.parseArgs(args);
        f.check(cl);
        return f;
    }

    /** Checks what picocli parsed; a ParameterException names the flag at fault. */
    void check(CommandLine cl) {
        if (cl.isUsageHelpRequested()) {
            return;
        }
        if (steps != null) {
            String stepFlags = "--target --inflight --min-inflight --max-inflight --step --conn --rpc --payload";
            for (String o : (stepFlags + " --warmup --interval --out").split(" ")) {
                if (cl.getParseResult().hasMatchedOption(o)) {
                    throw bad(cl, o, "is given by the steps file: not with --steps");
                }
            }
        } else if (target.isBlank()) {
            throw bad(cl, "--target", "required (HOST:PORT), or --steps FILE");
        }
        if (inflight.isEmpty() && max == null) {
            if (min != null || step != null) {
                throw bad(cl, min != null ? "--min-inflight" : "--step", "needs --max-inflight");
            }
            inflight.addAll(List.of(1, 2, 4, 8, 16, 32));
        } else if (!inflight.isEmpty() && (min != null || max != null || step != null)) {
            throw bad(cl, "--inflight", "give a list or --min-inflight/--max-inflight, not both");
        } else if (max != null) {
            int lo = min == null ? 1 : min; // as rpclab sweep: the bottom defaults to 1
            int st = step == null ? 1 : step;
            if (lo < 1) throw bad(cl, "--min-inflight", "must be at least 1, got " + lo);
            if (max < lo) throw bad(cl, "--max-inflight", max + " is below --min-inflight " + lo);
            if (st < 1) throw bad(cl, "--step", "must be at least 1, got " + st);
            if (max > MAX_INFLIGHT) throw bad(cl, "--max-inflight", max + " is above " + MAX_INFLIGHT);
            for (int n = lo; n <= max; n += st) inflight.add(n);
        }
        if (jitWarmupNs < 0) throw bad(cl, "--jit-warmup", "negative duration");
        if (dialTimeoutNs <= 0) throw bad(cl, "--dial-timeout", "must be positive");
        if (rpcTimeoutNs < 0) throw bad(cl, "--rpc-timeout", "negative duration");
        if (!stub.equals("blocking") && !stub.equals("async")) {
            throw bad(cl, "--stub", "unknown stub \"" + stub + "\" (want blocking or async; also $RPCLAB_JAVA_STUB)");
        }
        if (steps == null) {
            for (StepSpec s : steps()) {
                ObjectNode n = StepSpec.JSON.valueToTree(s);
                String[] p = StepSpec.problem(n.put("out", "stdout")); // no --out: stdout
                if (p != null) {
                    throw bad(cl, FLAG_OF.getOrDefault(p[0], "--" + p[0]), p[1]);
                }
            }
        }
    }

    /** The flag that sets each step field. */
    private static final Map<String, String> FLAG_OF =
            Map.of("payload_bytes", "--payload", "warmup_ns", "--warmup", "interval_ns", "--interval");

    private static ParameterException bad(CommandLine cl, String flag, String msg) {
        return new ParameterException(cl, flag + ": " + msg);
    }

    /** The command line's steps, in the order rpc, conn, inflight (outermost first). */
    List<StepSpec> steps() {
        List<StepSpec> out = new ArrayList<>();
        for (String rpc : rpcs) {
            for (String c : conns) {
                for (int n : inflight) {
                    out.add(step(rpc, c, n));
                }
            }
        }
        return out;
    }

    StepSpec step(String rpc, String conn, int n) {
        return new StepSpec(
                target.trim(), "benchmark", rpc.trim(), conn.trim(), n, payload, warmupNs, intervalNs, null, out);
    }

    /** A layout as --conn and a step's conn take it, once the schema has checked it. */
    static Conn conn(String s) {
        String[] p = s.trim().split(":");
        return new Conn(p[0], p.length > 1 ? Integer.parseInt(p[1]) : 0, p.length > 2 ? p[2] : "round-robin");
    }

    /**
     * Checks a HOST:PORT target up front: grpc-java would otherwise log an exception from its
     * resolver thread and the step would wait out --dial-timeout. A URI target (dns:///..., unix:...)
     * is left to grpc-java. Returns why it is bad, or null.
     */
    static String checkTarget(String t) {
        if (t.matches("^[a-z][a-z0-9+.-]*:.*") && (t.contains(":/") || t.startsWith("unix:"))) {
            return null;
        }
        int c = t.lastIndexOf(':');
        String host = c < 0 ? "" : t.substring(0, c);
        String port = c < 0 ? "" : t.substring(c + 1);
        if (c < 0) return "\"" + t + "\" has no port (want HOST:PORT)";
        if (host.isEmpty()) return "\"" + t + "\" has no host (want HOST:PORT)";
        if (host.contains(":") && !(host.startsWith("[") && host.endsWith("]"))) {
            return "\"" + t + "\": write an IPv6 address in brackets ([::1]:PORT)";
        }
        int p = port.matches("[0-9]{1,5}") ? Integer.parseInt(port) : -1;
        if (p < 1 || p > 65535) {
            return "\"" + t + "\": port \"" + port + "\" is not in 1..65535";
        }
        return null;
    }
}
