// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package driver is the driver's side of gRPC's benchmark worker protocol
// (grpc.testing.WorkerService): it dials workers (rpclab's or any stack's
// official one), runs a sweep's steps on all of them at once, and merges
// their figures into one record per step with a per-worker breakdown, so
// that rpclab sweep --workers runs as one more client of a lab session.
package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc/codes"

	"github.com/rpclab/rpclab/internal/benchwire"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/usage"
	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/proto/workerpb"
)

// BusyLimit is the share of a worker's CPUs above which the worker, not
// the server, may be what limits a step (result.WorkerShare.GeneratorLimited).
const BusyLimit = 0.8

// DefaultControlTimeout is Remote.ControlTimeout's default: how long the
// driver waits for each control exchange with a worker (a mark, a detail,
// the end of a run) before it calls the worker lost, so that a hung worker
// cannot hang the sweep. A mark is not instant: the worker merges every
// histogram its run recorded into (up to stats.OwnHistograms of its own
// plus the shared ones, twice), which took a race-built worker 4 to 20 s on
// a 2-core machine at a load of 19; 10 s called such live workers lost.
const DefaultControlTimeout = 30 * time.Second

// Connect dials every worker at once. If any cannot be reached it returns
// an error naming each one that failed (and closes the others), so nothing
// runs on a partial fleet.
func Connect(ctx context.Context, addrs []string, timeout time.Duration) ([]*Remote, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: no workers given", ErrConfig)
	}
	remotes := make([]*Remote, len(addrs))
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		wg.Go(func() { remotes[i], errs[i] = Dial(ctx, a, timeout) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, r := range remotes {
			if r != nil {
				r.Close()
			}
		}
		return nil, err
	}
	return remotes, nil
}

// Split divides inflight among n workers: an even share each, the first
// inflight%n workers taking one more.
func Split(inflight, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = inflight / n
		if i < inflight%n {
			out[i]++
		}
	}
	return out
}

// Sweep runs every step of spec on all remotes at once and hands each
// step's record, the workers' merged figures with a per-worker breakdown,
// to sink as soon as it is measured. A worker lost during a step leaves
// that step partial (the survivors' figures, status failed) and the sweep
// goes on. When ctx ends, the step running is marked at once, every
// worker's run is ended, and its record (interrupted) is kept. Sweep
// returns ctx's error if stopped, an error counting the steps that failed
// or were partial, or sink's first error. prog (nil: none) is told each
// step as it starts and, once sink kept its record, as it ends.
func Sweep(ctx context.Context, remotes []*Remote, spec *loadgen.Spec, sink func(*result.Record) error, prog loadgen.Progress) error {
	return sweep(ctx, remotes, spec, nil, sink, prog)
}

// Open is the open loop of a sweep on workers: each step of the spec runs
// once at each rate, in the order given.
type Open struct {
	// Rates are the total offered loads in RPCs per second, split evenly
	// over the workers with an in-flight share (rate/n each: a rate has
	// no remainder to place).
	Rates []float64
	// Arrival is loadgen.Constant or loadgen.Poisson. Official workers
	// send Poisson arrivals only (gRPC's load_params), so Constant needs
	// every worker to be rpclab's.
	Arrival string
}

// Validate checks o against the workers it will run on; a *usage.Error
// names the setting at fault (ErrRate or ErrArrival).
func (o *Open) Validate(remotes []*Remote) error {
	lo := loadgen.OpenSpec{Rates: o.Rates, OpenLoop: loadgen.OpenLoop{Arrival: o.Arrival, MaxOutstanding: loadgen.DefaultMaxOutstanding}}
	if err := lo.Validate(); err != nil {
		return err
	}
	if o.Arrival != loadgen.Poisson {
		for _, r := range remotes {
			if !r.RPCLab {
				return usage.Errorf(loadgen.ErrArrival, "%s is an official worker, whose open loop is Poisson only (gRPC's load_params): want %s arrivals", r.Addr, loadgen.Poisson)
			}
		}
	}
	return nil
}

// SweepOpen is Sweep's open loop: every step at each of open's rates,
// the rate split evenly over the workers with an in-flight share, each of
// which sends at its share on its schedule. The records are open-loop records
// (spec.load_model open, spec.rate_rps the total, spec.arrival), with
// each worker's rate in workers[].rate_rps.
func SweepOpen(ctx context.Context, remotes []*Remote, spec *loadgen.Spec, open Open, sink func(*result.Record) error, prog loadgen.Progress) error {
	if err := open.Validate(remotes); err != nil {
		return err
	}
	return sweep(ctx, remotes, spec, &open, sink, prog)
}

// load is one step's load: rate 0 is the closed loop.
type load struct {
	rate    float64
	arrival string
}

func sweep(ctx context.Context, remotes []*Remote, spec *loadgen.Spec, open *Open, sink func(*result.Record) error, prog loadgen.Progress) error {
	if len(remotes) == 0 {
		return fmt.Errorf("%w: no workers given", ErrConfig)
	}
	type stepLoad struct {
		st loadgen.Step
		l  load
	}
	var steps []stepLoad
	for _, st := range spec.Steps() {
		if open == nil {
			steps = append(steps, stepLoad{st: st})
			continue
		}
		for _, r := range open.Rates {
			steps = append(steps, stepLoad{st, load{rate: r, arrival: open.Arrival}})
		}
	}
	var bad []string
	for i, sl := range steps {
		st := sl.st
		prog.Started(i, len(steps), st)
		rec := checked(runStep(ctx, remotes, spec, st, sl.l))
		if rec.Status == result.StatusFailed {
			bad = append(bad, fmt.Sprintf("step %d: %s", i+1, rec.Error))
		}
		if err := sink(rec); err != nil {
			return err // as loadgen: no end for a step whose record was refused
		}
		prog.Ended(i, len(steps), st, rec)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("worker: %d of %d steps failed or partial: %s", len(bad), len(steps), strings.Join(bad, "; "))
	}
	return nil
}

// part is one worker's side of a step.
type part struct {
	r      *Remote
	share  int
	rate   float64 // its share of an open-loop step's rate
	run    *ClientRun
	err    error // lost, and why
	stats  *pb.ClientStats
	detail *workerpb.MarkDetailResponse
}

// RunStep runs one step on all remotes at once: each starts a client
// with its share of the in-flight count, warms up (spec.StepWarmup: an
// adaptive pool's under adaptive.DefaultRule, as each worker sizes its own),
// is marked with a reset, measures for spec.Interval, and is marked
// again.
func RunStep(ctx context.Context, remotes []*Remote, spec *loadgen.Spec, st loadgen.Step) *result.Record {
	return checked(runStep(ctx, remotes, spec, st, load{}))
}

func runStep(ctx context.Context, remotes []*Remote, spec *loadgen.Spec, st loadgen.Step, l load) *result.Record {
	rec := newRecord(spec, st)
	shares := Split(st.Inflight, len(remotes))
	parts := make([]*part, len(remotes))
	busy := 0
	for i, r := range remotes {
		parts[i] = &part{r: r, share: shares[i]}
		if shares[i] > 0 {
			busy++
		}
	}
	if l.rate > 0 {
		rec.Spec.LoadModel, rec.Spec.RateRPS, rec.Spec.Arrival = "open", l.rate, l.arrival
		for _, p := range parts {
			if p.share > 0 {
				p.rate = l.rate / float64(busy)
			}
		}
	}
	// The runs outlive a Ctrl-C long enough to be marked and ended.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	begin := time.Now()
	each(parts, func(p *part) {
		cfg, err := clientConfig(spec, st, p.share, p.r.RPCLab)
		if err != nil {
			p.err = err
			return
		}
		openLoop(cfg, p.rate, l.arrival, p.r.RPCLab)
		p.run, p.err = p.r.StartClient(runCtx, cfg)
	})
	rec.WorkersStartNS = int64(time.Since(begin))
	defer each(parts, func(p *part) {
		if p.run != nil {
			cctx, ccancel := context.WithTimeout(runCtx, p.r.controlTimeout())
			_ = p.run.Close(cctx) // the figures are in; a run that ends badly changes none
			ccancel()
		}
	})
	if !loadgen.Sleep(ctx, spec.StepWarmup(st, nil)) {
		// Nothing measured yet: the runs end unmarked.
		merge(rec, parts, st)
		rec.Status, rec.Error = result.StatusInterrupted, "stopped during the warm-up: nothing was measured"
		return rec
	}
	marked := time.Now()
	each(parts, func(p *part) { p.mark(runCtx, true) })
	rec.StartedAt = time.Now().UTC()
	interrupted := !loadgen.Sleep(ctx, spec.Interval)
	each(parts, func(p *part) {
		p.mark(runCtx, false)
		if p.err == nil && p.stats != nil && p.r.RPCLab {
			dctx, dcancel := context.WithTimeout(runCtx, p.r.controlTimeout())
			p.detail, p.err = p.run.Detail(dctx)
			dcancel()
		}
		if p.err == nil && p.stats != nil {
			p.err = plausible(p, time.Since(marked))
		}
	})
	merge(rec, parts, st)
	finish(rec, parts, interrupted)
	return rec
}

// mark marks p's run (if it still runs), bounded by its worker's
// ControlTimeout.
func (p *part) mark(ctx context.Context, reset bool) {
	if p.run == nil || p.err != nil {
		return
	}
	mctx, cancel := context.WithTimeout(ctx, p.r.controlTimeout())
	defer cancel()
	if p.stats, p.err = p.run.Mark(mctx, reset); p.err != nil {
		p.stats = nil
	}
}

// each calls f on every part with a share, all at once, and waits.
func each(parts []*part, f func(*part)) {
	var wg sync.WaitGroup
	for _, p := range parts {
		if p.share > 0 {
			wg.Go(func() { f(p) })
		}
	}
	wg.Wait()
}

// clientConfig is the ClientConfig of one worker's share of st. The
// layout is given as client_channels x outstanding_rpcs_per_channel,
// which every worker reads, and as rpclab.conn, which rpclab's workers
// read; a pool:N on an official worker needs a share divisible by N.
func clientConfig(spec *loadgen.Spec, st loadgen.Step, share int, rpclab bool) (*pb.ClientConfig, error) {
	cfg := &pb.ClientConfig{
		ServerTargets:   []string{spec.Target},
		ClientType:      pb.ClientType_ASYNC_CLIENT,
		LoadParams:      &pb.LoadParams{Load: &pb.LoadParams_ClosedLoop{ClosedLoop: &pb.ClosedLoopParams{}}},
		PayloadConfig:   &pb.PayloadConfig{Payload: &pb.PayloadConfig_SimpleParams{SimpleParams: &pb.SimpleProtoParams{ReqSize: int32(spec.PayloadBytes), RespSize: int32(spec.PayloadBytes)}}},
		HistogramParams: &pb.HistogramParams{Resolution: benchwire.DefaultResolution, MaxPossible: benchwire.DefaultMaxPossible},
		ChannelArgs:     []*pb.ChannelArg{{Name: benchwire.ArgConn, Value: &pb.ChannelArg_StrValue{StrValue: st.Conn.String()}}},
	}
	if spec.RPCTimeout > 0 {
		cfg.ChannelArgs = append(cfg.ChannelArgs, &pb.ChannelArg{Name: benchwire.ArgRPCTimeout, Value: &pb.ChannelArg_IntValue{IntValue: int32(max(spec.RPCTimeout.Milliseconds(), 1))}})
	}
	switch st.RPC {
	case loadgen.Unary:
		cfg.RpcType = pb.RpcType_UNARY
	case loadgen.Streaming:
		cfg.RpcType = pb.RpcType_STREAMING
	default:
		return nil, fmt.Errorf("%w: rpc %q", ErrConfig, st.RPC)
	}
	switch st.Conn.Kind {
	case loadgen.Shared:
		cfg.ClientChannels, cfg.OutstandingRpcsPerChannel = 1, int32(share)
	case loadgen.PerWorker:
		cfg.ClientChannels, cfg.OutstandingRpcsPerChannel = int32(share), 1
	case loadgen.Pooled:
		switch {
		case rpclab:
			cfg.ClientChannels, cfg.OutstandingRpcsPerChannel = 1, int32(share)
		case share%st.Conn.N != 0:
			return nil, fmt.Errorf("%w: %s on an official worker needs an in-flight share divisible by %d, this worker's is %d", ErrConfig, st.Conn, st.Conn.N, share)
		default:
			cfg.ClientChannels, cfg.OutstandingRpcsPerChannel = int32(st.Conn.N), int32(share/st.Conn.N)
		}
	default:
		return nil, fmt.Errorf("%w: layout %s", ErrConfig, st.Conn)
	}
	return cfg, nil
}

// openLoop turns cfg into an open loop at rate (nothing at rate 0): the
// protocol's Poisson load_params, and for rpclab's workers the arrival
// process in rpclab.arrival.
func openLoop(cfg *pb.ClientConfig, rate float64, arrival string, rpclab bool) {
	if rate <= 0 {
		return
	}
	cfg.LoadParams = &pb.LoadParams{Load: &pb.LoadParams_Poisson{Poisson: &pb.PoissonParams{OfferedLoad: rate}}}
	if rpclab && arrival != "" {
		cfg.ChannelArgs = append(cfg.ChannelArgs, &pb.ChannelArg{Name: benchwire.ArgArrival, Value: &pb.ChannelArg_StrValue{StrValue: arrival}})
	}
}

// newRecord is the record of st as a one-machine step's (loadgen's one
// builder of a ping record): spec.inflight the total, spec.conns_requested
// the layout's (each worker opens its own), env the driver's (each
// worker's stack is in workers[].impl).
func newRecord(spec *loadgen.Spec, st loadgen.Step) *result.Record {
	return loadgen.NewRecord(spec, st, loadgen.Options{})
}

// merge fills rec with every worker's share and the merged figures.
func merge(rec *result.Record, parts []*part, st loadgen.Step) {
	all := stats.Merge().Hist
	var ok int64
	conns, counted := 0, true
	for _, p := range parts {
		w := result.WorkerShare{Addr: p.r.Addr, Impl: "official", Status: "ok", Cores: p.r.Cores, Inflight: p.share, RateRPS: p.rate, ConnsObserved: -1}
		if p.r.RPCLab {
			w.Impl = "rpclab"
		}
		switch {
		case p.share == 0:
			w.Status = "idle"
		case p.err != nil:
			w.Status, w.Error = "lost", p.err.Error()
		}
		if w.Status != "ok" || p.stats == nil {
			rec.Workers = append(rec.Workers, w)
			continue
		}
		h, byCode := share(&w, p)
		w.Requests, w.Errors = 0, map[string]int64{}
		for code, n := range byCode {
			w.Requests += n
			rec.Requests += n
			if code != codes.OK.String() {
				w.Errors[code] += n
				rec.Errors[code] += n
			}
		}
		if len(w.Errors) == 0 {
			w.Errors = nil
		}
		elapsed := time.Duration(p.stats.GetTimeElapsed() * float64(time.Second))
		w.DurationNS = int64(elapsed)
		w.CPUNS = int64((p.stats.GetTimeUser() + p.stats.GetTimeSystem()) * float64(time.Second))
		if elapsed > 0 {
			w.ThroughputRPS = float64(byCode[codes.OK.String()]) / elapsed.Seconds()
			if w.Cores > 0 {
				w.CPUBusy = float64(w.CPUNS) / (elapsed.Seconds() * 1e9 * float64(w.Cores))
			}
		}
		w.GeneratorLimited = w.CPUBusy > BusyLimit
		w.HostCPU = hostCPU(p.detail)
		w.Latency = stats.Quantiles(h)
		w.HistogramHDR, _ = stats.EncodeHistogram(h)
		all.Merge(h)
		ok += byCode[codes.OK.String()]
		rec.ThroughputRPS += w.ThroughputRPS
		rec.DurationNS = max(rec.DurationNS, w.DurationNS)
		rec.ClientCPUNS += w.CPUNS
		if w.ConnsObserved < 0 {
			counted = false
		}
		conns += w.ConnsObserved
		rec.Workers = append(rec.Workers, w)
	}
	rec.Latency = stats.Quantiles(all)
	rec.HistogramHDR, _ = stats.EncodeHistogram(all)
	if counted {
		rec.ConnsObserved = conns
	}
	if rec.Requests > 0 {
		rec.ClientCPUNSPerRPC = float64(rec.ClientCPUNS) / float64(rec.Requests)
	}
}

// hostCPU is the worker host's CPU in d (rpclab's MarkDetail), nil
// without it: an official worker, or a host whose CPU was not read.
func hostCPU(d *workerpb.MarkDetailResponse) *result.CPUTimes {
	if d == nil || len(d.GetCpus()) == 0 {
		return nil
	}
	t := &result.CPUTimes{BusyNS: d.GetHostBusyNs(), IdleNS: d.GetHostIdleNs(), StealNS: d.GetHostStealNs()}
	for _, c := range d.GetCpus() {
		t.CPUs = append(t.CPUs, int(c))
	}
	return t
}

// share reads one worker's histogram and counts by code name: rpclab's
// exactly from WorkerDetail, an official worker's from its buckets.
func share(w *result.WorkerShare, p *part) (*hdrhistogram.Histogram, map[string]int64) {
	if p.detail != nil {
		if h, err := stats.DecodeHistogram(p.detail.GetHistogramHdr()); err == nil {
			w.ConnsObserved = int(p.detail.GetConnsObserved())
			return h, p.detail.GetRequestsByCode()
		}
	}
	g := benchwire.Geometry{Resolution: benchwire.DefaultResolution, MaxPossible: benchwire.DefaultMaxPossible}
	h, rel := g.ToHDR(p.stats.GetLatencies())
	w.HistogramRelError = rel
	byCode := map[string]int64{}
	for _, r := range p.stats.GetRequestResults() {
		byCode[codes.Code(r.GetStatusCode()).String()] += r.GetCount()
	}
	if len(byCode) == 0 { // a worker that does not count by code (grpc-go's) counts its successes in the histogram
		byCode[codes.OK.String()] = h.TotalCount()
	}
	return h, byCode
}

// finish sets rec's status: failed and partial when a worker was lost,
// interrupted when ctx ended, failed when no RPC succeeded or more than
// loadgen.MaxErrorShare failed.
func finish(rec *result.Record, parts []*part, interrupted bool) {
	var lost []string
	for _, w := range rec.Workers {
		if w.Status == "lost" {
			lost = append(lost, w.Addr+": "+w.Error)
		}
	}
	ok := rec.Requests
	for _, n := range rec.Errors {
		ok -= n
	}
	switch {
	case len(lost) > 0:
		rec.Status, rec.Partial = result.StatusFailed, ok > 0
		rec.Error = fmt.Sprintf("%d of %d workers lost: %s", len(lost), len(parts), strings.Join(lost, "; "))
		if rec.Partial {
			rec.Error = "partial: " + rec.Error + " (the figures are the other workers')"
		}
	case interrupted:
		rec.Status, rec.Error = result.StatusInterrupted, "the interval was cut short"
		// Its workers' times can differ by as much as the interval (one
		// 4 ms, another 12 ms when cut short after milliseconds), and the
		// sum of their own rates overstates it past what its counts
		// give, which the record's own check refuses: its RPCs over its
		// duration, the longest worker's.
		if rec.DurationNS > 0 {
			rec.ThroughputRPS = float64(ok) / (float64(rec.DurationNS) / 1e9)
		}
	case ok == 0:
		rec.Status, rec.Error = result.StatusFailed, "no RPC completed in the interval"
	case float64(rec.Requests-ok) > loadgen.MaxErrorShare*float64(rec.Requests):
		rec.Status = result.StatusFailed
		rec.Error = fmt.Sprintf("%d of %d RPCs failed", rec.Requests-ok, rec.Requests)
	}
}
