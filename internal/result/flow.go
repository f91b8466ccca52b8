// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package result

import "time"

// FlowRecord is one cell of the flow study (rpclab flow): one transport,
// payload and emulated RTT; schema/flow.schema.json is its schema and
// docs/flow.md documents every field.
type FlowRecord struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"` // "flow"
	// Status is "ok" (every RPC ran), "truncated" (the budget ended the
	// cell first, possibly before any RPC finished), "interrupted" (the
	// run was stopped during the cell; the RPCs measured until then are
	// kept) or "failed" (an error; Error says which).
	Status    string    `json:"status"`
	Error     string    `json:"error,omitempty"`
	StartedAt time.Time `json:"started_at"`

	Transport    string `json:"transport"`
	PayloadBytes int64  `json:"payload_bytes"`
	// RTTNS is the emulated round-trip time; RateBps the bandwidth per
	// direction (0: unlimited).
	RTTNS   int64 `json:"rtt_ns"`
	RateBps int64 `json:"rate_bps"`
	// WindowBytes is the fixed window of grpc-fixed; 0 otherwise.
	WindowBytes int `json:"window_bytes"`
	// RPCsRequested is how many RPCs the cell asked for; RPCNS holds the
	// time of each that finished, first to last (client send to reply).
	RPCsRequested int     `json:"rpcs_requested"`
	RPCNS         []int64 `json:"rpc_ns"`
	// FirstNS is RPCNS[0]; SteadyNS the median of RPCNS from the
	// SteadyFrom-th RPC (1-based) on: after the first ten, or over the
	// last half when fewer than 11 finished.
	FirstNS    int64 `json:"first_ns"`
	SteadyNS   int64 `json:"steady_ns"`
	SteadyFrom int   `json:"steady_from"`
	// BudgetNS bounds the cell.
	BudgetNS int64 `json:"budget_ns"`

	Env Env `json:"env"`

	// Source says where an imported cell came from (rpclab import of a
	// published table); absent from cells rpclab measured. An imported
	// cell has only what its source gave (host_cpus 0, no budget).
	Source string `json:"source,omitempty"`
}

// StatusTruncated: a flow cell whose budget ended it before every RPC
// ran (flow records only).
const StatusTruncated = "truncated"
