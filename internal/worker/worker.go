// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package worker serves gRPC's benchmark driver/worker protocol
// (grpc.testing.WorkerService) with rpclab's engine, so the official QPS
// driver, or rpclab's, can run rpclab clients and servers on many hosts.
// RunClient maps the driver's ClientConfig onto a loadgen.Live run and
// answers each Mark with one ClientStatus; RunServer serves rpclab's ping
// service. Beside it, rpclab.v1.WorkerDetail returns per mark what gRPC's
// messages cannot carry: the exact HDR histogram, the CPU time and the TCP
// connections the kernel saw.
package worker

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/procstat"
	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/proto/workerpb"
)

// Options configure a Worker.
type Options struct {
	// DialTimeout bounds how long RunClient waits for its connections
	// (default 10 s).
	DialTimeout time.Duration
	// ServerHost is the address RunServer's ping server listens on ("":
	// every interface, as gRPC's workers do).
	ServerHost string
	// SetupTimeout bounds how long RunClient and RunServer wait for the
	// stream's first message, the setup, while they hold the run slot
	// (default 30 s); past it the stream ends with DeadlineExceeded and the
	// slot is free.
	SetupTimeout time.Duration
	// MemoryBudget is the most memory one RunClient may plan to use, as
	// estimated from its ClientConfig (RPCBytes per RPC in flight, twice
	// the payload, ConnBytes per connection); a config above it is refused
	// with ResourceExhausted (default DefaultMemoryBudget).
	MemoryBudget int64
	// Logger gets one line per run started or stopped (default: discard).
	Logger *slog.Logger
}

// Worker is a WorkerService and a WorkerDetail service.
type Worker struct {
	pb.UnimplementedWorkerServiceServer
	workerpb.UnimplementedWorkerDetailServer
	o    Options
	quit chan struct{}
	once sync.Once

	// setupTimer starts the wait for a setup (tests replace it).
	setupTimer func(time.Duration) (<-chan time.Time, func() bool)

	mu      sync.Mutex
	client  bool                           // a RunClient is running
	server  bool                           // a RunServer is running
	details []*workerpb.MarkDetailResponse // the last KeptMarks marks of the current or last RunClient
	marks   int64                          // marks of the current or last RunClient
}

var (
	_ pb.WorkerServiceServer      = (*Worker)(nil)
	_ workerpb.WorkerDetailServer = (*Worker)(nil)
)

// New returns a Worker; it validates o.
func New(o Options) (*Worker, error) {
	if o.DialTimeout < 0 {
		return nil, fmt.Errorf("%w: negative dial timeout %v", ErrConfig, o.DialTimeout)
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = 10 * time.Second
	}
	if o.SetupTimeout < 0 {
		return nil, fmt.Errorf("%w: negative setup timeout %v", ErrConfig, o.SetupTimeout)
	}
	if o.SetupTimeout == 0 {
		o.SetupTimeout = DefaultSetupTimeout
	}
	if o.MemoryBudget < 0 {
		return nil, fmt.Errorf("%w: negative memory budget %d", ErrConfig, o.MemoryBudget)
	}
	if o.MemoryBudget == 0 {
		o.MemoryBudget = DefaultMemoryBudget
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Worker{o: o, quit: make(chan struct{}), setupTimer: realTimer}, nil
}

// DefaultSetupTimeout is Options.SetupTimeout's default: a driver sends the
// setup as soon as the stream opens.
const DefaultSetupTimeout = 30 * time.Second

// realTimer is a time.Timer as setupTimer's shape.
func realTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// recvSetup receives a stream's first message, waiting at most
// SetupTimeout: a stream that never sends its setup must not hold the run
// slot. When it gives up, the handler returns and gRPC cancels the stream,
// which ends the Recv still waiting.
func recvSetup[T any](w *Worker, recv func() (*T, error)) (*T, error) {
	type msg struct {
		m   *T
		err error
	}
	done := make(chan msg, 1)
	go func() {
		m, err := recv()
		done <- msg{m, err}
	}()
	fire, stop := w.setupTimer(w.o.SetupTimeout)
	defer stop()
	select {
	case m := <-done:
		return m.m, m.err
	case <-fire:
		w.o.Logger.Info("worker: no setup in time", "timeout", w.o.SetupTimeout)
		return nil, status.Errorf(codes.DeadlineExceeded, "%v: the stream sent no setup within %v", ErrNoSetup, w.o.SetupTimeout)
	}
}

// Serve serves the worker's services on lis until ctx ends or a driver
// calls QuitWorker; it then stops every run and returns.
func (w *Worker) Serve(ctx context.Context, lis net.Listener) error {
	s := grpc.NewServer()
	pb.RegisterWorkerServiceServer(s, w)
	workerpb.RegisterWorkerDetailServer(s, w)
	done := make(chan error, 1)
	go func() { done <- s.Serve(lis) }()
	select {
	case err := <-done:
		return fmt.Errorf("worker: %w", err)
	case <-ctx.Done():
		s.Stop()
	case <-w.quit:
		// Let QuitWorker's answer (and any RPC about to end) go out, but
		// do not wait on runs the driver left open.
		stopped := make(chan struct{})
		go func() { s.GracefulStop(); close(stopped) }()
		t := time.NewTimer(quitGrace)
		select {
		case <-stopped:
		case <-t.C:
			s.Stop()
		}
		t.Stop()
	}
	<-done
	return nil
}

// quitGrace bounds how long QuitWorker waits for open runs to end.
const quitGrace = time.Second

// CoreCount answers the number of CPUs this process may use.
func (w *Worker) CoreCount(context.Context, *pb.CoreRequest) (*pb.CoreResponse, error) {
	return &pb.CoreResponse{Cores: int32(runtime.GOMAXPROCS(0))}, nil
}

// QuitWorker answers, then ends Serve.
func (w *Worker) QuitWorker(context.Context, *pb.Void) (*pb.Void, error) {
	w.o.Logger.Info("worker: quit requested")
	go w.once.Do(func() { close(w.quit) })
	return &pb.Void{}, nil
}

// claim marks a run of one kind as started (false if one already runs).
func (w *Worker) claim(flag *bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if *flag {
		return false
	}
	*flag = true
	return true
}

func (w *Worker) release(flag *bool) {
	w.mu.Lock()
	*flag = false
	w.mu.Unlock()
}

// cpuClock brackets the process's CPU time and the wall time since a reset.
type cpuClock struct {
	start     time.Time
	user, sys time.Duration
	// host is the host's CPU times at start (nil: not read, not Linux).
	host *procstat.CPUStat
}

func newCPUClock() cpuClock {
	u, s := rusage()
	c := cpuClock{start: time.Now(), user: u, sys: s}
	if h, err := procstat.ReadCPUStat(); err == nil {
		c.host = &h
	}
	return c
}

// hostSince is the host's CPU since c on the CPUs this process may run
// on (ok false when it cannot be read).
func (c cpuClock) hostSince() (cpus []int, t procstat.CPUTimes, ok bool) {
	if c.host == nil {
		return nil, t, false
	}
	now, err := procstat.ReadCPUStat()
	if err != nil {
		return nil, t, false
	}
	cpus, err = procstat.AllowedCPUs()
	if err != nil {
		return nil, t, false
	}
	return cpus, now.Sub(*c.host).Sum(cpus), true
}

// since is the wall, user and system time since c.
func (c cpuClock) since() (wall, user, sys time.Duration) {
	u, s := rusage()
	return time.Since(c.start), u - c.user, s - c.sys
}

// Marks is how many marks the current (or last) client run has taken: a
// mark counts once its figures are taken (and, for a step's first, reset),
// so a driver's test that waits for one knows the step's interval has
// begun on this worker.
func (w *Worker) Marks() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.marks
}
