// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// grpcClientTool is grpc-go's benchmark/client: -r RPCs in flight on each
// of -c connections. It profiles itself into /tmp/<test_name>.cpu and
// .mem, which cleanup removes.
type grpcClientTool struct{ bin, testName string }

func (t grpcClientTool) binary() string { return t.bin }

func (t grpcClientTool) command(run toolRun) []string {
	_, port, _ := strings.Cut(run.addr, ":")
	rpcs, cn := run.n, 1
	if run.layout == "per-worker" {
		rpcs, cn = 1, run.n
	}
	return []string{t.bin, "-test_name", t.testName, "-port", port, "-r", strconv.Itoa(rpcs), "-c", strconv.Itoa(cn),
		"-w", "0", "-d", run.secs(), "-req", "0", "-resp", "0"}
}

func (t grpcClientTool) parse(run toolRun, stdout string, r *lgRow) error {
	return parseGRPCClient(stdout, run.seconds, r)
}

func (t grpcClientTool) cleanup() {
	_ = os.Remove("/tmp/" + t.testName + ".cpu")
	_ = os.Remove("/tmp/" + t.testName + ".mem")
}

func (t grpcClientTool) valgrindHint() string {
	return "grpc-go's client profiles itself with SIGPROF all along"
}

// parseGRPCClient reads grpc-go's benchmark client: "qps: X" (calls over
// -d seconds) and "Latency: (50/90/99 %ile): a/b/c".
func parseGRPCClient(out string, seconds int, r *lgRow) error {
	sc := bufio.NewScanner(strings.NewReader(out))
	seen := false
	for sc.Scan() {
		l := sc.Text()
		if v, ok := strings.CutPrefix(l, "qps: "); ok {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return fmt.Errorf("grpc-client: qps %q: %w", v, err)
			}
			r.rps = q
			r.requests = int64(math.Round(q * float64(seconds)))
			seen = true
		}
		if v, ok := strings.CutPrefix(l, "Latency: (50/90/99 %ile): "); ok {
			p := strings.Split(strings.TrimSpace(v), "/")
			if len(p) != 3 {
				return fmt.Errorf("grpc-client: latency line %q", l)
			}
			var err error
			if r.p50, err = time.ParseDuration(p[0]); err != nil {
				return fmt.Errorf("grpc-client: p50 %q: %w", p[0], err)
			}
			if r.p99, err = time.ParseDuration(p[2]); err != nil {
				return fmt.Errorf("grpc-client: p99 %q: %w", p[2], err)
			}
		}
	}
	if !seen || r.requests == 0 {
		return fmt.Errorf("grpc-client: no qps in its output: %s", tail(out, 200))
	}
	return nil
}
