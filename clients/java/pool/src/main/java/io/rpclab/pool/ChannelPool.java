// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import io.grpc.CallOptions;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A channel over N {@link ManagedChannel}s, each with its own connection (grpc-java gives every
 * ManagedChannel its own subchannels), so that one connection's event-loop thread and HTTP/2 stream
 * limit stop being every call's bottleneck. It is a {@link ManagedChannel}, so a generated stub takes
 * it as is: {@code FooGrpc.newBlockingStub(pool)}.
 *
 * <p>Each call goes to one channel: the next in turn ({@link Policy#ROUND_ROBIN}) or the one with
 * the fewest calls in flight ({@link Policy#LEAST_LOADED}; counted per channel with an {@link
 * AtomicInteger}, up when a call starts, down when its listener hears {@code onClose}). Either way a
 * channel in TRANSIENT_FAILURE or SHUTDOWN is skipped while another is not; when none is usable the
 * call goes to the chosen channel anyway and fails (or waits, with {@code withWaitForReady}) there.
 * The RPC path takes no lock.
 */
public final class ChannelPool extends ManagedChannel {
    /** How a call picks its channel. */
    public enum Policy {
        ROUND_ROBIN("round-robin"),
        LEAST_LOADED("least-loaded");

        private final String flag;

        Policy(String flag) {
            this.flag = flag;
        }

        /** The policy named as on rpclab's command line ("round-robin", "least-loaded"). */
        public static Policy parse(String name) {
            for (Policy p : values()) {
                if (p.flag.equals(name) || p.name().equals(name)) {
                    return p;
                }
            }
            throw new IllegalArgumentException(
                    "unknown pool policy \"" + name + "\" (want round-robin or least-loaded)");
        }

        @Override
        public String toString() {
            return flag;
        }
    }

    private final ManagedChannel[] channels;
    private final AtomicInteger[] inflight;
    private final AtomicInteger next = new AtomicInteger();
    private final Policy policy;

    private ChannelPool(List<ManagedChannel> channels, Policy policy) {
        this.channels = channels.toArray(new ManagedChannel[0]);
        this.inflight = new AtomicInteger[channels.size()];
        for (int i = 0; i < inflight.length; i++) {
            inflight[i] = new AtomicInteger();
        }
        this.policy = policy;
    }

    /** A pool of plaintext channels to target (as {@link Grpc#newChannelBuilder} takes it). */
    public static Builder forTarget(String target) {
        return forTarget(target, InsecureChannelCredentials.create());
    }

    /** A pool of channels to target with credentials. */
    public static Builder forTarget(String target, ChannelCredentials credentials) {
        if (target == null || target.isBlank()) {
            throw new IllegalArgumentException("pool target \"" + target + "\" is empty (want HOST:PORT)");
        }
        return new Builder(() -> Grpc.newChannelBuilder(target, credentials).build());
    }

    /** A pool of channels made by newChannel, which must return a new channel each time. */
    public static Builder forChannels(Supplier<ManagedChannel> newChannel) {
        if (newChannel == null) {
            throw new IllegalArgumentException("pool channel supplier is null");
        }
        return new Builder(newChannel);
    }

    /** Builds a {@link ChannelPool}: size 2 and round robin unless told otherwise. */
    public static final class Builder {
        private final Supplier<ManagedChannel> newChannel;
        private int size = 2;
        private Policy policy = Policy.ROUND_ROBIN;

        private Builder(Supplier<ManagedChannel> newChannel) {
            this.newChannel = newChannel;
        }

        /** The number of channels, so connections: at least 1. */
        public Builder size(int size) {
            if (size < 1) {
                throw new IllegalArgumentException("pool size " + size + " is not at least 1");
            }
            this.size = size;
            return this;
        }

        public Builder policy(Policy policy) {
            if (policy == null) {
                throw new IllegalArgumentException("pool policy is null (want ROUND_ROBIN or LEAST_LOADED)");
            }
            this.policy = policy;
            return this;
        }

        /** The policy by name: "round-robin" or "least-loaded". */
        public Builder policy(String policy) {
            return policy(Policy.parse(policy));
        }

        /**
         * Makes the channels and asks each to connect (without waiting: a target that never answers
         * fails the calls, it does not hang the build).
         */
        public ChannelPool build() {
            List<ManagedChannel> made = new ArrayList<>(size);
            Set<ManagedChannel> seen = Collections.newSetFromMap(new IdentityHashMap<>());
            for (int i = 0; i < size; i++) {
                ManagedChannel ch = newChannel.get();
                if (ch == null || !seen.add(ch)) {
                    made.forEach(ManagedChannel::shutdownNow);
                    throw new IllegalArgumentException("pool channel supplier returned "
                            + (ch == null ? "null" : "the same channel twice")
                            + " (want a new ManagedChannel each time)");
                }
                made.add(ch);
            }
            made.forEach(ch -> ch.getState(true));
            return new ChannelPool(made, policy);
        }
    }

    /** The pool's channels, in order (to watch their state; calls should go through the pool). */
    public List<ManagedChannel> channels() {
        return List.of(channels);
    }

    public Policy policy() {
        return policy;
    }

    /** The calls in flight on each channel, a snapshot. */
    public int[] inflight() {
        int[] out = new int[inflight.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = inflight[i].get();
        }
        return out;
    }

    @Override
    public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
        int i = pick();
        return new Counted<>(channels[i].newCall(method, options), inflight[i]);
    }

    @Override
    public String authority() {
        return channels[0].authority();
    }

    private static boolean usable(ManagedChannel ch) {
        ConnectivityState s = ch.getState(false);
        return s != ConnectivityState.TRANSIENT_FAILURE && s != ConnectivityState.SHUTDOWN;
    }

    /** The channel for the next call. */
    int pick() {
        int n = channels.length;
        if (n == 1) {
            return 0;
        }
        int start = Math.floorMod(next.getAndIncrement(), n);
        int best = -1;
        int load = Integer.MAX_VALUE;
        for (int k = 0; k < n; k++) {
            int i = (start + k) % n;
            if (!usable(channels[i])) {
                continue;
            }
            if (policy == Policy.ROUND_ROBIN) {
                return i;
            }
            int l = inflight[i].get();
            if (l < load) {
                best = i;
                load = l;
            }
        }
        return best >= 0 ? best : start;
    }

    /** A call that counts itself in flight on its channel from start until onClose. */
    private static final class Counted<Q, R> extends ForwardingClientCall.SimpleForwardingClientCall<Q, R> {
        private final AtomicInteger inflight;

        Counted(ClientCall<Q, R> call, AtomicInteger inflight) {
            super(call);
            this.inflight = inflight;
        }

        @Override
        public void start(Listener<R> listener, Metadata headers) {
            inflight.incrementAndGet();
            try {
                delegate()
                        .start(
                                new ForwardingClientCallListener.SimpleForwardingClientCallListener<R>(listener) {
                                    @Override
                                    public void onClose(Status status, Metadata trailers) {
                                        inflight.decrementAndGet();
                                        super.onClose(status, trailers);
                                    }
                                },
                                headers);
            } catch (RuntimeException | Error e) {
                inflight.decrementAndGet();
                throw e;
            }
        }
    }

    /**
     * READY if any channel is, else CONNECTING, IDLE, TRANSIENT_FAILURE, SHUTDOWN in that order; with
     * requestConnection every idle channel starts connecting.
     */
    @Override
    public ConnectivityState getState(boolean requestConnection) {
        ConnectivityState best = ConnectivityState.SHUTDOWN;
        List<ConnectivityState> rank = List.of(
                ConnectivityState.SHUTDOWN,
                ConnectivityState.TRANSIENT_FAILURE,
                ConnectivityState.IDLE,
                ConnectivityState.CONNECTING,
                ConnectivityState.READY);
        for (ManagedChannel ch : channels) {
            ConnectivityState s = ch.getState(requestConnection);
            if (rank.indexOf(s) > rank.indexOf(best)) {
                best = s;
            }
        }
        return best;
    }

    @Override
    public void resetConnectBackoff() {
        for (ManagedChannel ch : channels) {
            ch.resetConnectBackoff();
        }
    }

    @Override
    public void enterIdle() {
        for (ManagedChannel ch : channels) {
            ch.enterIdle();
        }
    }

    @Override
    public ChannelPool shutdown() {
        for (ManagedChannel ch : channels) {
            ch.shutdown();
        }
        return this;
    }

    @Override
    public ChannelPool shutdownNow() {
        for (ManagedChannel ch : channels) {
            ch.shutdownNow();
        }
        return this;
    }

    @Override
    public boolean isShutdown() {
        for (ManagedChannel ch : channels) {
            if (!ch.isShutdown()) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean isTerminated() {
        for (ManagedChannel ch : channels) {
            if (!ch.isTerminated()) {
                return false;
            }
        }
        return true;
    }

    /** Waits for every channel to terminate, all within one timeout. */
    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        for (ManagedChannel ch : channels) {
            if (!ch.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "ChannelPool{%d channels to %s, %s}", channels.length, authority(), policy);
    }
}
