// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rpclab/rpclab/result"
	"github.com/rpclab/rpclab/verdict"
)

//go:embed report.html.tmpl
var htmlTemplate string

var tmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"f0":      func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) },
	"f1":      func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"f2":      func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
	"us":      us,
	"conn":    verdict.ConnLabel,
	"errs":    errorsText,
	"pct":     func(v float64) string { return strconv.FormatFloat(100*v, 'f', 0, 64) },
	"point":   func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) },
	"cpu":     func(ns float64) float64 { return ns / 1e3 },
	"bratio":  func() float64 { return verdict.BottleneckRatio },
	"flat":    func() float64 { return 100 * verdict.FlatEfficiency },
	"scaling": func() float64 { return 100 * verdict.ScalingEfficiency },
	"busy":    func() float64 { return 100 * verdict.ClientCPUBusy },
	"optInt":  optInt,
}).Parse(htmlTemplate))

type htmlRun struct {
	Name    string
	Records int
	Env     result.Env
	// Clients, Stacks and Runtimes list every client language, gRPC stack
	// and runtime of the run's records, in order of appearance (a compare
	// run has several).
	Clients, Stacks, Runtimes string
	First                     string
	Last                      string
	Verdicts                  []verdict.Verdict
	Summary                   string
}

type htmlFigure struct {
	Figure
	ID     string
	SVG    template.HTML
	Points int
}

type htmlGroup struct {
	Group
	Figs    []htmlFigure
	Compare []compareRow
	Multi   bool
}

type compareRow struct {
	Conn string
	// X is the in-flight count, or the offered rate in an open loop.
	X                   float64
	Before, After       float64
	Ratio               float64
	P99Before, P99After int64
}

type htmlDoc struct {
	Title string
	Notes []string
	Runs  []htmlRun
	// ConnNotes explain layouts that got fewer connections than they asked
	// for (verdict.ConnNotes).
	ConnNotes []string
	// Clients compare client languages (ClientGroups), when the records
	// hold two or more.
	Clients []htmlGroup
	Groups  []htmlGroup
	Multi   bool
	Before  string
	After   string
	// Kinds are the sections of bulk and flow records, in that order.
	Kinds []htmlKind
}

// htmlKind is the section of one record kind other than ping: its text
// table, as the command that measured it prints it, and its charts.
type htmlKind struct {
	ID, Title, Caption string
	Table              string
	Figs               []htmlFigure
}

// HTML writes one self-contained HTML report of runs: per group, the four
// figures (inline SVG, drawn here with gonum/plot), each with its data as a
// table, then the table of every record; and per run the verdict. notes
// (Load's warnings) are shown at the top. With two runs or more the runs
// overlay in every figure and a table compares the first run with the last.
// The page loads nothing: no script, no font, no image from anywhere.
func HTML(w io.Writer, runs []Run, notes []string) error {
	return HTMLResults(w, &Results{Runs: runs}, notes)
}

// HTMLResults writes one self-contained HTML report of every kind in res:
// the ping runs as HTML does, then a section for the bulk records and one
// for the flow records, each with its table (as rpclab bulk and rpclab flow
// print it) and its charts.
func HTMLResults(w io.Writer, res *Results, notes []string) error {
	runs := res.Runs
	if len(runs) == 0 && len(res.Bulk) == 0 && len(res.Flow) == 0 {
		return fmt.Errorf("report: html: %w", ErrEmpty)
	}
	doc := htmlDoc{Notes: notes, Multi: len(runs) > 1}
	kinds, err := htmlKinds(res)
	if err != nil {
		return err
	}
	doc.Kinds = kinds
	var names []string
	for _, run := range runs {
		names = append(names, run.Name)
		hr := htmlRun{Name: run.Name, Records: len(run.Records), Env: run.Records[0].Env, Verdicts: verdict.Verdicts(run.Records)}
		hr.Summary = verdict.Text(hr.Verdicts)
		if len(hr.Verdicts) == 0 && slices.ContainsFunc(run.Records, func(r result.Record) bool { return verdict.IsOpen(&r) }) {
			hr.Summary = "No verdict for open-loop steps: throughput follows the offered rate, so compare each layout's latency and schedule lag at the same rate in the charts below (rpclab sweep --slo names the highest rate each layout sustains)."
		}
		var langs, stacks, runtimes []string
		for _, r := range run.Records {
			langs = appendNew(langs, r.Env.Language)
			stacks = appendNew(stacks, strings.TrimSpace(r.Env.GRPCImpl+" "+r.Env.GRPCVersion))
			runtimes = appendNew(runtimes, r.Env.RuntimeVersion)
		}
		hr.Clients, hr.Stacks, hr.Runtimes = strings.Join(langs, ", "), strings.Join(stacks, ", "), strings.Join(runtimes, ", ")
		first, last := run.Records[0].StartedAt, run.Records[0].StartedAt
		for _, r := range run.Records {
			if r.StartedAt.Before(first) {
				first = r.StartedAt
			}
			if r.StartedAt.After(last) {
				last = r.StartedAt
			}
		}
		hr.First, hr.Last = first.UTC().Format("2006-01-02 15:04:05Z"), last.UTC().Format("2006-01-02 15:04:05Z")
		doc.Runs = append(doc.Runs, hr)
	}
	if len(runs) == 0 {
		names = res.Names
	}
	doc.Title = "rpclab report: " + strings.Join(names, " vs ")
	if doc.Multi {
		doc.Before, doc.After = runs[0].Name, runs[len(runs)-1].Name
	}
	for _, run := range runs {
		doc.ConnNotes = append(doc.ConnNotes, verdict.ConnNotes(run.Records)...)
	}
	for _, g := range ClientGroups(runs) {
		hg := htmlGroup{Group: g, Multi: doc.Multi}
		figs, err := htmlFigures(g)
		if err != nil {
			return err
		}
		hg.Figs = figs
		doc.Clients = append(doc.Clients, hg)
	}
	for _, g := range Groups(runs) {
		hg := htmlGroup{Group: g, Multi: doc.Multi}
		figs, err := htmlFigures(g)
		if err != nil {
			return err
		}
		hg.Figs = figs
		if doc.Multi {
			hg.Compare = compare(g.Rows, doc.Before, doc.After)
		}
		doc.Groups = append(doc.Groups, hg)
	}
	if err := tmpl.Execute(w, doc); err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	return nil
}

// htmlFigures draws g's figures as inline SVG.
func htmlFigures(g Group) ([]htmlFigure, error) {
	var out []htmlFigure
	for _, f := range g.Figures {
		svg, err := f.SVG()
		if err != nil {
			return nil, err
		}
		hf := htmlFigure{Figure: f, ID: g.Slug + "-" + f.Kind, SVG: template.HTML(inlineSVG(svg, g.Slug+"-"+f.Kind+"-title"))}
		for _, s := range f.Series {
			hf.Points += len(s.Points)
		}
		out = append(out, hf)
	}
	return out, nil
}

// inlineSVG drops the XML prolog of a standalone SVG and names the figure
// title that labels it, so it can sit inside HTML.
func inlineSVG(svg []byte, labelledBy string) string {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	// Fall back to a metric-compatible sans font where Liberation Sans is
	// not installed.
	s = strings.ReplaceAll(s, "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	return strings.Replace(s, "<svg ", `<svg role="img" aria-labelledby="`+template.HTMLEscapeString(labelledBy)+`" `, 1)
}

// compare pairs the ok records of the first and last run by layout and
// in-flight count (offered rate in an open loop). Imported records are
// left out: measured elsewhere, on another scale perhaps, they are no
// "before" or "after" of a local run (the speed-up chart compares shapes).
func compare(rows []RunRow, before, after string) []compareRow {
	type k struct {
		conn string
		x    float64
	}
	b := map[k]*result.Record{}
	for _, rr := range rows {
		if rr.Run == before && rr.Rec.Status == result.StatusOK && !isImported(rr.Rec) {
			b[k{verdict.ConnLabel(rr.Rec), xOf(rr.Rec)}] = rr.Rec
		}
	}
	var out []compareRow
	for _, rr := range rows {
		if rr.Run != after || rr.Rec.Status != result.StatusOK || isImported(rr.Rec) {
			continue
		}
		key := k{verdict.ConnLabel(rr.Rec), xOf(rr.Rec)}
		br := b[key]
		if br == nil {
			continue
		}
		c := compareRow{Conn: key.conn, X: key.x, Before: br.ThroughputRPS, After: rr.Rec.ThroughputRPS,
			P99Before: br.Latency.P99NS, P99After: rr.Rec.Latency.P99NS}
		if c.Before > 0 {
			c.Ratio = c.After / c.Before
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Conn != out[j].Conn {
			return out[i].Conn < out[j].Conn
		}
		return out[i].X < out[j].X
	})
	return out
}

// WritePNGs writes every figure of runs as a PNG file in dir (created if
// missing), named <group>-<figure>.png, and returns the paths written. The
// cross-client figures (ClientGroups) come first when there are any.
func WritePNGs(dir string, runs []Run) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: png: %w", err)
	}
	var paths []string
	for _, g := range append(ClientGroups(runs), Groups(runs)...) {
		for _, f := range g.Figures {
			b, err := f.PNG()
			if err != nil {
				return paths, err
			}
			p := filepath.Join(dir, g.Slug+"-"+f.Kind+".png")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				return paths, fmt.Errorf("report: png: %w", err)
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}
