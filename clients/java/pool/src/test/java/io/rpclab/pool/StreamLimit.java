// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import io.grpc.CallOptions;
import io.grpc.InsecureChannelCredentials;
import io.grpc.stub.ClientCalls;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Growth at the server's stream limit against a real server: 16 calls in flight (16 threads of
 * blocking unary calls) through a pool of size 1, with growth on (max connections 8, 4 streams per
 * connection) and off. For each, the connections to the server as the kernel has them while the 16
 * run, and the calls per second over a fixed interval. Prints one line of JSON, as
 * clients/python/pool/tests/streamlimit.py; clients/conformance runs it against {@code rpclab serve
 * --max-concurrent-streams 4 --delay 2ms}.
 *
 * <pre>java -cp ... io.rpclab.pool.StreamLimit 127.0.0.1:PORT [seconds]</pre>
 */
public final class StreamLimit {
    private static final int INFLIGHT = 16;

    private StreamLimit() {}

    public static void main(String[] args) throws Exception {
        String target = args[0];
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 2.0;
        long[] on = run(target, seconds, true);
        long[] off = run(target, seconds, false);
        double ratio = Math.round(100.0 * on[2] / Math.max(off[2], 1)) / 100.0;
        System.out.println(
                String.format(Locale.ROOT, "{\"on\": %s, \"off\": %s, \"ratio\": %s}", json(on), json(off), ratio));
        System.out.flush();
        System.exit(0);
    }

    private static String json(long[] r) {
        return String.format(
                Locale.ROOT, "{\"conns\": %d, \"channels\": %d, \"rps\": %d, \"resizes\": %d}", r[0], r[1], r[2], r[3]);
    }

    /** {connections, channels, calls per second, resizes} of one run. */
    private static long[] run(String target, double seconds, boolean growth) throws Exception {
        int port = Integer.parseInt(target.substring(target.lastIndexOf(':') + 1));
        ChannelPool.Builder b = ChannelPool.forTarget(target, InsecureChannelCredentials.create())
                .size(1);
        if (growth) {
            b.maxConnections(8).streamsPerConnection(4);
        }
        ChannelPool pool = b.build();
        AtomicLong done = new AtomicLong();
        CountDownLatch warm = new CountDownLatch(1);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < INFLIGHT; i++) {
            Thread t = new Thread(() -> {
                try {
                    while (true) {
                        if (stop.get()) {
                            return;
                        }
                        ClientCalls.blockingUnaryCall(
                                pool,
                                Bytes.UNARY,
                                CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS),
                                new byte[0]);
                        if (done.incrementAndGet() == 400) {
                            warm.countDown();
                        }
                    }
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                    warm.countDown();
                }
            });
            t.start();
            threads.add(t);
        }
        if (!warm.await(60, TimeUnit.SECONDS) || failed.get() != null) {
            throw new IllegalStateException("400 calls did not succeed within 60 s", failed.get());
        }
        long conns = Kernel.connectionsTo(port);
        long n0 = done.get();
        long t0 = System.nanoTime();
        Thread.sleep((long) (seconds * 1000)); // the measured interval, not a synchronisation
        double rps = (done.get() - n0) / ((System.nanoTime() - t0) / 1e9);
        stop.set(true);
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(60));
        }
        if (failed.get() != null) {
            throw new IllegalStateException("a call failed", failed.get());
        }
        long channels = pool.channels().size();
        long resizes = pool.resizes();
        pool.close(Duration.ofSeconds(5));
        return new long[] {conns, channels, Math.round(rps), resizes};
    }
}
