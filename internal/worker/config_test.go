// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package worker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpclab/rpclab/internal/loadgen"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// TestClientRunOf maps ClientConfigs onto rpclab's engine: the layout from
// client_channels x outstanding_rpcs_per_channel, rpclab.conn replacing
// it, the RPC kind, the Poisson rate, the payload and the deadline.
func TestClientRunOf(t *testing.T) {
	str := func(name, v string) *pb.ChannelArg {
		return &pb.ChannelArg{Name: name, Value: &pb.ChannelArg_StrValue{StrValue: v}}
	}
	num := func(name string, v int32) *pb.ChannelArg {
		return &pb.ChannelArg{Name: name, Value: &pb.ChannelArg_IntValue{IntValue: v}}
	}
	for _, tc := range []struct {
		name       string
		edit       func(*pb.ClientConfig)
		wantConn   string
		wantIn     int
		wantRPC    string
		wantRate   float64
		wantBytes  int
		wantTimout time.Duration
		wantArr    string
	}{
		{name: "one channel is shared", edit: func(c *pb.ClientConfig) { c.ClientChannels, c.OutstandingRpcsPerChannel = 1, 8 }, wantConn: "shared", wantIn: 8, wantRPC: loadgen.Unary, wantBytes: 16},
		{name: "one RPC per channel is per-worker", edit: func(c *pb.ClientConfig) { c.ClientChannels, c.OutstandingRpcsPerChannel = 6, 1 }, wantConn: "per-worker", wantIn: 6, wantRPC: loadgen.Unary, wantBytes: 16},
		{name: "otherwise a pool of the channels", edit: func(c *pb.ClientConfig) { c.ClientChannels, c.OutstandingRpcsPerChannel = 3, 5 }, wantConn: "pool:3", wantIn: 15, wantRPC: loadgen.Unary, wantBytes: 16},
		{name: "rpclab.conn replaces the layout", edit: func(c *pb.ClientConfig) {
			c.ClientChannels, c.OutstandingRpcsPerChannel = 1, 8
			c.ChannelArgs = []*pb.ChannelArg{str("grpc.some_arg", "x"), str(ArgConn, "pool:4:least-loaded")}
		}, wantConn: "pool:4:least-loaded", wantIn: 8, wantRPC: loadgen.Unary, wantBytes: 16},
		{name: "streaming, poisson, payload, deadline", edit: func(c *pb.ClientConfig) {
			c.RpcType = pb.RpcType_STREAMING
			c.PayloadConfig = &pb.PayloadConfig{Payload: &pb.PayloadConfig_SimpleParams{SimpleParams: &pb.SimpleProtoParams{ReqSize: 1024, RespSize: 1024}}}
			c.LoadParams = &pb.LoadParams{Load: &pb.LoadParams_Poisson{Poisson: &pb.PoissonParams{OfferedLoad: 250}}}
			c.ChannelArgs = []*pb.ChannelArg{num(ArgRPCTimeout, 1500)}
		}, wantConn: "pool:2", wantIn: 6, wantRPC: loadgen.Streaming, wantRate: 250, wantBytes: 1024, wantTimout: 1500 * time.Millisecond, wantArr: loadgen.Poisson},
		{name: "rpclab.arrival constant", edit: func(c *pb.ClientConfig) {
			c.LoadParams = &pb.LoadParams{Load: &pb.LoadParams_Poisson{Poisson: &pb.PoissonParams{OfferedLoad: 100}}}
			c.ChannelArgs = []*pb.ChannelArg{str(ArgArrival, loadgen.Constant)}
		}, wantConn: "pool:2", wantIn: 6, wantRPC: loadgen.Unary, wantRate: 100, wantBytes: 16, wantArr: loadgen.Constant},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := closedLoop("127.0.0.1:5000", 2, 3)
			tc.edit(cfg)
			r, err := clientRunOf(cfg, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.step.Conn.String(); got != tc.wantConn {
				t.Errorf("got layout %s, want %s", got, tc.wantConn)
			}
			if r.step.Inflight != tc.wantIn || r.step.RPC != tc.wantRPC || r.rate != tc.wantRate || r.spec.PayloadBytes != tc.wantBytes || r.spec.RPCTimeout != tc.wantTimout {
				t.Errorf("got inflight %d, rpc %s, rate %v, payload %d, timeout %v; want %d, %s, %v, %d, %v",
					r.step.Inflight, r.step.RPC, r.rate, r.spec.PayloadBytes, r.spec.RPCTimeout, tc.wantIn, tc.wantRPC, tc.wantRate, tc.wantBytes, tc.wantTimout)
			}
			if tc.wantArr != "" && r.arrival != tc.wantArr {
				t.Errorf("got arrival %q, want %q", r.arrival, tc.wantArr)
			}
			if r.spec.Target != "127.0.0.1:5000" {
				t.Errorf("got target %q, want 127.0.0.1:5000", r.spec.Target)
			}
		})
	}
}

// TestClientRunOfErrors: each config rpclab cannot run is ErrConfig naming
// the field.
func TestClientRunOfErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*pb.ClientConfig)
		want string
	}{
		{"no target", func(c *pb.ClientConfig) { c.ServerTargets = nil }, "server_targets"},
		{"two targets", func(c *pb.ClientConfig) { c.ServerTargets = append(c.ServerTargets, "127.0.0.1:2") }, "server_targets"},
		{"no channels", func(c *pb.ClientConfig) { c.ClientChannels = 0 }, "client_channels"},
		{"no outstanding", func(c *pb.ClientConfig) { c.OutstandingRpcsPerChannel = 0 }, "outstanding_rpcs_per_channel"},
		{"tls", func(c *pb.ClientConfig) { c.SecurityParams = &pb.SecurityParams{UseTestCa: true} }, "security_params"},
		{"rpc type", func(c *pb.ClientConfig) { c.RpcType = pb.RpcType_STREAMING_BOTH_WAYS }, "rpc_type"},
		{"zero rate", func(c *pb.ClientConfig) {
			c.LoadParams = &pb.LoadParams{Load: &pb.LoadParams_Poisson{Poisson: &pb.PoissonParams{}}}
		}, "offered_load"},
		{"bytebuf payload", func(c *pb.ClientConfig) {
			c.PayloadConfig = &pb.PayloadConfig{Payload: &pb.PayloadConfig_BytebufParams{BytebufParams: &pb.ByteBufferParams{}}}
		}, "payload_config"},
		{"two payload sizes", func(c *pb.ClientConfig) {
			c.PayloadConfig = &pb.PayloadConfig{Payload: &pb.PayloadConfig_SimpleParams{SimpleParams: &pb.SimpleProtoParams{ReqSize: 1, RespSize: 2}}}
		}, "simple_params"},
		{"histogram", func(c *pb.ClientConfig) { c.HistogramParams = &pb.HistogramParams{Resolution: 0, MaxPossible: 60e9} }, "histogram_params"},
		{"too many buckets", func(c *pb.ClientConfig) { c.HistogramParams = &pb.HistogramParams{Resolution: 1e-9, MaxPossible: 60e9} }, "needs 2.48e+10 buckets"},
		{"more buckets than an int holds", func(c *pb.ClientConfig) {
			c.HistogramParams = &pb.HistogramParams{Resolution: 1e-300, MaxPossible: 60e9}
		}, "needs 2.48e+301 buckets"},
		{"infinitely many buckets", func(c *pb.ClientConfig) {
			c.HistogramParams = &pb.HistogramParams{Resolution: 5e-324, MaxPossible: 60e9}
		}, "needs infinitely many buckets"},
		{"bad rpclab.conn", func(c *pb.ClientConfig) {
			c.ChannelArgs = []*pb.ChannelArg{{Name: ArgConn, Value: &pb.ChannelArg_StrValue{StrValue: "pool:0"}}}
		}, "rpclab.conn"},
		{"bad deadline", func(c *pb.ClientConfig) {
			c.ChannelArgs = []*pb.ChannelArg{{Name: ArgRPCTimeout, Value: &pb.ChannelArg_IntValue{IntValue: -1}}}
		}, "rpclab.rpc_timeout_ms"},
		{"bad rpclab.arrival", func(c *pb.ClientConfig) {
			c.LoadParams = &pb.LoadParams{Load: &pb.LoadParams_Poisson{Poisson: &pb.PoissonParams{OfferedLoad: 100}}}
			c.ChannelArgs = []*pb.ChannelArg{{Name: ArgArrival, Value: &pb.ChannelArg_StrValue{StrValue: "uniform"}}}
		}, "rpclab.arrival"},
		{"rpclab.arrival on a closed loop", func(c *pb.ClientConfig) {
			c.ChannelArgs = []*pb.ChannelArg{{Name: ArgArrival, Value: &pb.ChannelArg_StrValue{StrValue: loadgen.Constant}}}
		}, "rpclab.arrival"},
		{"unknown rpclab arg", func(c *pb.ClientConfig) {
			c.ChannelArgs = []*pb.ChannelArg{{Name: "rpclab.inflight", Value: &pb.ChannelArg_IntValue{IntValue: 1}}}
		}, "rpclab.inflight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := closedLoop("127.0.0.1:5000", 2, 3)
			tc.edit(cfg)
			_, err := clientRunOf(cfg, time.Second)
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrConfig naming %s", err, tc.want)
			}
		})
	}
}

// TestGeometry: the driver's buckets are gRPC's C++ histogram's, bucket
// i = floor(ln(v)/ln(1+resolution)), values clamped to [1, max_possible].
func TestGeometry(t *testing.T) {
	g := Geometry{Resolution: 0.01, MaxPossible: 60e9}
	if got := g.Buckets(); got != 2495 {
		t.Errorf("got %d buckets for 1%% up to 60 s, want 2495", got)
	}
	for _, tc := range []struct {
		v    float64
		want int
	}{{0, 0}, {1, 0}, {1.0099, 0}, {1.0101, 1}, {1000, 694}, {1e6, 1388}, {1e12, 2494}} {
		if got := g.bucketOf(tc.v); got != tc.want {
			t.Errorf("bucketOf(%v): got %d, want %d", tc.v, got, tc.want)
		}
	}
	if got := g.BucketStart(694); got > 1000 || g.BucketStart(695) <= 1000 {
		t.Errorf("bucket 694 starts at %v and 695 at %v, want 1000 between them", got, g.BucketStart(695))
	}
}

// TestHistogramData converts an HDR histogram into the driver's buckets:
// counts land in the bucket of their value, min and max are exact, the sum
// is within the HDR resolution.
func TestHistogramData(t *testing.T) {
	g := Geometry{Resolution: 0.01, MaxPossible: 60e9}
	h := hdrhistogram.New(1, int64(100*time.Second), 3)
	for _, v := range []int64{1000, 1000, 1000, 1_000_000} {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	d := g.histogramData(h)
	if d.Bucket[694] != 3 || d.Bucket[1388] != 1 || d.Count != 4 || bucketSum(d) != 4 {
		t.Errorf("got buckets 694: %d, 1388: %d, count %v, sum of buckets %d; want 3, 1, 4, 4", d.Bucket[694], d.Bucket[1388], d.Count, bucketSum(d))
	}
	if d.MinSeen != 1000 || d.MaxSeen < 1_000_000 || d.MaxSeen > 1_001_000 {
		t.Errorf("got min %v, max %v; want 1000 and 1e6 (within 0.1%%)", d.MinSeen, d.MaxSeen)
	}
	if want := 1_003_000.0; d.Sum < want*0.999 || d.Sum > want*1.001 {
		t.Errorf("got sum %v, want %v within 0.1%%", d.Sum, want)
	}
	if e := g.histogramData(hdrhistogram.New(1, 10, 1)); e.Count != 0 || len(e.Bucket) != 2495 {
		t.Errorf("empty: got count %v with %d buckets, want 0 with 2495", e.Count, len(e.Bucket))
	}
}
