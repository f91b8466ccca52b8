// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/lab"
	"github.com/rpclab/rpclab/loadgen"
	"github.com/rpclab/rpclab/report"
	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/worker"
)

// runWorkerSweep is rpclab sweep --workers: rpclab as the driver of gRPC's
// benchmark protocol, every step on all workers at once.
func runWorkerSweep(cmd *cobra.Command, sf *sweepFlags) error {
	ctx, stdout, stderr := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	spec, open, err := workerSweepSpec(cmd, sf)
	if err != nil {
		return err
	}
	out, err := workerSweepOut(sf)
	if err != nil {
		return err
	}
	if out != nil {
		defer out.Close()
	}
	remotes, err := worker.Connect(ctx, sf.workers, sf.dialTimeout)
	if err != nil {
		return fmt.Errorf("%w (nothing was run)", err)
	}
	defer func() {
		for _, r := range remotes {
			r.Close()
		}
	}()
	recs, err := runOnWorkers(ctx, stderr, remotes, spec, open, out)
	var nothing *nothingRun
	if errors.As(err, &nothing) {
		return nothing.err
	}
	if terr := report.Table(stdout, recs); terr != nil {
		return errors.Join(err, terr)
	}
	fmt.Fprintln(stdout)
	printVerdict(stdout, recs)
	fmt.Fprintln(stdout)
	if terr := report.WorkerTable(stdout, recs); terr != nil {
		return errors.Join(err, terr)
	}
	if sf.csv != "" {
		if cerr := writeCSVFile(sf.csv, recs); cerr != nil {
			return errors.Join(err, cerr)
		}
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("interrupted: %d steps measured and kept, every worker's run ended: %w", len(recs), ctx.Err())
	}
	return err
}

// nothingRun is an error found before the first step: it is returned as
// it is, with no table.
type nothingRun struct{ err error }

func (n *nothingRun) Error() string { return n.err.Error() }

// workerSweepSpec checks the flags a sweep on workers takes and maps them
// onto a spec, and an open loop when --rps is given.
func workerSweepSpec(cmd *cobra.Command, sf *sweepFlags) (*loadgen.Spec, *worker.Open, error) {
	var bad error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if bad == nil && !slices.Contains(workerSweepFlags, fl.Name) {
			bad = usageError{fmt.Errorf("--%s is not supported with --workers (the workers run rpclab's or official clients against --target, closed loop or --rps)", fl.Name)}
		}
	})
	if bad != nil {
		return nil, nil, bad
	}
	if sf.target == "" {
		return nil, nil, usageError{errors.New("--workers needs --target: the server every worker can reach")}
	}
	for _, w := range sf.workers {
		if _, _, err := net.SplitHostPort(w); err != nil {
			return nil, nil, usageError{fmt.Errorf("--workers: %q is not host:port", w)}
		}
	}
	if len(sf.workers) == 0 {
		return nil, nil, usageError{errors.New("--workers: no worker given")}
	}
	spec, err := sf.spec(cmd.Flags())
	if err != nil {
		return nil, nil, err
	}
	var open *worker.Open
	if cmd.Flags().Changed("rps") {
		// As on one machine, --inflight defaults to openPerWorkerConns:
		// here the callers, split over the workers, each pacing its share.
		if !cmd.Flags().Changed("inflight") && !cmd.Flags().Changed("max-inflight") {
			spec.Inflight = []int{openPerWorkerConns}
		}
		if err := checkRates(sf.open.rates); err != nil {
			return nil, nil, err
		}
		open = &worker.Open{Rates: sf.open.rates, Arrival: sf.open.arrival}
		if err := open.Validate(nil); err != nil {
			return nil, nil, err
		}
	} else if cmd.Flags().Changed("arrival") {
		return nil, nil, usageError{errors.New("--arrival needs --rps (the open loop)")}
	}
	if err := spec.Validate(); err != nil {
		return nil, nil, err
	}
	return spec, open, nil
}

// workerSweepOut checks --csv and --out by lab's one rule
// (lab.CheckOutputs) and creates --out (nil without one), before any
// worker is asked for anything.
func workerSweepOut(sf *sweepFlags) (*os.File, error) {
	err := lab.CheckOutputs(nil, sf.force, lab.Output{Name: "--out", Path: sf.out, Keep: true}, lab.Output{Name: "--csv", Path: sf.csv})
	if err != nil {
		return nil, labError(err)
	}
	if sf.out == "" {
		return nil, nil
	}
	out, err := os.Create(sf.out)
	if err != nil {
		return nil, usageError{fmt.Errorf("--out: %w", err)}
	}
	return out, nil
}

// runOnWorkers runs the sweep on remotes, printing progress to stderr and
// writing each record to out (when not nil) as its step ends. An error
// before the first step is a *nothingRun.
func runOnWorkers(ctx context.Context, stderr io.Writer, remotes []*worker.Remote, spec *loadgen.Spec, open *worker.Open, out *os.File) ([]result.Record, error) {
	for _, r := range remotes {
		impl := "official"
		if r.RPCLab {
			impl = "rpclab"
		}
		fmt.Fprintf(stderr, "rpclab: worker %s: %s, %d cores\n", r.Addr, impl, r.Cores)
	}
	var recs []result.Record
	var w *result.Writer
	if out != nil {
		w = result.NewWriter(out)
	}
	sink := func(rec *result.Record) error {
		recs = append(recs, *rec)
		fmt.Fprintf(stderr, "rpclab: step %d: %s, %.0f req/s over %d workers\n", len(recs), rec.Status, rec.ThroughputRPS, len(rec.Workers))
		if w != nil {
			return w.Write(rec)
		}
		return nil
	}
	steps := len(spec.Steps())
	if open != nil {
		if err := open.Validate(remotes); err != nil {
			var le *loadgen.UsageError
			if errors.As(err, &le) {
				return nil, &nothingRun{&loadgen.UsageError{Setting: le.Setting, Err: fmt.Errorf("%w (nothing was run)", le.Err)}}
			}
			return nil, &nothingRun{err}
		}
		steps *= len(open.Rates)
	}
	fmt.Fprintf(stderr, "rpclab: %d steps on %d workers against %s, about %v\n", steps, len(remotes), spec.Target,
		(time.Duration(steps) * (spec.Warmup + spec.Interval)).Round(time.Second))
	if open == nil {
		err := worker.Sweep(ctx, remotes, spec, sink, nil)
		return recs, err // recs after the sweep (a return's reads are unordered)
	}
	fmt.Fprintf(stderr, "rpclab: open loop, %s arrivals: each step's rate split evenly over the workers with an in-flight share (workers[].rate_rps)\n", open.Arrival)
	for _, r := range remotes {
		if !r.RPCLab {
			fmt.Fprintf(stderr, "rpclab: note: official worker %s reads load_params.poisson.offered_load its own way (grpc-go's worker sends it from each of its in-flight RPCs, so its share times its in-flight share); compare workers[].throughput_rps with workers[].rate_rps (docs/workers.md)\n", r.Addr)
		}
	}
	err := worker.SweepOpen(ctx, remotes, spec, *open, sink, nil)
	return recs, err
}
