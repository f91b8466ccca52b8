// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package worker

import (
	"fmt"
	"strings"
	"time"

	"github.com/rpclab/rpclab/internal/benchwire"
	"github.com/rpclab/rpclab/internal/loadgen"
	pb "github.com/rpclab/rpclab/proto/benchpb"
)

// clientRun is what a ClientConfig asks rpclab's engine for.
type clientRun struct {
	spec loadgen.Spec
	step loadgen.Step
	// rate is the offered load in RPCs per second (0: closed loop), sent
	// at arrival's times (loadgen.Poisson unless rpclab.arrival says).
	rate    float64
	arrival string
	geom    benchwire.Geometry
}

// clientRunOf maps cfg onto rpclab's engine. Layout: client_channels
// connections with outstanding_rpcs_per_channel RPCs each, so
// channels x outstanding in flight: one channel is "shared", one RPC per
// channel is "per-worker", otherwise "pool:<channels>" (the RPCs take the
// connections in turn); rpclab.conn replaces it.
func clientRunOf(cfg *pb.ClientConfig, dialTimeout time.Duration) (*clientRun, error) {
	if n := len(cfg.GetServerTargets()); n != 1 {
		return nil, fmt.Errorf("%w: server_targets: got %d targets, rpclab's worker drives exactly one", ErrConfig, n)
	}
	if sp := cfg.GetSecurityParams(); sp != nil && (sp.GetUseTestCa() || sp.GetCredType() != "" && sp.GetCredType() != "insecure") {
		return nil, fmt.Errorf("%w: security_params: rpclab's worker dials plaintext only", ErrConfig)
	}
	ch, out := int(cfg.GetClientChannels()), int(cfg.GetOutstandingRpcsPerChannel())
	if ch < 1 || out < 1 {
		return nil, fmt.Errorf("%w: client_channels %d, outstanding_rpcs_per_channel %d: both must be at least 1", ErrConfig, ch, out)
	}
	if ch > MaxChannels || ch*out > loadgen.MaxInflight {
		return nil, fmt.Errorf("%w: client_channels %d x outstanding_rpcs_per_channel %d = %d RPCs in flight: rpclab's worker runs at most %d channels and %d RPCs in flight", ErrConfig, ch, out, ch*out, MaxChannels, loadgen.MaxInflight)
	}
	r := &clientRun{step: loadgen.Step{Inflight: ch * out, Conn: layoutOf(ch, out)}}
	r.spec = loadgen.Spec{Target: cfg.GetServerTargets()[0], DialTimeout: dialTimeout}
	switch cfg.GetRpcType() {
	case pb.RpcType_UNARY:
		r.step.RPC = loadgen.Unary
	case pb.RpcType_STREAMING:
		r.step.RPC = loadgen.Streaming
	default:
		return nil, fmt.Errorf("%w: rpc_type %v: rpclab's worker runs UNARY and STREAMING", ErrConfig, cfg.GetRpcType())
	}
	if p := cfg.GetLoadParams().GetPoisson(); p != nil {
		r.rate = p.GetOfferedLoad()
		if !(r.rate > 0) {
			return nil, fmt.Errorf("%w: load_params.poisson.offered_load %v: want a positive rate", ErrConfig, r.rate)
		}
	}
	if err := r.payload(cfg.GetPayloadConfig()); err != nil {
		return nil, err
	}
	var err error
	if r.geom, err = benchwire.GeometryOf(cfg.GetHistogramParams()); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := r.channelArgs(cfg.GetChannelArgs()); err != nil {
		return nil, err
	}
	if r.arrival == "" {
		r.arrival = loadgen.Poisson
	} else if r.rate == 0 {
		return nil, fmt.Errorf("%w: channel_args %s=%q: an arrival process needs load_params.poisson (an offered load)", ErrConfig, benchwire.ArgArrival, r.arrival)
	}
	r.spec.Conns, r.spec.RPCs, r.spec.Inflight, r.spec.Interval = []loadgen.ConnMode{r.step.Conn}, []string{r.step.RPC}, []int{r.step.Inflight}, time.Second
	if err := r.spec.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return r, nil
}

func layoutOf(channels, outstanding int) loadgen.ConnMode {
	switch {
	case channels == 1:
		return loadgen.ConnMode{Kind: loadgen.Shared}
	case outstanding == 1:
		return loadgen.ConnMode{Kind: loadgen.PerWorker}
	default:
		return loadgen.ConnMode{Kind: loadgen.Pooled, N: channels}
	}
}

// maxPayload is the largest payload a ping carries within gRPC's default
// 4 MiB message limit (loadgen.Spec.Validate's bound).
const maxPayload = 4<<20 - 64

// payload reads simple_params: rpclab's ping sends and asks for one size.
func (r *clientRun) payload(p *pb.PayloadConfig) error {
	if p == nil {
		return nil
	}
	sp := p.GetSimpleParams()
	if sp == nil {
		return fmt.Errorf("%w: payload_config: rpclab's worker takes simple_params only", ErrConfig)
	}
	if sp.GetReqSize() != sp.GetRespSize() {
		return fmt.Errorf("%w: payload_config.simple_params: req_size %d, resp_size %d: rpclab's ping uses one size both ways", ErrConfig, sp.GetReqSize(), sp.GetRespSize())
	}
	if n := sp.GetReqSize(); n < 0 || n > maxPayload {
		return fmt.Errorf("%w: payload_config.simple_params: req_size %d is outside 0..%d bytes (gRPC's default 4 MiB message limit)", ErrConfig, n, maxPayload)
	}
	r.spec.PayloadBytes = int(sp.GetReqSize())
	return nil
}

func (r *clientRun) channelArgs(args []*pb.ChannelArg) error {
	for _, a := range args {
		switch name := a.GetName(); {
		case name == benchwire.ArgConn:
			m, err := loadgen.ParseConnMode(a.GetStrValue())
			if err != nil {
				return fmt.Errorf("%w: channel_args %s=%q: %w", ErrConfig, name, a.GetStrValue(), err)
			}
			r.step.Conn = m
		case name == benchwire.ArgRPCTimeout:
			ms := a.GetIntValue()
			if ms <= 0 {
				return fmt.Errorf("%w: channel_args %s=%d: want a positive int_value in milliseconds", ErrConfig, name, ms)
			}
			r.spec.RPCTimeout = time.Duration(ms) * time.Millisecond
		case name == benchwire.ArgArrival:
			switch v := a.GetStrValue(); v {
			case loadgen.Poisson, loadgen.Constant:
				r.arrival = v
			default:
				return fmt.Errorf("%w: channel_args %s=%q: want %q or %q", ErrConfig, name, v, loadgen.Poisson, loadgen.Constant)
			}
		case strings.HasPrefix(name, "rpclab."):
			return fmt.Errorf("%w: channel_args: unknown %q (rpclab's are %s, %s and %s)", ErrConfig, name, benchwire.ArgConn, benchwire.ArgRPCTimeout, benchwire.ArgArrival)
		}
	}
	return nil
}
