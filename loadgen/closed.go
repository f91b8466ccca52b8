// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/pool"
	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/stats"
)

// Full method names of the BenchmarkService calls the workers make.
const (
	unaryMethod     = "/grpc.testing.BenchmarkService/UnaryCall"
	streamingMethod = "/grpc.testing.BenchmarkService/StreamingCall"
)

var streamDesc = grpc.StreamDesc{StreamName: "StreamingCall", ServerStreams: true, ClientStreams: true}

// Options are the Go-only settings of a run (not echoed into records).
type Options struct {
	// DialOptions are added to every connection (default: plaintext).
	DialOptions []grpc.DialOption
	// ClientCPUs lists the CPUs the client is pinned to, for the record.
	ClientCPUs []int
}

// phases of a step, read by every worker without a lock.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseDone
)

// RunStep runs one closed-loop step: it opens the step's connections, waits
// until they are ready (at most spec.DialTimeout), runs step.Inflight workers
// that each keep one RPC in flight for spec.Warmup then spec.Interval, and
// returns the record of the interval. If ctx ends during the interval the
// record covers what ran and has status "interrupted"; if it ends earlier,
// RunStep returns ctx's error and no record.
func RunStep(ctx context.Context, spec *Spec, step Step, o Options) (*result.Record, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	rec, _, err := runStep(ctx, spec, step, o)
	return rec, err
}

// runStep is RunStep; cause is the error of a failed set-up (nil otherwise).
func runStep(ctx context.Context, spec *Spec, step Step, o Options) (rec *result.Record, cause, err error) {
	rec = newRecord(spec, step, o)
	pools, err := openLayout(spec.Target, step, o)
	if err != nil {
		return failed(rec, err), err, nil
	}
	defer func() {
		for _, p := range pools {
			_ = p.Close()
		}
	}()
	dctx, cancel := context.WithTimeout(ctx, spec.DialTimeout)
	for _, p := range pools {
		if err = p.Connect(dctx); err != nil {
			break
		}
	}
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		cause = fmt.Errorf("%w: no connection to %s within %v: %v", ErrUnreachable, spec.Target, spec.DialTimeout, err)
		return failed(rec, cause), cause, nil
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var phase atomic.Int32
	recs := make([]*stats.Recorder, step.Inflight)
	var wg sync.WaitGroup
	body := make([]byte, spec.PayloadBytes)
	for i := range recs {
		recs[i] = stats.NewRecorder()
		w := &worker{
			cc:      pools[i%len(pools)],
			rec:     recs[i],
			phase:   &phase,
			timeout: spec.RPCTimeout,
			req: &pb.SimpleRequest{
				ResponseSize: int32(spec.PayloadBytes),
				Payload:      &pb.Payload{Body: body},
			},
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if step.RPC == Streaming {
				w.streaming(runCtx)
			} else {
				w.unary(runCtx)
			}
		}()
	}

	interrupted := false
	endStep := func() {
		phase.Store(phaseDone)
		stop()
		wg.Wait()
	}
	if !sleepCtx(ctx, spec.Warmup) {
		endStep()
		return nil, nil, ctx.Err()
	}
	cpu0, _ := procstat.CPUTime(0)
	start := time.Now()
	phase.Store(phaseMeasure)
	rec.StartedAt = start.UTC()

	// Count the connections the OS sees half-way through the interval.
	rec.ConnsObserved = -1
	if sleepCtx(ctx, spec.Interval/2) {
		if n, err := procstat.ConnsTo(0, hostPort(spec.Target)); err == nil {
			rec.ConnsObserved = n
		}
		interrupted = !sleepCtx(ctx, spec.Interval-time.Since(start))
	} else {
		interrupted = true
	}
	phase.Store(phaseDone)
	elapsed := time.Since(start)
	cpu1, _ := procstat.CPUTime(0)
	stop()
	wg.Wait()

	sum := stats.Merge(recs...)
	fill(rec, sum, elapsed, cpu1-cpu0)
	if interrupted {
		rec.Status = result.StatusInterrupted
		rec.Error = "interrupted: the interval was cut short"
	}
	return rec, nil, nil
}

// worker keeps one RPC in flight at a time on cc.
type worker struct {
	cc      grpc.ClientConnInterface
	rec     *stats.Recorder
	phase   *atomic.Int32
	timeout time.Duration
	req     *pb.SimpleRequest
}

// done reports a finished RPC: it is recorded only if it both began and
// ended inside the measured interval, and did not fail because the run
// itself was stopped.
func (w *worker) done(ctx context.Context, began int32, d time.Duration, err error) {
	if err != nil && ctx.Err() != nil {
		return
	}
	if began == phaseMeasure && w.phase.Load() == phaseMeasure {
		w.rec.Record(d, status.Code(err))
	}
}

func (w *worker) unary(ctx context.Context) {
	resp := &pb.SimpleResponse{}
	for {
		ph := w.phase.Load()
		if ph == phaseDone || ctx.Err() != nil {
			return
		}
		t0 := time.Now()
		var err error
		if w.timeout > 0 {
			cctx, cancel := context.WithTimeout(ctx, w.timeout)
			err = w.cc.Invoke(cctx, unaryMethod, w.req, resp)
			cancel()
		} else {
			err = w.cc.Invoke(ctx, unaryMethod, w.req, resp)
		}
		w.done(ctx, ph, time.Since(t0), err)
	}
}

func (w *worker) streaming(ctx context.Context) {
	resp := &pb.SimpleResponse{}
	for w.phase.Load() != phaseDone && ctx.Err() == nil {
		ph := w.phase.Load()
		t0 := time.Now()
		s, err := w.cc.NewStream(ctx, &streamDesc, streamingMethod)
		if err != nil {
			w.done(ctx, ph, time.Since(t0), err)
			continue
		}
		for {
			ph := w.phase.Load()
			if ph == phaseDone || ctx.Err() != nil {
				return
			}
			t0 := time.Now()
			// SendMsg reports a broken stream as io.EOF; RecvMsg then
			// returns the stream's status, so its error is the one kept.
			_ = s.SendMsg(w.req)
			err := s.RecvMsg(resp)
			if err == nil {
				w.done(ctx, ph, time.Since(t0), nil)
				continue
			}
			if errors.Is(err, io.EOF) {
				err = status.Error(codes.Unavailable, "stream ended by the server")
			}
			w.done(ctx, ph, time.Since(t0), err)
			break
		}
	}
}

func openLayout(target string, step Step, o Options) ([]*pool.Pool, error) {
	dial := append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, o.DialOptions...)
	var pools []*pool.Pool
	policy := pool.RoundRobin
	if step.Conn.Pick == LeastLoaded {
		policy = pool.LeastLoaded
	}
	add := func(size int) error {
		p, err := pool.New(target, pool.WithSize(size), pool.WithPolicy(policy), pool.WithDialOptions(dial...))
		if err != nil {
			return err
		}
		pools = append(pools, p)
		return nil
	}
	var err error
	switch step.Conn.Kind {
	case Shared:
		err = add(1)
	case PerWorker:
		for i := 0; i < step.Inflight && err == nil; i++ {
			err = add(1)
		}
	case Pooled:
		err = add(step.Conn.N)
	default:
		err = fmt.Errorf("unknown connection mode %q", step.Conn.Kind)
	}
	if err != nil {
		for _, p := range pools {
			_ = p.Close()
		}
		return nil, err
	}
	return pools, nil
}

func newRecord(spec *Spec, step Step, o Options) *result.Record {
	host, _ := os.Hostname()
	return &result.Record{
		SchemaVersion: result.SchemaVersion,
		Kind:          "ping",
		Status:        result.StatusOK,
		StartedAt:     time.Now().UTC(),
		Spec: result.Spec{
			Target:         spec.Target,
			RPC:            step.RPC,
			ConnMode:       step.Conn.Kind,
			ConnsRequested: step.Conn.Conns(step.Inflight),
			Pick:           step.Conn.Pick,
			Inflight:       step.Inflight,
			PayloadBytes:   spec.PayloadBytes,
			WarmupNS:       int64(spec.Warmup),
			IntervalNS:     int64(spec.Interval),
			LoadModel:      "closed",
			Server:         spec.Server,
		},
		Env: result.Env{
			Language:       "go",
			GRPCImpl:       "grpc-go",
			GRPCVersion:    grpc.Version,
			RuntimeVersion: runtime.Version(),
			HostCPUs:       runtime.NumCPU(),
			ClientCPUs:     o.ClientCPUs,
			Hostname:       host,
			OS:             runtime.GOOS,
		},
		Errors:        map[string]int64{},
		ConnsObserved: -1,
	}
}

func failed(rec *result.Record, err error) *result.Record {
	rec.Status = result.StatusFailed
	rec.Error = err.Error()
	return rec
}

func fill(rec *result.Record, sum *stats.Summary, elapsed, cpu time.Duration) {
	rec.Requests = sum.Total()
	rec.Errors = sum.Errors()
	rec.DurationNS = int64(elapsed)
	if elapsed > 0 {
		rec.ThroughputRPS = float64(sum.OK()) / elapsed.Seconds()
	}
	rec.Latency = stats.Quantiles(sum.Hist)
	if h, err := stats.EncodeHistogram(sum.Hist); err == nil {
		rec.HistogramHDR = h
	}
	rec.ClientCPUNS = int64(cpu)
	if rec.Requests > 0 {
		rec.ClientCPUNSPerRPC = float64(cpu) / float64(rec.Requests)
	}
	if sum.OK() == 0 {
		rec.Status = result.StatusFailed
		switch {
		case rec.Requests == 0:
			rec.Error = "no RPC completed in the interval"
		default:
			rec.Error = fmt.Sprintf("every RPC failed (%d)", rec.Requests)
		}
	}
}

// hostPort strips a "scheme:///" prefix from a target.
func hostPort(target string) string {
	if i := strings.Index(target, ":///"); i >= 0 {
		return target[i+4:]
	}
	return target
}

// sleepCtx sleeps for d; it returns false if ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
