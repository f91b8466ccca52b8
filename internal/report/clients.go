// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// Figure kinds of the cross-client view: one chart per metric, one series
// per client and layout.
const (
	FigClientsThroughput = "clients-throughput"
	FigClientsLatency    = "clients-p99"
	FigClientsCPU        = "clients-cpu"
)

// clientKey is what records of different client languages share to be
// compared in one chart: target, RPC kind, payload and load model.
type clientKey struct {
	Target, RPC, LoadModel string
	Payload                int
}

// ClientGroups compares client languages: for every target, RPC kind,
// payload and load model that records of two languages or more share, one
// figure per metric (throughput, P99 latency, client CPU per RPC against
// in-flight) where every client's layout is a series. Series of one
// language share a colour; layouts differ by dash. Only ok records are
// charted; Rows keep every record of the group.
func ClientGroups(runs []Run) []Group {
	type acc struct {
		key   clientKey
		rows  []RunRow
		langs map[string]bool
	}
	var order []*acc
	byKey := map[clientKey]*acc{}
	for _, run := range runs {
		for _, row := range verdict.Rows(run.Records) {
			r := row.Rec
			k := clientKey{verdict.TargetLabel(r), r.Spec.RPC, r.Spec.LoadModel, r.Spec.PayloadBytes}
			a := byKey[k]
			if a == nil {
				a = &acc{key: k, langs: map[string]bool{}}
				byKey[k] = a
				order = append(order, a)
			}
			a.rows = append(a.rows, RunRow{Run: run.Name, Row: row})
			a.langs[r.Env.Language] = true
		}
	}
	var out []Group
	for _, a := range order {
		if len(a.langs) < 2 {
			continue
		}
		g := Group{
			Title: fmt.Sprintf("Clients compared: %s RPCs, %d B payload, %s loop, against %s", a.key.RPC, a.key.Payload, a.key.LoadModel, a.key.Target),
			Slug:  "clients-" + strings.Trim(slugRE.ReplaceAllString(strings.ToLower(fmt.Sprintf("%s-%dB-%s-%s", a.key.RPC, a.key.Payload, a.key.LoadModel, a.key.Target)), "-"), "-"),
			Rows:  a.rows,
		}
		g.Figures = clientFigures(a.rows, runs)
		out = append(out, g)
	}
	return out
}

// clientFigures draws a client group's figures; series are labelled by
// run when the report has several.
func clientFigures(rows []RunRow, runs []Run) []Figure {
	type series struct {
		run, lang, conn string
		rows            []*result.Record
	}
	var lines []*series
	byKey := map[[3]string]*series{}
	var langs, conns []string
	for _, rr := range rows {
		r := rr.Rec
		if r.Status != result.StatusOK {
			continue
		}
		k := [3]string{rr.Run, r.Env.Language, verdict.ConnLabel(r)}
		s := byKey[k]
		if s == nil {
			s = &series{run: k[0], lang: k[1], conn: k[2]}
			byKey[k] = s
			lines = append(lines, s)
			langs = appendNew(langs, k[1])
			conns = appendNew(conns, k[2])
		}
		s.rows = append(s.rows, r)
	}
	thr := Figure{Kind: FigClientsThroughput, Title: "Throughput vs in-flight, every client", XLabel: "RPCs in flight", YLabel: "throughput (req/s)"}
	lat := Figure{Kind: FigClientsLatency, Title: "P99 latency vs in-flight, every client", XLabel: "RPCs in flight", YLabel: "P99 latency (µs, log scale)", LogY: true}
	cpu := Figure{Kind: FigClientsCPU, Title: "Client CPU per RPC, every client", XLabel: "RPCs in flight", YLabel: "client CPU (µs per RPC)"}
	for _, s := range lines {
		sort.SliceStable(s.rows, func(i, j int) bool { return s.rows[i].Spec.Inflight < s.rows[j].Spec.Inflight })
		label := s.lang + " " + s.conn
		if len(runs) > 1 {
			label = s.run + ": " + label
		}
		st := Series{Label: label, Color: slices.Index(langs, s.lang), Dash: slices.Index(conns, s.conn), Shape: slices.Index(langs, s.lang)}
		t, l, c := st, st, st
		for _, r := range s.rows {
			x := float64(r.Spec.Inflight)
			t.Points = append(t.Points, Point{x, r.ThroughputRPS})
			if r.Latency.P99NS > 0 {
				l.Points = append(l.Points, Point{x, float64(r.Latency.P99NS) / 1e3})
			}
			if r.ClientCPUNSPerRPC > 0 {
				c.Points = append(c.Points, Point{x, r.ClientCPUNSPerRPC / 1e3})
			}
		}
		thr.Series = append(thr.Series, t)
		if len(l.Points) > 0 {
			lat.Series = append(lat.Series, l)
		}
		if len(c.Points) > 0 {
			cpu.Series = append(cpu.Series, c)
		}
	}
	return []Figure{thr, lat, cpu}
}

// appendNew appends s to list unless list has it.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// ClientTable writes one line per client, layout and RPC kind, with its
// throughput, P99 latency and client CPU per RPC at each in-flight count
// the records have: the cross-client summary of rpclab compare.
func ClientTable(w io.Writer, recs []result.Record) error {
	var counts []int
	seenN := map[int]bool{}
	type key struct{ lang, impl, conn, rpc string }
	var order []key
	cells := map[key]map[int]*result.Record{}
	for i := range recs {
		r := &recs[i]
		if r.Kind != "" && r.Kind != "ping" {
			continue
		}
		n := r.Spec.Inflight
		if !seenN[n] {
			seenN[n] = true
			counts = append(counts, n)
		}
		k := key{r.Env.Language, strings.TrimSpace(r.Env.GRPCImpl + " " + r.Env.GRPCVersion), verdict.ConnLabel(r), r.Spec.RPC}
		if cells[k] == nil {
			cells[k] = map[int]*result.Record{}
			order = append(order, k)
		}
		cells[k][n] = r
	}
	sort.Ints(counts)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "client\tgRPC\tconn\trpc\t"
	for _, what := range []string{"req/s", "P99 µs", "cpu µs/rpc"} {
		for _, n := range counts {
			head += fmt.Sprintf("%s @%d\t", what, n)
		}
	}
	fmt.Fprintln(tw, head)
	for _, k := range order {
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t", k.lang, k.impl, k.conn, k.rpc)
		for col := 0; col < 3; col++ {
			for _, n := range counts {
				r := cells[k][n]
				switch {
				case r == nil:
					line += "\t"
				case r.Status != result.StatusOK:
					line += r.Status + "\t"
				case col == 0:
					line += strconv.FormatFloat(r.ThroughputRPS, 'f', 0, 64) + "\t"
				case col == 1:
					line += us(r.Latency.P99NS) + "\t"
				default:
					line += strconv.FormatFloat(r.ClientCPUNSPerRPC/1e3, 'f', 1, 64) + "\t"
				}
			}
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}
