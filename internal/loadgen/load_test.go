// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"errors"
	"math"
	"testing"

	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/internal/usage"
)

// TestLoadBadInput: both ways a Load runs, a step on one machine
// (RunLoad) and a worker's run (StartLive), refuse a bad load before any
// connection, with a *usage.Error naming the setting.
func TestLoadBadInput(t *testing.T) {
	spec := shortSpec("127.0.0.1:1")
	spec.Conns = []ConnMode{{Kind: Shared}}
	unary := Step{Conn: ConnMode{Kind: Shared}, RPC: Unary, Inflight: 1}
	streaming := Step{Conn: ConnMode{Kind: Shared}, RPC: Streaming, Inflight: 1}
	tests := []struct {
		name string
		load Load
		step Step
		want error
	}{
		{"negative rate", Load{Rate: -1, OpenLoop: OpenLoop{MaxOutstanding: 1}}, unary, ErrRate},
		{"infinite rate", Load{Rate: math.Inf(1), OpenLoop: OpenLoop{MaxOutstanding: 1}}, unary, ErrRate},
		{"open streaming", Load{Rate: 10, OpenLoop: OpenLoop{MaxOutstanding: 1}}, streaming, ErrRate},
		{"bad arrival", Load{Rate: 10, OpenLoop: OpenLoop{Arrival: "bursty", MaxOutstanding: 1}}, unary, ErrArrival},
		{"bad pacing", Load{Rate: 10, OpenLoop: OpenLoop{Pacing: "spin", MaxOutstanding: 1}}, unary, ErrPacing},
		{"no bound", Load{Rate: 10}, unary, ErrMaxOutstanding},
		{"negative drain", Load{Rate: 10, OpenLoop: OpenLoop{MaxOutstanding: 1, Drain: -1}}, unary, ErrDrain},
		{"negative cap", Load{MaxRPS: -1}, unary, ErrMaxRPS},
		{"NaN cap", Load{MaxRPS: math.NaN()}, unary, ErrMaxRPS},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, runErr := RunLoad(testutil.Context(t), spec, tc.step, nil, tc.load, Options{})
			_, liveErr := StartLive(testutil.Context(t), spec, tc.step, tc.load, Options{})
			for _, err := range []error{runErr, liveErr} {
				var ue *usage.Error
				if !errors.As(err, &ue) || !errors.Is(err, tc.want) {
					t.Errorf("got %v, want a *usage.Error for %v", err, tc.want)
				}
			}
		})
	}
}
