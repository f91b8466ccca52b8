// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;

/**
 * A call of the pool: it picks its channel when it starts and counts itself in flight there until its
 * listener hears onClose. A call cancelled before it starts is never picked nor counted: its start
 * throws IllegalStateException, as grpc-java's own call does.
 */
final class PoolCall<Q, R> extends ClientCall<Q, R> {
    private final Channels channels;
    private final MethodDescriptor<Q, R> method;
    private final CallOptions options;
    private volatile ClientCall<Q, R> delegate;
    /** cancel came before start (guarded by this). */
    private boolean cancelled;

    PoolCall(Channels channels, MethodDescriptor<Q, R> method, CallOptions options) {
        this.channels = channels;
        this.method = method;
        this.options = options;
    }

    @Override
    public synchronized void start(Listener<R> listener, Metadata headers) {
        if (delegate != null) {
            throw new IllegalStateException("Already started");
        }
        if (cancelled) {
            throw new IllegalStateException("call was cancelled");
        }
        Entry e = channels.acquire();
        ClientCall<Q, R> call;
        try {
            call = e.channel.newCall(method, options);
            delegate = call;
            call.start(
                    new ForwardingClientCallListener.SimpleForwardingClientCallListener<R>(listener) {
                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            channels.release(e);
                            super.onClose(status, trailers);
                        }
                    },
                    headers);
        } catch (RuntimeException | Error ex) {
            channels.release(e);
            throw ex;
        }
    }

    private ClientCall<Q, R> started() {
        ClientCall<Q, R> call = delegate;
        if (call == null) {
            throw new IllegalStateException("Not started");
        }
        return call;
    }

    @Override
    public void cancel(String message, Throwable cause) {
        ClientCall<Q, R> call;
        synchronized (this) {
            call = delegate;
            if (call == null) {
                cancelled = true; // nothing was sent: nothing to tell a server
                return;
            }
        }
        call.cancel(message, cause);
    }

    @Override
    public void request(int n) {
        started().request(n);
    }

    @Override
    public void halfClose() {
        started().halfClose();
    }

    @Override
    public void sendMessage(Q message) {
        started().sendMessage(message);
    }

    @Override
    public boolean isReady() {
        ClientCall<Q, R> call = delegate;
        return call != null && call.isReady();
    }

    @Override
    public void setMessageCompression(boolean enabled) {
        started().setMessageCompression(enabled);
    }

    @Override
    public Attributes getAttributes() {
        ClientCall<Q, R> call = delegate;
        return call == null ? Attributes.EMPTY : call.getAttributes();
    }
}
