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

// OpenTable prints open-loop records: per layout and offered rate, the
// throughput reached, latency percentiles counted from the intended send
// time (µs), the schedule lag (how late sends left, µs), how often the
// --max-outstanding bound was hit, the peak in flight, and errors.
func OpenTable(w io.Writer, recs []result.Record) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "conn\trpc\tarrival\trate_rps\tthroughput_rps\tp50_us\tp90_us\tp99_us\tp999_us\tlag_p50_us\tlag_p99_us\tbound_hits\tpeak_inflight\terrors\tconns\tother_cpu_pct\tstatus\t")
	for i := range recs {
		r := &recs[i]
		lag50, lag99 := "-", "-"
		if r.ScheduleLag != nil {
			lag50, lag99 = us(r.ScheduleLag.P50NS), us(r.ScheduleLag.P99NS)
		}
		hits, peak := optInt(r.MaxOutstandingHits), optInt(r.PeakOutstanding)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t\n",
			verdict.ConnLabel(r), r.Spec.RPC, r.Spec.Arrival, r.Spec.RateRPS, r.ThroughputRPS,
			us(r.Latency.P50NS), us(r.Latency.P90NS), us(r.Latency.P99NS), us(r.Latency.P999NS),
			lag50, lag99, hits, peak, errorsText(r), r.ConnsObserved, otherPct(r), r.Status)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// optInt writes an optional count of an open-loop record, "-" when absent.
func optInt(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

// SLOText prints, per layout, the highest offered rate sustained within
// the objective slo ("p99=1ms") and the first rate that missed it.
func SLOText(w io.Writer, slo string, res []verdict.SLOResult) {
	fmt.Fprintf(w, "Highest rate sustained within %s (throughput >= 95%% of the rate, no errors, bound never hit):\n", slo)
	for _, r := range res {
		best := "none of the rates tried"
		if r.MaxRate > 0 {
			best = fmt.Sprintf("%g rps", r.MaxRate)
		}
		miss := "every rate tried met it"
		if r.Missed > 0 {
			miss = fmt.Sprintf("missed at %g rps: %s", r.Missed, r.MissedWhy)
		}
		fmt.Fprintf(w, "  %-22s %s (%s)\n", fmt.Sprintf("%s %s:", r.Conn, r.RPC), best, miss)
	}
}
