// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/verdict"
)

// TestBusyLine: the warning before a run comes when other work kept more
// than verdict.OtherWorkShare of the run's CPUs busy over the sample (CPU
// 2, not the run's, does not count), and not at that share.
func TestBusyLine(t *testing.T) {
	at := func(share float64) procstat.CPUStat {
		b := time.Duration(share * float64(time.Second))
		return procstat.CPUStat{PerCPU: map[int]procstat.CPUTimes{
			0: {Busy: b, Idle: time.Second - b}, 1: {Busy: b, Idle: time.Second - b}, 2: {Busy: time.Second},
		}}
	}
	for _, tc := range []struct {
		name  string
		share float64
		want  string
	}{
		{"at OtherWorkShare", verdict.OtherWorkShare, ""},
		{"just above OtherWorkShare", verdict.OtherWorkShare + 0.01, "rpclab: warning: the host is already busy: other processes kept 26% of CPUs 0,1 busy over 300ms before the run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := busyLine(at(tc.share), []int{0, 1}, busySample)
			if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) || strings.Contains(got, "\n") {
				t.Errorf("got %q, want one line starting %q", got, tc.want)
			}
		})
	}
}

// TestBusyCPUsHostWide: with the client allowed CPU 0 only and another
// process keeping CPU 1 (a local server's) busy, the check over the
// client's CPUs sees a quiet host, and the host-wide one, which doctor
// makes for a target on this host, warns.
func TestBusyCPUsHostWide(t *testing.T) {
	d := procstat.CPUStat{PerCPU: map[int]procstat.CPUTimes{
		0: {Busy: 0, Idle: 300 * time.Millisecond},
		1: {Busy: 300 * time.Millisecond, Idle: 0},
	}}
	if got := busyLine(d, busyCPUs(d, []int{0}, false), busySample); got != "" {
		t.Errorf("over the client's CPU 0: got %q, want no warning", got)
	}
	got := busyLine(d, busyCPUs(d, []int{0}, true), busySample)
	if !strings.Contains(got, "50% of CPUs 0,1") {
		t.Errorf("host-wide: got %q, want a warning naming 50%% of CPUs 0,1", got)
	}
}
