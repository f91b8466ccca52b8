// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

package report

import (
	"context"
	"math"
	"slices"
	"testing"

	"golang.org/x/net/html"

	"github.com/rpclab/rpclab/internal/result"
	"github.com/rpclab/rpclab/internal/verdict"
)

// The README's overlay: YDB's published curve (imported, its target the
// post) and a local run of YDB's client mode against rpclab's C++ server.
const (
	publishedYDB = "../../docs/published/ydb-2025-single-connection.jsonl"
	localYDB     = "../../experiments/ydb/2026-11-23/ydb-local-1-21.jsonl"
	publishedRun = "ydb-2025-single-connection.jsonl"
	localRun     = "ydb-local-1-21.jsonl"
)

func loadOverlay(t *testing.T) []Run {
	t.Helper()
	res, warnings, err := Load(context.Background(), []string{publishedYDB, localYDB})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Errorf("got warnings %q, want none (the imported curve overlays the local run)", warnings)
	}
	return res.Runs
}

// withoutSource is runs with every record's source cleared: the records of
// a local run against the post's "target".
func withoutSource(runs []Run) []Run {
	out := make([]Run, len(runs))
	for i, r := range runs {
		recs := slices.Clone(r.Records)
		for j := range recs {
			recs[j].Source = ""
		}
		out[i] = Run{Name: r.Name, Records: recs}
	}
	return out
}

func labels(f Figure) []string {
	var out []string
	for _, s := range f.Series {
		out = append(out, s.Label)
	}
	return out
}

func seriesByLabel(t *testing.T, f Figure, label string) Series {
	t.Helper()
	for _, s := range f.Series {
		if s.Label == label {
			return s
		}
	}
	t.Fatalf("%s figure: no series %q; got %q", f.Kind, label, labels(f))
	return Series{}
}

func yAt(t *testing.T, s Series, x float64) float64 {
	t.Helper()
	for _, p := range s.Points {
		if p.X == x {
			return p.Y
		}
	}
	t.Fatalf("series %q has no point at %v", s.Label, x)
	return 0
}

func TestImportedOverlaysLocalRun(t *testing.T) {
	runs := loadOverlay(t)
	gs := Groups(runs)
	if len(gs) != 1 {
		t.Fatalf("got %d groups, want 1 (the imported curve on the local run's charts)", len(gs))
	}
	g := gs[0]
	if g.Slug != "cpp-unary-0b-closed-127-0-0-1-2138" {
		t.Errorf("got slug %q, want the local run's", g.Slug)
	}
	if want := "cpp client, unary RPCs, 0 B payload, closed loop, against 127.0.0.1:2138, with imported records of blog.ydb.tech (YDB 2025, published) overlaid"; g.Title != want {
		t.Errorf("got title %q, want %q", g.Title, want)
	}
	if len(g.Imported) != 1 || g.Imported[0].Run != publishedRun || g.Imported[0].Target != "blog.ydb.tech (YDB 2025, published)" || g.Imported[0].Source != runs[0].Records[0].Source {
		t.Errorf("got imported %+v, want ydb-2025-single-connection.jsonl with its target and source", g.Imported)
	}
	if got, want := len(g.Rows), len(runs[0].Records)+len(runs[1].Records); got != want {
		t.Errorf("got %d rows, want %d (both files)", got, want)
	}
	var kinds []string
	for _, f := range g.Figures {
		kinds = append(kinds, f.Kind)
	}
	if !slices.Equal(kinds, OverlayFigureKinds) {
		t.Fatalf("got figures %v, want %v", kinds, OverlayFigureKinds)
	}

	imp, loc := publishedRun+" (imported): ", localRun+" (local): "
	thr, spd, lat := g.Figures[0], g.Figures[1], g.Figures[2]
	wantThr := []string{imp + "shared", loc + "shared", loc + "channel-per-worker",
		imp + "ideal (shared at 1 × in-flight)", loc + "ideal (shared at 1 × in-flight)"}
	if got := labels(thr); !slices.Equal(got, wantThr) {
		t.Errorf("throughput series: got %q, want %q", got, wantThr)
	}
	// Each curve is its own file's numbers.
	if got := yAt(t, seriesByLabel(t, thr, imp+"shared"), 10); got != 37169.7 {
		t.Errorf("published throughput at 10: got %v, want 37169.7 (the file's)", got)
	}
	if got := yAt(t, seriesByLabel(t, thr, loc+"channel-per-worker"), 10); got != runs[1].Records[9].ThroughputRPS {
		t.Errorf("local throughput at 10: got %v, want %v (the file's)", got, runs[1].Records[9].ThroughputRPS)
	}
	// Each ideal line starts from its own run's in-flight-1 step.
	if got := yAt(t, seriesByLabel(t, thr, imp+"ideal (shared at 1 × in-flight)"), 21); math.Abs(got-21*10435.1) > 1e-6 {
		t.Errorf("published ideal at 21: got %v, want 21 x 10435.1", got)
	}
	if got, want := yAt(t, seriesByLabel(t, thr, loc+"ideal (shared at 1 × in-flight)"), 21), 21*runs[1].Records[0].ThroughputRPS; got != want {
		t.Errorf("local ideal at 21: got %v, want %v", got, want)
	}

	for _, l := range []string{imp + "shared P50", imp + "shared P99.9", loc + "channel-per-worker P50", loc + "shared P99"} {
		seriesByLabel(t, lat, l)
	}
	if got, want := len(lat.Series), 3*3; got != want {
		t.Errorf("latency: got %d series, want %d", got, want)
	}

	// The speed-up chart: the shapes the post compares, 3.56x at 10x for
	// the post's curve, the local run's own ratio beside it, one ideal.
	wantSpd := []string{imp + "shared", loc + "shared", loc + "channel-per-worker", "ideal (speed-up = in-flight)"}
	if got := labels(spd); !slices.Equal(got, wantSpd) {
		t.Errorf("speed-up series: got %q, want %q", got, wantSpd)
	}
	if got := yAt(t, seriesByLabel(t, spd, imp+"shared"), 10); math.Abs(got-37169.7/10435.1) > 1e-9 {
		t.Errorf("published speed-up at 10: got %v, want 37169.7/10435.1 (3.56)", got)
	}
	if got, want := yAt(t, seriesByLabel(t, spd, loc+"channel-per-worker"), 10), runs[1].Records[9].ThroughputRPS/runs[1].Records[0].ThroughputRPS; got != want {
		t.Errorf("local speed-up at 10: got %v, want %v (over its own in-flight 1)", got, want)
	}
	if got := yAt(t, seriesByLabel(t, spd, loc+"shared"), 1); got != 1 {
		t.Errorf("local speed-up at 1: got %v, want 1", got)
	}
	ideal := seriesByLabel(t, spd, "ideal (speed-up = in-flight)")
	if len(ideal.Points) != 21 || yAt(t, ideal, 21) != 21 {
		t.Errorf("speed-up ideal: got %v, want y = x at in-flight 1..21", ideal.Points)
	}
}

// What the SVG writer draws: every curve in the one group's charts, legend
// by legend; each run's verdict its own; no before/after table pairing the
// post's numbers with the local run's.
func TestHTMLImportedOverlay(t *testing.T) {
	runs := loadOverlay(t)
	p, raw := render(t, runs, nil)
	imp, loc := publishedRun+" (imported): ", localRun+" (local): "
	curves := []string{imp + "shared", loc + "shared", loc + "channel-per-worker"}
	ideal := "ideal (shared at 1 × in-flight)"
	// Legends and data tables, not stroke counts: the local in-flight-1
	// step is a one-point line (no stroke), and the ideal lines leave the
	// frame.
	checkLegends(t, p, map[string][]wantFigure{
		"cpp-unary-0b-closed-127-0-0-1-2138": {
			{FigThroughput, append(slices.Clone(curves), imp+ideal, loc+ideal), 21 + 1 + 20 + 21 + 21},
			{FigSpeedup, append(slices.Clone(curves), "ideal (speed-up = in-flight)"), 21 + 1 + 20 + 21},
			{FigLatency, append(latencyNames(imp, "shared"), latencyNames(loc, "shared", "channel-per-worker")...), 3 * (21 + 1 + 20)},
			// channel-per-worker has no in-flight-1 step of its own, so
			// verdict.Rows gives it no ideal; the published file no CPU.
			{FigEfficiency, []string{imp + "shared", loc + "shared"}, 21 + 1},
			{FigCPU, []string{loc + "shared", loc + "channel-per-worker"}, 1 + 20},
		},
	})
	notes := find(p.doc, func(n *html.Node) bool { return n.Data == "li" && attr(n, "data-run") == publishedRun })
	if len(notes) != 1 {
		t.Errorf("got %d notes naming the imported run, want 1", len(notes))
	}
	if cmp := find(p.doc, func(n *html.Node) bool { return n.Data == "table" && hasClass(n, "compare") }); len(cmp) != 0 {
		t.Errorf("got %d before/after tables, want none (imported records are no before or after)", len(cmp))
	}
	kinds := map[string]string{}
	for _, v := range find(p.doc, func(n *html.Node) bool { return hasClass(n, "verdict") }) {
		kinds[attr(v, "data-run")] = attr(v, "data-kind")
	}
	if kinds[publishedRun] != string(verdict.SharedOnly) || kinds[localRun] != string(verdict.Trap) {
		t.Errorf("got verdicts %v, want shared-only for the post and trap for the local run", kinds)
	}
	checkSelfContained(t, p, raw)
}

// checkLegends checks the charts as checkFigures does, without counting
// the SVG's stroked lines: the local run's one-point series draws none.
func checkLegends(t *testing.T, p *page, want map[string][]wantFigure) {
	t.Helper()
	checkCharts(t, p, want, nil)
}

// Without the source marker, a record is local: its target groups it, and
// the same two files are charted side by side, as before.
func TestWithoutSourceTargetsGroup(t *testing.T) {
	runs := withoutSource(loadOverlay(t))
	gs := Groups(runs)
	if len(gs) != 2 {
		t.Fatalf("got %d groups, want 2 (one per target)", len(gs))
	}
	for i, want := range []struct {
		slug, run string
		rows      int
	}{
		{"cpp-unary-0b-closed-blog-ydb-tech-ydb-2025-published", publishedRun, 21},
		{"cpp-unary-0b-closed-127-0-0-1-2138", localRun, 21},
	} {
		g := gs[i]
		if g.Slug != want.slug || len(g.Rows) != want.rows || len(g.Imported) != 0 {
			t.Errorf("group %d: got slug %q, %d rows, imported %v; want %q, %d rows, nothing imported", i, g.Slug, len(g.Rows), g.Imported, want.slug, want.rows)
		}
		if len(g.Figures) != len(FigureKinds) {
			t.Errorf("group %d: got %d figures, want %d (no speed-up chart)", i, len(g.Figures), len(FigureKinds))
		}
		if got := labels(g.Figures[0])[0]; got != want.run+": shared" {
			t.Errorf("group %d: got first series %q, want %q", i, got, want.run+": shared")
		}
	}
	if shareGroup(runs) {
		t.Error("shareGroup: got true, want false (Load warns that nothing overlays)")
	}
}

// Which local groups an imported curve joins: all of groupKey but the
// target must match; with no match it is charted on its own.
func TestImportedMatching(t *testing.T) {
	base := loadOverlay(t)
	tests := []struct {
		name string
		// edit changes the imported records.
		edit func(r *result.Record)
		// local changes the local run's records (i is the record's index).
		local      func(i int, r *result.Record)
		wantGroups int
		// wantOverlaid is the number of groups the imported records join.
		wantOverlaid int
	}{
		{name: "same client, rpc, payload, loop", wantGroups: 1, wantOverlaid: 1},
		{name: "other language", edit: func(r *result.Record) { r.Env.Language = "go" }, wantGroups: 2},
		{name: "other rpc", edit: func(r *result.Record) { r.Spec.RPC = "streaming" }, wantGroups: 2},
		{name: "other payload", edit: func(r *result.Record) { r.Spec.PayloadBytes = 1024 }, wantGroups: 2},
		{name: "other load model", edit: func(r *result.Record) { r.Spec.LoadModel = "open" }, wantGroups: 2},
		{name: "two local targets", local: func(i int, r *result.Record) {
			if i%2 == 1 {
				r.Spec.Target = "127.0.0.1:9999"
			}
		}, wantGroups: 2, wantOverlaid: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runs := []Run{{Name: base[0].Name, Records: slices.Clone(base[0].Records)}, {Name: base[1].Name, Records: slices.Clone(base[1].Records)}}
			for i := range runs[0].Records {
				if tc.edit != nil {
					tc.edit(&runs[0].Records[i])
				}
			}
			for i := range runs[1].Records {
				if tc.local != nil {
					tc.local(i, &runs[1].Records[i])
				}
			}
			gs := Groups(runs)
			if len(gs) != tc.wantGroups {
				t.Fatalf("got %d groups, want %d", len(gs), tc.wantGroups)
			}
			overlaid := 0
			for _, g := range gs {
				if len(g.Imported) > 0 {
					overlaid++
					if n := len(g.Figures); n != len(OverlayFigureKinds) {
						t.Errorf("group %s: got %d figures, want %d", g.Slug, n, len(OverlayFigureKinds))
					}
				}
			}
			if overlaid != tc.wantOverlaid {
				t.Errorf("got %d groups with the imported curve, want %d", overlaid, tc.wantOverlaid)
			}
			if got, want := shareGroup(runs), tc.wantOverlaid > 0; got != want {
				t.Errorf("shareGroup: got %v, want %v", got, want)
			}
		})
	}
}

// An imported file alone keeps its own group and the usual figures.
func TestImportedAloneKeepsItsGroup(t *testing.T) {
	runs, _, err := loadRuns([]string{publishedYDB})
	if err != nil {
		t.Fatal(err)
	}
	gs := Groups(runs)
	if len(gs) != 1 || gs[0].Slug != "cpp-unary-0b-closed-blog-ydb-tech-ydb-2025-published" || len(gs[0].Imported) != 0 || len(gs[0].Figures) != len(FigureKinds) {
		t.Fatalf("got %d groups (%+v), want the post's own with the usual figures", len(gs), gs)
	}
	if got := labels(gs[0].Figures[0]); !slices.Equal(got, []string{"shared", "ideal (shared at 1 × in-flight)"}) {
		t.Errorf("got series %q, want shared and its ideal", got)
	}
}
