// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The pool's timer for redial and retire checks: one daemon thread ({@code rpclab-pool-timer}), made
 * at the first task, ended when nothing is pending for a second, and shut down at the pool's close.
 */
final class PoolTimer {
    static final String THREAD_NAME = "rpclab-pool-timer";

    private ScheduledThreadPoolExecutor executor;
    private boolean stopped;

    /** Runs task after delayNanos; false once stopped. A task that throws is dropped. */
    synchronized boolean schedule(Runnable task, long delayNanos) {
        if (stopped) {
            return false;
        }
        if (executor == null) {
            executor = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, THREAD_NAME);
                t.setDaemon(true);
                return t;
            });
            executor.setKeepAliveTime(1, TimeUnit.SECONDS);
            executor.allowCoreThreadTimeOut(true);
            executor.setRemoveOnCancelPolicy(true);
        }
        executor.schedule(
                () -> {
                    try {
                        task.run();
                    } catch (RuntimeException ex) {
                        // A supplier that throws leaves the channel as it was; the next failure retries.
                    }
                },
                delayNanos,
                TimeUnit.NANOSECONDS);
        return true;
    }

    /** Drops the pending tasks and ends the thread; later tasks are refused. */
    synchronized void stop() {
        stopped = true;
        if (executor != null) {
            executor.shutdownNow();
        }
    }

    synchronized boolean isTerminated() {
        return executor == null || executor.isTerminated();
    }

    /** Waits up to timeoutNanos for the thread to end (after stop). */
    boolean awaitTermination(long timeoutNanos) throws InterruptedException {
        ScheduledThreadPoolExecutor e;
        synchronized (this) {
            e = executor;
        }
        return e == null || e.awaitTermination(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS);
    }
}
