// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// TestFillWritesErrorSample: a step's record carries one failed RPC's code
// and message in error_sample, and a step whose every RPC failed says so
// with it in error (issue 16: "every RPC failed (5542)" named no code and no
// message); the record validates.
func TestFillWritesErrorSample(t *testing.T) {
	unimpl := status.Error(codes.Unimplemented, "unknown method Foo")
	tests := []struct {
		name       string
		record     func(r *stats.Recorder)
		wantStatus string
		wantError  string
		wantSample string
	}{
		{"no failure", func(r *stats.Recorder) { r.RecordErr(time.Millisecond, codes.OK, nil) }, result.StatusOK, "", ""},
		{"every RPC failed with one code", func(r *stats.Recorder) {
			for range 3 {
				r.RecordErr(time.Millisecond, codes.Unimplemented, unimpl)
			}
		}, result.StatusFailed, "every RPC failed (3): Unimplemented: unknown method Foo", "Unimplemented: unknown method Foo"},
		{"every RPC failed with two codes", func(r *stats.Recorder) {
			r.RecordErr(time.Millisecond, codes.Unimplemented, unimpl)
			r.RecordErr(time.Millisecond, codes.Unimplemented, unimpl)
			r.RecordErr(time.Millisecond, codes.DeadlineExceeded, errCutOff)
		}, result.StatusFailed, "every RPC failed (3: Unimplemented 2, DeadlineExceeded 1): Unimplemented: unknown method Foo", "Unimplemented: unknown method Foo"},
		{"every RPC failed, no sample kept", func(r *stats.Recorder) {
			r.Record(time.Millisecond, codes.Unavailable)
		}, result.StatusFailed, "every RPC failed (1: Unavailable 1)", ""},
		{"a few failed", func(r *stats.Recorder) {
			r.RecordErr(time.Millisecond, codes.OK, nil)
			r.RecordErr(time.Millisecond, codes.Internal, errors.New("boom"))
		}, result.StatusOK, "", "Internal: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := stats.NewRecorder()
			tc.record(r)
			rec := &result.Record{SchemaVersion: result.SchemaVersion, Kind: result.KindPing, Status: result.StatusOK,
				StartedAt: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), Errors: map[string]int64{},
				Spec: result.Spec{Target: "127.0.0.1:1", RPC: "unary", ConnMode: "shared", ConnsRequested: 1, Inflight: 1, IntervalNS: 1e9, LoadModel: "closed"},
				Env:  result.Env{Language: "go", GRPCImpl: "grpc-go", HostCPUs: 1}}
			fill(rec, stats.Merge(r), time.Second, time.Millisecond)
			if rec.Status != tc.wantStatus || rec.Error != tc.wantError || rec.ErrorSample != tc.wantSample {
				t.Errorf("got status %q, error %q, sample %q; want %q, %q, %q", rec.Status, rec.Error, rec.ErrorSample, tc.wantStatus, tc.wantError, tc.wantSample)
			}
			b, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			if err := result.Validate(b); err != nil {
				t.Errorf("the record does not validate: %v", err)
			}
		})
	}
}

// silentServer never answers: each call waits for its context to end.
type silentServer struct {
	pb.UnimplementedBenchmarkServiceServer
}

func (silentServer) UnaryCall(ctx context.Context, _ *pb.SimpleRequest) (*pb.SimpleResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestOpenLoopSampleOfCutOffRPCs: RPCs the drain cuts off count as
// DeadlineExceeded, and the sample says why, not the "context canceled"
// the client saw when the drain ended them.
func TestOpenLoopSampleOfCutOffRPCs(t *testing.T) {
	s := grpc.NewServer()
	pb.RegisterBenchmarkServiceServer(s, silentServer{})
	spec := shortSpec(testutil.Serve(t, s))
	spec.Warmup = 0
	spec.Conns = []ConnMode{{Kind: Shared}}
	step := Step{Conn: ConnMode{Kind: Shared}, RPC: Unary, Inflight: 1}
	open := OpenSpec{Rates: []float64{20}, OpenLoop: OpenLoop{Arrival: Constant, Pacing: TimerPacing, MaxOutstanding: DefaultMaxOutstanding, Drain: 50 * time.Millisecond}}
	rec, err := RunOpenStep(testutil.Context(t), spec, step, open, 20, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "DeadlineExceeded: still in flight when the step's drain ended"
	if rec.Status != result.StatusFailed || rec.Errors["DeadlineExceeded"] == 0 || len(rec.Errors) != 1 || rec.ErrorSample != want {
		t.Errorf("got status %q (%s), errors %v, sample %q; want failed, only DeadlineExceeded, sample %q", rec.Status, rec.Error, rec.Errors, rec.ErrorSample, want)
	}
}
