// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//go:build linux

package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/testutil"
)

// TestFIFOsNeverHang: every command that reads or writes a path a user
// names ends when that path is a FIFO with no process at its other end: a
// reader (validate, report, import) stops waiting for a writer when its
// context ends, as at Ctrl-C, and a writer (sweep --out, import -o,
// report -o) is refused at once, naming the FIFO. Each runs under a
// context with a deadline, and must return well within the test's own.
func TestFIFOsNeverHang(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	records := "../../testdata/results/go-sweep.jsonl"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"validate a FIFO", []string{"validate", fifo}, "a FIFO that no process writes"},
		{"report a FIFO", []string{"report", fifo, "-o", filepath.Join(dir, "r.html")}, "a FIFO that no process writes"},
		{"import a FIFO", []string{"import", "--format", "ghz-json", fifo, "-o", filepath.Join(dir, "i.jsonl")}, "a FIFO that no process writes"},
		{"import -o a FIFO", []string{"import", "../../internal/foreign/testdata/ghz.json", "-o", fifo, "--force"}, "a FIFO that no process reads"},
		{"report -o a FIFO", []string{"report", records, "-o", fifo, "--force"}, "a FIFO that no process reads"},
		{"sweep --out a FIFO", []string{"sweep", "--inflight", "1", "--out", fifo, "--force"}, "a FIFO that no process reads"},
	}
	tctx := testutil.Context(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(tctx, 500*time.Millisecond)
			defer cancel()
			type ended struct {
				code   int
				stderr string
			}
			done := make(chan ended, 1)
			go func() {
				var o, e bytes.Buffer
				code := runContext(ctx, tc.args, &o, &e)
				done <- ended{code, e.String()}
			}()
			select {
			case <-tctx.Done():
				t.Fatalf("rpclab %s: still running at the test's deadline, long after its context ended", strings.Join(tc.args, " "))
			case e := <-done:
				if e.code == exitOK || !strings.Contains(e.stderr, tc.want) || !strings.Contains(e.stderr, fifo) {
					t.Errorf("rpclab %s: exit %d, %q; want a failure naming %s and %q", strings.Join(tc.args, " "), e.code, e.stderr, fifo, tc.want)
				}
			}
		})
	}
}
