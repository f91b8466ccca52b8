// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import io.grpc.CallOptions;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.metrics.MeterProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A channel over N {@link ManagedChannel}s, each with its own connection (grpc-java gives every
 * ManagedChannel its own subchannels), so that one connection's event-loop thread and HTTP/2 stream
 * limit stop being every call's bottleneck. It is a {@link ManagedChannel}, so a generated stub takes
 * it as is: {@code FooGrpc.newBlockingStub(pool)}.
 *
 * <p>Each call picks its channel when it starts: the next candidate in turn ({@link
 * Policy#ROUND_ROBIN}) or, power of two choices ({@link Policy#LEAST_LOADED}), the one with fewer
 * calls in flight of two different candidates drawn at random (the first drawn on a tie). Candidates
 * are the READY and IDLE channels; CONNECTING, TRANSIENT_FAILURE and SHUTDOWN ones are skipped while
 * any channel is READY or IDLE; when none is, every channel is a candidate and the call fails (or
 * waits, with {@code withWaitForReady}) where it lands. Calls in flight are counted per channel with an
 * {@link java.util.concurrent.atomic.AtomicInteger}, up when a call starts, down when its listener
 * hears {@code onClose}, so a stream counts until it ends; a call cancelled before it starts is never
 * counted. The call path takes no lock (growing takes one, once per added channel).
 *
 * <p><b>Growth at the server's stream limit</b> (off by default): with {@link
 * Builder#maxConnections(int)} above the size and {@link Builder#streamsPerConnection(int)}, a call
 * that finds every channel carrying that many calls adds a channel (up to the maximum) and goes to
 * it; otherwise it picks by the policy among the channels below the limit, and at the maximum among
 * all of them (the call then waits in grpc-java for a free stream). grpc-java has no public API for
 * the peer's SETTINGS_MAX_CONCURRENT_STREAMS, so the limit is configured, not learned. A channel added
 * this way with nothing in flight for {@link Builder#idleTimeout(Duration)} is shut down; the pool
 * never goes below its size.
 *
 * <p><b>Redial</b>: a channel that stays in TRANSIENT_FAILURE for {@link Builder#redialDelay(Duration)}
 * (default 5 s) is replaced by a new one from the same supplier (fresh name resolution and back-off);
 * the old one is shut down. The delay doubles after each redial of that channel, up to 2 minutes, and
 * returns to the configured one once the channel is READY. The timers run on one daemon thread of
 * the pool's own, which exists only while one is pending and ends at shutdown.
 *
 * <p><b>Metrics</b> (docs/pool.md's table, through {@link Builder#meterProvider(MeterProvider)}):
 * UpDownCounters rpclab.pool.size and rpclab.pool.inflight, Counters rpclab.pool.picks,
 * rpclab.pool.redials and rpclab.pool.resizes, all with {@link #TARGET}; the per-channel ones with
 * {@link #CONNECTION}. At shutdown rpclab.pool.size goes back to 0.
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

    /** The most channels a pool may have, and the largest max connections (as every rpclab pool library). */
    public static final int MAX_SIZE = 1024;

    /** How long a channel added by growth may carry nothing before it is shut down, unless given. */
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(30);

    /** How long a channel may stay in TRANSIENT_FAILURE before it is replaced, unless given. */
    public static final Duration DEFAULT_REDIAL_DELAY = Duration.ofSeconds(5);

    /** The redial delay doubles while the target stays down, up to this. */
    public static final Duration MAX_REDIAL_DELAY = Duration.ofMinutes(2);

    /** The size when none is given: the available processors, clamped to 2..8. */
    public static int defaultSize() {
        return Math.max(2, Math.min(8, Runtime.getRuntime().availableProcessors()));
    }

    /** The attribute that names a channel of the pool (its index) on per-channel metrics. */
    public static final AttributeKey<Long> CONNECTION = AttributeKey.longKey("rpclab.pool.connection");

    /**
     * The same key as {@link #CONNECTION}.
     *
     * @deprecated use {@link #CONNECTION}, named after the attribute (rpclab.pool.connection)
     */
    @Deprecated
    public static final AttributeKey<Long> CHANNEL = CONNECTION;

    /** The pool's target, on every metric. */
    public static final AttributeKey<String> TARGET = AttributeKey.stringKey("rpclab.pool.target");

    /** "grow" or "shrink" on rpclab.pool.resizes. */
    public static final AttributeKey<String> DIRECTION = AttributeKey.stringKey("rpclab.pool.direction");

    private final String target;
    final Channels channels;

    private ChannelPool(Builder b, List<ManagedChannel> made, String target) {
        this.target = target;
        this.channels = new Channels(
                made,
                b.newChannel,
                b.policy,
                b.maxConnections == 0 ? made.size() : b.maxConnections,
                b.streamsPerConnection,
                b.idleTimeout.toNanos(),
                b.redialDelay.toNanos(),
                new PoolMetrics(b.meters, target));
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
        return new Builder(() -> Grpc.newChannelBuilder(target, credentials).build(), target);
    }

    /**
     * A pool of channels made by newChannel, which must return a new channel each time (growth and
     * redial call it again later).
     */
    public static Builder forChannels(Supplier<ManagedChannel> newChannel) {
        if (newChannel == null) {
            throw new IllegalArgumentException("pool channel supplier is null");
        }
        return new Builder(newChannel, null);
    }

    /**
     * Builds a {@link ChannelPool}: {@link #defaultSize()} channels, round robin, no growth, redial
     * after 5 s, unless told otherwise.
     */
    public static final class Builder {
        private final Supplier<ManagedChannel> newChannel;
        private final String target;
        private int size = defaultSize();
        private Policy policy = Policy.ROUND_ROBIN;
        private MeterProvider meters = MeterProvider.noop();
        private int maxConnections;
        private int streamsPerConnection;
        private Duration idleTimeout = DEFAULT_IDLE_TIMEOUT;
        private Duration redialDelay = DEFAULT_REDIAL_DELAY;

        private Builder(Supplier<ManagedChannel> newChannel, String target) {
            this.newChannel = newChannel;
            this.target = target;
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

        /** The policy by name: "round-robin" or "least-loaded". */
        public Builder policy(String policy) {
            return policy(Policy.parse(policy));
        }

        /**
         * Growth at the server's stream limit: the most channels the pool may grow to, 1 to {@link
         * #MAX_SIZE} and at least the size (checked at build). Above the size it turns growth on and
         * needs {@link #streamsPerConnection(int)}. Default: the size (no growth).
         */
        public Builder maxConnections(int max) {
            if (max < 1 || max > MAX_SIZE) {
                throw new IllegalArgumentException("pool max connections " + max + " is not between 1 and " + MAX_SIZE);
            }
            this.maxConnections = max;
            return this;
        }

        /**
         * Growth at the server's stream limit: how many calls in flight one channel carries before the
         * pool grows, the server's SETTINGS_MAX_CONCURRENT_STREAMS as configured here (grpc-java has
         * no public API for the peer's SETTINGS, so the pool cannot learn it). At least 1.
         */
        public Builder streamsPerConnection(int limit) {
            if (limit < 1) {
                throw new IllegalArgumentException("pool streams per connection " + limit + " is not at least 1");
            }
            this.streamsPerConnection = limit;
            return this;
        }

        /**
         * Growth: how long a channel added by growth may have nothing in flight before it is shut down.
         * Above 0; default 30 s.
         */
        public Builder idleTimeout(Duration idle) {
            if (idle == null || idle.isNegative() || idle.isZero()) {
                throw new IllegalArgumentException("pool idle timeout " + idle + " is not above 0");
            }
            this.idleTimeout = idle;
            return this;
        }

        /**
         * How long a channel may stay in TRANSIENT_FAILURE before it is replaced by a new one (the
         * delay doubles while the target stays down, up to 2 minutes). Above 0; default 5 s.
         */
        public Builder redialDelay(Duration delay) {
            if (delay == null || delay.isNegative() || delay.isZero()) {
                throw new IllegalArgumentException("pool redial delay " + delay + " is not above 0");
            }
            this.redialDelay = delay;
            return this;
        }

        /**
         * Where the pool reports rpclab.pool.size, rpclab.pool.inflight (per channel),
         * rpclab.pool.picks (per channel), rpclab.pool.redials and rpclab.pool.resizes (docs/pool.md,
         * "Metrics"): e.g. {@code GlobalOpenTelemetry.getMeterProvider()}. No-op unless given.
         */
        public Builder meterProvider(MeterProvider meters) {
            if (meters == null) {
                throw new IllegalArgumentException("pool meter provider is null");
            }
            this.meters = meters;
            return this;
        }

        /**
         * Makes the channels and asks each to connect (without waiting: a target that never answers
         * fails the calls, it does not hang the build).
         */
        public ChannelPool build() {
            if (maxConnections != 0 && maxConnections < size) {
                throw new IllegalArgumentException(
                        "pool max connections " + maxConnections + " is below the size " + size);
            }
            if (maxConnections > size && streamsPerConnection == 0) {
                throw new IllegalArgumentException("pool max connections " + maxConnections
                        + " (above the size " + size + ") needs streamsPerConnection: grpc-java does not"
                        + " expose the server's SETTINGS_MAX_CONCURRENT_STREAMS");
            }
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
            ChannelPool pool = new ChannelPool(
                    this, made, target != null ? target : made.get(0).authority());
            pool.channels.connect();
            return pool;
        }
    }

    /** The pool's channels, in order (to watch their state; calls should go through the pool). */
    public List<ManagedChannel> channels() {
        return Collections.unmodifiableList(channels.current());
    }

    /** How a call picks its channel. */
    public Policy policy() {
        return channels.policy();
    }

    /** The calls in flight on each channel, a snapshot. */
    public int[] inflight() {
        Entry[] es = channels.entries();
        int[] out = new int[es.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = es[i].load();
        }
        return out;
    }

    /** Channels added and retired by growth so far (as counted in rpclab.pool.resizes). */
    public long resizes() {
        return channels.metrics.resizes();
    }

    /** Channels replaced after TRANSIENT_FAILURE so far (as counted in rpclab.pool.redials). */
    public long redials() {
        return channels.metrics.redials();
    }

    @Override
    public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
        return new PoolCall<>(channels, method, options);
    }

    @Override
    public String authority() {
        return channels.entries()[0].channel.authority();
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
        for (ManagedChannel ch : channels.current()) {
            ConnectivityState s = ch.getState(requestConnection);
            if (rank.indexOf(s) > rank.indexOf(best)) {
                best = s;
            }
        }
        return best;
    }

    @Override
    public void resetConnectBackoff() {
        for (ManagedChannel ch : channels.current()) {
            ch.resetConnectBackoff();
        }
    }

    @Override
    public void enterIdle() {
        for (ManagedChannel ch : channels.current()) {
            ch.enterIdle();
        }
    }

    @Override
    public ChannelPool shutdown() {
        for (ManagedChannel ch : channels.close()) {
            ch.shutdown();
        }
        return this;
    }

    @Override
    public ChannelPool shutdownNow() {
        for (ManagedChannel ch : channels.close()) {
            ch.shutdownNow();
        }
        return this;
    }

    @Override
    public boolean isShutdown() {
        for (ManagedChannel ch : channels.all()) {
            if (!ch.isShutdown()) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean isTerminated() {
        for (ManagedChannel ch : channels.all()) {
            if (!ch.isTerminated()) {
                return false;
            }
        }
        return channels.timer.isTerminated();
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

    /** Waits for every channel (and the pool's timer) to terminate, all within one timeout. */
    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        for (ManagedChannel ch : channels.all()) {
            if (!ch.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                return false;
            }
        }
        return channels.timer.awaitTermination(deadline - System.nanoTime());
    }

    @Override
    public String toString() {
        return String.format(
                Locale.ROOT,
                "ChannelPool{%d channels to %s, %s%s}",
                channels.entries().length,
                target,
                channels.policy(),
                channels.growing()
                        ? ", growing to " + channels.maxConnections() + " at " + channels.limit() + " streams each"
                        : "");
    }
}
