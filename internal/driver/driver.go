// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/proto/workerpb"
)

// Remote is the driver's side of one worker: rpclab's or any official
// gRPC benchmark worker (C++, Java, Go, ...).
type Remote struct {
	// Addr is the worker's host:port as given.
	Addr string
	// Cores is the worker's answer to CoreCount.
	Cores int
	// RPCLab tells whether the worker also serves rpclab.v1.WorkerDetail
	// (an rpclab worker) or not (an official one).
	RPCLab bool
	// ControlTimeout bounds each control exchange of Sweep with the
	// worker (a mark, a detail, the end of a run); past it the worker is
	// lost for the step. Zero means DefaultControlTimeout (30 s).
	ControlTimeout time.Duration

	cc *grpc.ClientConn
	ws pb.WorkerServiceClient
	wd workerpb.WorkerDetailClient
}

// Dial connects to the worker at addr and asks its CoreCount, waiting at
// most timeout for it to answer; an error names addr. It also learns
// whether the worker is rpclab's (WorkerDetail answers) or an official one.
func Dial(ctx context.Context, addr string, timeout time.Duration) (*Remote, error) {
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrUnreachable, addr, err)
	}
	r := &Remote{Addr: addr, cc: cc, ws: pb.NewWorkerServiceClient(cc), wd: workerpb.NewWorkerDetailClient(cc)}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cr, err := r.ws.CoreCount(cctx, &pb.CoreRequest{}, grpc.WaitForReady(true))
	if err != nil {
		cc.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w %s: CoreCount: %w", ErrUnreachable, addr, err)
	}
	r.Cores = int(cr.GetCores())
	// Mark 0 never exists: rpclab's worker answers NotFound, a worker
	// without WorkerDetail answers Unimplemented.
	_, err = r.wd.MarkDetail(cctx, &workerpb.MarkDetailRequest{Mark: 0})
	switch status.Code(err) {
	case codes.NotFound:
		r.RPCLab = true
	case codes.Unimplemented:
	default:
		cc.Close()
		return nil, fmt.Errorf("%w %s: MarkDetail: %w", ErrUnreachable, addr, err)
	}
	return r, nil
}

// controlTimeout is r's ControlTimeout, or its default.
func (r *Remote) controlTimeout() time.Duration {
	if r.ControlTimeout > 0 {
		return r.ControlTimeout
	}
	return DefaultControlTimeout
}

// Close closes the connection to the worker (the worker keeps running).
func (r *Remote) Close() error { return r.cc.Close() }

// Quit asks the worker to end its process.
func (r *Remote) Quit(ctx context.Context) error {
	if _, err := r.ws.QuitWorker(ctx, &pb.Void{}); err != nil {
		return fmt.Errorf("worker: %s: QuitWorker: %w", r.Addr, err)
	}
	return nil
}

// ClientRun is one RunClient on a worker: started by StartClient, marked
// by Mark, ended by Close.
type ClientRun struct {
	r      *Remote
	stream grpc.BidiStreamingClient[pb.ClientArgs, pb.ClientStatus]
	cancel context.CancelFunc
	marks  int64
}

// StartClient sends cfg as RunClient's setup and waits for the worker's
// first status, which it sends once its client runs. The run lasts until
// Close or until ctx ends.
func (r *Remote) StartClient(ctx context.Context, cfg *pb.ClientConfig) (*ClientRun, error) {
	sctx, cancel := context.WithCancel(ctx)
	stream, err := r.ws.RunClient(sctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("worker: %s: RunClient: %w", r.Addr, err)
	}
	c := &ClientRun{r: r, stream: stream, cancel: cancel}
	if err := stream.Send(&pb.ClientArgs{Argtype: &pb.ClientArgs_Setup{Setup: cfg}}); err != nil {
		_, err = stream.Recv() // the stream's real error
		cancel()
		return nil, fmt.Errorf("worker: %s: RunClient setup: %w", r.Addr, err)
	}
	if _, err := stream.Recv(); err != nil {
		cancel()
		return nil, fmt.Errorf("worker: %s: RunClient setup: %w", r.Addr, err)
	}
	return c, nil
}

// Mark asks for the client's stats since its start or its last reset;
// with reset, the next mark counts from this one. If ctx ends first, the
// run is cancelled (the worker stops its client) and Mark returns an error.
func (c *ClientRun) Mark(ctx context.Context, reset bool) (*pb.ClientStats, error) {
	type answer struct {
		st  *pb.ClientStatus
		err error
	}
	done := make(chan answer, 1)
	go func() {
		if err := c.stream.Send(&pb.ClientArgs{Argtype: &pb.ClientArgs_Mark{Mark: &pb.Mark{Reset_: reset}}}); err != nil {
			_, err = c.stream.Recv() // the stream's real error
			done <- answer{err: err}
			return
		}
		st, err := c.stream.Recv()
		done <- answer{st, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		c.cancel()
		<-done
		a.err = ctx.Err()
	}
	if a.err != nil {
		return nil, fmt.Errorf("worker: %s: mark: %w", c.r.Addr, a.err)
	}
	c.marks++
	return a.st.GetStats(), nil
}

// Detail returns rpclab's detail of the last mark (ErrNoDetail from an
// official worker, or before the first mark).
func (c *ClientRun) Detail(ctx context.Context) (*workerpb.MarkDetailResponse, error) {
	if !c.r.RPCLab || c.marks == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNoDetail, c.r.Addr)
	}
	d, err := c.r.wd.MarkDetail(ctx, &workerpb.MarkDetailRequest{Mark: c.marks})
	if err != nil {
		return nil, fmt.Errorf("worker: %s: MarkDetail %d: %w", c.r.Addr, c.marks, err)
	}
	return d, nil
}

// Close ends the run: it closes the driver's side of the stream and waits
// (at most until ctx ends) for the worker to end it.
func (c *ClientRun) Close(ctx context.Context) error {
	defer c.cancel()
	if err := c.stream.CloseSend(); err != nil {
		return fmt.Errorf("worker: %s: close: %w", c.r.Addr, err)
	}
	done := make(chan error, 1)
	go func() {
		for {
			if _, err := c.stream.Recv(); err != nil {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("worker: %s: close: %w", c.r.Addr, err)
	case <-ctx.Done():
		c.cancel()
		return fmt.Errorf("worker: %s: close: %w", c.r.Addr, ctx.Err())
	}
}
