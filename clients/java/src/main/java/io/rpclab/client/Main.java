// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.ChannelzService;
import java.io.FileOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * rpclab's Java client (docs/clients.md): a closed-loop sweep on grpc-java against a
 * grpc.testing.BenchmarkService server, one JSON Lines record per step.
 *
 * <p>Exit codes: 0 every step ok, 1 a step failed, 2 bad input (Flags). SIGINT/SIGTERM end the running step
 * within a second; its record ("interrupted") and every earlier one are kept.
 */
public final class Main {
    /** Set once a signal asks the client to stop; read by every step. */
    static final AtomicBoolean stopping = new AtomicBoolean();

    /** Counted down on a signal, so sleeps end at once. */
    private static volatile CountDownLatch stopLatch = new CountDownLatch(1);

    private Main() {}

    public static void main(String[] args) {
        Thread main = Thread.currentThread();
        Thread hook = new Thread(
                () -> {
                    stop();
                    try {
                        main.join(2000); // let the running step write its record
                    } catch (InterruptedException ignored) {
                        Thread.currentThread().interrupt();
                    }
                },
                "rpclab-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        int code = Flags.commandLine(new Flags(), System.getenv()).execute(args);
        try {
            Runtime.getRuntime().removeShutdownHook(hook); // else System.exit would wait for it to join main
        } catch (IllegalStateException signalled) {
            return; // the hook is running: System.exit would block
        }
        System.exit(code);
    }

    /**
     * Serves grpc-java's channelz (every channel is registered with it) on 127.0.0.1:port until the process
     * exits, so rpclab doctor --pid can read this process's channels.
     */
    static Server serveChannelz(int port) throws IOException {
        Server s = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
                .addService(ChannelzService.newInstance(100))
                .build()
                .start();
        System.err.println("rpclab-client (java): channelz on 127.0.0.1:" + s.getPort());
        return s;
    }

    /** Runs the steps in order, each record appended to its step's out, and returns the exit code. */
    static int run(Flags f, List<StepSpec> steps) {
        Env env = Env.detect(f);
        if (f.jitWarmupMs > 0) {
            Step.jitWarmup(f, steps);
        }
        int failed = 0;
        String unreachable = null;
        for (int i = 0; i < steps.size(); i++) {
            StepSpec s = steps.get(i);
            if (stopping.get()) {
                return 1;
            }
            Record rec;
            if (unreachable != null) {
                rec = new Record(s, env);
                rec.fail("target unreachable: not run: " + unreachable);
            } else {
                rec = new Step(f, env, s).run();
                if (rec == null) {
                    return 1; // stopped before this step measured anything
                }
                if (rec.unreachable) {
                    unreachable = String.format(
                            "step %d (%s %s inflight=%d) could not connect", i + 1, s.conn(), s.rpc(), s.inflight());
                }
            }
            if (rec.status.equals("failed")) {
                failed++;
            }
            try {
                write(s.out(), rec.toJson());
            } catch (IOException e) {
                System.err.println("rpclab-client (java): out " + s.out() + ": " + e.getMessage());
                return 1;
            }
            System.err.printf(
                    "rpclab-client (java): step %d/%d %s %s inflight=%d: %s%n",
                    i + 1, steps.size(), s.rpc(), s.conn(), s.inflight(), rec.summary());
            if (rec.status.equals("interrupted")) {
                return 1;
            }
        }
        return failed > 0 ? 1 : 0;
    }

    /** Appends line to the file out, flushed and synced. */
    static void write(String out, String line) throws IOException {
        try (FileOutputStream fo = new FileOutputStream(out, true)) {
            fo.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            fo.getFD().sync();
        }
    }

    /** What a signal does: every step stops, sleeps end, the running step's RPCs are cancelled. */
    static void stop() {
        stopping.set(true);
        stopLatch.countDown();
        Step.cancelCurrent();
    }

    /** Undoes stop() (for tests, which stop steps in one JVM). */
    static void resetStop() {
        stopLatch = new CountDownLatch(1);
        stopping.set(false);
    }

    /** Sleeps up to ns nanoseconds; returns false if a signal asked to stop. */
    static boolean sleep(long ns) {
        if (ns <= 0) {
            return !stopping.get();
        }
        try {
            return !stopLatch.await(ns, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
