// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"bytes"
	"strconv"
)

// MinStealJiffies is the least CPU time, in the kernel's clock ticks
// (USER_HZ, 100 a second on Linux), that the host's CPUs must have counted
// between two samples for a steal share to be read from them: below it
// one tick of steal would read as several percent (Signals.Steal is then
// unknown). A second on one CPU counts 100.
const MinStealJiffies = 50

// stealMeter measures the share of the host's CPU time the hypervisor
// took between samples (steal): time this machine's CPUs could not run at
// all. On the 2-core VMs rpclab is measured on, steal came in bursts of
// seconds that took 20-40% of each CPU and moved a paired trial's two
// sides apart (docs/measured/2026-11-29/adaptive-d).
type stealMeter struct {
	read       func() (steal, total uint64, ok bool) // so far
	lastSteal  uint64
	lastTotal  uint64
	lastSample bool
}

func newStealMeter(read func() (steal, total uint64, ok bool)) *stealMeter {
	m := &stealMeter{read: read}
	m.lastSteal, m.lastTotal, m.lastSample = read()
	return m
}

// sample returns the steal share since the previous sample, in [0, 1], or
// -1 when it cannot tell (no /proc/stat, a counter that went back, or
// fewer than MinStealJiffies between the samples).
func (m *stealMeter) sample() float64 {
	steal, total, ok := m.read()
	share := -1.0
	if ok && m.lastSample && total >= m.lastTotal+MinStealJiffies && steal >= m.lastSteal {
		share = min(float64(steal-m.lastSteal)/float64(total-m.lastTotal), 1)
	}
	m.lastSteal, m.lastTotal, m.lastSample = steal, total, ok
	return share
}

// parseStat reads the aggregate "cpu" line of /proc/stat (proc(5)): the
// steal field, and the sum of user, nice, system, idle, iowait, irq,
// softirq and steal (guest time is already counted in user and nice).
func parseStat(b []byte) (steal, total uint64, ok bool) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0, 0, false
	}
	for _, s := range f[1:9] {
		v, err := strconv.ParseUint(string(s), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += v
		steal = v // the last, the eighth, is steal
	}
	return steal, total, true
}
