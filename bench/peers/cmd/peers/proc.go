// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// outcome is one finished child process.
type outcome struct {
	stdout, stderr string
	// cpu is the child's user+sys CPU time, from wait4's rusage (the
	// child and every descendant it waited for), the same for every tool.
	cpu  time.Duration
	wall time.Duration
}

// runPinned runs argv pinned to cpus with taskset (exec'd in place, so the
// rusage is the tool's own) and returns its output and CPU time. A non-zero
// exit is an error that carries the tail of stderr.
func runPinned(ctx context.Context, cpus string, argv ...string) (outcome, error) {
	full := append([]string{"taskset", "-c", cpus}, argv...)
	cmd := exec.CommandContext(ctx, full[0], full[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	o := outcome{stdout: out.String(), stderr: errb.String(), wall: time.Since(start)}
	if cmd.ProcessState != nil {
		o.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return o, fmt.Errorf("%s: %w: %s", argv[0], err, tail(o.stderr+o.stdout, 300))
	}
	return o, nil
}

// tail returns the last n bytes of s on one line.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return strings.ReplaceAll(s, "\n", " | ")
}

// executable reports why path cannot be run ("" when it can).
func executable(path string) string {
	if path == "" {
		return "not installed (no path given)"
	}
	st, err := os.Stat(path)
	if err != nil {
		return "not installed: " + err.Error()
	}
	if st.Mode()&0o111 == 0 {
		return "not executable: " + path
	}
	return ""
}

// parseCPUList checks a taskset CPU list such as "0" or "0-2,5".
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%w: CPU list %q: bad CPU %q", errUsage, s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("%w: CPU list %q: bad range %q", errUsage, s, part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
