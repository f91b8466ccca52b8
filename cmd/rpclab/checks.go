// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rpclab/rpclab/lab"
)

// checkReportOutputs refuses, before any work, a report output that is one
// of the input files or the other output, or that cannot be written.
func checkReportOutputs(inputs []string, html, pngDir string) error {
	err := lab.CheckOutputs(inputs, false, lab.Output{Name: "-o", Path: html}, lab.Output{Name: "--png", Path: pngDir, Dir: true})
	if err != nil {
		return usageError{err}
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
			return usageError{fmt.Errorf("%s: CPU %d is not online here (online: %s)", flag, c, strings.TrimSpace(string(b)))}
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
