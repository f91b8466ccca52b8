// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import static io.rpclab.pool.ReadBack.Kind.COUNTER;
import static io.rpclab.pool.ReadBack.Kind.UP_DOWN_COUNTER;
import static io.rpclab.pool.ReadBack.connection;
import static io.rpclab.pool.ReadBack.direction;
import static io.rpclab.pool.ReadBack.instrument;
import static io.rpclab.pool.ReadBack.points;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.InsecureChannelCredentials;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * docs/pool.md's "Metrics" table, read back through the OpenTelemetry SDK: every instrument's kind,
 * unit, attributes and values, against a real server that holds the calls.
 */
class MetricsTest {
    /**
     * 3 calls held through a pool of size 2 that grows to 3 at 1 stream each: size 3, one call in
     * flight and one pick per connection, one grow; after the calls, nothing in flight; after close,
     * size 0.
     */
    @Test
    void everyInstrumentAsDocsPoolMdHasIt() throws Exception {
        HoldServer srv = new HoldServer(0, 4);
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        SdkMeterProvider meters =
                SdkMeterProvider.builder().registerMetricReader(reader).build();
        String target = "127.0.0.1:" + srv.port();
        ChannelPool p = ChannelPool.forTarget(target, InsecureChannelCredentials.create())
                .size(2)
                .maxConnections(3)
                .streamsPerConnection(1)
                .meterProvider(meters)
                .build();
        try {
            srv.hold();
            List<ListenableFuture<byte[]>> calls = GrowthTest.start(p, 3);
            assertEquals(3, srv.awaitHeld(3), "calls held at the server");
            Map<Attributes, Long> perConnection =
                    Map.of(connection(target, 0), 1L, connection(target, 1), 1L, connection(target, 2), 1L);
            assertEquals(
                    Map.of(ReadBack.target(target), 3L),
                    points(instrument(reader, "rpclab.pool.size", UP_DOWN_COUNTER, "{connection}")),
                    "rpclab.pool.size");
            assertEquals(
                    perConnection,
                    points(instrument(reader, "rpclab.pool.inflight", UP_DOWN_COUNTER, "{request}")),
                    "rpclab.pool.inflight while 3 calls are held");
            assertEquals(
                    perConnection,
                    points(instrument(reader, "rpclab.pool.picks", COUNTER, "{pick}")),
                    "rpclab.pool.picks");
            assertEquals(
                    Map.of(direction(target, "grow"), 1L),
                    points(instrument(reader, "rpclab.pool.resizes", COUNTER, "{resize}")),
                    "rpclab.pool.resizes");
            srv.release();
            GrowthTest.finish(calls);
            assertEquals(
                    Map.of(connection(target, 0), 0L, connection(target, 1), 0L, connection(target, 2), 0L),
                    points(instrument(reader, "rpclab.pool.inflight", UP_DOWN_COUNTER, "{request}")),
                    "rpclab.pool.inflight after the calls");
            assertTrue(p.close(Duration.ofSeconds(20)), "close drained");
            assertEquals(
                    Map.of(ReadBack.target(target), 0L),
                    points(instrument(reader, "rpclab.pool.size", UP_DOWN_COUNTER, "{connection}")),
                    "rpclab.pool.size after close");
            p.shutdownNow();
            assertEquals(
                    Map.of(ReadBack.target(target), 0L),
                    points(instrument(reader, "rpclab.pool.size", UP_DOWN_COUNTER, "{connection}")),
                    "rpclab.pool.size after a second close");
        } finally {
            p.shutdownNow();
            srv.stop();
            meters.close();
        }
    }
}
