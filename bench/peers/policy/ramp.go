// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package policy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/pool"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// ErrRamp is returned for a RampSpec that cannot run.
var ErrRamp = errors.New("policy: bad ramp")

// FixedPolicy is a pool of n connections that never resizes, run through
// the same code as the sizing policies, so that "P99 within 10% of the
// best fixed size" reads off one table.
func FixedPolicy(n int) Policy {
	return Policy{Name: fmt.Sprintf("pool:%d", n), Option: func(int) pool.Option { return pool.WithSize(n) }}
}

// Mirror is up followed by its reverse without repeating its last rate:
// 5k,10k,20k becomes 5k,10k,20k,10k,5k, a load that rises and falls.
func Mirror(up []float64) []float64 {
	out := append([]float64(nil), up...)
	for i := len(up) - 2; i >= 0; i-- {
		out = append(out, up[i])
	}
	return out
}

// RampSpec is an open-loop ramp: unary pings at each of Rates in turn,
// each held for Step, on one pool for the whole ramp.
type RampSpec struct {
	// Rates are the offered loads in RPCs per second, in the order they
	// run (Mirror makes an up-and-down ramp of a rising list).
	Rates []float64
	// Warmup runs the first rate, unrecorded, before the first step, so
	// that the first step does not pay for the client's start (its
	// senders, their histograms, the server's first calls). 0: none.
	Warmup time.Duration
	// Step is how long each rate is held.
	Step time.Duration
	// Tail: after the last step the load stops, and the ramp waits up to
	// Tail for an adaptive pool to be back at its min (0: no wait).
	Tail time.Duration
	// MaxOutstanding bounds the RPCs in flight (at least 1). A send that
	// finds them all taken waits for one to end (counted in Hits), its
	// latency still counted from its intended time; a send still unmade
	// maxLate after its step's end is counted Unsent, with the rest of
	// its step's sends.
	MaxOutstanding int
	// MaxConns is the most connections a sizing policy may open.
	MaxConns int
}

// maxLate is how long past its step's end a send of the step may still
// be made (loadgen's allowance for a scheduler paused for a moment).
const maxLate = 200 * time.Millisecond

func (s *RampSpec) validate() error {
	if len(s.Rates) == 0 {
		return fmt.Errorf("%w: no rate", ErrRamp)
	}
	for _, r := range s.Rates {
		if !(r > 0) || math.IsInf(r, 0) {
			return fmt.Errorf("%w: rate %v is not a positive number of RPCs per second", ErrRamp, r)
		}
	}
	switch {
	case s.Step <= 0:
		return fmt.Errorf("%w: step %v must be positive", ErrRamp, s.Step)
	case s.Tail < 0 || s.Warmup < 0:
		return fmt.Errorf("%w: warm-up %v and tail %v must not be negative", ErrRamp, s.Warmup, s.Tail)
	case s.MaxOutstanding < 1:
		return fmt.Errorf("%w: max outstanding %d must be at least 1", ErrRamp, s.MaxOutstanding)
	case s.MaxConns < 1:
		return ErrConns
	}
	return nil
}

// RampStep is what one rate of a ramp measured. Its RPCs are those whose
// intended send time fell in the step, wherever they ended.
type RampStep struct {
	Offered  float64 // RPCs per second scheduled
	Achieved float64 // RPCs that succeeded, per second of the step
	// Scheduled = Sent + Unsent; Sent = OK + Failed.
	Scheduled, Sent, Unsent int64
	OK, Failed              int64
	// Hits are sends that found MaxOutstanding RPCs in flight and waited.
	Hits int64
	// P99 of the successful RPCs, from their intended send time.
	P99 time.Duration
	// Conns is the pool's size at the step's end, MaxConns the most it had
	// during the step, Resizes its changes of size in the step.
	Conns, MaxConns, Resizes int
}

// Ramp is one policy's run of a RampSpec.
type Ramp struct {
	Policy string
	Steps  []RampStep
	// Adaptive reports a pool that sizes itself (a fixed pool has no
	// events, and the fields below are zero).
	Adaptive bool
	Min      int
	// FallAt is the offset from the first step's start at which the load first
	// fell below its peak (the start of the first lower step after the
	// highest rate; the tail's start when the rates never fall).
	FallAt time.Duration
	// BackAtMin reports that the pool was at its min when the ramp ended,
	// and BackToMin how long after FallAt it got there for good (0: it
	// was already there).
	BackAtMin bool
	BackToMin time.Duration
	// FailedAtResize counts the failed RPCs of the steps that saw a
	// resize: an upper bound on the RPCs a resize failed.
	FailedAtResize int64
	// Start is when the first recorded step began (after the warm-up).
	Start time.Time
	// Events is the pool's decision history.
	Events []pool.Event
}

// rampJob is one scheduled send.
type rampJob struct {
	intended time.Time
	step     int
}

// RunRamp runs spec's ramp of unary pings against target on ONE pool
// sized by pol (at most spec.MaxConns connections): an open loop paced by
// loadgen's constant pacer, step after step with each step's schedule
// anchored to the ramp's start, so a step that falls behind does not
// delay the next; latency counts from each intended send time (no
// coordinated omission). spec.Warmup first runs the first rate unrecorded.
func RunRamp(ctx context.Context, target string, pol Policy, spec RampSpec) (Ramp, error) {
	out := Ramp{Policy: pol.Name}
	if err := spec.validate(); err != nil {
		return out, err
	}
	p, err := pool.New(target, pol.Option(spec.MaxConns), pool.WithDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		return out, fmt.Errorf("policy: ramp %s: %w", pol.Name, err)
	}
	defer func() { _ = p.Close() }()
	if err := p.Connect(ctx); err != nil {
		return out, fmt.Errorf("policy: ramp %s: %w", pol.Name, err)
	}
	st0 := p.Stats()
	out.Adaptive, out.Min = st0.Adaptive, st0.Min

	d := newRampDispatcher(ctx, pb.NewBenchmarkServiceClient(p), len(spec.Rates), spec.MaxOutstanding)
	steps := make([]RampStep, len(spec.Rates))
	ends := make([]int, len(spec.Rates)) // the pool's size at each step's end
	wait := newWaiter()
	// The warm-up, at the first rate, is not recorded (step -1); the
	// steps follow it.
	start := time.Now().Add(spec.Warmup)
	out.Start = start
	if spec.Warmup > 0 {
		if err := d.schedule(ctx, wait, start.Add(-spec.Warmup), spec.Warmup, spec.Rates[0], -1, &RampStep{}); err != nil {
			d.stop()
			return out, fmt.Errorf("policy: ramp %s: %w", pol.Name, err)
		}
	}
	for i, rate := range spec.Rates {
		if err := d.schedule(ctx, wait, start.Add(time.Duration(i)*spec.Step), spec.Step, rate, i, &steps[i]); err != nil {
			d.stop()
			return out, fmt.Errorf("policy: ramp %s: %w", pol.Name, err)
		}
		ends[i] = p.Size()
	}
	d.stop() // waits for every RPC in flight
	if out.Adaptive {
		if err := waitForSize(ctx, p, out.Min, spec.Tail); err != nil {
			return out, err
		}
	}
	st := p.Stats()
	out.Events = st.Events

	for i := range steps {
		from := start.Add(time.Duration(i) * spec.Step)
		summarizeStep(&steps[i], &d.sets[i], ends[i], from, spec.Step, out.Adaptive, st.Events)
		if steps[i].Resizes > 0 {
			out.FailedAtResize += steps[i].Failed
		}
	}
	out.Steps = steps
	out.FallAt = fallAt(spec.Rates, spec.Step)
	if out.Adaptive {
		// By the history, not len(st.Conns): the two are read at different
		// moments, and a decision taken on the load's last interval may
		// grow the pool after the load stopped.
		out.BackAtMin = finalSize(st.Events, out.Min) == out.Min
		if out.BackAtMin {
			out.BackToMin = backToMin(st.Events, start.Add(out.FallAt))
		}
	}
	return out, nil
}

// summarizeStep fills s, the step that began at from and lasted step, from
// what its recorder set holds, the pool's size at its end (conns) and the
// pool's history (events): the most connections the pool had during the
// step and its changes of size in it.
func summarizeStep(s *RampStep, set *stats.Set, conns int, from time.Time, step time.Duration, adaptive bool, events []pool.Event) {
	sum := set.Merge()
	s.OK, s.Failed = sum.OK(), sum.Total()-sum.OK()
	s.Achieved = float64(s.OK) / step.Seconds()
	if s.OK > 0 {
		s.P99 = time.Duration(sum.Hist.ValueAtQuantile(99))
	}
	s.Conns = conns
	to := from.Add(step)
	s.MaxConns = s.Conns
	if adaptive {
		s.MaxConns = max(sizeAt(events, from), s.Conns)
	}
	for _, e := range events {
		if e.From != e.To && e.At.After(from) && !e.At.After(to) {
			s.Resizes++
			s.MaxConns = max(s.MaxConns, e.To)
		}
	}
}

// fallAt is the offset of the start of the first step after the highest
// rate whose rate is lower (the end of the ramp when none is).
func fallAt(rates []float64, step time.Duration) time.Duration {
	peak := 0
	for i, r := range rates {
		if r > rates[peak] {
			peak = i
		}
	}
	for i := peak + 1; i < len(rates); i++ {
		if rates[i] < rates[peak] {
			return time.Duration(i) * step
		}
	}
	return time.Duration(len(rates)) * step
}

// backToMin is how long after fall the pool's last change of size was
// (0 when its last change came before fall): the pool is at its min by
// then, for good.
func backToMin(events []pool.Event, fall time.Time) time.Duration {
	var last time.Time
	for _, e := range events {
		if e.From != e.To {
			last = e.At
		}
	}
	if last.Before(fall) {
		return 0
	}
	return last.Sub(fall)
}

// finalSize is the size the history ends at (minConns when it holds no
// change of size).
func finalSize(events []pool.Event, minConns int) int {
	n := minConns
	for _, e := range events {
		if e.From != e.To {
			n = e.To
		}
	}
	return n
}

// waitForSize waits up to d for p to be at n connections by its history.
func waitForSize(ctx context.Context, p *pool.Pool, n int, d time.Duration) error {
	at := func() bool { return p.Size() == n && finalSize(p.Stats().Events, n) == n }
	if d <= 0 || at() {
		return nil
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !at() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return nil
		case <-tick.C:
		}
	}
	return nil
}

// waiter is the ramp scheduler's one timer, reset for each wait (at 80k
// sends a second, a timer per send would be garbage per send).
type waiter struct{ t *time.Timer }

func newWaiter() *waiter {
	w := &waiter{t: time.NewTimer(time.Hour)}
	w.t.Stop()
	return w
}

// until waits until t, or reports false when ctx ends first.
func (w *waiter) until(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	w.t.Reset(d)
	select {
	case <-w.t.C:
		return true
	case <-ctx.Done():
		w.t.Stop()
		return false
	}
}

// rampDispatcher hands sends to senders, goroutines that make one call
// at a time, starting one when none is idle, up to max (loadgen's
// dispatcher, over the steps of a ramp). Each sender records into its
// own recorder of each step's set.
type rampDispatcher struct {
	ctx     context.Context
	client  pb.BenchmarkServiceClient
	jobs    chan rampJob // unbuffered: a send succeeds only when a sender is idle
	max     int
	senders int
	sets    []stats.Set // one per step
	wg      sync.WaitGroup
	wait    *time.Timer
}

func newRampDispatcher(ctx context.Context, client pb.BenchmarkServiceClient, steps, max int) *rampDispatcher {
	d := &rampDispatcher{ctx: ctx, client: client, jobs: make(chan rampJob), max: max,
		sets: make([]stats.Set, steps), wait: time.NewTimer(time.Hour)}
	d.wait.Stop()
	return d
}

// hand gives j to an idle sender, or starts one; when max are busy it
// waits for one until by (hit true). It reports whether j was sent.
func (d *rampDispatcher) hand(ctx context.Context, j rampJob, by time.Time) (sent, hit bool) {
	select {
	case d.jobs <- j:
		return true, false
	default:
	}
	if d.senders < d.max {
		d.senders++
		d.wg.Go(func() { d.send(j) })
		return true, false
	}
	d.wait.Reset(time.Until(by))
	defer d.wait.Stop()
	select {
	case d.jobs <- j:
		return true, true
	case <-d.wait.C:
		return false, true
	case <-ctx.Done():
		return false, true
	}
}

// schedule sends at rate from from for length, each send as one of step
// (-1: not recorded), counting into c; it returns at the end of its
// length, or with ctx's error.
func (d *rampDispatcher) schedule(ctx context.Context, wait *waiter, from time.Time, length time.Duration, rate float64, step int, c *RampStep) error {
	pacer, err := loadgen.NewPacer(loadgen.Constant, rate, 0)
	if err != nil {
		return err
	}
	end := from.Add(length)
	c.Offered = rate
	for off := pacer.Next(); off < length; off = pacer.Next() {
		c.Scheduled++
		at := from.Add(off)
		if !wait.until(ctx, at) {
			return ctx.Err()
		}
		if time.Now().After(end.Add(maxLate)) {
			c.Unsent++
			continue // behind: the rest of the step is not sent
		}
		sent, hit := d.hand(ctx, rampJob{intended: at, step: step}, end.Add(maxLate))
		if hit {
			c.Hits++
		}
		if !sent {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.Unsent++
			continue
		}
		c.Sent++
	}
	if !wait.until(ctx, end) {
		return ctx.Err()
	}
	return nil
}

// send makes first's call, then the calls handed to it, until stop.
func (d *rampDispatcher) send(first rampJob) {
	recs := make([]*stats.Recorder, len(d.sets)) // taken from each step's set on first use
	req := &pb.SimpleRequest{Payload: &pb.Payload{}}
	call := func(j rampJob) {
		_, err := d.client.UnaryCall(d.ctx, req)
		lat := time.Since(j.intended)
		if d.ctx.Err() != nil || j.step < 0 {
			return // the run was stopped, or a warm-up call: not a measurement
		}
		if recs[j.step] == nil {
			recs[j.step] = d.sets[j.step].Recorder()
		}
		recs[j.step].RecordErr(lat, status.Code(err), err)
	}
	call(first)
	for j := range d.jobs {
		call(j)
	}
}

// stop ends the sends and waits for the RPCs in flight.
func (d *rampDispatcher) stop() {
	close(d.jobs)
	d.wg.Wait()
}
