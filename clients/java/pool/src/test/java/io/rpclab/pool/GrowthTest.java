// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import static io.rpclab.pool.ReadBack.Kind.COUNTER;
import static io.rpclab.pool.ReadBack.Kind.UP_DOWN_COUNTER;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.CallOptions;
import io.grpc.ConnectivityState;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCalls;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Growth at the server's stream limit and redial, against a real grpc-java Netty server on 127.0.0.1
 * that allows 4 calls per connection (maxConcurrentCallsPerConnection) and holds calls until
 * released; connections counted as the kernel has them (/proc/self/fd against /proc/net/tcp).
 */
class GrowthTest {
    private static final long BOUND = TimeUnit.SECONDS.toNanos(30);

    private final List<HoldServer> servers = new ArrayList<>();
    private final List<ManagedChannel> pools = new ArrayList<>();
    private final List<SdkMeterProvider> providers = new ArrayList<>();

    @AfterEach
    void tearDown() throws InterruptedException {
        for (ManagedChannel p : pools) {
            p.shutdownNow().awaitTermination(30, TimeUnit.SECONDS);
        }
        for (HoldServer s : servers) {
            s.stop();
        }
        providers.forEach(SdkMeterProvider::close);
    }

    private HoldServer server(int port) throws IOException {
        HoldServer s = new HoldServer(port, 4);
        servers.add(s);
        return s;
    }

    private ChannelPool.Builder plaintext(int port) {
        return ChannelPool.forTarget("127.0.0.1:" + port, InsecureChannelCredentials.create());
    }

    private ChannelPool pool(ChannelPool p) {
        pools.add(p);
        return p;
    }

    private InMemoryMetricReader reader(ChannelPool.Builder b) {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        SdkMeterProvider meters =
                SdkMeterProvider.builder().registerMetricReader(reader).build();
        providers.add(meters);
        b.meterProvider(meters);
        return reader;
    }

    /**
     * {attribute value: sum} of the long sum name (an UpDownCounter or a Counter, checked with its
     * unit), by the attribute key (or "all"); every point carries rpclab.pool.target.
     */
    private static Map<String, Long> points(
            InMemoryMetricReader reader, String name, ReadBack.Kind kind, String unit, String key) {
        Map<String, Long> out = new HashMap<>();
        for (Map.Entry<Attributes, Long> p :
                ReadBack.points(ReadBack.instrument(reader, name, kind, unit)).entrySet()) {
            assertTrue(p.getKey().get(ReadBack.TARGET) != null, name + ": rpclab.pool.target on " + p.getKey());
            Object v = p.getKey().asMap().entrySet().stream()
                    .filter(a -> a.getKey().getKey().equals(key))
                    .map(Map.Entry::getValue)
                    .findFirst()
                    .orElse("all");
            out.merge(String.valueOf(v), p.getValue(), Long::sum);
        }
        return out;
    }

    static List<ListenableFuture<byte[]>> start(ManagedChannel ch, int n) {
        List<ListenableFuture<byte[]>> calls = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            calls.add(ClientCalls.futureUnaryCall(
                    ch.newCall(Bytes.UNARY, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS)), new byte[0]));
        }
        return calls;
    }

    static void finish(List<ListenableFuture<byte[]>> calls) throws Exception {
        for (ListenableFuture<byte[]> c : calls) {
            c.get(60, TimeUnit.SECONDS);
        }
    }

    /** Waits (bounded) until ch is in state want; its state then. */
    private static ConnectivityState awaitState(ManagedChannel ch, ConnectivityState want, boolean connect)
            throws InterruptedException {
        long deadline = System.nanoTime() + BOUND;
        ConnectivityState s;
        while ((s = ch.getState(connect)) != want && System.nanoTime() < deadline) {
            CountDownLatch changed = new CountDownLatch(1);
            ch.notifyWhenStateChanged(s, changed::countDown);
            changed.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        return ch.getState(false);
    }

    /**
     * 16 calls held at a server of 4 streams per connection, through a pool of size 1 that may grow to
     * 8 at 4 streams each: 4 connections as the kernel sees them, 4 calls on each, 3 grows counted.
     */
    @Test
    void growsAtTheStreamLimit() throws Exception {
        HoldServer srv = server(0);
        ChannelPool.Builder b = plaintext(srv.port()).size(1).maxConnections(8).streamsPerConnection(4);
        InMemoryMetricReader reader = reader(b);
        ChannelPool p = pool(b.build());
        srv.hold();
        List<ListenableFuture<byte[]>> calls = start(p, 16);
        assertEquals(16, srv.awaitHeld(16), "calls held at the server");
        assertEquals(4, Kernel.connectionsTo(srv.port()), "connections to the server, as the kernel sees them");
        assertArrayEquals(new int[] {4, 4, 4, 4}, p.inflight(), "calls in flight per channel");
        assertEquals(
                Map.of("all", 4L),
                points(reader, "rpclab.pool.size", UP_DOWN_COUNTER, "{connection}", ""),
                "rpclab.pool.size");
        srv.release();
        finish(calls);
        assertEquals(3, p.resizes(), "resizes");
        assertEquals(
                Map.of("grow", 3L),
                points(reader, "rpclab.pool.resizes", COUNTER, "{resize}", "rpclab.pool.direction"));
        assertEquals(
                16L,
                points(reader, "rpclab.pool.picks", COUNTER, "{pick}", "rpclab.pool.connection").values().stream()
                        .mapToLong(Long::longValue)
                        .sum(),
                "rpclab.pool.picks");
    }

    /**
     * Growth reads one count of the calls in flight, not the channels one by one (calls moving between
     * channels can make them all look full): with 3 of 4 streams taken the call looks again, with 4 of 4
     * the pool grows; once every call ended the count is 0.
     */
    @Test
    void growsOnlyWhenEveryStreamIsTaken() throws Exception {
        HoldServer srv = server(0);
        ChannelPool p = pool(plaintext(srv.port())
                .size(1)
                .maxConnections(2)
                .streamsPerConnection(4)
                .build());
        srv.hold();
        List<ListenableFuture<byte[]>> calls = start(p, 3);
        assertEquals(3, srv.awaitHeld(3), "calls held at the server");
        assertNull(p.channels.grow(p.channels.entries()), "growth with 3 of 4 streams taken");
        calls.addAll(start(p, 1));
        assertEquals(4, srv.awaitHeld(4), "calls held at the server");
        Entry g = p.channels.grow(p.channels.entries());
        assertNotNull(g, "growth with 4 of 4 streams taken");
        p.channels.release(g); // grow counted the calling call on g
        srv.release();
        finish(calls);
        assertEquals(0, p.channels.claimed(), "calls counted in flight once all ended");
    }

    /** Growth is off by default: the same 16 calls keep one connection (4 at the server, 12 queued). */
    @Test
    void growthIsOffByDefault() throws Exception {
        HoldServer srv = server(0);
        ChannelPool p = pool(plaintext(srv.port()).size(1).build());
        srv.hold();
        List<ListenableFuture<byte[]>> calls = start(p, 16);
        assertEquals(4, srv.awaitHeld(4), "calls held at the server");
        assertEquals(1, Kernel.connectionsTo(srv.port()), "connections to the server, as the kernel sees them");
        assertArrayEquals(new int[] {16}, p.inflight(), "calls in flight");
        srv.release();
        finish(calls);
        assertEquals(0, p.resizes(), "resizes");
    }

    /**
     * Channels added by growth are shut down once idle for the idle timeout; the pool keeps its size.
     */
    @Test
    void retiresIdleGrownChannels() throws Exception {
        HoldServer srv = server(0);
        ChannelPool.Builder b = plaintext(srv.port())
                .size(1)
                .maxConnections(4)
                .streamsPerConnection(1)
                .idleTimeout(Duration.ofMillis(200));
        InMemoryMetricReader reader = reader(b);
        ChannelPool p = pool(b.build());
        srv.hold();
        List<ListenableFuture<byte[]>> calls = start(p, 3);
        assertEquals(3, srv.awaitHeld(3), "calls held at the server");
        List<ManagedChannel> grown = p.channels().subList(1, 3);
        assertEquals(3, Kernel.connectionsTo(srv.port()), "connections while 3 calls are held");
        srv.release();
        finish(calls);
        for (ManagedChannel ch : grown) {
            assertEquals(ConnectivityState.SHUTDOWN, awaitState(ch, ConnectivityState.SHUTDOWN, false), "grown");
            assertTrue(ch.awaitTermination(30, TimeUnit.SECONDS), "a retired channel terminates");
        }
        assertEquals(1, p.channels().size(), "channels after the idle timeout");
        assertEquals(4, p.resizes(), "resizes: 2 grows and 2 shrinks");
        assertEquals(
                Map.of("grow", 2L, "shrink", 2L),
                points(reader, "rpclab.pool.resizes", COUNTER, "{resize}", "rpclab.pool.direction"));
        assertEquals(
                Map.of("all", 1L),
                points(reader, "rpclab.pool.size", UP_DOWN_COUNTER, "{connection}", ""),
                "rpclab.pool.size");
        assertEquals(1, Kernel.connectionsTo(srv.port()), "connections after the idle timeout");
        ClientCalls.blockingUnaryCall(
                p, Bytes.UNARY, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), new byte[0]);
    }

    /**
     * A channel whose target refuses connections is replaced after the redial delay; once a server
     * listens on that port, the pool's channel is READY.
     */
    @Test
    void redialsAFailingChannel() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        ChannelPool.Builder b = plaintext(port).size(1).redialDelay(Duration.ofMillis(300));
        InMemoryMetricReader reader = reader(b);
        ChannelPool p = pool(b.build());
        ManagedChannel first = p.channels().get(0);
        assertEquals(
                ConnectivityState.SHUTDOWN,
                awaitState(first, ConnectivityState.SHUTDOWN, false),
                "the refused channel was not replaced");
        assertTrue(p.redials() >= 1, "redials");
        server(port);
        long deadline = System.nanoTime() + BOUND;
        ManagedChannel ch;
        while ((ch = p.channels().get(0)).getState(true) != ConnectivityState.READY && System.nanoTime() < deadline) {
            ConnectivityState s = ch.getState(false);
            if (s != ConnectivityState.READY) {
                CountDownLatch changed = new CountDownLatch(1);
                ch.notifyWhenStateChanged(s, changed::countDown); // SHUTDOWN too when redialled again
                changed.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        }
        assertEquals(ConnectivityState.READY, ch.getState(false), "the pool's channel once the server listens");
        assertNotSame(first, ch, "the channel is a new one");
        assertEquals(1, p.channels().size(), "channels");
        ClientCalls.blockingUnaryCall(
                p, Bytes.UNARY, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), new byte[0]);
        assertEquals(
                Map.of("all", p.redials()),
                points(reader, "rpclab.pool.redials", COUNTER, "{redial}", ""),
                "rpclab.pool.redials");
        p.shutdownNow();
        assertTrue(p.awaitTermination(30, TimeUnit.SECONDS), "terminated");
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("rpclab-pool-timer")) {
                t.join(TimeUnit.SECONDS.toMillis(30));
                assertTrue(!t.isAlive(), "the pool's timer thread outlived the pool");
            }
        }
    }

    /** Bad growth and redial options: IllegalArgumentException naming the value. */
    @Test
    void badOptionsNameTheValue() {
        Object[][] cases = {
            {"max connections 0", (Runnable) () -> plaintext(1).maxConnections(0)},
            {"max connections 1025", (Runnable) () -> plaintext(1).maxConnections(1025)},
            {
                "max connections 2 is below the size 4",
                (Runnable) () -> plaintext(1).size(4).maxConnections(2).build()
            },
            {
                "max connections 8 (above the size 1) needs streamsPerConnection",
                (Runnable) () -> plaintext(1).size(1).maxConnections(8).build()
            },
            {"streams per connection 0", (Runnable) () -> plaintext(1).streamsPerConnection(0)},
            {"idle timeout PT0S", (Runnable) () -> plaintext(1).idleTimeout(Duration.ZERO)},
            {"idle timeout null", (Runnable) () -> plaintext(1).idleTimeout(null)},
            {"redial delay PT-1S", (Runnable) () -> plaintext(1).redialDelay(Duration.ofSeconds(-1))},
            {"redial delay PT0S", (Runnable) () -> plaintext(1).redialDelay(Duration.ZERO)},
        };
        for (Object[] c : cases) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, ((Runnable) c[1])::run);
            assertTrue(
                    e.getMessage().contains((String) c[0]), "got \"" + e.getMessage() + "\", want it to name " + c[0]);
        }
        // Max equal to the size is no growth, and needs no limit.
        pool(plaintext(1).size(2).maxConnections(2).build());
    }
}
