// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Package report is the only package that formats results for people and
// tools: the step table, CSV, the verdict on whether the client is the
// bottleneck, and a self-contained HTML report whose charts (throughput
// beside the ideal line, latency percentiles, efficiency, client CPU per RPC)
// gonum/plot draws as inline SVG, or as PNG files. It reads result.Records,
// whichever language wrote them, and overlays several runs in one report.
package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rpclab/rpclab/result"
)

// ConnLabel names a record's connection layout as --conn spells it
// ("shared", "per-worker", "pool:4", "pool:4:least-loaded").
func ConnLabel(r *result.Record) string {
	if r.Spec.ConnMode != "pool" {
		return r.Spec.ConnMode
	}
	if r.Spec.Pick == "" || r.Spec.Pick == "round-robin" {
		return fmt.Sprintf("pool:%d", r.Spec.ConnsRequested)
	}
	return fmt.Sprintf("pool:%d:%s", r.Spec.ConnsRequested, r.Spec.Pick)
}

// seriesKey groups records that form one in-flight series: same client, target,
// layout, RPC kind and payload.
func seriesKey(r *result.Record) string {
	return strings.Join([]string{r.Env.Language, r.Spec.Target, ConnLabel(r), r.Spec.RPC,
		strconv.Itoa(r.Spec.PayloadBytes), r.Spec.LoadModel}, "|")
}

// Row is one record with the figures derived from its series.
type Row struct {
	Rec *result.Record
	// IdealRPS is the series' throughput at in-flight 1 times this record's
	// in-flight count (YDB's "theoretical" line); 0 when the series has no
	// successful step at in-flight 1, and for open-loop steps.
	IdealRPS float64
	// Efficiency is ThroughputRPS / IdealRPS (0 when IdealRPS is 0).
	Efficiency float64
}

// Rows derives the ideal line and efficiency for every record, keeping the
// records' order.
func Rows(recs []result.Record) []Row {
	base := map[string]float64{}
	for i := range recs {
		r := &recs[i]
		if r.Spec.Inflight == 1 && r.Status == result.StatusOK && !isOpen(r) {
			base[seriesKey(r)] = r.ThroughputRPS
		}
	}
	rows := make([]Row, len(recs))
	for i := range recs {
		r := &recs[i]
		row := Row{Rec: r}
		if b := base[seriesKey(r)]; b > 0 {
			row.IdealRPS = b * float64(r.Spec.Inflight)
			row.Efficiency = r.ThroughputRPS / row.IdealRPS
		}
		rows[i] = row
	}
	return rows
}

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
	for _, row := range Rows(recs) {
		r := row.Rec
		ideal, eff := "-", "-"
		if row.IdealRPS > 0 {
			ideal = strconv.FormatFloat(row.IdealRPS, 'f', 0, 64)
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
			r.Env.Language, ConnLabel(r), r.Spec.RPC, r.Spec.Inflight, r.ThroughputRPS, ideal, eff,
			us(r.Latency.P50NS), us(r.Latency.P90NS), us(r.Latency.P99NS), us(r.Latency.P999NS), us(r.Latency.P100NS),
			errorsText(r), conns, r.ClientCPUNSPerRPC/1e3, st)
	}
	return tw.Flush()
}
