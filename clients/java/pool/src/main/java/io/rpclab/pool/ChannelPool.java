// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import io.grpc.CallOptions;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.api.metrics.ObservableLongGauge;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A channel over N {@link ManagedChannel}s, each with its own connection (grpc-java gives every
 * ManagedChannel its own subchannels), so that one connection's event-loop thread and HTTP/2 stream
 * limit stop being every call's bottleneck. It is a {@link ManagedChannel}, so a generated stub takes
 * it as is: {@code FooGrpc.newBlockingStub(pool)}.
 *
 * <p>Each call goes to one channel: the next in turn ({@link Policy#ROUND_ROBIN}) or the less
 * loaded of two ({@link Policy#LEAST_LOADED}, power of two choices: the next in turn and one other at
 * random, ties to the one in turn; calls in flight
 * counted per channel with an {@link AtomicInteger}, up when a call starts, down when its listener
 * hears {@code onClose}, so a stream counts until it ends). Either way only READY channels are
 * picked while any is READY (CONNECTING, IDLE, TRANSIENT_FAILURE and SHUTDOWN ones are skipped);
 * when none is, the call goes to the chosen channel anyway and fails (or waits, with {@code
 * withWaitForReady}) there. The RPC path takes no lock.
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
                if (p.flag.equals(name)) {
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

    /** The most channels a pool may have (as every rpclab pool library). */
    public static final int MAX_SIZE = 1024;

    /** The size when none is given: the available processors, clamped to 2..8. */
    public static int defaultSize() {
        return Math.max(2, Math.min(8, Runtime.getRuntime().availableProcessors()));
    }

    /** The attribute that names a channel of the pool (its index) on per-channel metrics. */
    public static final AttributeKey<Long> CHANNEL = AttributeKey.longKey("rpclab.pool.channel");

    private final ManagedChannel[] channels;
    private final AtomicInteger[] inflight;
    private final AtomicInteger next = new AtomicInteger();
    private final Policy policy;
    private final Attributes[] attrs;
    private final LongCounter picks;
    private final List<ObservableLongGauge> gauges;

    private ChannelPool(List<ManagedChannel> channels, Policy policy, MeterProvider meters) {
        this.channels = channels.toArray(new ManagedChannel[0]);
        this.inflight = new AtomicInteger[channels.size()];
        this.attrs = new Attributes[channels.size()];
        for (int i = 0; i < inflight.length; i++) {
            inflight[i] = new AtomicInteger();
            attrs[i] = Attributes.of(CHANNEL, (long) i);
        }
        this.policy = policy;
        Meter meter = meters.get("io.rpclab.pool");
        this.picks = meter.counterBuilder("rpclab.pool.picks")
                .setDescription("Calls the pool sent, per channel")
                .setUnit("{call}")
                .build();
        this.gauges = List.of(
                meter.gaugeBuilder("rpclab.pool.size")
                        .setDescription("Channels (connections) in the pool")
                        .setUnit("{channel}")
                        .ofLongs()
                        .buildWithCallback(m -> m.record(this.channels.length)),
                meter.gaugeBuilder("rpclab.pool.inflight")
                        .setDescription("RPCs in flight, per channel")
                        .setUnit("{call}")
                        .ofLongs()
                        .buildWithCallback(m -> {
                            for (int i = 0; i < inflight.length; i++) {
                                m.record(inflight[i].get(), attrs[i]);
                            }
                        }));
    }

    /**
     * A pool of channels to target (as {@link Grpc#newChannelBuilder} takes it) with credentials: give
     * {@code TlsChannelCredentials.create()} for TLS, {@code InsecureChannelCredentials.create()} for
     * plaintext; there is no default.
     */
    public static Builder forTarget(String target, ChannelCredentials credentials) {
        if (target == null || target.isBlank()) {
            throw new IllegalArgumentException("pool target \"" + target + "\" is empty (want HOST:PORT)");
        }
        if (credentials == null) {
            throw new IllegalArgumentException(
                    "pool credentials are null (want TlsChannelCredentials or InsecureChannelCredentials)");
        }
        try {
            // An unparsable target fails here, naming it, not at the first call (an idle channel
            // opens no connection).
            Grpc.newChannelBuilder(target, credentials).build().shutdownNow();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("pool target \"" + target + "\": " + e.getMessage(), e);
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

    /** Builds a {@link ChannelPool}: {@link #defaultSize()} channels, round robin unless told otherwise. */
    public static final class Builder {
        private final Supplier<ManagedChannel> newChannel;
        private int size = defaultSize();
        private Policy policy = Policy.ROUND_ROBIN;
        private MeterProvider meters = MeterProvider.noop();

        private Builder(Supplier<ManagedChannel> newChannel) {
            this.newChannel = newChannel;
        }

        /** The number of channels, so connections: 1 to {@link #MAX_SIZE}. */
        public Builder size(int size) {
            if (size < 1 || size > MAX_SIZE) {
                throw new IllegalArgumentException("pool size " + size + " is not between 1 and " + MAX_SIZE);
            }
            this.size = size;
            return this;
        }

        /** How a call picks its channel. */
        public Builder policy(Policy policy) {
            if (policy == null) {
                throw new IllegalArgumentException("pool policy is null (want ROUND_ROBIN or LEAST_LOADED)");
            }
            this.policy = policy;
            return this;
        }

        /**
         * Where the pool reports rpclab.pool.size, rpclab.pool.inflight (per channel) and
         * rpclab.pool.picks (per channel): e.g. {@code GlobalOpenTelemetry.getMeterProvider()}. No-op
         * unless given.
         */
        public Builder meterProvider(MeterProvider meters) {
            if (meters == null) {
                throw new IllegalArgumentException("pool meter provider is null");
            }
            this.meters = meters;
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
            return new ChannelPool(made, policy, meters);
        }
    }

    /** The pool's channels, in order (to watch their state; calls should go through the pool). */
    public List<ManagedChannel> channels() {
        return List.of(channels);
    }

    /** How a call picks its channel. */
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
        picks.add(1, attrs[i]);
        return new Counted<>(channels[i].newCall(method, options), inflight[i]);
    }

    @Override
    public String authority() {
        return channels[0].authority();
    }

    private boolean ready(int i) {
        return channels[i].getState(false) == ConnectivityState.READY;
    }

    /**
     * The channel for the next call. Round robin: the next READY channel in turn. Least loaded: of the
     * next READY channel in turn and another READY one at random, the one with fewer calls in flight
     * (ties to the one in turn). With no channel READY, the next in turn.
     */
    int pick() {
        int n = channels.length;
        if (n == 1) {
            return 0;
        }
        int start = Math.floorMod(next.getAndIncrement(), n);
        if (policy == Policy.ROUND_ROBIN) {
            for (int k = 0; k < n; k++) {
                int i = (start + k) % n;
                if (ready(i)) {
                    return i;
                }
            }
            return start;
        }
        int[] readyIdx = new int[n];
        int m = 0;
        int a = -1;
        for (int k = 0; k < n; k++) {
            int i = (start + k) % n;
            if (ready(i)) {
                if (m == 0) {
                    a = 0;
                }
                readyIdx[m++] = i;
            }
        }
        if (m == 0) {
            return start;
        }
        if (m == 1) {
            return readyIdx[0];
        }
        int x = readyIdx[a];
        int y = readyIdx[1 + ThreadLocalRandom.current().nextInt(m - 1)];
        return inflight[y].get() < inflight[x].get() ? y : x;
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
        gauges.forEach(ObservableLongGauge::close);
        for (ManagedChannel ch : channels) {
            ch.shutdown();
        }
        return this;
    }

    @Override
    public ChannelPool shutdownNow() {
        gauges.forEach(ObservableLongGauge::close);
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

    /**
     * Closes the pool: stops new calls (they fail with UNAVAILABLE, as on any shut-down channel), lets
     * the calls in flight finish for up to drain, then ends those left (with UNAVAILABLE, grpc-java's
     * status for a call on a channel shut down now), on every channel at once.
     * Closing again does nothing more.
     *
     * @return true if every call finished within drain (none was cancelled)
     */
    public boolean close(Duration drain) throws InterruptedException {
        shutdown();
        if (awaitTermination(drain.toNanos(), TimeUnit.NANOSECONDS)) {
            return true;
        }
        shutdownNow();
        awaitTermination(5, TimeUnit.SECONDS);
        return false;
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
