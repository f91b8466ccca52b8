// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/testutil"
)

// TestCountsSayWhatWasKept: a sweep or bulk run whose records file
// refuses every write (/dev/full) does not say it wrote a record there;
// a sweep interrupted during its first warm-up does not say it measured a
// step, as its one record says the step was cut off before measuring.
func TestCountsSayWhatWasKept(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	ctx := testutil.Context(t)
	for _, args := range [][]string{
		{"sweep", "--inflight", "1", "--conn", "shared", "--warmup", "0s", "--interval", "100ms", "--dial-timeout", "30s", "-o", "/dev/full"},
		{"bulk", "--size", "64KiB", "--chunk", "64KiB", "--transport", "tcp", "--out", "/dev/full"},
	} {
		var stderr bytes.Buffer
		cmd := rpclabCmd(ctx, args...)
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitFailure || strings.Contains(stderr.String(), "written to /dev/full") ||
			!strings.Contains(stderr.String(), "after 0 records") {
			t.Errorf("%s -o /dev/full: %v, %q; want exit %d saying no record reached /dev/full", args[0], err, stderr.String(), exitFailure)
		}
	}

	out := filepath.Join(t.TempDir(), "r.jsonl")
	cmd := rpclabCmd(ctx, "sweep", "--inflight", "1", "--conn", "shared", "--warmup", "1h", "--interval", "1s", "--dial-timeout", "30s", "-o", out)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(pipe)
	for sc.Scan() && !strings.HasSuffix(sc.Text(), "started") {
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var rest strings.Builder
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("interrupted in warm-up: %v, want exit %d; stderr %q", err, exitInterrupted, rest.String())
	}
	recs, err := result.ReadFile(out)
	if err != nil || len(recs) != 1 || recs[0].Status != result.StatusInterrupted {
		t.Fatalf("interrupted in warm-up: %d records, %v; want one, interrupted", len(recs), err)
	}
	if s := rest.String(); !strings.Contains(s, "0 steps measured and kept, 1 cut off before measuring") || !strings.Contains(s, "1 records written to "+out) {
		t.Errorf("interrupted in warm-up: stderr %q; want 0 steps measured, 1 cut off, 1 record written", s)
	}
}
