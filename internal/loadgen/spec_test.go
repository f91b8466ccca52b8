// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/usage"
	"github.com/rpclab/rpclab/pool"
)

func TestParseConnMode(t *testing.T) {
	tests := []struct {
		in      string
		want    ConnMode
		wantErr string
	}{
		{in: "shared", want: ConnMode{Kind: Shared}},
		{in: "per-worker", want: ConnMode{Kind: PerWorker}},
		{in: "pool:4", want: ConnMode{Kind: Pooled, N: 4, Pick: pool.RoundRobin}},
		{in: "pool:2:least-loaded", want: ConnMode{Kind: Pooled, N: 2, Pick: pool.LeastLoaded}},
		{in: "pool:0", wantErr: "at least 1"},
		{in: "pool:-3", wantErr: "at least 1"},
		{in: "pool:x", wantErr: "at least 1"},
		{in: "pool", wantErr: "want pool:N"},
		{in: "pool:2:random", wantErr: "unknown pick policy"},
		{in: "shared:2", wantErr: "takes no size"},
		{in: "carrier-pigeon", wantErr: "unknown connection mode"},
		{in: "pool:auto", want: ConnMode{Kind: AutoPool, Min: DefaultAutoMin, N: DefaultAutoMax, Pick: pool.RoundRobin}},
		{in: "pool:auto:2:16", want: ConnMode{Kind: AutoPool, Min: 2, N: 16, Pick: pool.RoundRobin}},
		{in: "pool:auto:3:3", want: ConnMode{Kind: AutoPool, Min: 3, N: 3, Pick: pool.RoundRobin}},
		{in: "pool:auto:0:4", wantErr: "MIN must be at least 1"},
		{in: "pool:auto:4:2", wantErr: "MAX must be at least MIN"},
		{in: "pool:auto:x", wantErr: "want pool:auto or pool:auto:MIN:MAX"},
		{in: "pool:auto:1:x", wantErr: "must be integers"},
		{in: "pool:auto:1:1025", wantErr: "at most 1024"},
		{in: "pool:auto:1:4:7", wantErr: "want pool:auto or pool:auto:MIN:MAX"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseConnMode(tc.in)
			if tc.wantErr != "" {
				var ue *usage.Error
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &ue) || !errors.Is(err, ErrConn) {
					t.Fatalf("got %v, want a connection layout usage error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v, want %+v", got, err, tc.want)
			}
			if back, _ := ParseConnMode(got.String()); back != got {
				t.Errorf("String() = %q does not parse back to %+v", got.String(), got)
			}
		})
	}
}

func TestInflightRange(t *testing.T) {
	tests := []struct {
		lo, hi, step int
		want         []int
		wantField    error
	}{
		{lo: 1, hi: 4, step: 1, want: []int{1, 2, 3, 4}},
		{lo: 2, hi: 10, step: 4, want: []int{2, 6, 10}},
		{lo: 5, hi: 5, step: 1, want: []int{5}},
		{lo: 1, hi: 2, step: 5, want: []int{1}},
		// A step that overflows past hi ends the range (it once wrapped to
		// negative counts, refused as "--inflight -9223372036854775808").
		{lo: 1, hi: 2, step: math.MaxInt, want: []int{1}},
		{lo: 2, hi: MaxInflight, step: math.MaxInt - 1, want: []int{2}},
		{lo: 8, hi: 2, step: 1, wantField: ErrMaxInflight},
		{lo: 0, hi: 2, step: 1, wantField: ErrMinInflight},
		{lo: 1, hi: 2, step: 0, wantField: ErrInflightStep},
		{lo: 1, hi: MaxInflight + 1, step: 1, wantField: ErrMaxInflight},
	}
	for _, tc := range tests {
		got, err := InflightRange(tc.lo, tc.hi, tc.step)
		if tc.wantField != nil {
			var ue *usage.Error
			if !errors.As(err, &ue) || !errors.Is(err, tc.wantField) {
				t.Errorf("InflightRange(%d,%d,%d) = %v, want a %v usage error", tc.lo, tc.hi, tc.step, err, tc.wantField)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("InflightRange(%d,%d,%d) = %v, %v, want %v", tc.lo, tc.hi, tc.step, got, err, tc.want)
		}
	}
}

func validSpec() Spec {
	return Spec{
		Target: "127.0.0.1:1", Conns: []ConnMode{{Kind: Shared}}, RPCs: []string{Unary},
		Inflight: []int{1}, Warmup: time.Second, Interval: time.Second, DialTimeout: time.Second,
	}
}

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		name      string
		mod       func(*Spec)
		wantField error
	}{
		{"valid", func(*Spec) {}, nil},
		{"dns target", func(s *Spec) { s.Target = "dns:///localhost:50051" }, nil},
		{"unix target", func(s *Spec) { s.Target = "unix:///tmp/x.sock" }, nil},
		{"no port", func(s *Spec) { s.Target = "127.0.0.1" }, ErrTarget},
		{"port out of range", func(s *Spec) { s.Target = "127.0.0.1:99999" }, ErrTarget},
		{"port zero", func(s *Spec) { s.Target = "localhost:0" }, ErrTarget},
		{"no target", func(s *Spec) { s.Target = "" }, ErrTarget},
		{"no conns", func(s *Spec) { s.Conns = nil }, ErrConn},
		{"bad rpc", func(s *Spec) { s.RPCs = []string{"bidi"} }, ErrRPC},
		{"no inflight", func(s *Spec) { s.Inflight = nil }, ErrInflight},
		{"zero inflight", func(s *Spec) { s.Inflight = []int{4, 0} }, ErrInflight},
		{"negative payload", func(s *Spec) { s.PayloadBytes = -1 }, ErrPayload},
		{"huge payload", func(s *Spec) { s.PayloadBytes = 8 << 20 }, ErrPayload},
		{"negative warmup", func(s *Spec) { s.Warmup = -time.Second }, ErrWarmup},
		{"zero interval", func(s *Spec) { s.Interval = 0 }, ErrInterval},
		{"zero dial timeout", func(s *Spec) { s.DialTimeout = 0 }, ErrDialTimeout},
		{"negative rpc timeout", func(s *Spec) { s.RPCTimeout = -1 }, ErrRPCTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			tc.mod(&s)
			err := s.Validate()
			if tc.wantField == nil {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			var ue *usage.Error
			if !errors.As(err, &ue) || !errors.Is(err, tc.wantField) {
				t.Fatalf("got %v, want a %v usage error", err, tc.wantField)
			}
		})
	}
}

func TestStepsCrossProduct(t *testing.T) {
	s := validSpec()
	s.RPCs = []string{Unary, Streaming}
	s.Conns = []ConnMode{{Kind: Shared}, {Kind: Pooled, N: 2}}
	s.Inflight = []int{1, 8}
	steps := s.Steps()
	if got, want := len(steps), 8; got != want {
		t.Fatalf("got %d steps, want %d", got, want)
	}
	if got, want := steps[0], (Step{Conn: ConnMode{Kind: Shared}, RPC: Unary, Inflight: 1}); got != want {
		t.Errorf("first step %+v, want %+v", got, want)
	}
	if got, want := steps[7], (Step{Conn: ConnMode{Kind: Pooled, N: 2}, RPC: Streaming, Inflight: 8}); got != want {
		t.Errorf("last step %+v, want %+v", got, want)
	}
}

func TestConnsRequested(t *testing.T) {
	for _, tc := range []struct {
		m        ConnMode
		inflight int
		want     int
	}{
		{ConnMode{Kind: Shared}, 16, 1},
		{ConnMode{Kind: PerWorker}, 16, 16},
		{ConnMode{Kind: Pooled, N: 3}, 16, 3},
	} {
		if got := tc.m.Conns(tc.inflight); got != tc.want {
			t.Errorf("%v.Conns(%d) = %d, want %d", tc.m, tc.inflight, got, tc.want)
		}
	}
}

// FuzzParseConnMode: --conn never panics; what it accepts is a layout
// of at least one connection whose String parses back to it, and what it
// refuses is a usage error naming the layout setting.
func FuzzParseConnMode(f *testing.F) {
	for _, s := range []string{"shared", "per-worker", "pool:4", "pool:2:least-loaded", "pool:0", "pool", "pool:2:random", "shared:2", " pool:8 ", "pool:99999999999999999999", "pool:auto", "pool:auto:1:4", "pool:auto:0:4", "pool:auto:4:2", "pool:auto:x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseConnMode(s)
		if err != nil {
			if !errors.Is(err, ErrConn) {
				t.Fatalf("ParseConnMode(%q): got %v, want an error wrapping ErrConn", s, err)
			}
			return
		}
		if m.Conns(1) < 1 {
			t.Fatalf("ParseConnMode(%q) = %+v opens %d connections for one worker", s, m, m.Conns(1))
		}
		if m.Kind == AutoPool && (m.Min < 1 || m.N < m.Min || m.N > pool.MaxSize) {
			t.Fatalf("ParseConnMode(%q) = %+v: an adaptive pool outside 1 <= min <= max <= %d", s, m, pool.MaxSize)
		}
		if back, err := ParseConnMode(m.String()); err != nil || back != m {
			t.Fatalf("ParseConnMode(%q) = %+v; its String %q parses to %+v, %v", s, m, m.String(), back, err)
		}
	})
}

// TestConnModeStringIsTheRecordsLabel: a layout prints as --conn spells it,
// and the record of a step in that layout is labelled the same (one
// formatter, result.ConnLabel, for both).
func TestConnModeStringIsTheRecordsLabel(t *testing.T) {
	spec := &Spec{Target: "127.0.0.1:1", PayloadBytes: 1}
	for _, want := range []string{"shared", "per-worker", "pool:4", "pool:2:least-loaded", "pool:auto:1:8", "pool:auto:2:5"} {
		m, err := ParseConnMode(want)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.String(); got != want {
			t.Errorf("ParseConnMode(%q).String() = %q, want %q", want, got, want)
		}
		rec := NewRecord(spec, Step{Conn: m, RPC: Unary, Inflight: 8}, Options{})
		if got := rec.Spec.ConnLabel(); got != want {
			t.Errorf("the record of a %s step is labelled %q, want %q", want, got, want)
		}
	}
}
