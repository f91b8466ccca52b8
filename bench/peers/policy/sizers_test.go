// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package policy

import (
	"testing"
	"time"

	"github.com/rpclab/rpclab/pool/adaptive"
)

var t0 = time.Unix(1_000_000, 0)

// conns is the signals of connections with these RPCs in flight.
func conns(inflight ...int64) adaptive.Signals {
	s := adaptive.Signals{Interval: SizerInterval}
	for _, n := range inflight {
		s.Conns = append(s.Conns, adaptive.ConnSignals{Ready: true, InFlight: n})
	}
	return s
}

// TestSpannerGrow: Spanner grows only above 25 in flight on a channel or
// on average, by up to max(2, 30%) channels over consecutive ticks, then
// waits its cooldown.
func TestSpannerGrow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sig   adaptive.Signals
		grows int // Grow decisions in a row before a Hold
	}{
		{"25 per channel: at the watermark", conns(25, 25), 0},
		{"26 on the one channel: above it", conns(26), 1},             // target ceil(26/20) = 2: one more
		{"26 on one of two: at the target already", conns(26, 0), 0},  // ceil(26/20) = 2
		{"average 26 on 2: toward ceil(52/20) = 3", conns(26, 26), 1}, // 3 - 2
		{"average 100 on 2: capped at 2 per step", conns(100, 100), 2},
		{"average 100 on 10: capped at 30%", conns(100, 100, 100, 100, 100, 100, 100, 100, 100, 100), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewSpanner()
			first := t0.Add(SizerInterval) // the first tick, where a step starts
			now := t0
			got := 0
			for ; got < 20; got++ {
				now = now.Add(SizerInterval)
				if d := p.Size(now, tc.sig); d.Action != adaptive.Grow {
					break
				}
			}
			now = first
			if got != tc.grows {
				t.Errorf("got %d grows in a row, want %d", got, tc.grows)
			}
			if tc.grows == 0 {
				return
			}
			if d := p.Size(now.Add(p.ScaleUpCooldown-time.Nanosecond), tc.sig); d.Action == adaptive.Grow {
				t.Errorf("grew again within the cooldown")
			}
			if d := p.Size(now.Add(p.ScaleUpCooldown), tc.sig); d.Action != adaptive.Grow {
				t.Errorf("got %v after the cooldown, want grow", d)
			}
		})
	}
}

// TestSpannerShrink: Spanner shrinks only after 3 checks in a row at or
// below 15 in flight per channel, checks 3 minutes apart, toward the
// target, at most 2 channels per step.
func TestSpannerShrink(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sig     adaptive.Signals
		shrinks int
	}{
		{"16 per channel: above the low watermark", conns(16, 16, 16, 16), 0},
		{"15 per channel: at it, toward ceil(60/20) = 3", conns(15, 15, 15, 15), 1},
		{"idle: at most 2 per step", conns(0, 0, 0, 0, 0), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewSpanner()
			p.Size(t0, tc.sig) // starts the check clock
			now := t0
			for i := 1; i < p.LowChecks; i++ {
				now = now.Add(p.CheckEvery)
				if d := p.Size(now, tc.sig); d.Action != adaptive.Hold {
					t.Fatalf("check %d: got %v, want hold before %d low checks", i, d, p.LowChecks)
				}
			}
			if d := p.Size(now.Add(p.CheckEvery-time.Nanosecond), tc.sig); d.Action != adaptive.Hold {
				t.Fatalf("got %v before the check interval passed, want hold", d)
			}
			now = now.Add(p.CheckEvery)
			got := 0
			for d := p.Size(now, tc.sig); d.Action == adaptive.Shrink && got < 10; d = p.Size(now, tc.sig) {
				got++
				now = now.Add(SizerInterval)
			}
			if got != tc.shrinks {
				t.Errorf("got %d shrinks, want %d", got, tc.shrinks)
			}
		})
	}
}

// TestStreamSlots: A105 grows only when every connection has all its
// stream slots taken, and never shrinks.
func TestStreamSlots(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  adaptive.Signals
		want adaptive.Action
	}{
		{"one slot free", conns(100, 99), adaptive.Hold},
		{"every slot taken", conns(100, 100), adaptive.Grow},
		{"idle: never shrinks", conns(0, 0, 0), adaptive.Hold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewStreamSlots()
			for i := range 10 {
				if d := p.Size(t0.Add(time.Duration(i)*time.Hour), tc.sig); d.Action != tc.want {
					t.Fatalf("got %v, want %v", d.Action, tc.want)
				}
			}
		})
	}
}

// TestYarpc: yarpc grows when the least-loaded connection has at least
// 0.7 x 100 streams, and shrinks one every 30 s at most while the others
// would carry the load below that.
func TestYarpc(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  adaptive.Signals
		at   time.Duration // since the first call
		want adaptive.Action
	}{
		{"least loaded at 69", conns(69, 100), 0, adaptive.Hold},
		{"least loaded at 70", conns(70, 100), 0, adaptive.Grow},
		{"light load before 30 s", conns(10, 10), 30*time.Second - 1, adaptive.Hold},
		{"light load at 30 s", conns(10, 10), 30 * time.Second, adaptive.Shrink},
		{"the others would pass the watermark", conns(60, 60), 30 * time.Second, adaptive.Hold},
		{"one connection: never below it", conns(0), time.Hour, adaptive.Hold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewYarpc()
			if tc.at > 0 {
				p.Size(t0, conns(1, 1, 1)) // starts the shrink clock
			}
			if d := p.Size(t0.Add(tc.at), tc.sig); d.Action != tc.want {
				t.Errorf("got %v, want %v", d.Action, tc.want)
			}
		})
	}
}
