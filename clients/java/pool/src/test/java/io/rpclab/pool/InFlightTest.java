// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import static io.rpclab.pool.ReadBack.Kind.COUNTER;
import static io.rpclab.pool.ReadBack.Kind.UP_DOWN_COUNTER;
import static io.rpclab.pool.ReadBack.instrument;
import static io.rpclab.pool.ReadBack.points;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.InsecureChannelCredentials;
import io.grpc.Metadata;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What counts as in flight (docs/pool.md, "In flight"), against a real server that holds the calls. */
class InFlightTest {
    private static long sum(InMemoryMetricReader reader, String name, ReadBack.Kind kind, String unit) {
        return points(instrument(reader, name, kind, unit)).values().stream()
                .mapToLong(Long::longValue)
                .sum();
    }

    /**
     * A call cancelled before it starts is never picked nor in flight: its start fails as grpc-java's
     * own call does, no call reaches the server, inflight(), rpclab.pool.inflight and rpclab.pool.picks
     * stay as they were; the next call counts 1, then 0 when it ends.
     */
    @Test
    void aCallCancelledBeforeStartIsNeverInFlight() throws Exception {
        HoldServer srv = new HoldServer(0, 4);
        for (ChannelPool.Policy policy : ChannelPool.Policy.values()) {
            InMemoryMetricReader reader = InMemoryMetricReader.create();
            SdkMeterProvider meters =
                    SdkMeterProvider.builder().registerMetricReader(reader).build();
            ChannelPool p = ChannelPool.forTarget("127.0.0.1:" + srv.port(), InsecureChannelCredentials.create())
                    .size(2)
                    .policy(policy)
                    .meterProvider(meters)
                    .build();
            try {
                srv.hold();
                ClientCall<byte[], byte[]> call =
                        p.newCall(Bytes.UNARY, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS));
                call.cancel("before start", null);
                IllegalStateException e = assertThrows(
                        IllegalStateException.class, () -> call.start(new ClientCall.Listener<>() {}, new Metadata()));
                assertEquals("call was cancelled", e.getMessage(), policy + ": start after cancel");
                assertArrayEquals(new int[] {0, 0}, p.inflight(), policy + ": inflight() after the cancelled call");
                // A Counter with nothing added is not reported.
                assertEquals(
                        List.of(),
                        reader.collectAllMetrics().stream()
                                .filter(m -> m.getName().equals("rpclab.pool.picks")
                                        || m.getName().equals("rpclab.pool.inflight"))
                                .flatMap(m -> m.getLongSumData().getPoints().stream())
                                .toList(),
                        policy + ": picks and in flight after the cancelled call");

                List<ListenableFuture<byte[]>> calls = GrowthTest.start(p, 1);
                assertEquals(1, srv.awaitHeld(1), policy + ": calls held");
                assertEquals(1, srv.arrived(), policy + ": calls that reached the server");
                assertEquals(1, p.inflight()[0] + p.inflight()[1], policy + ": inflight() with one call held");
                assertEquals(
                        1,
                        sum(reader, "rpclab.pool.inflight", UP_DOWN_COUNTER, "{request}"),
                        policy + ": rpclab.pool.inflight");
                assertEquals(1, sum(reader, "rpclab.pool.picks", COUNTER, "{pick}"), policy + ": rpclab.pool.picks");
                srv.release();
                GrowthTest.finish(calls);
                assertArrayEquals(new int[] {0, 0}, p.inflight(), policy + ": inflight() after the call");
                assertEquals(
                        0,
                        sum(reader, "rpclab.pool.inflight", UP_DOWN_COUNTER, "{request}"),
                        policy + ": rpclab.pool.inflight");
            } finally {
                p.shutdownNow().awaitTermination(30, TimeUnit.SECONDS);
                meters.close();
            }
        }
        srv.stop();
    }
}
