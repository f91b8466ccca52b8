// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// rpclabTool is rpclab's own load generator, "rpclab sweep", the base of
// every ratio; it writes its record to the run's out file.
type rpclabTool struct{ bin string }

func (t rpclabTool) binary() string { return t.bin }

func (t rpclabTool) command(run toolRun) []string {
	_ = os.Remove(run.out) // a stale record must not pass for this run's
	return []string{t.bin, "sweep", "--target", run.addr, "--conn", run.layout, "--inflight", strconv.Itoa(run.n),
		"--warmup", "0s", "--interval", run.secs() + "s", "-o", run.out, "--no-pin"}
}

func (t rpclabTool) parse(run toolRun, _ string, r *lgRow) error {
	return parseRPCLab(run.out, r)
}

// parseRPCLab reads the first record of an rpclab sweep's output file.
func parseRPCLab(path string, r *lgRow) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("rpclab: no record: %w", err)
	}
	var rec struct {
		Status        string  `json:"status"`
		Error         string  `json:"error"`
		Requests      int64   `json:"requests"`
		ThroughputRPS float64 `json:"throughput_rps"`
		Errors        map[string]int64
		Latency       struct {
			P50 int64 `json:"p50_ns"`
			P99 int64 `json:"p99_ns"`
		} `json:"latency"`
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		return fmt.Errorf("rpclab: record: %w", err)
	}
	if rec.Status != "ok" {
		return fmt.Errorf("rpclab: status %s: %s", rec.Status, rec.Error)
	}
	r.requests, r.rps = rec.Requests, rec.ThroughputRPS
	r.p50, r.p99 = time.Duration(rec.Latency.P50), time.Duration(rec.Latency.P99)
	return nil
}
