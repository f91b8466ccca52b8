// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/flow"
	"github.com/rpclab/rpclab/internal/result"
)

func TestFlowBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"payload in words", []string{"flow", "--payload", "lots"}, "--payload"},
		{"negative payload", []string{"flow", "--payload", "-1KB"}, `--payload: result: not a byte count: "-1KB" is negative`},
		{"payload above the largest", []string{"flow", "--payload", "10GB"}, "--payload: 10GB (10000000000 bytes) is outside 0..1GiB, the largest payload"},
		{"unknown transport", []string{"flow", "--transport", "smtp"}, "--transport: unknown transport"},
		{"no transport", []string{"flow", "--transport", ""}, "--transport: none given"},
		{"negative rtt", []string{"flow", "--rtt=-1ms"}, "--rtt: negative RTT"},
		{"bad rate", []string{"flow", "--rate", "1 gigabit"}, "--rate"},
		{"small window", []string{"flow", "--window", "1024"}, "--window: fixed window 1024: grpc-go keeps BDP"},
		{"no rpcs", []string{"flow", "--rpcs", "0"}, "--rpcs: 0 RPCs per cell: want at least 1"},
		{"zero budget", []string{"flow", "--budget", "0s"}, "--budget: 0s: must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runInProcess(tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want exit %d and a message naming %s", code, stderr, exitUsage, tc.want)
			}
		})
	}
}

// TestFlowEndToEnd runs a small study and checks the table, the records
// and the chart.
func TestFlowEndToEnd(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "flow.jsonl")
	code, stdout, stderr := runInProcess("flow", "--payload", "100KB", "--rtt", "0,2ms", "--rpcs", "2",
		"-o", out, "--charts", filepath.Join(dir, "charts"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"grpc-dynamic", "grpc-fixed", "h2c", "http1", "steady", "grpc-dynamic/grpc-fixed"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	// A line as each cell starts, then one as its record comes.
	n := 2 * len(flow.Transports)
	starts := regexp.MustCompile(fmt.Sprintf(`(?m)^\[\d+/%d\] RTT (0s|2ms), 100KB, \S+$`, n)).FindAllString(stderr, -1)
	ends := regexp.MustCompile(`(?m)^  \S+ +first +[\d.]+ ms  steady +[\d.]+ ms  \(2 RPCs, ok\)$`).FindAllString(stderr, -1)
	if len(starts) != n || len(ends) != n || starts[0] != fmt.Sprintf("[1/%d] RTT 0s, 100KB, grpc-dynamic", n) {
		t.Errorf("got %d cell lines and %d record lines, want %d each, [1/%d] RTT 0s, 100KB, grpc-dynamic first:\n%s", len(starts), len(ends), n, n, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := result.ReadAll(t.Context(), f)
	recs := set.Flow
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(recs), 2*len(flow.Transports); got != want {
		t.Errorf("got %d records, want %d", got, want)
	}
	for _, name := range []string{"flow-rtt0s-100KB.png", "flow-rtt2ms-100KB.png"} {
		if st, err := os.Stat(filepath.Join(dir, "charts", name)); err != nil || st.Size() == 0 {
			t.Errorf("chart %s: %v", name, err)
		}
	}
}
