// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/spf13/cobra"

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
(a layout as in sweep --conn, e.g. "pool:4") and rpclab.rpc_timeout_ms.`,
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
