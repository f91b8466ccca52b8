// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/server"
	"github.com/rpclab/rpclab/internal/testutil"
	"github.com/rpclab/rpclab/internal/usage"
	pb "github.com/rpclab/rpclab/proto/benchpb"
	"github.com/rpclab/rpclab/proto/usagepb"
	"github.com/rpclab/rpclab/proto/ydbpb"
)

// countingDebug is YDB's DebugService counting the pings it answers.
type countingDebug struct {
	server.Debug
	unary, stream atomic.Int64
}

func (d *countingDebug) PingPlainGrpc(ctx context.Context, req *ydbpb.PlainGrpcRequest) (*ydbpb.PlainGrpcResponse, error) {
	d.unary.Add(1)
	return d.Debug.PingPlainGrpc(ctx, req)
}

func (d *countingDebug) PingStream(s ydbpb.DebugService_PingStreamServer) error {
	for {
		if _, err := s.Recv(); err != nil {
			return nil
		}
		d.stream.Add(1)
		if err := s.Send(&ydbpb.PlainGrpcResponse{CallBackTs: 1}); err != nil {
			return err
		}
	}
}

// TestSweepYDBDebug: with Service YDBDebug a sweep drives YDB's
// DebugService (a server with nothing else answers every step, unary on
// PingPlainGrpc and streaming on PingStream), the records say so in
// spec.service and validate; against a server without that service every
// step fails Unimplemented; a benchmark record has no service key.
func TestSweepYDBDebug(t *testing.T) {
	d := &countingDebug{}
	s := grpc.NewServer()
	ydbpb.RegisterDebugServiceServer(s, d)
	spec := shortSpec(testutil.Serve(t, s))
	spec.Service = YDBDebug
	spec.RPCs = []string{Unary, Streaming}
	spec.Inflight = []int{1, 3}
	spec.Conns = []ConnMode{{Kind: Shared}, {Kind: PerWorker}}
	var recs []*result.Record
	err := Sweep(testutil.Context(t), spec, Options{}, func(r *result.Record) error {
		recs = append(recs, r)
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		return result.Validate(b)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 8 {
		t.Fatalf("got %d records, want 8", len(recs))
	}
	var reqs = map[string]int64{}
	for _, r := range recs {
		if r.Status != result.StatusOK || r.Requests == 0 || r.Spec.Service != "ydb-debug" {
			t.Errorf("%s %s inflight=%d: status %q (%s), %d requests, service %q; want ok, some, ydb-debug",
				r.Spec.ConnMode, r.Spec.RPC, r.Spec.Inflight, r.Status, r.Error, r.Requests, r.Spec.Service)
		}
		reqs[r.Spec.RPC] += r.Requests
	}
	// The server answered at least every recorded ping (warm-ups too), each
	// on the method of its kind.
	if got := d.unary.Load(); got < reqs[Unary] {
		t.Errorf("PingPlainGrpc answered %d, want at least the %d unary requests recorded", got, reqs[Unary])
	}
	if got := d.stream.Load(); got < reqs[Streaming] {
		t.Errorf("PingStream answered %d, want at least the %d streaming requests recorded", got, reqs[Streaming])
	}

	bench := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(bench, &server.Ping{})
	spec.Target = testutil.Serve(t, bench)
	spec.RPCs, spec.Inflight, spec.Conns = []string{Unary}, []int{1}, []ConnMode{{Kind: Shared}}
	rec, err := RunStep(testutil.Context(t), spec, spec.Steps()[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != result.StatusFailed || rec.Errors["Unimplemented"] == 0 {
		t.Errorf("ydb-debug against BenchmarkService alone: status %q, errors %v; want failed, Unimplemented", rec.Status, rec.Errors)
	}
	spec.Service = Benchmark
	rec, err = RunStep(testutil.Context(t), spec, spec.Steps()[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != result.StatusOK || strings.Contains(string(b), `"service"`) {
		t.Errorf("benchmark step: status %q, record %s; want ok without a service key (benchmark is the default)", rec.Status, b)
	}
}

// TestServiceBadInput: an unknown service and a payload for YDB's ping
// (which has none) are usage errors naming the setting.
func TestServiceBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Spec)
		want error
	}{
		{"unknown service", func(s *Spec) { s.Service = "ydb" }, ErrService},
		{"payload for ydb-debug", func(s *Spec) { s.Service, s.PayloadBytes = YDBDebug, 10 }, ErrPayload},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			tc.mod(&s)
			err := s.Validate()
			var ue *usage.Error
			if !errors.As(err, &ue) || !errors.Is(err, tc.want) {
				t.Errorf("got %v, want a *usage.Error for %v", err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		in   string
		want Service
	}{{"", Benchmark}, {"benchmark", Benchmark}, {"ydb-debug", YDBDebug}} {
		if got, err := ParseService(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseService(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseService("grpc.testing"); !errors.Is(err, ErrService) || !strings.Contains(err.Error(), "ydb-debug") {
		t.Errorf("ParseService(grpc.testing) = %v, want ErrService naming the services", err)
	}
}

// scriptedUsage answers UsageService from a script: each call takes the
// next answer.
type scriptedUsage struct {
	usagepb.UnimplementedUsageServiceServer
	answers []*usagepb.UsageResponse
	n       atomic.Int64
}

func (u *scriptedUsage) Usage(context.Context, *usagepb.UsageRequest) (*usagepb.UsageResponse, error) {
	i := int(u.n.Add(1)) - 1
	return u.answers[min(i, len(u.answers)-1)], nil
}

// TestServerCPU: a step against a server answering UsageService records
// the server's CPU between the interval's two reads (exactly, from a
// scripted server: 0.5 s over 2 CPUs), per RPC and as the share of its
// CPUs kept busy; rpclab's own server in this process reports at least the
// CPU the client measured over the interval (the reads enclose it); a
// server without the service, or one that restarted between the reads
// (another pid), gives no server_cpu.
func TestServerCPU(t *testing.T) {
	run := func(t *testing.T, s *grpc.Server) *result.Record {
		t.Helper()
		spec := shortSpec(testutil.Serve(t, s))
		spec.Conns = []ConnMode{{Kind: Shared}}
		rec, err := RunStep(testutil.Context(t), spec, spec.Steps()[0], Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rec.Status != result.StatusOK {
			t.Fatalf("status %q: %s", rec.Status, rec.Error)
		}
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := result.Validate(b); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	scripted := func(answers ...*usagepb.UsageResponse) *grpc.Server {
		s := grpc.NewServer()
		pb.RegisterBenchmarkServiceServer(s, &server.Ping{})
		usagepb.RegisterUsageServiceServer(s, &scriptedUsage{answers: answers})
		return s
	}

	t.Run("scripted", func(t *testing.T) {
		rec := run(t, scripted(&usagepb.UsageResponse{CpuNs: 1e9, Cpus: 2, Pid: 7}, &usagepb.UsageResponse{CpuNs: 15e8, Cpus: 2, Pid: 7}))
		sc := rec.ServerCPU
		if sc == nil {
			t.Fatal("no server_cpu")
		}
		if sc.CPUNS != 5e8 || sc.CPUs != 2 {
			t.Errorf("got cpu_ns %d, cpus %d; want 500000000, 2", sc.CPUNS, sc.CPUs)
		}
		if want := 5e8 / float64(rec.Requests); math.Abs(sc.CPUNSPerRPC-want) > 1e-9*want {
			t.Errorf("got cpu_ns_per_rpc %v, want %v", sc.CPUNSPerRPC, want)
		}
		if want := 5e8 / float64(rec.DurationNS) / 2; math.Abs(sc.Busy-want) > 1e-9 {
			t.Errorf("got busy %v, want %v", sc.Busy, want)
		}
	})
	t.Run("rpclab server", func(t *testing.T) {
		rec := run(t, server.New(server.Options{}))
		sc := rec.ServerCPU
		if sc == nil {
			t.Fatal("no server_cpu from rpclab's server")
		}
		if sc.CPUNS < rec.ClientCPUNS || sc.CPUs < 1 {
			t.Errorf("got server cpu_ns %d on %d CPUs, want at least the process's %d over the interval", sc.CPUNS, sc.CPUs, rec.ClientCPUNS)
		}
	})
	t.Run("foreign server", func(t *testing.T) {
		s := grpc.NewServer()
		pb.RegisterBenchmarkServiceServer(s, &server.Ping{})
		if rec := run(t, s); rec.ServerCPU != nil {
			t.Errorf("got server_cpu %+v from a server without UsageService, want none", rec.ServerCPU)
		}
	})
	t.Run("restarted", func(t *testing.T) {
		rec := run(t, scripted(&usagepb.UsageResponse{CpuNs: 1e9, Cpus: 2, Pid: 7}, &usagepb.UsageResponse{CpuNs: 2e9, Cpus: 2, Pid: 8}))
		if rec.ServerCPU != nil {
			t.Errorf("got server_cpu %+v across two server processes, want none", rec.ServerCPU)
		}
	})
}
