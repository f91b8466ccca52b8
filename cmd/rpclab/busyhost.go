// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/verdict"
)

// busySample is how long the host's CPUs are watched before a run, to
// warn that other work already keeps them busy.
const busySample = 300 * time.Millisecond

// warnBusyHost samples the CPUs left to the run (this process's affinity)
// for busySample before anything of the run starts, and returns a
// one-line warning when other processes kept more than
// verdict.OtherWorkShare of them busy; "" when they did not, or when the
// host's CPU cannot be read (not Linux).
func warnBusyHost(ctx context.Context) string {
	return warnBusyHostFor(ctx, false)
}

// warnBusyHostFor is warnBusyHost over every CPU of the host when hostWide:
// a target on this host runs on CPUs this process may not, and work that
// takes them slows the server as much as work on the client's would.
func warnBusyHostFor(ctx context.Context, hostWide bool) string {
	allowed, err := procstat.AllowedCPUs()
	if err != nil {
		return ""
	}
	d, err := procstat.SampleCPUStat(ctx, busySample)
	if err != nil {
		return ""
	}
	return busyLine(d, busyCPUs(d, allowed, hostWide), busySample)
}

// busyCPUs are the CPUs the busy-host check reads: every CPU of d when
// hostWide, else those this process may use.
func busyCPUs(d procstat.CPUStat, allowed []int, hostWide bool) []int {
	if hostWide {
		return d.CPUs()
	}
	return allowed
}

// busyLine words warnBusyHost's judgement of d, what cpus did over the
// sample.
func busyLine(d procstat.CPUStat, cpus []int, over time.Duration) string {
	t := d.Sum(cpus)
	if t.Total() <= 0 {
		return ""
	}
	share := float64(t.Busy+t.Steal) / float64(t.Total())
	if share <= verdict.OtherWorkShare {
		return ""
	}
	cpuWord := "CPU"
	if len(cpus) != 1 {
		cpuWord = "CPUs"
	}
	names := make([]string, len(cpus))
	for i, c := range cpus {
		names[i] = strconv.Itoa(c)
	}
	return fmt.Sprintf("rpclab: warning: the host is already busy: other processes kept %.0f%% of %s %s busy over %v before the run (more than the %.0f%% a step may lose to other work); figures measured now are not the client's or the server's alone, and the verdict will say so: measure on a quiet machine",
		100*share, cpuWord, strings.Join(names, ","), over, 100*verdict.OtherWorkShare)
}
