// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/result"
)

// TestMarkStall: a step whose oldest RPC in flight at its end had waited
// StallAge is stalled, whatever its status said (ok, overloaded: the open
// loop's blame on the client is replaced, failed), and one that waited
// just less, an interrupted one, or a record that does not say, is not.
func TestMarkStall(t *testing.T) {
	four := int64(4)
	none := int64(0)
	for _, tc := range []struct {
		name     string
		status   string
		inFlight *int64
		oldest   time.Duration
		want     string // the status after
		says     string // what the error must say (when stalled)
	}{
		{"at the edge", result.StatusOK, &four, StallAge, result.StatusStalled, "4 RPCs were stuck in flight at the end of the step, the oldest for 1s"},
		{"below the edge", result.StatusOK, &four, StallAge - time.Nanosecond, result.StatusOK, ""},
		{"open loop overloaded", result.StatusOverloaded, &four, 4 * time.Second, result.StatusStalled, "not for the client"},
		{"failed by the drain", result.StatusFailed, &four, 4 * time.Second, result.StatusStalled, "besides: 7 of 9 RPCs failed"},
		{"interrupted", result.StatusInterrupted, &four, 4 * time.Second, result.StatusInterrupted, ""},
		{"none in flight", result.StatusOK, &none, 0, result.StatusOK, ""},
		{"not measured", result.StatusOK, nil, 0, result.StatusOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rec("shared", 4, 1000)
			r.Status, r.InFlightAtEnd, r.OldestInFlightNS = tc.status, tc.inFlight, int64(tc.oldest)
			if tc.status == result.StatusOverloaded {
				r.Error = "the client could not keep up"
			}
			if tc.status == result.StatusFailed {
				r.Error = "7 of 9 RPCs failed"
			}
			marked := MarkStall(&r)
			if r.Status != tc.want || marked != (tc.want == result.StatusStalled) {
				t.Fatalf("got status %q (marked %v), want %q", r.Status, marked, tc.want)
			}
			if tc.want != result.StatusStalled {
				return
			}
			for _, want := range []string{"the server stalled", tc.says} {
				if !strings.Contains(r.Error, want) {
					t.Errorf("got error %q, want it to say %q", r.Error, want)
				}
			}
			if strings.Contains(r.Error, "could not keep up") {
				t.Errorf("got error %q, want no blame on the client", r.Error)
			}
		})
	}
}

// TestStalledStepEntersNoVerdict: a stalled step is not a clean one; the
// bottleneck verdict judges the group without it, as it would without
// the step.
func TestStalledStepEntersNoVerdict(t *testing.T) {
	recs := sweep(1000, 1000, 0.3, 0.9)
	four := int64(4)
	for i := range recs {
		if recs[i].Spec.ConnMode == "shared" && recs[i].Spec.Inflight == 32 {
			recs[i].InFlightAtEnd, recs[i].OldestInFlightNS = &four, int64(4*time.Second)
			MarkStall(&recs[i])
		}
	}
	for _, v := range Verdicts(recs) {
		if v.Inflight == 32 {
			t.Errorf("got a verdict at in-flight %d, want the stalled step left out", v.Inflight)
		}
	}
}

// TestStallAgeFollowsNetemRTT: on an emulated path the stall age is
// StallAge plus StallRTTs round trips (delay and jitter each way), tested
// on both sides of the edge: an RPC about one 1 s round trip old is a slow
// path, not a stall, where StallAge alone would call it stalled.
func TestStallAgeFollowsNetemRTT(t *testing.T) {
	one := int64(1)
	link := func(delay, jitter time.Duration) result.NetemLink {
		return result.NetemLink{DelayNS: int64(delay), JitterNS: int64(jitter)}
	}
	rtt1s := &result.NetemSpec{Up: link(500*time.Millisecond, 0), Down: link(500*time.Millisecond, 0)}
	jittery := &result.NetemSpec{Up: link(100*time.Millisecond, 50*time.Millisecond), Down: link(100*time.Millisecond, 50*time.Millisecond)}
	for _, tc := range []struct {
		name    string
		netem   *result.NetemSpec
		oldest  time.Duration
		wantAge time.Duration
		want    bool
	}{
		{"no netem, at the edge", nil, StallAge, StallAge, true},
		{"rtt 1s, one round trip old", rtt1s, 1500 * time.Millisecond, StallAge + StallRTTs*time.Second, false},
		{"rtt 1s, below the edge", rtt1s, 5*time.Second - time.Nanosecond, 5 * time.Second, false},
		{"rtt 1s, at the edge", rtt1s, 5 * time.Second, 5 * time.Second, true},
		{"jitter counts, below the edge", jittery, 2200*time.Millisecond - time.Nanosecond, 2200 * time.Millisecond, false},
		{"jitter counts, at the edge", jittery, 2200 * time.Millisecond, 2200 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rec("shared", 1, 1000)
			r.Spec.Netem, r.InFlightAtEnd, r.OldestInFlightNS = tc.netem, &one, int64(tc.oldest)
			if got := StallAgeOf(&r); got != tc.wantAge {
				t.Errorf("StallAgeOf: got %v, want %v", got, tc.wantAge)
			}
			if got := MarkStall(&r); got != tc.want {
				t.Errorf("MarkStall with the oldest RPC %v old: got %v, want %v", tc.oldest, got, tc.want)
			}
			if tc.want && !strings.Contains(r.Error, "("+tc.wantAge.String()+" or more is a stall)") {
				t.Errorf("got error %q, want it to name the stall age %v", r.Error, tc.wantAge)
			}
		})
	}
}
