// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Growth at the server's stream limit against a real server: 16 calls in flight (16 chains of
 * asynchronous unary calls) through a pool of size 1, with growth on (max connections 8, 4 streams per
 * connection) and off. For each, the connections to the server as the kernel has them while the 16
 * run, and the calls per second over a fixed interval. Prints one line of JSON, as
 * clients/python/pool/tests/streamlimit.py; clients/conformance runs it against {@code rpclab serve
 * --max-concurrent-streams 4 --delay 2ms}.
 *
 * <pre>java -cp ... io.rpclab.pool.StreamLimit 127.0.0.1:PORT [seconds]</pre>
 */
public final class StreamLimit {
    private static final int INFLIGHT = 16;

    /** Calls before the count and the interval: the JIT's warm-up, more than Python's 400. */
    private static final int WARM = 2000;

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
        // directExecutor: replies are handled on the connection's event loop, which starts the next
        // call, so the client's own thread hand-offs do not cap the rate on a small machine.
        ChannelPool.Builder b = ChannelPool.forChannels(
                        () -> Grpc.newChannelBuilder(target, InsecureChannelCredentials.create())
                                .directExecutor()
                                .build())
                .size(1);
        if (growth) {
            b.maxConnections(8).streamsPerConnection(4);
        }
        ChannelPool pool = b.build();
        AtomicLong done = new AtomicLong();
        CountDownLatch warm = new CountDownLatch(1);
        CountDownLatch ended = new CountDownLatch(INFLIGHT);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        for (int i = 0; i < INFLIGHT; i++) {
            new Caller(pool, done, warm, ended, failed, stop).next();
        }
        if (!warm.await(60, TimeUnit.SECONDS) || failed.get() != null) {
            throw new IllegalStateException(WARM + " calls did not succeed within 60 s", failed.get());
        }
        long conns = Kernel.connectionsTo(port);
        long n0 = done.get();
        long t0 = System.nanoTime();
        Thread.sleep((long) (seconds * 1000)); // the measured interval, not a synchronisation
        double rps = (done.get() - n0) / ((System.nanoTime() - t0) / 1e9);
        stop.set(true);
        if (!ended.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the callers did not stop within 60 s");
        }
        if (failed.get() != null) {
            throw new IllegalStateException("a call failed", failed.get());
        }
        long channels = pool.channels().size();
        long resizes = pool.resizes();
        pool.close(Duration.ofSeconds(5));
        return new long[] {conns, channels, Math.round(rps), resizes};
    }

    /** One of the 16: a unary call at a time, the next started when one succeeds, until stop. */
    private static final class Caller implements StreamObserver<byte[]> {
        private final ChannelPool pool;
        private final AtomicLong done;
        private final CountDownLatch warm;
        private final CountDownLatch ended;
        private final AtomicReference<Throwable> failed;
        private final AtomicBoolean stop;

        Caller(
                ChannelPool pool,
                AtomicLong done,
                CountDownLatch warm,
                CountDownLatch ended,
                AtomicReference<Throwable> failed,
                AtomicBoolean stop) {
            this.pool = pool;
            this.done = done;
            this.warm = warm;
            this.ended = ended;
            this.failed = failed;
            this.stop = stop;
        }

        void next() {
            if (stop.get()) {
                ended.countDown();
                return;
            }
            ClientCalls.asyncUnaryCall(
                    pool.newCall(Bytes.UNARY, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS)),
                    new byte[0],
                    this);
        }

        @Override
        public void onNext(byte[] reply) {}

        @Override
        public void onError(Throwable t) {
            failed.compareAndSet(null, t);
            warm.countDown();
            ended.countDown();
        }

        @Override
        public void onCompleted() {
            if (done.incrementAndGet() == WARM) {
                warm.countDown();
            }
            next();
        }
    }
}
