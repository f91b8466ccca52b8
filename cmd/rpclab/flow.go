// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/internal/flow"
	"github.com/rpclab/rpclab/internal/lab"
	"github.com/rpclab/rpclab/internal/netem"
	"github.com/rpclab/rpclab/internal/report"
	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/usage"
)

func newFlowCmd() *cobra.Command {
	var (
		spec           flow.Spec
		payloads       []string
		rate, out, dir string
		window         int
		force          bool
	)
	cmd := &cobra.Command{
		Use:   "flow",
		Short: "The large-message study: HTTP/2 flow-control windows at emulated RTTs",
		Long: `Send unary requests of --payload bytes (empty replies) one after another on a
fresh connection, through rpclab's netem proxy at each --rtt, over each
--transport:

  grpc-dynamic  grpc-go defaults: 64 KiB initial windows grown by BDP estimation
  grpc-fixed    grpc-go with --window stream and connection windows on both
                sides, which turns BDP estimation off
  h2c           golang.org/x/net/http2 POST without TLS, default windows
  http1         net/http POST over HTTP/1.1

The table shows the time of each of the first 10 RPCs and the steady state
(median after the 10th), then the ratios of grpc-dynamic to the others.
Records (kind "flow", docs/flow.md) go to --out; charts of time per RPC
against RPC number, one per RTT and payload, to --charts. A cell stops
after --budget (then marked truncated): fixed windows on long RTTs are slow
by design. Client, server and proxy share this process.`,
		Example: `  rpclab flow --payload 1MB --rtt 64ms
  rpclab flow --payload 1KB,1MB,10MB,100MB --rtt 0,16ms,64ms,152ms --charts flow-charts -o flow.jsonl
  rpclab flow --transport grpc-dynamic,grpc-fixed --payload 4MB --rtt 32ms --rate 1gbit`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := parseFlow(&spec, payloads, rate, window); err != nil {
				return err
			}
			outs := []lab.Output{{Name: "--out", Path: out, Keep: true}, {Name: "--charts", Path: dir, Dir: true}}
			if err := lab.CheckOutputs(nil, force, outs...); err != nil {
				return labError(err)
			}
			return runFlow(cmd, &spec, out, dir)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&spec.Transports, "transport", flow.Transports, "transports: grpc-dynamic, grpc-fixed, h2c, http1")
	f.StringSliceVar(&payloads, "payload", []string{"1KB", "1MB", "10MB"}, "request payload sizes, 1KB .. 1GB (KB/MB decimal, KiB/MiB binary)")
	f.DurationSliceVar(&spec.RTTs, "rtt", []time.Duration{0, 16 * time.Millisecond, 64 * time.Millisecond, 152 * time.Millisecond}, "emulated round-trip times (each direction gets half)")
	f.StringVar(&rate, "rate", "", "emulated bandwidth per direction (e.g. 1gbit; default unlimited)")
	f.IntVar(&spec.RPCs, "rpcs", 20, "RPCs per cell, one after another on one connection")
	f.DurationVar(&spec.Budget, "budget", 10*time.Second, "time limit per cell (then truncated)")
	f.IntVar(&window, "window", 64<<10, "stream and connection window of grpc-fixed, bytes")
	f.StringVarP(&out, "out", "o", "", "write flow records (JSON Lines) to this file; an existing non-empty file is refused unless --force")
	f.BoolVar(&force, "force", false, "overwrite an existing --out file")
	f.StringVar(&dir, "charts", "", "write a PNG chart per RTT and payload to this directory")
	return cmd
}

// parseFlow maps the flags to spec and validates it.
func parseFlow(spec *flow.Spec, payloads []string, rate string, window int) error {
	spec.Payloads = nil
	for _, p := range payloads {
		n, err := result.ParseBytes(p)
		if err != nil {
			return usage.Wrap(fmt.Errorf("--payload: %w", err))
		}
		spec.Payloads = append(spec.Payloads, n)
	}
	if err := noDuplicates("--payload", payloads, func(p string) int64 { n, _ := result.ParseBytes(p); return n }); err != nil {
		return err
	}
	if err := noDuplicates("--transport", spec.Transports, func(t string) string { return t }); err != nil {
		return err
	}
	if err := noDuplicates("--rtt", spec.RTTs, func(d time.Duration) time.Duration { return d }); err != nil {
		return err
	}
	if rate != "" {
		r, err := netem.ParseRate(rate)
		if err != nil {
			return usage.Wrap(fmt.Errorf("--rate: %w", err))
		}
		spec.RateBps = r
	}
	if window < 0 || window > 1<<31-1 {
		return usage.Wrap(fmt.Errorf("--window: %d is outside 65535..2147483647", window))
	}
	spec.FixedWindow = int32(window)
	return spec.Validate()
}

// runFlow measures spec, writing records to out and charts to dir (both
// checked already), and prints the table.
func runFlow(cmd *cobra.Command, spec *flow.Spec, out, dir string) error {
	ctx := cmd.Context()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	var jsonl *os.File
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return usage.Wrap(fmt.Errorf("--out: %w", err))
		}
		defer f.Close()
		jsonl = f
	}
	var recs []result.FlowRecord
	sink := func(r *result.FlowRecord) error {
		recs = append(recs, *r)
		fmt.Fprintf(stderr, "  %-12s first %8.1f ms  steady %8.1f ms  (%d RPCs, %s)\n", r.Transport,
			float64(r.FirstNS)/1e6, float64(r.SteadyNS)/1e6, len(r.RPCNS), r.Status)
		if jsonl != nil {
			return result.NewWriter(jsonl).Write(r)
		}
		return nil
	}
	progress := func(e flow.Event) {
		if e.Kind == flow.CellStarted {
			fmt.Fprintf(stderr, "[%d/%d] RTT %v, %s, %s\n", e.I+1, e.N, e.Step.RTT, report.PayloadLabel(e.Step.Payload), e.Step.Transport)
		}
	}
	err := flow.Run(ctx, spec, sink, progress)
	if len(recs) > 0 {
		fmt.Fprintln(stdout)
		if terr := report.FlowTable(stdout, recs); terr != nil {
			return terr
		}
		if out != "" {
			fmt.Fprintf(stderr, "rpclab: %d records written to %s\n", len(recs), out)
		}
		if dir != "" {
			if _, cerr := report.WritePNGs(dir, &report.Results{Flow: recs}); cerr != nil {
				return fmt.Errorf("--charts: %w", cerr)
			}
			fmt.Fprintf(stderr, "rpclab: charts written to %s\n", dir)
		}
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("interrupted: %d cells measured and kept: %w", len(recs), ctx.Err())
	}
	var failed int
	for _, r := range recs {
		if r.Status == result.StatusFailed {
			failed++
		}
	}
	if err == nil && failed > 0 {
		err = fmt.Errorf("flow: %d of %d cells failed", failed, len(recs))
	}
	return err
}
