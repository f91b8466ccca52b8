// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.MetricDataType;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.util.HashMap;
import java.util.Map;

/** The pool's metrics read back through the OpenTelemetry SDK's in-memory reader. */
final class ReadBack {
    private ReadBack() {}

    /** docs/pool.md's kind: an UpDownCounter is a non-monotonic long sum, a Counter a monotonic one. */
    enum Kind {
        UP_DOWN_COUNTER,
        COUNTER
    }

    /**
     * The instrument named name, checked to be of kind with unit, on the meter io.rpclab.pool of the
     * library's version.
     */
    static MetricData instrument(InMemoryMetricReader reader, String name, Kind kind, String unit) {
        MetricData got = null;
        for (MetricData m : reader.collectAllMetrics()) {
            if (m.getName().equals(name)) {
                got = m;
            }
        }
        assertNotNull(got, name + ": not reported");
        assertEquals(MetricDataType.LONG_SUM, got.getType(), name + ": type (a gauge is not an UpDownCounter)");
        assertEquals(kind == Kind.COUNTER, got.getLongSumData().isMonotonic(), name + ": monotonic, so " + kind);
        assertEquals(unit, got.getUnit(), name + ": unit");
        assertEquals("io.rpclab.pool", got.getInstrumentationScopeInfo().getName(), name + ": meter");
        String version = got.getInstrumentationScopeInfo().getVersion();
        assertTrue(version != null && version.matches("\\d+\\.\\d+\\.\\d+.*"), name + ": meter version " + version);
        return got;
    }

    /** Each point's attributes and value. */
    static Map<Attributes, Long> points(MetricData m) {
        Map<Attributes, Long> out = new HashMap<>();
        for (LongPointData p : m.getLongSumData().getPoints()) {
            out.put(p.getAttributes(), p.getValue());
        }
        return out;
    }

    // docs/pool.md's names, spelled out here (not the library's constants) so that a renamed key fails.
    static final AttributeKey<String> TARGET = AttributeKey.stringKey("rpclab.pool.target");
    static final AttributeKey<Long> CONNECTION = AttributeKey.longKey("rpclab.pool.connection");
    static final AttributeKey<String> DIRECTION = AttributeKey.stringKey("rpclab.pool.direction");

    /** {rpclab.pool.target}. */
    static Attributes target(String target) {
        return Attributes.of(TARGET, target);
    }

    /** {rpclab.pool.target, rpclab.pool.connection}. */
    static Attributes connection(String target, long index) {
        return Attributes.of(TARGET, target, CONNECTION, index);
    }

    /** {rpclab.pool.target, rpclab.pool.direction}. */
    static Attributes direction(String target, String direction) {
        return Attributes.of(TARGET, target, DIRECTION, direction);
    }
}
