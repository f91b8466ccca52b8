// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The record's env: which client measured, on what. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
record Env(
        @JsonProperty("grpc_version") String grpcVersion,
        @JsonProperty("runtime_version") String runtime,
        @JsonProperty("host_cpus") int hostCpus,
        @JsonProperty("client_cpus") List<Integer> clientCpus,
        @JsonProperty("hostname") String hostname,
        @JsonProperty("os") String os) {

    static Env detect(Flags f) {
        int host = cpuList(read("/sys/devices/system/cpu/online")).size();
        if (host <= 0) {
            host = Runtime.getRuntime().availableProcessors();
        }
        List<Integer> mine = cpuList(allowedCpus());
        if (mine.size() >= host) {
            mine = List.of(); // not pinned
        }
        String hostname = read("/proc/sys/kernel/hostname");
        return new Env(
                io.grpc.internal.GrpcUtil.IMPLEMENTATION_VERSION,
                "java "
                        + Runtime.version()
                        + " ("
                        + System.getProperty("java.vm.name")
                        + ")"
                        + (f.stub == Flags.Stub.async ? "; async stub, direct executor" : ""),
                host,
                mine,
                hostname,
                System.getProperty("os.name").toLowerCase(Locale.ROOT));
    }

    @JsonProperty("language")
    String language() {
        return "java";
    }

    @JsonProperty("grpc_impl")
    String grpcImpl() {
        return "grpc-java";
    }

    /** This env with the CPUs the driver pinned the client to (a step's client_cpus). */
    Env withClientCpus(List<Integer> cpus) {
        return new Env(grpcVersion, runtime, hostCpus, cpus, hostname, os);
    }

    private static String allowedCpus() {
        for (String line : read("/proc/self/status").split("\n")) {
            if (line.startsWith("Cpus_allowed_list:")) {
                return line.substring(line.indexOf(':') + 1).trim();
            }
        }
        return "";
    }

    /** Expands a kernel CPU list ("0-2,5"). */
    static List<Integer> cpuList(String s) {
        List<Integer> out = new ArrayList<>();
        if (s.isBlank()) {
            return out;
        }
        try {
            for (String part : s.trim().split(",")) {
                String[] r = part.split("-");
                int lo = Integer.parseInt(r[0].trim());
                int hi = r.length > 1 ? Integer.parseInt(r[1].trim()) : lo;
                for (int c = lo; c <= hi; c++) {
                    out.add(c);
                }
            }
        } catch (NumberFormatException e) {
            return new ArrayList<>();
        }
        return out;
    }

    private static String read(String p) {
        try {
            return Files.readString(Path.of(p)).trim();
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }
}
