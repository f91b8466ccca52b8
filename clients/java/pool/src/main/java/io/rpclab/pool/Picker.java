// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import io.grpc.ConnectivityState;
import java.util.Random;

/**
 * The policy's choice of a channel for a call (docs/pool.md, "Picking a channel"), over the states
 * and loads of the channels a call may take, so that it can be checked with a seeded Random.
 */
final class Picker {
    private Picker() {}

    /** READY or IDLE: a channel a call may go to while one is (an IDLE channel connects for it). */
    static boolean usable(ConnectivityState s) {
        return s == ConnectivityState.READY || s == ConnectivityState.IDLE;
    }

    /**
     * The index of the channel for the next call. Candidates are the READY and IDLE channels, or every
     * channel when none is. ROUND_ROBIN takes the start-th candidate (start is the pool's counter);
     * LEAST_LOADED draws two different candidates at random and takes the one with fewer calls in
     * flight, the first drawn on a tie; with one candidate, it.
     *
     * @param states the channels' states, at least one
     * @param load the channels' calls in flight, as many as states
     */
    static int pick(ChannelPool.Policy policy, ConnectivityState[] states, int[] load, int start, Random rng) {
        int[] cands = new int[states.length];
        int c = 0;
        for (int i = 0; i < states.length; i++) {
            if (usable(states[i])) {
                cands[c++] = i;
            }
        }
        if (c == 0) {
            for (int i = 0; i < states.length; i++) {
                cands[i] = i;
            }
            c = states.length;
        }
        if (policy == ChannelPool.Policy.ROUND_ROBIN || c == 1) {
            return cands[Math.floorMod(start, c)];
        }
        int a = rng.nextInt(c);
        int b = rng.nextInt(c - 1);
        if (b >= a) {
            b++;
        }
        int first = cands[a];
        int second = cands[b];
        return load[second] < load[first] ? second : first;
    }
}
