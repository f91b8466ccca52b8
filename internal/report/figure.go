// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/stats"
	"github.com/rpclab/rpclab/internal/verdict"
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
	// FigSpeedup: throughput over the same run's throughput at in-flight 1
	// (its ideal line's base) against in-flight, with the ideal y = x. Only
	// groups that overlay imported records on local ones get it: it
	// compares the curves' shapes when their scales differ.
	FigSpeedup = "speedup"
	// FigLag: an open-loop group's schedule lag (how late sends left), P50
	// and P99, against the offered rate.
	FigLag = "lag"
)

// FigureKinds lists the figures every closed-loop group gets.
var FigureKinds = []string{FigThroughput, FigLatency, FigEfficiency, FigCPU}

// OverlayFigureKinds lists the figures of a closed-loop group with imported
// records overlaid on local ones: FigureKinds with the speed-up chart after
// throughput.
var OverlayFigureKinds = []string{FigThroughput, FigSpeedup, FigLatency, FigEfficiency, FigCPU}

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
	// Call is the method called instead of the ping ("" for the ping):
	// records of different methods are charted and judged apart.
	Call string
}

func keyOf(r *result.Record) groupKey {
	return groupKey{r.Env.Language, verdict.TargetLabel(r), r.Spec.RPC, r.Spec.LoadModel, r.Spec.PayloadBytes, r.Spec.Call}
}

// overlayKey is what an imported record shares with the local records it
// is charted over: all of groupKey but the target. An imported record's
// target is where another party measured (a post, a ghz run elsewhere), so
// it never equals a local target; its client, RPC kind, payload and load
// model still say which local charts it compares with.
type overlayKey struct {
	Language, RPC, LoadModel string
	Payload                  int
}

func (k groupKey) overlay() overlayKey {
	return overlayKey{k.Language, k.RPC, k.LoadModel, k.Payload}
}

// isImported says whether r came from rpclab import (it carries source).
func isImported(r *result.Record) bool { return r.Source != "" }

// Group is the records of every run that share client language, target, RPC
// kind, payload and load model, and the imported records overlaid on them.
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
	// Imported lists the imported runs overlaid on the group's local runs
	// (empty when the group has no local run, or nothing imported).
	Imported []Imported
}

// Imported is an imported run in a group of local runs, with where its
// numbers come from.
type Imported struct {
	Run, Target, Source string
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

// groupAcc is one group's rows as group collects them.
type groupAcc struct {
	key  groupKey
	rows []RunRow
}

// group sorts the rows of runs into groups, in order of first appearance.
// A local record goes to the group of its groupKey. An imported record
// (isImported) goes to every group of local records with its overlayKey,
// so that a published curve overlays the local runs it compares with; with
// no such local group it gets its own group by its groupKey, as a local
// record does.
func group(runs []Run) []*groupAcc {
	type keyed struct {
		rr RunRow
		k  groupKey
	}
	var all []keyed
	local := map[overlayKey][]groupKey{}
	seen := map[groupKey]bool{}
	for _, run := range runs {
		for _, row := range verdict.Rows(run.Records) {
			k := keyOf(row.Rec)
			all = append(all, keyed{RunRow{Run: run.Name, Row: row}, k})
			if !isImported(row.Rec) && !seen[k] {
				seen[k] = true
				local[k.overlay()] = append(local[k.overlay()], k)
			}
		}
	}
	var order []*groupAcc
	byKey := map[groupKey]*groupAcc{}
	for _, e := range all {
		keys := []groupKey{e.k}
		if ks := local[e.k.overlay()]; isImported(e.rr.Rec) && len(ks) > 0 {
			keys = ks
		}
		for _, k := range keys {
			a := byKey[k]
			if a == nil {
				a = &groupAcc{key: k}
				byKey[k] = a
				order = append(order, a)
			}
			a.rows = append(a.rows, e.rr)
		}
	}
	return order
}

// importedRuns lists the imported runs of rows, by run and source in order
// of appearance, when rows also hold a local record; nil otherwise.
func importedRuns(rows []RunRow) []Imported {
	var out []Imported
	local := false
	for _, rr := range rows {
		if !isImported(rr.Rec) {
			local = true
			continue
		}
		im := Imported{Run: rr.Run, Target: verdict.TargetLabel(rr.Rec), Source: rr.Rec.Source}
		if !slices.Contains(out, im) {
			out = append(out, im)
		}
	}
	if !local {
		return nil
	}
	return out
}

// Groups sorts the records of runs into groups and derives their figures.
// Groups keep the order in which they first appear; inside a figure series
// are ordered run by run, layout by layout as first seen. Only records with
// status ok are charted; the rows keep every record. Imported records
// (rpclab import: they carry source) overlay every group of local records
// with the same client language, RPC kind, payload and load model, whatever
// their target: such a group's closed-loop figures gain the speed-up chart
// (FigSpeedup), since an imported curve's absolute scale may not be the
// local one's, and its series say which run is imported and which local.
// Every run keeps its own ideal line and its own verdict.
func Groups(runs []Run) []Group {
	accs := group(runs)
	out := make([]Group, 0, len(accs))
	slugs := map[string]int{}
	for _, a := range accs {
		g := Group{Title: groupTitle(a.key), Rows: a.rows, Open: a.key.LoadModel == "open", Imported: importedRuns(a.rows)}
		var with []string
		for _, im := range g.Imported {
			with = appendNew(with, im.Target)
		}
		switch {
		case len(with) == 1 && with[0] == "imported": // rpclab import's default target
			g.Title += ", with imported records overlaid"
		case len(with) > 0:
			g.Title += ", with imported records of " + strings.Join(with, ", ") + " overlaid"
		}
		g.Slug = strings.Trim(slugRE.ReplaceAllString(strings.ToLower(fmt.Sprintf("%s-%s-%dB-%s-%s", a.key.Language, a.key.RPC, a.key.Payload, a.key.LoadModel, a.key.Target)), "-"), "-")
		if n := slugs[g.Slug]; n > 0 {
			g.Slug = fmt.Sprintf("%s-%d", g.Slug, n+1)
		}
		slugs[g.Slug]++
		mode := closedMode
		switch {
		case g.Open:
			mode = openMode
		case len(g.Imported) > 0:
			mode = overlayMode
		}
		g.Figures = mode.figures(a.rows, runs)
		if f, ok := poolSizeFigure(a.rows); ok {
			g.Figures = append(g.Figures, f)
		}
		out = append(out, g)
	}
	return out
}

// groupTitle names what a group measured: the client, the RPCs (and the
// method called, when not the ping), the payload, the load model and the
// target.
func groupTitle(k groupKey) string {
	rpcs := k.RPC + " RPCs"
	if k.Call != "" {
		rpcs += " of " + k.Call
	}
	return fmt.Sprintf("%s client, %s, %d B payload, %s loop, against %s", k.Language, rpcs, k.Payload, k.LoadModel, k.Target)
}

// line is one (run, layout) series of ok rows, X ascending.
type line struct {
	run, conn string
	runIdx    int
	// who names the line's run in labels ("" when the figure has one
	// run and nothing imported).
	who  string
	rows []verdict.Row
}

// label prefixes label with the line's who, when there is one.
func (l *line) label(label string) string {
	if l.who == "" {
		return label
	}
	return l.who + ": " + label
}

// groupLines sorts the ok rows of a group into lines, one per run and
// layout (and arrival process, in an open loop), ordered run by run, each
// X ascending. Lines are labelled by run when the report has several runs,
// and as imported or local when the group overlays imported records.
func groupLines(rows []RunRow, runs []Run) []*line {
	runIdx := map[string]int{}
	for i, r := range runs {
		runIdx[r.Name] = i
	}
	who := func(rr RunRow) string { return "" }
	switch {
	case len(importedRuns(rows)) > 0:
		who = func(rr RunRow) string {
			if isImported(rr.Rec) {
				return rr.Run + " (imported)"
			}
			return rr.Run + " (local)"
		}
	case len(runs) > 1:
		who = func(rr RunRow) string { return rr.Run }
	}
	type lineKey struct {
		run, conn string
		imported  bool
	}
	var lines []*line
	byKey := map[lineKey]*line{}
	for _, rr := range rows {
		if rr.Rec.Status != result.StatusOK {
			continue
		}
		k := lineKey{rr.Run, lineConn(rr.Rec), isImported(rr.Rec)}
		l := byKey[k]
		if l == nil {
			l = &line{run: rr.Run, conn: k.conn, runIdx: runIdx[rr.Run], who: who(rr)}
			byKey[k] = l
			lines = append(lines, l)
		}
		l.rows = append(l.rows, rr.Row)
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].runIdx < lines[j].runIdx })
	for _, l := range lines {
		sort.SliceStable(l.rows, func(i, j int) bool { return xOf(l.rows[i].Rec) < xOf(l.rows[j].Rec) })
	}
	return lines
}

// lineConn names r's line within its run: its layout, and in an open loop
// its arrival process unless constant ("shared poisson").
func lineConn(r *result.Record) string {
	c := verdict.ConnLabel(r)
	if verdict.IsOpen(r) && r.Spec.Arrival != "" && r.Spec.Arrival != "constant" {
		c += " " + r.Spec.Arrival
	}
	return c
}

// lineSet is what a group's figures are drawn from: its lines, each run's
// base step (runBases) and the label of the X axis.
type lineSet struct {
	lines []*line
	bases map[string]*verdict.Row
	x     string
}

// series gives every line one series of the points y picks from its rows
// (none where y says no), labelled by the line and suffix.
func (s *lineSet) series(suffix string, dash int, y func(l *line, row *verdict.Row) (float64, bool)) []Series {
	out := make([]Series, len(s.lines))
	for i, l := range s.lines {
		sr := Series{Label: l.label(l.conn) + suffix, Color: i, Dash: dash, Shape: l.runIdx}
		for j := range l.rows {
			if v, ok := y(l, &l.rows[j]); ok {
				sr.Points = append(sr.Points, Point{xOf(l.rows[j].Rec), v})
			}
		}
		out[i] = sr
	}
	return out
}

// withPoints keeps the series that have a point.
func withPoints(ss []Series) []Series {
	var out []Series
	for _, s := range ss {
		if len(s.Points) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// interleave lists the series line by line: the first of each list, then
// the second, ... (P50, P99 and P99.9 of one line side by side).
func interleave(lists ...[]Series) []Series {
	var out []Series
	for i := range lists[0] {
		for _, l := range lists {
			out = append(out, l[i])
		}
	}
	return out
}

// positive picks v as a point when it is above zero (log axes, and values
// a record leaves at zero when unknown).
func positive(v float64) (float64, bool) { return v, v > 0 }

// figureFunc draws one figure of a group from its lines.
type figureFunc func(s *lineSet) Figure

// chartMode is how a group is charted: the label of its X axis and its
// figures, in order. A group's load model and whether imported records
// overlay it pick one of closedMode, overlayMode and openMode.
type chartMode struct {
	x    string
	figs []figureFunc
}

var (
	// closedMode charts a closed loop against in-flight (FigureKinds).
	closedMode = chartMode{x: "RPCs in flight", figs: []figureFunc{idealThroughputFigure,
		latencyFigure("Latency vs in-flight"), efficiencyFigure, cpuFigure}}
	// overlayMode is closedMode with the speed-up chart (OverlayFigureKinds).
	overlayMode = chartMode{x: closedMode.x, figs: []figureFunc{idealThroughputFigure, speedupFigure,
		latencyFigure("Latency vs in-flight"), efficiencyFigure, cpuFigure}}
	// openMode charts an open loop against the offered rate (OpenFigureKinds).
	openMode = chartMode{x: "offered rate (req/s)", figs: []figureFunc{offeredThroughputFigure,
		latencyFigure("Latency from the intended send vs offered rate"), lagFigure, cpuFigure}}
)

// figures draws the group's figures from its rows.
func (m chartMode) figures(rows []RunRow, runs []Run) []Figure {
	lines := groupLines(rows, runs)
	s := &lineSet{lines: lines, bases: runBases(lines), x: m.x}
	out := make([]Figure, len(m.figs))
	for i, f := range m.figs {
		out[i] = f(s)
	}
	return out
}

func throughputSeries(s *lineSet) []Series {
	return s.series("", 0, func(_ *line, row *verdict.Row) (float64, bool) { return row.Rec.ThroughputRPS, true })
}

// idealThroughputFigure: throughput per line, beside each run's ideal line.
func idealThroughputFigure(s *lineSet) Figure {
	f := Figure{Kind: FigThroughput, Title: "Throughput vs in-flight", XLabel: s.x, YLabel: "throughput (req/s)"}
	f.Series = append(throughputSeries(s), idealLines(s.lines, s.bases)...)
	return f
}

// offeredThroughputFigure: throughput per line, beside the offered rate.
func offeredThroughputFigure(s *lineSet) Figure {
	f := Figure{Kind: FigThroughput, Title: "Throughput vs offered rate", XLabel: s.x, YLabel: "throughput (req/s)"}
	f.Series = append(throughputSeries(s), offeredLine(s.lines))
	return f
}

// speedupFigure: throughput over the run's base step, beside y = x.
func speedupFigure(s *lineSet) Figure {
	f := Figure{Kind: FigSpeedup, Title: "Speed-up over in-flight 1", XLabel: s.x, YLabel: "throughput / the run's throughput at in-flight 1"}
	f.Series = withPoints(s.series("", 0, func(l *line, row *verdict.Row) (float64, bool) {
		base := s.bases[l.run]
		if base == nil {
			return 0, false
		}
		return row.Rec.ThroughputRPS / base.Rec.ThroughputRPS, true
	}))
	if len(f.Series) > 0 {
		f.Series = append(f.Series, speedupIdeal(s.lines, s.bases))
	}
	return f
}

// latencyFigure: P50, P99 and P99.9 per line, in µs on a log axis.
func latencyFigure(title string) figureFunc {
	return func(s *lineSet) Figure {
		q := func(ns func(r *result.Record) int64) func(*line, *verdict.Row) (float64, bool) {
			return func(_ *line, row *verdict.Row) (float64, bool) { return positive(float64(ns(row.Rec)) / 1e3) }
		}
		return Figure{Kind: FigLatency, Title: title + " (P50 solid, P99 dashed, P99.9 dotted)", XLabel: s.x,
			YLabel: "latency (µs, log scale)", LogY: true, Series: interleave(
				s.series(" P50", 0, q(func(r *result.Record) int64 { return r.Latency.P50NS })),
				s.series(" P99", 1, q(func(r *result.Record) int64 { return r.Latency.P99NS })),
				s.series(" P99.9", 2, q(func(r *result.Record) int64 { return r.Latency.P999NS })))}
	}
}

// efficiencyFigure: throughput over the ideal line, in percent.
func efficiencyFigure(s *lineSet) Figure {
	return Figure{Kind: FigEfficiency, Title: "Efficiency: throughput / ideal line", XLabel: s.x, YLabel: "efficiency (%)",
		Series: withPoints(s.series("", 0, func(_ *line, row *verdict.Row) (float64, bool) {
			return 100 * row.Efficiency, row.IdealRPS > 0
		}))}
}

// lagFigure: an open loop's schedule lag, P50 and P99, in µs on a log axis.
func lagFigure(s *lineSet) Figure {
	q := func(ns func(l *stats.Latency) int64) func(*line, *verdict.Row) (float64, bool) {
		return func(_ *line, row *verdict.Row) (float64, bool) {
			if row.Rec.ScheduleLag == nil {
				return 0, false
			}
			return positive(float64(ns(row.Rec.ScheduleLag)) / 1e3)
		}
	}
	return Figure{Kind: FigLag, Title: "Schedule lag: how late sends left (P50 solid, P99 dashed)", XLabel: s.x,
		YLabel: "lag (µs, log scale)", LogY: true, Series: withPoints(interleave(
			s.series(" lag P50", 0, q(func(l *stats.Latency) int64 { return l.P50NS })),
			s.series(" lag P99", 1, q(func(l *stats.Latency) int64 { return l.P99NS }))))}
}

// cpuFigure: client CPU time per RPC, in µs.
func cpuFigure(s *lineSet) Figure {
	return Figure{Kind: FigCPU, Title: "Client CPU per RPC", XLabel: s.x, YLabel: "client CPU (µs per RPC)",
		Series: withPoints(s.series("", 0, func(_ *line, row *verdict.Row) (float64, bool) {
			return positive(row.Rec.ClientCPUNSPerRPC / 1e3)
		}))}
}
