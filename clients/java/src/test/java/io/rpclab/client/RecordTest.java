// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.zip.Inflater;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class RecordTest {
    static final Env ENV = new Env("1.83.0", "java 17", 2, List.of(0), "box", "linux");

    // Encodings written by hdrhistogram-go 1.4.0 (Histogram.Encode, V2 compressed) for New(1,
    // 100_000_000_000, 3)
    // holding the values below (the same references as clients/node/test/record.test.js): what Go
    // decodes.
    static final String GO_EMPTY = "HISTFAAAACR42pJpmSzMwMDAyAABzFAaxBf3KHvBYP8BKgIIAAD//1EfBDg=";
    static final String GO_VALUES =
            "HISTFAAAAEF42pJpmSzMwMAgxQABzFCakYGBQdyj7AWD/QeoCNNJfiYmpou+TJVM19kbTqxfoHo4gun+D0YWQAAAAP//KDMNXw==";
    static final long[] VALUES = {1, 999, 1000, 1001, 30000, 31000, 2000000, 99999999999L, 100000000000L};
    static final long BIG_VALUE = 45000;
    static final long BIG_COUNT = 5_000_000_000L; // past 2^32 in one bucket: counts are 64-bit

    /** A unary step at in-flight n of layout conn. */
    static StepSpec step(String conn, int n) {
        return StepTest.step("127.0.0.1:50051", "unary", conn, n, 1000, 3000);
    }

    static Histogram goValues() {
        Histogram h = new Histogram(1, Worker.HIGHEST, 3);
        for (long v : VALUES) {
            h.recordValue(v);
        }
        h.recordValueWithCount(BIG_VALUE, BIG_COUNT);
        return h;
    }

    /** The uncompressed V2 payload inside a compressed base64 encoding. */
    static byte[] uncompressed(String b64) throws Exception {
        ByteBuffer b = ByteBuffer.wrap(Base64.getDecoder().decode(b64));
        assertEquals(0x1c849314, b.getInt(0), "compressed V2 cookie");
        int n = b.getInt(4);
        Inflater inf = new Inflater();
        inf.setInput(b.array(), 8, n);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] chunk = new byte[4096];
        while (!inf.finished()) {
            int k = inf.inflate(chunk);
            if (k == 0 && (inf.needsInput() || inf.needsDictionary())) {
                break;
            }
            out.write(chunk, 0, k);
        }
        assertTrue(inf.finished(), "the payload inflates completely");
        return out.toByteArray();
    }

    static JsonObject json(Record r) {
        return JsonParser.parseString(r.toJson()).getAsJsonObject();
    }

    @Test
    void encodeMatchesGoByteForByte() throws Exception {
        String got = Record.encode(goValues());
        assertTrue(got.matches("HISTFAAA[A-Za-z0-9+/=]*"), got);
        assertArrayEquals(uncompressed(GO_VALUES), uncompressed(got));
        assertArrayEquals(uncompressed(GO_EMPTY), uncompressed(Record.encode(new Histogram(1, Worker.HIGHEST, 3))));
    }

    /** The record's figures are the ones hdrhistogram-go reads from the same histogram. */
    @Test
    void fillGivesGoFigures() throws Exception {
        Record r = new Record(step("shared", 1), ENV);
        long[] codes = new long[Worker.CODES];
        codes[0] = 5_000_000_009L;
        r.fill(goValues(), codes, 1_000_000_000L, 0);
        JsonObject lat = json(r).getAsJsonObject("latency");
        // From hdrhistogram-go: Min, Mean, ValueAtQuantile(50, 90, 99, 99.9), Max of GO_VALUES decoded.
        assertEquals(1, lat.get("min_ns").getAsLong());
        assertEquals(45023, lat.get("p50_ns").getAsLong());
        assertEquals(45023, lat.get("p90_ns").getAsLong());
        assertEquals(45023, lat.get("p99_ns").getAsLong());
        assertEquals(45023, lat.get("p999_ns").getAsLong());
        assertEquals(100059316223L, lat.get("p100_ns").getAsLong());
        assertEquals(45048.011, lat.get("mean_ns").getAsDouble(), 1e-3);
    }

    /** Every field of an ok record, with its unit: nanoseconds, RPCs per second, CPU ns per RPC. */
    @Test
    void okRecordFieldsAndUnits() throws Exception {
        StepSpec s = new StepSpec(
                "127.0.0.1:50051", "benchmark", "streaming", "pool:2", 4, 64, 250_000_000L, 2_000_000_000L, null, "o");
        Record r = new Record(s, ENV);
        r.startedAt = Instant.parse("2026-11-22T23:01:02.000001Z");
        Histogram h = new Histogram(1, Worker.HIGHEST, 3);
        h.recordValue(1000);
        h.recordValue(2000);
        h.recordValue(3000);
        long[] codes = new long[Worker.CODES];
        codes[0] = 3;
        codes[4] = 1; // DeadlineExceeded
        codes[14] = 2; // Unavailable
        r.fill(h, codes, 2_000_000_000L, 6_000_000L);
        JsonObject j = json(r);
        assertEquals(1, j.get("schema_version").getAsInt());
        assertEquals("ping", j.get("kind").getAsString());
        assertEquals("ok", j.get("status").getAsString());
        assertFalse(j.has("error"), "an ok record has no error");
        assertEquals("2026-11-22T23:01:02.000001000Z", j.get("started_at").getAsString());

        JsonObject spec = j.getAsJsonObject("spec");
        assertEquals("127.0.0.1:50051", spec.get("target").getAsString());
        assertEquals("streaming", spec.get("rpc").getAsString());
        assertEquals("pool", spec.get("conn_mode").getAsString());
        assertEquals(2, spec.get("conns_requested").getAsInt());
        assertEquals("round-robin", spec.get("pick").getAsString());
        assertEquals(4, spec.get("inflight").getAsInt());
        assertEquals(64, spec.get("payload_bytes").getAsInt());
        assertEquals(250_000_000L, spec.get("warmup_ns").getAsLong());
        assertEquals(2_000_000_000L, spec.get("interval_ns").getAsLong());
        assertEquals("closed", spec.get("load_model").getAsString());
        assertEquals(10, spec.size(), "spec fields: " + spec.keySet());

        assertEquals("java", j.getAsJsonObject("env").get("language").getAsString());
        assertEquals(6, j.get("requests").getAsLong(), "requests count failed RPCs too");
        assertEquals(
                Map.of("DeadlineExceeded", 1L, "Unavailable", 2L),
                Map.of(
                        "DeadlineExceeded",
                        j.getAsJsonObject("errors").get("DeadlineExceeded").getAsLong(),
                        "Unavailable",
                        j.getAsJsonObject("errors").get("Unavailable").getAsLong()));
        assertEquals(2, j.getAsJsonObject("errors").size(), "errors: " + j.getAsJsonObject("errors"));
        assertEquals(2_000_000_000L, j.get("duration_ns").getAsLong());
        assertEquals(1.5, j.get("throughput_rps").getAsDouble(), 1e-9, "successful RPCs per second of duration_ns");
        JsonObject lat = j.getAsJsonObject("latency");
        assertEquals(1000, lat.get("min_ns").getAsLong());
        assertEquals(2000, lat.get("mean_ns").getAsDouble(), 1.0);
        assertEquals(2000, lat.get("p50_ns").getAsLong());
        assertEquals(h.highestEquivalentValue(3000), lat.get("p90_ns").getAsLong());
        assertEquals(h.highestEquivalentValue(3000), lat.get("p100_ns").getAsLong());
        assertEquals(-1, j.get("conns_observed").getAsInt());
        assertEquals(6_000_000L, j.get("client_cpu_ns").getAsLong());
        assertEquals(1_000_000.0, j.get("client_cpu_ns_per_rpc").getAsDouble(), 1e-9, "client_cpu_ns / requests");

        Histogram back = Histogram.decodeFromCompressedByteBuffer(
                ByteBuffer.wrap(
                        Base64.getDecoder().decode(j.get("histogram_hdr").getAsString())),
                0);
        assertEquals(3, back.getTotalCount());
        assertEquals(h, back);
        assertEquals("2 rps, p99 3.0 µs, cpu 1000.0 µs/rpc", r.summary());
    }

    @Test
    void layoutsInTheSpec() throws Exception {
        JsonObject shared = json(new Record(step("shared", 8), ENV)).getAsJsonObject("spec");
        assertEquals(1, shared.get("conns_requested").getAsInt());
        assertFalse(shared.has("pick"), "pick is for pools only");
        JsonObject pw = json(new Record(step("per-worker", 8), ENV)).getAsJsonObject("spec");
        assertEquals("per-worker", pw.get("conn_mode").getAsString());
        assertEquals(8, pw.get("conns_requested").getAsInt());
    }

    /** A step's client_cpus (the pin the driver set) is the record's env.client_cpus. */
    @Test
    void stepClientCpusGoToTheEnv() throws Exception {
        StepSpec s = new StepSpec("h:1", "benchmark", "unary", "shared", 1, 0, 0, 1, List.of(1, 3), "o");
        assertEquals(
                "[1,3]",
                json(new Record(s, ENV))
                        .getAsJsonObject("env")
                        .get("client_cpus")
                        .toString());
        Record detected = new Record(step("shared", 1), ENV);
        assertEquals(
                "[0]", json(detected).getAsJsonObject("env").get("client_cpus").toString());
    }

    @Test
    void failedRecords() throws Exception {
        Record none = new Record(step("shared", 1), ENV);
        none.fill(new Histogram(1, Worker.HIGHEST, 3), new long[Worker.CODES], 1_000_000_000L, 5);
        JsonObject j = json(none);
        assertEquals("failed", j.get("status").getAsString());
        assertEquals("no RPC completed in the interval", j.get("error").getAsString());
        assertEquals(0, j.get("client_cpu_ns_per_rpc").getAsDouble());
        assertEquals(0, j.get("throughput_rps").getAsDouble());
        assertEquals("failed: no RPC completed in the interval", none.summary());

        Record all = new Record(step("shared", 1), ENV);
        long[] codes = new long[Worker.CODES];
        codes[14] = 3;
        codes[16] = 1;
        all.fill(new Histogram(1, Worker.HIGHEST, 3), codes, 1_000_000_000L, 5);
        j = json(all);
        assertEquals("failed", j.get("status").getAsString());
        assertEquals("every RPC failed (4)", j.get("error").getAsString());
        assertEquals(3, j.getAsJsonObject("errors").get("Unavailable").getAsLong());
        assertEquals(1, j.getAsJsonObject("errors").get("Unauthenticated").getAsLong());

        Record unreachable = new Record(step("shared", 1), ENV);
        unreachable.fail("target unreachable: \"x\"\n\tat\u0001");
        assertEquals(
                "target unreachable: \"x\"\n\tat\u0001",
                json(unreachable).get("error").getAsString());
    }

    @Test
    void codeNamesAreGrpcGos() {
        assertEquals(Worker.CODES, Record.CODE_NAMES.length);
        for (io.grpc.Status.Code c : io.grpc.Status.Code.values()) {
            // grpc-go spells CANCELLED "Canceled" and OK "OK"; the others are the Java names in
            // CamelCase.
            String want = c == io.grpc.Status.Code.CANCELLED
                    ? "Canceled"
                    : c == io.grpc.Status.Code.OK ? "OK" : camel(c.name());
            assertEquals(want, Record.CODE_NAMES[c.value()], c.name());
        }
    }

    private static String camel(String upper) {
        StringBuilder b = new StringBuilder();
        for (String w : upper.split("_")) {
            b.append(w.charAt(0)).append(w.substring(1).toLowerCase(Locale.ROOT));
        }
        return b.toString();
    }

    @Test
    void startedAtAlwaysHasAFraction() {
        assertEquals("2026-11-22T23:01:02.000000000Z", Record.RFC3339.format(Instant.parse("2026-11-22T23:01:02Z")));
        assertEquals("1970-01-01T00:00:00.123456789Z", Record.RFC3339.format(Instant.ofEpochSecond(0, 123456789)));
    }
}
