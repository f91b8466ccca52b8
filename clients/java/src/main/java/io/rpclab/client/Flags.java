// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** The command line, parsed by picocli: the steps file and the Java client's own settings. */
@Command(
        name = "rpclab-client",
        description = {
            "rpclab's Java client (grpc-java): runs each step of a steps file, a closed-loop load against a"
                    + " grpc.testing.BenchmarkService server, and appends the step's JSON record to the step's out.",
            "rpclab drives it: `rpclab sweep --client java` (or `rpclab compare`) writes the steps file.",
            "The steps file is JSON Lines, one step object a line: docs/clients.md (\"The step spec\"),"
                    + " schema/step.schema.json.",
        },
        exitCodeListHeading = "Exit codes:%n",
        exitCodeList = {
            "0:every step ok",
            "1:a step failed or was interrupted",
            "2:bad input: a flag, or the steps file (its line and field named)"
        })
final class Flags implements Callable<Integer> {
    /** How unary calls are made: a thread blocked per call, or calls chained in callbacks. */
    enum Stub {
        blocking,
        async
    }

    /** The environment variable that gives each option its default. */
    private static final Map<String, String> ENV =
            Map.of("--stub", "RPCLAB_JAVA_STUB", "--jit-warmup-ms", "RPCLAB_JAVA_JIT_WARMUP_MS");

    @Spec
    CommandSpec spec;

    @Option(
            names = {"-h", "--help"},
            usageHelp = true,
            description = "this help")
    boolean help;

    @Option(names = "--steps", required = true, paramLabel = "FILE", description = "the steps file (JSON Lines)")
    Path steps;

    @Option(
            names = "--stub",
            paramLabel = "blocking|async",
            description = "unary calls on the blocking stub, a thread per call, or the async one, calls chained"
                    + " in callbacks (default ${DEFAULT-VALUE}; also $RPCLAB_JAVA_STUB)")
    Stub stub = Stub.blocking;

    @Option(
            names = "--jit-warmup-ms",
            paramLabel = "MS",
            description = "milliseconds of unrecorded calls before the first step, so the JIT has compiled"
                    + " the RPC path (default ${DEFAULT-VALUE}, 0 skips it; also $RPCLAB_JAVA_JIT_WARMUP_MS)")
    long jitWarmupMs = 10_000;

    @Option(
            names = "--channelz-port",
            paramLabel = "PORT",
            description = "serve grpc-java's channelz (grpc.channelz.v1) on 127.0.0.1:PORT, for rpclab doctor"
                    + " --pid --channelz (default: off)")
    Integer channelzPort; // null: off

    /** How long a step waits for its connections (docs/clients.md: 5 s); tests lengthen it. */
    long dialTimeoutNs = 5_000_000_000L;

    /** The command line f is parsed by, with env standing for the process environment. */
    static CommandLine commandLine(Flags f, Map<String, String> env) {
        return new CommandLine(f).setDefaultValueProvider(arg -> {
            String v = arg instanceof OptionSpec o ? env.get(ENV.getOrDefault(o.longestName(), "")) : null;
            return v == null || v.isBlank() ? null : v.trim();
        });
    }

    /** Reads the steps file and runs its steps; picocli calls it once the flags are parsed. */
    @Override
    public Integer call() {
        if (jitWarmupMs < 0) {
            throw new ParameterException(spec.commandLine(), "--jit-warmup-ms: negative, got " + jitWarmupMs);
        }
        if (channelzPort != null && (channelzPort < 1 || channelzPort > 65535)) {
            throw new ParameterException(spec.commandLine(), "--channelz-port: " + channelzPort + " is not a TCP port");
        }
        PrintWriter err = spec.commandLine().getErr();
        List<StepSpec> read;
        try {
            read = StepSpec.read(steps);
        } catch (StepSpec.BadFile e) {
            err.println("rpclab-client (java): " + e.getMessage());
            err.flush();
            return 2;
        }
        if (channelzPort != null) {
            try {
                Main.serveChannelz(channelzPort);
            } catch (IOException e) {
                err.println("rpclab-client (java): --channelz-port: cannot listen on 127.0.0.1:" + channelzPort + ": "
                        + e.getMessage());
                err.flush();
                return 2;
            }
        }
        return Main.run(this, read);
    }
}
