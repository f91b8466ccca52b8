// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package procstat

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CPUTimes is the time of a set of CPUs as the kernel counts it
// (/proc/stat): since boot in a CPUStat, over an interval in a CPUStat's
// delta.
type CPUTimes struct {
	// Busy is user+nice+system+irq+softirq: time something ran (guest
	// time is inside user and nice already).
	Busy time.Duration
	// Idle is idle+iowait: time nothing ran.
	Idle time.Duration
	// Steal is time the hypervisor gave the CPU to another guest (0
	// outside a VM).
	Steal time.Duration
}

// Total is Busy+Idle+Steal: the CPUs' wall time.
func (t CPUTimes) Total() time.Duration { return t.Busy + t.Idle + t.Steal }

func (t CPUTimes) add(u CPUTimes) CPUTimes {
	return CPUTimes{t.Busy + u.Busy, t.Idle + u.Idle, t.Steal + u.Steal}
}

// CPUStat is one read of every CPU's times (/proc/stat's cpuN lines).
// Two reads bracket an interval: later.Sub(earlier) is what each CPU did
// in between.
type CPUStat struct {
	// PerCPU maps each online CPU's number to its times.
	PerCPU map[int]CPUTimes
}

// Sub is s minus prev, CPU by CPU: each CPU's times over the interval
// between the two reads. A CPU missing from either read (taken offline)
// is left out; a counter that went backwards (iowait may, per CPU)
// counts as zero.
func (s CPUStat) Sub(prev CPUStat) CPUStat {
	d := CPUStat{PerCPU: make(map[int]CPUTimes, len(s.PerCPU))}
	for c, t := range s.PerCPU {
		p, ok := prev.PerCPU[c]
		if !ok {
			continue
		}
		d.PerCPU[c] = CPUTimes{max(t.Busy-p.Busy, 0), max(t.Idle-p.Idle, 0), max(t.Steal-p.Steal, 0)}
	}
	return d
}

// Sum adds the times of cpus (every CPU of s when cpus is empty); a CPU
// s does not have adds nothing.
func (s CPUStat) Sum(cpus []int) CPUTimes {
	var t CPUTimes
	if len(cpus) == 0 {
		for _, v := range s.PerCPU {
			t = t.add(v)
		}
		return t
	}
	for _, c := range cpus {
		t = t.add(s.PerCPU[c])
	}
	return t
}

// CPUs lists the CPUs of s in ascending order.
func (s CPUStat) CPUs() []int {
	cpus := make([]int, 0, len(s.PerCPU))
	for c := range s.PerCPU {
		cpus = append(cpus, c)
	}
	slices.Sort(cpus)
	return cpus
}

// ParseCPUStat reads the cpuN lines of /proc/stat's text (the "cpu" line
// of all CPUs together, and every other line, are skipped). Each line
// holds, in USER_HZ ticks: user nice system idle iowait irq softirq steal
// guest guest_nice; kernels before 2.6.11 stop before steal, which then
// counts as zero.
func ParseCPUStat(text string) (CPUStat, error) {
	s := CPUStat{PerCPU: map[int]CPUTimes{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20) // the intr line is long
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		cpu, err := strconv.Atoi(f[0][3:])
		if err != nil || cpu < 0 {
			return CPUStat{}, fmt.Errorf("procstat: /proc/stat: bad CPU %q", f[0])
		}
		if len(f) < 8 {
			return CPUStat{}, fmt.Errorf("procstat: /proc/stat: %s has %d fields, want 7 at least", f[0], len(f)-1)
		}
		var v [8]int64
		for i := range min(len(f)-1, len(v)) {
			n, err := strconv.ParseInt(f[i+1], 10, 64)
			if err != nil || n < 0 {
				return CPUStat{}, fmt.Errorf("procstat: /proc/stat: %s field %d: bad count %q", f[0], i+1, f[i+1])
			}
			v[i] = n
		}
		tick := func(n int64) time.Duration { return time.Duration(n * int64(time.Second) / clockTicks) }
		s.PerCPU[cpu] = CPUTimes{
			Busy:  tick(v[0] + v[1] + v[2] + v[5] + v[6]),
			Idle:  tick(v[3] + v[4]),
			Steal: tick(v[7]),
		}
	}
	if err := sc.Err(); err != nil {
		return CPUStat{}, fmt.Errorf("procstat: /proc/stat: %w", err)
	}
	if len(s.PerCPU) == 0 {
		return CPUStat{}, fmt.Errorf("procstat: /proc/stat: no cpuN line")
	}
	return s, nil
}

// SampleCPUStat reads /proc/stat twice, d apart, and returns what each
// CPU did in between (the wait ends early, with ctx's error, when ctx
// ends).
func SampleCPUStat(ctx context.Context, d time.Duration) (CPUStat, error) {
	s0, err := ReadCPUStat()
	if err != nil {
		return CPUStat{}, err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return CPUStat{}, ctx.Err()
	}
	s1, err := ReadCPUStat()
	if err != nil {
		return CPUStat{}, err
	}
	return s1.Sub(s0), nil
}
