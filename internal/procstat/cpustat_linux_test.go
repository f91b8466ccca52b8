// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package procstat

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/testutil"
)

// statFixture is /proc/stat of a 2-CPU VM, shortened (the intr line).
const statFixture = `cpu  7925 6361 4367 33856 348 0 43 21 0 0
cpu0 3549 3183 1877 17828 33 0 6 5 0 0
cpu1 4375 3177 2490 16028 315 1 37 16 0 0
intr 643000 0 0 0 0 1
ctxt 1668850
btime 1764000000
processes 12000
procs_running 3
procs_blocked 0
softirq 100 0 1 2 3 4 5 6 7 8 9
`

func TestParseCPUStat(t *testing.T) {
	s, err := ParseCPUStat(statFixture)
	if err != nil {
		t.Fatal(err)
	}
	tick := 10 * time.Millisecond
	for _, tc := range []struct {
		cpu  int
		want CPUTimes
	}{
		// busy: user+nice+system+irq+softirq; idle: idle+iowait.
		{0, CPUTimes{Busy: (3549 + 3183 + 1877 + 0 + 6) * tick, Idle: (17828 + 33) * tick, Steal: 5 * tick}},
		{1, CPUTimes{Busy: (4375 + 3177 + 2490 + 1 + 37) * tick, Idle: (16028 + 315) * tick, Steal: 16 * tick}},
	} {
		if got := s.PerCPU[tc.cpu]; got != tc.want {
			t.Errorf("cpu%d: got %+v, want %+v", tc.cpu, got, tc.want)
		}
	}
	if got := s.CPUs(); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Errorf("got CPUs %v, want [0 1] (the all-CPUs line is not a CPU)", got)
	}
	if got, want := s.Sum(nil), s.PerCPU[0].add(s.PerCPU[1]); got != want {
		t.Errorf("Sum(nil): got %+v, want %+v", got, want)
	}
	if got, want := s.Sum([]int{1}), s.PerCPU[1]; got != want {
		t.Errorf("Sum([1]): got %+v, want %+v", got, want)
	}
}

func TestParseCPUStatBadInput(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", "no cpuN line"},
		{"only the total", "cpu 1 2 3 4 5 6 7 8 0 0\n", "no cpuN line"},
		{"too few fields", "cpu0 1 2 3 4 5\n", "cpu0 has 5 fields"},
		{"not a number", "cpu0 1 2 x 4 5 6 7 8 0 0\n", `field 3: bad count "x"`},
		{"bad CPU", "cpuX 1 2 3 4 5 6 7 8 0 0\n", `bad CPU "cpuX"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCPUStat(tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	// A kernel before steal was counted: seven fields, steal zero.
	s, err := ParseCPUStat("cpu0 1 0 0 2 0 0 0\n")
	if err != nil || s.PerCPU[0] != (CPUTimes{Busy: 10 * time.Millisecond, Idle: 20 * time.Millisecond}) {
		t.Errorf("got %+v, %v; want busy 10ms, idle 20ms, no steal", s.PerCPU[0], err)
	}
}

func TestCPUStatSub(t *testing.T) {
	ms := time.Millisecond
	prev := CPUStat{PerCPU: map[int]CPUTimes{0: {100 * ms, 200 * ms, 10 * ms}, 1: {50 * ms, 80 * ms, 0}, 2: {1, 1, 1}}}
	cur := CPUStat{PerCPU: map[int]CPUTimes{0: {150 * ms, 250 * ms, 20 * ms}, 1: {60 * ms, 70 * ms, 0}, 3: {1, 1, 1}}}
	d := cur.Sub(prev)
	for _, tc := range []struct {
		cpu  int
		want CPUTimes
		ok   bool
	}{
		{0, CPUTimes{50 * ms, 50 * ms, 10 * ms}, true},
		{1, CPUTimes{10 * ms, 0, 0}, true}, // idle went backwards: zero
		{2, CPUTimes{}, false},             // offline in the second read
		{3, CPUTimes{}, false},             // online only in the second
	} {
		got, ok := d.PerCPU[tc.cpu]
		if got != tc.want || ok != tc.ok {
			t.Errorf("cpu%d: got %+v (%v), want %+v (%v)", tc.cpu, got, ok, tc.want, tc.ok)
		}
	}
}

// TestReadCPUStat reads the real file: every CPU this process may run
// on is there, and a busy loop on this goroutine's thread shows as busy
// time between two samples.
func TestReadCPUStat(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	s, err := ReadCPUStat()
	if err != nil {
		t.Fatal(err)
	}
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cpus {
		if s.PerCPU[c].Total() <= 0 {
			t.Errorf("cpu%d: got %+v, want time since boot", c, s.PerCPU[c])
		}
	}
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	spin, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for spin.Err() == nil {
		}
	}()
	d, err := SampleCPUStat(ctx, 200*time.Millisecond)
	stop()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Sum(nil).Busy; got <= 0 {
		t.Errorf("got %v busy over the sample beside a busy loop, want more than 0", got)
	}
	ended, cancelEnded := context.WithCancel(ctx)
	cancelEnded()
	if _, err := SampleCPUStat(ended, time.Hour); err != context.Canceled {
		t.Errorf("got %v from an ended context, want context.Canceled", err)
	}
}
