// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package bulk

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// ProcUsage is what this process has used so far; two of them bracket a
// measured step.
type ProcUsage struct {
	// CPU is user plus system CPU time (getrusage).
	CPU time.Duration
	// AllocBytes and Allocs are the cumulative heap allocations of the Go
	// runtime (runtime/metrics /gc/heap/allocs:bytes and :objects).
	AllocBytes, Allocs uint64
	// PeakRSS is VmHWM in bytes: the peak resident set since the process
	// started or since ResetPeakRSS (-1 when it cannot be read).
	PeakRSS int64
}

var allocSamples = []string{"/gc/heap/allocs:bytes", "/gc/heap/allocs:objects"}

// ReadUsage samples this process.
func ReadUsage() (ProcUsage, error) {
	var u ProcUsage
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return u, fmt.Errorf("bulk: getrusage: %w", err)
	}
	u.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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

// ResetPeakRSS sets this process's VmHWM to its current RSS (Linux 4.0+,
// /proc/self/clear_refs). It reports whether the reset worked.
func ResetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmHWM:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return -1
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return -1
		}
		return kb << 10
	}
	return -1
}
