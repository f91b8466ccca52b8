// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
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
