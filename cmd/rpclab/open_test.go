// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
)

func TestOpenLoopBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"zero rps", []string{"sweep", "--rps", "0"}, "--rps"},
		{"unparsable rps", []string{"sweep", "--rps", "lots"}, "--rps"},
		{"unknown arrival", []string{"sweep", "--rps", "10", "--arrival", "bursty"}, "--arrival"},
		{"bad slo", []string{"sweep", "--rps", "10", "--slo", "p99"}, "--slo"},
		{"bad slo bound", []string{"sweep", "--rps", "10", "--slo", "p99=fast"}, "--slo"},
		{"zero bound", []string{"sweep", "--rps", "10", "--max-outstanding", "-3"}, "--max-outstanding"},
		{"slo without rps", []string{"sweep", "--slo", "p99=1ms"}, "--rps"},
		{"arrival without rps", []string{"sweep", "--arrival", "poisson"}, "--rps"},
		{"other client", []string{"sweep", "--rps", "10", "--client", "java"}, "--rps"},
		{"streaming", []string{"sweep", "--rps", "10", "--rpc", "streaming", "--target", "127.0.0.1:1"}, "--rpc"},
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

// TestOpenLoopEndToEnd runs sweep --rps against rpclab's own child server
// and checks the table, the SLO lines and the records.
func TestOpenLoopEndToEnd(t *testing.T) {
	out := filepath.Join(t.TempDir(), "open.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	cmd := rpclabCmd(ctx, "sweep", "--rps", "100,200", "--arrival", "poisson", "--conn", "shared,pool:2",
		"--inflight", "2", "--warmup", "100ms", "--interval", "300ms", "--slo", "p50=10s", "-o", out)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("sweep: %v; stderr:\n%s", err, e.String())
	}
	stdout := o.String()
	for _, want := range []string{"lag_p99_us", "Highest rate sustained within p50=10s", "shared unary:", "pool:2 unary:", "200 rps"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	// Progress names an open-loop step by its rate and connections, not
	// by an in-flight count it does not have.
	for _, want := range []string{"shared     unary     rate=100/s conns=1", "pool:2     unary     rate=200/s conns=2"} {
		if !strings.Contains(e.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, e.String())
		}
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		if err := result.Validate(sc.Bytes()); err != nil {
			t.Errorf("record %d: %v", n, err)
		}
		var r result.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Spec.LoadModel != "open" || r.Spec.Arrival != "poisson" || r.ScheduleLag == nil || r.MaxOutstandingHits == nil {
			t.Errorf("record %d: got spec %+v, lag %v, hits %v; want an open-loop record", n, r.Spec, r.ScheduleLag, r.MaxOutstandingHits)
		}
	}
	if n != 4 {
		t.Errorf("got %d records, want 4", n)
	}
}

// TestOpenLoopSkippedRates: a layout whose step misses --slo skips its
// higher rates, and the progress says which and why.
func TestOpenLoopSkippedRates(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	cmd := rpclabCmd(ctx, "sweep", "--rps", "100,200,300", "--conn", "shared", "--warmup", "50ms", "--interval", "200ms", "--slo", "p50=1ns")
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("sweep: %v; stderr:\n%s", err, e.String())
	}
	if want := "rpclab: shared: skipped rates 200/s, 300/s: the step at 100/s missed p50=1ns ("; !strings.Contains(e.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, e.String())
	}
}

// TestSweepPoolEvents: --pool-events writes a pool:auto step's decisions,
// one tab-separated line each under the header, named by the step and
// marked warm-up or interval; with no pool:auto layout it is a usage error.
func TestSweepPoolEvents(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "events.tsv")
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	// Four callers on one connection: the pool's first decision (after
	// its first 1 s interval, inside the warm-up) starts at one
	// connection, and grows to two if RPCs waited to be written.
	cmd := rpclabCmd(ctx, "sweep", "--conn", "shared,pool:auto:1:2", "--inflight", "4", "--warmup", "2s", "--auto-warmup", "2s", "--interval", "1s",
		"-o", filepath.Join(dir, "r.jsonl"), "--pool-events", events)
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("sweep: %v; stderr:\n%s", err, e.String())
	}
	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 || lines[0] != poolEventsHeader {
		t.Fatalf("got %q, want the header and at least one decision", b)
	}
	want := "pool-auto:1:2\tunary\t4\t0\twarm-up\t"
	f := strings.Split(lines[1], "\t")
	decided := len(f) == len(strings.Split(poolEventsHeader, "\t")) && f[6] == "1" && (f[7] == "1" || f[7] == "2") && f[8] != ""
	if !strings.HasPrefix(lines[1], want) || !decided {
		t.Errorf("got %q, want the step (%q) and a decision from 1 connection with its reason", lines[1], want)
	}
	code, _, stderr := runInProcess("sweep", "--conn", "shared,pool:2", "--pool-events", filepath.Join(dir, "none.tsv"))
	if code != exitUsage || !strings.Contains(stderr, "--pool-events: no pool:auto layout") {
		t.Errorf("got exit %d and %q, want exit %d naming --pool-events", code, stderr, exitUsage)
	}
}

// bidiTarget starts rpclab's server (with reflection) for doctor's --call
// test: its StreamingCall is bidirectional.
func bidiTarget(t *testing.T) string {
	t.Helper()
	return testutil.Serve(t, server.New(server.Options{}))
}

func TestDoctorBadFlags(t *testing.T) {
	kept := filepath.Join(t.TempDir(), "kept.jsonl")
	if err := os.WriteFile(kept, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no target", []string{"doctor"}, "--target"},
		{"negative rps", []string{"doctor", "--target", "127.0.0.1:1", "--max-rps", "-5"}, "--max-rps"},
		{"zero inflight", []string{"doctor", "--target", "127.0.0.1:1", "--max-inflight", "-1"}, "--max-inflight"},
		{"bad header", []string{"doctor", "--target", "127.0.0.1:1", "--header", "novalue"}, "--header"},
		{"cacert without tls", []string{"doctor", "--target", "127.0.0.1:1", "--cacert", "x.pem"}, "--tls"},
		{"max-inflight 0", []string{"doctor", "--target", "127.0.0.1:1", "--max-inflight", "0"}, "--max-inflight"},
		{"max-inflight 1", []string{"doctor", "--target", "127.0.0.1:1", "--max-inflight", "1"}, "--max-inflight"},
		{"pools 0", []string{"doctor", "--target", "127.0.0.1:1", "--pools", "0"}, "--pools"},
		{"pools twice", []string{"doctor", "--target", "127.0.0.1:1", "--pools", "2,2"}, "--pools"},
		{"budget 0s", []string{"doctor", "--target", "127.0.0.1:1", "--budget", "0s"}, "--budget: 0s is not a positive duration"},
		{"budget -1s", []string{"doctor", "--target", "127.0.0.1:1", "--budget", "-1s"}, "--budget"},
		{"dial-timeout 0", []string{"doctor", "--target", "127.0.0.1:1", "--dial-timeout", "0s"}, "--dial-timeout"},
		{"existing out", []string{"doctor", "--target", "127.0.0.1:1", "-o", kept}, "--out " + kept + ": the file exists"},
		{"bidi call", []string{"doctor", "--target", bidiTarget(t), "--call", "grpc.testing.BenchmarkService/StreamingCall", "--data", "{}"}, "--call: /grpc.testing.BenchmarkService/StreamingCall is a client-streaming or bidirectional method"},
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

// TestSweepCallByReflection calls the ping by name through the child
// server's reflection; an unknown method or bad JSON is a usage error.
func TestSweepCallByReflection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	out := filepath.Join(t.TempDir(), "call.jsonl")
	cmd := rpclabCmd(ctx, "sweep", "--rps", "100", "--conn", "shared", "--warmup", "100ms", "--interval", "300ms",
		"--call", "grpc.testing.BenchmarkService/UnaryCall", "--data", `{"response_size": 5}`, "--header", "x-who=test", "-o", out)
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("sweep --call: %v; stderr:\n%s", err, e.String())
	}
	recs, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Spec.Call != "grpc.testing.BenchmarkService/UnaryCall" || recs[0].Status != result.StatusOK {
		t.Errorf("got %+v, want one ok record with spec.call set", recs)
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"--call", "grpc.testing.BenchmarkService/Nope"}},
		{[]string{"--call", "grpc.testing.BenchmarkService/UnaryCall", "--data", `{"response_size": "x"}`}},
	} {
		args := append([]string{"sweep", "--rps", "100", "--conn", "shared"}, tc.args...)
		cmd := rpclabCmd(ctx, args...)
		var e bytes.Buffer
		cmd.Stderr = &e
		err := cmd.Run()
		var xe *exec.ExitError
		if !errors.As(err, &xe) || xe.ExitCode() != exitUsage || !strings.Contains(e.String(), "dyncall") {
			t.Errorf("%v: got %v and %q, want exit %d with an dyncall error", tc.args, err, e.String(), exitUsage)
		}
	}
}

// TestSweepCallClosedLoop: sweep --call without --rps calls the method in
// the closed loop, one record per layout and in-flight count, each naming
// the method; another stack's client cannot.
func TestSweepCallClosedLoop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testutil.LongTimeout)
	defer cancel()
	out := filepath.Join(t.TempDir(), "call.jsonl")
	cmd := rpclabCmd(ctx, "sweep", "--conn", "shared,pool:2", "--inflight", "1,4", "--warmup", "50ms", "--interval", "200ms",
		"--call", "grpc.testing.BenchmarkService/UnaryCall", "--data", `{"response_size": 5}`, "-o", out)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("sweep --call: %v; stderr:\n%s", err, e.String())
	}
	recs, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("got %d records, want 4", len(recs))
	}
	for _, r := range recs {
		if r.Spec.Call != "grpc.testing.BenchmarkService/UnaryCall" || r.Spec.LoadModel != "closed" || r.Status != result.StatusOK {
			t.Errorf("got call %q, load model %q, status %q; want the method, closed, ok", r.Spec.Call, r.Spec.LoadModel, r.Status)
		}
	}
	if !strings.Contains(o.String(), "go unary grpc.testing.BenchmarkService/UnaryCall, in-flight 4:") {
		t.Errorf("the verdict does not name the method:\n%s", o.String())
	}
	code, _, stderr := runInProcess("sweep", "--client", "python", "--call", "grpc.testing.BenchmarkService/UnaryCall")
	if code != exitUsage || !strings.Contains(stderr, "--call: a method is called by the go client only") {
		t.Errorf("--client python --call: got exit %d, %q; want a usage error", code, stderr)
	}
}
