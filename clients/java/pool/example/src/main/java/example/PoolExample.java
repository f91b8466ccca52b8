// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package example;

import io.grpc.CallOptions;
import io.grpc.InsecureChannelCredentials;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.rpclab.pool.ChannelPool;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * PoolExample TARGET [CALLS]: a pool of 4 connections to TARGET (e.g. rpclab serve's address) that
 * sends CALLS unary calls of grpc.testing.BenchmarkService/UnaryCall (an empty SimpleRequest as raw
 * bytes, so this example needs no generated code) and prints "ok N" when all succeeded.
 */
public final class PoolExample {
    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private static final MethodDescriptor<byte[], byte[]> UNARY = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName("grpc.testing.BenchmarkService/UnaryCall")
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();

    public static void main(String[] args) throws Exception {
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        ChannelPool pool = ChannelPool.forTarget(args[0], InsecureChannelCredentials.create())
                .size(4)
                .policy(ChannelPool.Policy.LEAST_LOADED)
                .maxConnections(8) // grow past 4 when each channel carries 100 calls (the server's limit)
                .streamsPerConnection(100)
                .build();
        for (int i = 0; i < calls; i++) {
            ClientCalls.blockingUnaryCall(pool, UNARY, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), new byte[0]);
        }
        pool.close(Duration.ofSeconds(5));
        System.out.println("ok " + calls);
    }
}
