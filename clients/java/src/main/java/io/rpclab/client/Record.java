// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import com.fasterxml.jackson.annotation.JsonAutoDetect.Visibility;
import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.PropertyAccessor;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.zip.Deflater;
import org.HdrHistogram.Histogram;

/**
 * One step's result record (docs/results.md, schema/result.schema.json), written as one JSON line.
 */
final class Record {
    /** Status code names as the schema spells them (grpc-go's codes.Code.String), by code value. */
    static final String[] CODE_NAMES = {
        "OK",
        "Canceled",
        "Unknown",
        "InvalidArgument",
        "DeadlineExceeded",
        "NotFound",
        "AlreadyExists",
        "PermissionDenied",
        "ResourceExhausted",
        "FailedPrecondition",
        "Aborted",
        "OutOfRange",
        "Unimplemented",
        "Internal",
        "Unavailable",
        "DataLoss",
        "Unauthenticated",
    };

    @JsonIgnore
    private final StepSpec step;

    @JsonIgnore
    private final Env env;

    // What Jackson writes, by field (snake_case), in schema/result.schema.json's order.
    final int schemaVersion = 1;
    final String kind = "ping";
    String status = "ok";

    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    String error = "";

    @JsonIgnore
    Instant startedAt = Instant.now();

    /** The step could not connect: the steps after it are not run. */
    @JsonIgnore
    boolean unreachable;

    private long requests;
    private final Map<String, Long> errors = new LinkedHashMap<>();
    private long durationNs;
    private double throughputRps;
    private Latency latency = new Latency(0, 0, 0, 0, 0, 0, 0);
    private String histogramHdr = "";
    private final int connsObserved = -1;
    private long clientCpuNs;
    private double clientCpuNsPerRpc;

    Record(StepSpec step, Env env) {
        this.step = step;
        this.env = env;
    }

    void fail(String why) {
        status = "failed";
        error = why;
    }

    void fill(Histogram h, long[] codes, long elapsedNs, long cpu) {
        requests = 0;
        for (int c = 0; c < codes.length; c++) {
            requests += codes[c];
            if (c > 0 && codes[c] > 0) {
                errors.put(CODE_NAMES[c], codes[c]);
            }
        }
        long ok = codes[0];
        durationNs = elapsedNs;
        throughputRps = elapsedNs > 0 ? ok / (elapsedNs / 1e9) : 0;
        if (h.getTotalCount() > 0) {
            latency = new Latency(
                    h.getMinValue(),
                    h.getMean(),
                    h.getValueAtPercentile(50),
                    h.getValueAtPercentile(90),
                    h.getValueAtPercentile(99),
                    h.getValueAtPercentile(99.9),
                    h.getMaxValue());
        }
        histogramHdr = encode(h);
        clientCpuNs = cpu;
        clientCpuNsPerRpc = requests > 0 ? (double) cpu / requests : 0;
        if (ok == 0) {
            fail(requests == 0 ? "no RPC completed in the interval" : "every RPC failed (" + requests + ")");
        }
    }

    /** The histogram in HdrHistogram's compressed V2 form, base64 ("HISTFAAA..."). */
    static String encode(Histogram h) {
        ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int n = h.encodeIntoCompressedByteBuffer(buf, Deflater.DEFAULT_COMPRESSION);
        byte[] b = new byte[n];
        buf.rewind();
        buf.get(b);
        return Base64.getEncoder().encodeToString(b);
    }

    String summary() {
        if (!status.equals("ok")) {
            return status + ": " + error;
        }
        return String.format(
                Locale.ROOT,
                "%.0f rps, p99 %.1f µs, cpu %.1f µs/rpc",
                throughputRps,
                latency.p99Ns() / 1e3,
                clientCpuNsPerRpc / 1e3);
    }

    private static final ObjectWriter JSON = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .visibility(PropertyAccessor.ALL, Visibility.NONE)
            .visibility(PropertyAccessor.FIELD, Visibility.ANY)
            .serializationInclusion(JsonInclude.Include.NON_NULL)
            .build()
            .writer();

    private record Spec(
            String target,
            String rpc,
            String connMode,
            int connsRequested,
            String pick,
            int inflight,
            int payloadBytes,
            long warmupNs,
            long intervalNs,
            String loadModel) {}

    private record Latency(long minNs, double meanNs, long p50Ns, long p90Ns, long p99Ns, long p999Ns, long p100Ns) {}

    @JsonProperty("started_at")
    private String startedAtRfc3339() {
        return RFC3339.format(startedAt);
    }

    @JsonProperty("spec")
    private Spec spec() {
        StepSpec.Conn conn = step.layout();
        String pick = conn.kind().equals("pool") ? conn.policy() : null;
        return new Spec(
                step.target(),
                step.rpc(),
                conn.kind(),
                conn.conns(step.inflight()),
                pick,
                step.inflight(),
                step.payloadBytes(),
                step.warmupNs(),
                step.intervalNs(),
                "closed");
    }

    /** The env, with the step's client_cpus (the pin the driver set) when it gives them. */
    @JsonProperty("env")
    private Env stepEnv() {
        return step.clientCpus() == null ? env : env.withClientCpus(step.clientCpus());
    }

    String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("record: " + e.getMessage(), e);
        }
    }

    /**
     * RFC 3339 in UTC with nanoseconds, always with a fraction (Instant.toString drops a zero one).
     */
    static final DateTimeFormatter RFC3339 = DateTimeFormatter.ofPattern(
                    "uuuu-MM-dd'T'HH:mm:ss.SSSSSSSSS'Z'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);
}
