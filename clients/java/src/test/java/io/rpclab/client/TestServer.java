// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import com.google.protobuf.ByteString;
import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerTransportFilter;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.rpclab.proto.BenchmarkServiceGrpc;
import io.rpclab.proto.Payload;
import io.rpclab.proto.SimpleRequest;
import io.rpclab.proto.SimpleResponse;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A real grpc-java (Netty) BenchmarkService server on 127.0.0.1 for the tests: it answers with
 * response_size bytes, counts the calls (and stream messages) it answered and the connections it
 * accepted, and can delay each answer or fail every n-th unary call.
 */
final class TestServer implements AutoCloseable {
    final AtomicLong calls = new AtomicLong();
    final AtomicInteger connections = new AtomicInteger();
    final AtomicInteger open = new AtomicInteger();

    /** Calls (streams for streaming) started per client connection, by the client's address. */
    final Map<SocketAddress, AtomicLong> perConnection = new ConcurrentHashMap<>();

    volatile long delayMs;

    /** Fail every n-th unary call with RESOURCE_EXHAUSTED (0: never). */
    volatile int failEvery;

    private final Server server;

    TestServer() throws Exception {
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(ServerInterceptors.intercept(new Service(), new ServerInterceptor() {
                    @Override
                    public <Q, A> ServerCall.Listener<Q> interceptCall(
                            ServerCall<Q, A> call, Metadata h, ServerCallHandler<Q, A> next) {
                        SocketAddress peer = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
                        perConnection
                                .computeIfAbsent(peer, k -> new AtomicLong())
                                .incrementAndGet();
                        return next.startCall(call, h);
                    }
                }))
                .addTransportFilter(new ServerTransportFilter() {
                    @Override
                    public Attributes transportReady(Attributes a) {
                        connections.incrementAndGet();
                        open.incrementAndGet();
                        return a;
                    }

                    @Override
                    public void transportTerminated(Attributes a) {
                        open.decrementAndGet();
                    }
                })
                .build()
                .start();
    }

    /** Waits up to 5 s for every connection to close (the step closes its channels). */
    boolean drained() throws InterruptedException {
        long end = System.nanoTime() + 5_000_000_000L;
        while (open.get() > 0 && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        return open.get() == 0;
    }

    String target() {
        return "127.0.0.1:" + server.getPort();
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
    }

    private void pause() {
        if (delayMs > 0) {
            try {
                Thread.sleep(delayMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static SimpleResponse reply(SimpleRequest r) {
        return SimpleResponse.newBuilder()
                .setPayload(Payload.newBuilder().setBody(ByteString.copyFrom(new byte[r.getResponseSize()])))
                .build();
    }

    private final class Service extends BenchmarkServiceGrpc.BenchmarkServiceImplBase {
        @Override
        public void unaryCall(SimpleRequest r, StreamObserver<SimpleResponse> out) {
            long n = calls.incrementAndGet();
            pause();
            int k = failEvery;
            if (k > 0 && n % k == 0) {
                out.onError(Status.RESOURCE_EXHAUSTED
                        .withDescription("test server: every " + k + "th call fails")
                        .asException());
                return;
            }
            out.onNext(reply(r));
            out.onCompleted();
        }

        @Override
        public StreamObserver<SimpleRequest> streamingCall(StreamObserver<SimpleResponse> out) {
            return new StreamObserver<>() {
                @Override
                public void onNext(SimpleRequest r) {
                    calls.incrementAndGet();
                    pause();
                    out.onNext(reply(r));
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {
                    out.onCompleted();
                }
            };
        }
    }
}
