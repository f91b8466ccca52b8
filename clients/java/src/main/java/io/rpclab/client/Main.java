// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.client;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * rpclab's Java client (docs/clients.md): a closed-loop sweep on grpc-java against a
 * grpc.testing.BenchmarkService server, one JSON Lines record per step.
 *
 * <p>Exit codes: 0 every step ok, 1 a step failed, 2 bad flags. SIGINT/SIGTERM end the running step
 * within a second; its record ("interrupted") and every earlier one are kept.
 */
public final class Main {
  /** Set once a signal asks the client to stop; read by every step. */
  static final AtomicBoolean stopping = new AtomicBoolean();
  /** Counted down on a signal, so sleeps end at once. */
  private static volatile CountDownLatch stopLatch = new CountDownLatch(1);

  private Main() {}

  public static void main(String[] args) {
    Flags f;
    try {
      f = Flags.parse(args);
    } catch (Flags.UsageException e) {
      System.err.println("rpclab-client (java): " + e.getMessage());
      System.exit(2);
      return;
    }
    Thread main = Thread.currentThread();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      stop();
      try {
        main.join(2000); // let the running step write its record
      } catch (InterruptedException ignored) {
        Thread.currentThread().interrupt();
      }
    }, "rpclab-stop"));

    int code;
    try (OutputStream out = f.out.isEmpty() ? System.out : new FileOutputStream(f.out)) {
      code = run(f, out);
    } catch (IOException e) {
      System.err.println("rpclab-client (java): --out " + f.out + ": " + e.getMessage());
      code = 1;
    }
    if (stopping.get()) {
      return; // the shutdown hook is running: System.exit would block
    }
    System.exit(code);
  }

  /** Runs every step in the order rpc, conn, inflight and returns the exit code. */
  static int run(Flags f, OutputStream out) throws IOException {
    Env env = Env.detect(f);
    if (f.jitWarmupNs > 0) {
      Step.jitWarmup(f);
    }
    int steps = f.rpcs.size() * f.conns.size() * f.inflight.size();
    int failed = 0;
    int i = 0;
    String unreachable = null;
    for (String rpc : f.rpcs) {
      for (Flags.Conn conn : f.conns) {
        for (int n : f.inflight) {
          i++;
          if (stopping.get()) {
            return 1;
          }
          Record rec;
          if (unreachable != null) {
            rec = new Record(f, env, rpc, conn, n);
            rec.fail("target unreachable: not run: " + unreachable);
          } else {
            rec = new Step(f, env, rpc, conn, n).run();
            if (rec == null) {
              return 1; // stopped before this step measured anything
            }
            if (rec.unreachable) {
              unreachable = String.format("step %d (%s %s inflight=%d) could not connect", i,
                  conn.kind(), rpc, n);
            }
          }
          if (rec.status.equals("failed")) {
            failed++;
          }
          out.write((rec.toJson() + "\n").getBytes(StandardCharsets.UTF_8));
          out.flush();
          if (out instanceof FileOutputStream fo) {
            fo.getFD().sync();
          }
          System.err.printf("rpclab-client (java): step %d/%d %s %s inflight=%d: %s%n", i, steps, rpc,
              conn.kind(), n, rec.summary());
          if (rec.status.equals("interrupted")) {
            return 1;
          }
        }
      }
    }
    return failed > 0 ? 1 : 0;
  }

  /** What a signal does: every step stops, sleeps end, the running step's RPCs are cancelled. */
  static void stop() {
    stopping.set(true);
    stopLatch.countDown();
    Step.cancelCurrent();
  }

  /** Undoes stop() (for tests, which stop steps in one JVM). */
  static void resetStop() {
    stopLatch = new CountDownLatch(1);
    stopping.set(false);
  }

  /** Sleeps up to ns nanoseconds; returns false if a signal asked to stop. */
  static boolean sleep(long ns) {
    if (ns <= 0) {
      return !stopping.get();
    }
    try {
      return !stopLatch.await(ns, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
