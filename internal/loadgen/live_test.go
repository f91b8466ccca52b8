// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/testserver"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/pool"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

func newRec() *stats.Recorder { return stats.NewRecorder() }

func merged(r *stats.Recorder) int64 { return stats.Merge(r).Total() }

// waitRecorded snapshots l (without reset) until it has at least n RPCs.
func waitRecorded(t *testing.T, ctx context.Context, l *Live, n int64) {
	t.Helper()
	for l.Snapshot(false).Total() < n {
		if !Sleep(ctx, 5*time.Millisecond) {
			t.Fatalf("fewer than %d RPCs recorded before the test timeout", n)
		}
	}
}

// TestLiveSnapshotsAndResets runs a Live closed loop against a real server:
// snapshots without reset grow, a reset starts the count again, and the
// snapshots between resets add up to what the server answered (less at
// most the RPCs cut short by Stop, which are not recorded).
func TestLiveSnapshotsAndResets(t *testing.T) {
	ctx := testutil.Context(t)
	target, served := testserver.CountingPing(t)
	spec := shortSpec(target)
	step := Step{Conn: ConnMode{Kind: Pooled, N: 2, Pick: pool.RoundRobin}, RPC: Unary, Inflight: 4}
	l, err := StartLive(ctx, spec, step, Load{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	waitRecorded(t, ctx, l, 50)
	a := l.Snapshot(false)
	b := l.Snapshot(true)
	if b.Total() < a.Total() || b.Elapsed < a.Elapsed {
		t.Errorf("got a later snapshot with %d RPCs over %v, want at least the earlier one's %d over %v", b.Total(), b.Elapsed, a.Total(), a.Elapsed)
	}
	if runtime.GOOS == "linux" && b.Conns != 2 {
		t.Errorf("got %d connections seen by the kernel, want 2 (pool:2)", b.Conns)
	}
	waitRecorded(t, ctx, l, 20)
	l.Stop()
	c := l.Snapshot(true)
	if c.Total() >= b.Total()+c.Total() || c.Total() < 20 {
		t.Errorf("got %d RPCs after the reset, want at least 20 and only those since the reset", c.Total())
	}
	got, want := b.Total()+c.Total(), served.Load()
	if got > want || got < want-int64(step.Inflight) {
		t.Errorf("got %d RPCs recorded, want the server's %d less at most %d cut short", got, want, step.Inflight)
	}
	for _, s := range []LiveSnapshot{a, b, c} {
		if s.Hist.TotalCount() != s.OK() || s.OK() != s.Total() {
			t.Errorf("got %d latencies for %d OK of %d RPCs, want all equal", s.Hist.TotalCount(), s.OK(), s.Total())
		}
	}
	if d := l.Snapshot(false); d.Total() != 0 {
		t.Errorf("got %d RPCs after Stop and a reset, want 0", d.Total())
	}
}

// TestLivePoisson paces a Live run at a Poisson rate well below what the
// server answers: the count over a known time stays near rate x time.
func TestLivePoisson(t *testing.T) {
	ctx := testutil.Context(t)
	target, _ := testserver.CountingPing(t)
	step := Step{Conn: ConnMode{Kind: Shared}, RPC: Unary, Inflight: 2}
	if _, err := StartLive(ctx, shortSpec(target), Step{Conn: step.Conn, RPC: Streaming, Inflight: 1}, openLoad(100, Poisson), Options{}); err == nil {
		t.Error("got no error for a rate on streaming RPCs, want one")
	}
	l, err := StartLive(ctx, shortSpec(target), step, openLoad(200, Poisson), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	Sleep(ctx, 500*time.Millisecond)
	s := l.Snapshot(false)
	// 200/s over the elapsed time; a Poisson count of ~100 is within 5 sigma
	// of 50; a busy machine may send late, never early.
	want := 200 * s.Elapsed.Seconds()
	if got := float64(s.Total()); got > want+50 || got < want/4 {
		t.Errorf("got %v RPCs in %v at 200/s, want about %.0f", got, s.Elapsed, want)
	}
}

// TestLiveCellSwapLosesNothing records from one goroutine while another
// swaps the cell's recorder: every record lands in exactly one recorder.
func TestLiveCellSwapLosesNothing(t *testing.T) {
	const n = 200000
	var c liveCell
	c.cur.Store(newRec())
	done := make(chan struct{})
	go func() {
		for i := 0; i < n; i++ {
			c.RecordErr(time.Microsecond, 0, nil)
		}
		close(done)
	}()
	var total int64
	spare := newRec()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		old := c.swap(spare)
		total += merged(old)
		old.Reset()
		spare = old
	}
	total += merged(c.swap(spare))
	if total != n {
		t.Errorf("got %d records across swaps, want %d", total, n)
	}
}

// TestLivePacedLatencyFromIntendedTime paces a Live open load at a
// constant 100/s against a server that stalls its first 200 ms: the sends
// due during the stall wait in the server, and each latency counts from
// its intended send time, so many RPCs show most of the stall.
func TestLivePacedLatencyFromIntendedTime(t *testing.T) {
	ctx := testutil.Context(t)
	target := startStallServer(t)
	step := Step{Conn: ConnMode{Kind: Shared}, RPC: Unary, Inflight: 1}
	if _, err := StartLive(ctx, shortSpec(target), step, openLoad(100, "uniform"), Options{}); !errors.Is(err, ErrArrival) {
		t.Errorf("got %v for arrival \"uniform\", want ErrArrival", err)
	}
	l, err := StartLive(ctx, shortSpec(target), step, openLoad(100, Constant), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	waitRecorded(t, ctx, l, 25)
	s := l.Snapshot(false)
	var slow int64
	for _, b := range s.Hist.Distribution() {
		if b.From >= int64(50*time.Millisecond) {
			slow += b.Count
		}
	}
	if slow < 5 {
		t.Errorf("got %d of %d latencies at 50 ms or more, want at least 5 (the sends due in the 200 ms stall, counted from their intended times)", slow, s.Hist.TotalCount())
	}
}

// openLoad is an open Live load at rate with arrival, bounded as rpclab's
// worker bounds it.
func openLoad(rate float64, arrival string) Load {
	return Load{Rate: rate, OpenLoop: OpenLoop{Arrival: arrival, MaxOutstanding: DefaultMaxOutstanding}}
}

// heldServer holds every unary call until release is closed, telling
// arrived of each.
type heldServer struct {
	server.Ping
	arrived chan struct{}
	release chan struct{}
}

func (h *heldServer) UnaryCall(ctx context.Context, req *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	h.arrived <- struct{}{}
	select {
	case <-h.release:
		return h.Ping.UnaryCall(ctx, req)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// steppedClock is a schedule clock the test steps: each wait returns only
// once the test has let one more intended time pass (tick), so the sends
// made are counted by the schedule's intended times, not by wall time.
type steppedClock struct {
	tick chan struct{}
	now  atomic.Int64 // the last intended time let pass, in Unix ns
}

func (c *steppedClock) clock(string) (clock, string, func()) {
	return clock{
		now: func() time.Time { return time.Unix(0, c.now.Load()) },
		sleepUntil: func(ctx context.Context, at time.Time) bool {
			select {
			case <-c.tick:
				c.now.Store(at.UnixNano())
				return true
			case <-ctx.Done():
				return false
			}
		},
	}, TimerPacing, func() {}
}

// TestLiveOpenSendsOnScheduleWhileServerStalls: a worker's open load (a
// Live run at a rate) on one caller's layout keeps sending on its
// schedule while the server holds every call: each intended time the
// test lets pass puts one more call on the server, none answered (a
// caller that held one RPC at a time would send one, then wait); once
// the server answers, every held call is recorded.
func TestLiveOpenSendsOnScheduleWhileServerStalls(t *testing.T) {
	ctx := testutil.Context(t)
	h := &heldServer{arrived: make(chan struct{}, 100), release: make(chan struct{})}
	s := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(s, h)
	target := testutil.Serve(t, s)
	sc := &steppedClock{tick: make(chan struct{})}
	sc.now.Store(time.Now().UnixNano())
	defer func(c func(string) (clock, string, func())) { openClock = c }(openClock)
	openClock = sc.clock

	step := Step{Conn: ConnMode{Kind: Shared}, RPC: Unary, Inflight: 1}
	l, err := StartLive(ctx, shortSpec(target), step, openLoad(100, Constant), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	const sends = 20
	for i := range sends {
		select {
		case sc.tick <- struct{}{}:
		case <-ctx.Done():
			t.Fatalf("the schedule stopped asking for its send %d", i+1)
		}
		select {
		case <-h.arrived:
		case <-ctx.Done():
			t.Fatalf("got %d calls on the server, want %d: send %d, due, was not made while the server held the others", i, i+1, i+1)
		}
	}
	if got := l.Snapshot(false).Total(); got != 0 {
		t.Errorf("got %d calls recorded while the server held them all, want 0", got)
	}
	close(h.release)
	waitRecorded(t, ctx, l, sends)
	if got := l.Snapshot(false); got.OK() != sends {
		t.Errorf("got %d OK of %d recorded, want %d OK", got.OK(), got.Total(), sends)
	}
}
