// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package cli holds what the peers and policies commands share: their
// usage error, the checks of their flags, and the rpclab server they start.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/stats"
)

// ErrUsage marks a bad command line (exit 2).
var ErrUsage = errors.New("usage")

// Executable reports why path cannot be run ("" when it can).
func Executable(path string) string {
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

// ParseCPUList checks a taskset CPU list such as "0" or "0-2,5".
func ParseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%w: CPU list %q: bad CPU %q", ErrUsage, s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("%w: CPU list %q: bad range %q", ErrUsage, s, part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

func ParseInts(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%w: %s: %q is not a count of at least 1", ErrUsage, flagName, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// Rotated is the tools in the order repeat rep runs them: each repeat
// starts one tool later, so no tool always runs first (after the idle
// start) or right after the same neighbour.
func Rotated(tools []string, rep int) []string {
	out := make([]string, 0, len(tools))
	for i := range tools {
		out = append(out, tools[(i+rep)%len(tools)])
	}
	return out
}

// StartServe starts "rpclab serve" on a free loopback port, pinned to
// serverCPUs (checked by the flags' parser), for the runs that measure
// against rpclab's own server.
func StartServe(ctx context.Context, rpclab, serverCPUs string) (*server.Process, error) {
	cpus, _ := ParseCPUList(serverCPUs)
	srv, err := server.StartProcess(ctx, []string{rpclab, "serve", "--listen", "127.0.0.1:0"}, cpus, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("start the server: %w", err)
	}
	return srv, nil
}

// MedianOf is stats.Median of v, or NaN when v is empty (a figure no run
// gave, printed as NaN in the table).
func MedianOf(v []float64) float64 {
	if m, ok := stats.Median(v); ok {
		return m
	}
	return math.NaN()
}

// CheckServer checks the flags of the server a command starts with
// StartServe: --server-cpus a CPU list, --rpclab a binary that runs.
func CheckServer(rpclab, serverCPUs string) error {
	if _, err := ParseCPUList(serverCPUs); err != nil {
		return fmt.Errorf("%w: --server-cpus: %v", ErrUsage, err)
	}
	if why := Executable(rpclab); why != "" {
		return fmt.Errorf("%w: --rpclab: %s (the server)", ErrUsage, why)
	}
	return nil
}

// Exit prints err (if any) as prog's and gives the exit code: 0 for none,
// 2 for a usage error, 1 for any other.
func Exit(stderr io.Writer, prog string, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, prog+":", err)
	if errors.Is(err, ErrUsage) {
		return 2
	}
	return 1
}
