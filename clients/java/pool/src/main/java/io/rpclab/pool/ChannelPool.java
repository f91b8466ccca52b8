// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.opentelemetry.api.common.AttributeKey;
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
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A channel over N {@link ManagedChannel}s, each with its own connection (grpc-java gives every
 * ManagedChannel its own subchannels), so that one connection's event-loop thread and HTTP/2 stream
 * limit stop being every call's bottleneck. It is a {@link ManagedChannel}, so a generated stub takes
 * it as is: {@code FooGrpc.newBlockingStub(pool)}.
 *
 * <p>Each call picks its channel when it starts: the next candidate in turn ({@link
 * Policy#ROUND_ROBIN}) or the less loaded of two ({@link Policy#LEAST_LOADED}, power of two choices:
 * the next candidate in turn and one other at random, ties to the one in turn). Candidates are the
 * READY and IDLE channels; CONNECTING, TRANSIENT_FAILURE and SHUTDOWN ones are skipped while any
 * channel is READY or IDLE; when none is, every channel is a candidate and the call fails (or waits,
 * with {@code withWaitForReady}) where it lands. Calls in flight are counted per channel with an
 * {@link AtomicInteger}, up when a call starts, down when its listener hears {@code onClose}, so a
 * stream counts until it ends. The call path takes no lock (growing takes one, once per added channel).
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
    public static final AttributeKey<Long> CHANNEL = AttributeKey.longKey("rpclab.pool.channel");

    /** The pool's target on rpclab.pool.resizes and rpclab.pool.redials. */
    public static final AttributeKey<String> TARGET = AttributeKey.stringKey("rpclab.pool.target");

    /** "grow" or "shrink" on rpclab.pool.resizes. */
    public static final AttributeKey<String> DIRECTION = AttributeKey.stringKey("rpclab.pool.direction");

    /** An entry's in-flight count once it is retired: no call may take it again. */
    private static final int RETIRED = Integer.MIN_VALUE;

    /** One channel of the pool: the channel (replaced by a redial) and its bookkeeping. */
    private static final class Entry {
        final int index;
        final boolean grown;
        final io.opentelemetry.api.common.Attributes attrs;
        final AtomicInteger inflight = new AtomicInteger();
        volatile ManagedChannel channel;
        /** When inflight last went to 0 (System.nanoTime), for a grown channel. */
        volatile long idleSince = System.nanoTime();
        /** A retire check is pending. */
        final AtomicBoolean retireCheck = new AtomicBoolean();
        // Guarded by the pool's lock:
        /** When the channel entered TRANSIENT_FAILURE (System.nanoTime), or 0 if it is not in it. */
        long failingSince;
        /** Counts entries into TRANSIENT_FAILURE: a redial check for an older one is dropped. */
        long failures;

        long redialNanos;

        Entry(int index, boolean grown, ManagedChannel channel, long redialNanos) {
            this.index = index;
            this.grown = grown;
            this.channel = channel;
            this.redialNanos = redialNanos;
            this.attrs = io.opentelemetry.api.common.Attributes.of(CHANNEL, (long) index);
        }
    }

    private final Supplier<ManagedChannel> newChannel;
    private final String target;
    private final Policy policy;
    private final int size;
    private final int maxConnections;
    private final int limit;
    private final boolean growing;
    private final long idleNanos;
    private final long redialNanos;

    private final Object lock = new Object();
    /** The channels, copied on write (under lock); picks read it without a lock. */
    private volatile Entry[] entries;
    /** Channels shut down by a redial or a retire, until they terminate (under lock). */
    private final List<ManagedChannel> leaving = new ArrayList<>();

    private volatile boolean closed;
    /** The pool's timers (redial, retire), made at the first one, shut down at close (under lock). */
    private ScheduledThreadPoolExecutor timer;

    private final AtomicInteger next = new AtomicInteger();
    private final AtomicLong resizeCount = new AtomicLong();
    private final AtomicLong redialCount = new AtomicLong();
    private final LongCounter picks;
    private final LongCounter resizes;
    private final LongCounter redials;
    private final io.opentelemetry.api.common.Attributes growAttrs;
    private final io.opentelemetry.api.common.Attributes shrinkAttrs;
    private final io.opentelemetry.api.common.Attributes targetAttrs;
    private final List<ObservableLongGauge> gauges;

    private ChannelPool(Builder b, List<ManagedChannel> channels, String target) {
        this.newChannel = b.newChannel;
        this.target = target;
        this.policy = b.policy;
        this.size = channels.size();
        this.maxConnections = b.maxConnections == 0 ? size : b.maxConnections;
        this.limit = b.streamsPerConnection;
        this.growing = maxConnections > size;
        this.idleNanos = b.idleTimeout.toNanos();
        this.redialNanos = b.redialDelay.toNanos();
        Entry[] es = new Entry[size];
        for (int i = 0; i < size; i++) {
            es[i] = new Entry(i, false, channels.get(i), redialNanos);
        }
        this.entries = es;
        Meter meter = b.meters.get("io.rpclab.pool");
        this.picks = meter.counterBuilder("rpclab.pool.picks")
                .setDescription("Calls the pool sent, per channel")
                .setUnit("{call}")
                .build();
        this.resizes = meter.counterBuilder("rpclab.pool.resizes")
                .setDescription("Channels added or retired by growth at the stream limit")
                .setUnit("{resize}")
                .build();
        this.redials = meter.counterBuilder("rpclab.pool.redials")
                .setDescription("Channels replaced after TRANSIENT_FAILURE")
                .setUnit("{redial}")
                .build();
        this.targetAttrs = io.opentelemetry.api.common.Attributes.of(TARGET, target);
        this.growAttrs = io.opentelemetry.api.common.Attributes.of(TARGET, target, DIRECTION, "grow");
        this.shrinkAttrs = io.opentelemetry.api.common.Attributes.of(TARGET, target, DIRECTION, "shrink");
        this.gauges = List.of(
                meter.gaugeBuilder("rpclab.pool.size")
                        .setDescription("Channels (connections) in the pool")
                        .setUnit("{channel}")
                        .ofLongs()
                        .buildWithCallback(m -> m.record(entries.length)),
                meter.gaugeBuilder("rpclab.pool.inflight")
                        .setDescription("RPCs in flight, per channel")
                        .setUnit("{call}")
                        .ofLongs()
                        .buildWithCallback(m -> {
                            for (Entry e : entries) {
                                int n = e.inflight.get();
                                if (n >= 0) {
                                    m.record(n, e.attrs);
                                }
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
         * rpclab.pool.picks (per channel), rpclab.pool.resizes and rpclab.pool.redials: e.g. {@code
         * GlobalOpenTelemetry.getMeterProvider()}. No-op unless given.
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
            for (Entry e : pool.entries) {
                e.channel.getState(true);
                pool.watch(e, e.channel);
            }
            return pool;
        }
    }

    /** The pool's channels, in order (to watch their state; calls should go through the pool). */
    public List<ManagedChannel> channels() {
        Entry[] es = entries;
        List<ManagedChannel> out = new ArrayList<>(es.length);
        for (Entry e : es) {
            out.add(e.channel);
        }
        return Collections.unmodifiableList(out);
    }

    /** How a call picks its channel. */
    public Policy policy() {
        return policy;
    }

    /** The calls in flight on each channel, a snapshot. */
    public int[] inflight() {
        Entry[] es = entries;
        int[] out = new int[es.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = Math.max(0, es[i].inflight.get());
        }
        return out;
    }

    /** Channels added and retired by growth so far (as counted in rpclab.pool.resizes). */
    public long resizes() {
        return resizeCount.get();
    }

    /** Channels replaced after TRANSIENT_FAILURE so far (as counted in rpclab.pool.redials). */
    public long redials() {
        return redialCount.get();
    }

    @Override
    public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
        return new PoolCall<>(method, options);
    }

    @Override
    public String authority() {
        return entries[0].channel.authority();
    }

    /** READY or IDLE: a channel a call may go to while one is (an IDLE channel connects for it). */
    private static boolean usable(Entry e) {
        ConnectivityState s = e.channel.getState(false);
        return s == ConnectivityState.READY || s == ConnectivityState.IDLE;
    }

    /**
     * Picks a channel for a call and counts the call in flight on it. With growth on: among the
     * channels below the limit; when there is none, a new channel (below the maximum) or any.
     */
    private Entry acquire() {
        for (; ; ) {
            Entry[] es = entries;
            int start = next.getAndIncrement();
            if (es.length == 1 && !growing) {
                Entry e = es[0];
                if (reserve(e, false)) {
                    return e;
                }
                continue;
            }
            boolean bounded = false;
            if (growing) {
                bounded = hasRoom(es);
                if (!bounded && es.length < maxConnections && !closed) {
                    Entry g;
                    try {
                        g = grow(es);
                    } catch (RuntimeException ex) {
                        g = es[0]; // the supplier failed: this call goes to a channel there is
                    }
                    if (g == null) {
                        continue; // the channels changed meanwhile: look again
                    }
                    if (g != es[0]) {
                        return g;
                    }
                }
            }
            Entry e = choose(es, bounded, start);
            if (e != null && reserve(e, bounded)) {
                return e;
            }
        }
    }

    private boolean hasRoom(Entry[] es) {
        for (Entry e : es) {
            int n = e.inflight.get();
            if (n >= 0 && n < limit) {
                return true;
            }
        }
        return false;
    }

    /** Counts a call in flight on e, unless e is retired (or, bounded, at the limit). */
    private boolean reserve(Entry e, boolean bounded) {
        for (; ; ) {
            int n = e.inflight.get();
            if (n < 0 || (bounded && n >= limit)) {
                return false;
            }
            if (e.inflight.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /**
     * The policy's choice among the candidates of es (bounded: only those below the limit). Candidates:
     * the READY or IDLE channels, or every channel when none is.
     */
    private Entry choose(Entry[] es, boolean bounded, int start) {
        Entry[] live = new Entry[es.length];
        int m = 0;
        for (Entry e : es) {
            int n = e.inflight.get();
            if (n >= 0 && (!bounded || n < limit)) {
                live[m++] = e;
            }
        }
        if (m == 0) {
            return null;
        }
        Entry[] cands = new Entry[m];
        int c = 0;
        for (int k = 0; k < m; k++) {
            if (usable(live[k])) {
                cands[c++] = live[k];
            }
        }
        if (c == 0) {
            cands = live;
            c = m;
        }
        int a = Math.floorMod(start, c);
        Entry x = cands[a];
        if (policy == Policy.ROUND_ROBIN || c == 1) {
            return x;
        }
        Entry y = cands[(a + 1 + ThreadLocalRandom.current().nextInt(c - 1)) % c];
        return y.inflight.get() < x.inflight.get() ? y : x;
    }

    /**
     * Adds a channel, with the calling call counted on it, if es is still the pool's channels and every
     * one is at the limit; else null (the caller picks again).
     */
    private Entry grow(Entry[] es) {
        Entry g;
        synchronized (lock) {
            if (closed || entries != es || hasRoom(es)) {
                return null;
            }
            ManagedChannel ch = newChannel.get();
            if (ch == null) {
                throw new IllegalStateException("pool channel supplier returned null");
            }
            boolean[] used = new boolean[maxConnections];
            for (Entry e : es) {
                used[e.index] = true;
            }
            int index = size;
            while (used[index]) {
                index++;
            }
            g = new Entry(index, true, ch, redialNanos);
            g.inflight.set(1);
            Entry[] grown = java.util.Arrays.copyOf(es, es.length + 1);
            grown[es.length] = g;
            entries = grown;
        }
        resizeCount.incrementAndGet();
        resizes.add(1, growAttrs);
        watch(g, g.channel);
        return g;
    }

    /** A call ended on e: counts it out; a grown channel with nothing in flight may be retired later. */
    private void release(Entry e) {
        if (e.inflight.decrementAndGet() == 0 && e.grown) {
            e.idleSince = System.nanoTime();
            scheduleRetire(e, idleNanos);
        }
    }

    private void scheduleRetire(Entry e, long delayNanos) {
        if (e.retireCheck.compareAndSet(false, true) && !schedule(() -> retire(e), delayNanos)) {
            e.retireCheck.set(false);
        }
    }

    /** Shuts e down if it has had nothing in flight for the idle timeout, else checks again later. */
    private void retire(Entry e) {
        e.retireCheck.set(false);
        ManagedChannel ch;
        synchronized (lock) {
            if (closed || e.inflight.get() != 0) {
                return; // busy: its release schedules the next check
            }
            long left = idleNanos - (System.nanoTime() - e.idleSince);
            if (left > 0) {
                scheduleRetire(e, left);
                return;
            }
            if (!e.inflight.compareAndSet(0, RETIRED)) {
                return;
            }
            Entry[] es = entries;
            List<Entry> keep = new ArrayList<>(es.length);
            for (Entry x : es) {
                if (x != e) {
                    keep.add(x);
                }
            }
            entries = keep.toArray(new Entry[0]);
            ch = e.channel;
            leave(ch);
        }
        resizeCount.incrementAndGet();
        resizes.add(1, shrinkAttrs);
        ch.shutdown();
    }

    /** Follows ch's states while it is e's channel: TRANSIENT_FAILURE schedules a redial check. */
    private void watch(Entry e, ManagedChannel ch) {
        ConnectivityState s = ch.getState(false);
        synchronized (lock) {
            if (closed || e.channel != ch || e.inflight.get() < 0) {
                return;
            }
            if (s == ConnectivityState.TRANSIENT_FAILURE) {
                if (e.failingSince == 0) {
                    e.failingSince = System.nanoTime();
                    long failure = ++e.failures;
                    schedule(() -> redial(e, ch, failure), e.redialNanos);
                }
            } else {
                e.failingSince = 0;
                if (s == ConnectivityState.READY) {
                    e.redialNanos = redialNanos;
                }
            }
        }
        if (s != ConnectivityState.SHUTDOWN) {
            ch.notifyWhenStateChanged(s, () -> watch(e, ch));
        }
    }

    /** Replaces ch, e's channel, if it is still in the TRANSIENT_FAILURE it entered as failure. */
    private void redial(Entry e, ManagedChannel ch, long failure) {
        ManagedChannel fresh;
        synchronized (lock) {
            if (closed
                    || e.channel != ch
                    || e.failures != failure
                    || e.failingSince == 0
                    || e.inflight.get() < 0
                    || ch.getState(false) != ConnectivityState.TRANSIENT_FAILURE) {
                return;
            }
            fresh = newChannel.get();
            if (fresh == null || fresh == ch) {
                return;
            }
            e.channel = fresh;
            e.failingSince = 0;
            e.redialNanos = Math.min(2 * e.redialNanos, MAX_REDIAL_DELAY.toNanos());
            leave(ch);
        }
        redialCount.incrementAndGet();
        redials.add(1, targetAttrs);
        ch.shutdown();
        fresh.getState(true);
        watch(e, fresh);
    }

    /** Keeps ch, shut down by the pool, until it terminates (under lock). */
    private void leave(ManagedChannel ch) {
        leaving.removeIf(ManagedChannel::isTerminated);
        leaving.add(ch);
    }

    /** Runs task after delay on the pool's timer; false once the pool is closed. */
    private boolean schedule(Runnable task, long delayNanos) {
        synchronized (lock) {
            if (closed) {
                return false;
            }
            if (timer == null) {
                timer = new ScheduledThreadPoolExecutor(1, r -> {
                    Thread t = new Thread(r, "rpclab-pool-timer");
                    t.setDaemon(true);
                    return t;
                });
                timer.setKeepAliveTime(1, TimeUnit.SECONDS);
                timer.allowCoreThreadTimeOut(true);
                timer.setRemoveOnCancelPolicy(true);
            }
            timer.schedule(
                    () -> {
                        try {
                            task.run();
                        } catch (RuntimeException ex) {
                            // A supplier that throws leaves the channel as it was; the next failure retries.
                        }
                    },
                    delayNanos,
                    TimeUnit.NANOSECONDS);
            return true;
        }
    }

    /** A call that picks its channel when it starts and counts itself in flight there until onClose. */
    private final class PoolCall<Q, R> extends ClientCall<Q, R> {
        private final MethodDescriptor<Q, R> method;
        private final CallOptions options;
        private volatile ClientCall<Q, R> delegate;
        private Entry entry;

        PoolCall(MethodDescriptor<Q, R> method, CallOptions options) {
            this.method = method;
            this.options = options;
        }

        @Override
        public void start(Listener<R> listener, Metadata headers) {
            ClientCall<Q, R> call;
            boolean counted;
            Entry e;
            synchronized (this) {
                if (delegate == null) {
                    entry = acquire();
                    delegate = entry.channel.newCall(method, options);
                    counted = true;
                } else {
                    counted = reserve(entry, false); // cancelled before start: it ends at once
                }
                call = delegate;
                e = entry;
            }
            picks.add(1, e.attrs);
            if (!counted) {
                call.start(listener, headers);
                return;
            }
            try {
                call.start(
                        new ForwardingClientCallListener.SimpleForwardingClientCallListener<R>(listener) {
                            @Override
                            public void onClose(Status status, Metadata trailers) {
                                release(e);
                                super.onClose(status, trailers);
                            }
                        },
                        headers);
            } catch (RuntimeException | Error ex) {
                release(e);
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
                if (delegate == null) {
                    Entry[] es = entries;
                    Entry e = choose(es, false, next.getAndIncrement());
                    entry = e != null ? e : es[0];
                    delegate = entry.channel.newCall(method, options);
                }
                call = delegate;
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

    /** Every channel of the pool and every one it shut down that has not terminated yet. */
    private List<ManagedChannel> all() {
        synchronized (lock) {
            List<ManagedChannel> out = new ArrayList<>(channels());
            out.addAll(leaving);
            return out;
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
        for (ManagedChannel ch : channels()) {
            ConnectivityState s = ch.getState(requestConnection);
            if (rank.indexOf(s) > rank.indexOf(best)) {
                best = s;
            }
        }
        return best;
    }

    @Override
    public void resetConnectBackoff() {
        for (ManagedChannel ch : channels()) {
            ch.resetConnectBackoff();
        }
    }

    @Override
    public void enterIdle() {
        for (ManagedChannel ch : channels()) {
            ch.enterIdle();
        }
    }

    /** Marks the pool closed and stops its timers; the channels to shut down. */
    private List<ManagedChannel> markClosed() {
        synchronized (lock) {
            closed = true;
            if (timer != null) {
                timer.shutdownNow();
            }
        }
        gauges.forEach(ObservableLongGauge::close);
        return all();
    }

    @Override
    public ChannelPool shutdown() {
        for (ManagedChannel ch : markClosed()) {
            ch.shutdown();
        }
        return this;
    }

    @Override
    public ChannelPool shutdownNow() {
        for (ManagedChannel ch : markClosed()) {
            ch.shutdownNow();
        }
        return this;
    }

    @Override
    public boolean isShutdown() {
        for (ManagedChannel ch : all()) {
            if (!ch.isShutdown()) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean isTerminated() {
        for (ManagedChannel ch : all()) {
            if (!ch.isTerminated()) {
                return false;
            }
        }
        synchronized (lock) {
            return timer == null || timer.isTerminated();
        }
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
        for (ManagedChannel ch : all()) {
            if (!ch.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                return false;
            }
        }
        ScheduledThreadPoolExecutor t;
        synchronized (lock) {
            t = timer;
        }
        return t == null || t.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    @Override
    public String toString() {
        return String.format(
                Locale.ROOT,
                "ChannelPool{%d channels to %s, %s%s}",
                entries.length,
                target,
                policy,
                growing ? ", growing to " + maxConnections + " at " + limit + " streams each" : "");
    }
}
