// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import io.grpc.CallOptions;
import io.grpc.ConnectivityState;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A server killed and restarted under load: 4 threads of unary calls through a pool of 3
 * (least-loaded) to args[0]. Prints "running" after 200 calls, then waits for a line on stdin (the
 * server has been killed and started again on the same port), runs until 200 more calls succeed, and
 * prints one line of JSON: the calls that succeeded, the failures by code, and the connections to the
 * server as the kernel has them once the pool is connected again. As
 * clients/python/pool/tests/restart.py; clients/conformance drives it against {@code rpclab serve}.
 *
 * <pre>java -cp ... io.rpclab.pool.Restart 127.0.0.1:PORT</pre>
 */
public final class Restart {
    private Restart() {}

    private static final Object MU = new Object();
    private static long ok;
    private static final Map<String, Integer> FAILED = new TreeMap<>();
    /** The first status of each failure code (but UNAVAILABLE, the expected one), to name the cause. */
    private static final Map<String, String> SAMPLES = new TreeMap<>();

    private static boolean stop;

    /** Waits on MU (held) until ok reaches want or the bound passes; whether it did. */
    private static boolean awaitOk(long want, long boundSeconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(boundSeconds);
        long left;
        while (ok < want && (left = deadline - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.timedWait(MU, left);
        }
        return ok >= want;
    }

    /** s as the inside of a JSON string. */
    private static String json(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    public static void main(String[] args) throws Exception {
        String target = args[0];
        int port = Integer.parseInt(target.substring(target.lastIndexOf(':') + 1));
        ChannelPool pool = ChannelPool.forTarget(target, InsecureChannelCredentials.create())
                .size(3)
                .policy(ChannelPool.Policy.LEAST_LOADED)
                .build();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Thread t = new Thread(() -> {
                while (true) {
                    synchronized (MU) {
                        if (stop) {
                            return;
                        }
                    }
                    try {
                        ClientCalls.blockingUnaryCall(
                                pool,
                                Bytes.UNARY,
                                CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                                new byte[0]);
                        synchronized (MU) {
                            ok++;
                            MU.notifyAll();
                        }
                    } catch (StatusRuntimeException e) {
                        synchronized (MU) {
                            FAILED.merge(e.getStatus().getCode().name(), 1, Integer::sum);
                            if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) {
                                SAMPLES.putIfAbsent(e.getStatus().getCode().name(), String.valueOf(e.getStatus()));
                            }
                        }
                    }
                }
            });
            t.start();
            threads.add(t);
        }
        synchronized (MU) {
            awaitOk(200, 60);
        }
        System.out.println("running");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        boolean recovered;
        synchronized (MU) {
            recovered = awaitOk(ok + 200, 60);
            stop = true;
        }
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(30));
        }
        pool.resetConnectBackoff();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (int i = 0; i < pool.channels().size(); i++) {
            ManagedChannel ch;
            ConnectivityState s;
            // Read the channel again each time: a redial replaces it (and shuts the old one down).
            while ((s = (ch = pool.channels().get(i)).getState(true)) != ConnectivityState.READY
                    && System.nanoTime() < deadline) {
                CountDownLatch changed = new CountDownLatch(1);
                ch.notifyWhenStateChanged(s, changed::countDown);
                changed.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        }
        int conns = Kernel.connectionsTo(port);
        pool.close(Duration.ofSeconds(5));
        String failed;
        synchronized (MU) {
            failed = FAILED.entrySet().stream()
                    .map(e -> "\"" + e.getKey() + "\": " + e.getValue())
                    .collect(Collectors.joining(", ", "{", "}"));
            String samples = SAMPLES.entrySet().stream()
                    .map(e -> "\"" + e.getKey() + "\": \"" + json(e.getValue()) + "\"")
                    .collect(Collectors.joining(", ", "{", "}"));
            System.out.println(String.format(
                    "{\"ok\": %d, \"failed\": %s, \"recovered\": %b, \"conns\": %d, \"samples\": %s}",
                    ok, failed, recovered, conns, samples));
        }
        System.out.flush();
        System.exit(0);
    }
}
