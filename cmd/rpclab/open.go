// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	"google.golang.org/grpc"

	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
	"github.com/rpclab/rpclab/internal/verdict"
)

// openPerWorkerConns is the connection count of an open-loop per-worker
// layout when --inflight is not given.
const openPerWorkerConns = 8

// openFlags are the open-loop flags of sweep. Two names differ from issue
// 9's: the offered load is --rps, not --rate, because --rate is already the
// netem link's bandwidth; the bound on RPCs in flight is --max-outstanding,
// not --max-inflight, because --max-inflight is already the top of the
// closed loop's --min-inflight/--max-inflight range.
type openFlags struct {
	rates          []float64
	arrival        string
	pacing         string
	maxOutstanding int
	slo            string
	// objective is --slo parsed by open (nil without it): the stop
	// predicate of the sweep, and the judge of its records afterwards.
	objective *verdict.SLO
	callFlags
	// needsRPS are the open loop's flags beside --rps, which need it.
	needsRPS flagGroup
}

// callFlagNames are the flags that describe --call.
var callFlagNames = []string{"data", "data-file", "protoset", "proto", "import-path"}

// register adds the open loop's flags and returns the group that only
// this machine's open loop reads (its dispatcher, --slo and --call), which
// a sweep on workers refuses; --rps and --arrival are read by both.
func (of *openFlags) register(f *pflag.FlagSet) flagGroup {
	f.Float64SliceVar(&of.rates, "rps", nil, "open loop: offered rates in RPCs per second, each above 0 and at most 1e7, e.g. 1000,5000,20000 (sends follow a schedule whatever the replies; latency counts from the intended send time). --inflight is then the connection count of per-worker")
	arrival := addGroup(f, func(f *pflag.FlagSet) {
		f.StringVar(&of.arrival, "arrival", loadgen.Constant, "open loop: arrival process, constant or poisson")
	})
	local := addGroup(f, func(f *pflag.FlagSet) {
		f.StringVar(&of.pacing, "pacing", loadgen.PrecisePacing, "open loop: how the scheduler waits for each send: precise (a Go timer, with a kernel timer armed for the same time so that an idle client wakes then: sends leave within tens of µs of their time, at the cost of a wake-up of their own) or timer (Go's timers only: an idle client wakes up to about 1 ms late, which shows as schedule lag and in the latency, and the sends due within that millisecond share one wake-up)")
		f.IntVar(&of.maxOutstanding, "max-outstanding", loadgen.DefaultMaxOutstanding, "open loop: most RPCs in flight, 1..100000; a send that finds this many waits, and the record counts it (max_outstanding_hits)")
		f.StringVar(&of.slo, "slo", "", "open loop: latency objective such as p99=1ms; each layout's rates stop at the first one missing it, and the highest sustained rate is printed")
	})
	// --call and its flags: the Go client on this machine, in the open
	// loop or the closed one.
	call := addGroup(f, func(f *pflag.FlagSet) {
		of.callFlags.register(f, "call this method of the target instead of the ping, as package.Service/Method (found by server reflection, or --protoset or --proto), in the closed loop or the open one (--rps)")
	})
	of.needsRPS = append(arrival, local...)
	return append(local, call...)
}

// open maps the flags to a loadgen.OpenSpec; nil without --rate.
// Without --inflight, the open loop runs one in-flight value,
// openPerWorkerConns: it is only the connection count of per-worker.
func (of *openFlags) open(ctx context.Context, fs *pflag.FlagSet, sf *sweepFlags, spec *loadgen.Spec) (*loadgen.OpenSpec, error) {
	if !fs.Changed("rps") {
		if err := of.needsRPS.refuse(fs, "needs --rps (the open loop)"); err != nil {
			return nil, err
		}
		if of.call != "" && (sf.client != "go" || len(sf.clients) > 0) {
			return nil, usage.Wrap(errors.New("--call: a method is called by the go client only"))
		}
		return nil, of.checkCall(ctx, fs)
	}
	if sf.client != "go" {
		return nil, usage.Wrap(errors.New("--rps: the open loop runs in the go client only"))
	}
	if !fs.Changed("inflight") && !fs.Changed("max-inflight") {
		spec.Inflight = []int{openPerWorkerConns}
	}
	if err := checkRates(of.rates); err != nil {
		return nil, err
	}
	o := &loadgen.OpenSpec{Rates: of.rates, OpenLoop: loadgen.OpenLoop{Arrival: of.arrival, Pacing: of.pacing, MaxOutstanding: of.maxOutstanding}}
	if of.slo != "" {
		s, err := verdict.ParseSLO(of.slo)
		if err != nil {
			return nil, usage.Wrap(fmt.Errorf("--slo: %w", err))
		}
		of.objective, o.Stop = s, s.Missed
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return o, of.checkCall(ctx, fs)
}

// checkCall checks --call and the flags around it, before anything runs.
func (of *openFlags) checkCall(ctx context.Context, fs *pflag.FlagSet) error {
	if of.call == "" {
		for _, name := range callFlagNames {
			if fs.Changed(name) {
				return usage.Wrap(errors.New("--" + name + " needs --call"))
			}
		}
	}
	if fs.Changed("protoset") && fs.Changed("proto") {
		return usage.Wrap(errors.New("--proto and --protoset are exclusive"))
	}
	if fs.Changed("data") && fs.Changed("data-file") {
		return usage.Wrap(errors.New("--data and --data-file are exclusive"))
	}
	if _, err := of.conn.DialOptions(); err != nil {
		return usage.Wrap(err)
	}
	if of.call != "" {
		return of.callFlags.check(ctx)
	}
	return nil
}

// closedSweep resolves --call against the target, then runs spec's steps
// in the closed loop, each calling it, with the TLS and metadata dial
// options: as loadgen.Sweep does the ping, each record to sink as it is
// measured, and an error when a step failed.
func (of *openFlags) closedSweep(ctx context.Context, spec *loadgen.Spec, o loadgen.Options, sink func(*result.Record) error, prog loadgen.Progress) error {
	dial, err := of.conn.DialOptions()
	if err != nil {
		return usage.Wrap(err)
	}
	o.DialOptions = append(append([]grpc.DialOption(nil), o.DialOptions...), dial...)
	m, req, err := of.resolve(ctx, spec)
	if err != nil {
		return err
	}
	w := loadgen.CallWorkload(m, req)
	steps := spec.Steps()
	failed := 0
	for i, st := range steps {
		prog.Started(i, len(steps), st)
		rec, err := loadgen.RunLoad(ctx, spec, st, w, loadgen.Load{}, o)
		if err != nil {
			return err
		}
		if err := sink(rec); err != nil {
			return err
		}
		if rec.Status == result.StatusFailed || rec.Status == result.StatusStalled {
			failed++
		}
		prog.Ended(i, len(steps), st, rec)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if failed > 0 {
		return fmt.Errorf("sweep: %d of %d steps failed or stalled", failed, len(steps))
	}
	return nil
}

// sweep resolves --call (if given) against the target, then runs the
// open-loop sweep with the TLS and metadata dial options.
func (of *openFlags) sweep(ctx context.Context, spec *loadgen.Spec, open *loadgen.OpenSpec, o loadgen.Options, sink func(*result.Record) error, prog loadgen.Progress) error {
	dial, err := of.conn.DialOptions()
	if err != nil {
		return usage.Wrap(err)
	}
	o.DialOptions = append(append([]grpc.DialOption(nil), o.DialOptions...), dial...)
	if of.call != "" {
		m, req, err := of.resolve(ctx, spec)
		if err != nil {
			return err
		}
		open.Workload = loadgen.CallWorkload(m, req)
	}
	return loadgen.SweepOpen(ctx, spec, *open, o, sink, prog)
}
