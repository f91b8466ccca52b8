// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// The machine's own /proc/stat: a steal count within its total, and a
// share read once the host's CPUs have counted minStealTime.
func TestHostSteal(t *testing.T) {
	if runtime.GOOS != "linux" {
		if _, _, ok := hostSteal(); ok {
			t.Fatal("hostSteal read a count outside Linux")
		}
		t.Skip("steal is read on Linux only")
	}
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc/stat:", err)
	}
	steal, total, ok := hostSteal()
	if !ok || steal > total {
		t.Fatalf("hostSteal: got steal %d of %d, ok %v", steal, total, ok)
	}
	m := newStealMeter(hostSteal)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		// The kernel's tick counts a CPU's time every 10ms: this waits
		// for the clock, not for another goroutine.
		time.Sleep(50 * time.Millisecond)
		_, now, _ := hostSteal()
		if now >= total+2*minStealTime {
			break
		}
	}
	if share := m.sample(); share < 0 || share > 1 {
		t.Errorf("steal share over at least %v of CPU time: got %v, want one in [0, 1]", minStealTime, share)
	}
}

func TestStealMeter(t *testing.T) {
	type read struct {
		steal, total uint64
		ok           bool
	}
	reads := []read{{100, 10000, true}}
	// The kernel's counts, in its clock ticks of 10ms.
	const tick = 10 * time.Millisecond
	minTicks := uint64(minStealTime / tick)
	m := newStealMeter(func() (time.Duration, time.Duration, bool) {
		r := reads[0]
		return time.Duration(r.steal) * tick, time.Duration(r.total) * tick, r.ok
	})
	for _, tc := range []struct {
		name string
		r    read
		want float64
	}{
		{"30 of 200 ticks", read{130, 10200, true}, 0.15},
		{"none of 200", read{130, 10400, true}, 0},
		{"all of 100", read{230, 10500, true}, 1},
		{"minStealTime: read", read{235, 10500 + minTicks, true}, 5.0 / float64(minTicks)},
		{"one tick less: unknown", read{236, 10500 + 2*minTicks - 1, true}, -1},
		{"the total went back: unknown", read{236, 5000, true}, -1},
		{"the steal went back: unknown", read{100, 6000, true}, -1},
		{"unreadable: unknown", read{0, 0, false}, -1},
		{"the first read after an unreadable one: unknown", read{200, 8000, true}, -1},
		{"then read again", read{210, 8100, true}, 0.1},
	} {
		reads[0] = tc.r
		if got := m.sample(); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The pool's control loop reads the host's steal into each interval's
// signals.
func TestSignalsSteal(t *testing.T) {
	var steal, total time.Duration
	reader := func(c *config) error {
		c.steal = func() (time.Duration, time.Duration, bool) {
			steal, total = steal+300*time.Millisecond, total+time.Second
			return steal, total, true
		}
		return nil
	}
	srv := startServer(t)
	fc := newFakeClock()
	p := newPool(t, srv.addr, withRule(testRule(1, 1)), fc.option(), reader)
	ctx := t.Context()
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if s := p.sample(fc.advance(time.Second)); s.Steal != 0.3 {
		t.Errorf("signals: got steal %v, want 0.3", s.Steal)
	}
}

func TestParseCPULine(t *testing.T) {
	const tick = 10 * time.Millisecond
	for _, tc := range []struct {
		line         string
		steal, total time.Duration
		ok           bool
	}{
		{"cpu  100 2 30 400 5 6 7 8 9 10", 8 * tick, 558 * tick, true},
		{"cpu  100 2 30 400 5 6 7 0", 0, 550 * tick, true},
		{"cpu  100 2 30 400 5 6 7", 0, 0, false},
		{"cpu0 100 2 30 400 5 6 7 8", 0, 0, false},
		{"cpu  100 2 x 400 5 6 7 8", 0, 0, false},
		{"", 0, 0, false},
	} {
		steal, total, ok := parseCPULine(tc.line)
		if steal != tc.steal || total != tc.total || ok != tc.ok {
			t.Errorf("%q: got %v of %v, %v; want %v of %v, %v", tc.line, steal, total, ok, tc.steal, tc.total, tc.ok)
		}
	}
}
