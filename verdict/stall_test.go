// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/result"
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
