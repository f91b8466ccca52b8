// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// PingSection shows ping records: per group (ClientGroups, then Groups)
// its figures, each with its data as a table, and the table of every
// record; per run the verdict. With two runs or more the runs overlay in
// every figure and a table compares the first run with the last.
type PingSection struct {
	Runs []Run
}

// Kind is result.KindPing.
func (PingSection) Kind() string { return result.KindPing }

// Table writes each run's records after its name: closed-loop steps as
// Table prints them, open-loop steps as OpenTable does.
func (s PingSection) Table(w io.Writer) error {
	for i, run := range s.Runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s:\n", run.Name)
		var closed, open []result.Record
		for _, r := range run.Records {
			if verdict.IsOpen(&r) {
				open = append(open, r)
			} else {
				closed = append(closed, r)
			}
		}
		if len(closed) > 0 {
			if err := Table(w, closed); err != nil {
				return err
			}
		}
		if len(open) > 0 {
			if err := OpenTable(w, open); err != nil {
				return err
			}
		}
	}
	return nil
}

// Charts returns every group's figures, the cross-client groups first,
// named "<group slug>-<figure kind>".
func (s PingSection) Charts() []Chart {
	var out []Chart
	for _, g := range append(ClientGroups(s.Runs), Groups(s.Runs)...) {
		for _, f := range g.Figures {
			out = append(out, Chart{Name: g.Slug + "-" + f.Kind, Figure: f})
		}
	}
	return out
}

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

type htmlGroup struct {
	Group
	Figs    []htmlFigure
	Compare []compareRow
}

type compareRow struct {
	Conn string
	// X is the in-flight count, or the offered rate in an open loop.
	X                   float64
	Before, After       float64
	Ratio               float64
	P99Before, P99After int64
}

// pingDoc is the ping section's part of the page.
type pingDoc struct {
	Runs []htmlRun
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
}

func (s PingSection) html() (template.HTML, error) {
	runs := s.Runs
	doc := pingDoc{Multi: len(runs) > 1}
	for _, run := range runs {
		doc.Runs = append(doc.Runs, newHTMLRun(run))
		doc.ConnNotes = append(doc.ConnNotes, verdict.ConnNotes(run.Records)...)
	}
	if doc.Multi {
		doc.Before, doc.After = runs[0].Name, runs[len(runs)-1].Name
	}
	for _, g := range ClientGroups(runs) {
		hg, err := newHTMLGroup(g)
		if err != nil {
			return "", err
		}
		doc.Clients = append(doc.Clients, hg)
	}
	for _, g := range Groups(runs) {
		hg, err := newHTMLGroup(g)
		if err != nil {
			return "", err
		}
		if doc.Multi {
			hg.Compare = compare(g.Rows, doc.Before, doc.After)
		}
		doc.Groups = append(doc.Groups, hg)
	}
	return executeHTML("ping", doc)
}

// newHTMLRun sums up a run for the runs table and the verdict.
func newHTMLRun(run Run) htmlRun {
	hr := htmlRun{Name: run.Name, Records: len(run.Records), Env: run.Records[0].Env, Verdicts: verdict.Verdicts(run.Records)}
	hr.Summary = verdict.Text(hr.Verdicts)
	if len(hr.Verdicts) == 0 && slices.ContainsFunc(run.Records, func(r result.Record) bool { return verdict.IsOpen(&r) }) {
		hr.Summary = "No verdict for open-loop steps: throughput follows the offered rate, so compare each layout's latency and schedule lag at the same rate in the charts below (rpclab sweep --slo names the highest rate each layout sustains)."
	}
	var langs, stacks, runtimes []string
	first, last := run.Records[0].StartedAt, run.Records[0].StartedAt
	for _, r := range run.Records {
		langs = appendNew(langs, r.Env.Language)
		stacks = appendNew(stacks, strings.TrimSpace(r.Env.GRPCImpl+" "+r.Env.GRPCVersion))
		runtimes = appendNew(runtimes, r.Env.RuntimeVersion)
		if r.StartedAt.Before(first) {
			first = r.StartedAt
		}
		if r.StartedAt.After(last) {
			last = r.StartedAt
		}
	}
	hr.Clients, hr.Stacks, hr.Runtimes = strings.Join(langs, ", "), strings.Join(stacks, ", "), strings.Join(runtimes, ", ")
	hr.First, hr.Last = first.UTC().Format("2006-01-02 15:04:05Z"), last.UTC().Format("2006-01-02 15:04:05Z")
	return hr
}

// newHTMLGroup draws g's figures as inline SVG, with IDs
// "<group slug>-<figure kind>".
func newHTMLGroup(g Group) (htmlGroup, error) {
	hg := htmlGroup{Group: g}
	for _, f := range g.Figures {
		hf, err := newHTMLFigure(f, g.Slug+"-"+f.Kind)
		if err != nil {
			return hg, err
		}
		hg.Figs = append(hg.Figs, hf)
	}
	return hg, nil
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
