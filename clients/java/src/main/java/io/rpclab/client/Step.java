// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import io.grpc.ConnectivityState;
import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.rpclab.pool.ChannelPool;
import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.HdrHistogram.Histogram;

/**
 * One step: fresh channels for the layout, a bounded wait until every one is READY, one thread per
 * in-flight RPC for the warm-up then the measured interval, and the step's record.
 */
final class Step {
    static final int WARMUP = 0;
    static final int MEASURE = 1;
    static final int DONE = 2;

    private static volatile Context.CancellableContext current;

    private final Flags f;
    private final StepSpec step;
    private final Record rec;
    private final StepSpec.Conn conn;
    private final int inflight;

    /** A step with f's client settings (dial timeout, stub). */
    Step(Flags f, Env env, StepSpec step) {
        this.f = f;
        this.step = step;
        this.conn = step.layout();
        this.inflight = step.inflight();
        this.rec = new Record(step, env);
    }

    /**
     * Warms the JIT up before the first step: the sweep's own steps (every RPC kind and layout, at
     * in-flight 1 and 4) for f.jitWarmupMs in all, records discarded. On one CPU HotSpot needs about
     * 10 s of calls before grpc-java's path is compiled, and warming a different path than the steps
     * run leaves the first step measuring the JIT. An unreachable target ends it at once (the first
     * step then fails as usual).
     */
    static void jitWarmup(Flags f, List<StepSpec> steps) {
        List<StepSpec> kinds = new ArrayList<>();
        for (StepSpec s : steps) {
            for (int n : new int[] {1, 4}) {
                StepSpec k = s.unrecorded(n, 0);
                if (!kinds.contains(k)) {
                    kinds.add(k);
                }
            }
        }
        long each = Math.max(0, f.jitWarmupMs * 1_000_000L / kinds.size() - 100_000_000L);
        Flags w = new Flags();
        w.dialTimeoutNs = Math.min(f.dialTimeoutNs, 1_000_000_000L);
        w.stub = f.stub;
        System.err.printf(
                "rpclab-client (java): JIT warm-up for %s (not recorded; RPCLAB_JAVA_JIT_WARMUP_MS=0 skips it)%n",
                seconds(f.jitWarmupMs * 1_000_000L));
        for (StepSpec k : kinds) {
            Record r = new Step(w, null, k.unrecorded(k.inflight(), each)).run();
            if (r == null || r.unreachable || Main.stopping.get()) {
                return;
            }
        }
    }

    /** Cancels the running step's RPCs (from the shutdown hook). */
    static void cancelCurrent() {
        Context.CancellableContext c = current;
        if (c != null) {
            c.cancel(null);
        }
    }

    /** Runs the step; null if a signal stopped it before its interval began. */
    Record run() {
        List<ManagedChannel> owned = new ArrayList<>(); // the step's channels, or its one pool
        try {
            List<ManagedChannel> channels = owned;
            if (conn.kind().equals("pool")) {
                ChannelPool pool = ChannelPool.forChannels(() -> channel(f, step.target()))
                        .size(conn.n())
                        .policy(conn.policy())
                        .build();
                owned.add(pool);
                channels = pool.channels();
            } else {
                // grpc-java opens one connection per ManagedChannel: each channel has its own subchannels.
                for (int i = 0; i < conn.conns(inflight); i++) {
                    owned.add(channel(f, step.target()));
                }
            }
            String why = waitReady(channels, System.nanoTime() + f.dialTimeoutNs);
            if (why != null) {
                if (Main.stopping.get()) {
                    return null; // stopped before measuring anything: no record, as rpclab's own sweep
                }
                rec.unreachable = true;
                rec.fail(why);
                return rec;
            }
            return measure(owned);
        } catch (IllegalArgumentException e) {
            rec.unreachable = true;
            rec.fail("target unreachable: bad target " + step.target() + ": " + e.getMessage());
            return rec;
        } finally {
            for (ManagedChannel ch : owned) {
                ch.shutdownNow();
            }
            for (ManagedChannel ch : owned) {
                try {
                    ch.awaitTermination(1, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * A new channel to step.target(); with the async stub its callbacks run on the transport's
     * threads.
     */
    static ManagedChannel channel(Flags f, String target) {
        var b = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create());
        if (f.stub == Flags.Stub.async) {
            b.directExecutor();
        }
        return b.build();
    }

    /** Waits until every channel is READY; returns why not, or null. */
    private String waitReady(List<ManagedChannel> channels, long deadline) {
        for (ManagedChannel ch : channels) {
            ConnectivityState s = ch.getState(true);
            while (s != ConnectivityState.READY) {
                if (Main.stopping.get()) {
                    return "interrupted before the step could connect";
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return String.format(
                            "target unreachable: no connection to %s within %s (channel state %s)",
                            step.target(), seconds(f.dialTimeoutNs), s);
                }
                CountDownLatch changed = new CountDownLatch(1);
                ch.notifyWhenStateChanged(s, changed::countDown);
                try {
                    changed.await(Math.min(left, 100_000_000L), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return "interrupted before the step could connect";
                }
                s = ch.getState(true);
            }
        }
        return null;
    }

    private Record measure(List<ManagedChannel> owned) {
        Context.CancellableContext ctx = Context.current().withCancellation();
        current = ctx;
        AtomicInteger phase = new AtomicInteger(WARMUP);
        Worker[] workers = new Worker[inflight];
        Thread[] threads = new Thread[inflight];
        for (int i = 0; i < inflight; i++) {
            // shared: the one channel; per-worker: the worker's own; pool: the ChannelPool (it picks per RPC).
            workers[i] = new Worker(owned.get(conn.kind().equals("per-worker") ? i : 0), phase, ctx, f, step);
            Worker w = workers[i];
            threads[i] = new Thread(() -> ctx.run(w), "rpclab-worker-" + i);
            threads[i].setDaemon(true);
            threads[i].start();
        }
        boolean warmed = Main.sleep(step.warmupNs());
        long cpu0 = cpuNanos();
        long t0 = System.nanoTime();
        Instant started = Instant.now();
        boolean interrupted = !warmed;
        if (warmed) {
            phase.set(MEASURE);
            interrupted = !Main.sleep(step.intervalNs());
        }
        phase.set(DONE);
        long elapsed = System.nanoTime() - t0;
        long cpu = cpuNanos() - cpu0;
        ctx.cancel(null);
        for (Thread t : threads) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        current = null;
        if (!warmed) {
            return null; // stopped during the warm-up: nothing was measured
        }
        long[] byCode = new long[Worker.CODES];
        Histogram h = merge(workers, byCode);
        rec.startedAt = started;
        rec.fill(h, byCode, elapsed, cpu);
        if (interrupted) {
            rec.status = "interrupted";
            rec.error = "interrupted: the interval was cut short";
        }
        return rec;
    }

    /**
     * Merges the workers' histograms into a new one and adds their counts per status code into
     * byCode.
     */
    static Histogram merge(Worker[] workers, long[] byCode) {
        Histogram h = new Histogram(1, Worker.HIGHEST, 3);
        for (Worker w : workers) {
            h.add(w.hist);
            for (int c = 0; c < byCode.length; c++) {
                byCode[c] += w.byCode[c];
            }
        }
        return h;
    }

    private static String seconds(long ns) {
        return String.format("%.3gs", ns / 1e9);
    }

    /** The process's user+system CPU time, in nanoseconds. */
    static long cpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            return sun.getProcessCpuTime();
        }
        return 0;
    }
}
