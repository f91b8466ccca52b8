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

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/stats"
	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/proto/workerpb"
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
	args, err := recvSetup(w, stream.Recv)
	if err != nil {
		return err
	}
	cfg := args.GetSetup()
	if cfg == nil {
		return status.Errorf(codes.InvalidArgument, "%v: the first message must be the setup", ErrConfig)
	}
	run, err := clientRunOf(cfg, w.o.DialTimeout)
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	if err := run.admit(int(cfg.GetClientChannels()), int(cfg.GetOutstandingRpcsPerChannel()), w.o.MemoryBudget); err != nil {
		w.o.Logger.Info("worker: client refused", "err", err)
		return status.Error(codes.ResourceExhausted, err.Error())
	}
	// An offered load is sent on its schedule whatever the replies, as
	// rpclab's open loop sends on one machine, up to its default bound.
	load := loadgen.Load{Rate: run.rate, OpenLoop: loadgen.OpenLoop{Arrival: run.arrival, MaxOutstanding: loadgen.DefaultMaxOutstanding}}
	live, err := loadgen.StartLive(stream.Context(), &run.spec, run.step, load, loadgen.Options{})
	if err != nil {
		return status.Errorf(codes.Unavailable, "worker: start the client: %v", err)
	}
	defer live.Stop()
	w.o.Logger.Info("worker: client started", "target", run.spec.Target, "conn", run.step.Conn.String(), "inflight", run.step.Inflight, "rate", run.rate, "arrival", run.arrival)
	w.mu.Lock()
	w.details, w.marks = w.details[:0], 0
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
		w.keep(snap.detail)
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
	cpus, host, hostOK := m.clock.hostSince()
	if reset {
		m.clock = newCPUClock()
	}
	cs := &pb.ClientStats{
		Latencies:   m.run.geom.HistogramData(s.Hist),
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
	if hostOK {
		for _, c := range cpus {
			d.Cpus = append(d.Cpus, int32(c))
		}
		d.HostBusyNs, d.HostIdleNs, d.HostStealNs = int64(host.Busy), int64(host.Idle), int64(host.Steal)
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

// KeptMarks is how many marks' detail a worker keeps: the latest ones of
// the current or last RunClient. A driver asks for a mark's detail right
// after the mark (rpclab's asks for the last one only), so older ones are
// dropped: a run of any length holds at most KeptMarks details (each an
// HDR histogram of a few KiB to about 20 KiB, and a few numbers).
const KeptMarks = 16

// keep numbers d as the next mark and keeps it, dropping the oldest beyond
// KeptMarks.
func (w *Worker) keep(d *workerpb.MarkDetailResponse) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.marks++
	d.Mark = w.marks
	if len(w.details) == KeptMarks {
		copy(w.details, w.details[1:])
		w.details = w.details[:KeptMarks-1]
	}
	w.details = append(w.details, d)
}

// MarkDetail returns the detail of one mark of the current or last
// RunClient (mark 1 is the first Mark after the setup), among the last
// KeptMarks.
func (w *Worker) MarkDetail(_ context.Context, req *workerpb.MarkDetailRequest) (*workerpb.MarkDetailResponse, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i, first := req.GetMark(), w.marks-int64(len(w.details))+1
	if i < first || i > w.marks {
		return nil, status.Errorf(codes.NotFound, "worker: no mark %d (the current or last client has marks %d..%d: a worker keeps the last %d)", i, first, w.marks, KeptMarks)
	}
	return w.details[i-first], nil
}
