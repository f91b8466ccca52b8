// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package report is the only package that formats results for people and
// tools: the step table, CSV, the text of package verdict's judgements, and
// a self-contained HTML report whose charts (throughput beside the ideal
// line, latency percentiles, efficiency, client CPU per RPC) gonum/plot
// draws as inline SVG, or as PNG files. It reads result.Records, whichever
// language wrote them, and overlays several runs in one report. It judges
// nothing itself: package verdict does.
package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/verdict"
)

func us(ns int64) string { return strconv.FormatFloat(float64(ns)/1e3, 'f', 1, 64) }

func errorsText(r *result.Record) string {
	if len(r.Errors) == 0 {
		return "0"
	}
	names := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s=%d", k, r.Errors[k])
	}
	return strings.Join(parts, ",")
}

// Table writes the step table: one line per record.
func Table(w io.Writer, recs []result.Record) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "client\tconn\trpc\tinflight\tthroughput (req/s)\tideal (req/s)\tefficiency %\tP50 (µs)\tP90\tP99\tP99.9\tP100\terrors\tconns\tcpu µs/rpc\tstatus\t")
	for _, row := range verdict.Rows(recs) {
		r := row.Rec
		ideal, eff := "-", "-"
		if row.IdealRPS > 0 {
			ideal = strconv.FormatFloat(row.IdealRPS, 'f', 0, 64)
		}
		if row.IdealRPS > 0 && r.Requests > 0 { // a step that never ran has no efficiency
			eff = strconv.FormatFloat(100*row.Efficiency, 'f', 0, 64)
		}
		conns := strconv.Itoa(r.ConnsObserved)
		if r.ConnsObserved < 0 {
			conns = "?"
		}
		st := r.Status
		if r.Error != "" && r.Status != result.StatusOK {
			st = r.Status + ": " + r.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t\n",
			r.Env.Language, verdict.ConnLabel(r), r.Spec.RPC, r.Spec.Inflight, r.ThroughputRPS, ideal, eff,
			us(r.Latency.P50NS), us(r.Latency.P90NS), us(r.Latency.P99NS), us(r.Latency.P999NS), us(r.Latency.P100NS),
			errorsText(r), conns, r.ClientCPUNSPerRPC/1e3, st)
	}
	return tw.Flush()
}
