// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package worker

import (
	"context"
	"errors"
	"io"
	"runtime"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/loadgen"
	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/proto/workerpb"
	"github.com/rpclab/rpclab/stats"
)

// RunClient runs the setup's load until the driver closes the stream. It
// answers the setup with one ClientStatus once the connections are ready,
// then each mark with exactly one, counting since the setup or the last
// reset; the mark's detail is then ready for MarkDetail.
func (w *Worker) RunClient(stream grpc.BidiStreamingServer[pb.ClientArgs, pb.ClientStatus]) error {
	if !w.claim(&w.client) {
		return status.Errorf(codes.FailedPrecondition, "%v: a RunClient is already running", ErrBusy)
	}
	defer w.release(&w.client)
	args, err := stream.Recv()
	if err != nil {
		return err
	}
	if args.GetSetup() == nil {
		return status.Errorf(codes.InvalidArgument, "%v: the first message must be the setup", ErrConfig)
	}
	run, err := clientRunOf(args.GetSetup(), w.o.DialTimeout)
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	// An offered load is sent on its schedule whatever the replies, as
	// rpclab's open loop sends on one machine, up to its default bound.
	load := loadgen.Load{Rate: run.rate, Arrival: run.arrival, MaxOutstanding: loadgen.DefaultMaxOutstanding}
	live, err := loadgen.StartLive(stream.Context(), &run.spec, run.step, load, loadgen.Options{})
	if err != nil {
		return status.Errorf(codes.Unavailable, "worker: start the client: %v", err)
	}
	defer live.Stop()
	w.o.Logger.Info("worker: client started", "target", run.spec.Target, "conn", run.step.Conn.String(), "inflight", run.step.Inflight, "rate", run.rate, "arrival", run.arrival)
	w.mu.Lock()
	w.details = nil
	w.mu.Unlock()
	m := &marker{run: run, live: live, clock: newCPUClock()}
	st := &pb.ClientStatus{Stats: m.mark(false).stats}
	for {
		if err := stream.Send(st); err != nil {
			return err
		}
		args, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if args.GetMark() == nil {
			return status.Errorf(codes.InvalidArgument, "%v: after the setup, only marks", ErrConfig)
		}
		snap := m.mark(args.GetMark().GetReset_())
		w.mu.Lock()
		snap.detail.Mark = int64(len(w.details) + 1)
		w.details = append(w.details, snap.detail)
		w.mu.Unlock()
		st = &pb.ClientStatus{Stats: snap.stats}
	}
}

// marker turns a Live run's snapshots into the driver's ClientStats and
// rpclab's MarkDetail.
type marker struct {
	run   *clientRun
	live  *loadgen.Live
	clock cpuClock
}

type markSnap struct {
	stats  *pb.ClientStats
	detail *workerpb.MarkDetailResponse
}

func (m *marker) mark(reset bool) markSnap {
	s := m.live.Snapshot(reset)
	_, user, sys := m.clock.since()
	if reset {
		m.clock = newCPUClock()
	}
	cs := &pb.ClientStats{
		Latencies:   m.run.geom.histogramData(s.Hist),
		TimeElapsed: s.Elapsed.Seconds(),
		TimeUser:    user.Seconds(),
		TimeSystem:  sys.Seconds(),
	}
	d := &workerpb.MarkDetailResponse{
		RequestsByCode: map[string]int64{},
		ElapsedNs:      int64(s.Elapsed),
		CpuNs:          int64(user + sys),
		ConnsObserved:  int64(s.Conns),
		HostCpus:       int32(runtime.NumCPU()),
	}
	for code, n := range s.ByCode {
		if n > 0 {
			cs.RequestResults = append(cs.RequestResults, &pb.RequestResultCount{StatusCode: int32(code), Count: n})
			d.RequestsByCode[codes.Code(code).String()] = n
		}
	}
	if h, err := stats.EncodeHistogram(s.Hist); err == nil {
		d.HistogramHdr = h
	}
	return markSnap{stats: cs, detail: d}
}

// MarkDetail returns the detail of one mark of the current or last
// RunClient (mark 1 is the first Mark after the setup).
func (w *Worker) MarkDetail(_ context.Context, req *workerpb.MarkDetailRequest) (*workerpb.MarkDetailResponse, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := req.GetMark()
	if i < 1 || i > int64(len(w.details)) {
		return nil, status.Errorf(codes.NotFound, "worker: no mark %d (the current or last client has %d)", i, len(w.details))
	}
	return w.details[i-1], nil
}
