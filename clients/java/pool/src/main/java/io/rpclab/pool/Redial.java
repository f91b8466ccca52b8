// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;

/**
 * Redial (docs/pool.md): a channel that stays in TRANSIENT_FAILURE for the redial delay is replaced by
 * a new one from the pool's supplier, and the old one shut down. The delay doubles after each redial
 * of an entry, up to {@link ChannelPool#MAX_REDIAL_DELAY}, and returns to the configured one once the
 * entry's channel is READY. State changes are followed with notifyWhenStateChanged; the check runs on
 * the pool's timer.
 */
final class Redial {
    private final Channels channels;

    /** The configured delay. */
    final long delayNanos;

    Redial(Channels channels, long delayNanos) {
        this.channels = channels;
        this.delayNanos = delayNanos;
    }

    /** Follows ch's states while it is e's channel: TRANSIENT_FAILURE schedules a redial check. */
    void watch(Entry e, ManagedChannel ch) {
        ConnectivityState s = ch.getState(false);
        synchronized (channels.lock) {
            if (channels.closed() || e.channel != ch || e.retired()) {
                return;
            }
            if (s == ConnectivityState.TRANSIENT_FAILURE) {
                if (e.failingSince == 0) {
                    e.failingSince = System.nanoTime();
                    long failure = ++e.failures;
                    channels.timer.schedule(() -> redial(e, ch, failure), e.redialNanos);
                }
            } else {
                e.failingSince = 0;
                if (s == ConnectivityState.READY) {
                    e.redialNanos = delayNanos;
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
        synchronized (channels.lock) {
            if (channels.closed()
                    || e.channel != ch
                    || e.failures != failure
                    || e.failingSince == 0
                    || e.retired()
                    || ch.getState(false) != ConnectivityState.TRANSIENT_FAILURE) {
                return;
            }
            fresh = channels.newChannel.get();
            if (fresh == null || fresh == ch) {
                return;
            }
            e.channel = fresh;
            e.failingSince = 0;
            e.redialNanos = Math.min(2 * e.redialNanos, ChannelPool.MAX_REDIAL_DELAY.toNanos());
            channels.leave(ch);
        }
        channels.metrics.redialled();
        ch.shutdown();
        fresh.getState(true);
        watch(e, fresh);
    }
}
