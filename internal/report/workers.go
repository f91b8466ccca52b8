// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// WorkerTable writes the per-worker breakdown of steps run on several
// client hosts (rpclab sweep --workers): one line per worker per step,
// with its share, throughput, P99, CPU busy share (flagged "limit" above
// the generator's limit) and connections. Records without workers are
// skipped.
func WorkerTable(w io.Writer, recs []result.Record) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\tconn\trpc\tworker\timpl\tinflight\tthroughput (req/s)\tP99 (µs)\tcpu busy %\tconns\tstatus\t")
	for i, r := range recs {
		for _, ws := range r.Workers {
			conns := strconv.Itoa(ws.ConnsObserved)
			if ws.ConnsObserved < 0 {
				conns = "?"
			}
			busy := strconv.FormatFloat(100*ws.CPUBusy, 'f', 0, 64)
			if ws.GeneratorLimited {
				busy += " limit"
			}
			st := ws.Status
			if ws.Error != "" {
				st += ": " + ws.Error
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%.0f\t%.1f\t%s\t%s\t%s\t\n", i+1, verdict.ConnLabel(&r), r.Spec.RPC,
				ws.Addr, ws.Impl, ws.Inflight, ws.ThroughputRPS, float64(ws.Latency.P99NS)/1e3, busy, conns, st)
		}
	}
	return tw.Flush()
}
