// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// minStealTime is the least CPU time the host's CPUs must have counted
// between two samples for a steal share to be read from them: below it
// one clock tick (10ms) of steal would read as several percent
// (Signals.Steal is then unknown). A second on one CPU counts a second.
const minStealTime = 500 * time.Millisecond

// stealMeter measures the share of the host's CPU time the hypervisor
// took between samples (steal): time this machine's CPUs could not run at
// all. Steal that comes in bursts of seconds, as on shared VMs, slows
// one side of a paired trial and not the other.
type stealMeter struct {
	read       func() (steal, total time.Duration, ok bool) // so far
	lastSteal  time.Duration
	lastTotal  time.Duration
	lastSample bool
}

func newStealMeter(read func() (steal, total time.Duration, ok bool)) *stealMeter {
	m := &stealMeter{read: read}
	m.lastSteal, m.lastTotal, m.lastSample = read()
	return m
}

// sample returns the steal share since the previous sample, in [0, 1], or
// -1 when it cannot tell (no /proc/stat, a counter that went back, or
// less than minStealTime between the samples).
func (m *stealMeter) sample() float64 {
	steal, total, ok := m.read()
	share := -1.0
	if ok && m.lastSample && total >= m.lastTotal+minStealTime && steal >= m.lastSteal {
		share = min(float64(steal-m.lastSteal)/float64(total-m.lastTotal), 1)
	}
	m.lastSteal, m.lastTotal, m.lastSample = steal, total, ok
	return share
}

// hostSteal is the host's steal and total CPU time so far, all its CPUs
// together: /proc/stat's first line (Linux; elsewhere, or unreadable, ok
// is false).
func hostSteal() (steal, total time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return parseCPULine(line)
}

// userHZ is the unit of /proc/stat's times: USER_HZ, 100 on every Linux
// architecture Go supports.
const userHZ = 100

// parseCPULine reads /proc/stat's "cpu" line: user nice system idle
// iowait irq softirq steal (guest time is inside user and nice already),
// in USER_HZ ticks. Its total is the eight summed.
func parseCPULine(line string) (steal, total time.Duration, ok bool) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, false
	}
	var ticks [8]uint64
	for i := range ticks {
		v, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil {
			return 0, 0, false
		}
		ticks[i] = v
	}
	var sum uint64
	for _, v := range ticks {
		sum += v
	}
	tick := time.Second / userHZ
	return time.Duration(ticks[7]) * tick, time.Duration(sum) * tick, true
}
