// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"time"

	"github.com/spf13/cobra"
)

func newDemoCmd() *cobra.Command {
	var sf sweepFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "A one-minute sweep against rpclab's own server, with a verdict",
		Long: `Start rpclab's server as a child process, sweep unary in-flight 1..32 on one
shared connection and on a connection per worker (1 s warm-up, 3 s measured
per step: about a minute), print the table, write rpclab-results.jsonl and
rpclab-report.html, and end with a verdict on whether the client's connection
is the bottleneck. An earlier rpclab-results.jsonl is kept: the demo refuses
to start (exit 2) until it is moved, or --force (or another -o) is given.

Every sweep flag works here too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := sf.spec(cmd.Flags())
			if err != nil {
				return err
			}
			sf.report = "rpclab-report.html"
			return runLab(cmd, spec, &sf)
		},
	}
	sf.register(cmd.Flags(), sweepDefaults{
		inflight: []int{1, 2, 4, 8, 16, 32},
		conns:    []string{"shared", "per-worker"},
		warmup:   time.Second,
		interval: 3 * time.Second,
		out:      "rpclab-results.jsonl",
	})
	return cmd
}
