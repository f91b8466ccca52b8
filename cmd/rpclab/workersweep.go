// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/internal/driver"
	"github.com/rpclab/rpclab/internal/lab"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
)

// runWorkerSweep is rpclab sweep --workers: rpclab as the driver of gRPC's
// benchmark protocol, every step on all workers at once. The workers are
// one client of a lab.Session, as another language's client is: the
// session checks and opens the outputs (the same rule and errors as a
// sweep on one machine), draws the progress and keeps the records; the
// tables are writeResults'.
func runWorkerSweep(cmd *cobra.Command, sf *sweepFlags) (err error) {
	ctx, stderr := cmd.Context(), cmd.ErrOrStderr()
	spec, open, err := sf.workersSpec(cmd.Flags())
	if err != nil {
		return err
	}
	d := newDrawer(stderr, false)
	defer d.stop()
	opts, err := sf.sessionOptions(cmd, d.event)
	if err != nil {
		return err
	}
	s, err := lab.New(opts...)
	if err != nil {
		return labError(err)
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	remotes, err := driver.Connect(ctx, sf.workers.addrs, sf.dialTimeout)
	if err != nil {
		return fmt.Errorf("%w (nothing was run)", err)
	}
	defer func() {
		for _, r := range remotes {
			r.Close()
		}
	}()
	c, err := workersClient(stderr, remotes, spec, open, sf.conns)
	if err != nil {
		return err
	}
	recs, err := s.Run(ctx, []lab.Client{c}, false)
	d.stop()
	var shown *loadgen.OpenSpec // the open loop's table and notes
	if open != nil {
		shown = &loadgen.OpenSpec{Rates: open.Rates, OpenLoop: loadgen.OpenLoop{Arrival: open.Arrival}}
	}
	if werr := writeResults(cmd, s, sf, shown, recs); werr != nil {
		return errors.Join(err, werr)
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("interrupted: %s, every worker's run ended: %w", keptSteps(recs), ctx.Err())
	}
	return err
}

// workersClient is the session's client that runs spec on remotes (the
// open loop when open is not nil), after checking open against them (an
// error then says nothing was run). It tells stderr about the workers and
// the plan.
func workersClient(stderr io.Writer, remotes []*driver.Remote, spec *loadgen.Spec, open *driver.Open, conns []string) (lab.Client, error) {
	for _, r := range remotes {
		impl := "official"
		if r.RPCLab {
			impl = "rpclab"
		}
		fmt.Fprintf(stderr, "rpclab: worker %s: %s, %d cores\n", r.Addr, impl, r.Cores)
	}
	c := lab.Client{Name: "go", Conns: conns, Spec: *spec, LoadModel: "closed"}
	steps, about := len(spec.Steps()), spec.Duration(nil) // each worker sizes its pool:auto by adaptive.DefaultRule
	if open == nil {
		c.Sweep = func(ctx context.Context, spec *loadgen.Spec, sink func(*result.Record) error, prog loadgen.Progress) error {
			return driver.Sweep(ctx, remotes, spec, sink, prog)
		}
	} else {
		if err := open.Validate(remotes); err != nil {
			var ue *usage.Error // the setting keeps its flag; the cause says more
			if errors.As(err, &ue) {
				return c, &usage.Error{Setting: ue.Setting, Err: fmt.Errorf("%w (nothing was run)", ue.Err)}
			}
			return c, err
		}
		steps *= len(open.Rates)
		about *= time.Duration(len(open.Rates))
		c.LoadModel = "open"
		c.Sweep = func(ctx context.Context, spec *loadgen.Spec, sink func(*result.Record) error, prog loadgen.Progress) error {
			return driver.SweepOpen(ctx, remotes, spec, *open, sink, prog)
		}
	}
	fmt.Fprintf(stderr, "rpclab: %d steps on %d workers against %s, about %v\n", steps, len(remotes), spec.Target,
		about.Round(time.Second))
	if open != nil {
		fmt.Fprintf(stderr, "rpclab: open loop, %s arrivals: each step's rate split evenly over the workers with an in-flight share (workers[].rate_rps)\n", open.Arrival)
		for _, r := range remotes {
			if !r.RPCLab {
				fmt.Fprintf(stderr, "rpclab: note: official worker %s reads load_params.poisson.offered_load its own way (grpc-go's worker sends it from each of its in-flight RPCs, so its share times its in-flight share); compare workers[].throughput_rps with workers[].rate_rps (docs/workers.md)\n", r.Addr)
			}
		}
	}
	return c, nil
}

// workersSpec checks the flags of a sweep on workers, which reads the
// target, steps, outputs, --workers, --rps and --arrival groups and
// refuses the groups only this machine reads (sf.local), and maps them
// onto a spec, and an open loop when --rps is given.
func (sf *sweepFlags) workersSpec(fs *pflag.FlagSet) (*loadgen.Spec, *driver.Open, error) {
	for _, g := range sf.local {
		if err := g.refuse(fs, "is not supported with --workers (the workers run rpclab's or official clients against --target, closed loop or --rps)"); err != nil {
			return nil, nil, err
		}
	}
	if err := sf.workers.check(sf.target); err != nil {
		return nil, nil, err
	}
	spec, err := sf.spec(fs)
	if err != nil {
		return nil, nil, err
	}
	if spec.Service != loadgen.Benchmark {
		return nil, nil, usage.Wrap(fmt.Errorf("--service %s is not supported with --workers (the workers call grpc.testing.BenchmarkService)", spec.Service))
	}
	if !fs.Changed("rps") {
		if err := sf.open.needsRPS.refuse(fs, "needs --rps (the open loop)"); err != nil {
			return nil, nil, err
		}
		if err := spec.Validate(); err != nil {
			return nil, nil, err
		}
		return spec, nil, nil
	}
	// As on one machine, --inflight defaults to openPerWorkerConns: here
	// the callers, split over the workers, each pacing its share.
	if !fs.Changed("inflight") && !fs.Changed("max-inflight") {
		spec.Inflight = []int{openPerWorkerConns}
	}
	if err := checkRates(sf.open.rates); err != nil {
		return nil, nil, err
	}
	open := &driver.Open{Rates: sf.open.rates, Arrival: sf.open.arrival}
	if err := open.Validate(nil); err != nil {
		return nil, nil, err
	}
	if err := spec.Validate(); err != nil {
		return nil, nil, err
	}
	return spec, open, nil
}
