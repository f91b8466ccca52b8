// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * One step a driver hands the client (docs/clients.md, "The step spec"; docs/step.schema.json),
 * durations in nanoseconds. The human command line builds the same steps (Flags.steps).
 */
record StepSpec(
        @JsonProperty(value = "target", required = true) String target,
        @JsonProperty(value = "service", required = true) String service,
        @JsonProperty(value = "rpc", required = true) String rpc,
        @JsonProperty(value = "conn", required = true) String conn,
        @JsonProperty(value = "inflight", required = true) int inflight,
        @JsonProperty(value = "payload_bytes", required = true) int payloadBytes,
        @JsonProperty(value = "warmup_ns", required = true) long warmupNs,
        @JsonProperty(value = "interval_ns", required = true) long intervalNs,
        @JsonProperty("client_cpus") List<Integer> clientCpus,
        @JsonProperty(value = "out", required = true) String out) {

    /** A bad steps file: main prints it and exits with code 2. */
    static final class BadFile extends Exception {
        BadFile(String msg) {
            super(msg);
        }
    }

    /** Strict: no unknown field, no null, no coercion (a duration of "1s" or 1.5 is refused). */
    private static final ObjectReader READER;

    static {
        JsonMapper m = JsonMapper.builder()
                .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
                .build();
        m.coercionConfigFor(LogicalType.Textual)
                .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
        m.coercionConfigFor(LogicalType.Integer)
                .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
        READER = m.readerFor(StepSpec.class);
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
            StepSpec s;
            try {
                s = READER.readValue(lines.get(i));
            } catch (JacksonException e) {
                throw new BadFile(at + describe(e));
            }
            String[] p = "".equals(s.out()) ? new String[] {"out", "required"} : s.problem();
            if (p != null) {
                throw new BadFile(at + "field \"" + p[0] + "\": " + p[1]);
            }
            steps.add(s);
        }
        if (steps.isEmpty()) {
            throw new BadFile("--steps " + file + ": no steps");
        }
        return steps;
    }

    /** Jackson's complaint, naming the field (from the path) first. */
    private static String describe(JacksonException e) {
        String msg = e.getOriginalMessage().split("\n")[0];
        if (e instanceof JsonMappingException m && !m.getPath().isEmpty()) {
            String path = m.getPath().stream()
                    .map(r -> r.getFieldName() != null ? r.getFieldName() : "[" + r.getIndex() + "]")
                    .collect(Collectors.joining("."));
            return "field \"" + path + "\": " + msg;
        }
        return e instanceof JsonMappingException ? "not a step object: " + msg : msg;
    }

    /** The first field out of the schema's range or unsupported here, as {field, why}; or null. */
    String[] problem() {
        String[] names = {"target", "service", "rpc", "conn", "out"};
        String[] values = {target, service, rpc, conn, out};
        for (int i = 0; i < names.length; i++) {
            if (values[i] == null) {
                return new String[] {names[i], "null (want a string)"};
            }
        }
        String why;
        if (target.isBlank()) {
            return new String[] {"target", "required (HOST:PORT)"};
        } else if ((why = Flags.checkTarget(target)) != null) {
            return new String[] {"target", why};
        } else if (!service.equals("benchmark")) {
            return new String[] {"service", "\"" + service + "\" is not supported by the Java client (want benchmark)"};
        } else if (!rpc.equals("unary") && !rpc.equals("streaming")) {
            return new String[] {"rpc", "unknown RPC kind \"" + rpc + "\" (want unary or streaming)"};
        } else if (inflight < 1 || inflight > Flags.MAX_INFLIGHT) {
            return new String[] {"inflight", inflight + " is outside 1.." + Flags.MAX_INFLIGHT};
        } else if (payloadBytes < 0 || payloadBytes > Flags.MAX_PAYLOAD) {
            return new String[] {
                "payload_bytes",
                payloadBytes + " is outside 0.." + Flags.MAX_PAYLOAD + " bytes (gRPC's default 4 MiB message limit)"
            };
        } else if (warmupNs < 0) {
            return new String[] {"warmup_ns", "negative duration"};
        } else if (intervalNs <= 0) {
            return new String[] {"interval_ns", "must be positive"};
        } else if (clientCpus != null && clientCpus.stream().anyMatch(c -> c == null || c < 0)) {
            return new String[] {"client_cpus", "want CPU numbers of at least 0, got " + clientCpus};
        }
        try {
            Flags.conn(conn);
        } catch (IllegalArgumentException e) {
            return new String[] {"conn", e.getMessage()};
        }
        return null;
    }

    Flags.Conn layout() {
        return Flags.conn(conn);
    }
}
