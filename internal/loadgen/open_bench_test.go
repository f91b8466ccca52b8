// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	gstats "google.golang.org/grpc/benchmark/stats"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

var (
	benchRates = flag.String("loadgen.rates", "1000,10000", "BenchmarkOpenLoop: the offered loads, RPCs per second, comma-separated")
	benchConns = flag.Int("loadgen.conns", 8, "BenchmarkOpenLoop: the connections of conn=per-worker")
)

// BenchmarkOpenLoop sets rpclab's open loop beside grpc-go's own, each
// sending b.N unary RPCs on a Poisson schedule at rate RPCs per second to
// a real server, over one connection (conn=shared) or -loadgen.conns
// (conn=per-worker):
//
//   - path=grpc-open: grpc-go's benchmark worker's open loop
//     (google.golang.org/grpc@v1.85.0, benchmark/worker/benchmark_client.go:
//     unaryLoop, lines 259-294, and poissonUnary, lines 342-355): one chain
//     per channel x outstanding RPC, here -loadgen.conns chains (one
//     channel with that many outstanding RPCs, or that many channels with
//     one each), each at rate/chains so that the total is rate; each link
//     a time.AfterFunc after an exponential gap (math/rand/v2's
//     ExpFloat64/lambda) that starts a goroutine for its call
//     (benchmark.DoUnaryCall, as grpcDoUnaryCall: a new request per call,
//     the generated stub, context.Background(); no bound on the calls in
//     flight), timed from
//     the actual send with time.Now and time.Since into the chain's
//     mutex-guarded grpc-go histogram (the driver's default geometry: 1%
//     buckets up to 60 s), and schedules the next link. The only addition
//     is a shared countdown that ends the chains after b.N sends.
//   - path=open: rpclab's one-machine open loop (runOpen, as rpclab
//     sweep --rps R --arrival poisson runs a step, default pacing and
//     max-outstanding): the step's frame, the scheduler and its pacing,
//     the dispatcher's hand-off to idle senders, dispatcher.send timed from
//     the intended send into HDR recorders, the drain. The interval is
//     warm-up free and ends where the seeded schedule's send b.N+1 would
//     be due, so exactly b.N sends are due in it.
//   - path=open-timer: the same with --pacing timer (Go's timers only, as
//     grpc-go's loop waits: they wake an idle client up to about 1 ms late,
//     where the default pacing arms a kernel timer for each send).
//
// Both time the whole run, connections opened and closed included; each
// reports its client process's CPU (user+sys, every thread, getrusage)
// per RPC as cpu-ns/rpc, its context switches per RPC (voluntary and not,
// getrusage: mostly the wake-ups of an idle client) as csw/rpc, the RPCs
// it completed as rpcs, and rpcs over the run's wall time as rpcs/s;
// rpclab's paths add their record's schedule lag (lag-p50-us, lag-p99-us)
// and median latency from the intended send (lat-p50-us): grpc-go's chains draw each gap from when
// their timer fired, so a late timer lowers the rate they achieve. With
// the server in this process (no -loadgen.target) the server's CPU counts
// too. experiments/peers/openfloor.sh runs it against rpclab serve
// (docs/peers.md, "The open loop's floor").
func BenchmarkOpenLoop(b *testing.B) {
	target := benchServer(b)
	rates, err := parseRates(*benchRates)
	if err != nil {
		b.Fatal(err)
	}
	if *benchConns < 1 {
		b.Fatalf("-loadgen.conns %d: want at least 1", *benchConns)
	}
	paths := []struct {
		name string
		run  func(b *testing.B, conns int, rate float64) int64
	}{
		{"grpc-open", func(b *testing.B, conns int, rate float64) int64 {
			return grpcOpenLoop(b, target, conns, *benchConns, rate, int64(b.N))
		}},
		{"open", func(b *testing.B, conns int, rate float64) int64 {
			return rpclabOpenLoop(b, target, conns, rate, b.N, "")
		}},
		{"open-timer", func(b *testing.B, conns int, rate float64) int64 {
			return rpclabOpenLoop(b, target, conns, rate, b.N, TimerPacing)
		}},
	}
	for _, p := range paths {
		for _, conn := range []ConnKind{Shared, PerWorker} {
			conns := 1
			if conn == PerWorker {
				conns = *benchConns
			}
			for _, rate := range rates {
				b.Run(fmt.Sprintf("path=%s/conn=%s/rate=%g", p.name, conn, rate), func(b *testing.B) {
					b.ReportAllocs()
					var ru0, ru1 syscall.Rusage
					_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
					cpu0, err := procstat.CPUTime(0)
					if err != nil {
						b.Fatal(err)
					}
					b.ResetTimer()
					t0 := time.Now()
					n := p.run(b, conns, rate)
					took := time.Since(t0)
					b.StopTimer()
					cpu1, _ := procstat.CPUTime(0)
					_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
					b.ReportMetric(float64(n), "rpcs")
					b.ReportMetric(float64(n)/took.Seconds(), "rpcs/s")
					if n > 0 {
						b.ReportMetric(float64(cpu1-cpu0)/float64(n), "cpu-ns/rpc")
						b.ReportMetric(float64(ru1.Nvcsw-ru0.Nvcsw+ru1.Nivcsw-ru0.Nivcsw)/float64(n), "csw/rpc")
					}
				})
			}
		}
	}
}

// parseRates reads -loadgen.rates.
func parseRates(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(r > 0) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("-loadgen.rates: %q is not a positive number of RPCs per second", f)
		}
		out = append(out, r)
	}
	return out, nil
}

// grpcLockingHistogram is grpc-go's worker's lockingHistogram
// (benchmark_client.go, lines 48-58): a histogram per chain behind a
// mutex, so the driver's marks can swap it while calls record.
type grpcLockingHistogram struct {
	mu   sync.Mutex
	hist *gstats.Histogram
}

func (h *grpcLockingHistogram) add(v int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	_ = h.hist.Add(v)
}

// grpcOpenLoop runs grpc-go's worker's Poisson loop (see BenchmarkOpenLoop)
// with chains chains over conns channels (chain i on channel i%conns) at
// rate in all until n sends were made, and waits for their replies; it
// returns the RPCs that succeeded.
func grpcOpenLoop(b *testing.B, target string, conns, chains int, rate float64, n int64) int64 {
	// The driver's default histogram parameters (resolution 0.01, max 60 s)
	// as startBenchmarkClient turns them into options (lines 238-243).
	opts := gstats.HistogramOptions{NumBuckets: int(math.Log(60e9)/math.Log(1.01)) + 1, GrowthFactor: .01, BaseBucketSize: 1.01}
	lambda := rate / float64(chains)
	var left atomic.Int64
	left.Store(n)
	var ok atomic.Int64
	var running, calls sync.WaitGroup
	hists := make([]grpcLockingHistogram, chains)
	ccs := make([]*grpc.ClientConn, conns)
	for i := range ccs {
		cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		ccs[i] = cc
	}
	// poissonUnary, with the countdown: a link past the n-th send ends its
	// chain.
	var link func(client pb.BenchmarkServiceClient, idx int)
	link = func(client pb.BenchmarkServiceClient, idx int) {
		if left.Add(-1) < 0 {
			running.Done()
			return
		}
		calls.Add(1)
		go func() {
			defer calls.Done()
			start := time.Now()
			if err := grpcDoUnaryCall(client, 0, 0); err != nil {
				b.Error(err)
				return
			}
			hists[idx].add(int64(time.Since(start)))
			ok.Add(1)
		}()
		time.AfterFunc(time.Duration(rand.ExpFloat64()/lambda*float64(time.Second)), func() { link(client, idx) })
	}
	// unaryLoop: one goroutine per chain schedules its first link.
	for i := range chains {
		client := pb.NewBenchmarkServiceClient(ccs[i%conns])
		hists[i].hist = gstats.NewHistogram(opts)
		running.Add(1)
		go func() {
			time.AfterFunc(time.Duration(rand.ExpFloat64()/lambda*float64(time.Second)), func() { link(client, i) })
		}()
	}
	running.Wait()
	calls.Wait()
	for _, cc := range ccs {
		_ = cc.Close()
	}
	return ok.Load()
}

// grpcDoUnaryCall is grpc-go's benchmark.DoUnaryCall (benchmark/benchmark.go,
// lines 280-291, with NewPayload and setPayload, lines 47-66) on rpclab's
// wire-compatible generated code: grpc-go's benchmark package registers
// the same proto files as rpclab's benchpb, and one binary cannot hold
// both.
func grpcDoUnaryCall(tc pb.BenchmarkServiceClient, reqSize, respSize int) error {
	pl := &pb.Payload{Type: pb.PayloadType_COMPRESSABLE, Body: make([]byte, reqSize)}
	req := &pb.SimpleRequest{ResponseType: pl.Type, ResponseSize: int32(respSize), Payload: pl}
	if _, err := tc.UnaryCall(context.Background(), req); err != nil {
		return fmt.Errorf("/BenchmarkService/UnaryCall(_, _) = _, %v, want _, <nil>", err)
	}
	return nil
}

// rpclabOpenLoop runs one open-loop step of rpclab (see BenchmarkOpenLoop)
// with n sends due and pacing ("": the default), and returns the RPCs it
// recorded.
func rpclabOpenLoop(b *testing.B, target string, conns int, rate float64, n int, pacing string) int64 {
	open := &OpenSpec{Rates: []float64{rate}, OpenLoop: OpenLoop{Arrival: Poisson, Pacing: pacing, MaxOutstanding: DefaultMaxOutstanding}}
	spec := &Spec{Target: target, RPCs: []string{Unary}, Inflight: []int{conns}, Interval: openInterval(open, rate, n), DialTimeout: 5 * time.Second}
	kind := Shared
	if conns > 1 {
		kind = PerWorker
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	load := open.load(rate)
	rec, cause, err := runOpen(ctx, spec, Step{Conn: ConnMode{Kind: kind}, RPC: Unary, Inflight: conns}, nil, &load, Options{})
	if err != nil || cause != nil {
		b.Fatalf("runOpen: %v %v", err, cause)
	}
	if rec.Status != result.StatusOK {
		b.Errorf("the step ended %s: %s", rec.Status, rec.Error)
	}
	if rec.ScheduleLag != nil {
		b.ReportMetric(float64(rec.ScheduleLag.P50NS)/1e3, "lag-p50-us")
		b.ReportMetric(float64(rec.ScheduleLag.P99NS)/1e3, "lag-p99-us")
	}
	b.ReportMetric(float64(rec.Latency.P50NS)/1e3, "lat-p50-us")
	return rec.Requests
}

// openInterval is the warm-up free interval in which exactly n sends of
// open's schedule at rate are due (runOpen seeds its pacer with
// open.Seed+1): it ends at send n+1's offset.
func openInterval(open *OpenSpec, rate float64, n int) time.Duration {
	p, _ := NewPacer(open.Arrival, rate, open.Seed+1)
	var off time.Duration
	for range n + 1 {
		off = p.Next()
	}
	return off
}
