// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rpclab/rpclab/bulk"
	"github.com/rpclab/rpclab/lab"
	"github.com/rpclab/rpclab/result"
)

// bulkOutputs are rpclab bulk's outputs.
type bulkOutputs struct {
	out, charts string
	force       bool
}

// runBulk runs the bulk study in a lab.Session (RunBulk): the outputs are
// checked first, then the child server (without --target) is started, and
// a netem proxy in front of each listener (with --delay and the like).
func runBulk(cmd *cobra.Command, spec *bulk.Spec, bo *bulkOutputs, nf *netemFlags, noPin bool) (recs []result.BulkRecord, err error) {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	d := newDrawer(stderr, false)
	opts := []lab.Option{lab.WithPin(!noPin), lab.WithForce(bo.force), lab.WithProgress(d.event), lab.WithOutputs(
		lab.Output{Name: "--out", Path: bo.out, Keep: true, Open: true},
		lab.Output{Name: "--charts", Path: bo.charts, Dir: true},
	)}
	network, withNetem, err := nf.network(cmd.Flags())
	if err != nil {
		return nil, err
	}
	if withNetem {
		opts = append(opts, lab.WithNetem(network, nf.queue, false))
	}
	if spec.Target != "" {
		opts = append(opts, lab.WithTarget(spec.Target))
	} else {
		srv, err := childServer(cmd, "go", "", nil)
		if err != nil {
			return nil, err
		}
		opts = append(opts, lab.WithServer(srv))
	}
	s, err := lab.New(opts...)
	if err != nil {
		return nil, labError(err)
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	if err := s.Start(ctx); err != nil {
		return nil, err
	}
	return s.RunBulk(ctx, spec, bulk.Options{Progress: bulkProgress(cmd)})
}

// bulkProgress prints a line per bulk step.
func bulkProgress(cmd *cobra.Command) bulk.Progress {
	stderr := cmd.ErrOrStderr()
	var started time.Time
	return func(e bulk.Event) {
		if e.Kind == bulk.StepStarted {
			started = time.Now()
			return
		}
		s, r := e.Step, e.Record
		line := fmt.Sprintf("[%d/%d] %-11s size=%-7s chunk=%-6s streams=%d", e.I+1, e.N, s.Transport,
			result.FormatBytes(s.Size), result.FormatBytes(int64(s.Chunk)), s.Streams)
		if r.Status == result.StatusOK {
			line += fmt.Sprintf("  %8.0f MB/s", r.ThroughputBytesPerS/1e6)
		} else {
			line += " " + statusText(r.Status, r.Error)
		}
		fmt.Fprintf(stderr, "%s  (%.1fs)\n", line, time.Since(started).Seconds())
	}
}
