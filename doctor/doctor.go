// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package doctor runs a short automatic study of a user's gRPC service:
// closed-loop steps on one shared connection and on pools of 2, 4 and 8
// connections at doubling in-flight counts, each layout until its
// throughput stops growing, within a time budget and never above the
// user's rate and in-flight caps. It returns the records and a Diagnosis;
// package report words the verdict.
package doctor

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rpclab/rpclab/anycall"
	"github.com/rpclab/rpclab/loadgen"
	"github.com/rpclab/rpclab/result"
)

// Options of a study. Zero values take the defaults given.
type Options struct {
	Target string
	// Call and Request replace the ping when set.
	Call    *anycall.Method
	Request proto.Message
	// Budget is the time the study aims to take (default 1 minute); the
	// last step may end after it.
	Budget time.Duration
	// MaxRPS caps the rate of every step (0: no cap).
	MaxRPS float64
	// MaxInflight caps the in-flight count (default 64).
	MaxInflight int
	// Pools are the pool sizes compared with one shared connection
	// (default 2, 4, 8).
	Pools []int
	// Warmup and Interval of each step (default 500 ms and 1.5 s).
	Warmup, Interval time.Duration
	// DialTimeout bounds each step's connection set-up (default 5 s).
	DialTimeout time.Duration
	// Load are the Go-only settings (TLS and metadata dial options).
	Load loadgen.Options
	// Step, if set, is told about each step as it ends.
	Step func(*result.Record)
}

// Layout is one connection layout's best step.
type Layout struct {
	Conn loadgen.ConnMode
	// Best is the step with the highest throughput (nil: none succeeded).
	Best *result.Record
}

// Diagnosis is the outcome of a study.
type Diagnosis struct {
	Records []result.Record
	Shared  Layout
	Pools   []Layout
	// Gain is the best pool's throughput over the shared connection's.
	Gain float64
	// Bottleneck: a pool reached at least BottleneckGain times the shared
	// connection's best throughput.
	Bottleneck bool
	// Recommended is the pool, among those within 10% of the best
	// throughput, with the lowest client CPU per RPC (nil without a
	// bottleneck).
	Recommended *Layout
	// Capped says a --max-rps or --max-inflight cap stopped a layout
	// before its throughput stopped growing.
	Capped bool
}

// BottleneckGain is the throughput ratio, best pool over shared, from which
// the shared connection is called the bottleneck.
const BottleneckGain = 1.3

// growth below this ratio from one in-flight count to its double means
// throughput stopped growing.
const growth = 1.10

func (o *Options) defaults() error {
	if o.Target == "" {
		return &loadgen.UsageError{Field: "--target", Err: fmt.Errorf("empty")}
	}
	if o.Budget == 0 {
		o.Budget = time.Minute
	}
	if o.MaxInflight == 0 {
		o.MaxInflight = 64
	}
	if o.MaxInflight < 1 || o.MaxInflight > loadgen.MaxInflight {
		return &loadgen.UsageError{Field: "--max-inflight", Err: fmt.Errorf("%d is outside 1..%d", o.MaxInflight, loadgen.MaxInflight)}
	}
	if o.MaxRPS < 0 {
		return &loadgen.UsageError{Field: "--max-rps", Err: fmt.Errorf("negative rate %v", o.MaxRPS)}
	}
	if len(o.Pools) == 0 {
		o.Pools = []int{2, 4, 8}
	}
	if o.Warmup == 0 {
		o.Warmup = 500 * time.Millisecond
	}
	if o.Interval == 0 {
		o.Interval = 1500 * time.Millisecond
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = 5 * time.Second
	}
	return nil
}

// Run runs the study. It returns what was measured so far with ctx's
// error if stopped, or an error if the target could not be reached.
func Run(ctx context.Context, o Options) (*Diagnosis, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	d := &Diagnosis{}
	deadline := time.Now().Add(o.Budget)
	layouts := []loadgen.ConnMode{{Kind: loadgen.Shared}}
	for _, n := range o.Pools {
		layouts = append(layouts, loadgen.ConnMode{Kind: loadgen.Pooled, N: n, Pick: loadgen.RoundRobin})
	}
	// Spread the budget evenly over the layouts.
	per := o.Budget / time.Duration(len(layouts))
	for li, conn := range layouts {
		lay := Layout{Conn: conn}
		end := time.Now().Add(per)
		if li == len(layouts)-1 || end.After(deadline) {
			end = deadline
		}
		var prev float64
		for n := 1; n <= o.MaxInflight; n *= 2 {
			spec := &loadgen.Spec{Target: o.Target, Conns: []loadgen.ConnMode{conn}, RPCs: []string{loadgen.Unary},
				Inflight: []int{n}, Warmup: o.Warmup, Interval: o.Interval, DialTimeout: o.DialTimeout}
			rec, err := loadgen.RunCappedStep(ctx, spec, loadgen.Step{Conn: conn, RPC: loadgen.Unary, Inflight: n},
				loadgen.Capped{Call: o.Call, Request: o.Request, MaxRPS: o.MaxRPS}, o.Load)
			if err != nil {
				return d, err
			}
			d.Records = append(d.Records, *rec)
			if o.Step != nil {
				o.Step(rec)
			}
			if rec.Status == result.StatusInterrupted {
				return d, ctx.Err()
			}
			if rec.Status == result.StatusFailed {
				if len(d.Records) == 1 {
					return d, fmt.Errorf("doctor: %s", rec.Error)
				}
				break
			}
			if lay.Best == nil || rec.ThroughputRPS > lay.Best.ThroughputRPS {
				lay.Best = &d.Records[len(d.Records)-1]
			}
			if o.MaxRPS > 0 && rec.ThroughputRPS >= 0.9*o.MaxRPS {
				d.Capped = true
				break
			}
			if prev > 0 && rec.ThroughputRPS < growth*prev {
				break // stopped growing
			}
			prev = rec.ThroughputRPS
			if n*2 > o.MaxInflight {
				d.Capped = true
			}
			if time.Now().Add(o.Warmup + o.Interval).After(end) {
				break
			}
		}
		if li == 0 {
			d.Shared = lay
		} else {
			d.Pools = append(d.Pools, lay)
		}
	}
	// Best pointers into d.Records stay valid: the slice is not appended
	// to after this point, but earlier appends may have moved it.
	d.relink()
	d.diagnose()
	return d, nil
}

// relink points each layout's Best at the final copy in d.Records.
func (d *Diagnosis) relink() {
	best := func(conn loadgen.ConnMode) *result.Record {
		var b *result.Record
		for i := range d.Records {
			r := &d.Records[i]
			if r.Status != result.StatusOK || r.Spec.ConnMode != conn.Kind || (conn.Kind == loadgen.Pooled && r.Spec.ConnsRequested != conn.N) {
				continue
			}
			if b == nil || r.ThroughputRPS > b.ThroughputRPS {
				b = r
			}
		}
		return b
	}
	d.Shared.Best = best(d.Shared.Conn)
	for i := range d.Pools {
		d.Pools[i].Best = best(d.Pools[i].Conn)
	}
}

func (d *Diagnosis) diagnose() {
	if d.Shared.Best == nil {
		return
	}
	var top float64
	for _, p := range d.Pools {
		if p.Best != nil && p.Best.ThroughputRPS > top {
			top = p.Best.ThroughputRPS
		}
	}
	d.Gain = top / d.Shared.Best.ThroughputRPS
	d.Bottleneck = d.Gain >= BottleneckGain
	if !d.Bottleneck {
		return
	}
	for i := range d.Pools {
		p := &d.Pools[i]
		if p.Best == nil || p.Best.ThroughputRPS < 0.9*top {
			continue
		}
		if d.Recommended == nil || p.Best.ClientCPUNSPerRPC < d.Recommended.Best.ClientCPUNSPerRPC {
			d.Recommended = p
		}
	}
}
