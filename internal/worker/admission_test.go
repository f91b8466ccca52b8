// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package worker

import (
	"context"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/proto/workerpb"
)

// startWorkerWith serves w on a free loopback port until the test ends.
func startWorkerWith(t *testing.T, w *Worker) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	go func() { _ = w.Serve(ctx, lis); close(finished) }()
	t.Cleanup(func() { cancel(); <-finished })
	return lis.Addr().String()
}

func withPayload(cfg *pb.ClientConfig, n int32) *pb.ClientConfig {
	cfg.PayloadConfig = &pb.PayloadConfig{Payload: &pb.PayloadConfig_SimpleParams{SimpleParams: &pb.SimpleProtoParams{ReqSize: n, RespSize: n}}}
	return cfg
}

// TestRunClientRefusesWhatItCannotHold: a ClientConfig that asks for more
// than the worker can hold (issue 25's 20,000 outstanding RPCs with 4 MiB
// payloads took a worker to 5.3 GB and out of memory) is refused over a
// real WorkerService stream with a status naming the field and the limit,
// and the worker runs the next, normal config.
func TestRunClientRefusesWhatItCannotHold(t *testing.T) {
	ctx := testutil.LongContext(t)
	w, err := New(Options{ServerHost: "127.0.0.1", DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r := dial(t, ctx, startWorkerWith(t, w))
	const target = "127.0.0.1:1" // never dialled: the config is refused first
	for _, tc := range []struct {
		name string
		cfg  *pb.ClientConfig
		code codes.Code
		want []string
	}{
		{"hostile", withPayload(testutil.ClosedLoopConfig(target, 1, 20000), 4<<20-64), codes.ResourceExhausted,
			[]string{"outstanding_rpcs_per_channel 20000", "memory budget is 2GiB"}},
		{"64 KiB payloads, 20000 in flight", withPayload(testutil.ClosedLoopConfig(target, 1, 20000), 64<<10), codes.ResourceExhausted,
			[]string{"outstanding_rpcs_per_channel 20000", "memory budget is 2GiB"}},
		{"4 MiB payloads", withPayload(testutil.ClosedLoopConfig(target, 1, 1), 4<<20), codes.InvalidArgument,
			[]string{"req_size 4194304", "0..4194240"}},
		{"in flight above the maximum", testutil.ClosedLoopConfig(target, 2, 20000), codes.InvalidArgument,
			[]string{"outstanding_rpcs_per_channel 20000", "40000 RPCs in flight", "20000 RPCs in flight"}},
		{"channels above the maximum", testutil.ClosedLoopConfig(target, 20001, 1), codes.InvalidArgument,
			[]string{"client_channels 20001", "at most 20000 channels"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.StartClient(ctx, tc.cfg)
			if got := status.Code(err); got != tc.code {
				t.Fatalf("got %v, want %v", err, tc.code)
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("got %q, want it to name %q", err, s)
				}
			}
		})
	}
	target2, served := startPing(t)
	run, err := r.StartClient(ctx, testutil.ClosedLoopConfig(target2, 1, 2))
	if err != nil {
		t.Fatalf("a normal config after the refusals: %v", err)
	}
	waitServed(t, ctx, served, 10)
	if err := run.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRunWithoutSetupTimesOut: a RunClient or RunServer stream that never
// sends its setup ends with DeadlineExceeded once the setup timer fires,
// and the run slot it held is free for the next run.
func TestRunWithoutSetupTimesOut(t *testing.T) {
	for _, kind := range []string{"client", "server"} {
		t.Run(kind, func(t *testing.T) {
			ctx := testutil.LongContext(t)
			w, err := New(Options{ServerHost: "127.0.0.1", DialTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			fire := make(chan time.Time)
			close(fire)
			var fired atomic.Bool
			w.setupTimer = func(time.Duration) (<-chan time.Time, func() bool) {
				if fired.CompareAndSwap(false, true) { // only the silent stream's timer fires
					return fire, func() bool { return false }
				}
				return nil, func() bool { return false }
			}
			addr := startWorkerWith(t, w)
			cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			ws := pb.NewWorkerServiceClient(cc)
			var recv func() error
			if kind == "client" {
				s, err := ws.RunClient(ctx)
				if err != nil {
					t.Fatal(err)
				}
				recv = func() error { _, err := s.Recv(); return err }
			} else {
				s, err := ws.RunServer(ctx)
				if err != nil {
					t.Fatal(err)
				}
				recv = func() error { _, err := s.Recv(); return err }
			}
			if err := recv(); status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), "no setup") {
				t.Fatalf("a stream without its setup: got %v, want DeadlineExceeded naming the missing setup", err)
			}
			r := dial(t, ctx, addr)
			if kind == "client" {
				target, _ := startPing(t)
				run, err := r.StartClient(ctx, testutil.ClosedLoopConfig(target, 1, 1))
				if err != nil {
					t.Fatalf("the next RunClient: got %v, want the slot free", err)
				}
				run.Close(ctx)
				return
			}
			s, err := ws.RunServer(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Send(&pb.ServerArgs{Argtype: &pb.ServerArgs_Setup{Setup: &pb.ServerConfig{}}}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Recv(); err != nil {
				t.Fatalf("the next RunServer: got %v, want the slot free", err)
			}
			s.CloseSend()
		})
	}
}

// TestMarkDetailKeepsLastMarks: over a real stream, a run marked more than
// KeptMarks times keeps the detail of the last KeptMarks marks only.
func TestMarkDetailKeepsLastMarks(t *testing.T) {
	ctx := testutil.LongContext(t)
	w, err := New(Options{ServerHost: "127.0.0.1", DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	addr := startWorkerWith(t, w)
	r := dial(t, ctx, addr)
	target, _ := startPing(t)
	run, err := r.StartClient(ctx, testutil.ClosedLoopConfig(target, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close(ctx)
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	wd := workerpb.NewWorkerDetailClient(cc)
	const marks = KeptMarks + 5
	for range marks {
		if _, err := run.Mark(ctx, true); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		mark int64
		code codes.Code
	}{
		{1, codes.NotFound},
		{marks - KeptMarks, codes.NotFound},
		{marks - KeptMarks + 1, codes.OK},
		{marks, codes.OK},
		{marks + 1, codes.NotFound},
	} {
		d, err := wd.MarkDetail(ctx, &workerpb.MarkDetailRequest{Mark: tc.mark})
		if got := status.Code(err); got != tc.code || err == nil && d.GetMark() != tc.mark {
			t.Errorf("mark %d: got %v (mark %d), want %v", tc.mark, err, d.GetMark(), tc.code)
		}
	}
}

// TestKeptMarksMemoryBounded: 35,000 marks (a run issue 25 saw keep 650 MB)
// with a 20 KiB histogram each leave at most KeptMarks of them on the heap.
func TestKeptMarksMemoryBounded(t *testing.T) {
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	const hist = 20 << 10
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 35000 {
		w.keep(&workerpb.MarkDetailResponse{HistogramHdr: strings.Repeat("x", hist)})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got, bound := int64(after.HeapAlloc)-int64(before.HeapAlloc), int64(2*KeptMarks*hist+1<<20); got > bound {
		t.Errorf("got %d bytes held after 35000 marks, want at most %d (%d marks kept)", got, bound, KeptMarks)
	}
	if got := len(w.details); got != KeptMarks {
		t.Errorf("got %d marks kept, want %d", got, KeptMarks)
	}
	runtime.KeepAlive(w)
}
