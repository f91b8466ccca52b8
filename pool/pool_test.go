// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/pool/internal/adapt"
	"github.com/rpclab/rpclab/pool/internal/pooltest"
	pb "google.golang.org/grpc/interop/grpc_testing"
)

func TestNewRejectsBadInput(t *testing.T) {
	failing := func(*config) error { return errors.New("boom") }
	tests := []struct {
		name    string
		target  string
		opts    []Option
		want    error  // errors.Is target
		wantMsg string // substring of the message
	}{
		{"empty target", "", []Option{plaintext}, ErrEmptyTarget, "empty target"},
		{"size zero", "127.0.0.1:1", []Option{plaintext, WithSize(0)}, ErrInvalidOption, "size 0"},
		{"size negative", "127.0.0.1:1", []Option{plaintext, WithSize(-3)}, ErrInvalidOption, "size -3"},
		{"size past the maximum", "127.0.0.1:1", []Option{plaintext, WithSize(99999999999)}, ErrInvalidOption, "size 99999999999 is above 1024"},
		{"unknown policy", "127.0.0.1:1", []Option{plaintext, WithPolicy(Policy(7))}, ErrInvalidOption, "Policy(7)"},
		{"zero redial delay", "127.0.0.1:1", []Option{plaintext, WithRedialAfter(0)}, ErrInvalidOption, "redial delay"},
		{"nil option", "127.0.0.1:1", []Option{plaintext, nil}, ErrInvalidOption, "option 1 is nil"},
		{"nil logger", "127.0.0.1:1", []Option{plaintext, WithLogger(nil)}, ErrInvalidOption, "nil logger"},
		{"no credentials", "127.0.0.1:1", nil, ErrDial, "no transport security"},
		{"option fails", "127.0.0.1:1", []Option{failing}, nil, "boom"},
		{"stream limit zero", "127.0.0.1:1", []Option{plaintext, WithSize(1), WithStreamLimit(0, 8)}, ErrInvalidOption, "streams per connection 0"},
		{"stream limit max below size", "127.0.0.1:1", []Option{plaintext, WithSize(2), WithStreamLimit(4, 1)}, ErrInvalidOption, "max connections 1 is below the size 2"},
		{"stream limit max past the maximum", "127.0.0.1:1", []Option{plaintext, WithSize(1), WithStreamLimit(4, 1025)}, ErrInvalidOption, "max connections 1025 is above 1024"},
		{"stream limit and adaptive", "127.0.0.1:1", []Option{plaintext, WithAdaptive(1, 4), WithStreamLimit(4, 8)}, ErrInvalidOption, "WithStreamLimit and WithAdaptive"},
		{"growth idle zero", "127.0.0.1:1", []Option{plaintext, WithSize(1), WithStreamLimit(4, 8), WithGrowthIdle(0)}, ErrInvalidOption, "idle time 0s"},
		{"growth idle without a limit", "127.0.0.1:1", []Option{plaintext, WithGrowthIdle(time.Second)}, ErrInvalidOption, "WithGrowthIdle without WithStreamLimit"},
		{"nil meter provider", "127.0.0.1:1", []Option{plaintext, WithMeterProvider(nil)}, ErrInvalidOption, "nil MeterProvider"},
		{"adaptive min zero", "127.0.0.1:1", []Option{plaintext, WithAdaptive(0, 4)}, ErrInvalidOption, "WithAdaptive min 0"},
		{"adaptive min negative", "127.0.0.1:1", []Option{plaintext, WithAdaptive(-1, 4)}, ErrInvalidOption, "WithAdaptive min -1"},
		{"adaptive max below min", "127.0.0.1:1", []Option{plaintext, WithAdaptive(4, 3)}, ErrInvalidOption, "WithAdaptive max 3 must be at least min 4"},
		{"adaptive and size", "127.0.0.1:1", []Option{plaintext, WithSize(2), WithAdaptive(1, 4)}, ErrInvalidOption, "WithSize and WithAdaptive"},
		{"adaptive max past the maximum", "127.0.0.1:1", []Option{plaintext, WithAdaptive(1, 1025)}, ErrInvalidOption, "max 1025 is above 1024"},
		{"adaptive max at MaxInt", "127.0.0.1:1", []Option{plaintext, WithAdaptive(1, math.MaxInt)}, ErrInvalidOption, "is above 1024 (MaxSize)"},
		{"adaptive zero interval", "127.0.0.1:1", []Option{plaintext, withRule(func() adapt.Rule { r := adapt.DefaultRule(1, 2); r.Interval = 0; return r }())}, ErrInvalidOption, "interval"},
		{"adaptive negative write wait", "127.0.0.1:1", []Option{plaintext, withRule(func() adapt.Rule { r := adapt.DefaultRule(1, 2); r.WriteWait = -1; return r }())}, ErrInvalidOption, "durations must not be negative"},
		{"adaptive max back-off below cooldown", "127.0.0.1:1", []Option{plaintext, withRule(func() adapt.Rule { r := adapt.DefaultRule(1, 2); r.MaxBackoff = time.Second; return r }())}, ErrInvalidOption, "max back-off 1s is below the cooldown 5s"},
		{"adaptive negative min gain", "127.0.0.1:1", []Option{plaintext, withRule(func() adapt.Rule { r := adapt.DefaultRule(1, 2); r.MinGain = -0.1; return r }())}, ErrInvalidOption, "min gain"},
		{"adaptive load rise at 1", "127.0.0.1:1", []Option{plaintext, withRule(func() adapt.Rule { r := adapt.DefaultRule(1, 2); r.LoadRise = 1; return r }())}, ErrInvalidOption, "load rise 1"},
		{"adaptive load rise NaN", "127.0.0.1:1", []Option{plaintext, withRule(func() adapt.Rule { r := adapt.DefaultRule(1, 2); r.LoadRise = math.NaN(); return r }())}, ErrInvalidOption, "load rise NaN"},
		{"adaptive steal band above 1", "127.0.0.1:1", []Option{plaintext, withRule(func() adapt.Rule { r := adapt.DefaultRule(1, 2); r.StealBand = 1.5; return r }())}, ErrInvalidOption, "steal band 1.5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.target, tc.opts...)
			if err == nil {
				_ = p.Close()
				t.Fatalf("New: got nil error, want %v", tc.want)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("New: got %v, want an error wrapping %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("New: got %q, want it to mention %q", err, tc.wantMsg)
			}
		})
	}
	checkNoWatchers(t)
}

// A dial option that only fails when dialling (a dialer that errors): New
// succeeds, as grpc.NewClient does, and Connect and RPCs report it.
func TestDialerThatFails(t *testing.T) {
	ctx := pooltest.Context(t)
	dialer := grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) {
		return nil, errors.New("dialer refuses")
	})
	p := newPool(t, "127.0.0.1:1", WithSize(2), WithDialOptions(dialer))
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := p.Connect(cctx); err == nil || !strings.Contains(err.Error(), "not ready") {
		t.Errorf("Connect: got %v, want a not-ready error", err)
	}
	err := ping(ctx, p)
	if got := status.Code(err); got != codes.Unavailable {
		t.Errorf("RPC: got code %v (%v), want %v", got, err, codes.Unavailable)
	}
	if !strings.Contains(fmt.Sprint(err), "dialer refuses") {
		t.Errorf("RPC: got %v, want the dialer's error in it", err)
	}
}

func TestDefaultSize(t *testing.T) {
	tests := []struct{ cpus, want int }{{1, 2}, {2, 2}, {4, 4}, {8, 8}, {64, 8}}
	for _, tc := range tests {
		if got := clampSize(tc.cpus); got != tc.want {
			t.Errorf("clampSize(%d): got %d, want %d", tc.cpus, got, tc.want)
		}
	}
	// A pool without WithSize has one connection per CPU the process may
	// use (GOMAXPROCS), clamped to 2..8, as DefaultSize's doc says.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct{ procs, want int }{{1, 2}, {2, 2}, {3, 3}, {5, 5}, {8, 8}, {9, 8}, {32, 8}} {
		runtime.GOMAXPROCS(tc.procs)
		p, err := New("127.0.0.1:1", plaintext, WithLazy())
		if err != nil {
			t.Fatal(err)
		}
		size, conns := p.Size(), len(p.Stats().Conns)
		if st := p.Stats(); st.Adaptive || st.Events != nil || p.ctl != nil {
			t.Errorf("a pool without WithSize or WithAdaptive: got adaptive %v, events %v, want a fixed size", st.Adaptive, st.Events)
		}
		p.Close()
		if got := size; got != tc.want {
			t.Errorf("Size of a pool without WithSize at GOMAXPROCS %d: got %d, want %d", tc.procs, got, tc.want)
		}
		if got := conns; got != tc.want {
			t.Errorf("connections of a pool without WithSize at GOMAXPROCS %d: got %d, want %d", tc.procs, got, tc.want)
		}
	}
	checkNoWatchers(t)
}

func TestPolicyString(t *testing.T) {
	tests := []struct {
		p    Policy
		want string
	}{{RoundRobin, "round-robin"}, {LeastLoaded, "least-loaded"}, {Policy(12), "Policy(12)"}}
	for _, tc := range tests {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("Policy(%d).String(): got %q, want %q", int(tc.p), got, tc.want)
		}
	}
}

// Generated stubs take the pool, and every connection carries RPCs.
func TestStubsAndSpread(t *testing.T) {
	srv := startServer(t)
	for _, pol := range []Policy{RoundRobin, LeastLoaded} {
		t.Run(pol.String(), func(t *testing.T) {
			ctx := pooltest.Context(t)
			var mu sync.Mutex
			used := map[*grpc.ClientConn]int{}
			count := grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				mu.Lock()
				used[cc]++
				mu.Unlock()
				return invoke(ctx, method, req, reply, cc, opts...)
			})
			p := newPool(t, srv.addr, WithSize(4), WithPolicy(pol), WithDialOptions(count))
			if err := p.Connect(ctx); err != nil {
				t.Fatalf("Connect: %v", err)
			}
			client := pb.NewBenchmarkServiceClient(p)
			for i := 0; i < 200; i++ {
				resp, err := client.UnaryCall(ctx, &pb.SimpleRequest{ResponseSize: 3})
				if err != nil {
					t.Fatalf("UnaryCall %d: %v", i, err)
				}
				if got := len(resp.GetPayload().GetBody()); got != 3 {
					t.Fatalf("response payload: got %d bytes, want 3", got)
				}
			}
			if got := len(used); got != 4 {
				t.Errorf("connections used: got %d, want 4 (%v)", got, used)
			}
			if pol == RoundRobin {
				for cc, n := range used {
					if n != 50 {
						t.Errorf("round-robin: connection %p took %d RPCs, want 50", cc, n)
					}
				}
			}
			st := p.Stats()
			if got, want := st.Ready(), 4; got != want {
				t.Errorf("Stats().Ready(): got %d, want %d", got, want)
			}
			if got := st.InFlight(); got != 0 {
				t.Errorf("Stats().InFlight() after the RPCs: got %d, want 0", got)
			}
			if st.Policy != pol || st.Target != srv.addr || st.Closed {
				t.Errorf("Stats: got policy %v target %q closed %v, want %v %q false", st.Policy, st.Target, st.Closed, pol, srv.addr)
			}
		})
	}
}

// A stream counts as in flight from NewStream until it ends, on the
// connection it was opened on.
func TestStreamInFlight(t *testing.T) {
	srv := startServer(t)
	ctx := pooltest.Context(t)
	p := newPool(t, srv.addr, WithSize(2))
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	client := pb.NewBenchmarkServiceClient(p)
	inflight := func() []int64 {
		var out []int64
		for _, c := range p.Stats().Conns {
			out = append(out, c.InFlight)
		}
		return out
	}

	tests := []struct {
		name string
		end  func(pb.BenchmarkService_StreamingCallClient, context.CancelFunc) error
	}{
		{"closed by the client", func(s pb.BenchmarkService_StreamingCallClient, _ context.CancelFunc) error {
			if err := s.CloseSend(); err != nil {
				return err
			}
			if _, err := s.Recv(); !errors.Is(err, io.EOF) {
				return fmt.Errorf("Recv after CloseSend: got %v, want io.EOF", err)
			}
			return nil
		}},
		{"context cancelled", func(_ pb.BenchmarkService_StreamingCallClient, cancel context.CancelFunc) error {
			cancel()
			return nil
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			s, err := client.StreamingCall(sctx)
			if err != nil {
				t.Fatalf("StreamingCall: %v", err)
			}
			for i := 0; i < 3; i++ {
				if err := s.Send(&pb.SimpleRequest{ResponseSize: 1}); err != nil {
					t.Fatalf("Send: %v", err)
				}
				if _, err := s.Recv(); err != nil {
					t.Fatalf("Recv: %v", err)
				}
				if got := p.Stats().InFlight(); got != 1 {
					t.Fatalf("in flight with one open stream: got %d (%v), want 1", got, inflight())
				}
			}
			if err := tc.end(s, cancel); err != nil {
				t.Fatal(err)
			}
			waitFor(ctx, t, "the stream to leave the in-flight count", func() bool { return p.Stats().InFlight() == 0 })
		})
	}
}

// Every call after Shutdown returns ErrClosed, a second Close or Shutdown
// too, and none panics; Stats still works.
func TestUseAfterClose(t *testing.T) {
	srv := startServer(t)
	ctx := pooltest.Context(t)
	p, err := New(srv.addr, plaintext, WithSize(3))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	// A stream open at a Shutdown whose context is already done is
	// cancelled at once and leaves the count.
	s, err := pb.NewBenchmarkServiceClient(p).StreamingCall(ctx)
	if err != nil {
		t.Fatalf("StreamingCall: %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.Shutdown(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown(done context) with a stream open: got %v, want context.Canceled", err)
	}
	// grpc-go ends it Canceled, or Unavailable when its transport closes
	// before the stream sees the close (Shutdown's doc says so).
	if _, err := s.Recv(); !closedByShutdown(err) {
		t.Errorf("Recv on a stream open at Shutdown: got %v, want code Canceled (or Unavailable \"transport is closing\")", err)
	}

	calls := []struct {
		name string
		call func() error
	}{
		{"Invoke", func() error { return ping(ctx, p) }},
		{"NewStream", func() error {
			_, err := p.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, "/grpc.testing.BenchmarkService/StreamingCall")
			return err
		}},
		{"Connect", func() error { return p.Connect(ctx) }},
		{"Close", p.Close},
		{"Shutdown", func() error { return p.Shutdown(ctx) }},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, ErrClosed) {
				t.Errorf("%s after Close: got %v, want ErrClosed", tc.name, err)
			}
		})
	}
	if got := status.Code(ErrClosed); got != codes.Canceled {
		t.Errorf("status.Code(ErrClosed): got %v, want %v", got, codes.Canceled)
	}
	st := p.Stats()
	if !st.Closed || st.InFlight() != 0 {
		t.Errorf("Stats after Close: got closed %v in flight %d, want true 0", st.Closed, st.InFlight())
	}
	for i, c := range st.Conns {
		if c.State != connectivity.Shutdown {
			t.Errorf("connection %d after Close: got %v, want %v", i, c.State, connectivity.Shutdown)
		}
	}
	checkNoWatchers(t)
}

// Close and RPCs racing each other: no panic, no race, only Canceled.
func TestCloseDuringRPCs(t *testing.T) {
	srv := startServer(t)
	ctx := pooltest.Context(t)
	p, err := New(srv.addr, plaintext, WithSize(2), WithPolicy(LeastLoaded))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	started := make(chan struct{}, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				err := ping(ctx, p)
				if i == 10 {
					started <- struct{}{}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for g := 0; g < 8; g++ {
		<-started
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: got %v, want nil", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if got := status.Code(err); got != codes.Canceled {
			t.Errorf("RPC racing Close: got %v, want code %v", err, codes.Canceled)
		}
	}
}

// The logger option receives the pool's replacement messages.
func TestLoggerSeesRedial(t *testing.T) {
	srv := startServer(t)
	ctx := pooltest.Context(t)
	var buf syncBuffer
	p := newPool(t, srv.addr, WithSize(1), WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	_ = p.list()[0].cur.Load().cc.Close() // shut down behind the pool's back
	waitFor(ctx, t, "the connection to be re-created", func() bool { return p.Stats().Conns[0].Redials == 1 })
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect after the re-dial: %v", err)
	}
	if err := ping(ctx, p); err != nil {
		t.Errorf("RPC after the re-dial: %v", err)
	}
	waitFor(ctx, t, "the log line", func() bool { return strings.Contains(buf.String(), "re-created connection") })
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Eager pools dial every connection at once; lazy pools dial a connection
// when the first RPC is routed to it.
func TestLazyAndEager(t *testing.T) {
	srv := startServer(t)
	t.Run("eager", func(t *testing.T) {
		ctx := pooltest.Context(t)
		proxy := startProxy(t, srv.addr)
		p := newPool(t, proxy.addr(), WithSize(3))
		waitFor(ctx, t, "3 connections to be ready without an RPC", func() bool { return p.Stats().Ready() == 3 })
		if got := proxy.accepted(); got != 3 {
			t.Errorf("connections accepted: got %d, want 3", got)
		}
	})
	t.Run("lazy", func(t *testing.T) {
		ctx := pooltest.Context(t)
		proxy := startProxy(t, srv.addr)
		p := newPool(t, proxy.addr(), WithSize(3), WithLazy())
		for i, c := range p.Stats().Conns {
			if c.State != connectivity.Idle {
				t.Errorf("connection %d before any RPC: got %v, want %v", i, c.State, connectivity.Idle)
			}
		}
		if err := ping(ctx, p); err != nil {
			t.Fatalf("RPC: %v", err)
		}
		if got := proxy.accepted(); got != 1 {
			t.Errorf("connections accepted after one RPC: got %d, want 1", got)
		}
		if err := p.Connect(ctx); err != nil {
			t.Fatalf("Connect: %v", err)
		}
		if got := proxy.accepted(); got != 3 {
			t.Errorf("connections accepted after Connect: got %d, want 3", got)
		}
	})
}

// closedByShutdown says whether err is how grpc-go ends an RPC the pool's
// Shutdown cancelled: code Canceled, or Unavailable "transport is closing"
// when the transport closed first.
func closedByShutdown(err error) bool {
	st := status.Convert(err)
	return st.Code() == codes.Canceled ||
		st.Code() == codes.Unavailable && strings.Contains(st.Message(), "transport is closing")
}
