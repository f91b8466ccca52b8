// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rpclab/rpclab/internal/lab"
	"github.com/rpclab/rpclab/internal/usage"
)

// checkReportOutputs refuses, before any work, a report output that is one
// of the input files or the other output, that exists (unless force), that
// is a records file, or that cannot be written.
func checkReportOutputs(inputs []string, force bool, html, pngDir string) error {
	err := lab.CheckOutputs(inputs, force, lab.Output{Name: "-o", Path: html}, lab.Output{Name: "--png", Path: pngDir, Dir: true})
	return labError(err)
}

// maxConnBuffer bounds serve's --write-buffer and --read-buffer: each
// connection allocates its buffers, so a stranger's connections times a
// huge buffer is out of memory (99999999999 was, at the first one). 16 MiB
// is 512 times grpc-go's 32 KiB default, far past the 1 MiB that bulk's
// measurements found no faster (server/bulk.go).
const maxConnBuffer = 16 << 20

// checkConnBuffers refuses (exit 2) a connection buffer size out of
// 0..maxConnBuffer.
func checkConnBuffers(write, read int) error {
	for _, b := range []struct {
		flag string
		v    int
	}{{"--write-buffer", write}, {"--read-buffer", read}} {
		if b.v < 0 || b.v > maxConnBuffer {
			return usage.Wrap(fmt.Errorf("%s %d: want 0 (grpc-go's 32 KiB) to %d bytes (16 MiB)", b.flag, b.v, maxConnBuffer))
		}
	}
	return nil
}

// maxRate bounds --rps: ten million RPCs per second is past what any one
// client rpclab runs can send (the Go client's open loop tops out in the
// hundreds of thousands on a laptop), so a higher rate is a typo, and the
// schedule's arithmetic (sends per interval) stays far from overflow.
const maxRate = 1e7

// checkRates refuses (exit 2) an --rps rate out of (0, maxRate] or given
// twice.
func checkRates(rates []float64) error {
	for _, r := range rates {
		if !(r > 0 && r <= maxRate) {
			return usage.Wrap(fmt.Errorf("--rps %g: want a rate above 0 and at most %g RPCs per second", r, maxRate))
		}
	}
	return noDuplicates("--rps", rates, func(r float64) float64 { return r })
}

// noDuplicates refuses (exit 2) a list flag that names one value twice
// (by key: "pool:4" and "pool:4:round-robin" are one layout): each value
// is a step, and a step measured twice is a second row that the tables,
// the verdict and the charts read as another point.
func noDuplicates[T any, K comparable](flag string, vals []T, key func(T) K) error {
	seen := make(map[K]T, len(vals))
	for _, v := range vals {
		k := key(v)
		first, dup := seen[k]
		if !dup {
			seen[k] = v
			continue
		}
		a, b := fmt.Sprint(first), fmt.Sprint(v)
		if a == b {
			return usage.Wrap(fmt.Errorf("%s: %s is given twice: each value is one step, measured once", flag, b))
		}
		return usage.Wrap(fmt.Errorf("%s: %s is given twice (as %s and %s): each value is one step, measured once", flag, b, a, b))
	}
	return nil
}

// checkCPUs refuses (exit 2) a CPU list naming a CPU this machine does
// not have online, before anything is pinned. (Not the CPUs this process
// may use: a child started pinned may be given others.)
func checkCPUs(flag string, cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil // not Linux: pinning says why it fails
	}
	online, err := parseCPUList(strings.TrimSpace(string(b)))
	if err != nil {
		return nil
	}
	for _, c := range cpus {
		if !slices.Contains(online, c) {
			return usage.Wrap(fmt.Errorf("%s: CPU %d is not online here (online: %s)", flag, c, strings.TrimSpace(string(b))))
		}
	}
	return nil
}

// parseCPUList parses the kernel's CPU list format: "0-3,8,10-11".
func parseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, err
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}
