// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/verdict"
)

// Figure kinds, in the order a group shows them.
const (
	// FigThroughput: throughput against in-flight, one line per layout,
	// plus the ideal line (throughput at in-flight 1 times in-flight).
	FigThroughput = "throughput"
	// FigLatency: P50, P99 and P99.9 latency against in-flight per layout.
	FigLatency = "latency"
	// FigEfficiency: throughput over the ideal line against in-flight.
	FigEfficiency = "efficiency"
	// FigCPU: client CPU time per RPC against in-flight.
	FigCPU = "cpu"
	// FigLag: an open-loop group's schedule lag (how late sends left), P50
	// and P99, against the offered rate.
	FigLag = "lag"
)

// FigureKinds lists the figures every closed-loop group gets.
var FigureKinds = []string{FigThroughput, FigLatency, FigEfficiency, FigCPU}

// OpenFigureKinds lists the figures of an open-loop group: the same against
// the offered rate instead of in-flight, with the schedule lag in place of
// efficiency (an open loop has no ideal line of its own: throughput should
// equal the offered rate).
var OpenFigureKinds = []string{FigThroughput, FigLatency, FigLag, FigCPU}

// xOf is where r sits on a figure's X axis: its offered rate in an open
// loop, its in-flight count in a closed one.
func xOf(r *result.Record) float64 {
	if verdict.IsOpen(r) {
		return r.Spec.RateRPS
	}
	return float64(r.Spec.Inflight)
}

// groupKey is what records share to be charted together: the issue's
// "same target, rpc, payload, client language" (and load model).
type groupKey struct {
	Language, Target, RPC, LoadModel string
	Payload                          int
}

func keyOf(r *result.Record) groupKey {
	return groupKey{r.Env.Language, verdict.TargetLabel(r), r.Spec.RPC, r.Spec.LoadModel, r.Spec.PayloadBytes}
}

// Group is the records of every run that share client language, target, RPC
// kind, payload and load model.
type Group struct {
	Title string
	// Open: the group's records are open-loop steps, charted against the
	// offered rate.
	Open bool
	// Slug names the group in file names and HTML ids.
	Slug    string
	Figures []Figure
	// Rows are the group's records, run by run, with their derived ideal
	// and efficiency.
	Rows []RunRow
}

// RunRow is a Row with the name of the run it comes from.
type RunRow struct {
	Run string
	verdict.Row
}

// Figure is one chart's data: what the SVG and PNG draw, and what the HTML
// lists under each chart.
type Figure struct {
	Kind   string
	Title  string
	XLabel string
	YLabel string
	// LogY draws the Y axis on a log scale (latency).
	LogY   bool
	Series []Series
}

// Series is one line of a figure.
type Series struct {
	Label string
	// Style indexes: Color picks the line's color, Dash its dash pattern
	// (0 solid), Shape the point glyph. Ideal lines have Color -1 (grey).
	Color, Dash, Shape int
	Points             []Point
}

// Point is one measured step of a series: X is the in-flight count (the
// offered rate in an open-loop group).
type Point struct {
	X, Y float64
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// Groups sorts the records of runs into groups and derives their figures.
// Groups keep the order in which they first appear; inside a figure series
// are ordered run by run, layout by layout as first seen. Only records with
// status ok are charted; the rows keep every record.
func Groups(runs []Run) []Group {
	type acc struct {
		key  groupKey
		rows []RunRow
	}
	var order []*acc
	byKey := map[groupKey]*acc{}
	for _, run := range runs {
		for _, row := range verdict.Rows(run.Records) {
			k := keyOf(row.Rec)
			a := byKey[k]
			if a == nil {
				a = &acc{key: k}
				byKey[k] = a
				order = append(order, a)
			}
			a.rows = append(a.rows, RunRow{Run: run.Name, Row: row})
		}
	}
	multi := len(runs) > 1
	out := make([]Group, 0, len(order))
	slugs := map[string]int{}
	for _, a := range order {
		g := Group{Title: groupTitle(a.key), Rows: a.rows, Open: a.key.LoadModel == "open"}
		g.Slug = strings.Trim(slugRE.ReplaceAllString(strings.ToLower(fmt.Sprintf("%s-%s-%dB-%s-%s", a.key.Language, a.key.RPC, a.key.Payload, a.key.LoadModel, a.key.Target)), "-"), "-")
		if n := slugs[g.Slug]; n > 0 {
			g.Slug = fmt.Sprintf("%s-%d", g.Slug, n+1)
		}
		slugs[g.Slug]++
		g.Figures = figures(a.rows, runs, multi, g.Open)
		out = append(out, g)
	}
	return out
}

func groupTitle(k groupKey) string {
	return fmt.Sprintf("%s client, %s RPCs, %d B payload, %s loop, against %s", k.Language, k.RPC, k.Payload, k.LoadModel, k.Target)
}

// line is one (run, layout) series of ok rows, X ascending.
type line struct {
	run, conn string
	runIdx    int
	rows      []verdict.Row
}

func figures(rows []RunRow, runs []Run, multi, open bool) []Figure {
	runIdx := map[string]int{}
	for i, r := range runs {
		runIdx[r.Name] = i
	}
	var lines []*line
	byKey := map[[2]string]*line{}
	for _, rr := range rows {
		if rr.Rec.Status != result.StatusOK {
			continue
		}
		k := [2]string{rr.Run, verdict.ConnLabel(rr.Rec)}
		if open && rr.Rec.Spec.Arrival != "" && rr.Rec.Spec.Arrival != "constant" {
			k[1] += " " + rr.Rec.Spec.Arrival
		}
		l := byKey[k]
		if l == nil {
			l = &line{run: rr.Run, conn: k[1], runIdx: runIdx[rr.Run]}
			byKey[k] = l
			lines = append(lines, l)
		}
		l.rows = append(l.rows, rr.Row)
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].runIdx < lines[j].runIdx })
	for _, l := range lines {
		sort.SliceStable(l.rows, func(i, j int) bool { return xOf(l.rows[i].Rec) < xOf(l.rows[j].Rec) })
	}
	label := func(l *line) string {
		if multi {
			return l.run + ": " + l.conn
		}
		return l.conn
	}

	thr := Figure{Kind: FigThroughput, Title: "Throughput vs in-flight", XLabel: "RPCs in flight", YLabel: "throughput (req/s)"}
	lat := Figure{Kind: FigLatency, Title: "Latency vs in-flight (P50 solid, P99 dashed, P99.9 dotted)", XLabel: "RPCs in flight", YLabel: "latency (µs, log scale)", LogY: true}
	eff := Figure{Kind: FigEfficiency, Title: "Efficiency: throughput / ideal line", XLabel: "RPCs in flight", YLabel: "efficiency (%)"}
	cpu := Figure{Kind: FigCPU, Title: "Client CPU per RPC", XLabel: "RPCs in flight", YLabel: "client CPU (µs per RPC)"}
	if open {
		const x = "offered rate (req/s)"
		thr.Title, thr.XLabel = "Throughput vs offered rate", x
		lat.Title, lat.XLabel = "Latency from the intended send vs offered rate (P50 solid, P99 dashed, P99.9 dotted)", x
		eff = Figure{Kind: FigLag, Title: "Schedule lag: how late sends left (P50 solid, P99 dashed)", XLabel: x, YLabel: "lag (µs, log scale)", LogY: true}
		cpu.XLabel = x
	}
	for i, l := range lines {
		st := Series{Label: label(l), Color: i, Shape: l.runIdx}
		t, e, c := st, st, st
		p50, p99, p999 := st, st, st
		p50.Label += " P50"
		p99.Label, p99.Dash = p99.Label+" P99", 1
		p999.Label, p999.Dash = p999.Label+" P99.9", 2
		lag50, lag99 := st, st
		lag50.Label += " lag P50"
		lag99.Label, lag99.Dash = lag99.Label+" lag P99", 1
		for _, row := range l.rows {
			r := row.Rec
			x := xOf(r)
			t.Points = append(t.Points, Point{x, r.ThroughputRPS})
			if row.IdealRPS > 0 {
				e.Points = append(e.Points, Point{x, 100 * row.Efficiency})
			}
			// Only positive values: the axis is logarithmic.
			if lag := r.ScheduleLag; open && lag != nil {
				if lag.P50NS > 0 {
					lag50.Points = append(lag50.Points, Point{x, float64(lag.P50NS) / 1e3})
				}
				if lag.P99NS > 0 {
					lag99.Points = append(lag99.Points, Point{x, float64(lag.P99NS) / 1e3})
				}
			}
			if r.ClientCPUNSPerRPC > 0 {
				c.Points = append(c.Points, Point{x, r.ClientCPUNSPerRPC / 1e3})
			}
			for _, q := range []struct {
				s  *Series
				ns int64
			}{{&p50, r.Latency.P50NS}, {&p99, r.Latency.P99NS}, {&p999, r.Latency.P999NS}} {
				if q.ns > 0 {
					q.s.Points = append(q.s.Points, Point{x, float64(q.ns) / 1e3})
				}
			}
		}
		thr.Series = append(thr.Series, t)
		lat.Series = append(lat.Series, p50, p99, p999)
		switch {
		case open:
			for _, ls := range []Series{lag50, lag99} {
				if len(ls.Points) > 0 {
					eff.Series = append(eff.Series, ls)
				}
			}
		case len(e.Points) > 0:
			eff.Series = append(eff.Series, e)
		}
		if len(c.Points) > 0 {
			cpu.Series = append(cpu.Series, c)
		}
	}
	if open {
		thr.Series = append(thr.Series, offeredLine(lines))
	} else {
		thr.Series = append(thr.Series, idealLines(lines, multi)...)
	}
	return []Figure{thr, lat, eff, cpu}
}

// offeredLine is an open loop's ideal: throughput equal to the offered rate,
// over every rate any line tried.
func offeredLine(lines []*line) Series {
	seen := map[float64]bool{}
	var xs []float64
	for _, l := range lines {
		for _, r := range l.rows {
			if x := xOf(r.Rec); !seen[x] {
				seen[x] = true
				xs = append(xs, x)
			}
		}
	}
	sort.Float64s(xs)
	s := Series{Label: "offered rate", Color: -1, Dash: 1, Shape: -1}
	for _, x := range xs {
		s.Points = append(s.Points, Point{x, x})
	}
	return s
}

// idealLines draws, per run, the ideal line: the in-flight-1 throughput of
// the run's shared layout (else of its first layout with an in-flight-1
// step) times in-flight, over the run's in-flight counts.
func idealLines(lines []*line, multi bool) []Series {
	var out []Series
	done := map[string]bool{}
	for _, l := range lines {
		if done[l.run] {
			continue
		}
		var base *verdict.Row
		var xs []float64
		seen := map[int]bool{}
		for _, m := range lines {
			if m.run != l.run {
				continue
			}
			for i := range m.rows {
				r := &m.rows[i]
				n := r.Rec.Spec.Inflight
				if !seen[n] {
					seen[n] = true
					xs = append(xs, float64(n))
				}
				if n == 1 && r.Rec.ThroughputRPS > 0 && (base == nil || (m.conn == "shared" && verdict.ConnLabel(base.Rec) != "shared")) {
					base = r
				}
			}
		}
		done[l.run] = true
		if base == nil {
			continue
		}
		sort.Float64s(xs)
		s := Series{Label: "ideal (" + verdict.ConnLabel(base.Rec) + " at 1 × in-flight)", Color: -1, Dash: 1, Shape: -1}
		if multi {
			s.Label = l.run + ": " + s.Label
		}
		for _, x := range xs {
			s.Points = append(s.Points, Point{x, base.Rec.ThroughputRPS * x})
		}
		out = append(out, s)
	}
	return out
}
