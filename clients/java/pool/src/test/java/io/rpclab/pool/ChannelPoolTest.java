// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ConnectivityState;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * ChannelPool against a real grpc-java Netty server on 127.0.0.1 serving grpc.health.v1 (its
 * generated stubs go through the pool as is): connections as the server accepted them, the peer of
 * every call, least-loaded, health-aware picks, a server restart, bad input and shutdown (the metrics:
 * MetricsTest).
 */
class ChannelPoolTest {
    private static final HealthCheckRequest CHECK = HealthCheckRequest.getDefaultInstance();

    /** A Netty server on 127.0.0.1 that counts the connections it accepted and each call's peer. */
    static final class Server {
        final io.grpc.Server server;
        final AtomicInteger connections = new AtomicInteger();
        /** {method, peer} of each call, in arrival order. */
        final Queue<Object[]> calls = new ConcurrentLinkedQueue<>();

        Server(int port) throws IOException {
            ServerInterceptor peers = new ServerInterceptor() {
                @Override
                public <Q, R> ServerCall.Listener<Q> interceptCall(
                        ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                    calls.add(new Object[] {
                        call.getMethodDescriptor().getBareMethodName(),
                        call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR)
                    });
                    return next.startCall(call, headers);
                }
            };
            server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
                    .addService(
                            io.grpc.ServerInterceptors.intercept(new HealthStatusManager().getHealthService(), peers))
                    .addTransportFilter(new ServerTransportFilter() {
                        @Override
                        public io.grpc.Attributes transportReady(io.grpc.Attributes a) {
                            connections.incrementAndGet();
                            return a;
                        }
                    })
                    .build()
                    .start();
        }

        String target() {
            return "127.0.0.1:" + server.getPort();
        }

        /** The peers of the calls to method. */
        List<SocketAddress> peers(String method) {
            List<SocketAddress> out = new ArrayList<>();
            for (Object[] c : calls) {
                if (c[0].equals(method)) {
                    out.add((SocketAddress) c[1]);
                }
            }
            return out;
        }

        void stop() throws InterruptedException {
            server.shutdownNow().awaitTermination(30, TimeUnit.SECONDS);
        }
    }

    private final List<Server> servers = new ArrayList<>();
    private final List<ManagedChannel> pools = new ArrayList<>();

    private Server server(int port) throws IOException {
        Server s = new Server(port);
        servers.add(s);
        return s;
    }

    private static ChannelPool.Builder plaintext(String target) {
        return ChannelPool.forTarget(target, InsecureChannelCredentials.create());
    }

    /** Waits (bounded) until every channel of p is READY. */
    private static void awaitReady(ChannelPool p) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        for (ManagedChannel ch : p.channels()) {
            ConnectivityState s;
            while ((s = ch.getState(true)) != ConnectivityState.READY && System.nanoTime() < deadline) {
                awaitChange(ch, s, deadline);
            }
            assertEquals(ConnectivityState.READY, ch.getState(false), "a channel of the pool");
        }
    }

    private ChannelPool pool(ChannelPool p) {
        pools.add(p);
        return p;
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        for (ManagedChannel p : pools) {
            p.shutdownNow().awaitTermination(30, TimeUnit.SECONDS);
        }
        for (Server s : servers) {
            s.stop();
        }
    }

    private static HealthCheckResponse check(ManagedChannel ch) {
        return HealthGrpc.newBlockingStub(ch)
                .withDeadlineAfter(20, TimeUnit.SECONDS)
                .check(CHECK);
    }

    /** Waits until ch leaves state from, at most until deadline (System.nanoTime). */
    private static void awaitChange(ManagedChannel ch, ConnectivityState from, long deadline)
            throws InterruptedException {
        CountDownLatch changed = new CountDownLatch(1);
        ch.notifyWhenStateChanged(from, changed::countDown);
        changed.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /** N channels are N connections, whichever the policy, and round robin's calls go over all of them. */
    @Test
    void eachChannelIsItsOwnConnection() throws Exception {
        for (ChannelPool.Policy policy : ChannelPool.Policy.values()) {
            for (int n : new int[] {1, 2, 4}) {
                Server srv = server(0);
                ChannelPool p =
                        pool(plaintext(srv.target()).size(n).policy(policy).build());
                awaitReady(p);
                for (int i = 0; i < 2 * n; i++) {
                    assertEquals(HealthCheckResponse.ServingStatus.SERVING, check(p).getStatus());
                }
                String what = policy + " size " + n;
                assertEquals(n, srv.connections.get(), what + ": connections accepted");
                if (policy == ChannelPool.Policy.ROUND_ROBIN) {
                    // Least-loaded sees equal loads between calls made one after another, and takes
                    // the first of two drawn at random: not every channel need get one.
                    assertEquals(n, new HashSet<>(srv.peers("Check")).size(), what + ": distinct peers of the calls");
                }
                assertEquals(n, p.channels().size(), what + ": channels");
            }
        }
    }

    /**
     * With one call held open on a channel, least-loaded sends every other call elsewhere; round robin
     * does not look. Closing the held call brings every count back to 0.
     */
    @Test
    void leastLoadedAvoidsTheBusyChannel() throws Exception {
        for (ChannelPool.Policy policy : ChannelPool.Policy.values()) {
            Server srv = server(0);
            ChannelPool p = pool(plaintext(srv.target()).size(2).policy(policy).build());
            awaitReady(p);
            CountDownLatch first = new CountDownLatch(1);
            CountDownLatch closed = new CountDownLatch(1);
            AtomicReference<ClientCallStreamObserver<HealthCheckRequest>> watch = new AtomicReference<>();
            HealthGrpc.newStub(p).watch(CHECK, new ClientResponseObserver<HealthCheckRequest, HealthCheckResponse>() {
                @Override
                public void beforeStart(ClientCallStreamObserver<HealthCheckRequest> call) {
                    watch.set(call);
                }

                @Override
                public void onNext(HealthCheckResponse r) {
                    first.countDown();
                }

                @Override
                public void onError(Throwable t) {
                    closed.countDown();
                }

                @Override
                public void onCompleted() {
                    closed.countDown();
                }
            });
            assertTrue(first.await(20, TimeUnit.SECONDS), policy + ": the watch got no status");
            int[] load = p.inflight();
            assertEquals(1, load[0] + load[1], policy + ": calls in flight with the watch open");
            for (int i = 0; i < 6; i++) {
                check(p);
            }
            SocketAddress busy = srv.peers("Watch").get(0);
            long onBusy = srv.peers("Check").stream().filter(busy::equals).count();
            if (policy == ChannelPool.Policy.LEAST_LOADED) {
                assertEquals(0, onBusy, "least-loaded: checks on the watch's connection");
            } else {
                assertEquals(3, onBusy, "round-robin: checks on the watch's connection");
            }
            watch.get().cancel("done", null);
            assertTrue(closed.await(20, TimeUnit.SECONDS), policy + ": the watch did not close");
            assertEquals(List.of(0, 0), List.of(p.inflight()[0], p.inflight()[1]), policy + ": in flight after");
        }
    }

    /** A channel in TRANSIENT_FAILURE is skipped while another can take the call. */
    @Test
    void skipsAFailingChannel() throws Exception {
        Server srv = server(0);
        String[] targets = {srv.target(), "127.0.0.1:1"}; // port 1: connections refused
        AtomicInteger made = new AtomicInteger();
        Supplier<ManagedChannel> alternate =
                () -> Grpc.newChannelBuilder(targets[made.getAndIncrement() % 2], InsecureChannelCredentials.create())
                        .build();
        for (ChannelPool.Policy policy : ChannelPool.Policy.values()) {
            made.set(0);
            ChannelPool p = pool(
                    ChannelPool.forChannels(alternate).size(2).policy(policy).build());
            ManagedChannel dead = p.channels().get(1);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            ConnectivityState s;
            while ((s = dead.getState(true)) != ConnectivityState.TRANSIENT_FAILURE && System.nanoTime() < deadline) {
                awaitChange(dead, s, deadline);
            }
            assertEquals(ConnectivityState.TRANSIENT_FAILURE, dead.getState(false), policy + ": the dead channel");
            // The rule holds while another channel is READY: wait for the good one too.
            ManagedChannel good = p.channels().get(0);
            while ((s = good.getState(true)) != ConnectivityState.READY && System.nanoTime() < deadline) {
                awaitChange(good, s, deadline);
            }
            assertEquals(ConnectivityState.READY, good.getState(false), policy + ": the good channel");
            for (int i = 0; i < 6; i++) {
                int call = i;
                assertEquals(
                        HealthCheckResponse.ServingStatus.SERVING,
                        check(p).getStatus(),
                        () -> policy + ": call " + call);
            }
        }
    }

    /**
     * The server stops and a new one starts on the same port: calls through the same pool succeed
     * again, the caller doing nothing but call.
     */
    @Test
    void survivesAServerRestart() throws Exception {
        Server srv = server(0);
        int port = srv.server.getPort();
        ChannelPool p = pool(plaintext(srv.target()).size(3).build());
        for (int i = 0; i < 3; i++) {
            check(p);
        }
        srv.stop();
        StatusRuntimeException down = assertThrows(StatusRuntimeException.class, () -> check(p));
        assertEquals(Status.Code.UNAVAILABLE, down.getStatus().getCode(), "a call while the server is down");

        Server again = server(port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int ok = 0;
        while (ok < 6 && System.nanoTime() < deadline) {
            try {
                check(p);
                ok++;
            } catch (StatusRuntimeException e) {
                ok = 0;
                // Wait (bounded) for a channel in backoff to try again rather than spin.
                for (ManagedChannel ch : p.channels()) {
                    if (ch.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
                        awaitChange(ch, ConnectivityState.TRANSIENT_FAILURE, deadline);
                        break;
                    }
                }
            }
        }
        assertEquals(6, ok, "consecutive calls that succeeded after the restart");
        assertTrue(again.connections.get() >= 1, "connections to the new server");
    }

    /** Bad input: IllegalArgumentException naming the value. */
    @Test
    void badInputNamesTheValue() {
        ManagedChannel one = Grpc.newChannelBuilder("127.0.0.1:1", InsecureChannelCredentials.create())
                .build();
        pools.add(one);
        Object[][] cases = {
            {"0", (Runnable) () -> plaintext("127.0.0.1:1").size(0)},
            {"-3", (Runnable) () -> plaintext("127.0.0.1:1").size(-3)},
            {"1025", (Runnable) () -> plaintext("127.0.0.1:1").size(ChannelPool.MAX_SIZE + 1)},
            {"\"ROUND_ROBIN\"", (Runnable) () -> plaintext("127.0.0.1:1").policy("ROUND_ROBIN")},
            {"dns:///a b", (Runnable) () -> plaintext("dns:///a b")},
            {"credentials are null", (Runnable) () -> ChannelPool.forTarget("127.0.0.1:1", null)},
            {"\"fastest\"", (Runnable) () -> plaintext("127.0.0.1:1").policy("fastest")},
            {"\"\"", (Runnable) () -> plaintext("")},
            {"null", (Runnable) () -> plaintext(null)},
            {"supplier is null", (Runnable) () -> ChannelPool.forChannels(null)},
            {
                "the same channel twice",
                (Runnable) () -> ChannelPool.forChannels(() -> one).size(2).build()
            },
            {
                "returned null",
                (Runnable) () -> ChannelPool.forChannels(() -> null).build()
            },
        };
        for (Object[] c : cases) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, ((Runnable) c[1])::run);
            assertTrue(
                    e.getMessage().contains((String) c[0]), "got \"" + e.getMessage() + "\", want it to name " + c[0]);
        }
        assertEquals(ChannelPool.Policy.LEAST_LOADED, ChannelPool.Policy.parse("least-loaded"));
        assertEquals(ChannelPool.Policy.ROUND_ROBIN, ChannelPool.Policy.parse("round-robin"));
        int cpus = Runtime.getRuntime().availableProcessors();
        assertEquals(Math.max(2, Math.min(8, cpus)), ChannelPool.defaultSize(), "default size");
        assertEquals(
                ChannelPool.defaultSize(),
                plaintext("127.0.0.1:1").build().channels().size());
    }

    /** A channel still CONNECTING (a peer that accepts and never speaks HTTP/2) is skipped. */
    @Test
    void skipsAConnectingChannel() throws Exception {
        Server srv = server(0);
        try (ServerSocket silent = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            String[] targets = {srv.target(), "127.0.0.1:" + silent.getLocalPort()};
            AtomicInteger made = new AtomicInteger();
            for (ChannelPool.Policy policy : ChannelPool.Policy.values()) {
                made.set(0);
                ChannelPool p = pool(ChannelPool.forChannels(() -> Grpc.newChannelBuilder(
                                        targets[made.getAndIncrement() % 2], InsecureChannelCredentials.create())
                                .build())
                        .size(2)
                        .policy(policy)
                        .build());
                ManagedChannel good = p.channels().get(0);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                ConnectivityState s;
                while ((s = good.getState(true)) != ConnectivityState.READY && System.nanoTime() < deadline) {
                    awaitChange(good, s, deadline);
                }
                assertEquals(ConnectivityState.CONNECTING, p.channels().get(1).getState(false), "the silent one");
                for (int i = 0; i < 6; i++) {
                    assertEquals(HealthCheckResponse.ServingStatus.SERVING, check(p).getStatus(), policy + ": call");
                }
            }
        }
    }

    /**
     * An IDLE channel is a candidate beside a READY one (a call makes it connect): round robin sends
     * every other call to it: the calls come from two peers.
     */
    @Test
    void anIdleChannelIsACandidate() throws Exception {
        Server srv = server(0);
        ChannelPool p = pool(plaintext(srv.target()).size(2).build());
        awaitReady(p);
        ManagedChannel idle = p.channels().get(1);
        idle.enterIdle();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        ConnectivityState s;
        while ((s = idle.getState(false)) != ConnectivityState.IDLE && System.nanoTime() < deadline) {
            awaitChange(idle, s, deadline);
        }
        assertEquals(ConnectivityState.IDLE, idle.getState(false), "after enterIdle");
        for (int i = 0; i < 4; i++) {
            check(p);
        }
        assertEquals(2, new HashSet<>(srv.peers("Check")).size(), "distinct peers of the calls");
        assertEquals(ConnectivityState.READY, idle.getState(false), "the IDLE channel took a call");
    }

    /**
     * close(drain) with a stream in flight: new calls fail at once with UNAVAILABLE, the stream ends
     * with UNAVAILABLE when the drain ends, every channel terminates; closing again is fine.
     */
    @Test
    void closeDrainsThenCancels() throws Exception {
        Server srv = server(0);
        ChannelPool p = pool(plaintext(srv.target()).size(3).build());
        awaitReady(p);
        CountDownLatch first = new CountDownLatch(1);
        AtomicReference<Status> ended = new AtomicReference<>();
        CountDownLatch closed = new CountDownLatch(1);
        HealthGrpc.newStub(p).watch(CHECK, new io.grpc.stub.StreamObserver<HealthCheckResponse>() {
            @Override
            public void onNext(HealthCheckResponse r) {
                first.countDown();
            }

            @Override
            public void onError(Throwable t) {
                ended.set(Status.fromThrowable(t));
                closed.countDown();
            }

            @Override
            public void onCompleted() {
                ended.set(Status.OK);
                closed.countDown();
            }
        });
        assertTrue(first.await(20, TimeUnit.SECONDS), "the watch got no status");
        assertEquals(1, java.util.Arrays.stream(p.inflight()).sum(), "in flight: the watch");
        assertEquals(false, p.close(java.time.Duration.ofMillis(200)), "close: the watch outlived the drain");
        assertTrue(closed.await(20, TimeUnit.SECONDS), "the watch did not end");
        // grpc-java's shutdownNow ends a call with UNAVAILABLE ("Channel shutdownNow invoked").
        assertEquals(Status.Code.UNAVAILABLE, ended.get().getCode(), "the watch's status");
        assertTrue(p.isTerminated(), "terminated after close");
        assertEquals(0, java.util.Arrays.stream(p.inflight()).sum(), "in flight after close");
        assertEquals(true, p.close(java.time.Duration.ofMillis(200)), "close twice");
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> check(p));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), "a call after close");
    }

    /** A target that refuses or never answers fails the call within its deadline: no hang. */
    @Test
    void aTargetThatNeverAnswersFailsTheCall() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            Object[][] cases = {
                {"127.0.0.1:1", Status.Code.UNAVAILABLE}, // refused
                {"127.0.0.1:" + silent.getLocalPort(), Status.Code.DEADLINE_EXCEEDED}, // accepted, never answers
            };
            for (Object[] c : cases) {
                ChannelPool p = pool(plaintext((String) c[0]).size(2).build());
                StatusRuntimeException e =
                        assertThrows(StatusRuntimeException.class, () -> HealthGrpc.newBlockingStub(p)
                                .withDeadlineAfter(1, TimeUnit.SECONDS)
                                .check(CHECK));
                assertEquals(c[1], e.getStatus().getCode(), (String) c[0]);
                p.shutdownNow();
                assertTrue(p.awaitTermination(30, TimeUnit.SECONDS), c[0] + ": terminated");
            }
        }
    }

    /** shutdown, isShutdown, awaitTermination and isTerminated cover every channel. */
    @Test
    void shutdownCoversEveryChannel() throws Exception {
        Server srv = server(0);
        ChannelPool p = pool(plaintext(srv.target()).size(3).build());
        check(p);
        assertEquals(ConnectivityState.READY, p.getState(false));
        assertEquals(false, p.isShutdown());
        p.shutdown();
        assertTrue(p.isShutdown());
        assertTrue(p.awaitTermination(30, TimeUnit.SECONDS));
        assertTrue(p.isTerminated());
        for (ManagedChannel ch : p.channels()) {
            assertTrue(ch.isTerminated(), "a channel of the pool is not terminated");
        }
        assertEquals(ConnectivityState.SHUTDOWN, p.getState(false));
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> check(p));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
        assertNotEquals("", p.authority());
    }
}
