// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/pool"
	"github.com/rpclab/rpclab/pool/adaptive"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// A Policy sizes rpclab's pool: rpclab's own policy, or an anchor's Sizer.
// Every policy runs on the same pool between 1 and max connections, so
// only the policy differs.
type Policy struct {
	Name string
	// Option makes the pool adaptive between 1 and maxConns by the policy
	// (a fresh policy state each call).
	Option func(maxConns int) pool.Option
}

// Policies returns rpclab's policy first (the base of the comparison),
// then Spanner's, gRFC A105's and yarpc's.
func Policies() []Policy {
	sizer := func(s func() adaptive.Sizer) func(int) pool.Option {
		return func(maxConns int) pool.Option { return adaptive.WithSizer(1, maxConns, SizerInterval, s()) }
	}
	return []Policy{
		{Name: "rpclab", Option: func(maxConns int) pool.Option { return pool.WithAdaptive(1, maxConns) }},
		{Name: "spanner", Option: sizer(func() adaptive.Sizer { return NewSpanner() })},
		{Name: "a105", Option: sizer(func() adaptive.Sizer { return NewStreamSlots() })},
		{Name: "yarpc", Option: sizer(func() adaptive.Sizer { return NewYarpc() })},
	}
}

// PolicyRun is one closed-loop run of a policy.
type PolicyRun struct {
	Policy    string
	Inflight  int
	RPS       float64       // successful RPCs per second over the interval
	P99       time.Duration // of the successful RPCs
	Failed    int64         // RPCs that failed during the interval
	CPUPerRPC time.Duration // this process's user+system CPU per RPC
	// Conns is the pool's size at the interval's end, MaxConns the most it
	// had during the interval, Resizes its changes of size then.
	Conns, MaxConns, Resizes int
	// Start is when the interval began; Events the pool's decisions over
	// the whole run, warm-up included (pool.Stats().Events).
	Start  time.Time
	Events []pool.Event
}

// Link is what RunPolicyOver puts on each connection: an emulated
// network on the client's end of every connection the pool dials (each
// connection its own link: a rate is per connection, as a per-flow
// shaper's, or one TCP flow's window over a long path, would be), and the
// request and response payload of each ping. The zero Link is loopback
// and empty pings.
type Link struct {
	Net     netem.Network
	Payload int // bytes each way
}

// RunPolicy keeps inflight unary pings in flight through a pool sized by
// pol (at most maxConns connections) against target: warmup unmeasured (the
// time the policy has to settle), then interval measured.
func RunPolicy(ctx context.Context, target string, pol Policy, maxConns, inflight int, warmup, interval time.Duration) (PolicyRun, error) {
	return RunPolicyOver(ctx, target, pol, maxConns, inflight, warmup, interval, Link{})
}

// RunPolicyOver is RunPolicy over link.
func RunPolicyOver(ctx context.Context, target string, pol Policy, maxConns, inflight int, warmup, interval time.Duration, link Link) (PolicyRun, error) {
	out := PolicyRun{Policy: pol.Name, Inflight: inflight}
	if inflight < 1 || maxConns < 1 {
		return out, ErrConns
	}
	if link.Payload < 0 {
		return out, fmt.Errorf("policy: negative payload %d", link.Payload)
	}
	popts, err := policyOptions(pol, maxConns, link)
	if err != nil {
		return out, err
	}
	p, err := pool.New(target, popts...)
	if err != nil {
		return out, fmt.Errorf("policy: policy %s: %w", pol.Name, err)
	}
	defer func() { _ = p.Close() }()
	if err := p.Connect(ctx); err != nil {
		return out, fmt.Errorf("policy: policy %s: %w", pol.Name, err)
	}
	client := pb.NewBenchmarkServiceClient(p)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var measuring atomic.Bool
	recs := make([]*stats.Recorder, inflight)
	var wg sync.WaitGroup
	for i := range recs {
		recs[i] = stats.NewRecorder()
		wg.Add(1)
		go func(r *stats.Recorder) {
			defer wg.Done()
			req := &pb.SimpleRequest{Payload: &pb.Payload{Body: make([]byte, link.Payload)}, ResponseSize: int32(link.Payload)}
			for runCtx.Err() == nil {
				start := time.Now()
				_, err := client.UnaryCall(runCtx, req)
				if measuring.Load() && runCtx.Err() == nil {
					r.Record(time.Since(start), status.Code(err))
				}
			}
		}(recs[i])
	}
	if !sleep(ctx, warmup) {
		return out, ctx.Err()
	}
	start, cpu0 := time.Now(), processCPU()
	measuring.Store(true)
	ok := sleep(ctx, interval)
	measuring.Store(false)
	end, cpu1 := time.Now(), processCPU()
	stop()
	wg.Wait()
	if !ok {
		return out, ctx.Err()
	}
	sum := stats.Merge(recs...)
	if sum.OK() == 0 {
		return out, errors.New("policy: policy " + pol.Name + ": no RPC succeeded")
	}
	out.RPS = float64(sum.OK()) / end.Sub(start).Seconds()
	out.P99 = time.Duration(sum.Hist.ValueAtQuantile(99))
	out.Failed = sum.Total() - sum.OK()
	out.CPUPerRPC = (cpu1 - cpu0) / time.Duration(sum.OK())
	st := p.Stats()
	out.Conns, out.Start, out.Events = len(st.Conns), start, st.Events
	out.MaxConns = sizeAt(st.Events, start)
	for _, e := range st.Events {
		if e.From != e.To && e.At.After(start) && !e.At.After(end) {
			out.Resizes++
			out.MaxConns = max(out.MaxConns, e.To)
		}
	}
	return out, nil
}

// policyOptions are the pool options of a run under pol: its sizing, and
// over a link, a dialer through the emulated link. pool.WithDialer, not
// grpc.WithContextDialer: the adaptive pool wraps a dialer given this way
// to time socket writes, and a grpc.WithContextDialer would take its write
// meter out of the path.
func policyOptions(pol Policy, maxConns int, link Link) ([]pool.Option, error) {
	popts := []pool.Option{pol.Option(maxConns), pool.WithDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials()))}
	if link.Net.IsZero() {
		return popts, nil
	}
	if err := link.Net.Validate(); err != nil {
		return nil, fmt.Errorf("policy: link: %w", err)
	}
	dial := link.Net.Dialer(nil)
	return append(popts, pool.WithDialer(func(ctx context.Context, addr string) (net.Conn, error) { return dial(ctx, "tcp", addr) })), nil
}

// sizeAt is the pool's size at t by its history (1, its min, before any
// resize).
func sizeAt(events []pool.Event, t time.Time) int {
	n := 1
	for _, e := range events {
		if e.From != e.To && !e.At.After(t) {
			n = e.To
		}
	}
	return n
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// processCPU is this process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
