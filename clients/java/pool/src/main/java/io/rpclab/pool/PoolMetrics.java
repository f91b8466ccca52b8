// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.LongUpDownCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.MeterProvider;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The pool's instruments, as docs/pool.md's table has them, on the meter {@value #SCOPE} with the
 * library's version. Every instrument carries rpclab.pool.target.
 */
final class PoolMetrics {
    static final String SCOPE = "io.rpclab.pool";

    /** The library's version (Maven's project.version), the meter's version. */
    static final String VERSION = version();

    private final String target;
    private final Attributes targetAttrs;
    private final Attributes growAttrs;
    private final Attributes shrinkAttrs;
    private final LongUpDownCounter size;
    private final LongUpDownCounter inflight;
    private final LongCounter picks;
    private final LongCounter resizes;
    private final LongCounter redials;
    private final AtomicLong resizeCount = new AtomicLong();
    private final AtomicLong redialCount = new AtomicLong();

    PoolMetrics(MeterProvider meters, String target) {
        this.target = target;
        this.targetAttrs = Attributes.of(ChannelPool.TARGET, target);
        this.growAttrs = Attributes.of(ChannelPool.TARGET, target, ChannelPool.DIRECTION, "grow");
        this.shrinkAttrs = Attributes.of(ChannelPool.TARGET, target, ChannelPool.DIRECTION, "shrink");
        Meter meter =
                meters.meterBuilder(SCOPE).setInstrumentationVersion(VERSION).build();
        this.size = meter.upDownCounterBuilder("rpclab.pool.size")
                .setDescription("Channels in the pool")
                .setUnit("{connection}")
                .build();
        this.inflight = meter.upDownCounterBuilder("rpclab.pool.inflight")
                .setDescription("RPCs and streams in flight, per channel")
                .setUnit("{request}")
                .build();
        this.picks = meter.counterBuilder("rpclab.pool.picks")
                .setDescription("RPCs and streams started, per channel")
                .setUnit("{pick}")
                .build();
        this.redials = meter.counterBuilder("rpclab.pool.redials")
                .setDescription("Channels replaced after TRANSIENT_FAILURE")
                .setUnit("{redial}")
                .build();
        this.resizes = meter.counterBuilder("rpclab.pool.resizes")
                .setDescription("Channels added or retired by growth")
                .setUnit("{resize}")
                .build();
    }

    private static String version() {
        Properties p = new Properties();
        try (InputStream in = PoolMetrics.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // No version then: the meter is still named.
        }
        return p.getProperty("version", "unknown");
    }

    /** The per-channel attributes of the channel at index. */
    Attributes connection(int index) {
        return Attributes.of(ChannelPool.TARGET, target, ChannelPool.CONNECTION, (long) index);
    }

    /** Channels added (delta above 0) to or removed from the pool. */
    void sized(long delta) {
        size.add(delta, targetAttrs);
    }

    /** A call was picked for e and counts in flight there. */
    void started(Entry e) {
        picks.add(1, e.attrs);
        inflight.add(1, e.attrs);
    }

    /** A call on e ended. */
    void ended(Entry e) {
        inflight.add(-1, e.attrs);
    }

    void grew() {
        resizeCount.incrementAndGet();
        resizes.add(1, growAttrs);
    }

    void shrank() {
        resizeCount.incrementAndGet();
        resizes.add(1, shrinkAttrs);
    }

    void redialled() {
        redialCount.incrementAndGet();
        redials.add(1, targetAttrs);
    }

    long resizes() {
        return resizeCount.get();
    }

    long redials() {
        return redialCount.get();
    }
}
