// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package loadgen decides when RPCs happen and how many are in flight. A
// Spec is a sweep over the cross product of connection layouts, RPC kinds
// and in-flight counts (as grpc-go's benchmain does); each Step runs in one
// frame (its record, its layout opened and ready, its failure causes) as
// three separate choices: what is called (a Workload: the Benchmark or YDB
// Debug ping, or any method), how load is offered (a Load: closed callers,
// optionally under a rate cap, or an open schedule through one
// dispatcher, whatever the replies), and when it is measured (a fixed
// warm-up and interval, or a driver's marks: Live). Both load models wait
// through one pacer (a Pacer's offsets on a clock). It records through
// package stats and returns result.Records; it formats nothing. Other
// languages' clients run in loadgen/extclient.
package loadgen

import (
	"strconv"
	"strings"
	"time"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
	"github.com/rpclab/rpclab/pool"
	"github.com/rpclab/rpclab/pool/adaptive"
)

// ConnKind is the kind of a connection layout, as --conn and the record's
// spec.conn_mode spell it.
type ConnKind string

// Connection layout kinds.
const (
	// Shared: every worker uses one ClientConn, so one TCP connection.
	Shared ConnKind = "shared"
	// PerWorker: each worker has its own ClientConn and TCP connection.
	PerWorker ConnKind = "per-worker"
	// Pooled: N ClientConns in a pool.Pool, shared by all workers.
	Pooled ConnKind = "pool"
	// AutoPool: a pool.Pool that sizes itself (pool.WithAdaptive) between
	// Min and N connections, shared by all workers; --conn spells it
	// pool:auto or pool:auto:MIN:MAX.
	AutoPool ConnKind = "pool-auto"
)

// Bounds of --conn pool:auto when MIN:MAX are not given. Min 1: the pool
// starts where a plain grpc.ClientConn does and must earn every other
// connection. Max 8: the largest size the lab's fixed pools sweep and
// pool.DefaultSize's cap; on a one-core client pool:2 already beat pool:8
// (README), so a larger max only gives the rule room to waste CPU here. A
// many-core client that needs more (YDB: one per worker; a Go gateway:
// 50-100) says pool:auto:1:N.
const (
	DefaultAutoMin = 1
	DefaultAutoMax = 8
)

// ConnMode is a connection layout: "shared", "per-worker", "pool:N"
// (optionally "pool:N:least-loaded") or "pool:auto[:MIN:MAX]".
type ConnMode struct {
	Kind ConnKind
	// N is the pool size (Pooled), or the most connections an AutoPool
	// may open.
	N int
	// Min is the fewest connections an AutoPool keeps (AutoPool only).
	Min int
	// Pick is the pool's pick policy (Pooled only; the zero value is
	// pool.RoundRobin).
	Pick pool.Policy
}

// ParseConnMode parses the --conn syntax.
func ParseConnMode(s string) (ConnMode, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	switch kind := ConnKind(parts[0]); kind {
	case Shared, PerWorker:
		if len(parts) != 1 {
			return ConnMode{}, usage.Errorf(ErrConn, "%q takes no size", parts[0])
		}
		return ConnMode{Kind: kind}, nil
	case Pooled:
		if len(parts) >= 2 && parts[1] == "auto" {
			return parseAuto(s, parts[2:])
		}
		if len(parts) < 2 || len(parts) > 3 {
			return ConnMode{}, usage.Errorf(ErrConn, "%q: want pool:N or pool:N:round-robin|least-loaded", s)
		}
		n, err := strconv.Atoi(parts[1])
		if err != nil || n < 1 || n > pool.MaxSize {
			return ConnMode{}, usage.Errorf(ErrConn, "%q: pool size must be an integer of at least 1 and at most %d (pool.MaxSize)", s, pool.MaxSize)
		}
		m := ConnMode{Kind: Pooled, N: n, Pick: pool.RoundRobin}
		if len(parts) == 3 {
			p, err := pool.ParsePolicy(parts[2])
			if err != nil {
				return ConnMode{}, usage.Errorf(ErrConn, "%q: unknown pick policy %q (want round-robin or least-loaded)", s, parts[2])
			}
			m.Pick = p
		}
		return m, nil
	default:
		return ConnMode{}, usage.Errorf(ErrConn, "unknown connection mode %q (want shared, per-worker, pool:N or pool:auto)", s)
	}
}

// parseAuto parses what follows "pool:auto": nothing, or MIN:MAX.
func parseAuto(s string, bounds []string) (ConnMode, error) {
	m := ConnMode{Kind: AutoPool, Min: DefaultAutoMin, N: DefaultAutoMax, Pick: pool.RoundRobin}
	switch len(bounds) {
	case 0:
		return m, nil
	case 2:
	default:
		return ConnMode{}, usage.Errorf(ErrConn, "%q: want pool:auto or pool:auto:MIN:MAX", s)
	}
	lo, err1 := strconv.Atoi(bounds[0])
	hi, err2 := strconv.Atoi(bounds[1])
	switch {
	case err1 != nil || err2 != nil:
		return ConnMode{}, usage.Errorf(ErrConn, "%q: MIN and MAX must be integers", s)
	case lo < 1:
		return ConnMode{}, usage.Errorf(ErrConn, "%q: MIN must be at least 1", s)
	case hi < lo:
		return ConnMode{}, usage.Errorf(ErrConn, "%q: MAX must be at least MIN", s)
	case hi > pool.MaxSize:
		return ConnMode{}, usage.Errorf(ErrConn, "%q: MAX must be at most %d (pool.MaxSize)", s, pool.MaxSize)
	}
	m.Min, m.N = lo, hi
	return m, nil
}

// ConnModeOf is the layout a record's spec describes (its conn_mode,
// conns_requested and pick). A kind this package does not run (another
// language's layout, such as "channel-per-worker") keeps its name.
func ConnModeOf(s result.Spec) ConnMode {
	m := ConnMode{Kind: ConnKind(s.ConnMode)}
	if m.Kind == AutoPool {
		m.Min, m.N, m.Pick = s.ConnsMin, s.ConnsRequested, pool.RoundRobin
	}
	if m.Kind == Pooled {
		m.N = s.ConnsRequested
		if p, err := pool.ParsePolicy(s.Pick); err == nil {
			m.Pick = p
		}
	}
	return m
}

// String gives the --conn syntax back through result.ConnLabel, the one
// formatter of a layout, which labels records too (Spec.ConnLabel).
func (m ConnMode) String() string {
	if m.Kind == AutoPool {
		return result.AutoPoolLabel(m.Min, m.N)
	}
	return result.ConnLabel(string(m.Kind), m.N, m.PickName())
}

// PickName is the record's spec.pick: the policy of a pool, "" otherwise.
func (m ConnMode) PickName() string {
	if m.Kind != Pooled {
		return ""
	}
	return m.Pick.String()
}

// Conns is how many connections the layout opens for inflight workers (an
// AutoPool: the most it may open).
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
	// Target is host:port of a server of Service.
	Target string
	// Service is the ping service the steps drive (zero: Benchmark).
	Service  Service
	Conns    []ConnMode
	RPCs     []string
	Inflight []int
	// PayloadBytes is the size of the request and of the response payload.
	PayloadBytes int
	Warmup       time.Duration
	// AutoWarmup is the warm-up of an AutoPool step in place of Warmup.
	// Zero: long enough for the pool to settle at the step's in-flight
	// count (its rule's adaptive.Rule.SettleTime, at least Warmup), so that
	// the step measures the pool it settles at, not one still growing,
	// while the fixed layouts beside it keep a short Warmup (see
	// StepWarmup); the step then also waits out a change of size under
	// way, at most adaptive.Rule.SettleWait, and its record's warm-up says how long it
	// ran in all.
	AutoWarmup time.Duration
	Interval   time.Duration
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

// Validate checks s and returns a *usage.Error naming the field at fault.
func (s *Spec) Validate() error {
	if s.Target == "" {
		return usage.Errorf(ErrTarget, "empty")
	}
	if err := checkTarget(s.Target); err != nil {
		return &usage.Error{Setting: ErrTarget, Err: err}
	}
	if len(s.Conns) == 0 {
		return usage.Errorf(ErrConn, "no connection mode given")
	}
	return s.ValidateLoad()
}

// ValidateLoad checks everything Validate does but the target and the
// connection layouts, for callers that learn the target later (a server
// they start) or hand the layouts to a client of another language.
func (s *Spec) ValidateLoad() error {
	if len(s.RPCs) == 0 {
		return usage.Errorf(ErrRPC, "no RPC kind given")
	}
	for _, r := range s.RPCs {
		if r != Unary && r != Streaming {
			return usage.Errorf(ErrRPC, "unknown RPC kind %q (want unary or streaming)", r)
		}
	}
	if len(s.Inflight) == 0 {
		return usage.Errorf(ErrInflight, "no in-flight count given")
	}
	for _, n := range s.Inflight {
		if n < 1 || n > MaxInflight {
			return usage.Errorf(ErrInflight, "%d is outside 1..%d", n, MaxInflight)
		}
	}
	if _, err := ParseService(string(s.Service)); err != nil {
		return err
	}
	if s.Service == YDBDebug && s.PayloadBytes != 0 {
		return usage.Errorf(ErrPayload, "%d bytes: %s's ping has no payload (want 0)", s.PayloadBytes, YDBDebug)
	}
	if s.PayloadBytes < 0 || s.PayloadBytes > 4<<20-64 {
		return usage.Errorf(ErrPayload, "%d is outside 0..%d bytes (gRPC's default 4 MiB message limit)", s.PayloadBytes, 4<<20-64)
	}
	if s.Warmup < 0 {
		return usage.Errorf(ErrWarmup, "negative duration %v", s.Warmup)
	}
	if s.AutoWarmup < 0 {
		return usage.Errorf(ErrAutoWarmup, "negative duration %v", s.AutoWarmup)
	}
	if s.Interval <= 0 {
		return usage.Errorf(ErrInterval, "must be positive, got %v", s.Interval)
	}
	if s.DialTimeout <= 0 {
		return usage.Errorf(ErrDialTimeout, "must be positive, got %v", s.DialTimeout)
	}
	if s.RPCTimeout < 0 {
		return usage.Errorf(ErrRPCTimeout, "negative duration %v", s.RPCTimeout)
	}
	return nil
}

// InflightRange expands --min-inflight A --max-inflight B --step S.
func InflightRange(lo, hi, step int) ([]int, error) {
	switch {
	case lo < 1:
		return nil, usage.Errorf(ErrMinInflight, "must be at least 1, got %d", lo)
	case hi < lo:
		return nil, usage.Errorf(ErrMaxInflight, "%d is below --min-inflight %d", hi, lo)
	case step < 1:
		return nil, usage.Errorf(ErrInflightStep, "must be at least 1, got %d", step)
	case hi > MaxInflight:
		return nil, usage.Errorf(ErrMaxInflight, "%d is above %d", hi, MaxInflight)
	}
	var out []int
	for n := lo; ; n += step {
		out = append(out, n)
		if step > hi-n { // the next would pass hi (or overflow)
			break
		}
	}
	return out, nil
}

// Step is one combination of a sweep.
type Step struct {
	Conn     ConnMode
	RPC      string
	Inflight int
}

// StepWarmup is step's warm-up: Warmup, or for an AutoPool step
// AutoWarmup, or when that is zero the longer of Warmup and the
// SettleTime at step's in-flight count of the rule that sizes the step's
// pool (rule with the layout's min and max, as Options.AdaptiveRule; nil:
// adaptive.DefaultRule).
func (s *Spec) StepWarmup(step Step, rule *adaptive.Rule) time.Duration {
	switch {
	case step.Conn.Kind != AutoPool:
		return s.Warmup
	case s.AutoWarmup > 0:
		return s.AutoWarmup
	}
	return max(s.Warmup, autoRule(step.Conn, rule).SettleTime(step.Inflight))
}

// autoRule is the rule that sizes an AutoPool layout m: rule (nil:
// adaptive.DefaultRule) between m's min and max.
func autoRule(m ConnMode, rule *adaptive.Rule) adaptive.Rule {
	if rule == nil {
		return adaptive.DefaultRule(m.Min, m.N)
	}
	r := *rule
	r.Min, r.Max = m.Min, m.N
	return r
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
