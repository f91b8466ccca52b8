// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package doctor runs a short automatic study of a user's gRPC service:
// closed-loop steps on one shared connection and on pools of 2, 4 and 8
// connections at doubling in-flight counts, each layout until its
// throughput stops growing, within a time budget and never above the
// user's rate and in-flight caps. The steps run through a Runner: Go's
// loadgen in process (GoRunner), or another stack's client (External),
// so that the study measures the client the user runs. It measures;
// package verdict judges its records (verdict.Verdicts, the one judge of
// sweep, report and compare too) and package report words the verdict.
package doctor

import (
	"math"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rpclab/rpclab/internal/dyncall"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/loadgen/extclient"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
	"github.com/rpclab/rpclab/internal/verdict"
	"github.com/rpclab/rpclab/pool"
	"github.com/rpclab/rpclab/pool/adaptive"
)

// Options of a study. Start from DefaultOptions: Validate rejects zero
// values where zero would mean nothing sensible (a zero budget or interval).
type Options struct {
	Target string
	// Call and Request replace the ping when set. Call must be unary or
	// server-streaming.
	Call    *dyncall.Method
	Request proto.Message
	// PayloadBytes is the size of the ping's request and response payload
	// (default 0; not with Call, whose Request is what it is).
	PayloadBytes int
	// Budget is the time the study aims to take (default 1 minute); the
	// last step may end after it. It must leave every layout time for
	// verdict.MinInflights steps.
	Budget time.Duration
	// MaxRPS caps the rate of every step (0: no cap).
	MaxRPS float64
	// MaxInflight caps the in-flight count (default 64, at least
	// verdict.MinInflights: the counts double from 1).
	MaxInflight int
	// Pools are the pool sizes compared with one shared connection
	// (default 2, 4, 8; each in 2..MaxPool).
	Pools []int
	// Adaptive also tries an adaptive pool (--conn pool:auto:1:MAX, MAX
	// the largest of Pools) beside the fixed sizes (default true); the
	// advice is "use the adaptive pool" only when its steps at least match
	// the best fixed layout's (verdict.Advise). It runs at the two largest
	// in-flight counts the fixed layouts reached, each step first warming
	// up for as long as the pool needs to settle at that count
	// (the SettleTime of AdaptiveRule; up to 1m32s with the default rule
	// and MAX 8), then on while a trial is under way (adaptive.Rule.SettleWait,
	// 24 s), on top of Budget: about four minutes more at most.
	Adaptive bool
	// Warmup and Interval of each step (default 500 ms and 1.5 s).
	Warmup, Interval time.Duration
	// DialTimeout bounds each step's connection set-up (default 5 s).
	DialTimeout time.Duration
	// Load are the Go-only settings (TLS and metadata dial options).
	Load loadgen.Options
	// Step, if set, is told about each step as it ends; its error (a
	// record that could not be written) ends the study at once, and Run
	// returns it.
	Step func(*result.Record) error
	// Runner runs the steps (nil: GoRunner, this process's Go client).
	// Another stack's client (External) calls the ping only, in a closed
	// loop, without dial options, and has no adaptive pool: Validate
	// refuses Call, MaxRPS, Load.DialOptions and Adaptive with it.
	Runner Runner
}

// MaxPool is the largest pool size a study compares: each connection costs
// the studied server a file descriptor and memory, and pool.DefaultSize
// never goes above 8.
const MaxPool = 64

// MaxPayload is the largest ping payload: gRPC's default 4 MiB message
// limit less room for the message's framing.
const MaxPayload = 4<<20 - 64

// DefaultOptions are the options of rpclab doctor without flags, for
// target.
func DefaultOptions(target string) Options {
	return Options{
		Target:      target,
		Budget:      time.Minute,
		MaxInflight: 64,
		Pools:       []int{2, 4, 8},
		Adaptive:    true,
		Warmup:      500 * time.Millisecond,
		Interval:    1500 * time.Millisecond,
		DialTimeout: 5 * time.Second,
	}
}

// Diagnosis is the outcome of a study: its records, verdict's judgement
// of them (the same verdict.Verdicts that rpclab sweep and rpclab report
// give for the same records), and what only the study knows: why its
// climbs ended.
type Diagnosis struct {
	Records  []result.Record
	Verdicts []verdict.Verdict
	// Capped says a MaxRPS or MaxInflight cap ended a climb that was still
	// growing, or held a layout at the rate cap.
	Capped bool
	// Unfinished names the layouts still growing when the budget ended
	// the climb.
	Unfinished []string
	// Stopped says, per layout, why a failed or stalled step ended its
	// climb: what the study could not measure.
	Stopped []string
	// Rounds counts the interleaved rounds measured after the climb to
	// settle the deciding comparison (verdict.Settled).
	Rounds int
	// Notes word Capped, Unfinished and Stopped, one sentence each, for
	// under the verdict (report.DoctorText).
	Notes []string
}

// Validate checks o; its error is a *usage.Error whose Setting is the
// sentinel of the option at fault.
func (o *Options) Validate() error {
	if o.Target == "" {
		return usage.Errorf(ErrTarget, "give the host:port of the service")
	}
	if o.MaxInflight < verdict.MinInflights || o.MaxInflight > loadgen.MaxInflight {
		return usage.Errorf(ErrMaxInflight, "%d is outside %d..%d (the in-flight counts double from 1, and a verdict needs %d of them)",
			o.MaxInflight, verdict.MinInflights, loadgen.MaxInflight, verdict.MinInflights)
	}
	if o.MaxRPS < 0 || math.IsNaN(o.MaxRPS) || math.IsInf(o.MaxRPS, 0) {
		return usage.Errorf(ErrMaxRPS, "%v is not a rate (0: no cap)", o.MaxRPS)
	}
	if len(o.Pools) == 0 {
		return usage.Errorf(ErrPools, "none given")
	}
	for i, n := range o.Pools {
		if n < 2 || n > MaxPool {
			return usage.Errorf(ErrPools, "%d is outside 2..%d (a pool of 1 is the shared connection)", n, MaxPool)
		}
		if slices.Contains(o.Pools[:i], n) {
			return usage.Errorf(ErrPools, "%d given twice", n)
		}
	}
	if o.PayloadBytes < 0 || o.PayloadBytes > MaxPayload || (o.PayloadBytes > 0 && o.Call != nil) {
		return usage.Errorf(ErrPayload, "%d bytes (want 0..%d, and none with a call)", o.PayloadBytes, MaxPayload)
	}
	if o.Warmup < 0 || o.Interval <= 0 || o.DialTimeout <= 0 {
		return usage.Errorf(ErrStep, "warm-up %v, interval %v, dial timeout %v (want a warm-up of 0 or more, the others positive)",
			o.Warmup, o.Interval, o.DialTimeout)
	}
	if o.Budget <= 0 {
		return usage.Errorf(ErrBudget, "%v is not a positive duration", o.Budget)
	}
	layouts := o.fixedLayouts() // the adaptive pool's steps come on top of the budget
	if need := time.Duration(layouts*verdict.MinInflights) * (o.Warmup + o.Interval); o.Budget < need {
		return usage.Errorf(ErrBudget, "%v is too short: %d layouts × %d in-flight counts × %v per step need %v",
			o.Budget, layouts, verdict.MinInflights, o.Warmup+o.Interval, need)
	}
	run := o.runner()
	if err := run.Check(o); err != nil {
		return err
	}
	for _, conn := range o.layouts() {
		if !extclient.HasLayout(run.Lang(), conn.String()) {
			if conn.Kind == loadgen.AutoPool {
				return usage.Errorf(ErrAdaptive, "the adaptive pool is package pool's, Go's only: the %s client has no %s", run.Lang(), conn)
			}
			return usage.Errorf(ErrPools, "the %s client has no layout %s", run.Lang(), conn)
		}
	}
	if o.Call != nil {
		if o.Call.Desc.IsStreamingClient() {
			return usage.Errorf(ErrCall, "%s is a client-streaming or bidirectional method; doctor calls unary and server-streaming methods only", o.Call.Path)
		}
		if o.Request == nil {
			return usage.Errorf(ErrCall, "%s has no request", o.Call.Path)
		}
	}
	return nil
}

// workload is what each step calls: Call with Request, or the ping (nil).
func (o *Options) workload() loadgen.Workload {
	if o.Call == nil {
		return nil
	}
	return loadgen.CallWorkload(o.Call, o.Request)
}

// AdaptiveRule is the rule the study's adaptive pool runs: o.Load's
// AdaptiveRule if set, else adaptive.DefaultRule, between 1 and the largest of
// Pools.
func (o *Options) AdaptiveRule() adaptive.Rule {
	maxConns := slices.Max(append([]int{1}, o.Pools...))
	r := adaptive.DefaultRule(1, maxConns)
	if o.Load.AdaptiveRule != nil {
		r = *o.Load.AdaptiveRule
		r.Min, r.Max = 1, maxConns
	}
	return r
}

// StepWarmup is the warm-up of a step of conn at inflight, as loadgen
// gives it (loadgen.Spec.StepWarmup, under o.Load's rule): o.Warmup, or
// for the adaptive pool the longer of o.Warmup and the SettleTime of
// AdaptiveRule, so that its step measures the pool it settles at, not
// one still growing.
func (o *Options) StepWarmup(conn loadgen.ConnMode, inflight int) time.Duration {
	s := loadgen.Spec{Warmup: o.Warmup}
	return s.StepWarmup(loadgen.Step{Conn: conn, Inflight: inflight}, o.Load.AdaptiveRule)
}

// layouts are the study's layouts: shared, each fixed pool, then the
// adaptive pool.
func (o *Options) layouts() []loadgen.ConnMode {
	layouts := []loadgen.ConnMode{{Kind: loadgen.Shared}}
	for _, n := range o.Pools {
		layouts = append(layouts, loadgen.ConnMode{Kind: loadgen.Pooled, N: n, Pick: pool.RoundRobin})
	}
	if o.Adaptive && len(o.Pools) > 0 {
		layouts = append(layouts, loadgen.ConnMode{Kind: loadgen.AutoPool, Min: 1, N: slices.Max(o.Pools), Pick: pool.RoundRobin})
	}
	return layouts
}

// runner is o.Runner, or GoRunner.
func (o *Options) runner() Runner {
	if o.Runner == nil {
		return GoRunner{}
	}
	return o.Runner
}

// fixedLayouts is how many layouts share the budget: all but the adaptive
// pool, whose steps come on top of it.
func (o *Options) fixedLayouts() int {
	n := len(o.layouts())
	if o.Adaptive && n > 1 {
		n--
	}
	return n
}

// inflights are the in-flight counts a fixed layout climbs: 1, 2, 4, ...
// up to MaxInflight. For a runner that runs a layout as one client run
// (not Stepwise), which cannot stop when the layout's throughput stops
// growing, they are planned up front: as many as fit the budget at
// Warmup+Interval a step over the fixed layouts, at least
// verdict.MinInflights.
func (o *Options) inflights(stepwise bool) []int {
	var ns []int
	for n := 1; n <= o.MaxInflight; n *= 2 {
		ns = append(ns, n)
	}
	if stepwise {
		return ns
	}
	fit := int(o.Budget / (time.Duration(o.fixedLayouts()) * (o.Warmup + o.Interval)))
	return ns[:min(len(ns), max(fit, verdict.MinInflights))]
}
