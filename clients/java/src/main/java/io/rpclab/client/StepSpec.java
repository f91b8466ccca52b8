// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One step a driver hands the client (docs/clients.md, "The step spec"; schema/step.schema.json),
 * durations in nanoseconds.
 */
record StepSpec(
        String target,
        String service,
        String rpc,
        String conn,
        int inflight,
        @JsonProperty("payload_bytes") int payloadBytes,
        @JsonProperty("warmup_ns") long warmupNs,
        @JsonProperty("interval_ns") long intervalNs,
        @JsonProperty("client_cpus") @JsonInclude(JsonInclude.Include.NON_NULL) List<Integer> clientCpus,
        String out) {

    /** One connection layout: shared, per-worker or pool:N with its policy (round-robin or least-loaded). */
    record Conn(String kind, int n, String policy) {
        int conns(int inflight) {
            return switch (kind) {
                case "shared" -> 1;
                case "per-worker" -> inflight;
                default -> n;
            };
        }
    }

    /** A bad steps file: main prints it and exits with code 2. */
    static final class BadFile extends Exception {
        BadFile(String msg) {
            super(msg);
        }
    }

    /** Jackson, refusing a second value after the step on its line. */
    static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    /** schema/step.schema.json, which pom.xml embeds in the classes at build time. */
    private static final JsonSchema SCHEMA;

    static {
        try (InputStream in = StepSpec.class.getResourceAsStream("/step.schema.json")) {
            SCHEMA = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012)
                    .getSchema(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads and checks every step of a steps file before any runs. */
    static List<StepSpec> read(Path file) throws BadFile {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new BadFile("--steps " + file + ": cannot read it (" + e + ")");
        }
        List<StepSpec> steps = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).isBlank()) {
                continue;
            }
            String at = "--steps " + file + " line " + (i + 1) + ": ";
            try {
                JsonNode node = JSON.readTree(lines.get(i));
                String[] p = problem(node);
                if (p != null) {
                    throw new BadFile(
                            at + (p[0].isEmpty() ? "not a step object: " : "field \"" + p[0] + "\": ") + p[1]);
                }
                steps.add(JSON.treeToValue(node, StepSpec.class));
            } catch (JacksonException e) {
                throw new BadFile(at + e.getOriginalMessage().split("\n")[0]);
            }
        }
        if (steps.isEmpty()) {
            throw new BadFile("--steps " + file + ": no steps");
        }
        return steps;
    }

    /**
     * The first problem with a step as JSON, as {field, why} (field "" for the whole line), or null:
     * what schema/step.schema.json refuses, then what it cannot say: a HOST:PORT target grpc-java's
     * resolver would choke on, and a service or layout this client lacks.
     */
    static String[] problem(JsonNode step) {
        for (ValidationMessage m : SCHEMA.validate(step)) {
            var at = m.getInstanceLocation();
            String field = m.getProperty() != null ? m.getProperty() : at.getNameCount() > 0 ? at.getName(0) : "";
            return new String[] {field, m.getError()};
        }
        String why = checkTarget(step.get("target").asText());
        String service = step.get("service").asText();
        String conn = step.get("conn").asText();
        if (why != null) {
            return new String[] {"target", why};
        } else if (!service.equals("benchmark")) {
            return new String[] {"service", "\"" + service + "\" is not supported by the Java client (want benchmark)"};
        } else if (!conn.equals("shared") && !conn.equals("per-worker") && !conn.startsWith("pool:")) {
            return new String[] {
                "conn",
                "\"" + conn + "\" is a C-core layout; grpc-java opens a connection per channel,"
                        + " so use per-worker (want shared, per-worker or pool:N[:least-loaded])"
            };
        }
        return null;
    }

    /** This step at in-flight n with warmupNs of warm-up and 100 ms of interval, recorded nowhere. */
    StepSpec unrecorded(int n, long warmupNs) {
        return new StepSpec(target, service, rpc, conn, n, payloadBytes, warmupNs, 100_000_000L, null, "");
    }

    /** The step's layout, once the schema has checked it. */
    Conn layout() {
        String[] p = conn.split(":");
        return new Conn(p[0], p.length > 1 ? Integer.parseInt(p[1]) : 0, p.length > 2 ? p[2] : "round-robin");
    }

    /**
     * Checks a HOST:PORT target up front: grpc-java would otherwise log an exception from its
     * resolver thread and the step would wait out the dial timeout. A URI target (dns:///...,
     * unix:...) is left to grpc-java. Returns why it is bad, or null.
     */
    static String checkTarget(String t) {
        if (t.matches("^[a-z][a-z0-9+.-]*:.*") && (t.contains(":/") || t.startsWith("unix:"))) {
            return null;
        }
        int c = t.lastIndexOf(':');
        String host = c < 0 ? "" : t.substring(0, c);
        String port = c < 0 ? "" : t.substring(c + 1);
        if (c < 0) return "\"" + t + "\" has no port (want HOST:PORT)";
        if (host.isEmpty()) return "\"" + t + "\" has no host (want HOST:PORT)";
        if (host.contains(":") && !(host.startsWith("[") && host.endsWith("]"))) {
            return "\"" + t + "\": write an IPv6 address in brackets ([::1]:PORT)";
        }
        int p = port.matches("[0-9]{1,5}") ? Integer.parseInt(port) : -1;
        if (p < 1 || p > 65535) {
            return "\"" + t + "\": port \"" + port + "\" is not in 1..65535";
        }
        return null;
    }
}
