// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.List;
import org.junit.jupiter.api.Test;

class EnvTest {
    @Test
    void cpuListExpandsKernelLists() {
        assertEquals(List.of(0, 1, 2, 5), Env.cpuList("0-2,5"));
        assertEquals(List.of(1), Env.cpuList("1"));
        assertEquals(List.of(3, 4, 8, 9, 10), Env.cpuList(" 3-4,8-10\n"));
        assertEquals(List.of(), Env.cpuList(""));
        assertEquals(List.of(), Env.cpuList("x"));
        assertEquals(List.of(), Env.cpuList("1-x"));
    }

    @Test
    void jsonNamesTheStackAndThePin() throws Exception {
        Env pinned = new Env("1.83.0", "java 17 (\"VM\")", 8, List.of(0, 3), "box", "linux");
        JsonObject j = JsonParser.parseString(new ObjectMapper().writeValueAsString(pinned))
                .getAsJsonObject();
        assertEquals("java", j.get("language").getAsString());
        assertEquals("grpc-java", j.get("grpc_impl").getAsString());
        assertEquals("1.83.0", j.get("grpc_version").getAsString());
        assertEquals("java 17 (\"VM\")", j.get("runtime_version").getAsString());
        assertEquals(8, j.get("host_cpus").getAsInt());
        assertEquals("[0,3]", j.get("client_cpus").toString());
        assertEquals("box", j.get("hostname").getAsString());
        assertEquals("linux", j.get("os").getAsString());

        Env free = new Env("1.83.0", "java", 8, List.of(), "box", "linux");
        assertFalse(
                JsonParser.parseString(new ObjectMapper().writeValueAsString(free))
                        .getAsJsonObject()
                        .has("client_cpus"),
                "an unpinned client writes no client_cpus");
    }

    @Test
    void detectReadsThisMachine() throws Exception {
        Flags f = new Flags();
        f.stub = Flags.Stub.async;
        Env e = Env.detect(f);
        assertEquals(io.grpc.internal.GrpcUtil.IMPLEMENTATION_VERSION, e.grpcVersion());
        assertTrue(e.hostCpus() >= Runtime.getRuntime().availableProcessors(), "host_cpus " + e.hostCpus());
        assertTrue(e.clientCpus().size() < e.hostCpus(), "client_cpus lists a pin, never every CPU: " + e.clientCpus());
        assertTrue(e.runtime().startsWith("java " + Runtime.version()), e.runtime());
        assertTrue(e.runtime().contains("async stub"), e.runtime());
        assertFalse(Env.detect(new Flags()).runtime().contains("async"));
    }
}
