// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package worker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rpclab/rpclab/internal/benchwire"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/testutil"
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
			c.ChannelArgs = []*pb.ChannelArg{str("grpc.some_arg", "x"), str(benchwire.ArgConn, "pool:4:least-loaded")}
		}, wantConn: "pool:4:least-loaded", wantIn: 8, wantRPC: loadgen.Unary, wantBytes: 16},
		{name: "streaming, poisson, payload, deadline", edit: func(c *pb.ClientConfig) {
			c.RpcType = pb.RpcType_STREAMING
			c.PayloadConfig = &pb.PayloadConfig{Payload: &pb.PayloadConfig_SimpleParams{SimpleParams: &pb.SimpleProtoParams{ReqSize: 1024, RespSize: 1024}}}
			c.LoadParams = &pb.LoadParams{Load: &pb.LoadParams_Poisson{Poisson: &pb.PoissonParams{OfferedLoad: 250}}}
			c.ChannelArgs = []*pb.ChannelArg{num(benchwire.ArgRPCTimeout, 1500)}
		}, wantConn: "pool:2", wantIn: 6, wantRPC: loadgen.Streaming, wantRate: 250, wantBytes: 1024, wantTimout: 1500 * time.Millisecond, wantArr: loadgen.Poisson},
		{name: "rpclab.arrival constant", edit: func(c *pb.ClientConfig) {
			c.LoadParams = &pb.LoadParams{Load: &pb.LoadParams_Poisson{Poisson: &pb.PoissonParams{OfferedLoad: 100}}}
			c.ChannelArgs = []*pb.ChannelArg{str(benchwire.ArgArrival, loadgen.Constant)}
		}, wantConn: "pool:2", wantIn: 6, wantRPC: loadgen.Unary, wantRate: 100, wantBytes: 16, wantArr: loadgen.Constant},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testutil.ClosedLoopConfig("127.0.0.1:5000", 2, 3)
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
			c.ChannelArgs = []*pb.ChannelArg{{Name: benchwire.ArgConn, Value: &pb.ChannelArg_StrValue{StrValue: "pool:0"}}}
		}, "rpclab.conn"},
		{"bad deadline", func(c *pb.ClientConfig) {
			c.ChannelArgs = []*pb.ChannelArg{{Name: benchwire.ArgRPCTimeout, Value: &pb.ChannelArg_IntValue{IntValue: -1}}}
		}, "rpclab.rpc_timeout_ms"},
		{"bad rpclab.arrival", func(c *pb.ClientConfig) {
			c.LoadParams = &pb.LoadParams{Load: &pb.LoadParams_Poisson{Poisson: &pb.PoissonParams{OfferedLoad: 100}}}
			c.ChannelArgs = []*pb.ChannelArg{{Name: benchwire.ArgArrival, Value: &pb.ChannelArg_StrValue{StrValue: "uniform"}}}
		}, "rpclab.arrival"},
		{"rpclab.arrival on a closed loop", func(c *pb.ClientConfig) {
			c.ChannelArgs = []*pb.ChannelArg{{Name: benchwire.ArgArrival, Value: &pb.ChannelArg_StrValue{StrValue: loadgen.Constant}}}
		}, "rpclab.arrival"},
		{"unknown rpclab arg", func(c *pb.ClientConfig) {
			c.ChannelArgs = []*pb.ChannelArg{{Name: "rpclab.inflight", Value: &pb.ChannelArg_IntValue{IntValue: 1}}}
		}, "rpclab.inflight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testutil.ClosedLoopConfig("127.0.0.1:5000", 2, 3)
			tc.edit(cfg)
			_, err := clientRunOf(cfg, time.Second)
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrConfig naming %s", err, tc.want)
			}
		})
	}
}
