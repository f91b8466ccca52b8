// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseConnMode(t *testing.T) {
	tests := []struct {
		in      string
		want    ConnMode
		wantErr string
	}{
		{in: "shared", want: ConnMode{Kind: Shared}},
		{in: "per-worker", want: ConnMode{Kind: PerWorker}},
		{in: "pool:4", want: ConnMode{Kind: Pooled, N: 4, Pick: RoundRobin}},
		{in: "pool:2:least-loaded", want: ConnMode{Kind: Pooled, N: 2, Pick: LeastLoaded}},
		{in: "pool:0", wantErr: "at least 1"},
		{in: "pool:-3", wantErr: "at least 1"},
		{in: "pool:x", wantErr: "at least 1"},
		{in: "pool", wantErr: "want pool:N"},
		{in: "pool:2:random", wantErr: "unknown pick policy"},
		{in: "shared:2", wantErr: "takes no size"},
		{in: "carrier-pigeon", wantErr: "unknown connection mode"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseConnMode(tc.in)
			if tc.wantErr != "" {
				var ue *UsageError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &ue) || ue.Field != "--conn" {
					t.Fatalf("got %v, want a --conn usage error containing %q", err, tc.wantErr)
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
		wantField    string
	}{
		{lo: 1, hi: 4, step: 1, want: []int{1, 2, 3, 4}},
		{lo: 2, hi: 10, step: 4, want: []int{2, 6, 10}},
		{lo: 5, hi: 5, step: 1, want: []int{5}},
		{lo: 8, hi: 2, step: 1, wantField: "--max-inflight"},
		{lo: 0, hi: 2, step: 1, wantField: "--min-inflight"},
		{lo: 1, hi: 2, step: 0, wantField: "--step"},
		{lo: 1, hi: MaxInflight + 1, step: 1, wantField: "--max-inflight"},
	}
	for _, tc := range tests {
		got, err := InflightRange(tc.lo, tc.hi, tc.step)
		if tc.wantField != "" {
			var ue *UsageError
			if !errors.As(err, &ue) || ue.Field != tc.wantField {
				t.Errorf("InflightRange(%d,%d,%d) = %v, want a %s usage error", tc.lo, tc.hi, tc.step, err, tc.wantField)
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
		wantField string
	}{
		{"valid", func(*Spec) {}, ""},
		{"no target", func(s *Spec) { s.Target = "" }, "--target"},
		{"no conns", func(s *Spec) { s.Conns = nil }, "--conn"},
		{"bad rpc", func(s *Spec) { s.RPCs = []string{"bidi"} }, "--rpc"},
		{"no inflight", func(s *Spec) { s.Inflight = nil }, "--inflight"},
		{"zero inflight", func(s *Spec) { s.Inflight = []int{4, 0} }, "--inflight"},
		{"negative payload", func(s *Spec) { s.PayloadBytes = -1 }, "--payload"},
		{"huge payload", func(s *Spec) { s.PayloadBytes = 8 << 20 }, "--payload"},
		{"negative warmup", func(s *Spec) { s.Warmup = -time.Second }, "--warmup"},
		{"zero interval", func(s *Spec) { s.Interval = 0 }, "--interval"},
		{"zero dial timeout", func(s *Spec) { s.DialTimeout = 0 }, "--dial-timeout"},
		{"negative rpc timeout", func(s *Spec) { s.RPCTimeout = -1 }, "--rpc-timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			tc.mod(&s)
			err := s.Validate()
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			var ue *UsageError
			if !errors.As(err, &ue) || ue.Field != tc.wantField {
				t.Fatalf("got %v, want a %s usage error", err, tc.wantField)
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

func TestHasLayout(t *testing.T) {
	tests := []struct {
		lang, conn string
		want       bool
	}{
		{"go", "shared", true},
		{"java", "per-worker", true},
		{"rust", "pool:4", true},
		{"go", "pool:4:least-loaded", true},
		{"java", "pool:4:least-loaded", false},
		{"go", "channel-per-worker", false},
		{"java", "local-pool", false},
		{"rust", "distinct-args", false},
		{"cpp", "channel-per-worker", true},
		{"python", "local-pool", true},
		{"node", "distinct-args", true},
		{"cpp", "carrier-pigeon", false},
	}
	for _, tc := range tests {
		if got := HasLayout(tc.lang, tc.conn); got != tc.want {
			t.Errorf("HasLayout(%q, %q) = %v, want %v", tc.lang, tc.conn, got, tc.want)
		}
	}
}
