// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package procstat reads what the operating system knows about a process:
// its CPU time and memory, the TCP connections it holds to a given address,
// and which CPUs it may run on. rpclab uses it to count the connections a
// client really opened (not the ones its code meant to open), to charge CPU
// to a client, and to pin client and server to their own CPUs. It is the one
// place rpclab reads process usage from.
//
// It reads Linux's /proc, and the kernel's sock_diag netlink interface for
// the peers of a process's sockets (as ss does). Linux only: on other
// systems every call about another process, and pinning, returns
// ErrUnsupported; this process's own CPU time and allocations (ReadUsage,
// CPUTime(0)) are read wherever getrusage exists.
package procstat

import (
	"errors"
	"runtime/metrics"
	"time"
)

// ErrUnsupported is returned where the call needs Linux (/proc,
// sched_setaffinity, sock_diag).
var ErrUnsupported = errors.New("procstat: Linux only: not supported on this system")

// Usage is what this process has used so far; two of them bracket a
// measured step.
type Usage struct {
	// CPU is user plus system CPU time (getrusage, as CPUTime(0)).
	CPU time.Duration
	// AllocBytes and Allocs are the cumulative heap allocations of the Go
	// runtime (runtime/metrics /gc/heap/allocs:bytes and :objects).
	AllocBytes, Allocs uint64
	// PeakRSS is VmHWM in bytes: the peak resident set since the process
	// started or since ResetPeakRSS (-1 when it cannot be read, as on
	// systems other than Linux).
	PeakRSS int64
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

var allocSamples = []string{"/gc/heap/allocs:bytes", "/gc/heap/allocs:objects"}

// ReadUsage samples this process.
func ReadUsage() (Usage, error) {
	var u Usage
	cpu, err := selfCPU()
	if err != nil {
		return u, err
	}
	u.CPU = cpu
	s := []metrics.Sample{{Name: allocSamples[0]}, {Name: allocSamples[1]}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		u.AllocBytes = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		u.Allocs = s[1].Value.Uint64()
	}
	u.PeakRSS = peakRSS()
	return u, nil
}
