// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package report is the only package that formats results for people and
// tools: the step table, CSV, the text of package verdict's judgements, and
// a self-contained HTML report whose charts gonum/plot draws as inline SVG,
// or as PNG files. It reads records, whichever language wrote them, and
// overlays several runs in one report. It judges nothing itself: package
// verdict does.
//
// A report has one shape for every record kind: Load reads results files
// into Results; Results.Sections gives one Section per kind present (ping,
// bulk, flow), each with its text table and its charts; HTML writes the
// page of every section and WritePNGs every chart. The ping section charts
// each group of records (throughput beside the ideal line, latency
// percentiles, efficiency or, in an open loop, schedule lag, client CPU
// per RPC) and shows each run's verdict.
package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
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

// Table writes the step table: one line per record. Its "other cpu %"
// column is the share of the step's CPUs that other work took
// (verdict.OtherShare: the most of any set of them; "-" when the record
// does not carry the host's CPU).
func Table(w io.Writer, recs []result.Record) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "client\tconn\trpc\tinflight\tthroughput (req/s)\tideal (req/s)\tefficiency %\tP50 (µs)\tP90\tP99\tP99.9\tP100\terrors\tconns\tcpu µs/rpc\tother cpu %\tstatus\t")
	for _, row := range verdict.Rows(recs) {
		r := row.Rec
		ideal, eff := "-", "-"
		if row.IdealRPS > 0 {
			ideal = strconv.FormatFloat(row.IdealRPS, 'f', 0, 64)
		}
		if row.IdealRPS > 0 && (r.Requests > 0 || r.ThroughputRPS > 0) { // a step that never ran has no efficiency (an imported table has a throughput but no counts)
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t\n",
			r.Env.Language, verdict.ConnLabel(r), r.Spec.RPC, r.Spec.Inflight, r.ThroughputRPS, ideal, eff,
			us(r.Latency.P50NS), us(r.Latency.P90NS), us(r.Latency.P99NS), us(r.Latency.P999NS), us(r.Latency.P100NS),
			errorsText(r), conns, r.ClientCPUNSPerRPC/1e3, otherPct(r), st)
	}
	return tw.Flush()
}

// otherPct is the share of r's CPUs other work took, in percent
// (verdict.OtherShare), "-" when r does not carry the host's CPU.
func otherPct(r *result.Record) string {
	share, ok := verdict.OtherShare(r)
	if !ok {
		return "-"
	}
	return strconv.FormatFloat(100*share, 'f', 0, 64)
}
