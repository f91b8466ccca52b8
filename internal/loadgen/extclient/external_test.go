// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package extclient

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/procstat"
)

// writes records each Write call it gets.
type writes []string

func (w *writes) Write(p []byte) (int, error) {
	*w = append(*w, string(p))
	return len(p), nil
}

// A client's line printed in pieces reaches the driver's stream in one
// write, so the driver's own progress lines cannot land inside it.
func TestLineWriterPassesWholeLines(t *testing.T) {
	var got writes
	l := &lineWriter{w: &got}
	for _, p := range []string{"rpclab-client (java): step ", "5/12 unary", " pool\nnext", " line\n", "", "tail"} {
		if n, err := l.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	want := writes{"rpclab-client (java): step 5/12 unary pool\n", "next line\n"}
	if !slices.Equal(got, want) {
		t.Fatalf("before Flush got %q, want %q", got, want)
	}
	l.Flush()
	l.Flush()
	want = append(want, "tail\n")
	if !slices.Equal(got, want) {
		t.Fatalf("after Flush got %q, want %q", got, want)
	}
	// A line longer than maxPartialLine is passed on rather than held.
	got = nil
	long := strings.Repeat("x", maxPartialLine+1)
	if _, err := l.Write([]byte(long)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != long {
		t.Fatalf("a %d-byte partial line: got %d writes, want it passed on in one", len(long), len(got))
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
		{"java", "pool:4:least-loaded", true},
		{"rust", "pool:4:least-loaded", true},
		{"cpp", "pool:2:least-loaded", true},
		{"python", "pool:4:least-loaded", true},
		{"node", "pool:2:least-loaded", true},
		{"python", "pool:auto", false},
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

// TestSamplerHostAt: a record's host CPU comes from the reads nearest its
// interval's start and end, and none from a single read.
func TestSamplerHostAt(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	read := func(busy time.Duration) *procstat.CPUStat {
		return &procstat.CPUStat{PerCPU: map[int]procstat.CPUTimes{0: {Busy: busy, Idle: time.Second}}}
	}
	s := &sampler{}
	for i, busy := range []time.Duration{0, 10, 20, 30, 40} {
		s.samples = append(s.samples, sample{at: t0.Add(time.Duration(i) * 50 * time.Millisecond), n: 1, host: read(busy * time.Millisecond)})
	}
	s.samples = append(s.samples, sample{at: t0.Add(110 * time.Millisecond), n: 1}) // no host read
	for _, tc := range []struct {
		name         string
		start        time.Time
		d            time.Duration
		want0, want1 time.Duration
		none         bool
	}{
		{"edges on reads", t0.Add(50 * time.Millisecond), 100 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond, false},
		{"edges between reads", t0.Add(60 * time.Millisecond), 80 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond, false},
		{"one read inside", t0.Add(48 * time.Millisecond), 4 * time.Millisecond, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s0, s1 := s.hostAt(tc.start, tc.d)
			if tc.none {
				if s0 != nil || s1 != nil {
					t.Errorf("got reads %v, %v, want none", s0, s1)
				}
				return
			}
			if s0 == nil || s1 == nil {
				t.Fatalf("got no reads, want busy %v and %v", tc.want0, tc.want1)
			}
			if got0, got1 := s0.PerCPU[0].Busy, s1.PerCPU[0].Busy; got0 != tc.want0 || got1 != tc.want1 {
				t.Errorf("got busy %v and %v, want %v and %v", got0, got1, tc.want0, tc.want1)
			}
		})
	}
}
