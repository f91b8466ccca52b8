// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package worker

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/benchwire"
	"github.com/rpclab/rpclab/internal/driver"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/testserver"
	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/proto/workerpb"
)

// startPing serves rpclab's ping on a free loopback port and counts the
// unary calls it answered.
func startPing(t *testing.T) (string, *atomic.Int64) { return testserver.CountingPing(t) }

func serve(t *testing.T, s *grpc.Server) string { return testutil.Serve(t, s) }

// startWorker serves a Worker on a free loopback port until the test ends
// and returns its address and the channel Serve's result arrives on.
func startWorker(t *testing.T) (string, <-chan error) {
	t.Helper()
	addr, done, _ := startKillableWorker(t)
	return addr, done
}

// startKillableWorker is startWorker with a function that stops the
// worker at once, as if its process died (its streams break).
func startKillableWorker(t *testing.T) (string, <-chan error, func()) {
	t.Helper()
	addr, done, _, kill := startWatchedWorker(t)
	return addr, done, kill
}

// startWatchedWorker is startKillableWorker with a function that says how
// many marks its current (or last) client has taken: a mark is counted
// once its figures are taken (and, for a step's first, reset), so a test
// that waits for one knows the step's interval has begun there.
func startWatchedWorker(t *testing.T) (string, <-chan error, func() int64, func()) {
	t.Helper()
	w, err := New(Options{ServerHost: "127.0.0.1", DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() { done <- w.Serve(ctx, lis); close(finished) }()
	t.Cleanup(func() { cancel(); <-finished })
	return lis.Addr().String(), done, w.Marks, func() { cancel(); <-finished }
}

func dial(t *testing.T, ctx context.Context, addr string) *driver.Remote {
	t.Helper()
	r, err := driver.Dial(ctx, addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// waitServed waits until the server answered at least n calls.
func waitServed(t *testing.T, ctx context.Context, served *atomic.Int64, n int64) {
	t.Helper()
	for served.Load() < n {
		select {
		case <-ctx.Done():
			t.Fatalf("the server answered %d calls before the test timeout, want %d", served.Load(), n)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestRunClientMarksAndResets drives a real rpclab worker with the
// driver's client against a real ping server: the setup is answered once,
// each mark exactly once with stats whose histogram (in the driver's
// geometry), OK count and WorkerDetail's exact HDR histogram agree; a
// reset starts the count again (the counts between resets add up to at
// most what the server answered); rpclab.conn=pool:3 opens 3 connections
// as the kernel sees them.
func TestRunClientMarksAndResets(t *testing.T) {
	ctx := testutil.LongContext(t)
	target, served := startPing(t)
	addr, _ := startWorker(t)
	r := dial(t, ctx, addr)
	if !r.RPCLab || r.Cores < 1 {
		t.Fatalf("got RPCLab %v, Cores %d; want an rpclab worker with at least one core", r.RPCLab, r.Cores)
	}
	cfg := testutil.ClosedLoopConfig(target, 2, 2, &pb.ChannelArg{Name: benchwire.ArgConn, Value: &pb.ChannelArg_StrValue{StrValue: "pool:3"}})
	run, err := r.StartClient(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Detail(ctx); !errors.Is(err, driver.ErrNoDetail) {
		t.Errorf("Detail before a mark: got %v, want ErrNoDetail", err)
	}
	waitServed(t, ctx, served, 200)

	s1, err := run.Mark(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	d1, err := run.Detail(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h1, err := stats.DecodeHistogram(d1.GetHistogramHdr())
	if err != nil {
		t.Fatal(err)
	}
	lat := s1.GetLatencies()
	if n := testutil.OKCount(s1); n < 150 || int64(lat.GetCount()) != n || testutil.BucketSum(lat) != n || h1.TotalCount() != n || d1.GetRequestsByCode()["OK"] != n {
		t.Errorf("mark 1: got OK %d, histogram count %v, bucket sum %d, HDR count %d, detail OK %d; want all equal and at least 150",
			n, lat.GetCount(), testutil.BucketSum(lat), h1.TotalCount(), d1.GetRequestsByCode()["OK"])
	}
	if got, want := len(lat.GetBucket()), (benchwire.Geometry{Resolution: 0.01, MaxPossible: 60e9}).Buckets(); got != want {
		t.Errorf("got %d buckets, want the driver's %d", got, want)
	}
	if lat.GetMinSeen() != float64(h1.Min()) || lat.GetMaxSeen() != float64(h1.Max()) {
		t.Errorf("got min/max %v/%v, want the HDR histogram's %d/%d", lat.GetMinSeen(), lat.GetMaxSeen(), h1.Min(), h1.Max())
	}
	if s1.GetTimeElapsed() <= 0 || s1.GetTimeUser()+s1.GetTimeSystem() <= 0 {
		t.Errorf("got time_elapsed %v, user %v, system %v; want them positive", s1.GetTimeElapsed(), s1.GetTimeUser(), s1.GetTimeSystem())
	}
	if got := d1.GetConnsObserved(); got != 3 {
		t.Errorf("got %d connections observed, want 3 (rpclab.conn=pool:3)", got)
	}
	// The host's CPU on the worker's CPUs over the mark (Linux's /proc/stat).
	if runtime.GOOS == "linux" && (len(d1.GetCpus()) == 0 || d1.GetHostBusyNs() <= 0 || d1.GetHostIdleNs() < 0) {
		t.Errorf("got host CPU %v busy %d idle %d, want the worker's CPUs and their busy time", d1.GetCpus(), d1.GetHostBusyNs(), d1.GetHostIdleNs())
	}

	t2 := time.Now()
	s2, err := run.Mark(ctx, true) // cumulative since the setup, then reset
	if err != nil {
		t.Fatal(err)
	}
	if testutil.OKCount(s2) < testutil.OKCount(s1) || s2.GetTimeElapsed() < s1.GetTimeElapsed() {
		t.Errorf("mark 2 (no reset before it): got %d RPCs in %vs, want at least mark 1's %d in %vs", testutil.OKCount(s2), s2.GetTimeElapsed(), testutil.OKCount(s1), s1.GetTimeElapsed())
	}
	waitServed(t, ctx, served, served.Load()+200)
	s3, err := run.Mark(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	after := served.Load()
	if c2, c3 := testutil.OKCount(s2), testutil.OKCount(s3); c2+c3 > after || c3 < 150 {
		t.Errorf("got %d RPCs before the reset and %d after, the server answered %d: want the sum at most that (a reset forgets) and at least 150 after", c2, c3, after)
	}
	if bound := time.Since(t2).Seconds(); s3.GetTimeElapsed() > bound {
		t.Errorf("mark 3: got time_elapsed %vs, want it counted from mark 2's reset (at most %vs ago)", s3.GetTimeElapsed(), bound)
	}
	d3, err := run.Detail(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d3.GetMark() != 3 || d3.GetRequestsByCode()["OK"] != testutil.OKCount(s3) {
		t.Errorf("detail of mark 3: got mark %d with %d OK, want mark 3 with %d", d3.GetMark(), d3.GetRequestsByCode()["OK"], testutil.OKCount(s3))
	}
	if err := run.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRunClientErrorsCounted points the worker at a server without the
// ping service: every RPC fails with Unimplemented, counted in
// request_results and absent from the latency histogram.
func TestRunClientErrorsCounted(t *testing.T) {
	ctx := testutil.LongContext(t)
	target := serve(t, grpc.NewServer())
	addr, _ := startWorker(t)
	run, err := dial(t, ctx, addr).StartClient(ctx, testutil.ClosedLoopConfig(target, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close(ctx)
	var s *pb.ClientStats
	for {
		if s, err = run.Mark(ctx, false); err != nil {
			t.Fatal(err)
		}
		if len(s.GetRequestResults()) > 0 {
			break
		}
		// No event says an RPC failed: poll, until ctx's deadline.
		select {
		case <-ctx.Done():
			t.Fatalf("no RPC result before the test's deadline: %v", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	rr := s.GetRequestResults()
	if len(rr) != 1 || codes.Code(rr[0].GetStatusCode()) != codes.Unimplemented || rr[0].GetCount() < 1 || s.GetLatencies().GetCount() != 0 {
		t.Errorf("got request_results %v and %v latencies, want only Unimplemented and no latency", rr, s.GetLatencies().GetCount())
	}
}

// TestRunClientPoissonIsPaced asks for 100 RPCs per second: a worker that
// ignored the rate would make thousands on loopback.
func TestRunClientPoissonIsPaced(t *testing.T) {
	ctx := testutil.LongContext(t)
	target, served := startPing(t)
	addr, _ := startWorker(t)
	cfg := testutil.ClosedLoopConfig(target, 1, 4)
	cfg.LoadParams = &pb.LoadParams{Load: &pb.LoadParams_Poisson{Poisson: &pb.PoissonParams{OfferedLoad: 100}}}
	run, err := dial(t, ctx, addr).StartClient(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close(ctx)
	// Some RPCs answered (the bound below is a rate over the elapsed time
	// the worker reports, so how long this takes does not matter).
	waitServed(t, ctx, served, 10)
	s, err := run.Mark(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, limit := testutil.OKCount(s), int64(100*s.GetTimeElapsed()*3)+20; got < 1 || got > limit {
		t.Errorf("got %d RPCs in %.2fs at 100/s offered, want between 1 and %d", got, s.GetTimeElapsed(), limit)
	}
}

// TestRunClientBadConfig: a config the worker cannot run ends RunClient
// with InvalidArgument naming the field.
func TestRunClientBadConfig(t *testing.T) {
	ctx := testutil.LongContext(t)
	addr, _ := startWorker(t)
	r := dial(t, ctx, addr)
	cfg := testutil.ClosedLoopConfig("127.0.0.1:1", 1, 1)
	cfg.RpcType = pb.RpcType_STREAMING_FROM_SERVER
	_, err := r.StartClient(ctx, cfg)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "rpc_type") {
		t.Errorf("got %v, want InvalidArgument naming rpc_type", err)
	}
	// The worker is free for the next run.
	target, _ := startPing(t)
	run, err := r.StartClient(ctx, testutil.ClosedLoopConfig(target, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	run.Close(ctx)
}

// TestRunServerCoreCountQuit: RunServer serves rpclab's ping on the port
// it reports and stops when the driver closes the stream; CoreCount
// answers; QuitWorker ends Serve.
func TestRunServerCoreCountQuit(t *testing.T) {
	ctx := testutil.LongContext(t)
	addr, done := startWorker(t)
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ws := pb.NewWorkerServiceClient(cc)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := ws.RunServer(sctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&pb.ServerArgs{Argtype: &pb.ServerArgs_Setup{Setup: &pb.ServerConfig{Port: 0}}}); err != nil {
		t.Fatal(err)
	}
	st, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if st.GetPort() == 0 || st.GetCores() < 1 {
		t.Fatalf("got port %d, cores %d; want a port and at least one core", st.GetPort(), st.GetCores())
	}
	ping := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(st.GetPort())))
	pc, err := grpc.NewClient(ping, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	resp, err := pb.NewBenchmarkServiceClient(pc).UnaryCall(ctx, &pb.SimpleRequest{ResponseSize: 7})
	if err != nil || len(resp.GetPayload().GetBody()) != 7 {
		t.Fatalf("ping on the reported port: got %v, %v; want 7 bytes", resp, err)
	}
	if err := stream.Send(&pb.ServerArgs{Argtype: &pb.ServerArgs_Mark{Mark: &pb.Mark{Reset_: true}}}); err != nil {
		t.Fatal(err)
	}
	if st, err = stream.Recv(); err != nil || st.GetStats().GetTimeElapsed() <= 0 {
		t.Fatalf("mark: got %v, %v; want stats with time_elapsed", st, err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err == nil {
		t.Fatal("got a status after CloseSend, want the end of the stream")
	}
	if c, err := net.DialTimeout("tcp", ping, time.Second); err == nil {
		c.Close()
		t.Errorf("the ping server still accepts connections after the stream ended")
	}

	cr, err := ws.CoreCount(ctx, &pb.CoreRequest{})
	if err != nil || cr.GetCores() < 1 {
		t.Fatalf("CoreCount: got %v, %v", cr, err)
	}
	if _, err := ws.QuitWorker(ctx, &pb.Void{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after QuitWorker: got %v, want nil", err)
		}
	case <-ctx.Done():
		t.Fatal("Serve did not end after QuitWorker")
	}
}

// TestMarkDetailUnknownMark: a mark that does not exist is NotFound.
func TestMarkDetailUnknownMark(t *testing.T) {
	ctx := testutil.LongContext(t)
	addr, _ := startWorker(t)
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	_, err = workerpb.NewWorkerDetailClient(cc).MarkDetail(ctx, &workerpb.MarkDetailRequest{Mark: 1})
	if status.Code(err) != codes.NotFound {
		t.Errorf("got %v, want NotFound", err)
	}
}

// TestDialUnreachable: a worker that does not answer is an error naming it.
func TestDialUnreachable(t *testing.T) {
	ctx := testutil.LongContext(t)
	addr := closedAddr(t)
	_, err := driver.Dial(ctx, addr, 300*time.Millisecond)
	if !errors.Is(err, driver.ErrUnreachable) || !strings.Contains(err.Error(), addr) {
		t.Errorf("got %v, want driver.ErrUnreachable naming %s", err, addr)
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string { return testutil.ClosedAddr(t) }
