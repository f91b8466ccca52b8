// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A server of grpc.testing.BenchmarkService/UnaryCall that holds each call while held. */
final class HoldServer {
    final io.grpc.Server server;
    private final Object mu = new Object();
    private final List<StreamObserver<byte[]>> waiting = new ArrayList<>();
    private boolean holding;
    private int arrived;

    HoldServer(int port, int streamsPerConnection) throws IOException {
        ServerServiceDefinition svc = ServerServiceDefinition.builder("grpc.testing.BenchmarkService")
                .addMethod(Bytes.UNARY, ServerCalls.asyncUnaryCall(this::call))
                .build();
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
                .maxConcurrentCallsPerConnection(streamsPerConnection)
                .addService(svc)
                .build()
                .start();
    }

    private void call(byte[] req, StreamObserver<byte[]> out) {
        synchronized (mu) {
            arrived++;
            mu.notifyAll();
            if (holding) {
                waiting.add(out);
                return;
            }
        }
        out.onNext(new byte[0]);
        out.onCompleted();
    }

    /** Calls that reached the server since the last hold. */
    int arrived() {
        synchronized (mu) {
            return arrived;
        }
    }

    int port() {
        return server.getPort();
    }

    void hold() {
        synchronized (mu) {
            holding = true;
            arrived = 0;
        }
    }

    void release() {
        List<StreamObserver<byte[]>> out;
        synchronized (mu) {
            holding = false;
            out = new ArrayList<>(waiting);
            waiting.clear();
        }
        for (StreamObserver<byte[]> o : out) {
            o.onNext(new byte[0]);
            o.onCompleted();
        }
    }

    /** Waits (bounded) until n calls are held; the number held. */
    int awaitHeld(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        synchronized (mu) {
            long left;
            while (waiting.size() < n && (left = deadline - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.timedWait(mu, left);
            }
            return waiting.size();
        }
    }

    void stop() throws InterruptedException {
        release();
        server.shutdownNow().awaitTermination(30, TimeUnit.SECONDS);
    }
}
