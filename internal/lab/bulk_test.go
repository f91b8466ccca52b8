// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/bulk"
	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/testutil"
)

// bulkSession starts a session with the test server and a records file.
func bulkSession(t *testing.T, ctx context.Context) (s *Session, out string) {
	out = filepath.Join(t.TempDir(), "bulk.jsonl")
	s, err := New(WithServer(testServer(t)), WithPin(false), WithOutputs(Output{Name: "--out", Path: out, Keep: true, Open: true}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return s, out
}

// TestRunBulkKeepsEveryRecord: every step's record names the session's
// target and server, and goes to the records file as well as to the caller.
func TestRunBulkKeepsEveryRecord(t *testing.T) {
	ctx, cancel := context.WithCancel(testutil.LongContext(t))
	defer cancel()
	s, out := bulkSession(t, ctx)
	spec := &bulk.Spec{Transports: []string{bulk.GRPC, bulk.TCP}, Sizes: []int64{1 << 20}, Chunks: []int{64 << 10}}
	recs, err := s.RunBulk(ctx, spec, bulk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	for _, r := range recs {
		if r.Status != result.StatusOK || r.Spec.Target != s.Target || r.Spec.Server != "go" || r.Bytes != 1<<20 {
			t.Errorf("got %s: %s (%s), target %s, server %q, %d bytes; want ok against %s, server go, %d bytes",
				r.Spec.Transport, r.Status, r.Error, r.Spec.Target, r.Spec.Server, r.Bytes, s.Target, 1<<20)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	written, err := result.ReadAllFile(ctx, out)
	if err != nil || len(written.Bulk) != 2 || written.Bulk[1].Spec.Transport != bulk.TCP {
		t.Fatalf("records file: got %d bulk records, %v; want both steps", len(written.Bulk), err)
	}
}

// TestRunBulkKeepsTheStepTheServerDiedIn kills the child server as step
// 2 of 3 starts: step 2 is kept as failed naming the signal (returned and
// written), step 3 does not run, and the error wraps ErrServerExited.
func TestRunBulkKeepsTheStepTheServerDiedIn(t *testing.T) {
	ctx, cancel := context.WithCancel(testutil.LongContext(t))
	defer cancel()
	s, out := bulkSession(t, ctx)
	spec := &bulk.Spec{Transports: []string{bulk.GRPC, bulk.TCP, bulk.HTTP1}, Sizes: []int64{1 << 20}, Chunks: []int{64 << 10},
		MinDuration: 3 * time.Second}
	var steps []int
	prog := func(e bulk.Event) {
		if e.Kind == bulk.StepStarted {
			steps = append(steps, e.I)
			if e.I == 1 {
				s.child.Kill() // as step 2 starts: it dies in step 2, whatever the machine's pace
			}
		}
	}
	// No duration is asserted: a run that went on after the death would
	// start step 3 (counted below) or outlast the test's deadline.
	recs, err := s.RunBulk(ctx, spec, bulk.Options{Progress: prog})
	if !errors.Is(err, ErrServerExited) || !strings.Contains(err.Error(), "signal: killed") {
		t.Fatalf("got %v, want an error wrapping ErrServerExited naming signal: killed", err)
	}
	if len(steps) != 2 {
		t.Errorf("got steps %v started, want 0 and 1 (none after the death)", steps)
	}
	if len(recs) != 2 || recs[0].Status != result.StatusOK || recs[1].Status != result.StatusFailed || !strings.Contains(recs[1].Error, "signal: killed") {
		t.Fatalf("got %d records (%+v), want step 1 ok and step 2 failed naming signal: killed", len(recs), recs)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	written, err := result.ReadAllFile(ctx, out)
	if err != nil || len(written.Bulk) != 2 || !strings.Contains(written.Bulk[1].Error, "signal: killed") {
		t.Fatalf("records file: got %+v, %v; want step 2 failed naming signal: killed", written.Bulk, err)
	}
}

// TestRunBulkRefusesAFrontProxy: bulk's transports listen on ports of
// their own, so one proxy in front of the target would leave them direct.
func TestRunBulkRefusesAFrontProxy(t *testing.T) {
	s, err := New(WithTarget("127.0.0.1:1"), WithNetem(netem.Network{}, netem.DefaultQueueBytes, true))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.RunBulk(t.Context(), &bulk.Spec{}, bulk.Options{}); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("got %v, want ErrInvalidOption", err)
	}
}
