// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"errors"
	"testing"
	"time"

	"github.com/rpclab/rpclab/pool/internal/adapt"
	"github.com/rpclab/rpclab/pool/internal/pooltest"
)

// scripted is a Sizer that returns its decisions in order (Hold after
// them) and counts the grow failures it is told of.
type scripted struct {
	ds     []adapt.Decision
	failed int
}

func (s *scripted) Size(time.Time, adapt.Signals) adapt.Decision {
	if len(s.ds) == 0 {
		return adapt.Decision{Action: adapt.Hold, Reason: adapt.ReasonBalanced}
	}
	d := s.ds[0]
	s.ds = s.ds[1:]
	return d
}

func (s *scripted) GrowFailed(time.Time) { s.failed++ }

// TestWithSizer: a pool sized by a Sizer (pool/adaptive's WithSizer)
// applies its decisions on a real server, kept within min and max
// whatever the Sizer asks, each in the history with the Sizer's reason.
func TestWithSizer(t *testing.T) {
	ctx := pooltest.Context(t)
	srv := startServer(t)
	fc := newFakeClock()
	const above, below = "load above the grow watermark", "load below the shrink watermark"
	up, down := adapt.Decision{Action: adapt.Grow, Reason: above}, adapt.Decision{Action: adapt.Shrink, Reason: below}
	sz := &scripted{ds: []adapt.Decision{up, up, up, down, down, down}}
	p := newPool(t, srv.addr, withSizer(1, 3, time.Second, sz), fc.option())
	tests := []struct {
		wantSize int
		want     string
	}{
		{2, above}, {3, above}, {3, adapt.ReasonAtMax}, {2, below}, {1, below}, {1, below},
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

// TestWithSizerBadInput: a Sizer's bounds, interval and the Sizer itself
// are checked by New.
func TestWithSizerBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Option
	}{
		{"nil sizer", withSizer(1, 2, time.Second, nil)},
		{"min 0", withSizer(0, 2, time.Second, &scripted{})},
		{"max below min", withSizer(3, 2, time.Second, &scripted{})},
		{"max above MaxSize", withSizer(1, MaxSize+1, time.Second, &scripted{})},
		{"interval 0", withSizer(1, 2, 0, &scripted{})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New("127.0.0.1:1", plaintext, tc.opt); !errors.Is(err, ErrInvalidOption) {
				t.Errorf("got %v, want an error wrapping ErrInvalidOption", err)
			}
		})
	}
}
