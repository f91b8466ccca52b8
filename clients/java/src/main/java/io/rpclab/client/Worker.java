// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import com.google.protobuf.ByteString;
import io.grpc.Channel;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.rpclab.proto.BenchmarkServiceGrpc;
import io.rpclab.proto.Payload;
import io.rpclab.proto.SimpleRequest;
import io.rpclab.proto.SimpleResponse;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import org.HdrHistogram.Histogram;

/**
 * One closed-loop worker: one RPC in flight at a time. Unary calls use the blocking stub (the call
 * runs on this thread); streaming is a bidi ping-pong on the async stub, this thread waiting for
 * each reply. Each worker records into its own histogram; the step merges them afterwards.
 */
final class Worker implements Runnable {
    /** Histogram geometry shared with every rpclab client: 1 ns .. 100 s, 3 significant digits. */
    static final long HIGHEST = 100_000_000_000L;

    /** One past the largest gRPC status code (UNAUTHENTICATED = 16). */
    static final int CODES = 17;

    final Histogram hist = new Histogram(1, HIGHEST, 3);
    final long[] byCode = new long[CODES];

    private final BenchmarkServiceGrpc.BenchmarkServiceBlockingStub blocking;
    private final BenchmarkServiceGrpc.BenchmarkServiceStub async;
    private final AtomicInteger phase;
    private final Context.CancellableContext ctx;
    private final boolean streaming;
    private final boolean asyncStub;
    private final SimpleRequest req;

    /** A worker calling through channel: a ManagedChannel, or a ChannelPool that picks one per RPC. */
    Worker(Channel channel, AtomicInteger phase, Context.CancellableContext ctx, Flags f, StepSpec step) {
        this.blocking = BenchmarkServiceGrpc.newBlockingStub(channel);
        this.async = BenchmarkServiceGrpc.newStub(channel);
        this.phase = phase;
        this.ctx = ctx;
        this.streaming = step.rpc().equals("streaming");
        this.asyncStub = f.stub == Flags.Stub.async;
        this.req = SimpleRequest.newBuilder()
                .setResponseSize(step.payloadBytes())
                .setPayload(Payload.newBuilder().setBody(ByteString.copyFrom(new byte[step.payloadBytes()])))
                .build();
    }

    @Override
    public void run() {
        if (streaming) {
            streaming();
        } else if (asyncStub) {
            asyncUnary();
        } else {
            unary();
        }
    }

    /**
     * Records one finished RPC if it began and ended inside the measured interval and did not fail
     * because the step itself was cancelled.
     */
    void done(int began, long ns, Status.Code code) {
        if (code != Status.Code.OK && ctx.isCancelled()) {
            return;
        }
        if (began != Step.MEASURE || phase.get() != Step.MEASURE) {
            return;
        }
        byCode[code.value()]++;
        if (code == Status.Code.OK) {
            hist.recordValue(Math.max(1, Math.min(ns, HIGHEST)));
        }
    }

    private void unary() {
        while (true) {
            int ph = phase.get();
            if (ph == Step.DONE || ctx.isCancelled()) {
                return;
            }
            long t0 = System.nanoTime();
            Status.Code code = Status.Code.OK;
            try {
                blocking.unaryCall(req);
            } catch (StatusRuntimeException e) {
                code = e.getStatus().getCode();
            }
            done(ph, System.nanoTime() - t0, code);
        }
    }

    /**
     * Unary calls on the async stub, each started from the previous one's completion callback (on the
     * transport's thread: the channel has a direct executor). This thread only starts the chain,
     * restarts it after a failure (so fast failures never recurse), and waits for the step's end.
     */
    private void asyncUnary() {
        AsyncLoop loop = new AsyncLoop();
        while (phase.get() != Step.DONE && !ctx.isCancelled()) {
            loop.next();
            loop.restart.acquireUninterruptibly(); // nothing interrupts a worker: the step cancels ctx
        }
    }

    /** One worker's chain of async unary calls. */
    private final class AsyncLoop implements StreamObserver<SimpleResponse> {
        /** Released when the chain stops: after a failure, or at the step's end. */
        final Semaphore restart = new Semaphore(0);

        private int ph;
        private long t0;

        void next() {
            ph = phase.get();
            if (ph == Step.DONE || ctx.isCancelled()) {
                restart.release();
                return;
            }
            t0 = System.nanoTime();
            async.unaryCall(req, this);
        }

        @Override
        public void onNext(SimpleResponse r) {}

        @Override
        public void onError(Throwable t) {
            done(ph, System.nanoTime() - t0, Status.fromThrowable(t).getCode());
            restart.release();
        }

        @Override
        public void onCompleted() {
            done(ph, System.nanoTime() - t0, Status.Code.OK);
            next();
        }
    }

    /** What the stream's observer hands the worker: a reply or the stream's end. */
    private static final Object REPLY = new Object();

    private void streaming() {
        while (phase.get() != Step.DONE && !ctx.isCancelled()) {
            // A queue per stream, so a late end of the previous stream is never taken for a reply.
            LinkedBlockingQueue<Object> q = new LinkedBlockingQueue<>();
            StreamObserver<SimpleResponse> replies = new StreamObserver<>() {
                @Override
                public void onNext(SimpleResponse r) {
                    q.add(REPLY);
                }

                @Override
                public void onError(Throwable t) {
                    q.add(Status.fromThrowable(t));
                }

                @Override
                public void onCompleted() {
                    q.add(Status.UNAVAILABLE.withDescription("stream ended by the server"));
                }
            };
            StreamObserver<SimpleRequest> requests = async.streamingCall(replies);
            while (true) {
                int ph = phase.get();
                if (ph == Step.DONE || ctx.isCancelled()) {
                    return; // the step's cancellation ends the stream
                }
                long t0 = System.nanoTime();
                Object got;
                try {
                    requests.onNext(req);
                    got = q.take();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } catch (RuntimeException e) {
                    got = Status.fromThrowable(e);
                }
                if (got == REPLY) {
                    done(ph, System.nanoTime() - t0, Status.Code.OK);
                    continue;
                }
                done(ph, System.nanoTime() - t0, ((Status) got).getCode());
                break; // a new stream
            }
        }
    }
}
