// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/rpclab/rpclab/internal/result"
)

type flowKey struct {
	rtt     int64
	payload int64
}

func ms(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 1, 64) }

// FlowTable writes one row per flow record: the time of each of the first
// ten RPCs and the steady state, in milliseconds; then, per RTT and
// payload, the ratio of gRPC with dynamic windows to fixed windows and to
// the HTTP transports.
func FlowTable(w io.Writer, recs []result.FlowRecord) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "RTT\tpayload\ttransport\t")
	for i := 1; i <= result.FlowFirstRPCs; i++ {
		fmt.Fprintf(tw, "#%d\t", i)
	}
	fmt.Fprintln(tw, "steady\tstatus\t")
	for i := range recs {
		r := &recs[i]
		fmt.Fprintf(tw, "%v\t%s\t%s\t", time.Duration(r.RTTNS), PayloadLabel(r.PayloadBytes), r.Transport)
		for j := 0; j < result.FlowFirstRPCs; j++ {
			if j < len(r.RPCNS) {
				fmt.Fprintf(tw, "%s\t", ms(r.RPCNS[j]))
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		steady := "-"
		if len(r.RPCNS) > 0 {
			steady = ms(r.SteadyNS)
		}
		status := r.Status
		if r.Status != result.StatusOK {
			status = fmt.Sprintf("%s (%d/%d RPCs)", r.Status, len(r.RPCNS), r.RPCsRequested)
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", steady, status)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintln(w, "\ntimes in ms per RPC (client send to reply) on one fresh connection; steady = median after the 10th RPC.")

	by := map[flowKey]map[string]*result.FlowRecord{}
	var keys []flowKey
	for i := range recs {
		r := &recs[i]
		k := flowKey{r.RTTNS, r.PayloadBytes}
		if by[k] == nil {
			by[k] = map[string]*result.FlowRecord{}
			keys = append(keys, k)
		}
		if len(r.RPCNS) > 0 {
			by[k][r.Transport] = r
		}
	}
	var lines []string
	for _, k := range keys {
		dyn := by[k][result.FlowGRPCDynamic]
		if dyn == nil {
			continue
		}
		line := fmt.Sprintf("RTT %v, %s: grpc-dynamic steady %s ms, first %s ms", time.Duration(k.rtt), PayloadLabel(k.payload), ms(dyn.SteadyNS), ms(dyn.FirstNS))
		for _, t := range []string{result.FlowGRPCFixed, result.FlowH2C, result.FlowHTTP1} {
			if o := by[k][t]; o != nil {
				line += fmt.Sprintf("; %s/%s %.2fx", result.FlowGRPCDynamic, t, float64(dyn.SteadyNS)/float64(o.SteadyNS))
			}
		}
		lines = append(lines, line)
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "\nsteady-state ratios (below 1: grpc-dynamic is faster):")
		for _, l := range lines {
			fmt.Fprintln(w, "  "+l)
		}
	}
	return nil
}

// PayloadLabel writes a byte count in the largest decimal unit that
// divides it, as the study's flags spell them ("1MB", "100MB", "64KiB").
func PayloadLabel(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// FlowSection shows flow records (rpclab flow): FlowTable, and one chart
// per RTT and payload.
type FlowSection struct {
	Records []result.FlowRecord
}

// Kind is result.KindFlow.
func (FlowSection) Kind() string { return result.KindFlow }

// Table writes FlowTable.
func (s FlowSection) Table(w io.Writer) error { return FlowTable(w, s.Records) }

func (s FlowSection) html() (template.HTML, error) {
	return kindHTML(s, fmt.Sprintf("Large messages and flow-control windows (rpclab flow): %d records", len(s.Records)),
		"One row per cell: transport, payload and emulated RTT (docs/flow.md).")
}

// Charts returns one chart per RTT and payload, named
// "flow-rtt<RTT>-<payload>": the time of each RPC against its index, one
// line per transport (log Y).
func (s FlowSection) Charts() []Chart {
	recs := s.Records
	var keys []flowKey
	figs := map[flowKey]*Figure{}
	for i := range recs {
		r := &recs[i]
		if len(r.RPCNS) == 0 {
			continue
		}
		k := flowKey{r.RTTNS, r.PayloadBytes}
		f := figs[k]
		if f == nil {
			f = &Figure{
				Kind:   "flow",
				Title:  fmt.Sprintf("%s unary request at %v RTT: time of each RPC on a fresh connection", PayloadLabel(k.payload), time.Duration(k.rtt)),
				XLabel: "RPC number",
				YLabel: "time per RPC (ms)",
				LogY:   true,
			}
			figs[k] = f
			keys = append(keys, k)
		}
		s := Series{Label: r.Transport, Color: slices.Index(result.FlowTransports, r.Transport), Shape: len(f.Series)}
		if s.Color < 0 {
			s.Color = len(f.Series)
		}
		for j, d := range r.RPCNS {
			s.Points = append(s.Points, Point{X: float64(j + 1), Y: float64(d) / 1e6})
		}
		f.Series = append(f.Series, s)
	}
	out := make([]Chart, 0, len(keys))
	for _, k := range keys {
		name := fmt.Sprintf("flow-rtt%v-%s", time.Duration(k.rtt), PayloadLabel(k.payload))
		out = append(out, Chart{Name: name, Figure: *figs[k]})
	}
	return out
}
