// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The pool's channels and which one a call gets: the policy's pick ({@link Picker}), growth at the
 * stream limit, and the retirement of grown channels left idle. Picks read the channels without a
 * lock; a change (grow, retire, redial, close) copies them under {@link #lock}.
 */
final class Channels {
    final Object lock = new Object();
    final Supplier<ManagedChannel> newChannel;
    final PoolMetrics metrics;
    final PoolTimer timer = new PoolTimer();
    final Redial redial;

    private final ChannelPool.Policy policy;
    private final int size;
    private final int maxConnections;
    private final int limit;
    private final boolean growing;
    private final long idleNanos;
    private final AtomicInteger next = new AtomicInteger();
    /**
     * Calls in flight on all channels, with growth on: raised after a channel's count, lowered before
     * it, so it never runs ahead of them. {@link #grow} reads it as one count at one moment: a look at
     * the channels one by one can find them all at the limit while calls move between them.
     */
    private final AtomicInteger claimed = new AtomicInteger();

    /** The channels, copied on write (under lock). */
    private volatile Entry[] entries;
    /** Channels shut down by a redial or a retire, until they terminate (under lock). */
    private final List<ManagedChannel> leaving = new ArrayList<>();

    private volatile boolean closed;

    Channels(
            List<ManagedChannel> channels,
            Supplier<ManagedChannel> newChannel,
            ChannelPool.Policy policy,
            int maxConnections,
            int limit,
            long idleNanos,
            long redialNanos,
            PoolMetrics metrics) {
        this.newChannel = newChannel;
        this.policy = policy;
        this.size = channels.size();
        this.maxConnections = maxConnections;
        this.limit = limit;
        this.growing = maxConnections > size;
        this.idleNanos = idleNanos;
        this.metrics = metrics;
        this.redial = new Redial(this, redialNanos);
        Entry[] es = new Entry[size];
        for (int i = 0; i < size; i++) {
            es[i] = new Entry(i, false, channels.get(i), redialNanos, metrics.connection(i));
        }
        this.entries = es;
        metrics.sized(size);
    }

    /** Asks each channel to connect, without waiting, and follows its state for redial. */
    void connect() {
        for (Entry e : entries) {
            e.channel.getState(true);
            redial.watch(e, e.channel);
        }
    }

    Entry[] entries() {
        return entries;
    }

    boolean closed() {
        return closed;
    }

    ChannelPool.Policy policy() {
        return policy;
    }

    boolean growing() {
        return growing;
    }

    int maxConnections() {
        return maxConnections;
    }

    int limit() {
        return limit;
    }

    /**
     * Picks a channel for a call and counts the call in flight on it. With growth on: among the
     * channels below the limit; when there is none, a new channel (below the maximum) or any.
     */
    Entry acquire() {
        for (; ; ) {
            Entry[] es = entries;
            int start = next.getAndIncrement();
            Entry e;
            if (es.length == 1 && !growing) {
                e = es[0];
                if (take(e, false)) {
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
                        Thread.yield(); // a call between its two counts (see claimed) may run
                        continue; // the channels changed meanwhile, or a stream is free: look again
                    }
                    if (g != es[0]) {
                        return g;
                    }
                }
            }
            e = choose(es, bounded, start);
            if (e != null && take(e, bounded)) {
                return e;
            }
        }
    }

    /** Counts a call in flight on e, unless e is retired (or, bounded, at the limit). */
    private boolean take(Entry e, boolean bounded) {
        if (!e.reserve(bounded ? limit : 0)) {
            return false;
        }
        if (growing) {
            claimed.incrementAndGet();
        }
        metrics.started(e);
        return true;
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

    /** The policy's pick among es, not retired (bounded: only those below the limit); null if none. */
    private Entry choose(Entry[] es, boolean bounded, int start) {
        Entry[] live = new Entry[es.length];
        int[] load = new int[es.length];
        int m = 0;
        for (Entry e : es) {
            int n = e.inflight.get();
            if (n >= 0 && (!bounded || n < limit)) {
                load[m] = n;
                live[m++] = e;
            }
        }
        if (m == 0) {
            return null;
        }
        ConnectivityState[] states = new ConnectivityState[m];
        for (int i = 0; i < m; i++) {
            states[i] = live[i].channel.getState(false);
        }
        return live[Picker.pick(policy, states, Arrays.copyOf(load, m), start, ThreadLocalRandom.current())];
    }

    /** Calls in flight on all channels, as growth counts them (growth on; else 0). */
    int claimed() {
        return claimed.get();
    }

    /** Whether fewer calls are in flight (one count) than the streams of es's live channels. */
    private boolean streamLeft(Entry[] es) {
        int capacity = 0;
        for (Entry e : es) {
            if (!e.retired()) {
                capacity += limit;
            }
        }
        return claimed.get() < capacity;
    }

    /**
     * Adds a channel, with the calling call counted on it, if es is still the pool's channels and the
     * calls in flight fill every stream of them; else null (the caller picks again).
     */
    Entry grow(Entry[] es) {
        Entry g;
        synchronized (lock) {
            if (closed || entries != es || streamLeft(es)) {
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
            g = new Entry(index, true, ch, redial.delayNanos, metrics.connection(index));
            g.inflight.set(1);
            claimed.incrementAndGet();
            Entry[] grown = Arrays.copyOf(es, es.length + 1);
            grown[es.length] = g;
            entries = grown;
            metrics.sized(1);
        }
        metrics.started(g);
        metrics.grew();
        redial.watch(g, g.channel);
        return g;
    }

    /** A call ended on e: counts it out; a grown channel with nothing in flight may be retired later. */
    void release(Entry e) {
        metrics.ended(e);
        if (growing) {
            claimed.decrementAndGet();
        }
        if (e.inflight.decrementAndGet() == 0 && e.grown) {
            e.idleSince = System.nanoTime();
            scheduleRetire(e, idleNanos);
        }
    }

    private void scheduleRetire(Entry e, long delayNanos) {
        if (e.retireCheck.compareAndSet(false, true) && !timer.schedule(() -> retire(e), delayNanos)) {
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
            if (!e.inflight.compareAndSet(0, Entry.RETIRED)) {
                return;
            }
            List<Entry> keep = new ArrayList<>(entries.length);
            for (Entry x : entries) {
                if (x != e) {
                    keep.add(x);
                }
            }
            entries = keep.toArray(new Entry[0]);
            metrics.sized(-1);
            ch = e.channel;
            leave(ch);
        }
        metrics.shrank();
        ch.shutdown();
    }

    /** Keeps ch, shut down by the pool, until it terminates (under lock). */
    void leave(ManagedChannel ch) {
        leaving.removeIf(ManagedChannel::isTerminated);
        leaving.add(ch);
    }

    /** The pool's channels now, in order. */
    List<ManagedChannel> current() {
        Entry[] es = entries;
        List<ManagedChannel> out = new ArrayList<>(es.length);
        for (Entry e : es) {
            out.add(e.channel);
        }
        return out;
    }

    /** Every channel of the pool and every one it shut down that has not terminated yet. */
    List<ManagedChannel> all() {
        synchronized (lock) {
            List<ManagedChannel> out = current();
            out.addAll(leaving);
            return out;
        }
    }

    /**
     * Stops growth, retire and redial; the first time, rpclab.pool.size goes back to 0. Returns every
     * channel, to shut down.
     */
    List<ManagedChannel> close() {
        synchronized (lock) {
            if (!closed) {
                closed = true;
                metrics.sized(-entries.length);
            }
            timer.stop();
            return all();
        }
    }
}
