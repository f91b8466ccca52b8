// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// sweepFlags are the flags sweep and demo share.
type sweepFlags struct {
	target        string
	inflight      []int
	minInflight   int
	maxInflight   int
	step          int
	conns         []string
	rpcs          []string
	service       string
	payload       string
	warmup        time.Duration
	interval      time.Duration
	dialTimeout   time.Duration
	rpcTimeout    time.Duration
	out           string
	force         bool
	csv           string
	noPin         bool
	serverOptions []string
	client        string
	serverImpl    string
	clientsDir    string
	// clients and png are rpclab compare's; report is the HTML report
	// that demo and compare write.
	clients []string
	report  string
	png     string
	netem   netemFlags
	open    openFlags
	// workers is sweep --workers (rpclab as the driver of workers).
	workers []string
}

func (sf *sweepFlags) register(f *pflag.FlagSet, d sweepDefaults) {
	f.StringVar(&sf.target, "target", "", "host:port of a server of --service (default: start rpclab's own server as a child process on a free loopback port)")
	f.IntSliceVar(&sf.inflight, "inflight", d.inflight, "in-flight counts to sweep (comma-separated; one worker per in-flight RPC)")
	f.IntVar(&sf.minInflight, "min-inflight", 0, "sweep in-flight from this count (instead of --inflight)")
	f.IntVar(&sf.maxInflight, "max-inflight", 0, "... up to this count")
	f.IntVar(&sf.step, "step", 1, "... in steps of this size")
	f.StringSliceVar(&sf.conns, "conn", d.conns, "connection layouts: shared (one connection), per-worker (one per worker), pool:N (N connections round-robin, N at most 1024), pool:N:least-loaded, pool:auto (a pool that sizes itself, pool.WithAdaptive, between 1 and 8 connections: 8 is the lab's largest fixed pool) or pool:auto:MIN:MAX (1 <= MIN <= MAX <= 1024)")
	f.StringSliceVar(&sf.rpcs, "rpc", []string{"unary"}, "RPC kinds: unary, streaming (bidi ping-pong, one stream per worker)")
	f.StringVar(&sf.service, "service", "benchmark", "ping service: benchmark (grpc.testing.BenchmarkService), or ydb-debug (YDB's Ydb.Debug.V1.DebugService: PingPlainGrpc for --rpc unary, PingStream for streaming; no payload), as a YDB node's gRPC layer answers it")
	f.StringVar(&sf.payload, "payload", "0", "request and response payload: bytes, or with a unit (1KiB, 64KB)")
	f.DurationVar(&sf.warmup, "warmup", d.warmup, "warm-up per step, not recorded (fresh connections every step)")
	f.DurationVar(&sf.interval, "interval", d.interval, "measured time per step")
	f.DurationVar(&sf.dialTimeout, "dial-timeout", 5*time.Second, "how long a step waits for its connections before it fails")
	f.DurationVar(&sf.rpcTimeout, "rpc-timeout", 0, "deadline of each RPC (0: none; the step's end cancels what is left)")
	f.StringVarP(&sf.out, "out", "o", d.out, "write result records (JSON Lines) to this file; an existing non-empty file is refused (exit 2) unless --force")
	f.BoolVar(&sf.force, "force", false, "overwrite an existing --out file (its earlier records are lost)")
	f.StringVar(&sf.csv, "csv", "", "also write the table as CSV to this file")
	f.BoolVar(&sf.noPin, "no-pin", false, "do not pin the child server and the client to separate CPUs")
	f.StringSliceVar(&sf.serverOptions, "server-flag", nil, "extra flag for the child server, e.g. --server-flag=--num-stream-workers=2")
	f.StringVar(&sf.client, "client", "go", "client stack: go (in process), or cpp, java, rust, python, node (clients/<lang>, built on first use)")
	f.StringVar(&sf.serverImpl, "server", "go", "child server implementation when there is no --target: go, or cpp (clients/cpp)")
	f.StringVar(&sf.clientsDir, "clients-dir", "", "the clients/ folder of an rpclab checkout (default: found above the working directory)")
	sf.netem.register(f)
	sf.open.register(f)
}

type sweepDefaults struct {
	inflight         []int
	conns            []string
	warmup, interval time.Duration
	out              string
}

func newSweepCmd() *cobra.Command {
	var sf sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Sweep in-flight counts per connection layout (closed loop)",
		Long: `Run a closed-loop sweep: every combination of --conn, --rpc and --inflight is
one step. In a step each worker keeps exactly one RPC in flight (send, wait,
record), so in-flight = workers. Every step dials fresh connections, warms up
for --warmup (not recorded), then measures for --interval.

For each step the table shows throughput beside the ideal line (throughput at
in-flight 1 times the in-flight count, as YDB's study drew it), latency
percentiles, errors by status code, the TCP connections the operating system
saw from this process to the target, and client CPU per RPC.

Without --target, rpclab starts its own server as a child process on a free
loopback port, pins it to the last CPU and the client to the others, and stops
it at the end. Records are written as each step ends, so Ctrl-C keeps
everything measured so far (the step it cuts short is kept, marked
interrupted). If the child server dies, the sweep ends at once: the step in
progress is kept as failed with the server's exit status, and rpclab exits 1.

Every output is checked before the first step: -o, --csv and --report must
be different files and none of the files read (--data-file, --proto, ...),
an existing non-empty output is refused unless --force is given, and --csv
or --report never replaces a records file, even with --force. --csv and
--report are written whole at the end: a run that fails first leaves an
earlier file as it was.

With --workers h1:port,h2:port (and --target), rpclab drives benchmark
workers (rpclab worker, or gRPC's official ones) instead of its own client:
every step runs on all of them at once, in-flight split among them (and with
--rps, each rate split evenly over the workers with an in-flight share), and
each record merges their figures with a per-worker breakdown (docs/workers.md).`,
		Example: `  rpclab sweep --inflight 1,2,4,8,16,32 --conn shared,per-worker,pool:4
  rpclab sweep --min-inflight 1 --max-inflight 16 --conn shared,per-worker --interval 5s
  rpclab sweep --target 10.0.0.5:50051 --rpc unary,streaming --payload 1024 -o results.jsonl
  rpclab sweep --target a-ydb-node:2135 --service ydb-debug --min-inflight 1 --max-inflight 32
  rpclab sweep --workers 10.0.0.7:10000,10.0.0.8:10000 --target 10.0.0.5:50051 --inflight 64,256`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("workers") {
				return runWorkerSweep(cmd, &sf)
			}
			spec, err := sf.spec(cmd.Flags())
			if err != nil {
				return err
			}
			return runLab(cmd, spec, &sf)
		},
	}
	sf.register(cmd.Flags(), sweepDefaults{
		inflight: []int{1, 2, 4, 8, 16, 32},
		conns:    []string{"shared", "per-worker"},
		warmup:   5 * time.Second,
		interval: 10 * time.Second,
	})
	registerWorkers(cmd.Flags(), &sf)
	return cmd
}
