// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/result"
)

// bulkRec is an ok step moving size bytes at mbps MB/s for cpu client and
// server CPU seconds per GiB each, allocating alloc server bytes per MiB.
func bulkRec(transport string, tls bool, size int64, mbps, cpu, alloc float64) result.BulkRecord {
	d := time.Duration(float64(size) / (mbps * 1e6) * 1e9)
	gib := float64(size) / (1 << 30)
	return result.BulkRecord{
		SchemaVersion: result.SchemaVersion, Kind: result.KindBulk, Status: result.StatusOK,
		StartedAt: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC),
		Spec: result.BulkSpec{Target: "127.0.0.1:1", Transport: transport, SizeBytes: size, ChunkBytes: 64 << 10, Streams: 1,
			RequestsPerStream: 1, MaxMessageBytes: 4 << 20, TLS: tls},
		Env:      result.GoEnv("1.85.0", []int{0}),
		Requests: 1, Bytes: size, Checksum: "crc32c", DurationNS: int64(d), ThroughputBytesPerS: float64(size) / d.Seconds(),
		ClientCPUNS: int64(cpu * gib * 1e9), ServerCPUNS: int64(cpu * gib * 1e9), ClientCPUSPerGiB: cpu, ServerCPUSPerGiB: cpu,
		ServerAllocBytes: int64(alloc * float64(size>>20)), ServerAllocs: 10, ServerAllocBytesPerMiB: alloc, ServerAllocsPerRequest: 10,
		ClientAllocBytesPerMiB: 2 * alloc, ClientAllocsPerRequest: 20, ClientPeakRSSBytes: -1, ServerPeakRSSBytes: -1,
	}
}

func writeRecs(t *testing.T, path string, recs ...result.BulkRecord) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := result.NewWriter(&b)
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRoundsRatiosPerRoundMedianAndRange: each round divides by its own
// tcp step of the same TLS; the median of three rounds is the middle one
// and of two the mean; a failed step and a round without tcp give no ratio.
func TestRoundsRatiosPerRoundMedianAndRange(t *testing.T) {
	const g = 1 << 30
	failed := bulkRec("grpc", false, g, 100, 1, 0)
	failed.Status = result.StatusFailed
	rs := [][]result.BulkRecord{
		{bulkRec("tcp", false, g, 1000, 0.25, 0), bulkRec("grpc", false, g, 500, 0.5, 0), bulkRec("tcp", true, g, 500, 0.5, 0), bulkRec("grpc", true, g, 400, 1, 0)},
		{bulkRec("tcp", false, g, 2000, 0.25, 0), bulkRec("grpc", false, g, 400, 1, 0), bulkRec("tcp", true, g, 500, 0.5, 0), bulkRec("grpc", true, g, 200, 1.5, 0)},
		{bulkRec("tcp", false, g, 1000, 0.5, 0), bulkRec("grpc", false, g, 900, 0.5, 0), failed},
		{bulkRec("grpc", false, g, 300, 0.5, 0)}, // no tcp: no ratio
	}
	groups, rows := rounds(rs)
	if len(groups) != 2 || groups[0].tls || !groups[1].tls {
		t.Fatalf("got groups %v, want plaintext then TLS", groups)
	}
	tests := []struct {
		tls        bool
		label      string
		tput, cpu  string
		cpuRel     string
		rounds, nt int
	}{
		{false, "tcp", "1.00 (1.00-1.00)", "0.500 (0.500-1.000)", "1.00 (1.00-1.00)", 3, 0},
		{false, "grpc", "0.50 (0.20-0.90)", "1.000 (1.000-2.000)", "2.00 (1.00-4.00)", 4, 1},
		{true, "tcp+tls", "1.00 (1.00-1.00)", "1.000 (1.000-1.000)", "1.00 (1.00-1.00)", 2, 0},
		{true, "grpc+tls", "0.60 (0.40-0.80)", "2.500 (2.000-3.000)", "2.50 (2.00-3.00)", 2, 0},
	}
	for _, tc := range tests {
		t.Run(tc.label, func(t *testing.T) {
			var got *row
			for _, g := range groups {
				for _, r := range rows[g] {
					if g.tls == tc.tls && r.label == tc.label {
						got = r
					}
				}
			}
			if got == nil {
				t.Fatalf("no row %s", tc.label)
			}
			if s := spread(got.tput, 2); s != tc.tput {
				t.Errorf("MB/s x tcp: got %s, want %s", s, tc.tput)
			}
			if s := spread(got.cpu, 3); s != tc.cpu {
				t.Errorf("CPU s/GiB: got %s, want %s", s, tc.cpu)
			}
			if s := spread(got.cpuRel, 2); s != tc.cpuRel {
				t.Errorf("CPU x tcp: got %s, want %s", s, tc.cpuRel)
			}
			if got.rounds != tc.rounds || got.tcpMissing != tc.nt {
				t.Errorf("got %d rounds, %d without tcp; want %d, %d", got.rounds, got.tcpMissing, tc.rounds, tc.nt)
			}
		})
	}
}

// TestRunPrintsEachRunAndAllocationBySize reads a folder as
// experiments/bulk/run.sh writes it: two runs, plaintext and TLS rounds, and
// allocation steps at two sizes.
func TestRunPrintsEachRunAndAllocationBySize(t *testing.T) {
	dir := t.TempDir()
	const m64, m256 = 64 << 20, 256 << 20
	for _, run := range []string{"run1", "run2"} {
		for _, mode := range []struct {
			dir string
			tls bool
		}{{"plain", false}, {"tls", true}} {
			for i, f := range []float64{1, 2} {
				writeRecs(t, filepath.Join(dir, run, mode.dir, "round"+string(rune('1'+i))+".jsonl"),
					bulkRec("tcp", mode.tls, m256, 1000*f, 0.5, 10), bulkRec("sidechannel", mode.tls, m256, 1000*f, 0.5, 10))
			}
			writeRecs(t, filepath.Join(dir, run, mode.dir, "alloc.jsonl"),
				bulkRec("grpc-tuned", mode.tls, m64, 900, 0.5, 2400), bulkRec("grpc-tuned", mode.tls, m256, 900, 0.5, 600))
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{dir}, &out, &errb); code != 0 {
		t.Fatalf("got exit %d (%s), want 0", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{
		"== run1 (4 round files", "== run2 (4 round files",
		"plaintext, 256MiB per download, 64KiB chunks", "TLS on every transport, tcp+tls the reference, 256MiB per download",
		"sidechannel+tls", "allocation by download size: server heap bytes allocated per MiB",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the output lacks %q:\n%s", want, s)
		}
	}
	// The server's bytes per MiB by size, 64MiB then 256MiB, on one line.
	if !strings.Contains(s, "grpc-tuned+tls  64KiB        1   2400     600") {
		t.Errorf("the allocation table lacks grpc-tuned+tls's 2400 and 600 B/MiB by size:\n%s", s)
	}
}

func TestRunBadInput(t *testing.T) {
	empty := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no argument", nil, 2, "usage"},
		{"a flag", []string{"-h"}, 2, "usage"},
		{"missing folder", []string{filepath.Join(empty, "nope")}, 1, "no such file"},
		{"no run folder", []string{empty}, 1, errNoRuns.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tc.args, &out, &errb)
			if code != tc.code || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("got exit %d (%q), want %d naming %q", code, errb.String(), tc.code, tc.want)
			}
		})
	}
	if _, err := load(t.Context(), empty); !errors.Is(err, errNoRuns) {
		t.Errorf("got %v, want errNoRuns", err)
	}
}
