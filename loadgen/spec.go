// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package loadgen decides when RPCs happen and how many are in flight: the
// closed-loop workers of one step and the sweep over the cross product of
// connection layouts, RPC kinds and in-flight counts (as grpc-go's
// benchmain does). It records through package stats and returns
// result.Records; it formats nothing.
package loadgen

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// UsageError is a problem with what was asked for (a bad flag value), as
// opposed to a failure while measuring. The CLI exits with code 2 for it.
type UsageError struct {
	Field string
	Err   error
}

func (e *UsageError) Error() string { return fmt.Sprintf("%s: %v", e.Field, e.Err) }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErr(field, format string, args ...any) error {
	return &UsageError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Connection layout kinds.
const (
	// Shared: every worker uses one ClientConn, so one TCP connection.
	Shared = "shared"
	// PerWorker: each worker has its own ClientConn and TCP connection.
	PerWorker = "per-worker"
	// Pooled: N ClientConns in a pool.Pool, shared by all workers.
	Pooled = "pool"
)

// Pick policies of a pooled layout.
const (
	RoundRobin  = "round-robin"
	LeastLoaded = "least-loaded"
)

// ConnMode is a connection layout: "shared", "per-worker" or "pool:N"
// (optionally "pool:N:least-loaded").
type ConnMode struct {
	Kind string
	// N is the pool size (Pooled only).
	N int
	// Pick is the pool's pick policy (Pooled only).
	Pick string
}

// ParseConnMode parses the --conn syntax.
func ParseConnMode(s string) (ConnMode, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	switch parts[0] {
	case Shared, PerWorker:
		if len(parts) != 1 {
			return ConnMode{}, usageErr("--conn", "%q takes no size", parts[0])
		}
		return ConnMode{Kind: parts[0]}, nil
	case Pooled:
		if len(parts) < 2 || len(parts) > 3 {
			return ConnMode{}, usageErr("--conn", "%q: want pool:N or pool:N:round-robin|least-loaded", s)
		}
		n, err := strconv.Atoi(parts[1])
		if err != nil || n < 1 {
			return ConnMode{}, usageErr("--conn", "%q: pool size must be an integer of at least 1", s)
		}
		m := ConnMode{Kind: Pooled, N: n, Pick: RoundRobin}
		if len(parts) == 3 {
			switch parts[2] {
			case RoundRobin, LeastLoaded:
				m.Pick = parts[2]
			default:
				return ConnMode{}, usageErr("--conn", "%q: unknown pick policy %q (want round-robin or least-loaded)", s, parts[2])
			}
		}
		return m, nil
	default:
		return ConnMode{}, usageErr("--conn", "unknown connection mode %q (want shared, per-worker or pool:N)", s)
	}
}

// String gives the --conn syntax back.
func (m ConnMode) String() string {
	switch {
	case m.Kind != Pooled:
		return m.Kind
	case m.Pick == "" || m.Pick == RoundRobin:
		return fmt.Sprintf("pool:%d", m.N)
	default:
		return fmt.Sprintf("pool:%d:%s", m.N, m.Pick)
	}
}

// Conns is how many connections the layout opens for inflight workers.
func (m ConnMode) Conns(inflight int) int {
	switch m.Kind {
	case Shared:
		return 1
	case PerWorker:
		return inflight
	default:
		return m.N
	}
}

// RPC kinds.
const (
	Unary     = "unary"
	Streaming = "streaming"
)

// Spec is a sweep: every combination of Conns x RPCs x Inflight is one step
// of Warmup (not recorded) then Interval (recorded), on fresh connections.
type Spec struct {
	// Target is host:port of a BenchmarkService server.
	Target   string
	Conns    []ConnMode
	RPCs     []string
	Inflight []int
	// PayloadBytes is the size of the request and of the response payload.
	PayloadBytes int
	Warmup       time.Duration
	Interval     time.Duration
	// DialTimeout bounds how long a step waits for its connections to be
	// ready before it is marked failed.
	DialTimeout time.Duration
	// RPCTimeout is a deadline on each RPC (0: none; the step's end cancels
	// whatever is still in flight).
	RPCTimeout time.Duration
	// Server names the server implementation when rpclab started it.
	Server string
}

// MaxInflight bounds the in-flight count of one step: each worker holds a
// latency histogram of about 200 KiB.
const MaxInflight = 20000

// Validate checks s and returns a *UsageError naming the field at fault.
func (s *Spec) Validate() error {
	if s.Target == "" {
		return usageErr("--target", "empty")
	}
	if len(s.Conns) == 0 {
		return usageErr("--conn", "no connection mode given")
	}
	return s.ValidateLoad()
}

// ValidateLoad checks everything Validate does but the target and the
// connection layouts, for callers that learn the target later (a server
// they start) or hand the layouts to a client of another language.
func (s *Spec) ValidateLoad() error {
	if len(s.RPCs) == 0 {
		return usageErr("--rpc", "no RPC kind given")
	}
	for _, r := range s.RPCs {
		if r != Unary && r != Streaming {
			return usageErr("--rpc", "unknown RPC kind %q (want unary or streaming)", r)
		}
	}
	if len(s.Inflight) == 0 {
		return usageErr("--inflight", "no in-flight count given")
	}
	for _, n := range s.Inflight {
		if n < 1 || n > MaxInflight {
			return usageErr("--inflight", "%d is outside 1..%d", n, MaxInflight)
		}
	}
	if s.PayloadBytes < 0 || s.PayloadBytes > 4<<20-64 {
		return usageErr("--payload", "%d is outside 0..%d bytes (gRPC's default 4 MiB message limit)", s.PayloadBytes, 4<<20-64)
	}
	if s.Warmup < 0 {
		return usageErr("--warmup", "negative duration %v", s.Warmup)
	}
	if s.Interval <= 0 {
		return usageErr("--interval", "must be positive, got %v", s.Interval)
	}
	if s.DialTimeout <= 0 {
		return usageErr("--dial-timeout", "must be positive, got %v", s.DialTimeout)
	}
	if s.RPCTimeout < 0 {
		return usageErr("--rpc-timeout", "negative duration %v", s.RPCTimeout)
	}
	return nil
}

// InflightRange expands --min-inflight A --max-inflight B --step S.
func InflightRange(lo, hi, step int) ([]int, error) {
	switch {
	case lo < 1:
		return nil, usageErr("--min-inflight", "must be at least 1, got %d", lo)
	case hi < lo:
		return nil, usageErr("--max-inflight", "%d is below --min-inflight %d", hi, lo)
	case step < 1:
		return nil, usageErr("--step", "must be at least 1, got %d", step)
	case hi > MaxInflight:
		return nil, usageErr("--max-inflight", "%d is above %d", hi, MaxInflight)
	}
	var out []int
	for n := lo; n <= hi; n += step {
		out = append(out, n)
	}
	return out, nil
}

// Step is one combination of a sweep.
type Step struct {
	Conn     ConnMode
	RPC      string
	Inflight int
}

// Steps lists the cross product in run order: for each RPC kind, for each
// layout, in-flight counts ascending as given.
func (s *Spec) Steps() []Step {
	var out []Step
	for _, r := range s.RPCs {
		for _, c := range s.Conns {
			for _, n := range s.Inflight {
				out = append(out, Step{Conn: c, RPC: r, Inflight: n})
			}
		}
	}
	return out
}

// ErrUnreachable marks a step that could not connect to the target.
var ErrUnreachable = errors.New("target unreachable")
