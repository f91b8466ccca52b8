// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package pool

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/pool/internal/adapt"
	"github.com/rpclab/rpclab/pool/internal/pooltest"
	pb "google.golang.org/grpc/interop/grpc_testing"
)

// fakeClock drives an adaptive pool's control loop: the test advances the
// time and sends each tick itself.
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	tick chan time.Time
}

// t0 is the fake clock's start.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newFakeClock() *fakeClock { return &fakeClock{now: t0, tick: make(chan time.Time)} }

func (fc *fakeClock) Now() time.Time {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.now
}

func (fc *fakeClock) advance(d time.Duration) time.Time {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.now = fc.now.Add(d)
	return fc.now
}

// option makes the pool read fc and tick on fc's ticks only.
func (fc *fakeClock) option() Option {
	return func(c *config) error {
		c.now = fc.Now
		c.newTicker = func(time.Duration) (<-chan time.Time, func()) { return fc.tick, func() {} }
		c.steal = func() (time.Duration, time.Duration, bool) { return 0, 0, false } // a fake second has no steal
		return nil
	}
}

// step advances the clock by a second, ticks, waits until the pool has
// applied its decision, and returns the pool's last event.
func (fc *fakeClock) step(ctx context.Context, t testing.TB, p *Pool) Event {
	t.Helper()
	now := fc.advance(time.Second)
	n := p.ctl.steps.Load()
	select {
	case fc.tick <- now:
	case <-ctx.Done():
		t.Fatalf("tick: %v", ctx.Err())
	}
	waitFor(ctx, t, "the pool's decision", func() bool { return p.ctl.steps.Load() > n })
	ev := p.Stats().Events
	return ev[len(ev)-1]
}

// testRule is the policy for tests on a loaded, shared machine: any write
// wait counts (the meter tests check the wait itself), and the periods are
// a few fake seconds.
func testRule(minConns, maxConns int) adapt.Rule {
	r := adapt.DefaultRule(minConns, maxConns)
	r.WriteWait = time.Nanosecond
	r.Trial = time.Second // one block of four intervals
	r.Cooldown = 2 * time.Second
	r.MaxBackoff = 16 * time.Second
	r.IdleFor = 2 * time.Second
	return r
}

// withRule is pool/adaptive's WithRule, which this package's tests cannot
// import (it imports pool).
func withRule(r adapt.Rule) Option { return adapt.NewOption(r, nil, false).(Option) }

// withSizer is pool/adaptive's WithSizer.
func withSizer(minConns, maxConns int, interval time.Duration, s adapt.Sizer) Option {
	r := adapt.DefaultRule(minConns, maxConns)
	r.Interval = interval
	return adapt.NewOption(r, s, true).(Option)
}

func grew(e Event) bool   { return e.To > e.From }
func shrank(e Event) bool { return e.To < e.From }

// loader keeps g unary RPCs in flight until stopped, counting outcomes.
type loader struct {
	ok     atomic.Int64
	mu     sync.Mutex
	failed map[codes.Code]int
	errs   []error
	stop   func()
}

func startLoad(ctx context.Context, p *Pool, g int, opts ...grpc.CallOption) *loader {
	l := &loader{failed: map[codes.Code]int{}}
	lctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lctx.Err() == nil {
				err := ping(lctx, p, opts...)
				switch {
				case err == nil:
					l.ok.Add(1)
				case lctx.Err() != nil:
				default:
					l.mu.Lock()
					l.failed[status.Code(err)]++
					l.errs = append(l.errs, err)
					l.mu.Unlock()
				}
			}
		}()
	}
	l.stop = func() { cancel(); wg.Wait() }
	return l
}

func (l *loader) failures() (int, map[codes.Code]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	out := map[codes.Code]int{}
	for c, k := range l.failed {
		out[c] = k
		n += k
	}
	return n, out
}

// stepUntil steps until cond holds, at most max steps.
func (fc *fakeClock) stepUntil(ctx context.Context, t testing.TB, p *Pool, what string, steps int, cond func(Event) bool) Event {
	t.Helper()
	for i := 0; i < steps; i++ {
		if ev := fc.step(ctx, t, p); cond(ev) {
			return ev
		}
	}
	t.Fatalf("after %d steps, still waiting for %s; events %v", steps, what, p.Stats().Events)
	return Event{}
}

// Under load the pool grows by one connection, which is READY when it
// starts taking RPCs; a trial that brings no gain is given back, and the
// next growth waits out the back-off (a cooldown hold in the history). No
// RPC fails because of a resize.
func TestAdaptiveGrowsAndGivesBack(t *testing.T) {
	srv := startServer(t)
	ctx := pooltest.Context(t)
	fc := newFakeClock()
	r := testRule(1, 2)
	r.MinGain = 100 // no trial can pay
	p := newPool(t, srv.addr, withRule(r), fc.option())
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	l := startLoad(ctx, p, 8)
	defer l.stop()
	waitFor(ctx, t, "RPCs to run", func() bool { return l.ok.Load() > 20 })

	if p.Settling() {
		t.Errorf("Settling before any growth: got true, want false")
	}
	grew := fc.stepUntil(ctx, t, p, "a growth", 20, grew)
	if !p.Settling() {
		t.Errorf("Settling with the trial's connection just added: got false, want true")
	}
	if grew.From != 1 || grew.To != 2 || grew.Reason != adapt.ReasonLimit || grew.MeanInFlight <= 1 {
		t.Errorf("growth event: got %+v, want 1→2 for %v with more than 1 in flight", grew, adapt.ReasonLimit)
	}
	st := p.Stats()
	if got := len(st.Conns); got != 2 {
		t.Fatalf("size after the growth: got %d, want 2", got)
	}
	if got := st.Conns[1].State; got != connectivity.Ready {
		t.Errorf("state of the new connection when it joins: got %v, want %v", got, connectivity.Ready)
	}
	newest := p.list()[1].cur.Load()
	takes := func(what string) {
		t.Helper()
		n := newest.completed.Load()
		waitFor(ctx, t, what, func() bool { return newest.completed.Load() > n+10 })
	}
	takes("the new connection to take RPCs")

	parkedBlock(ctx, t, fc, p, newest)
	takes("the unparked connection to take RPCs again")

	back := fc.step(ctx, t, p)
	if !shrank(back) || back.Reason != adapt.ReasonNoGain || back.To != 1 || back.Backoff != r.Cooldown {
		t.Errorf("trial end: got %+v, want a shrink to 1 for %v with back-off %v", back, adapt.ReasonNoGain, r.Cooldown)
	}
	if back.Without <= 0 || back.With <= 0 {
		t.Errorf("trial end: got throughputs %v without the new connection and %v with it, want both measured", back.Without, back.With)
	}
	if got := p.Size(); got != 1 {
		t.Errorf("size after the give-back: got %d, want 1", got)
	}
	if p.Settling() {
		t.Errorf("Settling once the trial was judged: got true, want false")
	}
	n := l.ok.Load()
	waitFor(ctx, t, "RPCs on the one connection left", func() bool { return l.ok.Load() > n+20 })
	hold := fc.step(ctx, t, p)
	if hold.To != hold.From || hold.Reason != adapt.ReasonBackoff {
		t.Errorf("decision within the back-off: got %+v, want a hold for %q", hold, adapt.ReasonBackoff)
	}
	waitFor(ctx, t, "the given-back connection to close", func() bool { return len(p.retiredConns()) == 0 })
	l.stop()
	if n, codes := l.failures(); n != 0 {
		t.Errorf("RPCs failed during resizes: got %v (%v), want none", codes, l.errs)
	}
	if st := p.Stats(); !st.Adaptive || st.Min != 1 || st.Max != 2 {
		t.Errorf("Stats: got adaptive %v min %d max %d, want true 1 2", st.Adaptive, st.Min, st.Max)
	}
}

// parkedBlock steps a trial's first three intervals (B A A): over the
// middle two the new connection is parked (no new RPC picks it).
func parkedBlock(ctx context.Context, t *testing.T, fc *fakeClock, p *Pool, newest *conn) {
	t.Helper()
	// The trial is measured B A A B: over the middle two intervals the new
	// connection is parked (no new RPC picks it), then it takes RPCs again.
	if ev := fc.step(ctx, t, p); ev.Reason != adapt.ReasonTrial || ev.To != 2 {
		t.Fatalf("first interval of the trial: got %+v, want %v at 2", ev, adapt.ReasonTrial)
	}
	for i := 0; i < 2; i++ {
		// An RPC that read the slots just before the park may still land
		// on it: at most one per caller.
		n, base := newest.completed.Load(), p.list()[0].cur.Load()
		b := base.completed.Load()
		waitFor(ctx, t, "RPCs on the base connection", func() bool { return base.completed.Load() > b+200 })
		if got := newest.completed.Load() - n; got > 8 {
			t.Errorf("base interval %d: the parked connection completed %d RPCs while the base one did 200, want at most 8", i+1, got)
		}
		if ev := fc.step(ctx, t, p); ev.Reason != adapt.ReasonTrial {
			t.Fatalf("interval %d of the trial: got %+v, want %v", i+2, ev, adapt.ReasonTrial)
		}
		if !p.Settling() {
			t.Errorf("Settling in interval %d of the trial: got false, want true", i+2)
		}
	}
}

// TestParkGuardEndsBacklog: while a trial's connection is parked, a load
// that queues past the park limit (an open loop's, on a base size that
// cannot carry it) gives the connection back to the RPCs at once, before
// the interval ends, and the next decision keeps it for the backlog.
func TestParkGuardEndsBacklog(t *testing.T) {
	srv := startServer(t)
	ctx := pooltest.Context(t)
	fc := newFakeClock()
	r := testRule(1, 2)
	r.Trial = 4 * time.Second
	p := newPool(t, srv.addr, withRule(r), fc.option())
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	l := startLoad(ctx, p, 2)
	defer l.stop()
	waitFor(ctx, t, "RPCs to run", func() bool { return l.ok.Load() > 20 })
	fc.stepUntil(ctx, t, p, "a growth", 20, grew)
	if ev := fc.step(ctx, t, p); ev.Reason != adapt.ReasonTrial || p.active.Load() != 1 {
		t.Fatalf("first interval of the trial: got %+v and %d active, want %v and the trial's connection parked", ev, p.active.Load(), adapt.ReasonTrial)
	}
	limit := p.ctl.sizer.(adapt.Parker).ParkLimit()
	surge := startLoad(ctx, p, int(limit)+20)
	defer surge.stop()
	// No tick: the guard, not the control loop's next decision, unparks.
	waitFor(ctx, t, "the guard to unpark the trial's connection", func() bool { return p.active.Load() == 0 })
	newest := p.list()[1].cur.Load()
	n := newest.completed.Load()
	waitFor(ctx, t, "the unparked connection to take RPCs", func() bool { return newest.completed.Load() > n+10 })
	ev := fc.step(ctx, t, p)
	if ev.Reason != adapt.ReasonQueued || ev.To != 2 {
		t.Errorf("after the surge: got %+v, want %v keeping 2 connections", ev, adapt.ReasonQueued)
	}
	surge.stop()
	l.stop()
	if n, codes := l.failures(); n != 0 {
		t.Errorf("RPCs failed: got %v (%v), want none", codes, l.errs)
	}
}

// TestSamplerReadsInFlight: over an interval the sampler reads the RPCs in
// flight on every connection: three streams held open read as a mean and a
// peak of three, whatever the moment the interval ends.
func TestSamplerReadsInFlight(t *testing.T) {
	p, _, ctx := adaptivePool(t, testRule(2, 2))
	client := pb.NewBenchmarkServiceClient(p)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the streams, which Close would otherwise drain
	for i := 0; i < 3; i++ {
		if _, err := client.StreamingCall(sctx); err != nil {
			t.Fatalf("StreamingCall: %v", err)
		}
	}
	// No tick comes from the fake clock: the test runs the interval.
	n := p.ctl.samples.Load()
	p.startSampler(0)
	waitFor(ctx, t, "five reads", func() bool { return p.ctl.samples.Load() >= n+5 })
	r := p.ctl.stopSampler()
	if r.n < 5 || r.sum != 3*int64(r.n) || r.peak != 3 {
		t.Errorf("three streams open: got %d reads summing %d, peak %d; want at least 5 reads of 3 each", r.n, r.sum, r.peak)
	}
	if again := p.ctl.stopSampler(); again.n != 0 {
		t.Errorf("a stopped sampler read again: %+v", again)
	}
}

// TestGuardReadsInARow: the park guard unparks only once guardReads reads
// in a row are past the limit; a read at the limit, or one swing past it,
// starts the count again.
func TestGuardReadsInARow(t *testing.T) {
	const limit = 28
	for _, tc := range []struct {
		name  string
		reads []int64
		at    int // the read that unparks (from 1); 0: none
	}{
		{"a backlog", []int64{29, 30, 31}, 3},
		{"at the limit is not past it", []int64{29, 28, 29, 30}, 0},
		{"one swing then a backlog", []int64{40, 10, 29, 29, 29}, 5},
		{"swings", []int64{40, 10, 40, 10, 40, 40, 10}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			over, at := 0, 0
			for i, n := range tc.reads {
				if over = pastLimit(over, n, limit); over >= guardReads && at == 0 {
					at = i + 1
				}
			}
			if at != tc.at {
				t.Errorf("reads %v past %d: unparked at read %d, want %d (guardReads %d)", tc.reads, limit, at, tc.at, guardReads)
			}
		})
	}
}

// A retired connection takes no new RPC, and the RPCs on it finish there
// before it closes.
func TestAdaptiveDrainsRetired(t *testing.T) {
	srv := startServer(t)
	ctx := pooltest.Context(t)
	fc := newFakeClock()
	r := testRule(1, 2)
	r.MinGain = 100
	p := newPool(t, srv.addr, withRule(r), fc.option())
	if err := p.Connect(ctx); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	l := startLoad(ctx, p, 8)
	waitFor(ctx, t, "RPCs to run", func() bool { return l.ok.Load() > 20 })
	fc.stepUntil(ctx, t, p, "a growth", 20, grew)
	for i := 0; i < 3; i++ { // the trial's first three intervals (B A A)
		fc.step(ctx, t, p)
	}
	l.stop()

	// Open streams until one is on the new connection.
	newest := p.list()[1].cur.Load()
	client := pb.NewBenchmarkServiceClient(p)
	var streams []pb.BenchmarkService_StreamingCallClient
	for newest.inflight.Load() == 0 {
		if len(streams) == 10 {
			t.Fatal("10 streams and none on the new connection")
		}
		s, err := client.StreamingCall(ctx)
		if err != nil {
			t.Fatalf("StreamingCall: %v", err)
		}
		streams = append(streams, s)
	}
	s := streams[len(streams)-1]

	back := fc.step(ctx, t, p)
	if !shrank(back) {
		t.Fatalf("trial end: got %+v, want a shrink", back)
	}
	if got := p.Size(); got != 1 {
		t.Fatalf("size: got %d, want 1", got)
	}
	if !newest.retired.Load() {
		t.Fatal("the newest connection was not the one retired")
	}
	if got := newest.cc.GetState(); got == connectivity.Shutdown {
		t.Fatalf("retired connection with a stream on it: got %v, want it open", got)
	}
	for i := 0; i < 20; i++ { // no new RPC goes to the retired connection
		if err := ping(ctx, p); err != nil {
			t.Fatalf("RPC: %v", err)
		}
	}
	if got := newest.inflight.Load(); got != 1 {
		t.Errorf("RPCs on the retired connection: got %d, want only its stream", got)
	}
	if err := s.Send(&pb.SimpleRequest{ResponseSize: 1}); err != nil {
		t.Fatalf("Send on the draining connection: %v", err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatalf("Recv on the draining connection: %v", err)
	}
	for _, s := range streams {
		if err := s.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != io.EOF {
			t.Fatalf("Recv after CloseSend: got %v, want io.EOF", err)
		}
	}
	waitFor(ctx, t, "the drained connection to close", func() bool { return newest.cc.GetState() == connectivity.Shutdown })
	if got := len(p.retiredConns()); got != 0 {
		t.Errorf("retired connections left open: got %d, want 0", got)
	}
}

// The history keeps the last maxEvents decisions, oldest first, and holds
// for an unchanged reason only once.
func TestHistoryBounded(t *testing.T) {
	ctl := &control{}
	s := adapt.Signals{Conns: make([]adapt.ConnSignals, 1)}
	reasons := []string{"a", "b"}
	for i := 0; i < maxEvents+10; i++ {
		ctl.record(t0.Add(time.Duration(i)), 1, 1, adapt.Decision{Action: adapt.Hold, Reason: reasons[i%2]}, s)
		ctl.record(t0.Add(time.Duration(i)), 1, 1, adapt.Decision{Action: adapt.Hold, Reason: reasons[i%2]}, s) // repeated: dropped
	}
	h := ctl.history()
	if len(h) != maxEvents {
		t.Fatalf("events: got %d, want %d", len(h), maxEvents)
	}
	for i, e := range h {
		if want := t0.Add(time.Duration(i + 10)); !e.At.Equal(want) {
			t.Fatalf("event %d: got time %v, want %v", i, e.At.Sub(t0), want.Sub(t0))
		}
	}
}
