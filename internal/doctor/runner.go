// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"context"
	"errors"
	"fmt"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/loadgen/extclient"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
)

// A Runner measures a study's layouts through one client: Go's loadgen in
// this process (GoRunner, the default), or another language's client
// through extclient (External). The study (Run) is the same for every
// runner: which layouts, which in-flight counts, when a layout's climb
// ends, how each record is judged.
type Runner interface {
	// Lang is the client's language, as its records' env.language say:
	// "go", or one of extclient.Languages. The study's layouts must be ones
	// its client has (extclient.HasLayout).
	Lang() string
	// Stepwise says Run can stop between two steps when told to. A runner
	// that runs a layout as one client process is not: the study then
	// plans each layout's in-flight counts up front, as many as fit the
	// budget.
	Stepwise() bool
	// Check says whether the runner can run o's study: its error is a
	// *usage.Error naming the option it cannot honour.
	Check(o *Options) error
	// Run measures conn at the in-flight counts ns, in order, with o's
	// target, payload, warm-up (o.StepWarmup) and interval, handing each
	// step's record to step as the step ends. A Stepwise runner stops when
	// step returns false. Run returns ctx's error when a step was
	// interrupted; a failed step is a record, not an error.
	Run(ctx context.Context, o *Options, conn loadgen.ConnMode, ns []int, step func(*result.Record) bool) error
}

// GoRunner runs each step in this process with loadgen, the ping or
// Options.Call under Options.MaxRPS with Options.Load's dial options. It
// has every option and every layout, the adaptive pool included.
type GoRunner struct{}

// Lang is "go".
func (GoRunner) Lang() string { return "go" }

// Stepwise is true: each step is its own loadgen run.
func (GoRunner) Stepwise() bool { return true }

// Check accepts every study.
func (GoRunner) Check(*Options) error { return nil }

// Run runs conn's steps one by one until step says stop.
func (GoRunner) Run(ctx context.Context, o *Options, conn loadgen.ConnMode, ns []int, step func(*result.Record) bool) error {
	for _, n := range ns {
		// loadgen warms an adaptive pool's step up to settle (o.StepWarmup).
		spec := &loadgen.Spec{Target: o.Target, Conns: []loadgen.ConnMode{conn}, RPCs: []string{loadgen.Unary},
			Inflight: []int{n}, PayloadBytes: o.PayloadBytes, Warmup: o.Warmup, Interval: o.Interval, DialTimeout: o.DialTimeout}
		rec, err := loadgen.RunLoad(ctx, spec, loadgen.Step{Conn: conn, RPC: loadgen.Unary, Inflight: n},
			o.workload(), loadgen.Load{MaxRPS: o.MaxRPS}, o.Load)
		if err != nil {
			return err
		}
		more := step(rec)
		if rec.Status == result.StatusInterrupted {
			return ctx.Err()
		}
		if !more {
			return nil
		}
	}
	return nil
}

// External runs a study through e, a built client of another language
// (extclient.NewExternal, then Build): each layout is one run of the
// client over the layout's in-flight counts (a JVM or Python process per
// step would spend the budget starting up), through the step spec
// (docs/clients.md). The step spec carries the ping only, in a closed
// loop, in plaintext, without metadata, and the adaptive pool is package
// pool's: Check refuses a study that needs any other.
func External(e *extclient.External) Runner { return externalRunner{e} }

type externalRunner struct{ e *extclient.External }

func (r externalRunner) Lang() string { return r.e.Lang }

func (externalRunner) Stepwise() bool { return false }

func (r externalRunner) Check(o *Options) error {
	switch {
	case o.Call != nil:
		return usage.Errorf(ErrCall, "the %s client calls the ping only", r.e.Lang)
	case o.MaxRPS != 0:
		return usage.Errorf(ErrMaxRPS, "the %s client runs a closed loop only: the step spec has no rate cap", r.e.Lang)
	case len(o.Load.DialOptions) > 0:
		return usage.Errorf(ErrDialOptions, "the %s client dials in plaintext without metadata: the step spec carries no TLS or headers", r.e.Lang)
	}
	return nil
}

func (r externalRunner) Run(ctx context.Context, o *Options, conn loadgen.ConnMode, ns []int, step func(*result.Record) bool) error {
	e := *r.e
	e.Conns = []string{conn.String()}
	spec := &loadgen.Spec{Target: o.Target, Conns: []loadgen.ConnMode{conn}, RPCs: []string{loadgen.Unary},
		Inflight: ns, PayloadBytes: o.PayloadBytes, Warmup: o.Warmup, Interval: o.Interval, DialTimeout: o.DialTimeout}
	err := e.Sweep(ctx, spec, func(rec *result.Record) error {
		step(rec)
		return nil
	}, nil)
	// Each failed step is a record the study judges, not an error of the
	// run.
	if errors.Is(err, extclient.ErrStepsFailed) {
		return nil
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("doctor: %w", err)
	}
	return err
}
