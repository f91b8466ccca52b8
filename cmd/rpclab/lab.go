// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/internal/lab"
	"github.com/rpclab/rpclab/internal/loadgen"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
)

// runLab wires a sweep to a lab.Session: the flags become options, the
// session checks and opens the outputs, the clients are built, the session
// starts the child server (without --target) and the netem proxy, and runs
// every client (one, or with rpclab compare each of sf.clients in turn);
// then the tables, CSV, verdict and HTML report are written.
func runLab(cmd *cobra.Command, spec *loadgen.Spec, sf *sweepFlags) (err error) {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	compare := len(sf.clients) > 0
	planned, err := planClients(sf, stderr)
	if err != nil {
		return err
	}
	if err := sf.checkPoolEvents(planned); err != nil {
		return err
	}
	open, err := sf.open.open(ctx, cmd.Flags(), sf, spec)
	if err != nil {
		return err
	}
	d := newDrawer(stderr, compare)
	d.openLoop(open, sf.open.objective)
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

	// Every client is built before the server starts, so no build runs
	// beside a measurement.
	built, buildErr := buildClients(ctx, sf, planned, stderr)
	if len(built) == 0 {
		return errors.Join(lab.ErrNoClient, buildErr)
	}
	if w := warnBusyHost(ctx); w != "" { // after the builds, before the server
		fmt.Fprintln(stderr, w)
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	o := loadgen.Options{ClientCPUs: s.ClientCPUs, ServerCPUs: s.ServerCPUs}
	var events *poolEvents
	if f := s.File("--pool-events"); f != nil {
		events = &poolEvents{w: f}
		o.PoolEvents = events.write
	}
	clients, steps, about := sf.labClients(s, spec, open, built, o)
	fmt.Fprintf(stderr, "rpclab: %d steps against %s, about %v\n", steps, s.Target, about.Round(time.Second))
	recs, err := s.Run(ctx, clients, compare)
	d.stop()
	err = errors.Join(buildErr, err)
	if events != nil {
		err = errors.Join(err, events.Err())
	}
	if werr := writeResults(cmd, s, sf, open, recs); werr != nil {
		return errors.Join(err, werr)
	}
	if h := sf.netem.slowRateHint(cmd.Flags(), recs); h != "" {
		fmt.Fprintln(stderr, "rpclab: hint:", h)
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("interrupted: %s: %w", keptSteps(recs), ctx.Err())
	}
	return err
}

// sessionOptions maps the sweep flags to the session's options.
func (sf *sweepFlags) sessionOptions(cmd *cobra.Command, progress func(lab.Event)) ([]lab.Option, error) {
	network, withNetem, err := sf.netem.network(cmd.Flags())
	if err != nil {
		return nil, err
	}
	opts := []lab.Option{lab.WithPin(!sf.noPin), lab.WithForce(sf.force), lab.WithProgress(progress), lab.WithInputs(sf.open.inputs()...), lab.WithOutputs(append(sf.outputs(), lab.Output{Name: "--pool-events", Path: sf.poolEvents, Open: true})...)}
	if withNetem {
		opts = append(opts, lab.WithNetem(network, sf.netem.queue, true))
	}
	if sf.target != "" {
		return append(opts, lab.WithTarget(sf.target)), nil
	}
	srv, err := childServer(cmd, sf.serverImpl, sf.clientsDir, sf.serverOptions)
	if err != nil {
		return nil, err
	}
	return append(opts, lab.WithServer(srv)), nil
}

// childServer is "rpclab serve" (go) or the C++ server of clients/cpp
// (built when the session starts), with extra server flags.
func childServer(cmd *cobra.Command, impl, clientsDir string, extra []string) (lab.Server, error) {
	switch impl {
	case "go":
		exe, err := os.Executable()
		if err != nil {
			return lab.Server{}, fmt.Errorf("find own executable to start the server: %w", err)
		}
		return lab.Server{Name: "go", Argv: append([]string{exe, "serve", "--listen", "127.0.0.1:0"}, extra...),
			// The Go server pins itself, so GOMAXPROCS matches its CPUs.
			PinArgs: func(cpus []int) []string { return []string{"--cpus", strconv.Itoa(cpus[0])} }}, nil
	case "cpp":
		return lab.Server{Name: "cpp", Prepare: func(ctx context.Context) ([]string, error) {
			e, err := buildExternal(ctx, clientsDir, "cpp", []string{"shared"}, cmd.ErrOrStderr())
			if err != nil {
				return nil, err
			}
			return append([]string{filepath.Join(e.Dir, "rpclab-server"), "--listen", "127.0.0.1:0"}, extra...), nil
		}}, nil
	default:
		return lab.Server{}, usage.Wrap(fmt.Errorf("--server: unknown implementation %q (want go or cpp)", impl))
	}
}

// labClients makes the session's clients: each language's sweep, the Go
// client's closed or open loop. steps counts their steps, about is how
// long they take (the Go client's pool:auto steps warm up to settle:
// loadgen.Spec.StepWarmup).
func (sf *sweepFlags) labClients(s *lab.Session, spec *loadgen.Spec, open *loadgen.OpenSpec, built []labClient, o loadgen.Options) (out []lab.Client, steps int, about time.Duration) {
	for _, c := range built {
		lc := lab.Client{Name: c.lang, Conns: c.conns, Spec: *spec, LoadModel: "closed"}
		if c.goConns != nil {
			lc.Spec.Conns = c.goConns
		}
		n := len(spec.RPCs) * len(c.conns) * len(spec.Inflight)
		var d time.Duration
		switch {
		case c.ext != nil: // no pool:auto: every step warms up for spec.Warmup
			d = time.Duration(n) * (spec.Warmup + spec.Interval)
			c.ext.ServerCPUs = s.ServerCPUs
			lc.Sweep = c.ext.Sweep
		case open != nil:
			n *= len(open.Rates)
			d = time.Duration(len(open.Rates)) * lc.Spec.Duration(o.AdaptiveRule)
			lc.LoadModel = "open"
			lc.Sweep = func(ctx context.Context, spec *loadgen.Spec, sink func(*result.Record) error, prog loadgen.Progress) error {
				return sf.open.sweep(ctx, spec, open, o, sink, prog)
			}
		case sf.open.call != "":
			d = lc.Spec.Duration(o.AdaptiveRule)
			lc.Sweep = func(ctx context.Context, spec *loadgen.Spec, sink func(*result.Record) error, prog loadgen.Progress) error {
				return sf.open.closedSweep(ctx, spec, o, sink, prog)
			}
		default:
			d = lc.Spec.Duration(o.AdaptiveRule)
			lc.Sweep = func(ctx context.Context, spec *loadgen.Spec, sink func(*result.Record) error, prog loadgen.Progress) error {
				return loadgen.Sweep(ctx, spec, o, sink, prog)
			}
		}
		steps += n
		about += d
		out = append(out, lc)
	}
	return out, steps, about
}

// labError maps a session's option and output errors to usage errors
// (exit 2), which name the flag.
func labError(err error) error {
	var oe *lab.OutputError
	switch {
	case errors.Is(err, lab.ErrExists):
		return usage.Wrap(fmt.Errorf("%w: refusing to overwrite it (give --force to, or another name)", err))
	case errors.As(err, &oe), errors.Is(err, lab.ErrInvalidOption):
		return usage.Wrap(err)
	}
	return err
}
