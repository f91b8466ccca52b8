// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/loadgen"
	"github.com/rpclab/rpclab/report"
	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/worker"
)

func newWorkerCmd() *cobra.Command {
	var (
		port        int
		host        string
		dialTimeout time.Duration
		verbose     bool
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Serve gRPC's benchmark worker protocol (grpc.testing.WorkerService) with rpclab's engine",
		Long: `Serve grpc.testing.WorkerService, the worker side of the gRPC project's
benchmark driver (its QPS driver, grpc/test-infra's LoadTest controller, or
rpclab sweep --workers). RunClient runs rpclab's load generator with the
driver's ClientConfig; RunServer runs rpclab's ping server; QuitWorker ends
the process. Beside it, rpclab.v1.WorkerDetail gives each mark's exact HDR
histogram, CPU time and the TCP connections the kernel saw.

The first line on stdout is "listening on ADDR". It has no authentication:
it listens on every interface unless given --host, as gRPC's workers do.

rpclab's knobs travel in the ClientConfig's channel_args: rpclab.conn
(a layout as in sweep --conn, e.g. "pool:4"), rpclab.rpc_timeout_ms and
rpclab.arrival ("constant" or "poisson", for a load_params.poisson run).`,
		Example: `  rpclab worker --driver-port 10000
  rpclab worker --driver-port 10000 --host 127.0.0.1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if port < 0 || port > 65535 {
				return usageError{fmt.Errorf("--driver-port: %d is outside 0..65535", port)}
			}
			o := worker.Options{DialTimeout: dialTimeout, ServerHost: host}
			if verbose {
				o.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			}
			w, err := worker.New(o)
			if err != nil {
				return usageError{fmt.Errorf("--dial-timeout: %w", err)}
			}
			lis, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
			if err != nil {
				return fmt.Errorf("worker: --driver-port %d: %w", port, err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "listening on", lis.Addr())
			return w.Serve(cmd.Context(), lis)
		},
	}
	f := cmd.Flags()
	f.IntVar(&port, "driver-port", 10000, "port the driver connects to (0: a free one)")
	f.StringVar(&host, "host", "", "address to listen on, for the driver and for RunServer's ping server (\"\": every interface)")
	f.DurationVar(&dialTimeout, "dial-timeout", 10*time.Second, "how long RunClient waits for its connections to the server")
	f.BoolVarP(&verbose, "verbose", "v", false, "log each run started and stopped to stderr")
	return cmd
}

func registerWorkers(f *pflag.FlagSet, sf *sweepFlags) {
	f.StringSliceVar(&sf.workers, "workers", nil, "run every step on these benchmark workers at once (host:port,...: rpclab worker, or gRPC's official workers), in-flight split among them; needs --target")
}

// workerSweepFlags are the sweep flags a sweep on workers reads; any other
// flag set with --workers is refused.
var workerSweepFlags = []string{"workers", "target", "inflight", "min-inflight", "max-inflight", "step", "conn", "rpc",
	"payload", "warmup", "interval", "dial-timeout", "rpc-timeout", "out", "force", "csv", "rps", "arrival"}

// runWorkerSweep is rpclab sweep --workers: rpclab as the driver of gRPC's
// benchmark protocol, every step on all workers at once.
func runWorkerSweep(cmd *cobra.Command, sf *sweepFlags) error {
	ctx, stdout, stderr := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	var bad error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if bad == nil && !slices.Contains(workerSweepFlags, fl.Name) {
			bad = usageError{fmt.Errorf("--%s is not supported with --workers (the workers run rpclab's or official clients against --target, closed loop or --rps)", fl.Name)}
		}
	})
	if bad != nil {
		return bad
	}
	if sf.target == "" {
		return usageError{errors.New("--workers needs --target: the server every worker can reach")}
	}
	for _, w := range sf.workers {
		if _, _, err := net.SplitHostPort(w); err != nil {
			return usageError{fmt.Errorf("--workers: %q is not host:port", w)}
		}
	}
	if len(sf.workers) == 0 {
		return usageError{errors.New("--workers: no worker given")}
	}
	spec, err := sf.spec(cmd.Flags())
	if err != nil {
		return err
	}
	var open *worker.Open
	if cmd.Flags().Changed("rps") {
		// As on one machine, --inflight defaults to openPerWorkerConns:
		// here the callers, split over the workers, each pacing its share.
		if !cmd.Flags().Changed("inflight") && !cmd.Flags().Changed("max-inflight") {
			spec.Inflight = []int{openPerWorkerConns}
		}
		open = &worker.Open{Rates: sf.open.rates, Arrival: sf.open.arrival}
		if err := open.Validate(nil); err != nil {
			return err
		}
	} else if cmd.Flags().Changed("arrival") {
		return usageError{errors.New("--arrival needs --rps (the open loop)")}
	}
	if err := spec.Validate(); err != nil {
		return err
	}
	if sf.csv != "" && sf.csv == sf.out {
		return usageError{fmt.Errorf("--csv and --out are the same file %q", sf.out)}
	}
	var out *os.File
	if sf.out != "" {
		if st, err := os.Stat(sf.out); err == nil && st.Size() > 0 && !sf.force {
			return usageError{fmt.Errorf("--out %s: the file exists and is not empty: refusing to overwrite it (give --force to, or another name)", sf.out)}
		}
		if out, err = os.Create(sf.out); err != nil {
			return usageError{fmt.Errorf("--out: %w", err)}
		}
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
				return &loadgen.UsageError{Setting: le.Setting, Err: fmt.Errorf("%w (nothing was run)", le.Err)}
			}
			return err
		}
		steps *= len(open.Rates)
	}
	fmt.Fprintf(stderr, "rpclab: %d steps on %d workers against %s, about %v\n", steps, len(remotes), spec.Target,
		(time.Duration(steps) * (spec.Warmup + spec.Interval)).Round(time.Second))
	if open != nil {
		fmt.Fprintf(stderr, "rpclab: open loop, %s arrivals: each step's rate split evenly over the workers with an in-flight share (workers[].rate_rps)\n", open.Arrival)
		for _, r := range remotes {
			if !r.RPCLab {
				fmt.Fprintf(stderr, "rpclab: note: official worker %s reads load_params.poisson.offered_load its own way (grpc-go's worker sends it from each of its in-flight RPCs, so its share times its in-flight share); compare workers[].throughput_rps with workers[].rate_rps (docs/workers.md)\n", r.Addr)
			}
		}
		err = worker.SweepOpen(ctx, remotes, spec, *open, sink, nil)
	} else {
		err = worker.Sweep(ctx, remotes, spec, sink, nil)
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

func writeCSVFile(path string, recs []result.Record) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--csv: %w", err)
	}
	if err := report.CSV(f, recs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
