// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package io.rpclab.pool;

import static io.grpc.ConnectivityState.CONNECTING;
import static io.grpc.ConnectivityState.IDLE;
import static io.grpc.ConnectivityState.READY;
import static io.grpc.ConnectivityState.SHUTDOWN;
import static io.grpc.ConnectivityState.TRANSIENT_FAILURE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ConnectivityState;
import io.rpclab.pool.ChannelPool.Policy;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The pick of docs/pool.md ("Picking a channel") over given states and loads, with a seeded Random:
 * least-loaded is power of two choices over the candidates, as in every other stack.
 */
class PickerTest {
    private static final int DRAWS = 12000;

    /** How often each channel is picked in DRAWS picks (start i for the i-th). */
    private static int[] counts(Policy policy, ConnectivityState[] states, int[] load, boolean fixedStart) {
        Random rng = new Random(1);
        int[] out = new int[states.length];
        for (int i = 0; i < DRAWS; i++) {
            out[Picker.pick(policy, states, load, fixedStart ? 0 : i, rng)]++;
        }
        return out;
    }

    /**
     * The lesser loaded of two different candidates drawn at random: the busiest candidate is never
     * taken, every other one is, the k-th least loaded of c with probability 2(c-1-k)/(c(c-1)), and the
     * failed channel never while others are READY.
     */
    @Test
    void leastLoadedIsTwoChoices() {
        ConnectivityState[] states = {READY, READY, READY, READY, TRANSIENT_FAILURE};
        int[] load = {4, 2, 1, 3, 0};
        int[] got = counts(Policy.LEAST_LOADED, states, load, false);
        assertEquals(0, got[0], "the busiest candidate (0)");
        assertEquals(0, got[4], "the failed channel (4)");
        // c = 4: the least loaded (2) 6/12, then 1: 4/12, then 3: 2/12.
        double[] want = {0, 4.0 / 12, 6.0 / 12, 2.0 / 12, 0};
        for (int i = 1; i < 4; i++) {
            double share = (double) got[i] / DRAWS;
            assertTrue(Math.abs(share - want[i]) < 0.02, "channel " + i + ": share " + share + ", want " + want[i]);
        }
    }

    /**
     * Both choices are drawn at random, neither is the pool's turn: with equal loads and the same
     * counter every time, picks still spread over every candidate.
     */
    @Test
    void leastLoadedDoesNotFollowTheTurn() {
        ConnectivityState[] states = {READY, IDLE, READY, READY};
        int[] got = counts(Policy.LEAST_LOADED, states, new int[4], true);
        for (int i = 0; i < 4; i++) {
            double share = (double) got[i] / DRAWS;
            assertTrue(Math.abs(share - 0.25) < 0.02, "channel " + i + ": share " + share + ", want 0.25");
        }
    }

    /** Two candidates are always both drawn: the lesser loaded always wins; one candidate is taken. */
    @Test
    void twoCandidatesAndOne() {
        int[] got = counts(
                Policy.LEAST_LOADED, new ConnectivityState[] {READY, CONNECTING, IDLE}, new int[] {1, 0, 0}, false);
        assertArrayEquals(new int[] {0, 0, DRAWS}, got, "READY with 1 in flight against IDLE with 0");
        got = counts(
                Policy.LEAST_LOADED, new ConnectivityState[] {SHUTDOWN, READY, CONNECTING}, new int[] {0, 9, 0}, false);
        assertArrayEquals(new int[] {0, DRAWS, 0}, got, "the one candidate, however loaded");
    }

    /** Round robin: the candidates in turn; the skipped states are skipped. */
    @Test
    void roundRobinTakesTheCandidatesInTurn() {
        ConnectivityState[] states = {READY, TRANSIENT_FAILURE, IDLE, CONNECTING, SHUTDOWN, READY};
        int[] got = new int[8];
        for (int i = 0; i < got.length; i++) {
            got[i] = Picker.pick(Policy.ROUND_ROBIN, states, new int[6], i, new Random(1));
        }
        assertArrayEquals(new int[] {0, 2, 5, 0, 2, 5, 0, 2}, got);
    }

    /** With no channel READY or IDLE every channel is a candidate, for both policies. */
    @Test
    void noneUsableMakesEveryChannelACandidate() {
        ConnectivityState[] states = {TRANSIENT_FAILURE, CONNECTING, TRANSIENT_FAILURE};
        int[] rr = new int[3];
        for (int i = 0; i < 3; i++) {
            rr[i] = Picker.pick(Policy.ROUND_ROBIN, states, new int[3], i, new Random(1));
        }
        assertArrayEquals(new int[] {0, 1, 2}, rr, "round robin");
        int[] got = counts(Policy.LEAST_LOADED, states, new int[] {2, 0, 1}, false);
        assertEquals(0, got[0], "least-loaded: the busiest");
        assertTrue(got[1] > got[2] && got[2] > 0, "least-loaded: the others, the idler more often");
    }
}
