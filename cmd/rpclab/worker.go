// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/lab"
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

// writeCSVFile writes --csv whole once the sweep is over (lab.WriteFile):
// a run that fails first leaves an earlier file as it was.
func writeCSVFile(path string, recs []result.Record) error {
	if err := lab.WriteFile(path, func(w io.Writer) error { return report.CSV(w, recs) }); err != nil {
		return fmt.Errorf("--csv: %w", err)
	}
	return nil
}
