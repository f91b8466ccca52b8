// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/internal/loadgen/extclient"
	"github.com/rpclab/rpclab/internal/usage"
)

func newCompareCmd() *cobra.Command {
	var sf sweepFlags
	cmd := &cobra.Command{
		Use:   "compare",
		Short: "Run every language's client against one server and compare them in one report",
		Long: `Sweep the same steps with the client of every gRPC stack, one client after
the other, against one server: rpclab's own (a child process pinned to the last
CPU, the clients to the others), or --target. Every client is built first
(clients/<lang>/build.sh; the first build of all six takes minutes), so no
build runs beside a measurement.

Each client sweeps the --conn layouts its stack has: shared, per-worker and
pool:N everywhere; channel-per-worker, local-pool and distinct-args only in the
C-core style stacks (cpp, python, node), where channels with identical
arguments share one TCP connection. A client that fails is reported and the
comparison goes on with the next.

Output: the step table of every client, each stack's verdict, notes on layouts
that got fewer connections than they asked for, a table of throughput, P99 and
client CPU per RPC at every in-flight count per client, the records (-o), and
an HTML report (--report) whose charts put every client on one figure per
metric.`,
		Example: `  rpclab compare
  rpclab compare --clients go,rust,java --inflight 1,8,32 --interval 5s
  rpclab compare --conn shared,per-worker,channel-per-worker,local-pool --clients cpp,python,node
  rpclab compare --server cpp --png docs/img`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("clients") {
				sf.clients = availableClients(sf.clientsDir)
			}
			if len(sf.clients) == 0 {
				return usage.Wrap(errors.New("--clients: no client given"))
			}
			spec, err := sf.spec(cmd.Flags())
			if err != nil {
				return err
			}
			return runLab(cmd, spec, &sf)
		},
	}
	// compare reads target, steps, outputs with the report, the child
	// server and netem: it runs the closed loop of every client in
	// --clients, so it has no --client and no open loop.
	f := cmd.Flags()
	d := sweepDefaults{
		inflight: []int{1, 8, 32},
		conns:    []string{"shared", "per-worker"},
		warmup:   2 * time.Second,
		interval: 3 * time.Second,
		out:      "rpclab-compare.jsonl",
	}
	sf.targetFlags.register(f)
	sf.stepFlags.register(f, d)
	sf.outputFlags.register(f, d.out)
	sf.registerReport(f, "rpclab-compare.html")
	sf.serverFlags.register(f)
	sf.netem.register(f)
	f.StringSliceVar(&sf.clients, "clients", nil, "clients to compare, in order (default: go and every language with a clients/<lang>/build.sh)")
	return cmd
}

// availableClients is go and every language of extclient.Languages whose
// clients/<lang>/build.sh exists.
func availableClients(clientsDir string) []string {
	out := []string{"go"}
	if clientsDir == "" {
		d, err := extclient.FindClientsDir()
		if err != nil {
			return out
		}
		clientsDir = d
	}
	for _, l := range extclient.Languages {
		if _, err := os.Stat(filepath.Join(clientsDir, l, "build.sh")); err == nil {
			out = append(out, l)
		}
	}
	return out
}
