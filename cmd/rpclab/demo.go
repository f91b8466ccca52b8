// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpclab/rpclab/internal/lab"
)

// The limit scene: a child server that allows one stream per connection
// and thinks 2 ms per reply, so one connection carries at most ~500 RPCs
// a second whatever the client's CPU, and a pool of N carries N times that.
var (
	limitServerFlags = []string{"--delay", "2ms", "--max-concurrent-streams", "1"}
	limitInflight    = []int{1, 4, 8}
	limitConns       = []string{"shared", "pool:2", "pool:4", "pool:8"}
	limitWarmup      = 300 * time.Millisecond
	limitInterval    = time.Second
)

// limitSceneFlags are the demo's flags the limit scene follows (its own
// outputs derived from --out, --csv and the report; its steps' warm-up and
// interval capped by the user's). Any other flag given (--target, --rps,
// --client, --delay, ...) changes what the first scene measures in a way the
// second cannot follow, and the demo leaves the second out.
var limitSceneFlags = []string{"inflight", "min-inflight", "max-inflight", "step", "conn", "rpc", "warmup",
	"interval", "out", "force", "csv", "no-pin", "dial-timeout", "clients-dir", "limit-scene"}

func newDemoCmd() *cobra.Command {
	var sf sweepFlags
	var limitScene bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "A one-minute sweep against rpclab's own server, with a verdict",
		Long: `Start rpclab's server as a child process, sweep unary in-flight 1..32 on one
shared connection and on a connection per worker (1 s warm-up, 3 s measured
per step), print the table, write rpclab-results.jsonl and rpclab-report.html,
and end with a verdict on whether the client's connection is the bottleneck.
On a machine of few cores the client's CPU is often the limit there.

Then a second scene (about 20 s; --limit-scene=false leaves it out): a child
server that allows one stream per connection and thinks 2 ms per reply (rpclab
serve --delay 2ms --max-concurrent-streams 1), as a server or proxy that allows
few streams per connection does. One connection then caps throughput at about
500 RPCs a second; shared and pools of 2, 4 and 8 at in-flight 1, 4 and 8 show it,
the verdict says so and names the pool to use, and the pool lifts it. Its
records and report go beside the first scene's, named with "-limit"
(rpclab-results-limit.jsonl, rpclab-report-limit.html).

An earlier records file is kept: the demo refuses to start (exit 2) until it is
moved, or --force (or another -o) is given. Every sweep flag works here too;
flags other than the steps' and the outputs' apply to the first scene only and
leave the second out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := sf.spec(cmd.Flags())
			if err != nil {
				return err
			}
			sf.report = "rpclab-report.html"
			limit, why := limitFlags(cmd.Flags(), &sf, limitScene)
			if limit != nil {
				// Every output of both scenes is checked before anything runs.
				outs := append(sf.outputs(), limit.outputs()...)
				if err := lab.CheckOutputs(sf.open.inputs(), sf.force, outs...); err != nil {
					return labError(err)
				}
			}
			if err := runLab(cmd, spec, &sf); err != nil {
				return err
			}
			if limit == nil {
				if why != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "rpclab: the limit scene is left out: %s\n", why)
				}
				return nil
			}
			return runLimitScene(cmd, limit)
		},
	}
	sf.register(cmd.Flags(), sweepDefaults{
		inflight: []int{1, 2, 4, 8, 16, 32},
		conns:    []string{"shared", "per-worker"},
		warmup:   time.Second,
		interval: 3 * time.Second,
		out:      "rpclab-results.jsonl",
	})
	cmd.Flags().BoolVar(&limitScene, "limit-scene", true, "after the sweep, run the second scene: a server that allows one stream per connection, where one connection is the limit and a pool lifts it")
	return cmd
}

// limitFlags are the limit scene's flags, derived from the demo's; nil
// with the reason when the scene is left out ("" when it was asked to be).
func limitFlags(fs *pflag.FlagSet, sf *sweepFlags, enabled bool) (*sweepFlags, string) {
	if !enabled {
		return nil, ""
	}
	var other string
	fs.Visit(func(f *pflag.Flag) {
		if other == "" && !slices.Contains(limitSceneFlags, f.Name) {
			other = "--" + f.Name
		}
	})
	if other != "" {
		return nil, other + " applies to the first scene only"
	}
	l := *sf
	l.inflight, l.minInflight, l.maxInflight, l.step = limitInflight, 0, 0, 1
	l.conns, l.rpcs = limitConns, []string{"unary"}
	l.warmup, l.interval = min(sf.warmup, limitWarmup), min(sf.interval, limitInterval)
	l.serverOptions = append(slices.Clone(sf.serverOptions), limitServerFlags...)
	l.out, l.csv, l.report, l.png = withSuffix(sf.out), withSuffix(sf.csv), withSuffix(sf.report), ""
	return &l, ""
}

// withSuffix names the limit scene's file beside the first scene's:
// "rpclab-results.jsonl" gives "rpclab-results-limit.jsonl".
func withSuffix(path string) string {
	if path == "" {
		return ""
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-limit" + ext
}

// runLimitScene says what the second scene is, then runs it as a sweep of
// its own (its own child server, table, verdict and files).
func runLimitScene(cmd *cobra.Command, l *sweepFlags) error {
	spec, err := l.spec(pflag.NewFlagSet("limit-scene", pflag.ContinueOnError))
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "\nScene 2: a server or proxy that allows few streams per connection (rpclab serve %s):\n"+
		"one connection carries at most about 500 RPCs a second whatever the client's CPU; a pool of N carries N times that.\n",
		strings.Join(limitServerFlags, " "))
	return runLab(cmd, spec, l)
}
