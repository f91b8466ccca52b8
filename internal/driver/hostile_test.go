// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package driver

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/benchwire"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/testutil"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// hostileWorker speaks the official worker protocol and answers every
// mark with stats: what a buggy or hostile worker may send a driver.
type hostileWorker struct {
	pb.UnimplementedWorkerServiceServer
	stats *pb.ClientStats
}

func (h *hostileWorker) CoreCount(_ context.Context, _ *pb.CoreRequest) (*pb.CoreResponse, error) {
	return &pb.CoreResponse{Cores: 1}, nil
}

func (h *hostileWorker) RunClient(stream grpc.BidiStreamingServer[pb.ClientArgs, pb.ClientStatus]) error {
	for {
		args, err := stream.Recv()
		if err != nil {
			return nil
		}
		st := &pb.ClientStatus{}
		if args.GetMark() != nil {
			st.Stats = h.stats
		}
		if err := stream.Send(st); err != nil {
			return nil
		}
	}
}

// TestSweepRefusesImpossibleWorkerFigures: a worker that reports
// negative counts, a NaN or absurd elapsed time, or an unknown status
// code gives a failed step naming it, and the record written is one
// result.Check and the reader accept: the file stays usable.
func TestSweepRefusesImpossibleWorkerFigures(t *testing.T) {
	g := benchwire.Geometry{Resolution: benchwire.DefaultResolution, MaxPossible: benchwire.DefaultMaxPossible}
	good := func() *pb.ClientStats {
		d := &pb.HistogramData{Bucket: make([]uint32, g.Buckets()), MinSeen: 1e6, MaxSeen: 1e6, Count: 10}
		d.Bucket[g.BucketOf(1e6)] = 10
		return &pb.ClientStats{Latencies: d, TimeElapsed: 0.3, TimeUser: 0.1,
			RequestResults: []*pb.RequestResultCount{{StatusCode: 0, Count: 10}}}
	}
	tests := []struct {
		name  string
		spoil func(s *pb.ClientStats)
		want  string
	}{
		{"negative count", func(s *pb.ClientStats) { s.RequestResults[0].Count = -5 }, "count -5"},
		{"NaN elapsed", func(s *pb.ClientStats) { s.TimeElapsed = math.NaN() }, "time_elapsed NaN"},
		{"1e300 elapsed", func(s *pb.ClientStats) { s.TimeElapsed = 1e300 }, "time_elapsed 1e+300"},
		{"negative elapsed", func(s *pb.ClientStats) { s.TimeElapsed = -1 }, "time_elapsed -1"},
		{"infinite cpu", func(s *pb.ClientStats) { s.TimeSystem = math.Inf(1) }, "time_system +Inf"},
		{"status 999", func(s *pb.ClientStats) { s.RequestResults[0].StatusCode = 999 }, "status code 999"},
		{"NaN latency", func(s *pb.ClientStats) { s.Latencies.MaxSeen = math.NaN() }, "max_seen NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testutil.LongContext(t)
			target, _ := startPing(t)
			st := good()
			tc.spoil(st)
			s := grpc.NewServer()
			pb.RegisterWorkerServiceServer(s, &hostileWorker{stats: st})
			addr := serve(t, s)
			remotes, err := Connect(ctx, []string{addr}, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			spec := sweepSpec(target, 1)
			spec.Warmup, spec.Interval = time.Millisecond, time.Millisecond
			var buf bytes.Buffer
			w := result.NewWriter(&buf)
			var recs []*result.Record
			err = Sweep(ctx, remotes, spec, func(r *result.Record) error { recs = append(recs, r); return w.Write(r) }, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Sweep: got %v, want an error naming %q", err, tc.want)
			}
			if len(recs) != 1 {
				t.Fatalf("got %d records, want 1", len(recs))
			}
			rec := recs[0]
			if rec.Status != result.StatusFailed || !strings.Contains(rec.Error, addr) || !strings.Contains(rec.Error, tc.want) {
				t.Errorf("got status %s, error %q; want failed, naming %s and %q", rec.Status, rec.Error, addr, tc.want)
			}
			if err := result.Check(rec); err != nil {
				t.Errorf("result.Check: got %v, want nil", err)
			}
			if _, err := result.ReadAll(ctx, &buf); err != nil {
				t.Errorf("reading the records back: got %v, want nil", err)
			}
		})
	}
}

// TestSweepChecksMergedRecord: a merged record that fails result.Check
// (here two workers whose counts overflow together) is written as a
// failed step saying why, never as figures no reader accepts.
func TestSweepChecksMergedRecord(t *testing.T) {
	rec := newRecord(sweepSpec("127.0.0.1:1", 1), sweepSpec("127.0.0.1:1", 1).Steps()[0])
	rec.Requests, rec.Errors = 1, map[string]int64{"Internal": 2}
	got := checked(rec)
	if got.Status != result.StatusFailed || !strings.Contains(got.Error, "errors 2 above requests 1") {
		t.Errorf("got status %s, error %q; want failed, naming errors above requests", got.Status, got.Error)
	}
	if err := result.Check(got); err != nil {
		t.Errorf("result.Check: got %v, want nil", err)
	}
}
