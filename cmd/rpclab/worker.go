// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
	"github.com/rpclab/rpclab/internal/worker"
)

func newWorkerCmd() *cobra.Command {
	var wf workerCmdFlags
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Serve gRPC's benchmark worker protocol (grpc.testing.WorkerService) with rpclab's engine",
		Long: `Serve grpc.testing.WorkerService, the worker side of the gRPC project's
benchmark driver (its QPS driver, grpc/test-infra's LoadTest controller, or
rpclab sweep --workers). RunClient runs rpclab's load generator with the
driver's ClientConfig; RunServer runs rpclab's ping server; QuitWorker ends
the process. Beside it, rpclab.v1.WorkerDetail gives each mark's exact HDR
histogram, CPU time and the TCP connections the kernel saw.

The first line on stdout is "listening on ADDR". The protocol has no
authentication, so the worker listens on loopback (127.0.0.1) unless --host
says otherwise (--host 0.0.0.0: every interface, as gRPC's workers do and a
worker on another machine needs). Whoever reaches the port may: run a client
that sends load to any target it names (the protocol names the server by
address, so no list of allowed targets can be written ahead: open the port
only where everyone who reaches it may do that); start a ping server on
--host at the port it names; end the process (QuitWorker). A ClientConfig
may ask at most 20,000 RPCs in flight and 4 MiB payloads, and no more memory
than --memory-budget by the worker's estimate (64 KiB per RPC in flight,
twice the payload, 64 KiB per connection): above it, ResourceExhausted. A run
that sends no setup within --setup-timeout is ended, freeing its slot; one
client and one server run at a time.

rpclab's knobs travel in the ClientConfig's channel_args: rpclab.conn
(a layout as in sweep --conn, e.g. "pool:4"), rpclab.rpc_timeout_ms and
rpclab.arrival ("constant" or "poisson", for a load_params.poisson run).`,
		Example: `  rpclab worker --driver-port 10000
  rpclab worker --driver-port 10000 --host 0.0.0.0   # reachable from other hosts`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return wf.run(cmd) },
	}
	f := cmd.Flags()
	f.IntVar(&wf.port, "driver-port", 10000, "port the driver connects to (0: a free one)")
	f.StringVar(&wf.host, "host", "127.0.0.1", "address to listen on, for the driver and for RunServer's ping server (0.0.0.0: every interface)")
	f.DurationVar(&wf.dialTimeout, "dial-timeout", 10*time.Second, "how long RunClient waits for its connections to the server")
	f.DurationVar(&wf.setupTimeout, "setup-timeout", worker.DefaultSetupTimeout, "end a RunClient or RunServer that sends no setup for this long")
	f.StringVar(&wf.budget, "memory-budget", "", fmt.Sprintf("refuse a ClientConfig whose estimated memory is above this (default %s)", result.FormatBytes(worker.DefaultMemoryBudget)))
	f.BoolVarP(&wf.verbose, "verbose", "v", false, "log each run started and stopped to stderr")
	return cmd
}

// workerCmdFlags are rpclab worker's flags.
type workerCmdFlags struct {
	port         int
	host         string
	dialTimeout  time.Duration
	setupTimeout time.Duration
	budget       string
	verbose      bool
}

// run checks the flags and serves the worker protocol until the command's
// context ends.
func (wf *workerCmdFlags) run(cmd *cobra.Command) error {
	if wf.port < 0 || wf.port > 65535 {
		return usage.Wrap(fmt.Errorf("--driver-port: %d is outside 0..65535", wf.port))
	}
	var mem int64
	if wf.budget != "" {
		n, err := result.ParseBytes(wf.budget)
		if err != nil {
			return usage.Wrap(fmt.Errorf("--memory-budget: %w", err))
		}
		if n == 0 {
			return usage.Wrap(fmt.Errorf("--memory-budget: 0 leaves no room for a run (want e.g. 2GiB)"))
		}
		mem = n
	}
	if wf.setupTimeout < 0 {
		return usage.Wrap(fmt.Errorf("--setup-timeout: negative duration %v", wf.setupTimeout))
	}
	o := worker.Options{DialTimeout: wf.dialTimeout, ServerHost: wf.host, SetupTimeout: wf.setupTimeout, MemoryBudget: mem}
	if wf.verbose {
		o.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	}
	w, err := worker.New(o)
	if err != nil {
		return usage.Wrap(fmt.Errorf("--dial-timeout: %w", err))
	}
	lis, err := net.Listen("tcp", net.JoinHostPort(wf.host, strconv.Itoa(wf.port)))
	if err != nil {
		return fmt.Errorf("worker: --driver-port %d: %w", wf.port, err)
	}
	fmt.Fprintln(cmd.OutOrStdout(), "listening on", lis.Addr())
	return w.Serve(cmd.Context(), lis)
}

// workerFlags are sweep's --workers: the benchmark workers a sweep runs
// on instead of this machine's client.
type workerFlags struct{ addrs []string }

func (wf *workerFlags) register(f *pflag.FlagSet) {
	f.StringSliceVar(&wf.addrs, "workers", nil, "run every step on these benchmark workers at once (host:port,...: rpclab worker, or gRPC's official workers), in-flight split among them; needs --target")
}

// given tells whether the sweep runs on workers.
func (wf *workerFlags) given(fs *pflag.FlagSet) bool { return fs.Changed("workers") }

// check validates the workers' addresses and the target they all reach.
func (wf *workerFlags) check(target string) error {
	if target == "" {
		return usage.Wrap(errors.New("--workers needs --target: the server every worker can reach"))
	}
	for _, w := range wf.addrs {
		if _, _, err := net.SplitHostPort(w); err != nil {
			return usage.Wrap(fmt.Errorf("--workers: %q is not host:port", w))
		}
	}
	if len(wf.addrs) == 0 {
		return usage.Wrap(errors.New("--workers: no worker given"))
	}
	return nil
}
