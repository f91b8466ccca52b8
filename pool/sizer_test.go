// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/testutil"
)

// scripted is a Sizer that returns its decisions in order (Hold after
// them) and counts the grow failures it is told of.
type scripted struct {
	ds     []Decision
	failed int
}

func (s *scripted) Size(time.Time, Signals) Decision {
	if len(s.ds) == 0 {
		return Decision{Hold, ReasonBalanced}
	}
	d := s.ds[0]
	s.ds = s.ds[1:]
	return d
}

func (s *scripted) GrowFailed(time.Time) { s.failed++ }

// TestWithSizer: a pool WithSizer applies its Sizer's decisions on a real
// server, kept within min and max whatever the Sizer asks, each in the
// history with the Sizer's reason.
func TestWithSizer(t *testing.T) {
	ctx := testutil.Context(t)
	srv := startServer(t)
	fc := newFakeClock()
	up, down := Decision{Grow, ReasonAboveWatermark}, Decision{Shrink, ReasonBelowWatermark}
	sz := &scripted{ds: []Decision{up, up, up, down, down, down}}
	p := newPool(t, srv.addr, WithSizer(1, 3, time.Second, sz), fc.option())
	tests := []struct {
		wantSize int
		want     Reason
	}{
		{2, ReasonAboveWatermark}, {3, ReasonAboveWatermark}, {3, ReasonAtMax},
		{2, ReasonBelowWatermark}, {1, ReasonBelowWatermark}, {1, ReasonBelowWatermark},
	}
	for i, tc := range tests {
		ev := fc.step(ctx, t, p)
		if got := p.Size(); got != tc.wantSize || ev.Reason != tc.want {
			t.Errorf("step %d: got size %d (%v), want %d (%v)", i, got, ev.Reason, tc.wantSize, tc.want)
		}
	}
	if sz.failed != 0 {
		t.Errorf("got %d grow failures, want none", sz.failed)
	}
}

// TestWithSizerBadInput: WithSizer's bounds, interval and Sizer are
// checked by New.
func TestWithSizerBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Option
	}{
		{"nil sizer", WithSizer(1, 2, time.Second, nil)},
		{"min 0", WithSizer(0, 2, time.Second, &scripted{})},
		{"max below min", WithSizer(3, 2, time.Second, &scripted{})},
		{"interval 0", WithSizer(1, 2, 0, &scripted{})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New("127.0.0.1:1", plaintext, tc.opt); !errors.Is(err, ErrInvalidOption) {
				t.Errorf("got %v, want an error wrapping ErrInvalidOption", err)
			}
		})
	}
}

// seen is a Sizer that keeps the signals of its last decision and holds.
type seen struct{ last Signals }

func (s *seen) Size(_ time.Time, sig Signals) Decision {
	s.last = sig
	return Decision{Hold, ReasonBalanced}
}

func (s *seen) GrowFailed(time.Time) {}

// TestSignalsProcs: the signals a real pool gives its Sizer carry
// GOMAXPROCS, against which Rule.CostlyCPU reads the CPU the process
// used.
func TestSignalsProcs(t *testing.T) {
	ctx := testutil.Context(t)
	srv := startServer(t)
	fc := newFakeClock()
	sz := &seen{}
	p := newPool(t, srv.addr, WithSizer(1, 2, time.Second, sz), fc.option())
	fc.step(ctx, t, p)
	if got, want := sz.last.Procs, runtime.GOMAXPROCS(0); got != want || want < 1 {
		t.Errorf("Signals.Procs: got %d, want GOMAXPROCS %d", got, want)
	}
}
