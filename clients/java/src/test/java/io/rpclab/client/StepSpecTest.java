// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The steps file (schema/step.schema.json): read into typed steps, every bad line refused. */
class StepSpecTest {
    static final String GOOD =
            "{\"target\":\"127.0.0.1:50051\",\"service\":\"benchmark\",\"rpc\":\"unary\",\"conn\":\"shared\","
                    + "\"inflight\":4,\"payload_bytes\":0,\"warmup_ns\":1000000000,\"interval_ns\":3000000000,"
                    + "\"client_cpus\":[0],\"out\":\"/tmp/r.jsonl\"}";

    static Path file(String... lines) throws Exception {
        Path p = Files.createTempFile("rpclab-steps", ".jsonl");
        Files.writeString(p, String.join("\n", lines) + "\n");
        return p;
    }

    /** GOOD with field set to value (a JSON fragment), or removed if value is null. */
    static String with(String field, String value) {
        String s = GOOD.replaceFirst("\"" + field + "\":(\"[^\"]*\"|\\[[^]]*\\]|[0-9]+),?", "");
        s = s.replace(",}", "}");
        return value == null ? s : s.replaceFirst("\\{", "{\"" + field + "\":" + value + ",");
    }

    @Test
    void goodFile() throws Exception {
        List<StepSpec> got = StepSpec.read(
                file(GOOD, "", with("conn", "\"pool:4:round-robin\""), with("conn", "\"pool:2:least-loaded\"")));
        StepSpec want = new StepSpec(
                "127.0.0.1:50051",
                "benchmark",
                "unary",
                "shared",
                4,
                0,
                1_000_000_000L,
                3_000_000_000L,
                List.of(0),
                "/tmp/r.jsonl");
        assertEquals(3, got.size());
        assertEquals(want, got.get(0));
        assertEquals("pool:4:round-robin", got.get(1).conn());
        assertEquals(new StepSpec.Conn("pool", 4, "round-robin"), got.get(1).layout());
        assertEquals(new StepSpec.Conn("pool", 2, "least-loaded"), got.get(2).layout());
        assertEquals(null, StepSpec.read(file(with("client_cpus", null))).get(0).clientCpus());
    }

    /** Each bad line exits 2 naming the line and the field (or what is wrong with the line). */
    @Test
    void badFilesNameTheLineAndField() throws Exception {
        String[][] cases = {
            // {want in message, line 2 of the file}: the schema's complaints, then the Java client's own
            {"line 2: not a step object: array found, object expected", "[1]"},
            {"line 2: not a step object: string found", "\"step\""},
            {"line 2: Unrecognized token", "nope"},
            {"line 2: Trailing token", GOOD + " {}"},
            {"line 2: field \"foo\": property 'foo' is not defined", with("foo", "1")},
            {"line 2: field \"target\": required property", with("target", null)},
            {"line 2: field \"interval_ns\": required property", with("interval_ns", null)},
            {"line 2: field \"out\": required property", with("out", null)},
            {"line 2: field \"warmup_ns\": string found, integer expected", with("warmup_ns", "\"1s\"")},
            {"line 2: field \"warmup_ns\": string found, integer expected", with("warmup_ns", "\"1000\"")},
            {"line 2: field \"warmup_ns\": number found, integer expected", with("warmup_ns", "1.5")},
            {"line 2: Numeric value (99999999999999999999) out of range", with("warmup_ns", "99999999999999999999")},
            {"line 2: field \"inflight\": null found, integer expected", with("inflight", "null")},
            {"line 2: field \"inflight\": must have a maximum value of 20000", with("inflight", "99999999999")},
            {"line 2: field \"target\": integer found, string expected", with("target", "5")},
            {"line 2: field \"rpc\": does not have a value in the enumeration", with("rpc", "null")},
            {"line 2: field \"client_cpus\": string found, array expected", with("client_cpus", "\"0\"")},
            {"line 2: field \"client_cpus\": must have a minimum value of 0", with("client_cpus", "[-1]")},
            {"line 2: field \"target\": must be at least 1 characters long", with("target", "\"\"")},
            {"line 2: field \"target\": \"h\" has no port", with("target", "\"h\"")},
            {
                "line 2: field \"target\": \"127.0.0.1:99999\": port \"99999\" is not in 1..65535",
                with("target", "\"127.0.0.1:99999\"")
            },
            {"line 2: field \"target\": \"h:0\": port \"0\" is not in 1..65535", with("target", "\"h:0\"")},
            {"line 2: field \"target\": \"h:\": port \"\" is not in", with("target", "\"h:\"")},
            {"line 2: field \"target\": \"h:http\": port \"http\" is not in", with("target", "\"h:http\"")},
            {"line 2: field \"target\": \":50051\" has no host", with("target", "\":50051\"")},
            {
                "line 2: field \"target\": \"::1:50051\": write an IPv6 address in brackets",
                with("target", "\"::1:50051\"")
            },
            {"line 2: field \"out\": must be at least 1 characters long", with("out", "\"\"")},
            {"line 2: field \"service\": \"ydb-debug\" is not supported", with("service", "\"ydb-debug\"")},
            {"line 2: field \"service\": does not have a value in the enumeration", with("service", "\"x\"")},
            {"line 2: field \"rpc\": does not have a value in the enumeration", with("rpc", "\"bidi\"")},
            {"line 2: field \"conn\": \"local-pool\" is a C-core layout", with("conn", "\"local-pool\"")},
            {"line 2: field \"conn\": \"distinct-args\" is a C-core layout", with("conn", "\"distinct-args\"")},
            {"line 2: field \"conn\": \"channel-per-worker\" is a C-core layout", with("conn", "\"channel-per-worker\"")
            },
            {"line 2: field \"conn\": does not match the regex pattern", with("conn", "\"pool:0\"")},
            {"line 2: field \"conn\": does not match the regex pattern", with("conn", "\"pool:2:fastest\"")},
            {"line 2: field \"inflight\": must have a minimum value of 1", with("inflight", "0")},
            {"line 2: field \"inflight\": must have a maximum value of 20000", with("inflight", "20001")},
            {"line 2: field \"payload_bytes\": must have a minimum value of 0", with("payload_bytes", "-1")},
            {"line 2: field \"payload_bytes\": must have a maximum value of 4194240", with("payload_bytes", "4194241")},
            {"line 2: field \"warmup_ns\": must have a minimum value of 0", with("warmup_ns", "-1")},
            {"line 2: field \"interval_ns\": must have a minimum value of 1", with("interval_ns", "0")},
        };
        for (String[] c : cases) {
            StepSpec.BadFile e = assertThrows(StepSpec.BadFile.class, () -> StepSpec.read(file(GOOD, c[1])), c[1]);
            assertTrue(e.getMessage().startsWith("--steps "), e.getMessage());
            assertTrue(
                    e.getMessage().contains(c[0]), c[1] + ": got \"" + e.getMessage() + "\", want it to say " + c[0]);
        }
        assertTrue(assertThrows(StepSpec.BadFile.class, () -> StepSpec.read(file("")))
                .getMessage()
                .contains("no steps"));
        assertThrows(StepSpec.BadFile.class, () -> StepSpec.read(Path.of("/nonexistent/steps.jsonl")));
    }

    /** Targets grpc-java resolves pass the client's own check; each layout's connection count. */
    @Test
    void targetsAndLayouts() {
        for (String t : List.of(
                "127.0.0.1:50051",
                "localhost:1",
                "[::1]:65535",
                "dns:///localhost:50051",
                "unix:///tmp/s.sock",
                "unix:s.sock")) {
            assertNull(StepSpec.checkTarget(t), t);
        }
        Object[][] cases = {{"shared", 16, 1}, {"per-worker", 16, 16}, {"per-worker", 1, 1}, {"pool:3", 16, 3}};
        for (Object[] c : cases) {
            StepSpec s = StepTest.step("h:1", "unary", (String) c[0], (int) c[1], 0, 1);
            assertEquals(c[2], s.layout().conns(s.inflight()), c[0] + " at in-flight " + c[1]);
        }
    }
}
