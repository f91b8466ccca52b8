// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package netem

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/result"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "1gbit", want: 1e9},
		{in: "1Gbit", want: 1e9},
		{in: "2.5gbit", want: 2.5e9},
		{in: "100mbit", want: 100e6},
		{in: "64kbit", want: 64e3},
		{in: "800bit", want: 800},
		{in: "125mbps", want: 1e9}, // bytes per second, as tc(8)
		{in: "1000000", want: 1e6},
		{in: "2000bit", want: 2000},
		{in: "1000", wantErr: true}, // bare and below 1 Mbit/s: a missing unit
		{in: "2000", wantErr: true},
		{in: "0", want: 0},
		{in: " 10mbit ", want: 10e6},
		{in: "1 gigabit", wantErr: true},
		{in: "gbit", wantErr: true},
		{in: "", wantErr: true},
		{in: "-1gbit", wantErr: true},
		{in: "4bit", wantErr: true}, // below a byte per second
		{in: "NaN", wantErr: true},
		{in: "1e300gbit", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRate(tc.in)
			if tc.wantErr {
				if !errors.Is(err, ErrBadRate) {
					t.Fatalf("ParseRate(%q) = %v, %v; want an ErrBadRate", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseRate(%q) = %v, %v; want %v, nil", tc.in, got, err, tc.want)
			}
		})
	}
}

// TestFormatRateParsesBack: what result.FormatRate writes of a link's rate
// (its own cases are in package result), ParseRate reads back exactly.
func TestFormatRateParsesBack(t *testing.T) {
	for _, bps := range []int64{1e9, 2.5e9, 100e6, 1500, 8, 0} {
		if back, err := ParseRate(result.FormatRate(bps)); err != nil || back != bps {
			t.Errorf("ParseRate(result.FormatRate(%d) = %q) = %v, %v; want %d", bps, result.FormatRate(bps), back, err, bps)
		}
	}
}

func TestLinkValidate(t *testing.T) {
	tests := []struct {
		name    string
		l       Link
		wantErr bool
	}{
		{"zero", Link{}, false},
		{"50us", Link{Delay: 50 * time.Microsecond}, false},
		{"all", Link{Delay: time.Millisecond, Jitter: 100 * time.Microsecond, RateBps: 1e9}, false},
		{"negative delay", Link{Delay: -time.Millisecond}, true},
		{"negative jitter", Link{Jitter: -1}, true},
		{"negative rate", Link{RateBps: -1}, true},
		{"rate below a byte", Link{RateBps: 7}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.l.Validate()
			if got := err != nil; got != tc.wantErr {
				t.Fatalf("Validate() = %v, want error: %v", err, tc.wantErr)
			}
			if err := Symmetric(tc.l).Validate(); (err != nil) != tc.wantErr {
				t.Fatalf("Network.Validate() = %v, want error: %v", err, tc.wantErr)
			}
		})
	}
}

func TestTransmitTime(t *testing.T) {
	tests := []struct {
		n    int
		bps  int64
		want time.Duration
	}{
		{1250, 1e9, 10 * time.Microsecond}, // 10 kbit at 1 Gbit/s
		{1, 8e6, time.Microsecond},
		{100 << 20, 1e9, 838860800 * time.Nanosecond}, // 100 MiB, no overflow
		{1 << 30, 8, (1 << 30) * time.Second},
		{100, 0, 0},
	}
	for _, tc := range tests {
		if got := TransmitTime(tc.n, tc.bps); got != tc.want {
			t.Errorf("TransmitTime(%d, %d) = %v, want %v", tc.n, tc.bps, got, tc.want)
		}
	}
}

var t0 = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

func us(n int) time.Time { return t0.Add(time.Duration(n) * time.Microsecond) }

func TestSchedule(t *testing.T) {
	type write struct {
		at, n int // µs after t0, bytes
	}
	tests := []struct {
		name   string
		link   Link
		writes []write
		want   []int // µs after t0 each chunk is due
	}{
		{
			name:   "50us delay, back to back",
			link:   Link{Delay: 50 * time.Microsecond},
			writes: []write{{0, 10}, {1, 10}, {1, 10}, {70, 10}},
			want:   []int{50, 51, 51, 120},
		},
		{
			// 8 Mbit/s is one byte per µs: 100 bytes take 100 µs and the
			// second chunk waits for the first to pass the line.
			name:   "rate then delay",
			link:   Link{Delay: 50 * time.Microsecond, RateBps: 8e6},
			writes: []write{{0, 100}, {10, 100}, {500, 1}},
			want:   []int{150, 250, 551},
		},
		{
			name:   "rate only, idle line",
			link:   Link{RateBps: 8e6},
			writes: []write{{0, 1000}, {5000, 1000}},
			want:   []int{1000, 6000},
		},
		{
			name:   "nothing",
			link:   Link{},
			writes: []write{{0, 1 << 20}, {3, 1}},
			want:   []int{0, 3},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			effects := tc.link.Effects(1)
			var last time.Time
			for i, w := range tc.writes {
				got := schedule(effects, us(w.at), last, w.n)
				last = got
				if want := us(tc.want[i]); !got.Equal(want) {
					t.Errorf("chunk %d: got due at %v, want %v", i, got.Sub(t0), want.Sub(t0))
				}
			}
		})
	}
}

func TestJitterKeepsOrderAndBounds(t *testing.T) {
	l := Link{Delay: 100 * time.Microsecond, Jitter: 80 * time.Microsecond}
	effects := l.Effects(7)
	var last time.Time
	sawLow, sawHigh := false, false
	for i := 0; i < 10000; i++ {
		// Pairs of chunks 10 µs apart (jitter alone would reorder them),
		// pairs 1 ms apart (so both ends of the jitter show).
		w := us(i / 2 * 1000)
		if i%2 == 1 {
			w = w.Add(10 * time.Microsecond)
		}
		got := schedule(effects, w, last, 100)
		if got.Before(last) {
			t.Fatalf("chunk %d due %v before chunk %d at %v", i, got.Sub(t0), i-1, last.Sub(t0))
		}
		d := got.Sub(w)
		if d < 20*time.Microsecond {
			t.Fatalf("chunk %d: delay %v, want at least delay-jitter = 20µs", i, d)
		}
		sawLow = sawLow || d < 40*time.Microsecond
		sawHigh = sawHigh || d > 170*time.Microsecond
		last = got
	}
	if !sawLow || !sawHigh {
		t.Errorf("jitter never reached its ends: low %v high %v", sawLow, sawHigh)
	}
	// A jitter larger than the delay never delivers before the write.
	j := NewJitter(time.Millisecond, rand.New(rand.NewPCG(1, 2)))
	for i := 0; i < 1000; i++ {
		if got := schedule([]Effect{Delay(10 * time.Microsecond), j}, us(0), time.Time{}, 1); got.Before(us(0)) {
			t.Fatalf("delivered at %v, before the write", got.Sub(t0))
		}
	}
}
