// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// sweepFlags are the groups sweep, demo and compare compose (flags.go).
type sweepFlags struct {
	targetFlags
	stepFlags
	outputFlags
	serverFlags
	// client is sweep's and demo's --client, clients compare's --clients.
	client  string
	clients []string
	// poolEvents is --pool-events: a file for pool:auto's decisions.
	poolEvents string
	// channelzPort serves this process's channelz (Go client; 0: off).
	channelzPort int
	netem        netemFlags
	open         openFlags
	workers      workerFlags
	// local are the groups only a run from this machine reads (its child
	// server, its netem proxy, its client, its open loop's dispatcher and
	// --call): a sweep on workers refuses them.
	local []flagGroup
}

// register adds the groups of sweep and demo: target, steps, outputs, the
// child server, the client, netem and the open loop.
func (sf *sweepFlags) register(f *pflag.FlagSet, d sweepDefaults) {
	sf.targetFlags.register(f)
	sf.stepFlags.register(f, d)
	sf.outputFlags.register(f, d.out)
	sf.local = []flagGroup{
		addGroup(f, sf.serverFlags.register),
		addGroup(f, func(f *pflag.FlagSet) {
			f.StringVar(&sf.client, "client", "go", "client stack: go (in process), or cpp, java, rust, python, node (clients/<lang>, built on first use)")
			f.IntVar(&sf.channelzPort, "channelz-port", 0, "serve this process's channelz (grpc.channelz.v1) on 127.0.0.1:PORT for rpclab doctor --pid --channelz (Go client; 0: off)")
			f.StringVar(&sf.poolEvents, "pool-events", "", "write every pool:auto step's decisions (each resize and change of reason, with the signals it was taken on, warm-up included) to this file as tab-separated lines (Go client)")
		}),
		addGroup(f, sf.netem.register),
		sf.open.register(f),
	}
}

func newSweepCmd() *cobra.Command {
	var sf sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Sweep in-flight counts per connection layout (closed loop)",
		Long: `Run a closed-loop sweep: every combination of --conn, --rpc and --inflight is
one step. In a step each worker keeps exactly one RPC in flight (send, wait,
record), so in-flight = workers. Every step dials fresh connections, warms up
for --warmup (not recorded), then measures for --interval. A pool:auto step
warms up until the pool can settle at its in-flight count (--auto-warmup), and
then on while a trial of a connection is under way (at most two trials more),
so that it measures the size the pool chose beside fixed layouts that keep a
short --warmup; its record's warmup_ns is the warm-up it ran.

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
  rpclab sweep --conn shared,pool:2,pool:4,pool:8,pool:auto --inflight 1,8,64
  rpclab sweep --target 10.0.0.5:50051 --rpc unary,streaming --payload 1024 -o results.jsonl
  rpclab sweep --target a-ydb-node:2135 --service ydb-debug --min-inflight 1 --max-inflight 32
  rpclab sweep --workers 10.0.0.7:10000,10.0.0.8:10000 --target 10.0.0.5:50051 --inflight 64,256`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if sf.workers.given(cmd.Flags()) {
				return runWorkerSweep(cmd, &sf)
			}
			spec, err := sf.spec(cmd.Flags())
			if err != nil {
				return err
			}
			stop, err := serveChannelz(sf.channelzPort, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer stop()
			return runLab(cmd, spec, &sf)
		},
	}
	sf.register(cmd.Flags(), sweepDefaults{
		inflight: []int{1, 2, 4, 8, 16, 32},
		conns:    []string{"shared", "per-worker"},
		warmup:   5 * time.Second,
		interval: 10 * time.Second,
	})
	sf.workers.register(cmd.Flags())
	return cmd
}
