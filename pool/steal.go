// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"time"

	"github.com/rpclab/rpclab/internal/procstat"
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
// together (procstat.ReadCPUStat: /proc/stat on Linux, unknown elsewhere).
func hostSteal() (steal, total time.Duration, ok bool) {
	s, err := procstat.ReadCPUStat()
	if err != nil {
		return 0, 0, false
	}
	t := s.Sum(nil)
	return t.Steal, t.Total(), true
}
