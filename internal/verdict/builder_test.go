// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"strconv"
	"strings"

	"github.com/rpclab/rpclab/internal/result"
)

// rec builds a successful closed-loop ping record of layout conn
// ("shared", "per-worker", "pool:N") at in-flight n with throughput rps,
// measured over one second by a client on one CPU.
func rec(conn string, n int, rps float64) result.Record {
	r := result.Record{
		SchemaVersion: result.SchemaVersion, Kind: "ping", Status: result.StatusOK,
		Spec: result.Spec{Target: "127.0.0.1:50051", RPC: "unary", LoadModel: "closed", Inflight: n,
			ConnMode: conn, ConnsRequested: 1},
		Env:           result.Env{Language: "go", HostCPUs: 1},
		DurationNS:    1e9,
		ThroughputRPS: rps,
		Requests:      int64(rps),
	}
	switch {
	case conn == "per-worker":
		r.Spec.ConnsRequested = n
	case strings.HasPrefix(conn, "pool:"):
		size, err := strconv.Atoi(strings.TrimPrefix(conn, "pool:"))
		if err != nil {
			panic(err)
		}
		r.Spec.ConnMode, r.Spec.ConnsRequested = "pool", size
	}
	r.ConnsObserved = r.Spec.ConnsRequested
	return r
}

// busy sets the share of its one CPU the client kept busy, and the CPU per
// RPC that follows.
func busy(r result.Record, share float64) result.Record {
	r.ClientCPUNS = int64(share * float64(r.DurationNS))
	r.ClientCPUNSPerRPC = float64(r.ClientCPUNS) / float64(r.Requests)
	return r
}

// cpuPerRPC sets the client CPU per RPC in nanoseconds (and the CPU time
// that gives).
func cpuPerRPC(r result.Record, ns float64) result.Record {
	r.ClientCPUNSPerRPC = ns
	r.ClientCPUNS = int64(ns * float64(r.Requests))
	return r
}
