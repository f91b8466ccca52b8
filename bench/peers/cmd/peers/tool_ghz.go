// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ghzTool is ghz, calling UnaryCall from rpclab's proto files; it prints
// a JSON report.
type ghzTool struct{ bin, protoDir string }

func (t ghzTool) binary() string { return t.bin }

func (t ghzTool) command(run toolRun) []string {
	argv := []string{t.bin, "--insecure", "--proto", filepath.Join(t.protoDir, "grpc/testing/benchmark_service.proto"),
		"--import-paths", t.protoDir, "--call", "grpc.testing.BenchmarkService.UnaryCall", "-d", `{"payload":{}}`,
		"-c", strconv.Itoa(run.n), "--connections", strconv.Itoa(conns(run.layout, run.n)), "--format", "json"}
	if run.callgrind {
		argv = append(argv, "-n", strconv.Itoa(run.rpcs))
	} else {
		argv = append(argv, "-z", run.secs()+"s")
	}
	return append(argv, run.addr)
}

func (t ghzTool) parse(_ toolRun, stdout string, r *lgRow) error {
	return parseGHZ([]byte(stdout), r)
}

// parseGHZ reads ghz's JSON report: its count, rate, latency distribution
// and errors.
func parseGHZ(b []byte, r *lgRow) error {
	var rep struct {
		Count   int64   `json:"count"`
		RPS     float64 `json:"rps"`
		Latency []struct {
			Percentage int   `json:"percentage"`
			Latency    int64 `json:"latency"`
		} `json:"latencyDistribution"`
		Errors map[string]int64 `json:"errorDistribution"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("ghz: report: %w", err)
	}
	if rep.Count == 0 {
		return errors.New("ghz: no request counted")
	}
	// ghz stops a -z run by closing its connections under the calls in
	// flight, which then fail "transport is closing" or "canceled": those
	// are its way of stopping, noted, not failures of the run.
	var nerr, cut int64
	for msg, n := range rep.Errors {
		if strings.Contains(msg, "transport is closing") || strings.Contains(msg, "context canceled") || strings.Contains(msg, "code = Canceled") {
			cut += n
			continue
		}
		nerr += n
	}
	if nerr > 0 {
		return fmt.Errorf("ghz: %d of %d requests failed: %v", nerr, rep.Count, rep.Errors)
	}
	if cut > 0 {
		r.note = fmt.Sprintf("%d calls cut by ghz's stop", cut)
	}
	r.requests, r.rps = rep.Count, rep.RPS
	for _, l := range rep.Latency {
		switch l.Percentage {
		case 50:
			r.p50 = time.Duration(l.Latency)
		case 99:
			r.p99 = time.Duration(l.Latency)
		}
	}
	return nil
}
