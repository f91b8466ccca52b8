// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rpclab/rpclab/internal/procstat"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/pool"
	"github.com/rpclab/rpclab/pool/adaptive"
	"github.com/rpclab/rpclab/proto/usagepb"
)

// MaxErrorShare is the share of a step's RPCs that may fail while the step
// stays "ok": above it the step is "failed" (its figures are kept), so it
// enters no verdict as a clean step. 1%: a step whose server died, or that
// a netem rate starved, loses far more; a healthy step loses none.
const MaxErrorShare = 0.01

// frame is what every step shares, whatever decides when its RPCs happen
// (the closed loop, the closed loop over any method, the open loop): its
// record and its connection layout, opened and ready.
type frame struct {
	spec  *Spec
	step  Step
	rec   *result.Record
	pools []*pool.Pool
	// conns are the pools as the callers use them; worker i of a closed
	// loop uses conns[i%len(conns)].
	conns []grpc.ClientConnInterface
	// usage0 and usage1 are the server's CPU time read at the interval's
	// start and end (nil when the server did not answer).
	usage0, usage1 *usagepb.UsageResponse
	// host0 and host1 are the host's CPU times read beside the client's
	// CPU time at the interval's start and end (nil when not read).
	host0, host1 *procstat.CPUStat
	// serverCPUs are the CPUs the server was pinned to (Options).
	serverCPUs []int
	// onPool is Options.PoolEvents; opened is when the layout was opened.
	onPool func(PoolHistory)
	opened time.Time
}

// readHost reads the host's CPU times, nil when /proc/stat cannot be read
// (not Linux).
func readHost() *procstat.CPUStat {
	s, err := procstat.ReadCPUStat()
	if err != nil {
		return nil
	}
	return &s
}

// HostCPU is the host's CPU between the reads s0 and s1 (nil when either
// is missing): on the client's CPUs (every CPU when clientCPUs is empty),
// on the server's (when serverCPUs is not empty) and on the whole host.
// Every ping record carries it (record.host_cpu), so that the verdict
// can tell CPU taken by other work from the client's and the server's.
func HostCPU(s0, s1 *procstat.CPUStat, clientCPUs, serverCPUs []int) *result.HostCPU {
	if s0 == nil || s1 == nil {
		return nil
	}
	d := s1.Sub(*s0)
	all := d.CPUs()
	if len(all) == 0 {
		return nil
	}
	times := func(cpus []int) result.CPUTimes {
		t := d.Sum(cpus)
		return result.CPUTimes{CPUs: slices.Sorted(slices.Values(cpus)), BusyNS: int64(t.Busy), IdleNS: int64(t.Idle), StealNS: int64(t.Steal)}
	}
	h := &result.HostCPU{Host: times(all)}
	if len(clientCPUs) > 0 {
		h.Client = times(clientCPUs)
	} else {
		h.Client = h.Host
	}
	if len(serverCPUs) > 0 {
		s := times(serverCPUs)
		h.Server = &s
	}
	return h
}

// UsageTimeout bounds each read of the server's CPU time: a server that
// does not serve rpclab.v1.UsageService answers Unimplemented at once, so
// only a stalled server waits it out, and the step goes on without.
const UsageTimeout = time.Second

// readUsage asks the server for its CPU time on the frame's first
// connection (nil when it does not answer: a foreign server).
func (f *frame) readUsage(ctx context.Context) *usagepb.UsageResponse {
	ctx, cancel := context.WithTimeout(ctx, UsageTimeout)
	defer cancel()
	u, err := usagepb.NewUsageServiceClient(f.conns[0]).Usage(ctx, &usagepb.UsageRequest{})
	if err != nil {
		return nil
	}
	return u
}

// serverCPU is the server's CPU between the frame's two reads over
// elapsed; nil when a read is missing or the two came from different
// processes (a restarted server).
func (f *frame) serverCPU(elapsed time.Duration, requests int64) *result.ServerCPU {
	u0, u1 := f.usage0, f.usage1
	if u0 == nil || u1 == nil || u0.GetPid() != u1.GetPid() || u1.GetCpuNs() < u0.GetCpuNs() || u1.GetCpus() < 1 || elapsed <= 0 {
		return nil
	}
	s := &result.ServerCPU{CPUNS: u1.GetCpuNs() - u0.GetCpuNs(), CPUs: int(u1.GetCpus())}
	if requests > 0 {
		s.CPUNSPerRPC = float64(s.CPUNS) / float64(requests)
	}
	s.Busy = float64(s.CPUNS) / float64(elapsed) / float64(s.CPUs)
	return s
}

// openFrame makes the step's record and opens its layout, waiting until
// every connection is ready (at most spec.DialTimeout). If that fails, the
// frame's record is failed and cause says why (it wraps ErrUnreachable
// when the target could not be reached); the frame is then closed. err is
// ctx's error when ctx ended first; there is no frame then.
func openFrame(ctx context.Context, spec *Spec, step Step, o Options) (f *frame, cause, err error) {
	f = &frame{spec: spec, step: step, rec: NewRecord(spec, step, o), serverCPUs: o.ServerCPUs, onPool: o.PoolEvents, opened: time.Now()}
	if cause := checkFDs(step.Conn.Conns(step.Inflight)); cause != nil {
		return f.fail(cause), cause, nil
	}
	dial := append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, o.DialOptions...)
	f.pools, err = openLayout(spec.Target, step, o.AdaptiveRule, dial)
	if err != nil {
		return f.fail(err), err, nil
	}
	if err := f.connect(ctx, dial); err != nil {
		f.close()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return f.fail(err), err, nil
	}
	f.conns = make([]grpc.ClientConnInterface, len(f.pools))
	for i, p := range f.pools {
		f.conns[i] = p
	}
	return f, nil, nil
}

// connect waits for every connection of the layout. Beside it, one probe
// connection watches for a failure whose cause is known (refused, no such
// host, not a gRPC or not a TLS server): it ends the wait at once and is
// returned, where the layout alone would wait out the dial timeout.
func (f *frame) connect(ctx context.Context, dial []grpc.DialOption) error {
	dctx, cancel := context.WithTimeout(ctx, f.spec.DialTimeout)
	defer cancel()
	probed := make(chan error, 1)
	go func() {
		err := probe(dctx, f.spec.Target, dial)
		if err != nil && dctx.Err() == nil {
			cancel()
		}
		probed <- err
	}()
	var err error
	for _, p := range f.pools {
		if err = p.Connect(dctx); err != nil {
			break
		}
	}
	cancel()
	perr := <-probed
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case perr != nil && !errors.Is(perr, context.DeadlineExceeded) && !errors.Is(perr, context.Canceled):
		return perr
	}
	return fmt.Errorf("%w: no connection to %s within %v: %v", ErrUnreachable, f.spec.Target, f.spec.DialTimeout, err)
}

// autoPool is the adaptive pool of an AutoPool step (nil for any other
// layout, or before it opened).
func (f *frame) autoPool() *pool.Pool {
	if f.step.Conn.Kind != AutoPool || len(f.pools) != 1 {
		return nil
	}
	return f.pools[0]
}

func (f *frame) close() {
	if p, on := f.autoPool(), f.onPool; p != nil && on != nil {
		f.onPool = nil // once: cut closes the frame a second time
		on(PoolHistory{Record: f.rec, Opened: f.opened, Measured: f.rec.StartedAt, Events: p.Stats().Events})
	}
	for _, p := range f.pools {
		_ = p.Close()
	}
}

// cut ends the calls in flight on the frame's connections by closing them
// (they end with codes.Canceled): the stop of a step whose calls are made
// under callContext, called after the run's context is cancelled, so the
// callers see the run ended and do not count these calls. The frame is
// closed afterwards; a second close is harmless.
func (f *frame) cut() { f.close() }

// fail marks the frame's record failed with err.
func (f *frame) fail(err error) *frame {
	failed(f.rec, err)
	return f
}

// finish fills the record from what the callers measured over elapsed,
// with cpu the client's CPU time meanwhile (and the server's, when the
// frame read it), and sets its status: failed
// when no RPC succeeded or more than MaxErrorShare failed; when the step
// was cut short, interrupted, or failed with the cause ctx was cancelled
// with (see Sweep).
func (f *frame) finish(ctx context.Context, sum *stats.Summary, elapsed, cpu time.Duration, interrupted bool) *result.Record {
	rec := f.rec
	fill(rec, sum, elapsed, cpu)
	rec.ServerCPU = f.serverCPU(elapsed, rec.Requests)
	rec.HostCPU = HostCPU(f.host0, f.host1, rec.Env.ClientCPUs, f.serverCPUs)
	if p := f.autoPool(); p != nil {
		end := time.Now()
		rec.PoolSizes = PoolSizes(p.Stats().Events, f.step.Conn.Min, end.Add(-elapsed), end)
	}
	if nerr := rec.Requests - sum.OK(); rec.Status == result.StatusOK && float64(nerr) > MaxErrorShare*float64(rec.Requests) {
		rec.Status = result.StatusFailed
		rec.Error = fmt.Sprintf("%d of %d RPCs failed (%.1f%%, more than the %g%% a step may lose): %s%s",
			nerr, rec.Requests, 100*float64(nerr)/float64(rec.Requests), 100*MaxErrorShare, errorCounts(rec.Errors), sampleSuffix(rec))
	}
	if interrupted {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
			rec.Status = result.StatusFailed
			rec.Error = "stopped: " + cause.Error()
		} else {
			rec.Status = result.StatusInterrupted
			rec.Error = "the interval was cut short"
		}
	}
	return rec
}

// sampleSuffix is "; first: <code>: <message>" when rec has an error sample.
func sampleSuffix(rec *result.Record) string {
	if rec.ErrorSample == "" {
		return ""
	}
	return "; first: " + rec.ErrorSample
}

// errorCounts lists failed RPCs by code, most first.
func errorCounts(errs map[string]int64) string {
	codes := slices.Collect(maps.Keys(errs))
	slices.SortFunc(codes, func(a, b string) int {
		if c := cmp.Compare(errs[b], errs[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%s %d", c, errs[c])
	}
	return strings.Join(parts, ", ")
}

// PoolSizes is the record's pool_sizes: from an adaptive pool's decision
// history (pool.Stats().Events, oldest first), the size it had at start
// (that of the last resize before it, else minConns) at t_ns 0, then each
// resize up to end, at most result.MaxPoolSizes entries (the earliest).
func PoolSizes(events []pool.Event, minConns int, start, end time.Time) []result.PoolSize {
	out := []result.PoolSize{{TNS: 0, Size: minConns, Reason: "start"}}
	for _, e := range events {
		if e.From == e.To {
			continue
		}
		switch {
		case !e.At.After(start):
			out[0].Size = e.To
		case e.At.After(end) || len(out) >= result.MaxPoolSizes:
			return out
		default:
			out = append(out, result.PoolSize{TNS: int64(e.At.Sub(start)), Size: e.To, Reason: e.Reason})
		}
	}
	return out
}

// openLayout opens step's pools; an AutoPool's is sized by rule (nil:
// adaptive.DefaultRule) between the layout's min and max.
func openLayout(target string, step Step, rule *adaptive.Rule, dial []grpc.DialOption) ([]*pool.Pool, error) {
	var pools []*pool.Pool
	add := func(size int) error {
		sizing := pool.WithSize(size)
		if step.Conn.Kind == AutoPool {
			sizing = adaptive.WithRule(autoRule(step.Conn, rule))
		}
		p, err := pool.New(target, sizing, pool.WithPolicy(step.Conn.Pick), pool.WithDialOptions(dial...))
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
	case Pooled, AutoPool:
		err = add(step.Conn.N)
	default:
		err = fmt.Errorf("loadgen: unknown connection mode %q", step.Conn.Kind)
	}
	if err != nil {
		for _, p := range pools {
			_ = p.Close()
		}
		return nil, err
	}
	return pools, nil
}

// NewRecord is the record of a step before it runs: the step's spec (a
// closed-loop one; the open loop adds its settings), this process's
// environment as a Go client, status ok and nothing counted. It is the one
// builder of a ping record: every step's frame starts from it, and so does
// the record a session keeps for a step cut off before it measured
// anything (lab).
func NewRecord(spec *Spec, step Step, o Options) *result.Record {
	return &result.Record{
		SchemaVersion: result.SchemaVersion,
		Kind:          "ping",
		Status:        result.StatusOK,
		StartedAt:     time.Now().UTC(),
		Spec: result.Spec{
			Target:         spec.Target,
			Service:        spec.Service.RecordName(),
			RPC:            step.RPC,
			ConnMode:       string(step.Conn.Kind),
			ConnsRequested: step.Conn.Conns(step.Inflight),
			ConnsMin:       step.Conn.Min,
			Pick:           step.Conn.PickName(),
			Inflight:       step.Inflight,
			PayloadBytes:   spec.PayloadBytes,
			WarmupNS:       int64(spec.StepWarmup(step, o.AdaptiveRule)),
			IntervalNS:     int64(spec.Interval),
			LoadModel:      "closed",
			Server:         spec.Server,
		},
		Env:           result.GoEnv(grpc.Version, o.ClientCPUs),
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
	rec.Latency, rec.LatencyClamped = stats.Quantiles(sum.Hist), sum.Clamped
	rec.ErrorSample = sum.ErrorSample()
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
			rec.Error = everyFailed(rec)
		}
	}
}

// everyFailed says that every RPC of rec failed, with its error sample:
// "every RPC failed (5542): Unimplemented: unknown method Foo"; when they
// failed with several codes, the counts come first: "every RPC failed
// (5542: Unavailable 5000, DeadlineExceeded 542): Unavailable: ...".
func everyFailed(rec *result.Record) string {
	counts := fmt.Sprint(rec.Requests)
	if len(rec.Errors) > 1 || rec.ErrorSample == "" {
		counts += ": " + errorCounts(rec.Errors)
	}
	if rec.ErrorSample == "" {
		return "every RPC failed (" + counts + ")"
	}
	return "every RPC failed (" + counts + "): " + rec.ErrorSample
}

// HostPort strips a "scheme:///" prefix from a target.
func HostPort(target string) string {
	if i := strings.Index(target, ":///"); i >= 0 {
		return target[i+4:]
	}
	return target
}

// warmUp runs the step's warm-up (Spec.StepWarmup). An AutoPool step
// whose warm-up its rule sets (Spec.AutoWarmup zero) then waits on while
// its pool is part-way through a change of size (pool.Pool.Settling), at
// most the rule's adaptive.Rule.SettleWait: a trial under way when the warm-up ends
// would put its parked intervals, on fewer connections, into the
// measured one. The record's warm-up is the time it took. warmUp reports
// false if ctx ended first.
func (f *frame) warmUp(ctx context.Context, o Options) bool {
	if !Sleep(ctx, f.spec.StepWarmup(f.step, o.AdaptiveRule)) {
		return false
	}
	p := f.autoPool()
	if p == nil || f.spec.AutoWarmup > 0 {
		return true
	}
	rule := autoRule(f.step.Conn, o.AdaptiveRule)
	waited, ok := waitSettled(ctx, p.Settling, max(rule.Interval/10, time.Millisecond), rule.SettleWait())
	f.rec.Spec.WarmupNS += int64(waited)
	return ok
}

// waitSettled waits while settling reports true, checking every poll,
// for at most limit; it returns how long it waited, and false if ctx
// ended first.
func waitSettled(ctx context.Context, settling func() bool, poll, limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	if !settling() {
		return 0, ctx.Err() == nil
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return time.Since(start), false
		case <-t.C:
		}
		if waited := time.Since(start); !settling() || waited >= limit {
			return waited, true
		}
	}
}

// Sleep waits d or until ctx ends; it returns false if ctx ended first
// (and at once, without waiting, when d <= 0 and ctx has ended).
func Sleep(ctx context.Context, d time.Duration) bool {
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
