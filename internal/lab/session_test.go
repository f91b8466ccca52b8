// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/testserver"
	"github.com/rpclab/rpclab/internal/testutil"
)

// The test binary doubles as a ping and bulk server: with this variable set
// it serves on a free loopback port, as "rpclab serve" does.
const asServer = "LAB_TEST_AS_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(asHog) == "1" {
		hog()
	}
	if len(os.Args) > 1 && os.Args[1] == "netem" { // Session.Proxy runs its executable so
		os.Exit(netemMain(os.Args[2:]))
	}
	if os.Getenv(asServer) == "1" {
		os.Exit(testserver.Child())
	}
	os.Exit(m.Run())
}

// testServer is this test binary run as a ping server.
func testServer(t *testing.T) Server {
	t.Setenv(asServer, "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	return Server{Name: "go", Argv: []string{os.Args[0]}}
}

// goClient sweeps in-flight 1, 2 and 4 on one shared connection with
// long steps, in process.
func goClient(t *testing.T) Client {
	shared, err := loadgen.ParseConnMode("shared")
	if err != nil {
		t.Fatal(err)
	}
	return Client{Name: "go", Conns: []string{"shared"}, LoadModel: "closed",
		Spec: loadgen.Spec{RPCs: []string{loadgen.Unary}, Conns: []loadgen.ConnMode{shared}, Inflight: []int{1, 2, 4},
			Interval: 2 * time.Second, DialTimeout: 5 * time.Second},
		Sweep: func(ctx context.Context, spec *loadgen.Spec, sink func(*result.Record) error, prog loadgen.Progress) error {
			return loadgen.Sweep(ctx, spec, loadgen.Options{}, sink, prog)
		}}
}

// session starts a session with the test server, a records file, and
// onStep called as each step starts.
func session(t *testing.T, ctx context.Context, onStep func(s *Session, i int)) (s *Session, out string) {
	out = filepath.Join(t.TempDir(), "r.jsonl")
	var sp *Session
	s, err := New(WithServer(testServer(t)), WithPin(false), WithOutputs(Output{Name: "--out", Path: out, Keep: true, Open: true}),
		WithProgress(func(e Event) {
			if e.Kind == StepStarted {
				onStep(sp, e.I)
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	sp = s
	t.Cleanup(func() { s.Close() })
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return s, out
}

// TestRunEndsWhenTheServerDies kills the child server as step 2 starts:
// Run must return at once with an error naming the signal, keep step 2 as
// failed (in what it returns and in the records file), and run no step 3.
func TestRunEndsWhenTheServerDies(t *testing.T) {
	ctx, cancel := context.WithCancel(testutil.LongContext(t))
	defer cancel()
	var killed time.Time
	s, out := session(t, ctx, func(s *Session, i int) {
		if i == 1 {
			killed = time.Now()
			s.child.Kill()
		}
	})
	recs, err := s.Run(ctx, []Client{goClient(t)}, false)
	if !errors.Is(err, ErrServerExited) || !strings.Contains(err.Error(), "signal: killed") {
		t.Fatalf("got %v, want an error wrapping ErrServerExited naming signal: killed", err)
	}
	if d := time.Since(killed); d > time.Second {
		t.Errorf("Run returned %v after the server died, want at once", d)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	written, rerr := result.ReadFile(out)
	if rerr != nil {
		t.Fatal(rerr)
	}
	for _, got := range [][]result.Record{recs, written} {
		if len(got) != 2 || got[0].Status != result.StatusOK || got[1].Status != result.StatusFailed ||
			got[1].Spec.Inflight != 2 || !strings.Contains(got[1].Error, "signal: killed") {
			t.Fatalf("got %d records (%+v), want step 1 ok and step 2 failed naming signal: killed", len(got), got)
		}
	}
}

// TestRunKeepsWhatTheDeadServerServed kills the child server once step 2
// has measured RPCs: step 2 is kept as failed with what it
// measured before the death, and Run returns at once.
func TestRunKeepsWhatTheDeadServerServed(t *testing.T) {
	ctx, cancel := context.WithCancel(testutil.LongContext(t))
	defer cancel()
	// The client kills the server once step 2 has measured RPCs: 50
	// pings ended after the step's CPU read, which begins its interval.
	var armed, reading atomic.Bool
	var pings atomic.Int64
	var s *Session
	c := goClient(t)
	watch := grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		switch {
		case !armed.Load():
		case strings.Contains(method, "UsageService"):
			reading.Store(true)
		case reading.Load() && err == nil && pings.Add(1) == 50:
			s.child.Kill()
		}
		return err
	})
	c.Sweep = func(ctx context.Context, spec *loadgen.Spec, sink func(*result.Record) error, prog loadgen.Progress) error {
		return loadgen.Sweep(ctx, spec, loadgen.Options{DialOptions: []grpc.DialOption{watch}}, sink, prog)
	}
	s, _ = session(t, ctx, func(_ *Session, i int) { armed.Store(i == 1) })
	// No duration is asserted: a Run that did not return at the death
	// would run step 3 (and fail the count below) or outlast the deadline.
	recs, err := s.Run(ctx, []Client{c}, false)
	if !errors.Is(err, ErrServerExited) {
		t.Fatalf("got %v, want ErrServerExited", err)
	}
	if len(recs) != 2 || recs[1].Status != result.StatusFailed || recs[1].Requests == 0 || !strings.Contains(recs[1].Error, "signal: killed") {
		t.Fatalf("got %d records (%+v), want step 2 failed with the RPCs it measured", len(recs), recs)
	}
}

// TestRunKeepsTheInterruptedStep cancels the caller's context as step 2
// starts: step 2 is kept, marked interrupted, and the server's exit (our
// own stop) is not reported as a death.
func TestRunKeepsTheInterruptedStep(t *testing.T) {
	ctx, cancel := context.WithCancel(testutil.LongContext(t))
	defer cancel()
	rctx, interrupt := context.WithCancel(ctx)
	s, _ := session(t, ctx, func(_ *Session, i int) {
		if i == 1 {
			interrupt()
		}
	})
	recs, err := s.Run(rctx, []Client{goClient(t)}, false)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrServerExited) {
		t.Fatalf("got %v, want context.Canceled and no server death", err)
	}
	if len(recs) != 2 || recs[0].Status != result.StatusOK || recs[1].Status != result.StatusInterrupted || recs[1].Spec.Inflight != 2 {
		t.Fatalf("got %d records (%+v), want step 1 ok and step 2 interrupted", len(recs), recs)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
	}{
		{"no target nor server", nil},
		{"server without a command", []Option{WithServer(Server{Name: "go"})}},
		{"zero start timeout", []Option{WithTarget("127.0.0.1:1"), WithStartTimeout(0)}},
		{"nil progress", []Option{WithTarget("127.0.0.1:1"), WithProgress(nil)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.opts...); !errors.Is(err, ErrInvalidOption) {
				t.Errorf("got %v, want ErrInvalidOption", err)
			}
		})
	}
}
