// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package worker

import (
	"fmt"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
)

// What a run costs rpclab's Go client, for the memory budget. These are
// estimates stated beside their source, not measurements of this host.
const (
	// RPCBytes is the memory one RPC in flight holds, payloads aside:
	// one latency histogram per caller would hold about 340 KB per RPC in
	// flight (3.4 GB at 10,000); callers past 64 share histograms
	// (stats.Set), and rpclab sweep's client grew by 21.5 KB
	// of RSS per RPC in flight from 100 to 2,000 on one connection. 64 KiB
	// is three times that, for a Live run's two recorders per caller and
	// grpc-go's per-stream buffers under load.
	RPCBytes = 64 << 10
	// ConnBytes is what one connection holds: grpc-go's default 32 KiB read
	// and 32 KiB write buffers.
	ConnBytes = 64 << 10
)

// DefaultMemoryBudget is the memory a RunClient may plan to use when
// Options.MemoryBudget is 0: about 6,000 RPCs in flight with small
// payloads, or 200 RPCs in flight with 4 MiB ones.
const DefaultMemoryBudget = 2 << 30

// MaxChannels bounds client_channels (and the connections any layout
// opens): loadgen.MaxInflight, the most RPCs a step has in flight.
const MaxChannels = loadgen.MaxInflight

// need is the memory the run plans to hold: per RPC in flight, RPCBytes
// and a request and a response payload; per connection, ConnBytes.
func (r *clientRun) need() int64 {
	n := int64(r.step.Inflight)
	return n*(RPCBytes+2*int64(r.spec.PayloadBytes)) + int64(r.conns())*ConnBytes
}

// conns is the number of connections the run's layout opens.
func (r *clientRun) conns() int {
	switch r.step.Conn.Kind {
	case loadgen.PerWorker:
		return r.step.Inflight
	case loadgen.Pooled, loadgen.AutoPool:
		return r.step.Conn.N
	default:
		return 1
	}
}

// admit refuses a run whose planned memory is above budget (ErrBudget,
// which the driver receives as ResourceExhausted); the message names the
// fields that set it and the budget.
func (r *clientRun) admit(channels, outstanding int, budget int64) error {
	if need := r.need(); need > budget {
		return fmt.Errorf("%w: client_channels %d x outstanding_rpcs_per_channel %d = %d RPCs in flight with %d-byte payloads (payload_config.simple_params) over %d connections need about %s "+
			"(%s per RPC in flight, twice the payload, %s per connection); this worker's memory budget is %s: ask for fewer RPCs in flight or smaller payloads",
			ErrBudget, channels, outstanding, r.step.Inflight, r.spec.PayloadBytes, r.conns(), result.FormatBytes(roundUp(need)),
			result.FormatBytes(RPCBytes), result.FormatBytes(ConnBytes), result.FormatBytes(budget))
	}
	return nil
}

// roundUp rounds n up to a whole MiB, so FormatBytes prints it short.
func roundUp(n int64) int64 { return (n + 1<<20 - 1) &^ (1<<20 - 1) }
