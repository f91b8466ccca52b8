// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import io.grpc.ManagedChannel;
import io.opentelemetry.api.common.Attributes;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** One channel of the pool: the channel (replaced by a redial) and its bookkeeping. */
final class Entry {
    /** The in-flight count of a retired entry: no call may take it again. */
    static final int RETIRED = Integer.MIN_VALUE;

    /** Its index in the pool: 0..size-1, then the grown ones (rpclab.pool.connection). */
    final int index;

    /** Added by growth, so retired when idle. */
    final boolean grown;

    /** rpclab.pool.target and rpclab.pool.connection, for per-channel metrics. */
    final Attributes attrs;

    /** Calls in flight, or {@link #RETIRED}. */
    final AtomicInteger inflight = new AtomicInteger();

    volatile ManagedChannel channel;

    /** When inflight last went to 0 (System.nanoTime), for a grown channel. */
    volatile long idleSince = System.nanoTime();

    /** A retire check is pending. */
    final AtomicBoolean retireCheck = new AtomicBoolean();

    // Guarded by Channels.lock:
    /** When the channel entered TRANSIENT_FAILURE (System.nanoTime), or 0 if it is not in it. */
    long failingSince;
    /** Counts entries into TRANSIENT_FAILURE: a redial check for an older one is dropped. */
    long failures;
    /** The delay before the next redial of this entry. */
    long redialNanos;

    Entry(int index, boolean grown, ManagedChannel channel, long redialNanos, Attributes attrs) {
        this.index = index;
        this.grown = grown;
        this.channel = channel;
        this.redialNanos = redialNanos;
        this.attrs = attrs;
    }

    /** Counts a call in flight, unless retired or (limit above 0) carrying limit calls already. */
    boolean reserve(int limit) {
        for (; ; ) {
            int n = inflight.get();
            if (n < 0 || (limit > 0 && n >= limit)) {
                return false;
            }
            if (inflight.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** Calls in flight now (0 once retired). */
    int load() {
        return Math.max(0, inflight.get());
    }

    boolean retired() {
        return inflight.get() < 0;
    }
}
